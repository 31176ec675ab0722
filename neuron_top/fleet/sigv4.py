"""AWS Signature Version 4 for the fleet's queries: Amazon Managed Prometheus (service ``aps``) and CloudWatch's
PromQL endpoint (service ``monitoring``). No UI imports.

Why botocore (the optional extra ``neuron-top[aws]``) and not a hand-written signer: the signature itself is a page
of code, but the credentials are not. botocore's chain finds them where every AWS tool does (environment, shared
profile with ``AWS_PROFILE``, the web identity token file of IRSA and EKS Pod Identity, the instance's role) and its
``RefreshableCredentials`` renew temporary ones before they expire; ``get_frozen_credentials`` is asked for every
request, so a long-running fleet view never signs with an expired key.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.parse
from typing import Any

from neuron_top.fleet.promql import PromError, Request
from neuron_top.textsafe import clean

__all__ = ["MISSING", "SigV4", "guess_region", "guess_service"]

MISSING = "--sigv4 needs botocore: pip install 'neuron-top[aws]'"
"""The one line said when botocore is not installed."""

_AWS_HOST = re.compile(r"(?P<service>aps-workspaces|monitoring)(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com"
                       r"(?:\.cn)?\Z")
_SERVICES = {"aps-workspaces": "aps", "monitoring": "monitoring"}


def guess_service(url: str) -> str | None:
    """The SigV4 service of an AWS query URL: ``aps`` for an AMP workspace, ``monitoring`` for CloudWatch."""
    m = _AWS_HOST.match(urllib.parse.urlsplit(url if "://" in url else f"https://{url}").hostname or "")
    return _SERVICES[m["service"]] if m else None


def guess_region(url: str) -> str | None:
    """The region in an AWS query URL (``aps-workspaces.us-east-2.amazonaws.com`` -> ``us-east-2``)."""
    m = _AWS_HOST.match(urllib.parse.urlsplit(url if "://" in url else f"https://{url}").hostname or "")
    return m["region"] if m else None


class SigV4:
    """Signs every request with SigV4 (an ``Auth`` for ``PromClient``).

    Args:
        region: the region the endpoint is in; None: the profile's or ``AWS_REGION`` / ``AWS_DEFAULT_REGION``.
        service: ``aps`` or ``monitoring``.
        profile: a shared-config profile (else ``AWS_PROFILE`` or the default chain).

    Raises ``ImportError`` with ``MISSING`` without botocore, ``ValueError`` without a region.
    """

    hint = ("check the AWS credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, the web identity "
            "token) and --region/--sigv4-service")

    def __init__(self, region: str | None, service: str, *, profile: str | None = None,
                 session: Any = None) -> None:
        try:
            import botocore.auth
            import botocore.awsrequest
            import botocore.exceptions
            import botocore.session
        except ImportError:
            raise ImportError(MISSING) from None
        self._auth_mod, self._request_mod, self._errors = botocore.auth, botocore.awsrequest, botocore.exceptions
        self.session = session or botocore.session.Session(profile=profile)
        # AWS_REGION is what the newer SDKs and EKS set; botocore itself reads AWS_DEFAULT_REGION and the profile
        self.region = region or os.environ.get("AWS_REGION") or self.session.get_config_variable("region")
        if not self.region:
            raise ValueError("--sigv4 needs a region: --region, AWS_REGION or the profile's region")
        self.service = service
        self._credentials: Any = None
        self._lock = threading.Lock()

    def _chain(self) -> Any:
        """The credentials object (refreshable or static), found once: the chain is walked at the first request,
        so a missing credential is said as the fleet's first problem, not at start-up."""
        with self._lock:
            if self._credentials is None:
                try:
                    self._credentials = self.session.get_credentials()
                except self._errors.BotoCoreError as exc:  # a profile that names a missing one, a bad config
                    raise PromError("auth", f"AWS credentials: {clean(str(exc), 300)}") from None
                except Exception as exc:  # an STS refusal while assuming the role (ClientError and kin)
                    raise PromError("auth", f"AWS credentials: {clean(str(exc), 300)}") from None
                if self._credentials is None:
                    raise PromError("auth", "no AWS credentials found (environment, AWS_PROFILE, web identity "
                                    "token file, instance role)")
            return self._credentials

    def headers(self, request: Request) -> dict[str, str]:
        try:
            frozen = self._chain().get_frozen_credentials()  # refreshed here when about to expire
        except PromError:
            raise
        except Exception as exc:  # the refresh failed: STS refused, the token file went away
            raise PromError("auth", f"AWS credentials could not be refreshed: {clean(str(exc), 300)}") from None
        aws = self._request_mod.AWSRequest(method=request.method, url=request.url, data=request.body or None,
                                           headers=dict(request.headers))
        self._auth_mod.SigV4Auth(frozen, self.service, self.region).add_auth(aws)
        return {k: v for k, v in aws.headers.items() if k.lower() not in {h.lower() for h in request.headers}}

    @property
    def describe(self) -> str:
        return f"sigv4 {self.service} {self.region}"

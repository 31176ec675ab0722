"""AWS stand-ins on loopback for the SigV4 tests, written from AWS's published description of Signature Version 4
(the canonical request, the string to sign, the derived signing key), independently of botocore:

* ``expected_signature``/``check``: what a request's signature must be, and why one is refused;
* ``SigV4Proxy``: an endpoint that recomputes every request's signature, answers a wrong one as AWS does (HTTP 403
  with a JSON ``message``) and forwards a right one to the Prometheus behind it (an AMP workspace or CloudWatch's
  PromQL endpoint, for the client);
* ``StsStandIn``: ``AssumeRoleWithWebIdentity`` (what botocore's web identity provider calls for IRSA), handing out
  short-lived keys that the proxy accepts.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import secrets
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.fleet_support import StandIn, forward, reply

ALGORITHM = "AWS4-HMAC-SHA256"
_UNRESERVED = "-_.~"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def canonical_query(query: str) -> str:
    """Parameters sorted by name (then value), names and values percent-encoded with only A-Z a-z 0-9 - _ . ~ left."""
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    enc = sorted((urllib.parse.quote(k, safe=_UNRESERVED), urllib.parse.quote(v, safe=_UNRESERVED)) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in enc)


def canonical_request(method: str, path: str, query: str, headers: dict[str, str], signed: list[str],
                      body: bytes) -> str:
    """The canonical request: method, URI-encoded path, canonical query, each signed header ``name:value`` (names in
    lower case, values with runs of spaces made one and trimmed), the signed header list, the body's SHA-256."""
    lower = {k.lower(): " ".join(v.split()) for k, v in headers.items()}
    # every service but S3 encodes the path as it came (already encoded once): twice
    uri = urllib.parse.quote(path or "/", safe="/" + _UNRESERVED)
    lines = "".join(f"{h}:{lower.get(h, '')}\n" for h in signed)
    return "\n".join([method, uri, canonical_query(query), lines, ";".join(signed), _sha256(body)])


def expected_signature(secret: str, amz_date: str, region: str, service: str, creq: str) -> str:
    """HMAC-SHA256 of the string to sign with the key derived from the secret, the date, region and service."""
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, _sha256(creq.encode())])
    key = _hmac(("AWS4" + secret).encode(), amz_date[:8])
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


@dataclass
class Keys:
    """What the stand-ins know: secret per access key id, the session token that goes with a temporary key, and
    keys that have expired."""

    secrets: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, key: str, secret: str, token: str | None = None) -> None:
        with self.lock:
            self.secrets[key] = secret
            if token is not None:
                self.tokens[key] = token


def check(keys: Keys, method: str, target: str, headers: dict[str, str], body: bytes, region: str, service: str,
          now: datetime.datetime | None = None) -> str | None:
    """None when the request is signed right for ``region``/``service``; else AWS's words for what is wrong."""
    lower = {k.lower(): v for k, v in headers.items()}
    auth = lower.get("authorization", "")
    if not auth.startswith(ALGORITHM + " "):
        return "Missing Authentication Token"
    fields = dict(p.strip().split("=", 1) for p in auth[len(ALGORITHM) + 1:].split(",") if "=" in p)
    try:
        key, date, reg, svc, term = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        got = fields["Signature"]
    except (KeyError, ValueError):
        return "Authorization header requires Credential, SignedHeaders and Signature"
    amz_date = lower.get("x-amz-date", "")
    if "host" not in signed or "x-amz-date" not in signed or signed != sorted(signed):
        return "host and x-amz-date must be signed, SignedHeaders sorted"
    if (reg, svc, term) != (region, service, "aws4_request") or date != amz_date[:8]:
        return f"Credential should be scoped to a valid region/service ({region}/{service}), not {reg}/{svc}"
    with keys.lock:
        secret, token, expired = keys.secrets.get(key), keys.tokens.get(key), key in keys.expired
    if secret is None:
        return "The security token included in the request is invalid."
    if expired:
        return "The security token included in the request is expired"
    if token is not None and lower.get("x-amz-security-token") != token:
        return "The security token included in the request is invalid."
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return "X-Amz-Date is not a date"
    if abs(((now or datetime.datetime.now(datetime.UTC)) - when).total_seconds()) > 300:
        return "Signature expired"
    path, _, query = target.partition("?")
    want = expected_signature(secret, amz_date, region, service,
                              canonical_request(method, path, query, headers, signed, body))
    if not hmac.compare_digest(want, got):
        return ("The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method.")
    return None


class SigV4Proxy:
    """An AWS-like endpoint on loopback: each request's signature is checked (``check``), a wrong one refused with
    403 and AWS's JSON message; a right one forwarded to ``upstream`` (a Prometheus) as it came, path prefix
    (``/workspaces/ws-test``) removed. ``seen`` counts the requests verified, ``refused`` the messages."""

    def __init__(self, upstream: str, keys: Keys, *, region: str, service: str, prefix: str = "") -> None:
        self.upstream, self.keys, self.region, self.service, self.prefix = upstream, keys, region, service, prefix
        self.seen: list[tuple[str, str]] = []
        """(method, access key id) of every request that passed."""
        self.refused: list[str] = []
        proxy = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                why = check(proxy.keys, self.command, self.path, dict(self.headers.items()), body,
                            proxy.region, proxy.service)
                if why is not None:
                    proxy.refused.append(why)
                    reply(self, 403, {"Content-Type": "application/json", "x-amzn-ErrorType": "AccessDenied"},
                          json.dumps({"message": why}).encode())
                    return
                key = self.headers["Authorization"].split("Credential=")[1].split("/")[0]
                proxy.seen.append((self.command, key))
                path = self.path.removeprefix(proxy.prefix)
                status, data = forward(proxy.upstream + path, self.command, body,
                                       self.headers.get("Content-Type", ""))
                reply(self, status, {"Content-Type": "application/json"}, data)

            do_GET = do_POST = _handle

            def log_message(self, *a: object) -> None:
                pass

        self.server = StandIn(H, prefix)
        self.url = self.server.url
        self.stop = self.server.stop


class StsStandIn:
    """``AssumeRoleWithWebIdentity`` on loopback: checks the web identity token it is given, hands out a fresh
    temporary key (added to ``keys``) valid ``lifetime`` seconds; ``calls`` counts them. botocore renews keys that
    expire within its refresh window (15 minutes), so a short lifetime makes every request renew it."""

    def __init__(self, keys: Keys, token: str, lifetime: float = 3600.0) -> None:
        self.keys, self.token, self.lifetime = keys, token, lifetime
        self.calls = 0
        self.issued: list[str] = []
        sts = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length") or 0))
                                                   .decode()))
                sts.calls += 1
                if form.get("Action") != "AssumeRoleWithWebIdentity" or form.get("WebIdentityToken", "").strip() != sts.token:
                    reply(self, 400, {"Content-Type": "text/xml"}, _STS_ERROR.encode())
                    return
                key, secret, session = ("ASIA" + secrets.token_hex(8).upper(), secrets.token_hex(20),
                                        secrets.token_hex(32))
                sts.keys.add(key, secret, session)
                sts.issued.append(key)
                expires = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=sts.lifetime))
                reply(self, 200, {"Content-Type": "text/xml"}, _STS_OK.format(
                    key=key, secret=secret, token=session, expires=expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    role=form.get("RoleArn", "")).encode())

            def log_message(self, *a: object) -> None:
                pass

        self.server = StandIn(H)
        self.url = self.server.url
        self.stop = self.server.stop


_STS_OK = """<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:monitoring:neuron-top</SubjectFromWebIdentityToken>
    <AssumedRoleUser><Arn>{role}/neuron-top</Arn><AssumedRoleId>AROATEST:neuron-top</AssumedRoleId></AssumedRoleUser>
    <Credentials>
      <AccessKeyId>{key}</AccessKeyId>
      <SecretAccessKey>{secret}</SecretAccessKey>
      <SessionToken>{token}</SessionToken>
      <Expiration>{expires}</Expiration>
    </Credentials>
    <Audience>sts.amazonaws.com</Audience>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>"""

_STS_ERROR = """<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Token is not valid</Message></Error>
  <RequestId>00000000-0000-0000-0000-000000000001</RequestId>
</ErrorResponse>"""

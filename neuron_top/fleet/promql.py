"""A small client for the Prometheus HTTP query API (``/api/v1/query``), no UI imports.

Why hand-written on ``http.client`` and not a library: the fleet view needs one endpoint, a persistent connection
per thread (ten queries every two seconds should not pay a TCP and TLS handshake each), gzip, a hard timeout and
errors it can show the user word for word. The response is decoded with msgspec straight into typed samples.

Authentication is a pluggable ``Auth``: it sees the request (method, URL with its query string, headers, body) and
returns the headers to add. Bearer tokens and basic auth are here; SigV4 (Amazon Managed Prometheus, CloudWatch's
PromQL endpoint) is ``neuron_top.fleet.sigv4`` (it signs method, path, query, headers and the body's hash).

Queries go as GET, or as POST with a form body (``post=True``: what AWS's examples do; some endpoints refuse a GET
query string holding ``{}``). Extra headers (a Mimir/Cortex tenant's ``X-Scope-OrgID``) and extra query parameters
(Thanos's ``dedup``, ``partial_response``) go with every query; the answer's ``warnings`` (Thanos's partial
responses) are kept with its samples (``Answer``).
"""

from __future__ import annotations

import base64
import gzip
import http.client
import math
import os
import socket
import ssl
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

import msgspec

from neuron_top.fleet.queries import matcher
from neuron_top.textsafe import clean

__all__ = [
    "Answer",
    "Auth",
    "BasicAuth",
    "BearerTokenFile",
    "PromClient",
    "PromError",
    "Request",
    "Sample",
    "StaticBearer",
    "answer_in_parts",
]

MAX_RESPONSE = 64 << 20
"""Bytes: a query answer bigger than this is refused (a query without aggregation on a large cluster)."""


@dataclass(frozen=True, slots=True)
class Request:
    """What an ``Auth`` may sign: SigV4 needs all of it (the body's hash too, empty for GET)."""

    method: str
    url: str
    """The full URL, query string included."""
    headers: dict[str, str]
    body: bytes = b""


class Auth(Protocol):
    """Adds credentials to a request. ``headers`` is called for every request (tokens rotate, signatures expire);
    it may raise ``PromError`` (kind "auth") when it has no credentials to give. ``hint`` ends the message of a
    refused request (HTTP 401/403): what to check."""

    @property
    def hint(self) -> str: ...

    def headers(self, request: Request) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class StaticBearer:
    """``Authorization: Bearer <token>``."""

    token: str
    hint: ClassVar[str] = "check the bearer token"

    def headers(self, request: Request) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


class BearerTokenFile:
    """A bearer token read from a file, read again when the file changes (Kubernetes rotates service account
    tokens in place)."""

    hint = "check the token in --bearer-token-file"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int] | None = None
        self._token = ""
        self._lock = threading.Lock()
        self.read()  # fail early, with a message, when the file cannot be read

    def read(self) -> str:
        st = self.path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._token = self.path.read_text(encoding="utf-8").strip()
                self._stamp = stamp
            return self._token

    def headers(self, request: Request) -> dict[str, str]:
        try:
            token = self.read()
        except OSError:
            token = self._token  # a rotation in progress: the last token is the best we have
        return {"Authorization": f"Bearer {token}"}


@dataclass(frozen=True, slots=True)
class BasicAuth:
    """HTTP basic authentication."""

    user: str
    password: str = field(repr=False)
    hint: ClassVar[str] = "check --user and --password-file"

    def headers(self, request: Request) -> dict[str, str]:
        raw = f"{self.user}:{self.password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(raw).decode("ascii")}


class PromError(Exception):
    """A query that did not give an answer, said so the user can act on it.

    ``kind`` is one of "unreachable" (connection refused, DNS, TLS), "timeout", "auth" (401/403), "http" (another
    status), "query" (Prometheus refused the query: its errorType and error) and "response" (not the API's JSON).
    """

    def __init__(self, kind: str, message: str, query: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.query = query

    @property
    def whole(self) -> bool:
        """True when the server as a whole is the problem (every other query would fail the same way)."""
        return self.kind in ("unreachable", "timeout", "auth")


class Sample(msgspec.Struct, frozen=True, gc=False):
    """One series of an instant vector: its labels and its value."""

    metric: dict[str, str]
    value: tuple[float, str]

    @property
    def number(self) -> float | None:
        """The value as a float; None for NaN and infinities (never shown as numbers)."""
        try:
            x = float(self.value[1])
        except ValueError:
            return None
        return x if math.isfinite(x) else None


class _Data(msgspec.Struct, frozen=True, gc=False):
    resultType: str = ""
    result: msgspec.Raw = msgspec.Raw()
    """Decoded once the type is known (a vector is a list of samples, a scalar one [time, "value"] pair)."""


class _Answer(msgspec.Struct, frozen=True, gc=False):
    status: str = ""
    data: _Data | None = None
    errorType: str = ""
    error: str = ""
    warnings: list[str] = msgspec.field(default_factory=list)


class Answer(msgspec.Struct, frozen=True, gc=False):
    """An instant query's samples and the server's warnings (Thanos: a store that did not answer)."""

    samples: list[Sample]
    warnings: list[str] = msgspec.field(default_factory=list)


_DECODE = msgspec.json.Decoder(_Answer)


class _Target(msgspec.Struct, frozen=True, gc=False):
    labels: dict[str, str] = {}
    health: str = ""
    lastError: str = ""


class _Targets(msgspec.Struct, frozen=True, gc=False):
    activeTargets: list[_Target] = []


class _TargetsAnswer(msgspec.Struct, frozen=True, gc=False):
    status: str = ""
    data: _Targets | None = None


_TARGETS = msgspec.json.Decoder(_TargetsAnswer)
_VECTOR = msgspec.json.Decoder(list[Sample])
_SCALAR = msgspec.json.Decoder(tuple[float, str])


class PromClient:
    """Instant queries against one Prometheus-compatible server.

    Args:
        url: the server's base URL, e.g. ``http://prometheus:9090`` or one with a path prefix
            (``https://host/prometheus``); credentials in it (``https://user:pass@host``) become basic auth.
        timeout: seconds for connecting and for the whole answer.
        auth: credentials for each request (``BearerTokenFile``, ``BasicAuth``, a future SigV4).
        ca_file: a PEM bundle to verify the server's certificate against (else the system's).
        retries: extra attempts, after a short pause, when the connection itself fails (a dropped keep-alive
            connection, a restarting server); a timeout is not retried here (the caller backs off instead).
        post: send each query as a POST form body (SigV4 endpoints) instead of a GET query string.
        headers: extra headers on every request (``X-Scope-OrgID`` for a Mimir/Cortex tenant).
        params: extra query parameters on every query (Thanos: ``dedup``, ``partial_response``).
    """

    def __init__(self, url: str, *, timeout: float = 5.0, auth: Auth | None = None, ca_file: str | None = None,
                 retries: int = 1, clock: Callable[[], float] = time.monotonic, post: bool = False,
                 headers: dict[str, str] | None = None, params: dict[str, str] | None = None) -> None:
        parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {clean(url)!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        try:
            self.port = parts.port or (443 if self.scheme == "https" else 80)
        except ValueError:
            raise ValueError(f"bad port in {clean(url)!r}") from None
        self.base_path = parts.path.rstrip("/")
        if auth is None and parts.username is not None:
            auth = BasicAuth(urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
        self.auth = auth
        netloc = self.host if ":" not in self.host else f"[{self.host}]"
        if parts.port:
            netloc += f":{parts.port}"
        self.display = f"{self.scheme}://{netloc}{self.base_path}"
        """The URL without credentials, for the screen and recordings."""
        self.timeout = timeout
        self.retries = retries
        self.clock = clock
        self._context: ssl.SSLContext | None = None
        if self.scheme == "https":
            self._context = ssl.create_default_context(cafile=ca_file)
        elif ca_file:
            raise ValueError("a CA file needs an https:// URL")
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self.requests = 0
        """Requests sent (each attempt counts): what tests read to prove the query count per refresh."""
        self.post = post
        self.extra_headers = dict(headers or {})
        self.params = dict(params or {})

    # --- the API ---
    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        """Evaluate ``expr``; the instant vector's samples (``answer`` also gives the warnings)."""
        return self.answer(expr, at).samples

    def answer(self, expr: str, at: float | None = None) -> Answer:
        """Evaluate ``expr`` at ``at`` (Unix seconds, the server's clock; None: when it arrives): the instant
        vector's samples and the server's warnings. Raises ``PromError``.

        A scalar answer becomes one sample with no labels.
        """
        fields = {"query": expr, **self.params}
        if at is not None:
            fields["time"] = f"{at:.3f}"
        form = urllib.parse.urlencode(fields)
        if self.post:
            body = self._get(f"{self.base_path}/api/v1/query", expr, form.encode())
        else:
            body = self._get(f"{self.base_path}/api/v1/query?{form}", expr)
        try:
            answer = _DECODE.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise PromError("response", f"not a Prometheus API answer: {_peek(body)}", expr) from None
        if answer.status != "success":
            raise PromError("query", f"{answer.errorType or 'error'}: {clean(answer.error, 400)}", expr)
        warnings = [clean(w, 300) for w in answer.warnings]
        data = answer.data
        if data is None or not data.result:
            return Answer([], warnings)
        try:
            if data.resultType == "vector":
                return Answer(_VECTOR.decode(data.result), warnings)
            if data.resultType == "scalar":
                return Answer([Sample({}, _SCALAR.decode(data.result))], warnings)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise PromError("response", f"a {clean(data.resultType, 20)} that does not read: {clean(exc)}",
                            expr) from None
        raise PromError("response", f"expected an instant vector, got {clean(data.resultType, 20)}", expr)

    def scrape_errors(self) -> dict[tuple[str, str], str]:
        """The active scrape targets that are down (``/api/v1/targets``): (instance, job) -> Prometheus's
        ``lastError`` ("connection refused", "context deadline exceeded" ...). Raises ``PromError``."""
        body = self._get(f"{self.base_path}/api/v1/targets?state=active", "/api/v1/targets")
        try:
            answer = _TARGETS.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise PromError("response", f"not a Prometheus API answer: {_peek(body)}", "/api/v1/targets") from None
        return {(t.labels.get("instance", ""), t.labels.get("job", "")): clean(t.lastError, 300)
                for t in (answer.data.activeTargets if answer.data is not None else ()) if t.health == "down"}

    def close(self) -> None:
        """Close every connection this client opened (from any thread)."""
        with self._lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()

    # --- inside ---
    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._context is not None:
                conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                                   context=self._context)
            else:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)

    def _get(self, path: str, expr: str, form: bytes | None = None) -> bytes:
        attempt = 0
        while True:
            try:
                return self._once(path, expr, form)
            except PromError as exc:
                self._drop()
                if exc.kind != "unreachable" or attempt >= self.retries:
                    raise
            attempt += 1
            time.sleep(0.1 * attempt)

    def _once(self, path: str, expr: str, form: bytes | None = None) -> bytes:
        method = "GET" if form is None else "POST"
        headers = {"Accept": "application/json", "Accept-Encoding": "gzip", "User-Agent": "neuron-top",
                   **self.extra_headers}
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if self.auth is not None:
            signed = self.auth.headers(Request(method, self.display + path[len(self.base_path):], dict(headers),
                                               form or b""))
            headers.update(signed)
        deadline = self.clock() + self.timeout
        conn = self._connection()
        with self._lock:
            self.requests += 1
        try:
            conn.request(method, path, body=form, headers=headers)
            resp = conn.getresponse()
            body = _read(resp, deadline, self.clock)
        except TimeoutError:
            raise PromError("timeout", f"no answer within {self.timeout:g} s from {self.display}", expr) from None
        except ssl.SSLError as exc:
            raise PromError("unreachable", f"TLS error with {self.display}: {clean(exc.reason or exc)}",
                            expr) from None
        except (OSError, http.client.HTTPException) as exc:
            raise PromError("unreachable", f"cannot reach {self.display}: {_why(exc)}", expr) from None
        if resp.getheader("Content-Encoding", "") == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError, zlib.error):
                raise PromError("response", "a gzip answer that does not decompress", expr) from None
        if resp.will_close:
            self._drop()
        status = resp.status
        if status in (401, 403):
            said = _said(body)
            hint = self.auth.hint if self.auth is not None else \
                "the server wants credentials (--bearer-token-file, --user/--password-file, --sigv4)"
            raise PromError("auth", f"HTTP {status} {clean(resp.reason, 60)} from {self.display}"
                            f"{': ' + said if said else ''}; {hint}", expr)
        if status in (400, 422, 503) and body.lstrip().startswith(b"{"):
            return body  # the API's own error answer (bad query, server overloaded): decoded by the caller
        if status != 200:
            raise PromError("http", f"HTTP {status} {clean(resp.reason, 60)} from {self.display}: "
                            f"{_peek(body)}", expr)
        return body


def _read(resp: http.client.HTTPResponse, deadline: float, clock: Callable[[], float]) -> bytes:
    """The whole body, but never more than ``MAX_RESPONSE`` bytes nor past ``deadline`` (a server trickling a huge
    answer would otherwise hold the refresh for ever: the socket timeout is per read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = resp.read(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESPONSE:
            raise http.client.HTTPException(f"answer larger than {MAX_RESPONSE >> 20} MB")
        if clock() > deadline:
            raise TimeoutError
        chunks.append(chunk)


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({clean(exc.strerror or exc)})"
    if isinstance(exc, OSError) and exc.strerror:
        return clean(exc.strerror)
    return clean(str(exc) or type(exc).__name__, 200)


def _said(body: bytes) -> str:
    """The message of a refusal: AWS's JSON (``{"message": ...}`` or ``{"Message": ...}``), a Prometheus API error,
    else the start of the body."""
    try:
        doc = msgspec.json.decode(body[:4096])
    except msgspec.DecodeError:
        return _peek(body) if body.strip() else ""
    if isinstance(doc, dict):
        for k in ("message", "Message", "error"):
            if isinstance(doc.get(k), str):
                return clean(doc[k], 200)
    return _peek(body)


def _peek(body: bytes) -> str:
    text = body[:160].decode("utf-8", "replace").strip()
    return clean(" ".join(text.split()), 160) or "(empty)"


def answer_in_parts(client: PromClient, limit: int, make: Callable[[str], str],
                    values: Callable[[str, str], tuple[Answer, int]], by: Sequence[str], hint: str, *,
                    shard: str = "", depth: list[int] | None = None, at: float | None = None,
                    _level: int = 1) -> tuple[Answer, int]:
    """A query whose answer reaches the server's cap on series (CloudWatch: 500), asked in parts and merged.

    ``make(shard)`` is the query with the label matchers ``shard`` added to its selectors; it is asked once per
    value of ``by[0]`` (``values(shard, label)``: an answer whose series carry the label's values, and the
    requests it took: 0 when known already), each part still at the cap split by the next label in turn, each
    evaluated at ``at`` (``PromClient.answer``). Every series is in one part, so none is counted twice. Returns the merged answer (the parts' warnings too) and the
    requests it took; ``depth`` gets each part's depth (how many labels split it). With no label left, a
    ``PromError`` says "... even " ``hint`` (how it was split, what to do).
    """
    if not by:
        raise PromError("query", f"the answer reaches the server's cap of {limit} series even {hint}", make(shard))
    listed, requests = values(shard, by[0])
    samples: list[Sample] = []
    warnings = list(listed.warnings)
    for s in listed.samples:
        part = matcher(by[0], s.metric.get(by[0], ""))
        sub = f"{shard},{part}" if shard else part
        got = client.answer(make(sub), at)
        requests += 1
        if len(got.samples) >= limit:
            got, more = answer_in_parts(client, limit, make, values, by[1:], hint, shard=sub, depth=depth, at=at,
                                        _level=_level + 1)
            requests += more
        elif depth is not None:
            depth.append(_level)
        samples.extend(got.samples)
        warnings.extend(got.warnings)
    return Answer(samples, warnings), requests


def env_password(name: str) -> str | None:
    """A password from the environment (never from the command line, where ``ps`` shows it)."""
    return os.environ.get(name)

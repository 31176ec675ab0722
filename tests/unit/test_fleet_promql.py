"""The PromQL client against a fake server on a loopback port: auth, gzip, errors said plainly, TLS with a CA
file. (What the answers mean is tested against a real Prometheus in tests/e2e/test_fleet_prometheus.py.)"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from neuron_top.fleet.promql import BasicAuth, BearerTokenFile, PromClient, PromError, StaticBearer
from tests.fleet_support import QuietServer, free_port, reply

VECTOR = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"instance_id": "i-1"}, "value": [1700000000.0, "0.5"]},
    {"metric": {"instance_id": "i-2"}, "value": [1700000000.0, "NaN"]},
]}}


class Fake:
    """A server whose answer is ``respond(handler) -> (status, headers, body)``; requests are kept."""

    def __init__(self, respond: Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]],
                 context: ssl.SSLContext | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.bodies: list[bytes] = []
        fake = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake.requests.append((self.path, dict(self.headers)))
                reply(self, *respond(self))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.requests.append((self.path, dict(self.headers)))
                fake.bodies.append(body)
                reply(self, *respond(self))

            def log_message(self, *a: object) -> None:
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), H)
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.httpd.start()

    def stop(self) -> None:
        self.httpd.stop()


def ok(body: object = VECTOR, **headers: str) -> Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]:
    data = json.dumps(body).encode()
    return lambda h: (200, {"Content-Type": "application/json", **headers}, data)


@pytest.fixture
def fake() -> Iterator[Callable[..., Fake]]:
    made: list[Fake] = []

    def make(respond, context=None) -> Fake:  # type: ignore[no-untyped-def]
        f = Fake(respond, context)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop()


def test_vector_answer_keeps_labels_and_reads_nan_as_missing(fake) -> None:
    f = fake(ok())
    c = PromClient(f"http://127.0.0.1:{f.port}", timeout=2)
    got = c.query('up{job="x"}')
    assert [s.metric for s in got] == [{"instance_id": "i-1"}, {"instance_id": "i-2"}]
    assert [s.number for s in got] == [0.5, None]
    assert "query=up%7Bjob%3D%22x%22%7D" in f.requests[0][0]
    c.close()


def test_connection_is_kept_between_queries(fake) -> None:
    f = fake(ok())
    c = PromClient(f"http://127.0.0.1:{f.port}/prefix/", timeout=2)
    for _ in range(3):
        c.query("up")
    assert all(path.startswith("/prefix/api/v1/query?") for path, _ in f.requests)
    assert len(c._all) == 1  # one connection, reused
    c.close()


def test_gzip_answers_are_decompressed(fake) -> None:
    data = gzip.compress(json.dumps(VECTOR).encode())
    f = fake(lambda h: (200, {"Content-Encoding": "gzip"}, data))
    c = PromClient(f"http://127.0.0.1:{f.port}", timeout=2)
    assert len(c.query("up")) == 2
    assert f.requests[0][1]["Accept-Encoding"] == "gzip"


def test_a_scalar_is_one_sample_without_labels(fake) -> None:
    f = fake(ok({"status": "success", "data": {"resultType": "scalar", "result": [1.0, "42"]}}))
    assert [(s.metric, s.number) for s in PromClient(f"http://127.0.0.1:{f.port}").query("42")] == [({}, 42.0)]


def test_bearer_and_basic_auth_headers(fake, tmp_path: Path) -> None:
    f = fake(ok())
    url = f"http://127.0.0.1:{f.port}"
    PromClient(url, auth=StaticBearer("tok")).query("up")
    token = tmp_path / "token"
    token.write_text("first\n")
    rotating = PromClient(url, auth=BearerTokenFile(token))
    rotating.query("up")
    time.sleep(0.01)
    token.write_text("second-token\n")  # Kubernetes rotates the file in place
    rotating.query("up")
    PromClient(url, auth=BasicAuth("alice", "s3cret")).query("up")
    PromClient(f"http://bob:pa%40ss@127.0.0.1:{f.port}").query("up")
    auths = [h.get("Authorization") for _, h in f.requests]
    assert auths == ["Bearer tok", "Bearer first", "Bearer second-token",
                     "Basic " + base64.b64encode(b"alice:s3cret").decode(),
                     "Basic " + base64.b64encode(b"bob:pa@ss").decode()]


def test_credentials_in_the_url_never_show(fake) -> None:
    f = fake(ok())
    c = PromClient(f"http://bob:hunter2@127.0.0.1:{f.port}/p")
    assert "hunter2" not in c.display and "bob" not in c.display
    assert c.display == f"http://127.0.0.1:{f.port}/p"


def test_query_error_says_what_prometheus_said(fake) -> None:
    body = json.dumps({"status": "error", "errorType": "bad_data",
                       "error": "1:5: parse error: unexpected <EOF>"}).encode()
    f = fake(lambda h: (400, {"Content-Type": "application/json"}, body))
    with pytest.raises(PromError) as err:
        PromClient(f"http://127.0.0.1:{f.port}").query("sum(")
    assert err.value.kind == "query" and not err.value.whole
    assert "bad_data: 1:5: parse error" in err.value.message and err.value.query == "sum("


def test_auth_failures_and_html_pages_are_said(fake) -> None:
    f = fake(lambda h: (401, {}, b"Unauthorized"))
    with pytest.raises(PromError) as err:
        PromClient(f"http://127.0.0.1:{f.port}").query("up")
    assert err.value.kind == "auth" and err.value.whole and "401" in err.value.message
    g = fake(lambda h: (200, {"Content-Type": "text/html"}, b"<html><body>Sign in</body></html>"))
    with pytest.raises(PromError) as err:
        PromClient(f"http://127.0.0.1:{g.port}").query("up")
    assert err.value.kind == "response" and "<html><body>Sign in" in err.value.message


def test_connection_refused_is_unreachable_and_retried_once() -> None:
    port = free_port()
    c = PromClient(f"http://127.0.0.1:{port}", timeout=1, retries=1)
    with pytest.raises(PromError) as err:
        c.query("up")
    assert err.value.kind == "unreachable" and "connection refused" in err.value.message
    assert c.requests == 2


def test_a_slow_server_times_out(fake) -> None:
    def slow(h):  # type: ignore[no-untyped-def]
        time.sleep(1.5)
        return 200, {}, json.dumps(VECTOR).encode()

    f = fake(slow)
    c = PromClient(f"http://127.0.0.1:{f.port}", timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(PromError) as err:
        c.query("up")
    assert err.value.kind == "timeout" and "0.3 s" in err.value.message
    assert time.monotonic() - t0 < 1.2  # not retried: the caller backs off


def test_bad_urls_are_refused() -> None:
    for url in ("ftp://x", "http://", "http://host:notaport"):
        with pytest.raises(ValueError):
            PromClient(url)
    with pytest.raises(ValueError, match="https"):
        PromClient("http://127.0.0.1:9090", ca_file="/dev/null")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate")
def test_tls_with_a_ca_file(fake, tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out",
                    str(cert)], check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    f = fake(ok(), context=ctx)
    assert len(PromClient(f"https://127.0.0.1:{f.port}", ca_file=str(cert), timeout=3).query("up")) == 2
    with pytest.raises(PromError) as err:  # not signed by anything the system trusts
        PromClient(f"https://127.0.0.1:{f.port}", timeout=3).query("up")
    assert err.value.kind == "unreachable" and "TLS" in err.value.message


def test_the_command_line_options_reach_the_server(fake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``fleet --bearer-token-file`` / ``--user --password-file`` as a user types them: every query of the refresh
    carries the header (the server here refuses the others, as a real proxy in front of Prometheus does)."""
    from neuron_top.cli.main import main as cli_main

    want = {"Bearer s3cr3t", "Basic " + base64.b64encode(b"al ice:p@ss:w").decode()}
    f = fake(lambda h: (200, {"Content-Type": "application/json"}, json.dumps(VECTOR).encode())
             if h.headers.get("Authorization") in want else (401, {}, b"Unauthorized\n"))
    url = f"http://127.0.0.1:{f.port}"
    (tmp_path / "token").write_text("s3cr3t\n")
    (tmp_path / "pw").write_text("p@ss:w")
    assert cli_main(["fleet", "--prometheus", url, "--bearer-token-file", str(tmp_path / "token"), "--once"]) == 0
    assert cli_main(["fleet", "--prometheus", url, "--user", "al ice", "--password-file", str(tmp_path / "pw"),
                     "--once"]) == 0
    # each run: its 11 queries and the probe for the recording rules
    assert len(f.requests) == 24 and {h["Authorization"] for _, h in f.requests} == want
    capsys.readouterr()
    assert cli_main(["fleet", "--prometheus", url, "--once"]) == 1
    assert "HTTP 401 Unauthorized" in capsys.readouterr().out


def test_a_host_key_is_escaped_as_the_exporter_escapes_label_values() -> None:
    """One escaper (``textsafe.escape_label_value``): a newline in a host's label must not end the PromQL string
    (the fleet's own copy escaped only backslash and quote)."""
    from neuron_top.fleet.queries import QuerySet, host_queries
    from neuron_top.textsafe import escape_label_value

    gauges, counters = host_queries(QuerySet(), 'i-1"\\\nx')
    assert '"i-1\\"\\\\\\nx"' in gauges and "\n" not in gauges and "\n" not in counters
    assert escape_label_value('i-1"\\\nx') == 'i-1\\"\\\\\\nx'

"""``/metrics`` over HTTP: a small threaded server in front of an ``Exporter`` (stdlib only, no UI imports).

The format follows the scraper's ``Accept`` header with prometheus_client's own negotiation (Prometheus asks
for OpenMetrics first); the body is gzipped when ``Accept-Encoding`` allows it, by prometheus_client's rule
(``gzip_accepted``), as AWS's prometheus_client-based script does: a 32-runtime trn1n scrape is 623 KB as text and
16 KB at gzip level 1, which costs ~2 ms (level 9 saves 4 KB more for 12 times the CPU). Each request is answered
on its own thread, so a slow scraper cannot hold up another one, and the feed thread is held up only while a
scrape copies the text out.
"""

from __future__ import annotations

import errno
import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import choose_encoder, gzip_accepted

from neuron_top.export.exposition import CONTENT_TYPE_OPENMETRICS, CONTENT_TYPE_TEXT, Exporter

__all__ = ["ListenError", "MetricsServer", "parse_listen", "serve"]

GZIP_LEVEL = 1
"""Fast: ~2 ms for a 623 KB scrape, 38 times smaller (module docstring)."""
DEFAULT_PORT = 8000
"""AWS's ``neuron-monitor-prometheus.py --port`` default."""

_INDEX = (b"<html><head><title>neuron-top exporter</title></head><body><h1>neuron-top exporter</h1>"
          b'<p><a href="/metrics">/metrics</a></p></body></html>\n')


class ListenError(Exception):
    """The address cannot be listened on (a one-line message for the user)."""


def parse_listen(spec: str) -> tuple[str, int]:
    """``[HOST:]PORT`` -> (host, port); ``""`` as host means every interface, as AWS's script listens.

    IPv6 hosts go in brackets: ``[::1]:8000``. Raises ``ValueError`` with a one-line reason.
    """
    spec = spec.strip()
    host, sep, port = spec.rpartition(":")
    if not sep:
        host, port = "", spec
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{spec!r} is not [HOST:]PORT (a port is 0-65535)")
    return host, int(port)


def wants_openmetrics(accept: str | None) -> bool:
    """Whether ``accept`` asks for OpenMetrics, by prometheus_client's rules (``choose_encoder``)."""
    _, content_type = choose_encoder(accept or "")
    return content_type.startswith("application/openmetrics-text")


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            om = wants_openmetrics(self.headers.get("Accept"))
            try:
                data = self.server.exporter.render(om)
            except Exception as exc:  # a bug must cost this scrape, not the server
                self.server.errors += 1
                self._send(500, b"neuron-top: could not render metrics: " + repr(exc).encode()[:200] + b"\n",
                           "text/plain; charset=utf-8", body)
                return
            gz = gzip_accepted(self.headers.get("Accept-Encoding", ""))
            self._send(200, gzip.compress(data, compresslevel=GZIP_LEVEL) if gz else data,
                       CONTENT_TYPE_OPENMETRICS if om else CONTENT_TYPE_TEXT, body,
                       {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"} if gz else {"Vary": "Accept-Encoding"})
        elif path in ("/", "/index.html"):
            self._send(200, _INDEX, "text/html; charset=utf-8", body)
        else:
            self._send(404, b"not found: try /metrics\n", "text/plain; charset=utf-8", body)

    def _send(self, code: int, data: bytes, content_type: str, body: bool, headers: dict[str, str] | None = None
              ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # a scrape every few seconds is not news; errors are counted


class MetricsServer(ThreadingHTTPServer):
    """The server; ``exporter`` answers ``/metrics``. Use ``serve`` to start one on a thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], exporter: Exporter) -> None:
        self.exporter = exporter
        self.errors = 0
        if ":" in address[0]:
            self.address_family = __import__("socket").AF_INET6
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = "localhost" if host in ("", "0.0.0.0", "::") else host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{port}/metrics"

    def stop(self) -> None:
        """Stop serving and release the port; safe to call twice."""
        self.shutdown()
        self.server_close()


def serve(listen: str, exporter: Exporter) -> MetricsServer:
    """Listen on ``[HOST:]PORT`` and serve ``exporter`` from a daemon thread; returns the running server.

    Raises ``ListenError`` (one line: busy port, no permission, bad address) before anything else starts.
    """
    try:
        address = parse_listen(listen)
    except ValueError as exc:
        raise ListenError(f"--listen {exc}") from None
    try:
        server = MetricsServer(address, exporter)
    except OSError as exc:
        what = {errno.EADDRINUSE: "address already in use (another exporter on this port?)",
                errno.EACCES: "permission denied (ports below 1024 need root)"}.get(exc.errno or 0)
        raise ListenError(f"cannot listen on {listen}: {what or exc.strerror or exc}") from None
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5},
                              name="metrics server", daemon=True)
    thread.start()
    return server

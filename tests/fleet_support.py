"""Test harness for the fleet view: a real Prometheus on a loopback port, scraping expositions we serve.

* ``HostExporter``: one host's ``neuron-top export`` in process (the exporter library fed demo reports): each
  scrape is one more report period, so counters grow as they do behind a live exporter.
* ``ExpositionServer``: many hosts behind one loopback HTTP server, one path each; a host can be made to fail
  (HTTP 503) as a killed exporter would.
* ``Prometheus``: Debian's ``prometheus`` started on a free port with a temporary config and storage, stopped
  (and its files removed) by ``stop``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMETHEUS = shutil.which("prometheus")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class QuietServer(ThreadingHTTPServer):
    """A loopback HTTP server for tests: a thread per request, quiet when a client gives up (a scrape or query
    timeout), served from a thread of its own by ``start``."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass

    def start(self) -> QuietServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def end_process(proc: subprocess.Popen) -> None:
    """Terminate a server this harness started (its whole session if it will not go)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, 9)
            proc.wait(5)


def forward(url: str, method: str, body: bytes, content_type: str = "") -> tuple[int, bytes]:
    """A stand-in's request passed on to the server behind it: (status, body), an HTTP error's too."""
    req = urllib.request.Request(url, data=body if method == "POST" else None, method=method,
                                 headers={"Content-Type": content_type} if content_type else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class StandIn:
    """A loopback server for a stand-in's handler class (``url``; ``stop``)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str = "") -> None:
        self.httpd = QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self.httpd.start()

    def stop(self) -> None:
        self.httpd.stop()


def reply(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    handler.send_response(status)
    for k, v in headers.items():
        handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class HostExporter:
    """One host's ``neuron-top export`` in process (``neuron_top.export.Exporter``): each scrape is one more
    report period, so counters grow as behind a live exporter. ``reports``: one report (repeated) or an iterator
    of them; ``labels`` override instance_info fields (``instance_type="trn1.32xlarge"``)."""

    def __init__(self, reports: Iterator[dict[str, Any]] | dict[str, Any], **labels: str) -> None:
        from neuron_top.export import Exporter, ExportOptions

        self._reports = reports if not isinstance(reports, dict) else None
        self._fixed = reports if isinstance(reports, dict) else None
        self.override = labels
        self.exporter = Exporter(ExportOptions(process_metrics=False), source="test")
        self.report: dict[str, Any] | None = None
        """The report of the last scrape."""
        self.scrapes = 0
        self.ended = False
        """The source ended: scrapes serve the last values (as ``neuron-top export`` does), no more reports."""
        self._lock = threading.Lock()

    def end(self, why: str = "neuron-monitor exited") -> None:
        from neuron_top.feed import StatusChanged
        from neuron_top.sources.base import State, Status

        with self._lock:
            self.ended = True
            self.exporter.apply(StatusChanged(Status(State.ENDED, why)))

    def scrape(self) -> str:
        from neuron_top.snapshot import snapshot_from

        with self._lock:
            if self.ended:
                return self.exporter.render().decode()
            report = self._fixed if self._fixed is not None else next(self._reports)  # type: ignore[arg-type]
            if self.override:
                report = {**report, "instance_info": {**report.get("instance_info", {}), **self.override}}
            self.report = report
            self.scrapes += 1
            self.exporter.apply_snapshot(snapshot_from(json.dumps(report).encode(), time.time(), self.scrapes))
            return self.exporter.render().decode()


class ExpositionServer:
    """Hosts' expositions on ``http://127.0.0.1:PORT/metrics/<name>``."""

    def __init__(self) -> None:
        self.hosts: dict[str, HostExporter | Callable[[], str]] = {}
        self.failing: set[str] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = urllib.parse.unquote(self.path.removeprefix("/metrics/"))
                host = server.hosts.get(name)
                if host is None or name in server.failing:
                    self.send_error(503 if host is not None else 404)
                    return
                body = (host.scrape() if isinstance(host, HostExporter) else host()).encode()
                reply(self, 200, {"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}, body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    def add(self, name: str, host: HostExporter | Callable[[], str]) -> None:
        self.hosts[name] = host

    def start(self) -> ExpositionServer:
        self.httpd.start()
        return self

    def stop(self) -> None:
        self.httpd.stop()


def targets_on(server: ExpositionServer, names: list[str] | None = None, **labels: str
               ) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Prometheus targets for hosts of ``server`` (all by default), each with the target ``labels``."""
    return {n: (f"127.0.0.1:{server.port}", f"/metrics/{urllib.parse.quote(n)}", dict(labels))
            for n in (names if names is not None else list(server.hosts))}


class Prometheus:
    """A real Prometheus on a free loopback port. ``targets``: name -> (address, metrics path, target labels).

    ``port`` and ``data`` may be given to start a second one on the same port and storage (a restart)."""

    def __init__(self, targets: dict[str, tuple[str, str, dict[str, str]]], *, scrape_interval: str = "1s",
                 extra_flags: tuple[str, ...] = (), port: int | None = None, data: Path | None = None,
                 rule_files: tuple[Path, ...] = (), evaluation_interval: str = "1m") -> None:
        if PROMETHEUS is None:
            raise RuntimeError("prometheus is not installed")
        self.dir = Path(tempfile.mkdtemp(prefix="nt-prom-"))
        self.data = data or self.dir / "data"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        configs = [{"targets": [addr], "labels": {"__metrics_path__": path, "instance": name, **labels}}
                   for name, (addr, path, labels) in targets.items()]
        config = {"global": {"scrape_interval": scrape_interval, "evaluation_interval": evaluation_interval,
                             "scrape_timeout": scrape_interval},
                  "rule_files": [str(f) for f in rule_files],
                  "scrape_configs": [{"job_name": "neuron", "static_configs": configs}]}
        (self.dir / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.log = open(self.dir / "log.txt", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={self.dir / 'prometheus.yml'}", f"--storage.tsdb.path={self.data}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=2h", "--log.level=warn",
             *extra_flags],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_ready(self, timeout: float = 30.0) -> None:
        self._poll(lambda: self._get("/-/ready") is not None, timeout, "ready")

    def query(self, expr: str) -> list[dict[str, Any]]:
        body = self._get("/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        return json.loads(body)["data"]["result"] if body else []

    def wait_for(self, expr: str, test: Callable[[list[dict[str, Any]]], bool], timeout: float = 60.0) -> None:
        self._poll(lambda: test(self.query(expr)), timeout, expr)

    def _get(self, path: str) -> bytes | None:
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as resp:
                return resp.read()
        except OSError:
            return None

    def _poll(self, test: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {(self.dir / 'log.txt').read_text()[-2000:]}")
            if test():
                return
            time.sleep(0.2)
        raise TimeoutError(f"prometheus: waited {timeout:.0f}s for {what}; log: "
                           f"{(self.dir / 'log.txt').read_text()[-2000:]}")

    def stop(self, keep_data: bool = False) -> None:
        end_process(self.proc)
        self.log.close()
        if not keep_data:
            shutil.rmtree(self.dir, ignore_errors=True)
            if self.data != self.dir / "data":
                shutil.rmtree(self.data, ignore_errors=True)


# --- deterministic fleets for the screen's tests ---------------------------------------------------------------

FLEET_T0 = 1767225600.0  # 2026-01-01T00:00:00Z, as tests/helpers.py's T0


def demo_rows(n: int) -> list:
    """``n`` hosts' rows: eight real demo hosts (two seeds of each instance type, through ``from_snapshot``), then
    copies with their own ids and utilization, and a few in trouble (uncorrected ECC, errors, stale, down)."""
    import msgspec

    from neuron_top.fleet.rows import DOWN, STALE, from_snapshot
    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import generate

    base = []
    for inst in ("trn2.48xlarge", "trn1.32xlarge", "inf2.48xlarge", "inf1.xlarge"):
        for seed in (1, 2):
            snap = snapshot_from(generate(inst, seed, 1)[0], FLEET_T0)
            base.append(from_snapshot(snap.instance.instance_id or "", snap, age=1.0))
    rows = []
    for i in range(n):
        r = base[i % len(base)]
        if i >= len(base):
            util = (r.util or 0.0) * ((i * 37) % 100) / 100.0
            r = msgspec.structs.replace(r, key=f"i-{i:017x}", instance_id=f"i-{i:017x}", util=util,
                                        zone=("us-east-2a", "us-east-2b", "us-east-2c")[i % 3])
        if i % 41 == 5:
            r = msgspec.structs.replace(r, ecc_uncorrected=1.0)
        if i % 53 == 7:
            r = msgspec.structs.replace(r, err_rate=3.5)
        if i % 61 == 9:
            r = msgspec.structs.replace(r, status=STALE, age=95.0)
        if i % 67 == 11:
            r = msgspec.structs.replace(r, status=DOWN, age=400.0, note="no longer in any answer")
        rows.append(r)
    return rows


def demo_frame(n: int, ts: float = FLEET_T0):  # type: ignore[no-untyped-def]
    from neuron_top.fleet.frame import FleetFrame

    return FleetFrame(ts=ts, source="prometheus http://prometheus.example:9090", rows=demo_rows(n), queries=9,
                      elapsed=0.042)

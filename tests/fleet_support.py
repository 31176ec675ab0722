"""Test harness for the fleet view: a real Prometheus on a loopback port, scraping expositions we serve.

* ``exposition``: a neuron-monitor report as AWS's ``neuron-monitor-prometheus.py`` would publish it (its names,
  labels, label order and number format; see ../shared/reference/prometheus-metrics.md and the real scrapes in
  tests/fixtures/prometheus/). Until ``neuron-top export`` (issue 27) is on main this stands in for it.
* ``HostExporter``: one host's exporter: each scrape is one more report period, so counters grow as they do
  behind a live exporter (by the per-period counts of its report, or of successive demo reports).
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
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMETHEUS = shutil.which("prometheus")
INSTANCE_LABELS = ("availability_zone", "instance_id", "instance_name", "instance_type", "region", "subnet_id")
CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
ERROR_TYPES = ("generic", "numerical", "transient", "model", "runtime", "hardware")
STATUS_TYPES = ("completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input",
                "failed_to_queue")
ECC_TYPES = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")
PERCENTILES = ("p0", "p1", "p25", "p50", "p75", "p99", "p100")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def go_float(d: float) -> str:
    """prometheus_client's ``floatToGoString``: ``4.26648e+06``, ``132256.0``, ``5.32523487232e+011``."""
    d = float(d)
    if d != d:
        return "NaN"
    if d in (float("inf"), float("-inf")):
        return "+Inf" if d > 0 else "-Inf"
    s = repr(d)
    dot = s.find(".")
    if d > 0 and dot > 6:
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+0{dot - 1}"
    return s


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _line(name: str, labels: dict[str, str], value: float) -> str:
    inside = ",".join(f'{k}="{_esc(str(labels[k]))}"' for k in sorted(labels))
    return f"{name}{{{inside}}} {go_float(value)}" if inside else f"{name} {go_float(value)}"


def instance_labels(report: dict[str, Any], **override: str) -> dict[str, str]:
    ii = report.get("instance_info") or {}
    labels = {
        "availability_zone": ii.get("instance_availability_zone") or "",
        "instance_id": ii.get("instance_id") or "",
        "instance_name": ii.get("instance_name") or "",
        "instance_type": ii.get("instance_type") or "",
        "region": ii.get("instance_region") or "",
        "subnet_id": ii.get("subnet_id") or "",
    }
    labels.update(override)
    return labels


class HostExporter:
    """One host's exporter. ``reports`` gives the report of each scrape (a fixed one repeats); counters add up
    each report's per-period counts, as AWS's script does."""

    def __init__(self, reports: Iterator[dict[str, Any]] | dict[str, Any], **labels: str) -> None:
        self._reports = reports if not isinstance(reports, dict) else None
        self._fixed = reports if isinstance(reports, dict) else None
        self.override = labels
        self.counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self.report: dict[str, Any] | None = None
        """The report of the last scrape."""
        self.scrapes = 0
        self._lock = threading.Lock()
        self._static: tuple[int, str] | None = None

    def scrape(self) -> str:
        with self._lock:
            report = self._fixed if self._fixed is not None else next(self._reports)  # type: ignore[arg-type]
            self.report = report
            self.scrapes += 1
            return self._render(report)

    def _count(self, name: str, labels: dict[str, str], n: float) -> None:
        key = (name, tuple(sorted(labels.items())))
        self.counters[key] = self.counters.get(key, 0.0) + float(n or 0)

    def _render(self, report: dict[str, Any]) -> str:
        base = instance_labels(report, **self.override)
        # counters first (they change every scrape), then the gauges (kept when the report is the same object)
        for rt in report.get("neuron_runtime_data") or []:
            if rt.get("error"):
                continue
            tag = str(rt.get("neuron_runtime_tag") or rt.get("pid"))
            ex = (rt.get("report") or {}).get("execution_stats") or {}
            if ex.get("error"):
                continue
            for t in ERROR_TYPES:
                self._count("execution_errors_total", {**base, "runtime_tag": tag, "error_type": t},
                            (ex.get("error_summary") or {}).get(t) or 0)
            for t in STATUS_TYPES:
                self._count("execution_status_total", {**base, "runtime_tag": tag, "status_type": t},
                            (ex.get("execution_summary") or {}).get(t) or 0)
        hw = ((report.get("system_data") or {}).get("neuron_hw_counters") or {})
        if not hw.get("error"):
            for dev in hw.get("neuron_devices") or []:
                for t in ECC_TYPES:
                    self._count("hardware_ecc_events_total",
                                {**base, "neuron_device_index": str(dev.get("neuron_device_index")), "event_type": t},
                                dev.get(t) or 0)
        counters: dict[str, list[str]] = {}
        for (name, labels), v in self.counters.items():
            counters.setdefault(name, []).append(_line(name, dict(labels), v))
        if self._static is None or self._static[0] != id(report) or self._fixed is None:
            self._static = (id(report), gauges(report, base))
        out = [self._static[1]]
        for name, lines in counters.items():
            out.append(f"# HELP {name} {name}\n# TYPE {name} counter\n" + "\n".join(lines))
        return "\n".join(out) + "\n"


def gauges(report: dict[str, Any], base: dict[str, str]) -> str:
    """Every gauge family of AWS's exporter for one report (its runtimes' and the system's)."""
    fam: dict[str, list[str]] = {}

    def g(name: str, labels: dict[str, str], v: float | None) -> None:
        if v is not None:
            fam.setdefault(name, []).append(_line(name, labels, v))

    sysd = report.get("system_data") or {}
    mi = sysd.get("memory_info") or {}
    if mi and not mi.get("error"):
        for k in ("memory_total_bytes", "memory_used_bytes", "swap_total_bytes", "swap_used_bytes"):
            g(f"system_{k}", base, mi.get(k))
    vc = sysd.get("vcpu_usage") or {}
    if vc and not vc.get("error"):
        g("system_vcpu_count", base, len(vc.get("usage_data") or {}))
        a = vc.get("average_usage") or {}
        g("system_vcpu_usage_ratio", {**base, "usage_type": "user"}, ((a.get("user") or 0) + (a.get("nice") or 0)) / 100)
        g("system_vcpu_usage_ratio", {**base, "usage_type": "system"},
          sum(a.get(k) or 0 for k in ("system", "io_wait", "irq", "soft_irq")) / 100)
    g("instance_info", base, 1.0)
    hw = report.get("neuron_hardware_info") or {}
    if hw and not hw.get("error"):
        g("neuron_hardware_info", {**base, "neuron_device_count": str(hw.get("neuron_device_count")),
                                   "neuroncore_per_device_count": str(hw.get("neuroncore_per_device_count")),
                                   "neuron_device_memory_size": str(hw.get("neuron_device_memory_size"))}, 1.0)
    for rt in report.get("neuron_runtime_data") or []:
        if rt.get("error"):
            continue
        tag = str(rt.get("neuron_runtime_tag") or rt.get("pid"))
        rl = {**base, "runtime_tag": tag}
        r = rt.get("report") or {}
        nc = r.get("neuroncore_counters") or {}
        if not nc.get("error"):
            for core, c in (nc.get("neuroncores_in_use") or {}).items():
                g("neuroncore_utilization_ratio", {**rl, "neuroncore": str(core)},
                  ((c or {}).get("neuroncore_utilization") or 0) / 100)
        vu = (r.get("neuron_runtime_vcpu_usage") or {})
        if vu and not vu.get("error"):
            u = vu.get("vcpu_usage") or {}
            g("neuron_runtime_vcpu_usage_ratio", {**rl, "usage_type": "user"}, (u.get("user") or 0) / 100)
            g("neuron_runtime_vcpu_usage_ratio", {**rl, "usage_type": "system"}, (u.get("system") or 0) / 100)
        mu = r.get("memory_used") or {}
        used = mu.get("neuron_runtime_used_bytes") or {}
        if mu and not mu.get("error"):
            g("neuron_runtime_memory_used_bytes", {**rl, "memory_location": "host"}, used.get("host"))
            g("neuron_runtime_memory_used_bytes", {**rl, "memory_location": "neuron_device"}, used.get("neuron_device"))
            per_core = (used.get("usage_breakdown") or {}).get("neuroncore_memory_usage") or {}
            for core, cats in per_core.items():
                for cat in CORE_MEMORY:
                    g(f"neuroncore_memory_usage_{cat}", {**rl, "neuroncore": str(core), "memory_location": "None"},
                      (cats or {}).get(cat))
        ex = r.get("execution_stats") or {}
        lat = ((ex.get("latency_stats") or {}).get("total_latency")) if not ex.get("error") else None
        if lat:
            for p in sorted(PERCENTILES):
                g("execution_latency_seconds", {**rl, "percentile": p}, lat.get(p))
    out = []
    for name, lines in fam.items():
        out.append(f"# HELP {name} {name}\n# TYPE {name} gauge\n" + "\n".join(lines))
    return "\n".join(out)


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
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="expositions", daemon=True)

    def add(self, name: str, host: HostExporter | Callable[[], str]) -> None:
        self.hosts[name] = host

    def start(self) -> ExpositionServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def targets_on(server: ExpositionServer, names: list[str] | None = None, **labels: str
               ) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Prometheus targets for hosts of ``server`` (all by default), each with the target ``labels``."""
    return {n: (f"127.0.0.1:{server.port}", f"/metrics/{urllib.parse.quote(n)}", dict(labels))
            for n in (names if names is not None else list(server.hosts))}


class Prometheus:
    """A real Prometheus on a free loopback port. ``targets``: name -> (address, metrics path, target labels).

    ``port`` and ``data`` may be given to start a second one on the same port and storage (a restart)."""

    def __init__(self, targets: dict[str, tuple[str, str, dict[str, str]]], *, scrape_interval: str = "1s",
                 extra_flags: tuple[str, ...] = (), port: int | None = None, data: Path | None = None) -> None:
        if PROMETHEUS is None:
            raise RuntimeError("prometheus is not installed")
        self.dir = Path(tempfile.mkdtemp(prefix="nt-prom-"))
        self.data = data or self.dir / "data"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        configs = [{"targets": [addr], "labels": {"__metrics_path__": path, "instance": name, **labels}}
                   for name, (addr, path, labels) in targets.items()]
        config = {"global": {"scrape_interval": scrape_interval, "evaluation_interval": "1m",
                             "scrape_timeout": scrape_interval},
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
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(self.proc.pid, 9)
                self.proc.wait(5)
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

"""The Prometheus exporter's cost: CPU between scrapes at 1 Hz, and scrape latency at ~10,000 series.

Targets (issue 27): ``neuron-top export`` fed the trn2.48xlarge demo at 1 Hz uses <= 0.5% of one core between
scrapes, and a scrape of about 10,000 series answers in <= 20 ms p99. Each is measured beside a baseline in the
same run, the same exposition built naively: AWS's way, prometheus_client Gauge/Counter objects set per series
per report and ``generate_latest`` per scrape (``tests/export_reference.py``, checked byte for byte against
ours by the unit tests).

1. CPU: the real ``neuron-top export`` process and a naive exporter process (the same feed loop, the naive
   registry, the same HTTP server class) read the same demo reports, written to both pipes once a second by
   this script (so the simulator's cost is not counted). Nothing scrapes them. Each one's CPU time (user +
   system, from /proc) over the window after a warm-up, as % of one core.
2. Scrape: both exporters in this process behind the same HTTP server; a report of 27 runtimes each listing
   all 64 cores of a trn2.48xlarge (as runtimes that zero-fill do: ~10,000 series); a new report (alternating
   two) before every scrape, so no scrape is served from the cache; a scrape is the GET's wall time measured by
   a client process (as Prometheus is one), 0.0.4 text. Medians, p99 and the ratio.

    python benchmarks/bench_export.py                 # ~60 s
    python benchmarks/bench_export.py --seconds 60 --scrapes 400
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neuron_top.export import Exporter, ExportOptions  # noqa: E402
from neuron_top.export.server import MetricsServer  # noqa: E402
from neuron_top.snapshot import snapshot_from  # noqa: E402
from neuron_top.sources.demo import generate  # noqa: E402
from neuron_top.sources.demo.source import trn2_benchmark_report  # noqa: E402
from tests.export_reference import NaiveExporter  # noqa: E402

NAIVE_MAIN = """
import sys, threading
sys.path.insert(0, {root!r})
from prometheus_client import generate_latest
from neuron_top.feed import Feed, Report
from neuron_top.sources.stream import StreamSource
from neuron_top.export.server import MetricsServer
from tests.export_reference import NaiveExporter
naive = NaiveExporter()
lock = threading.Lock()
class R:
    def render(self, om=False):
        with lock:
            return generate_latest(naive.registry)
server = MetricsServer(("127.0.0.1", 0), R())
threading.Thread(target=server.serve_forever, daemon=True).start()
for ev in Feed(StreamSource(sys.stdin.buffer, "stdin")).events():
    if isinstance(ev, Report):
        with lock:
            naive.apply(ev.snapshot.report)
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_cpu(seconds: float, warmup: float) -> dict[str, float]:
    """Both exporters fed the demo at 1 Hz; % of one core each over ``seconds`` after ``warmup``."""
    n = int(seconds + warmup + 2)
    reports = generate("trn2.48xlarge", 7, n, period=1.0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ours = subprocess.Popen([sys.executable, "-m", "neuron_top", "export", "--listen", "127.0.0.1:0"], cwd=ROOT,
                            stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    naive = subprocess.Popen([sys.executable, "-c", NAIVE_MAIN.format(root=str(ROOT))], cwd=ROOT,
                             stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    procs = {"ours": ours, "naive": naive}
    start: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        for i, rep in enumerate(reports):
            for p in procs.values():
                assert p.stdin is not None
                p.stdin.write(rep + b"\n")
                p.stdin.flush()
            if i == int(warmup):
                start = {k: cpu_seconds(p.pid) for k, p in procs.items()}
                w0 = time.monotonic()
            if i >= int(warmup) + seconds:
                break
            time.sleep(max(0.0, t0 + i + 1 - time.monotonic()))
        wall = time.monotonic() - w0
        return {k: 100.0 * (cpu_seconds(p.pid) - start[k]) / wall for k, p in procs.items()}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()


def big_reports() -> list[bytes]:
    """Two trn2.48xlarge reports of 27 runtimes, each listing all 64 cores (zeros for cores not its own)."""
    out = []
    for seed in (1, 2):
        d = msgspec.json.decode(trn2_benchmark_report(seed))
        base = d["neuron_runtime_data"]
        runtimes = []
        for i in range(27):
            rt = msgspec.json.decode(msgspec.json.encode(base[i % len(base)]))
            rt["pid"] = 10_000 + i
            rt["neuron_runtime_tag"] = f"{rt['neuron_runtime_tag']}-{i}"
            rep = rt["report"]
            cores = rep["neuroncore_counters"]["neuroncores_in_use"]
            zero = {k: 0 for k in next(iter(cores.values()))}
            rep["neuroncore_counters"]["neuroncores_in_use"] = {str(c): cores.get(str(c), zero) for c in range(64)}
            mem = rep["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]["neuroncore_memory_usage"]
            mzero = dict.fromkeys(("constants", "model_code", "model_shared_scratchpad", "runtime_memory",
                                   "tensors"), 0)
            rep["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]["neuroncore_memory_usage"] = {
                str(c): mem.get(str(c), mzero) for c in range(64)}
            runtimes.append(rt)
        d["neuron_runtime_data"] = runtimes
        out.append(msgspec.json.encode(d))
    return out


CLIENT = """
import sys, time, http.client
conns = {}
for line in sys.stdin:
    port = int(line)
    c = conns.get(port) or conns.setdefault(port, http.client.HTTPConnection("127.0.0.1", port, timeout=10))
    t = time.perf_counter()
    c.request("GET", "/metrics")
    body = c.getresponse().read()
    print(time.perf_counter() - t, body.count(b"\\n") - body.count(b"\\n#"), flush=True)
"""


def bench_scrape(scrapes: int) -> tuple[int, dict[str, list[float]], dict[str, float]]:
    """Both exporters behind the same server class in this process; the scraper is another process (as
    Prometheus is), on a kept-alive connection; a new report before every scrape."""
    snaps = [snapshot_from(r, 1000.0, i) for i, r in enumerate(big_reports())]
    ours = Exporter(ExportOptions(process_metrics=False))
    naive = NaiveExporter()
    lock = threading.Lock()

    class Naive:
        def render(self, om: bool = False) -> bytes:
            from prometheus_client import generate_latest

            with lock:
                return generate_latest(naive.registry)

    def apply_naive(snap) -> None:  # type: ignore[no-untyped-def]
        with lock:
            naive.apply(snap.report)

    feeders = {"ours": ours.apply_snapshot, "naive": apply_naive}
    servers = {"ours": MetricsServer(("127.0.0.1", 0), ours), "naive": MetricsServer(("127.0.0.1", 0), Naive())}
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    client = subprocess.Popen([sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert client.stdin is not None and client.stdout is not None
    times: dict[str, list[float]] = {"ours": [], "naive": []}
    update: dict[str, list[float]] = {"ours": [], "naive": []}
    series = 0
    try:
        for i in range(scrapes):
            for name in ("ours", "naive") if i % 2 else ("naive", "ours"):  # interleaved: shared noise
                t = time.perf_counter()
                feeders[name](snaps[i % 2])
                update[name].append(time.perf_counter() - t)
                client.stdin.write(f"{servers[name].server_address[1]}\n")
                client.stdin.flush()
                elapsed, lines = client.stdout.readline().split()
                times[name].append(float(elapsed))
                series = int(lines) if name == "ours" else series
    finally:
        client.stdin.close()
        client.wait(timeout=10)
        for s in servers.values():
            s.stop()
    return series, times, {k: statistics.median(v) * 1000 for k, v in update.items()}


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="CPU window after the warm-up (30)")
    ap.add_argument("--warmup", type=float, default=8.0)
    ap.add_argument("--scrapes", type=int, default=200)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load:.2f}")
    series, times, update = bench_scrape(args.scrapes)
    print(f"scrape, {series} samples (0.0.4 text), {args.scrapes} scrapes each, a new report before every one:")
    for name in ("ours", "naive"):
        print(f"  {name:6s} median {p(times[name], 0.5):7.2f} ms   p99 {p(times[name], 0.99):7.2f} ms   "
              f"report update median {update[name]:6.2f} ms")
    print(f"  naive / ours: {p(times['naive'], 0.5) / p(times['ours'], 0.5):.1f}x (median), "
          f"{p(times['naive'], 0.99) / p(times['ours'], 0.99):.1f}x (p99)")
    cpu = bench_cpu(args.seconds, args.warmup)
    print(f"CPU between scrapes, trn2.48xlarge demo at 1 Hz, {args.seconds:.0f} s after {args.warmup:.0f} s warm-up:")
    print(f"  ours (neuron-top export)  {cpu['ours']:.3f}% of a core")
    print(f"  naive (prometheus_client) {cpu['naive']:.3f}% of a core   ({cpu['naive'] / max(cpu['ours'], 1e-9):.1f}x)")


if __name__ == "__main__":
    main()

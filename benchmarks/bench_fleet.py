"""What the fleet view costs at 256 (or 1,000) hosts of trn2 data, against the same view of a small fleet in the
same run, with and without the recording rules.

    python benchmarks/bench_fleet.py [--hosts 256] [--refreshes 20] [--seconds 60] [--warm-up 20] [--rules]
                                     [--scrape 10s] [--skip-tmux]

Targets (issue 37): at 1,000 trn2.48xlarge hosts with ``deploy/prometheus/neuron-top.recording.yml`` loaded
(``--rules``: evaluated at the scrape interval), a steady refresh <= 300 ms median and the first (all queries)
<= 1 s; the same refreshes reading the raw series (``rules="off"``, the fleet without the rules) measured against the
same server beside them.

Targets (issue 28): with a Prometheus holding 256 trn2.48xlarge hosts, one refresh (every query and the render)
takes <= 300 ms; the fleet view at its default 2 s refresh in tmux at 200x60 costs <= 2% of one core; the number
of queries per refresh does not depend on the number of hosts.

The data: 256 simulated targets (the ``trn2.48xlarge`` demo's first report with seeds 1..256, each host's
exposition made once by ``neuron_top.export.exposition`` and served as it is by one loopback HTTP server in a
child process, at a lower priority (``nice 10``: in a cluster the exporters run on the hosts, not beside the server;
~900 samples a host, ~230,000 series in all), scraped every 10 s by Debian's Prometheus on a free
port with a temporary config and storage. The targets carry a ``fleet="all"`` label and the first 16 also
``part="16"``: ``--match`` picks the whole fleet or the small one, so both are measured against one server.
Values do not move between scrapes (counters stand still, so rates are 0): the cost of a query is the same.

1. Queries per refresh: ``PromClient.requests`` before and after one refresh, for 1, 16 and all hosts.
2. One refresh, in process: the queries (wall time, run in parallel as the view runs them), the CPU time
   Prometheus spent meanwhile, and the render: ``FleetScreen.apply_frame`` in ``App.run_test(size=(200, 60))``
   until ``pilot.pause()`` returns, with ``App._display`` replaced by one that renders each update to a string for
   a 256-colour terminal (what the real driver would write; the headless driver writes nothing). A refresh asks
   the 3 queries of status and utilization and waits for them; one or two of the 8 slow ones in turns (each once
   in ``SLOW_EVERY`` refreshes) are asked after them in the background, their answers used from the next refresh
   on; the first refresh (and the one after a new host) asks all 11 (12 with the rules probe) and waits for them:
   the two kinds are reported apart (three whole ones, spread over the run, among ``--refreshes``). Refreshes are paced every ``--interval`` seconds as the view paces them (the
   background's queries run in the pause). Medians and p90 over ``--refreshes``.
3. CPU in a real terminal: ``neuron-top fleet --prometheus URL --match 'fleet="all"'`` and the same with
   ``--match 'part="16"'`` run side by side in tmux at 200x60 with the default 2 s refresh; after ``--warm-up``
   their CPU time (every thread: the scheduler's count from /proc, ``bench_ui.cpu_seconds``) over ``--seconds``,
   as % of one core, and the bytes each wrote to its terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_ui import Tmux, cpu_seconds, load, measure_window, terminal_bytes  # noqa: E402

from neuron_top.fleet.prom import PromFleet  # noqa: E402
from neuron_top.fleet.promql import PromClient  # noqa: E402
from neuron_top.fleet.queries import QuerySet, parse_match  # noqa: E402
from tests.fleet_support import PROMETHEUS, Prometheus  # noqa: E402

W, H = 200, 60
PY = sys.executable
ALL, SIXTEEN = 'fleet="all"', 'part="16"'

SERVER = """
import sys, json, os
os.nice(10)  # the simulated exporters stand for other hosts: their CPU here must not crowd the server measured
sys.path.insert(0, {root!r})
from neuron_top.export import exposition
from neuron_top.sources.demo import generate
from tests.fleet_support import ExpositionServer
server = ExpositionServer()
for i in range({hosts}):
    text = exposition([generate("trn2.48xlarge", i + 1, 1)[0]])
    server.add(f"h{{i}}", lambda text=text: text)
server.start()
print(json.dumps({{"port": server.port, "samples": sum(1 for ln in text.splitlines() if ln and ln[0] != "#")}}),
      flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.stop()
"""


def start_hosts(hosts: int) -> tuple[subprocess.Popen, int, int]:
    proc = subprocess.Popen([PY, "-c", SERVER.format(root=str(ROOT), hosts=hosts)], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    return proc, info["port"], info["samples"]


def queries_per_refresh(url: str, rules: str = "auto") -> dict[str, tuple[int, int, str]]:
    """(hosts, requests, how the figures were read) of one refresh for one host, 16 and the whole fleet."""
    out = {}
    for name, match in (("1 host", 'instance="h0"'), ("16 hosts", 'part="16"'), ("all", 'fleet="all"')):
        fleet = PromFleet(PromClient(url, timeout=30), QuerySet(match=parse_match(match)), rules=rules)
        before = fleet.client.requests
        frame = fleet.refresh()
        out[name] = (len(frame.rows), fleet.client.requests - before, ", ".join(frame.notes))
        fleet.close()
    return out


async def refresh_times(url: str, match: str, n: int, server_pid: int, rules: str = "auto", interval: float = 2.0,
                        background: bool = True) -> dict[str, list[float]]:
    """Per refresh, in ms: the queries (wall), the render (wall, terminal bytes included: ``terminal_bytes``),
    both, and the CPU time Prometheus spent answering (its process's, all threads: what the queries cost the
    server, whatever else runs beside). Refreshes are paced as the view paces them (``PromFleet.next_delay``:
    ``interval`` from the start of one to the next), so the slow queries asked in the background run in the
    pause between two, as they do in the view; ``interval`` 0: back to back."""
    from neuron_top.tui.app import NeuronTopApp
    from neuron_top.tui.screens.fleet import FleetScreen

    fleet = PromFleet(PromClient(url, timeout=30), QuerySet(match=parse_match(match)), rules=rules,
                      background=background)
    screen = FleetScreen()
    out: dict[str, list[float]] = {"queries": [], "render": [], "total": [], "server cpu": [], "asked": []}
    try:
        app = NeuronTopApp(None, first_screen=lambda: screen)
        with terminal_bytes(W, H):
            async with app.run_test(size=(W, H)) as pilot:
                await pilot.pause()
                for i in range(2 + n):  # two to warm up
                    if i - 2 in (0, n // 3, 2 * n // 3):
                        # three whole refreshes among the measured ones, spread over the run (a median: one
                        # alone lands inside the rules' evaluation or not, 0.4-1.9 s at 1,000 hosts)
                        fleet.start_over()
                    c0 = cpu_seconds(server_pid)
                    t0 = time.perf_counter()
                    frame = fleet.refresh()
                    t1 = time.perf_counter()
                    out["server cpu"].append((cpu_seconds(server_pid) - c0) * 1000)
                    out["asked"].append(float(frame.queries))
                    screen.apply_frame(frame)
                    await pilot.pause()
                    t2 = time.perf_counter()
                    out["queries"].append((t1 - t0) * 1000)
                    out["render"].append((t2 - t1) * 1000)
                    out["total"].append((t2 - t0) * 1000)
                    await asyncio.sleep(max(0.0, fleet.next_delay(interval, frame) - (t2 - t1)))
    finally:
        fleet.close()
    return {k: v[2:] for k, v in out.items()}


def engine_times(url: str, rules: bool, n: int = 5) -> dict[str, float]:
    """Per query of the set, ms: Prometheus's own evaluation time (``stats=all``: ``execTotalTime``), the median of
    ``n`` asks one after another (no other query beside it; the server still ingests and evaluates its rules)."""
    import urllib.parse
    import urllib.request

    out = {}
    for q in QuerySet(match=parse_match(ALL), rules=rules).queries():
        times = []
        for _ in range(n):
            with urllib.request.urlopen(f"{url}/api/v1/query?" + urllib.parse.urlencode(
                    {"query": q.expr, "stats": "all"}), timeout=60) as resp:
                times.append(json.loads(resp.read())["data"]["stats"]["timings"]["execTotalTime"] * 1000)
        out[q.name] = statistics.median(times)
    return out


def rule_times(prom: Prometheus) -> str:
    """What the rules cost the server at their last evaluation (``/api/v1/rules``): the group's time and each
    rule's, ms: the work it does every evaluation interval beside ingestion and the queries."""
    groups = json.loads(prom._get("/api/v1/rules") or b"{}").get("data", {}).get("groups", [])
    out = []
    for g in groups:
        rules = "  ".join(f"{r['name'].split(':')[1]}:{r['name'].split(':')[-1]} {r['evaluationTime'] * 1000:.0f}"
                          for r in g.get("rules", []))
        out.append(f"rules' last evaluation: group {g.get('evaluationTime', 0) * 1000:.0f} ms every "
                   f"{g.get('interval', '?')} s ({rules})")
    return "\n   ".join(out) or "no rule groups"


def p90(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(len(xs) * 0.9) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=256)
    ap.add_argument("--refreshes", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--warm-up", type=float, default=20.0)
    ap.add_argument("--scrape", default="10s", help="Prometheus scrape interval (10s)")
    ap.add_argument("--rules", action="store_true",
                    help="load deploy/prometheus/neuron-top.recording.yml (evaluated every scrape interval) and "
                    "measure the refreshes with and without them")
    ap.add_argument("--skip-tmux", action="store_true", help="leave out part 3 (CPU in tmux)")
    ap.add_argument("--waited", action="store_true",
                    help="with --rules: also the refreshes that wait for every query they ask (no background)")
    ap.add_argument("--interval", type=float, default=2.0,
                    help="part 2: seconds from one refresh's start to the next, as the view's refresh (2); 0: back "
                    "to back (the slow queries asked in the background then overlap the next refresh)")
    args = ap.parse_args()
    if PROMETHEUS is None:
        print("prometheus is not installed (Debian: apt-get install prometheus)", file=sys.stderr)
        return 2
    print(f"load {load()}; starting {args.hosts} hosts", flush=True)
    hosts, port, samples = start_hosts(args.hosts)
    targets = {f"h{i}": (f"127.0.0.1:{port}", f"/metrics/h{i}",
                         {"fleet": "all", **({"part": "16"} if i < 16 else {})}) for i in range(args.hosts)}
    rule_files = (ROOT / "deploy" / "prometheus" / "neuron-top.recording.yml",) if args.rules else ()
    prom = Prometheus(targets, scrape_interval=args.scrape, rule_files=rule_files, evaluation_interval=args.scrape)
    tmux = Tmux()
    try:
        prom.wait_ready()
        t0 = time.monotonic()
        prom.wait_for("count(instance_info)", lambda r: bool(r) and int(r[0]["value"][1]) == args.hosts,
                      timeout=180)
        # rate() needs two samples in its window: wait for a second scrape of every target
        prom.wait_for("min(count_over_time(instance_info[1m]))", lambda r: bool(r) and float(r[0]["value"][1]) >= 2,
                      timeout=180)
        if args.rules:  # every host's per-host series recorded, the rate twice (it needs two samples)
            prom.wait_for('count(instance_id:execution_status:rate1m{fleet="all",status_type="completed"})',
                          lambda r: bool(r) and int(r[0]["value"][1]) == args.hosts, timeout=300)
        series = json.loads(prom._get("/api/v1/status/tsdb") or b"{}").get("data", {}).get("headStats", {}).get(
            "numSeries", "?")
        print(f"{args.hosts} hosts scraped ({samples} samples per host, {series} series in Prometheus) after "
              f"{time.monotonic() - t0:.0f} s; load {load()}", flush=True)

        modes = ("auto", "off") if args.rules else ("off",)
        print("\n1. queries per refresh")
        for mode in modes:
            for name, (rows, requests, how) in queries_per_refresh(prom.url, mode).items():
                print(f"   {name:9} {rows:4} rows  {requests} queries  ({how})")

        print("\n1b. each query alone: Prometheus's own evaluation time (stats=all), median of 5, ms")
        for mode in modes:
            t = engine_times(prom.url, mode == "auto")
            print(f"   {'rules' if mode == 'auto' else 'raw':5} " + "  ".join(f"{k} {v:.0f}" for k, v in t.items()))
        if args.rules:
            print("   " + rule_times(prom))

        # with the rules, the same refreshes waiting for every query they ask too (before the background), right
        # after them (the machine's load moves: the two compare best side by side)
        runs = [("auto", True), *([("auto", False)] if args.waited else []), ("off", True)] if args.rules \
            else [("off", True)]
        for mode, background in runs:
            how = ("with the recording rules" if mode == "auto" else "raw series") + \
                ("" if background else ", every query waited for (no background)")
            print(f"\n2. one refresh, {how}, in process at {W}x{H} ({args.refreshes} refreshes after 2 to warm up)")
            small = asyncio.run(refresh_times(prom.url, SIXTEEN, args.refreshes, prom.proc.pid, mode, args.interval,
                                              background))
            big = asyncio.run(refresh_times(prom.url, ALL, args.refreshes, prom.proc.pid, mode, args.interval,
                                            background))
            full_n = max(big["asked"])
            steady = "status and utilization waited for, 1-2 slow ones in the background" if background else \
                "status and utilization and 1-2 slow ones, all waited for"
            for kind, full in ((f"steady: {steady}", False),
                               (f"whole (all {full_n:.0f}: the first refresh, and after a new host)", True)):
                print(f"   {kind}:")
                for part in ("queries", "server cpu", "render", "total"):
                    b = [v for v, n in zip(big[part], big["asked"], strict=True) if (n == full_n) == full]
                    sm = [v for v, n in zip(small[part], small["asked"], strict=True) if (n == full_n) == full]
                    if not b or not sm:
                        continue
                    print(f"     {part:10} {args.hosts} hosts median {statistics.median(b):6.1f} ms p90 "
                          f"{p90(b):6.1f} ms | 16 hosts median {statistics.median(sm):6.1f} ms | "
                          f"{statistics.median(b) / statistics.median(sm):.2f}x  ({len(b)} refreshes)")
            print(f"   load {load()}")
        if args.skip_tmux:
            return 0

        print(f"\n3. CPU in tmux at {W}x{H}, default refresh (2 s): {args.seconds:.0f} s after {args.warm_up:.0f} s")
        nt = f"{shlex.quote(PY)} -m neuron_top fleet --prometheus {prom.url} --match"
        tmux.new("all", f"{nt} {shlex.quote(ALL)}")
        tmux.new("sixteen", f"{nt} {shlex.quote(SIXTEEN)}")
        tmux.wait_for("all", f"{args.hosts} hosts:")
        tmux.wait_for("sixteen", "16 hosts:")
        time.sleep(args.warm_up)
        with tempfile.TemporaryDirectory() as tmp:
            m = measure_window(tmux, ["all", "sixteen"], args.seconds, Path(tmp))
        a, s = m["all"], m["sixteen"]
        print(f"   {args.hosts} hosts: {a.cpu_pct:.2f}% of one core, {a.bytes_per_s / 1024:.2f} KB/s to the terminal")
        print(f"   16 hosts:  {s.cpu_pct:.2f}% of one core, {s.bytes_per_s / 1024:.2f} KB/s | "
              f"ratio {a.cpu_pct / max(s.cpu_pct, 1e-9):.2f}x")
        print(f"   load {load()}")
        screen = tmux.screen("all")
        print("   its first lines:\n      " + "\n      ".join(screen.splitlines()[:3]))
    finally:
        tmux.kill()
        prom.stop()
        if hosts.stdin is not None:
            hosts.stdin.close()
        hosts.wait(30)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

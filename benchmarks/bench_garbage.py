"""A flood of input that is not a report: what it costs the reader, and the dashboard, against another tree.

    python benchmarks/bench_garbage.py [--other OTHER_TREE] [--mb 64] [--runs 5] [--rate 8] [--seconds 15]

Two measurements, each of this tree and (with ``--other``, e.g. ``git archive main | tar -x -C /tmp/base``) of
another one, taken in turns in the same run:

* **reader**: ``--mb`` MB of log-like lines (no ``{``, as a wrong ``--command`` or an ssh banner loop prints)
  written into a pipe and read by the dashboard's own collector (``tui.collector.Collector`` over a
  ``StreamSource``), messages counted instead of posted. CPU seconds per MB (the process's own time, the writer
  thread's included: the same for both) and messages that would reach the UI thread. Medians of ``--runs``.
* **dashboard**: ``neuron-top --command PRODUCER`` in tmux at 120x40, the producer writing ``--rate`` MB/s of the
  same lines; CPU % of one core of the dashboard process (the producer is a child, not counted) over
  ``--seconds`` seconds after a 4 s warm-up, both trees side by side in the same seconds; and what its header
  says at the end.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ui import PY, ROOT, Tmux, cpu_seconds, load, pane

LINE = b"2026-01-01T12:00:00Z WARN nrt_infer: model not ready, retrying in 100ms (attempt %06d)\n"

READER = r'''
import os, sys, threading, time, json
sys.path.insert(0, sys.argv[1])
from neuron_top.sources.stream import StreamSource
from neuron_top.tui.collector import Collector
mb = float(sys.argv[2])
line = LINE_REPR
block = b"".join(line % i for i in range(800))
total = int(mb * (1 << 20))
r, w = os.pipe()
def write():
    left = total
    while left > 0:
        n = os.write(w, block[:left])
        left -= n
    os.close(w)
posted = []
threading.Thread(target=write, daemon=True).start()
c = Collector(StreamSource(r, "bench"), posted.append)
t0 = time.process_time()
c.run()
cpu = time.process_time() - t0
print(json.dumps({"cpu_per_mb": cpu / mb, "messages": len(posted), "skipped": c.skipped}))
'''.replace("LINE_REPR", repr(LINE))

PRODUCER = r'''
import os, sys, time
line = LINE_REPR
block = b"".join(line % i for i in range(800))
rate = float(sys.argv[1]) * (1 << 20)
t0 = time.monotonic(); sent = 0
while True:
    try:
        os.write(1, block)
    except BrokenPipeError:
        break
    sent += len(block)
    ahead = sent / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
'''.replace("LINE_REPR", repr(LINE))


def reader_run(tree: Path, mb: float) -> dict[str, float]:
    out = subprocess.run([PY, "-c", READER, str(tree), str(mb)], capture_output=True, text=True, check=True,
                         cwd=tree, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def dashboards(trees: dict[str, Path], rate: float, seconds: float, tmp: Path) -> dict[str, tuple[float, str]]:
    """CPU % of each tree's dashboard under the flood, and its header's first line at the end."""
    producer = tmp / "producer.py"
    producer.write_text(PRODUCER)
    tmux = Tmux()
    try:
        tmux.new("keep", "sleep 86400")
        for name, tree in trees.items():
            cmd = shlex.quote(f"{PY} {producer} {rate}")
            line = (f"unset COLUMNS LINES; cd {shlex.quote(str(tree))} && "
                    f"exec {PY} -m neuron_top --command {cmd}")
            tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-e", "TERM=xterm-256color", line)
        time.sleep(4.0)
        pids = {n: tmux.pid(n) for n in trees}
        start = {n: cpu_seconds(p) for n, p in pids.items()}
        t0 = time.monotonic()
        time.sleep(seconds)
        dt = time.monotonic() - t0
        cpu = {n: (cpu_seconds(p) - start[n]) / dt * 100 for n, p in pids.items()}
        return {n: (cpu[n], tmux("capture-pane", "-p", "-t", pane(n), check=False).split("\n", 1)[0].strip())
                for n in trees}
    finally:
        tmux.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--other", type=Path, help="another checkout to measure beside this one")
    ap.add_argument("--mb", type=float, default=64.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", type=float, default=8.0, help="MB/s of garbage into the dashboard")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--no-tui", action="store_true", help="only the reader measurement")
    args = ap.parse_args()
    trees = {"this": ROOT}
    if args.other is not None:
        trees["other"] = args.other.resolve()
    print(f"load {load()}; {args.mb:g} MB of garbage lines per reader run, {args.runs} runs in turns")
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():
            runs[name].append(reader_run(tree, args.mb))
    med = {n: statistics.median(r["cpu_per_mb"] for r in rs) for n, rs in runs.items()}
    for name, rs in runs.items():
        print(f"reader {name:>5}: median {med[name] * 1e3:7.2f} ms CPU per MB "
              f"({args.mb / (med[name] * args.mb):6.1f} MB/s of one core), "
              f"{statistics.median(r['messages'] for r in rs):.0f} messages to the UI, "
              f"{rs[0]['skipped']:.0f} lines skipped")
    if "other" in med:
        print(f"reader: this tree costs {med['this'] / med['other']:.3f}x the other's CPU per MB")
    if args.no_tui:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        got = dashboards(trees, args.rate, args.seconds, Path(tmp))
    for name, (cpu, header) in got.items():
        print(f"dashboard {name:>5}: {cpu:6.1f}% of one core at {args.rate:g} MB/s of garbage; header: {header}")
    if "other" in got:
        print(f"dashboard: this tree costs {got['this'][0] / max(got['other'][0], 1e-9):.3f}x the other's CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())

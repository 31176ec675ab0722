"""Memory touched by one dashboard update when nothing of it is in the caches: cache lines fetched from memory, as
counted by valgrind's cache simulator.

    python benchmarks/bench_cold.py [--updates 12] [--other OTHER_TREE] [--phases]

Why: the running dashboard does its work once a second, and by then its code and data have left the CPU's caches.
In the tmux benchmark the app's thread spends more CPU time on an update than the same update takes in a tight
loop, and on this shared machine, when other tenants are busy, the whole app costs up to twice as much while
``top`` grows far less in the same minutes. What makes an update cost more when the caches are
cold is how much memory it touches; that is what this counts, and unlike timings it does not move with the
machine.

What is counted: the trn2.48xlarge demo (seed 7) at 200x60, in-process (``App.run_test``), fed 60 reports, then
``--updates`` more, each as the app handles a report: decode of the raw JSON and the snapshot, ``accept_snapshot``
(history, every panel's build and cell diff) and the flush of changed cells rendered to the bytes a 256-colour
terminal would get. Before each update a 24 MB buffer is read end to end, which evicts everything from the
simulated caches (32 KB L1s, 8 MB last level, given explicitly: valgrind's own follow the host, and this VM
reports a 384 MB L3); then the report's bytes are copied, so that they are in the caches as in the app, which
decodes them as it reads them from the pipe. The same run with the sweeps and copies but without the updates is
subtracted. Per update it prints the instructions, the first-level misses (instruction and data) and the
last-level misses: the lines fetched from memory, 64 bytes each. Not counted: Textual's event loop, the
simulator, the writer thread (see ``bench_ui.py``).
``--phases`` also counts the decode and snapshot alone, and with the history push (which first reads most of the
snapshot), to tell where the lines go.

``--other`` counts another checkout too (``git worktree add /tmp/base <commit>``) and prints the ratios.
Needs valgrind (``apt-get install valgrind``); ~1 minute per tree on two cores, ~2 more with ``--phases``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent import futures
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ir import PRELUDE, ROOT, H, W  # benchmarks/bench_ir.py, beside this script

CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]
SWEEP = 24 << 20
"""Bytes read before each update: three times the simulated last level, so none of the update's lines survive."""

CHILD = PRELUDE + '''
from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot
from neuron_top.sources.demo import generate

sweep = bytearray(b"\\xff") * {sweep}  # written, so every page is its own (not the shared zero page)


def snapshot(i, data):
    report, problems = decode_report(data)
    return Snapshot(report, 1000.0 + i, i + 1, problems)


async def main(phase, updates):
    raw = generate("trn2.48xlarge", 7, 60 + updates)
    app = make_app()
    async with app.run_test(size=({w}, {h})) as pilot:
        await feed(pilot, [snapshot(i, d) for i, d in enumerate(raw[:60])])
        await pilot.pause()
        gc.collect()  # every run starts its updates with an empty young generation: collections fall alike
        kept = []
        for k in range(updates):
            sweep.find(1)  # reads every line of the buffer (no byte is 1): the caches now hold nothing else
            data = bytes(bytearray(raw[60 + k]))  # just read from the pipe, as in the app: a new object, in cache
            if phase >= 1:
                snap = snapshot(60 + k, data)
                kept = [*kept[-1:], snap]  # the app keeps the last two (latest and prev)
            if phase == 2:
                app.history.push(snap)
            if phase == 3:
                app.accept_snapshot(snap)
                paint.flush(app)  # what the event loop runs next
        await pilot.pause()


asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
'''

FIELDS = {"I refs": "instructions", "I1 misses": "I1 misses", "D1 misses": "D1 misses", "LLi misses": "LLi misses",
          "LLd misses": "LLd misses", "LL misses": "LL misses"}
"""valgrind's summary line (spaces stand for any run of them) -> the name printed here."""


PHASES = {0: "sweeps only", 1: "decode + snapshot", 2: "decode + snapshot + history push", 3: "the whole update"}
"""What the child does after each sweep, by ``phase``."""


def counts(tree: Path, phase: int, updates: int) -> dict[str, int]:
    """The totals of one run of the child program over ``tree``: ``updates`` sweeps, each followed by ``phase``."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *CACHES, "--cachegrind-out-file=/dev/null",
         sys.executable, "-c", CHILD.format(tree=str(tree), w=W, h=H, sweep=SWEEP), str(phase), str(updates)],
        cwd=tree, env=env, capture_output=True, text=True, check=False)
    out: dict[str, int] = {}
    for label, name in FIELDS.items():
        pattern = r"\s+".join(map(re.escape, label.split()))
        found = re.search(rf"^==\d+== {pattern}:\s+([\d,]+)", proc.stderr, re.MULTILINE)
        if found is not None:
            out[name] = int(found.group(1).replace(",", ""))
    if proc.returncode != 0 or len(out) != len(FIELDS):
        sys.exit(f"valgrind run failed in {tree} ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return out


def per_update(tree: Path, updates: int, phase: int = 3) -> dict[str, float]:
    """Counts per update of ``phase``, net of the sweeps."""
    with futures.ThreadPoolExecutor(2) as pool:  # valgrind runs on one core: two at a time
        done, sweeps_only = pool.map(lambda p: counts(tree, p, updates), (phase, 0))
    return {k: (done[k] - sweeps_only[k]) / updates for k in FIELDS.values()}


def show(name: str, c: dict[str, float]) -> None:
    print(f"{name}: {c['instructions'] / 1e6:.2f} M instructions, {c['I1 misses']:,.0f} I1 misses, "
          f"{c['D1 misses']:,.0f} D1 misses, {c['LL misses']:,.0f} LL misses ({c['LLi misses']:,.0f} code, "
          f"{c['LLd misses']:,.0f} data; {c['LL misses'] * 64 / 1024:,.0f} KB from memory) per update")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=12)
    ap.add_argument("--other", type=Path, default=None, help="another checkout to count the same way")
    ap.add_argument("--phases", action="store_true",
                    help="also count the decode alone and the decode with the history push (this tree only)")
    ns = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if ns.phases:
        for phase in (1, 2):
            show(f"{PHASES[phase]} ({ROOT})", per_update(ROOT, ns.updates, phase))
    this = per_update(ROOT, ns.updates)
    show(f"this tree ({ROOT})", this)
    if ns.other is not None:
        other = per_update(ns.other.resolve(), ns.updates)
        show(f"other tree ({ns.other})", other)
        print("this / other: " + ", ".join(f"{k} {this[k] / other[k]:.3f}" for k in FIELDS.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

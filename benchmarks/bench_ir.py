"""Instructions per dashboard update, counted by valgrind: a measure of the code's cost that this machine's noise
cannot move.

    python benchmarks/bench_ir.py [--updates 40] [--other OTHER_TREE]

Why: this shared 2-core machine changes speed within the hour, and in-process timings of one update differ by
more from run to run than most single optimisations save. ``valgrind --tool=callgrind`` counts
the instructions the interpreter executes instead; even with ``PYTHONHASHSEED=0`` two runs of the same code can
differ by a few percent, so compare the two trees of one run (``--other``), not counts from different runs.

What is counted: the in-process dashboard (``App.run_test`` at 200x60, the trn2.48xlarge demo, seed 7) is fed 60
reports (a full history, past the demo's start-up), then ``--updates`` more, each handled synchronously as the
event loop would: ``accept_snapshot`` (history, every panel's build and cell diff) and the flush of changed cells,
rendered to the bytes a 256-colour terminal would get. The same run with no extra updates is subtracted, which
leaves the instructions per update. Not counted: Textual's event loop, the collector thread, the terminal
writer thread (``bench_ui.py`` measures all of that in a real terminal, in CPU time).

``--other`` counts another checkout too (``git worktree add /tmp/base <commit>``) and prints the ratio.
Needs valgrind (``apt-get install valgrind``); ~2 minutes per tree.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
W, H = 200, 60

PRELUDE = '''\
import asyncio, gc, io, os, sys
sys.path.insert(0, {tree!r})
from rich.console import Console
from textual._compositor import CompositorUpdate
from textual.app import App
# A checkout from before the layout of b9fe0a7 has the module elsewhere. Not try/except ImportError: the editable
# install of this tree would answer "neuron_top.tui" for the other one, and its flush would find nothing to send.
if os.path.isdir(os.path.join({tree!r}, "neuron_top", "tui")):
    from neuron_top.tui.render import paint
else:
    from neuron_top.widgets import paint
from tests.helpers import feed, make_app

console = Console(force_terminal=True, color_system="256", width={w}, height={h}, file=io.StringIO())


def render(self, screen, renderable):
    if isinstance(renderable, CompositorUpdate) and not self._batch_count:
        renderable.render_segments(console)  # what the driver would write; the headless driver skips it


App._display = render
'''
"""The start of a child program that runs the dashboard in-process over the checkout ``tree`` at ``w`` x ``h`` and
renders each frame to the bytes a 256-colour terminal would get (also used by ``bench_cold.py``)."""

CHILD = PRELUDE + '''
from tests.helpers import demo_snapshots


async def main(n, made):
    snaps = demo_snapshots("trn2.48xlarge", 7, made)  # as many in both runs: making them is not an update
    app = make_app()
    async with app.run_test(size=({w}, {h})) as pilot:
        await feed(pilot, snaps[:60])
        await pilot.pause()
        gc.collect()  # every run starts its updates with an empty young generation: collections fall alike
        for s in snaps[60:60 + n]:
            app.accept_snapshot(s)
            paint.flush(app)  # what the event loop runs next
        await pilot.pause()


asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
'''


def instructions(tree: Path, updates: int, made: int) -> int:
    """Instructions of one run of the child program over ``tree`` with ``updates`` updates after the warm-up
    (``made`` demo reports decoded in either case)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
         CHILD.format(tree=str(tree), w=W, h=H), str(updates), str(made)],
        cwd=tree, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        sys.exit(f"valgrind run failed in {tree} ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return int(found.group(1))


def per_update(tree: Path, updates: int) -> float:
    made = 60 + updates
    return (instructions(tree, updates, made) - instructions(tree, 0, made)) / updates


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=40)
    ap.add_argument("--other", type=Path, default=None, help="another checkout to count the same way")
    ns = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    this = per_update(ROOT, ns.updates)
    print(f"this tree ({ROOT}): {this / 1e6:.2f} M instructions per update ({ns.updates} updates, trn2 demo, {W}x{H})")
    if ns.other is not None:
        other = per_update(ns.other.resolve(), ns.updates)
        print(f"other tree ({ns.other}): {other / 1e6:.2f} M instructions per update")
        print(f"this / other: {this / other:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

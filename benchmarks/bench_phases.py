"""Where one dashboard update's time goes, phase by phase, in process: a guide for the per-update work.

    python benchmarks/bench_phases.py [--updates 60] [--sizes 120x40,200x60] [--profile N] [--other TREE]

The trn2.48xlarge demo (seed 7) fed to the app as the collector feeds it (``bench_ui.render_times``'s way: 40
reports first, then ``--updates`` timed ones, each posted as the collector's ``ReportArrived`` message, every frame rendered to a 256-colour string as the real driver would
write it). Each phase's time is its own, net of the phases it calls (a panel's build inside the screen's layout
counts as the panel's), summed over the updates and given per update, medians of ``--repeat`` passes:

* decode + snapshot: ``decode_report`` and ``Snapshot`` of each report's bytes (on the collector thread in the app);
* session: ``Session.accept`` (history push); view: ``current_view``;
* each panel's build (``Panel._lines``: content, build, steady height), the header and the app tabs;
* diff: ``changed_lines``; paint + flush: the direct repaint of changed cells (``paint``, ``paint.flush``);
* Textual: screen refresh (layout, compositor: ``Screen._on_timer_update`` and ``_refresh_layout``);
* write: the engine's writer (``RenderEngine.render``: the bytes);
* other: the rest of the event-loop thread's CPU from the report's message until ``SETTLE`` seconds later
  (message dispatch, reactives, timers, asyncio).

``--profile N`` prints cProfile's top N functions by own time over one pass. ``--other TREE`` runs the same in
another checkout (a subprocess with its own imports), alternating passes, for a same-run comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ui import terminal_bytes  # it puts its own tree first on sys.path: imported before ROOT goes first

ROOT = Path(os.environ.get("BENCH_PHASES_ROOT", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(ROOT))

Acc = dict[str, float]
SETTLE = 0.12
"""Seconds the app runs after each report is posted: more than Textual's screen update interval (1/60 s) and
the direct flush, so the update is done; an idle app uses ~no CPU in it (no timer ticks while reports come)."""


class Phases:
    """Own CPU time (of the event-loop thread) per phase: a stack of running phases, each charged its time minus
    its callees' phases."""

    def __init__(self) -> None:
        self.own: Acc = defaultdict(float)
        self._stack: list[list[Any]] = []
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, attr: str, name: str | Callable[[Any], str]) -> None:
        original = getattr(owner, attr)
        if isinstance(original, property):  # a property's setter (``view``)
            holder = type("Setter", (), {"fset": original.fset})
            self.wrap(holder, "fset", name)
            setattr(owner, attr, property(original.fget, holder.fset, original.fdel, original.__doc__))
            self._undo.append(lambda: setattr(owner, attr, original))
            return
        stack, own, clock = self._stack, self.own, time.thread_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            label = name if isinstance(name, str) else name(args[0])
            frame: list[Any] = [label, 0.0]
            stack.append(frame)
            t = clock()
            try:
                return original(*args, **kwargs)
            finally:
                dt = clock() - t
                stack.pop()
                own[label] += dt - frame[1]
                if stack:
                    stack[-1][1] += dt

        setattr(owner, attr, timed)
        self._undo.append(lambda: setattr(owner, attr, original))

    def undo(self) -> None:
        for f in reversed(self._undo):
            f()


def instrument(p: Phases) -> None:
    from textual.screen import Screen

    import neuron_top.tui.widgets.panel as panel_mod
    from neuron_top.session import Session
    from neuron_top.tui.app import NeuronTopApp
    from neuron_top.tui.render import paint
    from neuron_top.tui.render.engine import RenderEngine
    from neuron_top.tui.screens.dashboard import DashboardScreen
    from neuron_top.tui.widgets.header import HeaderBar
    from neuron_top.tui.widgets.panel import Panel
    from neuron_top.tui.widgets.tabs import AppTabs

    p.wrap(Session, "accept", "session (history push)")
    p.wrap(NeuronTopApp, "current_view", "view")
    p.wrap(Panel, "_lines", lambda self: f"panel {type(self).__name__}")
    p.wrap(panel_mod, "changed_lines", "diff (changed_lines)")
    p.wrap(panel_mod, "paint", "paint + flush")
    p.wrap(paint, "flush", "paint + flush")
    p.wrap(HeaderBar, "show", "header")
    for attr in ("watch_apps", "watch_pods", "watch_selected", "render_line", "render"):
        if attr in AppTabs.__dict__:
            p.wrap(AppTabs, attr, "app tabs")
    p.wrap(Screen, "_on_timer_update", "Textual: screen refresh (compositor)")
    p.wrap(Screen, "_refresh_layout", "Textual: layout")
    p.wrap(RenderEngine, "render", "write (engine writer)")
    # the glue between them, each its own time: what is left of "other" is Textual's and asyncio's
    p.wrap(NeuronTopApp, "on_report_arrived", "glue: report message, session status, header call")
    p.wrap(NeuronTopApp, "publish", "glue: publish (tabs, pods, header call)")
    p.wrap(NeuronTopApp, "_update_header", "glue: header lookup and session.shown")
    p.wrap(DashboardScreen, "view", "glue: screen and panel view setters, widget sizes")
    p.wrap(Panel, "_view_changed", "glue: screen and panel view setters, widget sizes")


async def one_pass(size: tuple[int, int], updates: int, profile: int) -> tuple[Acc, str]:
    import neuron_top
    from neuron_top.decode import decode_report
    from neuron_top.snapshot import Snapshot
    from neuron_top.sources.demo import generate
    from neuron_top.tui.messages import ReportArrived
    from tests.helpers import T0, feed, make_app

    # --other compared this tree with itself until bench_ui was imported before ROOT went first on sys.path
    assert Path(neuron_top.__file__).resolve().is_relative_to(ROOT.resolve()), (neuron_top.__file__, ROOT)
    raw = list(generate("trn2.48xlarge", 7, 40 + updates))
    snaps = []
    t = time.perf_counter()
    for i, data in enumerate(raw):
        report, problems = decode_report(data)
        snaps.append(Snapshot(report, T0 + i, i + 1, problems))
    decode = (time.perf_counter() - t) / len(raw)
    p = Phases()
    instrument(p)
    gc_started = [0.0]

    def gc_timer(phase: str, info: dict[str, int]) -> None:  # collections: inside whichever phase allocated
        if phase == "start":
            gc_started[0] = time.thread_time()
        else:
            p.own[f"gc (generation {info['generation']}, inside the phases above)"] += time.thread_time() - gc_started[0]

    gc.callbacks.append(gc_timer)
    prof = cProfile.Profile() if profile else None
    cpu = 0.0
    try:
        app = make_app()
        with terminal_bytes(*size):
            async with app.run_test(size=size) as pilot:
                await feed(pilot, snaps[:40])
                await pilot.pause()
                await asyncio.sleep(SETTLE)
                p.own.clear()
                for s in snaps[40:]:
                    if prof:
                        prof.enable()
                    c = time.thread_time()
                    app.post_message(ReportArrived(s))  # as the collector thread posts it
                    await asyncio.sleep(SETTLE)  # not pilot.pause(): it posts a message to every widget
                    cpu += time.thread_time() - c
                    if prof:
                        prof.disable()
    finally:
        p.undo()
        gc.callbacks.remove(gc_timer)
    out = {k: v / updates * 1000 for k, v in p.own.items()}
    out["decode + snapshot (collector thread)"] = decode * 1000
    total_cpu = cpu / updates * 1000
    out["other (event loop, messages, reactives)"] = total_cpu - sum(
        v for k, v in out.items() if not k.startswith(("decode", "gc")))
    out["TOTAL UI thread CPU"] = total_cpu
    text = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(profile)
        text = buf.getvalue()
    return out, text


def child(size: str, updates: int, passes: int) -> None:
    """Run in a subprocess (``--child``): print one JSON line of per-pass phase figures."""
    w, h = (int(n) for n in size.split("x"))
    res = [asyncio.run(one_pass((w, h), updates, 0))[0] for _ in range(passes)]
    print(json.dumps(res))


def run_tree(tree: Path, size: str, updates: int) -> Acc:
    env = {**os.environ, "BENCH_PHASES_ROOT": str(tree), "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, "--child", size, "--updates", str(updates)], env=env,
                         capture_output=True, text=True, check=True, cwd=tree).stdout
    return json.loads(out.strip().splitlines()[-1])[0]  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=60)
    ap.add_argument("--sizes", default="120x40,200x60")
    ap.add_argument("--repeat", type=int, default=3, help="passes per size (and tree); medians (3)")
    ap.add_argument("--profile", type=int, default=0, help="print cProfile's top N functions (one pass)")
    ap.add_argument("--other", type=Path, default=None, help="another checkout to compare, alternating passes")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.child:
        child(ns.child, ns.updates, 1)
        return 0
    trees = {"this": ROOT} if ns.other is None else {"other": ns.other.resolve(), "this": ROOT}
    print(f"bench_phases: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {ns.updates} updates of the "
          f"trn2 demo, ms per update (medians of {ns.repeat} passes); load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for size in ns.sizes.split(","):
        runs: dict[str, list[Acc]] = {t: [] for t in trees}
        for _ in range(ns.repeat):
            for name, tree in trees.items():
                runs[name].append(run_tree(tree, size, ns.updates))
        keys = sorted({k for rs in runs.values() for r in rs for k in r},
                      key=lambda k: (k.startswith("TOTAL"), -statistics.median(r.get(k, 0) for r in runs["this"])))
        print(f"\n{size}:  " + "  ".join(f"{t:>8}" for t in trees) + ("   this/other" if len(trees) > 1 else ""))
        for k in keys:
            meds = {t: statistics.median(r.get(k, 0.0) for r in runs[t]) for t in trees}
            ratio = f"   {meds['this'] / meds['other']:.2f}x" if len(trees) > 1 and meds["other"] > 0.005 else ""
            print(f"  {k:45} " + "  ".join(f"{meds[t]:8.3f}" for t in trees) + ratio)
        if ns.profile:
            w, h = (int(n) for n in size.split("x"))
            print(asyncio.run(one_pass((w, h), ns.updates, ns.profile))[1])
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

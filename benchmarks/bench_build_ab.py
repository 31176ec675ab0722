"""Same-process A/B of the drawing path against another checkout: a panel's build, the cell diff, the writer.

    python benchmarks/bench_build_ab.py OTHER [--size 120x40] [--panels CoreGrid,AppsPanel] [--rounds 30]

Why: on a shared 2-vCPU host ``bench_phases.py --other`` (two processes, one after the other) drifts by 5-15%
between passes, so a change worth 10-20% of one panel's build does not show. Here one pass of the app over the
trn2 demo (seed 7, ``bench_phases``'s updates) captures what the drawing path was given: each panel's views, the
lines each diff compared, the updates the writer wrote. Then OTHER's module (loaded from its tree under another
name) and this tree's run on the very same objects, in random order, ``--rounds`` times with the garbage
collector off: the medians and their ratio. Each pair's output is asserted equal first.

What is compared from OTHER: the panel's own module (``tui/widgets/<module>.py``; with ``--with`` more of its
modules, e.g. ``output/cells.py`` for the core grid), ``tui/render/spans.py`` and ``tui/render/frame_writer.py``.
Everything else is this tree's. The figures are per report, outside the app's cache traffic: about half what
``bench_phases.py`` reads for the same step in the app.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PANEL_MODULES = {"CoreGrid": "cores", "AppsPanel": "apps", "VcpuPanel": "vcpu", "MemorySummary": "memory",
                 "EccPanel": "ecc", "LatencyPanel": "latency", "ExecPanel": "executions",
                 "CoreHistory": "core_history"}


def load(path: Path, name: str) -> ModuleType:
    """The module at ``path`` under the name ``name`` (beside this tree's own)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def capture(size: tuple[int, int], panels: set[str]) -> tuple[dict[str, list[Any]], list[Any], list[Any], Any]:
    """One pass of the app: per panel its (panel, view, width) builds, the diffs' (before, after), the writer's
    (update, console); and the app (the panels read it while building)."""
    import bench_phases

    import neuron_top.tui.widgets.panel as panel_mod
    from neuron_top.tui.render import engine
    from neuron_top.tui.widgets.panel import Panel

    builds: dict[str, list[Any]] = {p: [] for p in panels}
    diffs: list[Any] = []
    writes: list[Any] = []
    app: list[Any] = [None]
    lines, changed, write = Panel._lines, panel_mod.changed_lines, engine.write_chops

    def lines_kept(self: Panel[Any], width: int) -> Any:
        if type(self).__name__ in builds and self.view is not None:
            builds[type(self).__name__].append((self, self.view, width))
            app[0] = self.app
        return lines(self, width)

    def changed_kept(before: Any, after: Any) -> Any:
        diffs.append((list(before), list(after)))
        return changed(before, after)

    def write_kept(update: Any, console: Any, shadow: Any = None) -> Any:
        writes.append((update, console))
        return write(update, console, shadow)

    Panel._lines, panel_mod.changed_lines, engine.write_chops = lines_kept, changed_kept, write_kept  # type: ignore[method-assign,assignment]
    try:
        asyncio.run(bench_phases.one_pass(size, 60, 0))
    finally:
        Panel._lines, panel_mod.changed_lines, engine.write_chops = lines, changed, write  # type: ignore[method-assign]
    return builds, diffs[-len(diffs) * 60 // 100:], writes[-60:], app[0]


def compare(label: str, jobs: dict[str, Callable[[], object]], rounds: int, per: int) -> None:
    """Run each job ``rounds`` times in random order; print the medians (ms per report) and this/other."""
    times: dict[str, list[float]] = {k: [] for k in jobs}
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            order = list(jobs.items())
            random.shuffle(order)
            for name, job in order:
                t = time.thread_time()
                job()
                times[name].append((time.thread_time() - t) * 1000 / per)
    finally:
        gc.enable()
    other, this = statistics.median(times["other"]), statistics.median(times["this"])
    print(f"  {label:28} other {other:7.3f}  this {this:7.3f} ms per report   this/other {this / other:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of neuron-top")
    ap.add_argument("--size", default="120x40")
    ap.add_argument("--panels", default="CoreGrid,AppsPanel,VcpuPanel")
    ap.add_argument("--with", dest="extra", default="output/cells.py:core_cells",
                    help="OTHER's module:name pairs its panel modules use instead of this tree's (comma-separated)")
    ap.add_argument("--rounds", type=int, default=30)
    ns = ap.parse_args()
    other = ns.other.resolve()
    w, h = (int(n) for n in ns.size.split("x"))
    panels = [p for p in ns.panels.split(",") if p]
    unknown = [p for p in panels if p not in PANEL_MODULES]
    if unknown:
        ap.error(f"unknown panel {', '.join(unknown)}: one of {', '.join(PANEL_MODULES)}")
    builds, diffs, writes, app = capture((w, h), set(panels))
    from textual._context import active_app

    from neuron_top.tui.render import frame_writer, spans
    from neuron_top.tui.render.light import LightStrip

    active_app.set(app)  # a panel reads its app (theme, focus) while building
    extras = {}
    for pair in filter(None, ns.extra.split(",")):
        path, name = pair.split(":")
        extras[name] = getattr(load(other / "neuron_top" / path, f"other_{Path(path).stem}"), name)
    print(f"bench_build_ab: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {ns.size}, trn2 demo, "
          f"this tree against {other} (medians of {ns.rounds} rounds, same process)")
    for name in panels:
        module = PANEL_MODULES[name]
        ours = importlib.import_module(f"neuron_top.tui.widgets.{module}")
        theirs = load(other / "neuron_top" / "tui" / "widgets" / f"{module}.py", f"other_{module}")
        for attr, value in extras.items():
            if hasattr(theirs, attr):
                setattr(theirs, attr, value)
        views = builds[name][-60:]
        if not views:
            print(f"  {name}: not drawn at this size")
            continue

        def run(build: Callable[..., Any], views: list[Any] = views) -> list[list[Any]]:
            out = []
            for panel, view, width in views:
                panel._view, panel._memo_next = view, {}
                out.append([list(s) for s in build(panel, view, width)])
                panel._memo = panel._memo_next
            return out

        mine, theirs_build = getattr(ours, name).build, getattr(theirs, name).build
        assert run(theirs_build) == run(mine), f"{name}: the two trees draw different lines"
        compare(f"{name}.build", {"other": partial(run, theirs_build), "this": partial(run, mine)}, ns.rounds,
                len(views))
    other_spans = load(other / "neuron_top" / "tui" / "render" / "spans.py", "other_spans")
    other_writer = load(other / "neuron_top" / "tui" / "render" / "frame_writer.py", "other_frame_writer")

    def diff(module: ModuleType) -> list[Any]:
        out = []
        for before, after in diffs:
            for strip in after:  # each new line is taken apart afresh, as in the app
                if type(strip) is LightStrip:
                    strip._pieces = None
            out.append(module.changed_lines(before, after))
        return out

    def write(module: ModuleType) -> list[str]:
        return [module.write_chops(update, console, None) for update, console in writes]

    assert diff(other_spans) == diff(spans), "the two diffs find different cells"
    assert write(other_writer) == write(frame_writer), "the two writers send different bytes"
    compare("diff (changed_lines)", {"other": lambda: diff(other_spans), "this": lambda: diff(spans)},
            ns.rounds, 60)
    compare("writer (write_chops)", {"other": lambda: write(other_writer), "this": lambda: write(frame_writer)},
            ns.rounds, 60)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long each panel takes to build its strips for one report (the per-report cost; cached frames are free).

Data: the 32-runtime trn1n.32xlarge report in tests/fixtures/neuron-monitor (every app on the "all" tab), at 200 columns, the
memory tree fully expanded. Baseline, measured in the same run: ``once.text`` for the same snapshot, the plain
text of every panel. Prints, per panel, the median of N "build and draw one screenful (60 rows)" and its ratio
to the baseline; then, for the tree, what a cursor move and a new report with the same numbers cost.

    python benchmarks/panels.py [N]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from neuron_top.output import text as once  # noqa: E402
from neuron_top.tui.widgets.app_cores import AppCoresPanel  # noqa: E402
from neuron_top.tui.widgets.memory import MemoryTree  # noqa: E402
from neuron_top.tui.widgets.models import ModelsPanel  # noqa: E402
from neuron_top.tui.widgets.panel import Panel  # noqa: E402
from tests.panel_app import PanelApp, all_panels  # noqa: E402
from tests.panel_views import fixture_view  # noqa: E402


def median_ms(fn: Callable[[], None], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


async def main(n: int) -> None:
    view = fixture_view("trn1n_32xlarge_32runtimes_cwagent_test.json")
    src = once.SourceInfo(name="bench", state="live")
    base = median_ms(lambda: once.text(view.snapshot, src), n)
    print(f"baseline once.text: {base:.2f} ms (median of {n})")
    app = PanelApp(view, lambda: [*all_panels(), AppCoresPanel(), ModelsPanel()])
    async with app.run_test(size=(200, 50)) as pilot:
        app.query_one("#tree").action_toggle_all()
        await pilot.pause()
        for p in app.query(Panel):
            width = p.size.width
            rows = len(p.build(view, width))

            def frame(p: Panel = p, width: int = width) -> None:
                lines = p.build(view, width)
                for i in range(min(60, len(lines))):
                    lines[i]

            ms = median_ms(frame, n)
            print(f"{type(p).__name__:14} {rows:5d} rows  {ms:7.2f} ms  {ms / base:6.2f}x baseline")
        tree = app.query_one(MemoryTree)
        tree.focus()
        await pilot.pause()

        def move() -> None:
            tree.action_cursor(1)
            lines = tree._lines(tree.size.width)
            for i in range(min(60, len(lines))):
                lines[i]

        def tick() -> None:
            tree.view = tree.view.with_(tick=tree.view.tick + 1)  # same numbers, a new report
            lines = tree._lines(tree.size.width)
            for i in range(min(60, len(lines))):
                lines[i]

        for name, fn in (("tree cursor move", move), ("tree new report", tick)):
            ms = median_ms(fn, n)
            print(f"{name:20}        {ms:7.2f} ms  {ms / base:6.2f}x baseline")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))

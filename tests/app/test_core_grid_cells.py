"""The core grid's per-core cells: the quick loop for plain utilization cells (``CoreGrid._plain_cells``) draws
exactly what the general path (``CoreCells.core`` + ``CoreGrid._cell``) draws, on the values at every edge."""

from __future__ import annotations

import json

import pytest
from textual.app import App, ComposeResult

from neuron_top.decode import decode_report
from neuron_top.history import History
from neuron_top.output.cells import CoreCells
from neuron_top.snapshot import Snapshot
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.view import View

# Below, on and above every band edge and bar eighth; the clamp at 100; the sanity limit; absurd values; nulls;
# and cores missing from the report (indices 14 and 15 of 16 on two devices).
UTILS: list[float | None] = [0.0, 0.4, 49.99, 50.0, 79.96, 80.0, 99.6, 100.0, 104.5, 110.0, 110.01, -0.01,
                             None, 1e15]


def _snap() -> Snapshot:
    doc = {"neuron_hardware_info": {"neuron_device_count": 2, "neuroncore_per_device_count": 8},
           "neuron_runtime_data": [{"pid": 7, "neuron_runtime_tag": "x", "report": {"neuroncore_counters": {
               "period": 1.0, "neuroncores_in_use": {str(i): {"neuroncore_utilization": u}
                                                     for i, u in enumerate(UTILS)}}}}]}
    report, problems = decode_report(json.dumps(doc).encode())
    return Snapshot(report, 0.0, 1, problems)


class GridApp(App[None]):
    def compose(self) -> ComposeResult:
        yield CoreGrid(id="cores")


def _lines(grid: CoreGrid, view: View, width: int) -> list[list[tuple[str, object]]]:
    grid._memo_next = {}
    return [[(s.text, s.style) for s in strip] for strip in grid.build(view, width)]


@pytest.mark.parametrize("precise", [False, True])
@pytest.mark.parametrize("width", [60, 120, 200])
async def test_the_quick_cells_draw_what_the_general_path_draws(width: int, precise: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _snap()
    view = View(snap, History(), 1, precise=precise)
    app = GridApp()
    async with app.run_test(size=(width, 20)):
        grid = app.query_one(CoreGrid)
        grid.focus()
        for cursor in [(0, 3), (1, 5), (0, -1)]:  # the cursor on a core of each device, and on a label
            grid.cursor = cursor
            quick = _lines(grid, view, width)
            assert CoreCells(snap, snap.all).plain_util() is not None  # the quick loop drew these
            with monkeypatch.context() as m:
                m.setattr(CoreCells, "plain_util", lambda self: None)
                general = _lines(grid, view, width)
            assert quick == general
            text = "\n".join("".join(t for t, _ in line) for line in quick)
            assert "bad!" in text and "-]" in text

"""Absurd utilization (negative, 1e15) is flagged in the grid and left out of averages: it printed as
"avg -10.6%" over "[  0%]" cells, clipped numbers that read as real."""

from __future__ import annotations

import json

from neuron_top.decode import decode_report
from neuron_top.fmt import BAD_CELL, pct_cell
from neuron_top.output.cells import core_cells
from neuron_top.output.text import SourceInfo, text
from neuron_top.snapshot import Snapshot


def _snap(utils: list[float]) -> Snapshot:
    doc = {"neuron_hardware_info": {"neuron_device_count": 1, "neuroncore_per_device_count": len(utils)},
           "neuron_runtime_data": [{"pid": 7, "neuron_runtime_tag": "x", "report": {"neuroncore_counters": {
               "period": 1.0, "neuroncores_in_use": {str(i): {"neuroncore_utilization": u}
                                                     for i, u in enumerate(utils)}}}}]}
    report, problems = decode_report(json.dumps(doc).encode())
    return Snapshot(report, 0.0, 1, problems)


def test_absurd_cells_are_flagged_and_not_averaged() -> None:
    snap = _snap([-52.0, 1e15, 40.0, 60.0])
    cells = core_cells(snap, snap.all)
    assert [cells.core(i)[0][0] for i in range(4)] == [BAD_CELL, BAD_CELL, " 40%", " 60%"]
    assert cells.core(0)[0][1] is None  # no bar for a bad value
    assert snap.all.core_stats.util_avg == 50.0
    assert "avg 50.0%" in cells.title
    out = text(snap, SourceInfo("t", "live"))
    assert "[bad!]" in out and "-52" not in out and "999" not in out


def test_a_little_over_100_is_a_measurement() -> None:
    assert pct_cell(100.4) == "100%" and pct_cell(None) == "   -" and pct_cell(0.0) == "  0%"


def test_a_selected_apps_grid_marks_other_apps_cores_not_as_not_reported() -> None:
    """With one app shown, a core only another app uses is reported (by that app): "·", as the / filter marks a
    core only filtered-out apps use; "-" stays "not reported", a core no app reports. It said "-" for both."""
    from neuron_top.output.cells import HIDDEN

    def runtime(pid: int, cores: dict[int, float]) -> dict:
        return {"pid": pid, "neuron_runtime_tag": f"app{pid}", "report": {"neuroncore_counters": {
            "period": 1.0, "neuroncores_in_use": {str(i): {"neuroncore_utilization": u} for i, u in cores.items()}}}}

    doc = {"neuron_hardware_info": {"neuron_device_count": 1, "neuroncore_per_device_count": 4},
           "neuron_runtime_data": [runtime(7, {0: 40.0}), runtime(8, {1: 60.0})]}
    report, problems = decode_report(json.dumps(doc).encode())
    snap = Snapshot(report, 0.0, 1, problems)
    first = next(a for a in snap.apps if a.pid == 7)
    cells = core_cells(snap, first)
    assert [cells.core(i)[0][0] for i in range(4)] == [" 40%", HIDDEN.rjust(4), "   -", "   -"]
    assert cells.core(1)[0][1] is None  # no bar
    everyone = core_cells(snap, snap.all)
    assert [everyone.core(i)[0][0] for i in range(4)] == [" 40%", " 60%", "   -", "   -"]

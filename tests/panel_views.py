"""Views for the panel tests: from the hand-written stream in tests/data and from the real reports in tests/fixtures."""

from __future__ import annotations

from pathlib import Path

from neuron_top.decode import decode_report
from neuron_top.history import History
from neuron_top.snapshot import Snapshot
from neuron_top.view import View

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
REPORTS = REPO / "tests" / "fixtures" / "neuron-monitor"
STREAM = DATA / "panels_stream.ndjson"
"""Four reports by hand: app 1001 tagged "[red]boom" (a model name with an escape sequence, latency idle in
report 2, generic and unknown "compiler" errors), app 1002 "idle-app" (always idle), and device 1 whose
uncorrected DRAM ECC count goes from 0 to 1 in the last report."""


def snapshots(path: Path = STREAM) -> list[Snapshot]:
    out = []
    for i, line in enumerate(path.read_bytes().splitlines()):
        if line.strip():
            report, problems = decode_report(line)
            ts = report.neuron_top.ts if report.neuron_top and report.neuron_top.ts else 1700000000.0 + i
            out.append(Snapshot(report, ts, seq=i, problems=problems))
    return out


def view_of(snaps: list[Snapshot], pid: int | None = None) -> View:
    """The view after pushing every snapshot, as the app would hold it."""
    history = History(maxlen=120)
    history.extend(snaps)
    return View(snapshot=snaps[-1], history=history, tick=len(snaps), pid=pid, first=snaps[0],
                prev=snaps[-2] if len(snaps) > 1 else None)


def hand_view(pid: int | None = None) -> View:
    return view_of(snapshots(), pid)


def fixture_view(name: str, pid: int | None = None) -> View:
    report, problems = decode_report((REPORTS / name).read_bytes())
    return view_of([Snapshot(report, 1700000000.0, problems=problems)], pid)

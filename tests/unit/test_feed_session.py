"""The one feed loop and the session it fills, headless: the same events live, in ``record``, ``--once`` and the
exporter; the session's state after each."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from neuron_top.feed import Feed, RecordingError, Report, SkippedInput, StatusChanged
from neuron_top.recording.writer import RecordingWriter
from neuron_top.session import Session
from neuron_top.snapshot import snapshot_from
from neuron_top.sources.base import Item, RawReport, Skipped, State, Status
from tests.conftest import DATA

REPORT = (DATA / "trn2_small.json").read_bytes().strip()


class ListSource:
    name = "list"

    def __init__(self, items: list[Item], fail: Exception | None = None) -> None:
        self.items_ = items
        self.fail = fail
        self.closed = False

    def items(self, stop: threading.Event) -> Iterator[Item]:
        yield from self.items_
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        self.closed = True


def test_every_item_kind_becomes_one_event_and_run_together_reports_are_split() -> None:
    src = ListSource([Status(State.LIVE, "up"), RawReport(REPORT + REPORT, ts=5.0), RawReport(b"{nope"),
                      Skipped("garbage", count=3), Status(State.ENDED, "done")])
    feed = Feed(src)
    events = list(feed.events())
    assert [type(e).__name__ for e in events] == ["StatusChanged", "Report", "Report", "SkippedInput",
                                                  "SkippedInput", "StatusChanged"]
    reports = [e for e in events if isinstance(e, Report)]
    assert [r.snapshot.seq for r in reports] == [1, 2] and reports[0].snapshot.ts == reports[1].snapshot.ts
    assert [e.total for e in events if isinstance(e, SkippedInput)] == [1, 4]
    assert feed.reports == 2 and feed.skipped == 4 and feed.skip_reasons["garbage"] == 3


def test_a_source_that_raises_ends_in_a_failed_status_not_a_crash() -> None:
    events = list(Feed(ListSource([RawReport(REPORT)], fail=RuntimeError("boom"))).events())
    assert isinstance(events[-1], StatusChanged) and events[-1].status.state is State.FAILED
    assert "boom" in events[-1].status.message


def test_the_recorder_sees_every_line_first_and_a_failing_disk_stops_only_the_recording(tmp_path: Path) -> None:
    class Full:
        def write(self, data: bytes, ts: float | None = None, pods: bytes = b"") -> bool:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            pass

    events = list(Feed(ListSource([RawReport(REPORT), RawReport(REPORT)]), Full()).events())
    assert [type(e) for e in events] == [RecordingError, Report, Report]
    assert "No space left" in events[0].reason  # type: ignore[union-attr]

    path = tmp_path / "r.jsonl"
    writer = RecordingWriter(path)
    events = list(Feed(ListSource([RawReport(REPORT), RawReport(b"not json")]), writer, decode=False).events())
    writer.close()
    assert [type(e) for e in events] == [SkippedInput]  # no snapshots made; the bad line is counted
    assert len(path.read_bytes().splitlines()) == 1


def test_session_applies_events_as_the_header_and_alerts_need_them() -> None:
    clock = iter([10.0, 11.0])
    s = Session("neuron-monitor", clock=lambda: next(clock))
    assert s.status.state == "starting" and s.latest is None
    up = s.apply(StatusChanged(Status(State.LIVE, "reading")))
    assert up.status and not up.notice and s.status.state == "live"
    snap = snapshot_from(REPORT, 1.0, 1)
    up = s.apply(Report(snap, REPORT))
    assert up.snapshot and s.latest is snap and s.status.last_report == 10.0 and len(s.history) == 1
    s.apply(SkippedInput(Skipped("x"), 7))
    assert s.status.skipped == 7
    up = s.apply(StatusChanged(Status(State.FAILED, "neuron-monitor exited 1", "stderr tail")))
    assert up.notice.startswith("neuron-monitor exited 1") and "stderr tail" in up.notice
    assert up.severity == "error" and s.status.state == "failed" and s.status.detail == "stderr tail"
    assert s.latest is snap  # the last data stays


def test_session_rebuild_replaces_history_and_latest_after_a_seek() -> None:
    s = Session("run.jsonl", "replay")
    snaps = [snapshot_from(REPORT, float(i), i + 1) for i in range(5)]
    for sn in snaps:
        s.accept(sn)
    assert s.status.last_report is None  # replay has no "updated Ns ago"
    s.rebuild(snaps[1:3])
    assert s.latest is snaps[2] and s.prev is snaps[1] and list(s.history.ts) == [sn.ts for sn in snaps[1:3]]

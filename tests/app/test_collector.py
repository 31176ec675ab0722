"""The collector worker: every item kind becomes a message, recording tees raw reports, failures never crash."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec

from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.writer import RecordingWriter
from neuron_top.sources.base import Item, RawReport, Skipped, State, Status
from neuron_top.tui.collector import Collector
from neuron_top.tui.messages import InputSkipped, RecordingFailed, ReportArrived, SourceChanged
from tests.conftest import DATA
from tests.helpers import make_app, until

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


def collect(source: ListSource, recorder: object | None = None) -> list[object]:
    posted: list[object] = []
    c = Collector(source, posted.append, recorder, clock=lambda: 1000.0)
    c.run()
    c.close()
    assert source.closed
    return posted


def test_every_item_kind_becomes_a_message(tmp_path: Path) -> None:
    items = [Status(State.LIVE, "go"), RawReport(REPORT), Skipped("garbage", "xx"), RawReport(b"{not json"),
             RawReport(REPORT, ts=5.0), Status(State.ENDED, "done")]
    posted = collect(ListSource(items))
    kinds = [type(m).__name__ for m in posted]
    assert kinds == ["SourceChanged", "ReportArrived", "InputSkipped", "InputSkipped", "ReportArrived",
                     "SourceChanged"]
    reports = [m for m in posted if isinstance(m, ReportArrived)]
    # the report's own neuron_top.ts wins over the receive time
    assert [r.snapshot.ts for r in reports] == [1767225600.0, 1767225600.0]
    assert [r.snapshot.seq for r in reports] == [1, 2]
    skipped = [m for m in posted if isinstance(m, InputSkipped)]
    assert skipped[-1].total == 2 and "malformed JSON" in skipped[-1].skipped.reason


def test_recording_tees_raw_reports_and_keeps_bad_ones_out(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    plain = b'{"neuron_runtime_data": [], "system_data": {"memory_info": {"memory_used_bytes": 7}}}'
    posted = collect(ListSource([RawReport(plain), RawReport(b"garbage"), RawReport(plain)]), RecordingWriter(path))
    assert sum(isinstance(m, ReportArrived) for m in posted) == 2
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2  # the writer refuses what is not a JSON object
    assert all(msgspec.json.decode(line)["neuron_top"]["ts"] == 1000.0 for line in lines)
    with RecordingIndex(path) as idx:
        idx.wait()
        assert len(idx) == 2 and idx.skipped == 0


def test_a_failing_source_is_a_status_not_a_crash() -> None:
    posted = collect(ListSource([RawReport(REPORT)], fail=RuntimeError("boom")))
    assert isinstance(posted[-1], SourceChanged)
    assert posted[-1].status.state is State.FAILED and "boom" in posted[-1].status.message


def test_a_failing_recorder_stops_recording_but_not_the_data() -> None:
    class Full:
        def write(self, data: bytes, ts: float, pods: bytes = b"") -> bool:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            pass

    posted = collect(ListSource([RawReport(REPORT), RawReport(REPORT)]), Full())
    assert [type(m).__name__ for m in posted] == ["RecordingFailed", "ReportArrived", "ReportArrived"]
    assert "No space left" in posted[0].reason  # type: ignore[union-attr]
    assert isinstance(posted[0], RecordingFailed)


async def test_app_records_and_says_the_stream_ended(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    source = ListSource([Status(State.LIVE, "reports from test"), RawReport(REPORT), RawReport(REPORT),
                         Status(State.ENDED, "stream ended (end of input on stdin) after 2 reports")])
    app = make_app()
    app.source = source
    app.collector = Collector(source, app.post_message, RecordingWriter(path))
    async with app.run_test(size=(120, 40)):
        await until(lambda: app.source_line.state == "ended", what="the stream's end")
        assert app.latest is not None and app.latest.seq == 2  # the last data stays on screen
        assert any("stream ended" in n.message for n in app._notifications)
    assert len(path.read_bytes().splitlines()) == 2


def test_reports_run_together_on_one_line_are_each_shown_and_recorded(tmp_path: Path) -> None:
    """``cat a.json b.json`` where a.json has no final newline: one line, two reports, two recorded lines."""
    rec = tmp_path / "rec.jsonl"
    writer = RecordingWriter(rec)
    together = REPORT + b" " + REPORT
    posted = collect(ListSource([RawReport(together), RawReport(REPORT + b"xx" + REPORT)]), writer)
    kinds = [type(m).__name__ for m in posted]
    assert kinds == ["ReportArrived", "ReportArrived", "InputSkipped"]  # garbage between is not two reports
    assert [m.snapshot.seq for m in posted if isinstance(m, ReportArrived)] == [1, 2]
    with RecordingIndex(rec) as idx:
        idx.wait()
        assert len(idx) == 2 and idx.skipped == 0  # the recording stays one report per line
    assert writer.skipped == 1  # the line with garbage between is not a report


def test_an_unexpected_decoder_error_skips_that_report_and_keeps_the_source(monkeypatch) -> None:
    """Not only DecodeError: anything the decoder raises (it raised UnicodeDecodeError for bytes that are not
    UTF-8) is counted as a skipped report, and the next reports still arrive."""
    from neuron_top import feed as collector

    real = collector.snapshot_from
    calls = {"n": 0}

    def flaky(data: bytes, ts: float, seq: int):  # the second report hits a decoder bug
        calls["n"] += 1
        if calls["n"] == 2:
            raise ValueError("decoder bug")
        return real(data, ts, seq)
    monkeypatch.setattr(collector, "snapshot_from", flaky)
    posted = collect(ListSource([RawReport(REPORT, ts=float(i)) for i in range(3)]))
    assert [type(m) for m in posted] == [ReportArrived, InputSkipped, ReportArrived]
    skipped = posted[1]
    assert "decoder bug" in skipped.skipped.reason and skipped.total == 1  # type: ignore[attr-defined]

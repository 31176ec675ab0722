"""Reading recordings: the index, the replay source and stdin spooling."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
from pathlib import Path

import pytest
import zstandard

from neuron_top.recording.index import RecordingIndex, RecordingSource, SpooledIndex, open_recording
from neuron_top.recording.pacing import HOLE_HOLD
from neuron_top.recording.writer import RecordingWriter, write_range
from neuron_top.sources.base import RawReport, Skipped, State, Status
from tests.conftest import REPORTS


def report(i: int, period: float = 1.0) -> bytes:
    return json.dumps({"i": i, "system_data": {"vcpu_usage": {"period": period}}}, separators=(",", ":")).encode()


def index_of(path: Path, **kw: object) -> RecordingIndex:
    ix = RecordingIndex(path, **kw)  # type: ignore[arg-type]
    assert ix.wait(30)
    return ix


def all_reports(ix: RecordingIndex | SpooledIndex) -> list[bytes]:
    return [ix.get(i) for i in range(len(ix))]


@pytest.mark.parametrize("name", ["rec.ndjson", "rec.ndjson.gz", "rec.ndjson.zst"])
def test_round_trip_write_index_get(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with RecordingWriter(path) as w:
        for i in range(50):
            assert w.write(report(i), ts=1000.0 + i)
    with index_of(path) as ix:
        assert len(ix) == 50
        assert ix.skipped == 0
        assert ix.compression == {"rec.ndjson": None, "rec.ndjson.gz": "gzip", "rec.ndjson.zst": "zstd"}[name]
        for i in (0, 17, 49):
            doc = json.loads(ix.get(i))
            assert doc["i"] == i
            assert doc["neuron_top"] == {"ts": 1000.0 + i}
            assert ix.timestamp(i) == 1000.0 + i
        assert ix.wallclock
        assert ix.find_time(1020.5) == 21
        assert ix.find_time(0) == 0
        assert ix.find_time(1e12) == 49
        assert ix.progress == 1.0


def test_compressed_files_are_standard(tmp_path: Path) -> None:
    """Other tools read what we write: gzip and zstd streams with their trailers."""
    for name, unpack in (("a.gz", gzip.decompress),
                         ("a.zst", lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b))):
        with RecordingWriter(tmp_path / name) as w:
            w.write(b"{}", ts=1.0)
            w.write(b'{"a":1}', ts=2.0)
        assert unpack((tmp_path / name).read_bytes()) == (
            b'{"neuron_top":{"ts":1.000000}}\n{"a":1,"neuron_top":{"ts":2.000000}}\n')


def test_killed_gzip_writer_is_read_up_to_its_last_report(tmp_path: Path) -> None:
    """No trailer (the writer was killed): every flushed report is still there."""
    path = tmp_path / "cut.gz"
    w = RecordingWriter(path)
    for i in range(3):
        w.write(report(i), ts=float(i))
    os.close(w._fd)  # die without finishing the stream
    with index_of(path) as ix:
        assert [json.loads(r)["i"] for r in all_reports(ix)] == [0, 1, 2]
        assert ix.error is None


def test_concatenated_gzip_members_and_zstd_frames(tmp_path: Path) -> None:
    for name in ("two.gz", "two.zst"):
        for start in (0, 3):  # two appending writers: two members / frames
            with RecordingWriter(tmp_path / name) as w:
                for i in range(start, start + 3):
                    w.write(report(i))
        with index_of(tmp_path / name) as ix:
            assert [json.loads(r)["i"] for r in all_reports(ix)] == list(range(6))


def test_corrupt_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    good = gzip.compress(report(0) + b"\n")
    path.write_bytes(good + b"\x1f\x8b\x08\x00garbage-garbage-garbage")
    with index_of(path) as ix:
        assert len(ix) == 1
        assert ix.error is None  # damage is skipped and counted, not the end of reading
        assert ix.skips()[-1][1].reason == "damaged compressed data"


def test_pretty_printed_reports_one_after_another(tmp_path: Path) -> None:
    docs = [{"system_data": {}, "a": i, "nested": {"x": [1, 2, {"y": "}"}]}, "period": 2.0} for i in range(3)]
    text = "".join(json.dumps(d, indent=2) + "\n" for d in docs)  # what `jq .` writes
    path = tmp_path / "pretty.json"
    path.write_text(text)
    with index_of(path) as ix:
        assert [json.loads(r) for r in all_reports(ix)] == docs
        assert ix.skipped == 0
        assert [ix.timestamp(i) for i in range(3)] == [0.0, 2.0, 4.0]
        assert not ix.wallclock


def test_single_pretty_report_without_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"system_data": {}, "b": {"c": 2}}, indent=4))
    with index_of(path) as ix:
        assert len(ix) == 1 and json.loads(ix.get(0)) == {"system_data": {}, "b": {"c": 2}}


def test_last_report_without_newline_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "nonl.ndjson"
    path.write_bytes(report(0) + b"\n" + report(1))
    with index_of(path) as ix:
        assert all_reports(ix) == [report(0), report(1)]


def test_cut_last_line_of_a_finished_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "cut.ndjson"
    path.write_bytes(report(0) + b"\n" + report(1)[:-5])
    with index_of(path) as ix:
        assert all_reports(ix) == [report(0)]
        assert ix.skipped == 1 and ix.skips()[0][1].reason == "truncated report"


def test_cut_line_that_ends_in_a_brace_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "cut.ndjson"
    path.write_bytes(report(0) + b"\n" + b'{"a":{"b":1}')
    with index_of(path) as ix:
        assert len(ix) == 1 and ix.skipped == 1


def test_follow_truncated_last_line_grows_into_a_complete_one(tmp_path: Path) -> None:
    path = tmp_path / "grow.ndjson"
    full = report(1)
    path.write_bytes(report(0) + b"\n" + full[:10])
    with index_of(path, follow=True) as ix:
        assert len(ix) == 1 and ix.skipped == 0  # the cut line waits
        assert not ix.finished
        assert ix.refresh() == 1
        with path.open("ab") as f:
            f.write(full[10:])
        assert ix.refresh() == 1  # it parses, but the file just grew: wait for a newline or a quiet poll
        assert ix.refresh() == 2  # the file did not grow since: a last line that parses is complete
        assert ix.get(1) == full
        with path.open("ab") as f:
            f.write(b"\n" + report(2) + b"\n")
        assert ix.refresh() == 3
        assert ix.blank == 0 and ix.skipped == 0
        assert all_reports(ix) == [report(0), report(1), report(2)]


def test_follow_pretty_report_written_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "grow.json"
    text = json.dumps({"system_data": {}, "b": [1, 2]}, indent=2) + "\n"
    path.write_text(text[:9])
    with index_of(path, follow=True) as ix:
        assert len(ix) == 0 and ix.skipped == 0
        with path.open("a") as f:
            f.write(text[9:])
        assert ix.refresh() == 1 and json.loads(ix.get(0)) == {"system_data": {}, "b": [1, 2]}


def test_follow_gzip_recording_being_written(tmp_path: Path) -> None:
    path = tmp_path / "live.gz"
    with RecordingWriter(path) as w:
        w.write(report(0))
        with index_of(path, follow=True) as ix:
            assert len(ix) == 1
            w.write(report(1))
            w.write(report(2))
            assert ix.refresh() == 3


def test_garbage_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "mixed.ndjson"
    path.write_bytes(b"\xef\xbb\xbf" + report(0) + b"\r\n\r\n\n"
                     + b"neuron-monitor: error \x1b[31m\n"
                     + b"   \t\n"
                     + report(1)[:20] + b"\n"
                     + b"[1, 2]\n"
                     + b"  " + report(2) + b"  \r\n"
                     + b"}\n")
    with index_of(path) as ix:
        assert all_reports(ix) == [report(0), report(1)[:0] + report(2)]
        assert ix.blank == 3
        assert ix.skipped == 4
        skips = ix.skips()
        assert [(pos, s.reason) for pos, s in skips] == [(1, "not a report"), (1, "truncated report"),
                                                         (1, "not a report"), (2, "not a report")]
        assert "\x1b" not in skips[0][1].sample and "\\x1b" in skips[0][1].sample


def test_empty_and_blank_files(tmp_path: Path) -> None:
    for content in (b"", b"\n\n", b"   "):
        path = tmp_path / "empty.ndjson"
        path.write_bytes(content)
        with index_of(path) as ix:
            assert len(ix) == 0 and ix.skipped == 0 and ix.finished
            with pytest.raises(IndexError):
                ix.get(0)
            with pytest.raises(IndexError):
                ix.find_time(0.0)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_recording(tmp_path / "nope.ndjson")


def test_seek_within_10000_reports(tmp_path: Path) -> None:
    path = tmp_path / "big.ndjson"
    with RecordingWriter(path) as w:
        for i in range(10_000):
            w.write(report(i), ts=5000.0 + 0.5 * i)
    with index_of(path) as ix:
        assert len(ix) == 10_000
        for i in (9_999, 0, 4_321, 5_000, 1):
            assert json.loads(ix.get(i))["i"] == i
        assert ix.find_time(5000.0 + 0.5 * 7_777) == 7_777
        assert ix.find_time(5000.0 + 0.5 * 7_777 + 0.1) == 7_778
        s, e = ix.span(123)
        with path.open("rb") as f:
            f.seek(s)
            assert f.read(e - s) == ix.get(123)


def test_timestamps_synthesized_from_periods(tmp_path: Path) -> None:
    path = tmp_path / "p.ndjson"
    path.write_bytes(b"\n".join([report(0, 5.0), report(1, 2.0), b'{"system_data":{}}', report(3, -1),
                                 b'{"system_data":{},"neuron_top":{"ts":100.0}}',
                                 b'{"system_data":{},"neuron_top": {"ts": 50}}',
                                 report(6, 3.0)]) + b"\n")
    with index_of(path) as ix:
        # first: 0; then + own period; no/invalid period: the previous one; ts key wins (and moves the reports
        # before it to end a period before it); a time going back is kept, in file order (issue 33), and a time
        # is looked up where the recording first reached it
        assert [ix.timestamp(i) for i in range(7)] == [92.0, 94.0, 96.0, 98.0, 100.0, 50.0, 53.0]
        assert ix.find_time(99.0) == 4 and ix.find_time(101.0) == 6 and ix.find_at_or_before(60.0) == 0
        assert ix.wallclock


@pytest.mark.parametrize("name", ["mixed.jsonl", "mixed.jsonl.zst"])
def test_raw_output_then_a_recorder_on_the_same_file_has_wall_clock_times(tmp_path: Path, name: str,
                                                                           capsys: pytest.CaptureFixture) -> None:
    """``neuron-monitor > f`` for a while, then ``neuron-top record f``: the raw reports counted from 0.0 and the
    recorded ones from 1970, so --summary said "+0:00:00 to +498853:28:14" and "holes: 1, 20785 d 13 h"."""
    from neuron_top.cli.main import main

    path = tmp_path / name
    raw = [report(i, 30.0) for i in range(5)]
    data = b"\n".join(raw) + b"\n"  # what a shell redirection of neuron-monitor (through zstd) leaves
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if name.endswith(".zst") else data)
    with RecordingWriter(path) as w:  # appends (a new zstd frame) with neuron_top.ts keys
        for i in range(5):
            w.write(report(5 + i, 30.0), 1767225600.0 + 30 * i)
    with index_of(path) as ix:
        assert ix.wallclock and len(ix) == 10
        assert [ix.timestamp(i) - 1767225600.0 for i in range(10)] == [30.0 * k for k in range(-5, 5)]
    assert main(["replay", str(path), "--summary"]) == 0
    out = capsys.readouterr().out
    assert "10 reports, " in out and "(4 m 30 s)" in out and "holes" not in out


def test_first_report_readable_before_indexing_finishes(tmp_path: Path) -> None:
    path = tmp_path / "stdin-like"
    r, w = os.pipe()
    os.write(w, report(0) + b"\n")
    with open(r, "rb", buffering=0) as stream:
        ix = SpooledIndex(stream)  # type: ignore[arg-type]
        try:
            assert ix.wait_for(0, timeout=30)
            assert ix.get(0) == report(0)
            assert not ix.done  # the pipe is still open
            os.write(w, report(1) + b"\n" + report(2))
            os.close(w)
            assert ix.wait(30)
            assert all_reports(ix) == [report(0), report(1), report(2)]
            assert ix.finished
        finally:
            ix.close()
    assert not path.exists()


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress, zstandard.ZstdCompressor().compress])
def test_spooled_index_from_a_stream(pack) -> None:  # type: ignore[no-untyped-def]
    data = b"".join(report(i) + b"\n" for i in range(100))
    with SpooledIndex(io.BytesIO(pack(data))) as ix:  # type: ignore[arg-type]
        assert ix.wait(30)
        assert len(ix) == 100 and ix.get(99) == report(99) and ix.get(3) == report(3)


def test_write_range_copies_reports_byte_exact(tmp_path: Path) -> None:
    src = tmp_path / "src.ndjson"
    src.write_bytes(b"".join(report(i) + b"\r\n" for i in range(10)) + json.dumps({"system_data": {"z": 1}}, indent=2).encode())
    with index_of(src) as ix:
        for name in ("out.ndjson", "out.gz", "out.zst"):
            assert write_range(ix, 2, 5, tmp_path / name) == 3
            with index_of(tmp_path / name) as out:
                assert all_reports(out) == [report(2), report(3), report(4)]
        assert write_range(ix, 8, 99, tmp_path / "tail.ndjson") == 3
        assert (tmp_path / "tail.ndjson").read_bytes() == report(8) + b"\n" + report(9) + b'\n{   "system_data": {     "z": 1   } }\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["src.ndjson", "out.ndjson", "out.gz", "out.zst", "tail.ndjson"])


def items_of(source: RecordingSource, limit: int = 10_000) -> list[object]:
    out = []
    for item in source.items(threading.Event()):
        out.append(item)
        if len(out) >= limit:
            break
    return out


def test_source_yields_status_reports_skips_in_order(tmp_path: Path) -> None:
    path = tmp_path / "s.ndjson"
    path.write_bytes(report(0) + b"\nbad\nworse\n" + report(1) + b"\n")
    got = items_of(RecordingSource(index_of(path)))
    assert isinstance(got[0], Status) and got[0].state is State.REPLAY
    assert got[1] == RawReport(report(0), 0.0, 0)
    assert got[2] == Skipped("not a report", "bad", 2)
    assert got[3] == RawReport(report(1), 1.0, 1)
    assert isinstance(got[4], Status) and got[4].state is State.ENDED and "2 reports, 2 skipped" in got[4].message
    assert len(got) == 5


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 6))
        self.now += s


def test_source_paces_by_recorded_time_and_speed(tmp_path: Path) -> None:
    path = tmp_path / "t.ndjson"
    with RecordingWriter(path) as w:
        for i, ts in enumerate([10.0, 11.0, 13.0, 1000.0, 1001.0]):
            w.write(report(i), ts=ts)
    clock = FakeClock()
    src = RecordingSource(index_of(path), speed=2.0, start=1, clock=clock, sleep=clock.sleep)
    got = [x for x in items_of(src) if isinstance(x, RawReport)]
    assert [x.index for x in got] == [1, 2, 3, 4]
    assert clock.sleeps == [1.0, HOLE_HOLD, 0.5]  # 2 s at 2x; a 987 s hole held briefly; 1 s at 2x


def test_source_follows_a_growing_file(tmp_path: Path) -> None:
    path = tmp_path / "f.ndjson"
    path.write_bytes(report(0) + b"\n" + report(1)[:7])
    clock = FakeClock()
    rest = [report(1)[7:] + b"\n", b"junk\n" + report(2) + b"\n"]
    stop = threading.Event()

    def sleep(s: float) -> None:  # the writer appends while the reader waits
        clock.sleep(s)
        if rest:
            with path.open("ab") as f:
                f.write(rest.pop(0))
        else:
            stop.set()

    src = RecordingSource(index_of(path, follow=True), clock=clock, sleep=sleep)
    got = list(src.items(stop))
    assert [x for x in got if isinstance(x, RawReport)] == [RawReport(report(i), float(i), i) for i in range(3)]
    assert Skipped("not a report", "junk") in got
    assert not any(isinstance(x, Status) and x.state is State.ENDED for x in got)
    src.close()


def test_source_seek(tmp_path: Path) -> None:
    path = tmp_path / "s.ndjson"
    path.write_bytes(b"".join(report(i) + b"\n" for i in range(10)))
    src = RecordingSource(index_of(path))
    seen = []
    for item in src.items(threading.Event()):
        if isinstance(item, RawReport):
            seen.append(item.index)
            if item.index == 2:
                src.seek(7)
    assert seen == [0, 1, 2, 7, 8, 9]


def test_real_fixtures_index() -> None:
    fixtures = REPORTS
    for path in sorted(fixtures.glob("*.json")):
        with index_of(path) as ix:
            assert len(ix) == 1, path.name
            assert json.loads(ix.get(0)) == json.loads(path.read_bytes()), path.name
    with index_of(fixtures / "wandb_trn1_2xlarge_stream.ndjson") as ix:
        assert len(ix) == 3 and ix.skipped == 0
        assert 0.99 < ix.timestamp(1) - ix.timestamp(0) < 1.01
    with index_of(fixtures / "issue633_inf1_container_no_devices_TRUNCATED.txt") as ix:
        assert len(ix) == 0 and ix.skipped >= 1


def test_named_pipe_is_spooled(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as f:
            f.write(report(0) + b"\n" + report(1) + b"\n")

    t = threading.Thread(target=feed)
    t.start()
    ix = open_recording(fifo)
    try:
        assert isinstance(ix, SpooledIndex) and ix.name == "fifo"
        assert ix.wait(30)
        assert all_reports(ix) == [report(0), report(1)]
    finally:
        ix.close()
        t.join()


def test_compression_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    (tmp_path / "plain.gz").write_bytes(report(0) + b"\n")
    (tmp_path / "packed.ndjson").write_bytes(zstandard.ZstdCompressor().compress(report(1) + b"\n"))
    with index_of(tmp_path / "plain.gz") as a, index_of(tmp_path / "packed.ndjson") as b:
        assert (a.compression, a.get(0)) == (None, report(0))
        assert (b.compression, b.get(0)) == ("zstd", report(1))


def test_progress_of_a_pipe_reaches_one_at_its_end() -> None:
    r, w = os.pipe()
    with open(r, "rb", buffering=0) as stream:
        ix = SpooledIndex(stream)  # type: ignore[arg-type]
        try:
            os.write(w, report(0) + b"\n")
            assert ix.wait_for(0, timeout=30)
            assert ix.progress == 0.0 and not ix.done  # a pipe's length is unknown until it ends
            os.close(w)
            assert ix.wait(30) and ix.progress == 1.0
        finally:
            ix.close()


@pytest.mark.parametrize(("name", "pack"), [("r.jsonl.xz", "lzma"), ("r.jsonl.bz2", "bz2")])
def test_an_xz_or_bzip2_recording_is_read_every_stream_and_past_damage(tmp_path: Path, name: str, pack: str,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """``xz night.jsonl`` (or logrotate's bzip2) then ``replay night.jsonl.xz`` was refused ("it holds xz data"):
    read now as gzip and zstd are, every stream of a concatenation, and on past a damaged one."""
    import importlib

    from neuron_top.cli.main import main

    pack_ = importlib.import_module(pack).compress
    first, second = (b"\n".join(report(i) for i in r) + b"\n" for r in (range(3), range(3, 6)))
    path = tmp_path / name
    path.write_bytes(pack_(first) + pack_(second))
    with index_of(path) as ix:
        assert [ix.get(i) for i in range(len(ix))] == [report(i) for i in range(6)] and ix.skipped == 0
    assert main(["replay", str(path), "--summary"]) == 0
    assert f"{name}: 6 reports" in capsys.readouterr().out
    bad = bytearray(pack_(first))
    bad[len(bad) // 2] ^= 0xFF
    path.write_bytes(bytes(bad) + pack_(second))
    with index_of(path) as ix:  # the second stream whole, the damage counted
        assert [ix.get(i) for i in range(len(ix))][-3:] == [report(i) for i in range(3, 6)]
        assert "damaged compressed data" in [sk.reason for _, sk in ix.skips()]
    assert main(["replay", str(path), "--summary"]) == 2  # what was lost makes the summary incomplete


@pytest.mark.parametrize(("magic", "says"), [(b"\x04\x22\x4d\x18", "lz4"), (b"PK\x03\x04", "zip")])
def test_a_recording_in_another_compression_is_refused_clearly(tmp_path: Path, magic: bytes, says: str,
                                                               capsys: pytest.CaptureFixture) -> None:
    """``replay night.jsonl.lz4`` said "no reports in ... (56 bad lines skipped)"."""
    from neuron_top.cli.main import main

    path = tmp_path / "r.jsonl.packed"
    path.write_bytes(magic + bytes(range(256)) * 4)
    for flag in ("--once", "--summary"):
        assert main(["replay", str(path), flag]) == 2
        err = capsys.readouterr().err
        assert f"it holds {says} data" in err and "bad lines" not in err and "Traceback" not in err

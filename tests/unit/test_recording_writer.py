"""Writing recordings: the ts splice, durability, signals and the headless record loop."""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from neuron_top.recording import writer as recording
from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.writer import RecordingWriter, install_signal_handlers, record_main, stamp
from neuron_top.sources.base import Item, RawReport, Skipped, State, Status

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("data", "expected"), [
    (b'{"a":1}', b'{"a":1,"neuron_top":{"ts":12.500000}}'),
    (b"{}", b'{"neuron_top":{"ts":12.500000}}'),
    (b"{ \t}", b'{"neuron_top":{"ts":12.500000}}'),
    (b'\xef\xbb\xbf {"a": [1, {"b": "}"}] }\r\n', b'{"a": [1, {"b": "}"}],"neuron_top":{"ts":12.500000}}'),
    (b'{\n  "a": 1\n}', b'{   "a": 1,"neuron_top":{"ts":12.500000}}'),
    (b'{"a":1,"neuron_top":{"ts":3.0}}', b'{"a":1,"neuron_top":{"ts":12.500000}}'),
    (b'{"neuron_top": {"ts": 3.0}}', b'{"neuron_top":{"ts":12.500000}}'),
    (b'{"a":1.10000000000000000001}', b'{"a":1.10000000000000000001,"neuron_top":{"ts":12.500000}}'),
])
def test_stamp_splices_without_reencoding(data: bytes, expected: bytes) -> None:
    out = stamp(data, 12.5)
    assert out == expected
    assert json.loads(out)["neuron_top"] == {"ts": 12.5}


@pytest.mark.parametrize("data", [b"", b"   ", b"[1,2]", b'"x"', b"nope", b'{"a":1', b'{"a":1}{"b":2}', b"{}}"])
def test_stamp_refuses_non_reports(data: bytes) -> None:
    assert stamp(data, 1.0) is None


def test_writer_counts_refused_reports_and_uses_its_clock(tmp_path: Path) -> None:
    path = tmp_path / "r.ndjson"
    with RecordingWriter(path, clock=lambda: 42.0) as w:
        assert w.write(b'{"a":1}')
        assert not w.write(b"garbage")
        assert w.write(b'{"a":2}', ts=float("nan"))
        assert (w.written, w.skipped) == (2, 1)
    assert path.read_bytes() == b'{"a":1,"neuron_top":{"ts":42.000000}}\n{"a":2,"neuron_top":{"ts":42.000000}}\n'


def test_writer_appends_after_a_cut_line_on_a_fresh_line(tmp_path: Path) -> None:
    path = tmp_path / "r.ndjson"
    path.write_bytes(b'{"old":1}\n{"cut":')
    with RecordingWriter(path, clock=lambda: 1.0) as w:
        w.write(b'{"new":1}')
    lines = path.read_bytes().split(b"\n")
    assert lines == [b'{"old":1}', b'{"cut":', b'{"new":1,"neuron_top":{"ts":1.000000}}', b""]
    with RecordingWriter(path, append=False, clock=lambda: 1.0) as w:
        w.write(b"{}")
    assert path.read_bytes() == b'{"neuron_top":{"ts":1.000000}}\n'


def test_fsync_at_most_per_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = os.fsync
    monkeypatch.setattr(recording.os, "fsync", lambda fd: (calls.append(fd), real(fd)))
    with RecordingWriter(tmp_path / "r.ndjson", fsync_interval=3600.0) as w:
        for _ in range(100):
            w.write(b"{}")
        assert calls == []
    assert len(calls) == 1  # on close
    calls.clear()
    with RecordingWriter(tmp_path / "r.ndjson", fsync_interval=0.0) as w:
        for _ in range(3):
            w.write(b"{}")
    assert len(calls) == 4


@pytest.mark.parametrize("name", ["full.ndjson", "full.gz"])
def test_disk_full_leaves_whole_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    path = tmp_path / name
    w = RecordingWriter(path)
    w.write(b'{"system_data":{},"a":1}')
    real = os.write

    def short_write(fd: int, data: bytes) -> int:
        if len(data) > 10:
            return real(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(recording.os, "write", short_write)
    with pytest.raises(OSError):
        w.write(b'{"system_data":{},"b":"' + b"x" * 1000 + b'"}')
    monkeypatch.setattr(recording.os, "write", real)
    with pytest.raises(OSError):
        w.write(b'{"system_data":{},"c":1}')  # a failed writer stays failed
    w.close()
    ix = RecordingIndex(path)
    ix.wait(30)
    assert len(ix) == 1 and json.loads(ix.get(0))["a"] == 1 and ix.skipped == 0
    ix.close()
    if name.endswith(".ndjson"):
        assert path.read_bytes().endswith(b"}\n")


def run_dashboard(monkeypatch: pytest.MonkeyPatch, rec: RecordingWriter, during: Callable[[], object]) -> int:
    """``run_tui`` with ``rec`` as its ``--record`` and a stand-in for the screen, which runs ``during()``."""
    import argparse

    from neuron_top.cli import common

    class FakeApp:
        return_code = None
        collector = None

        def __init__(self, *a: object, **kw: object) -> None:
            pass

        def run(self) -> None:
            during()

    monkeypatch.setattr("neuron_top.tui.app.NeuronTopApp", FakeApp)
    monkeypatch.setattr("neuron_top.settings.SettingsStore.open", staticmethod(lambda: None))
    return common.run_tui(None, argparse.Namespace(), recorder=rec)


class Disk:
    """``os.write`` on a disk that is full while ``full`` is set (the first write of a report may be cut short)."""

    def __init__(self) -> None:
        self.full = False
        self.real = os.write

    def write(self, fd: int, data: bytes) -> int:
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.real(fd, data)


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz", "r.jsonl.zst"])
def test_a_full_disk_pauses_the_recording_and_it_resumes_in_the_same_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Issue 33 item 9: ``--record`` stopped for good on a full disk. With ``retry`` it drops the reports that
    come while the disk is full (counted), tries again after the back-off, and appends to the same file once
    there is room (a new member/frame when compressed): every report written before and after reads back."""
    path = tmp_path / name
    now = [100.0]
    w = RecordingWriter(path, retry=True, monotonic=lambda: now[0])
    disk = Disk()
    monkeypatch.setattr(recording.os, "write", disk.write)

    def report(i: int) -> bytes:
        return b'{"system_data":{},"i":%d}' % i

    for i in range(3):
        assert w.write(report(i), 1000.0 + i)
    disk.full = True
    w.write(report(3), 1003.0)  # fails: paused, retry in 1 s (Backoff's first)
    st = w.state()
    assert (st.paused, st.lost, st.retry_in, st.failed) == ("disk full", 1, 1.0, "")
    assert st.text == "REC PAUSED: disk full, 1 report not recorded, retrying in 1s · " + name + " 3"
    w.write(report(4), 1004.0)  # before the retry: dropped without a try
    now[0] += 1.0
    w.write(report(5), 1005.0)  # tried, still full: the back-off doubles
    assert w.state().retry_in == 2.0 and w.lost == 3
    now[0] += 2.0
    assert "retrying with the next report" in w.state().text  # the back-off is over: the next report tries
    now[0] -= 2.0
    now[0] += 2.0
    disk.full = False  # space freed
    w.write(report(6), 1006.0)
    w.write(report(7), 1007.0)
    st = w.state()
    assert (st.paused, st.lost, st.written) == ("", 3, 5)
    assert st.text == f"REC {name} 5 (3 reports lost while the disk was full)"
    disk.full = True  # full again: the back-off starts from its first delay (reset on success)
    w.write(report(8), 1008.0)
    assert w.state().retry_in == 1.0
    disk.full = False
    now[0] += 1.0
    w.write(report(9), 1009.0)
    w.close()
    with RecordingIndex(path) as ix:
        ix.wait(30)
        assert [json.loads(ix.get(k))["i"] for k in range(len(ix))] == [0, 1, 2, 6, 7, 9]
        assert ix.skipped == 0


def test_without_retry_or_on_another_error_a_failed_write_stops_the_recording(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = RecordingWriter(tmp_path / "r.jsonl", retry=True)

    def denied(fd: int, data: bytes) -> int:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(recording.os, "write", denied)
    with pytest.raises(OSError):
        w.write(b'{"a":1}', 1.0)
    assert w.state().failed == "Input/output error" and w.state().text.startswith("REC STOPPED")
    w.close()


def test_the_dashboards_exit_line_counts_the_reports_lost_on_a_full_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 and the count in the final line, also once recording resumed (the file has a hole)."""
    rec = RecordingWriter(tmp_path / "full.jsonl", retry=True)
    rec.write(b'{"system_data":{}}', 1767225600.0)

    def lose() -> None:
        rec.lost = 4

    assert run_dashboard(monkeypatch, rec, lose) == 1
    err = capsys.readouterr().err
    assert "--record full.jsonl: 1 report written, 4 reports not recorded while the disk was full (resumed)" in err


CHILD = r"""
import sys, threading
from neuron_top.recording.writer import RecordingWriter, install_signal_handlers
stop = threading.Event()
w = RecordingWriter(sys.argv[1])
install_signal_handlers(w, stop)
big = b'{"system_data":{},"pad":"' + b"x" * 300000 + b'","i":%d}'
i = 0
while not stop.is_set():
    w.write(big % i)
    i += 1
    sys.stdout.write("%d\n" % i)  # progress for the parent (the file may be compressed)
    sys.stdout.flush()
w.close()
"""


def wait_for_lines(n: int, proc: subprocess.Popen[bytes]) -> None:
    """Until the child says it wrote ``n`` reports (it keeps writing)."""
    assert proc.stdout is not None
    for _ in range(n):
        assert proc.stdout.readline(), f"the child stopped early: {proc.poll()=}"


def child(path: Path, code: str = CHILD) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, str(path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("name", ["sig.ndjson", "sig.ndjson.gz", "sig.ndjson.zst"])
def test_signal_mid_stream_leaves_no_partial_line(tmp_path: Path, sig: signal.Signals, name: str) -> None:
    path = tmp_path / name
    proc = child(path)
    wait_for_lines(5, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    if name.endswith(".gz"):
        data = gzip.decompress(path.read_bytes())  # the trailer was written: a complete gzip file
    elif name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
    else:
        data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert len(lines) >= 5
    assert [json.loads(x)["i"] for x in lines] == list(range(len(lines)))


@pytest.mark.parametrize("name", ["kill.ndjson", "kill.ndjson.gz"])
def test_sigkill_mid_stream_loses_at_most_the_last_report(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    proc = child(path)
    wait_for_lines(5, proc)
    proc.kill()
    proc.wait(timeout=60)
    # SIGKILL cannot be caught: a kill in the middle of one 300 KB write() can leave part of that line (Linux
    # may stop a regular-file write at a page boundary for a fatal signal). Each report is one write, so the
    # loss is at most that last report, which the index counts as skipped; everything before it is whole.
    ix = RecordingIndex(path)
    ix.wait(60)
    assert len(ix) >= 5 and ix.skipped <= 1
    assert [json.loads(ix.get(i))["i"] for i in range(len(ix))] == list(range(len(ix)))
    ix.close()


class ListSource:
    name = "test"

    def __init__(self, items: list[Item], forever: bool = False) -> None:
        self._items = items
        self.forever = forever
        self.closed = False

    def items(self, stop: threading.Event) -> Iterator[Item]:
        yield from self._items
        while self.forever and not stop.is_set():
            stop.wait(0.05)

    def close(self) -> None:
        self.closed = True


def test_record_main_drains_a_source(tmp_path: Path) -> None:
    src = ListSource([Status(State.LIVE, "live"), RawReport(b'{"a":1}', 5.0), Skipped("bad", "x", 3),
                      RawReport(b"nope"), RawReport(b'{"a":2}', 6.0)])
    err = io.StringIO()
    rc = record_main(src, tmp_path / "out.ndjson", threading.Event(), err=err, handle_signals=False)
    assert rc == 0 and src.closed
    assert (tmp_path / "out.ndjson").read_bytes() == (
        b'{"a":1,"neuron_top":{"ts":5.000000}}\n{"a":2,"neuron_top":{"ts":6.000000}}\n')
    assert err.getvalue().splitlines()[-1].endswith("2 reports written to " + str(tmp_path / "out.ndjson")
                                                    + ", 4 skipped")


def test_record_main_pauses_on_a_full_disk_and_says_what_was_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``neuron-top record``, the unattended recorder, stopped for good at the first failed write while the
    dashboard's ``--record`` paused and went on: it pauses too, says so on stderr (it has no header), and the
    final line and the exit status say that reports were not recorded."""
    disk = Disk()
    monkeypatch.setattr(recording.os, "write", disk.write)

    class FillsUp(ListSource):
        def items(self, stop: threading.Event):  # type: ignore[override]
            for i, item in enumerate(super().items(stop)):
                disk.full = i >= 2  # the disk fills after the first report
                yield item

    src = FillsUp([Status(State.LIVE, "live"), RawReport(b'{"a":1}', 5.0), RawReport(b'{"a":2}', 6.0),
                   RawReport(b'{"a":3}', 7.0)])
    err = io.StringIO()
    rc = record_main(src, tmp_path / "out.jsonl", threading.Event(), err=err, handle_signals=False)
    disk.full = False
    lines = err.getvalue().splitlines()
    assert rc == 1, lines
    assert any("paused: disk full; retrying" in ln for ln in lines), lines
    assert lines[-1].endswith(", 0 skipped, 2 not recorded (disk full)"), lines
    assert (tmp_path / "out.jsonl").read_bytes() == b'{"a":1,"neuron_top":{"ts":5.000000}}\n'


def test_record_main_failures(tmp_path: Path) -> None:
    err = io.StringIO()
    rc = record_main(ListSource([Status(State.FAILED, "neuron-monitor not found")]), tmp_path / "o.ndjson",
                     threading.Event(), err=err, handle_signals=False)
    assert rc == 1 and "neuron-monitor not found" in err.getvalue()
    rc = record_main(ListSource([]), tmp_path / "no-such-dir" / "o.ndjson", threading.Event(), err=err,
                     handle_signals=False)
    assert rc == 2 and "cannot record" in err.getvalue()  # the file, before anything ran: as --record says


def test_record_main_stops_on_stop_even_when_the_source_waits(tmp_path: Path) -> None:
    stop = threading.Event()
    src = ListSource([RawReport(b"{}", 1.0)], forever=True)
    threading.Timer(0.3, stop.set).start()
    assert record_main(src, tmp_path / "o.ndjson", stop, err=io.StringIO(), handle_signals=False) == 0
    assert (tmp_path / "o.ndjson").read_bytes() == b'{"neuron_top":{"ts":1.000000}}\n'


RECORD_CHILD = r"""
import sys, threading, time
from neuron_top.recording.writer import record_main
from neuron_top.sources.base import RawReport

class Forever:
    name = "forever"
    def items(self, stop):
        i = 0
        while True:  # ignores stop, like a source blocked on a pipe
            yield RawReport(b'{"system_data":{},"i":%d}' % i)
            i += 1
            time.sleep(0.01)
    def close(self):
        pass

sys.exit(record_main(Forever(), sys.argv[1], threading.Event()))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_record_main_exits_cleanly_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    path = tmp_path / "rec.ndjson.gz"
    proc = child(path, RECORD_CHILD)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (path.exists() and path.stat().st_size > 200):
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err.decode()  # as shells expect, once the file is closed
    assert f"stopped by {sig.name}" in err.decode()
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    assert lines[-1] == b"" and len(lines) > 2
    assert [json.loads(x)["i"] for x in lines[:-1]] == list(range(len(lines) - 1))


def test_signal_handler_sets_the_writers_own_event_and_restores(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with RecordingWriter(tmp_path / "r.ndjson") as w:
        restore = install_signal_handlers(w)
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 30
            while not w.stopping.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)  # the handler runs between bytecodes of this thread
        finally:
            restore()
        assert w.stopping.is_set() and w.interrupted == signal.SIGTERM
        assert w.write(b"{}")  # a signal does not cut the writer off: the loop decides when to stop
    assert signal.getsignal(signal.SIGTERM) == before
    assert not w.write(b"{}")  # closed: dropped, not an error


# --- one recorder per file -------------------------------------------------------------------------------------


def test_two_recorders_to_a_device_are_not_one_file(tmp_path: Path) -> None:
    """The lock that keeps two recorders off one file was taken on devices too: /dev/null is one inode for the
    whole machine, so ``--record /dev/null`` (or /dev/full, /dev/stdout) in one terminal refused it in another
    (CI met it: two test runs recording to /dev/full)."""
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    with RecordingWriter("/dev/null") as first, RecordingWriter("/dev/null") as second:
        assert first.write(b'{"system_data":{}}', ts=1.0) and second.write(b'{"system_data":{}}', ts=1.0)


@pytest.mark.parametrize("name", ["pipe.jsonl", "pipe.jsonl.zst"])
def test_a_named_pipe_is_recorded_to_as_a_stream_and_its_reader_leaving_is_said(tmp_path: Path, name: str) -> None:
    """``record pipe`` (a FIFO another program reads) was refused: "Illegal seek" (the format check reads the file's
    head back). A stream is written as it comes; a reader that goes away is EPIPE, not a writer blocked for ever
    on a pipe it holds open for reading itself."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes")
    fifo = tmp_path / name
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with RecordingWriter(fifo) as w:  # opens once the reader has
        assert w.stream and w.repaired == ""
        for i in range(3):
            assert w.write(b'{"system_data":{},"i":%d}' % i, ts=10.0 + i)
    reader.join(10)
    data = got[0]
    if name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    assert [json.loads(ln)["i"] for ln in data.splitlines()] == [0, 1, 2]

    def leave() -> None:
        with fifo.open("rb"):  # opens once the writer has, and goes away without reading
            pass

    # (It read 10 bytes first: nothing had been written yet, so it waited out the writer's 10 s join; then the
    # writer's compressed reports could all fit in the pipe's buffer before the reader had gone: flaky under load.)
    quitter = threading.Thread(target=leave, daemon=True)
    quitter.start()
    with RecordingWriter(fifo) as w:
        quitter.join(10)
        assert not quitter.is_alive()
        with pytest.raises(BrokenPipeError):
            w.write(b'{"system_data":{},"i":3}', ts=1.0)


@pytest.mark.parametrize("name", ["busy.jsonl", "busy.jsonl.gz", "busy.jsonl.zst"])
def test_a_second_recorder_on_a_file_being_written_is_refused(tmp_path: Path, name: str) -> None:
    """Two recorders on one .gz interleaved their blocks: the file became unreadable past the first report."""
    from neuron_top.recording.writer import RecordingBusy

    path = tmp_path / name
    with RecordingWriter(path) as first:
        first.write(b'{"system_data":{},"a":1}', ts=1.0)
        with pytest.raises(RecordingBusy, match="another process is recording to it"):
            RecordingWriter(path)
        with pytest.raises(RecordingBusy):
            RecordingWriter(path, append=False)  # and never truncates it
        first.write(b'{"system_data":{},"a":2}', ts=2.0)
    with RecordingWriter(path) as again:  # free once the first one is closed
        again.write(b'{"system_data":{},"a":3}', ts=3.0)
    with RecordingIndex(path) as ix:
        ix.wait()
        assert len(ix) == 3


def test_the_lock_is_refused_across_processes_with_a_clear_message(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "r.jsonl.gz"
    with RecordingWriter(path):
        p = subprocess.run([sys.executable, "-m", "neuron_top", "record", str(path), "--builtin"],
                           capture_output=True, text=True, timeout=60)
    assert p.returncode == 2  # as --record and fleet --record: nothing started
    assert "cannot record to" in p.stderr and "another process is recording to it" in p.stderr
    for name in ("r.jsonl.xz", "r.bz2"):  # a name promising what is not written: refused, no plain file behind it
        p = subprocess.run([sys.executable, "-m", "neuron_top", "record", str(tmp_path / name), "--builtin"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "written as plain text, .gz or .zst" in p.stderr
        assert not (tmp_path / name).exists()
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(("name", "content"), [("x.gz", b'{"system_data":{},"a":1}\n'), ("x.jsonl", b"\x1f\x8b\x08\x00junk"),
                                               ("x.zst", b"\x1f\x8b\x08\x00junk")])
def test_appending_another_format_than_the_file_holds_is_refused(tmp_path: Path, name: str, content: bytes) -> None:
    """gzip members after plain lines would never be read back (the reader goes by the first bytes)."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(OSError, match="record to a new file"):
        RecordingWriter(path)
    assert path.read_bytes() == content


def _reports_in(path: Path) -> tuple[list[int], int]:
    with RecordingIndex(path) as ix:
        ix.wait()
        return [json.loads(ix.get(i))["i"] for i in range(len(ix))], ix.skipped


@pytest.mark.parametrize("name", ["ct.jsonl", "ct.jsonl.gz", "ct.jsonl.zst"])
def test_copytruncate_under_a_running_recorder_loses_nothing(tmp_path: Path, name: str) -> None:
    """logrotate's copytruncate (copy, then empty the file) while recording: the recorder went on with its gzip
    member or zstd frame, so the emptied file began mid-stream and every later report was unreadable ("no
    reports in ct.jsonl.zst (39 bad lines skipped)")."""
    path = tmp_path / name
    rotated = tmp_path / (name + ".1")
    with RecordingWriter(path) as w:
        for i in range(3):
            w.write(b'{"system_data":{},"i":%d}' % i, 1767225600.0 + i)
        rotated.write_bytes(path.read_bytes())
        os.truncate(path, 0)
        assert _reports_in(rotated) == ([0, 1, 2], 0)
        for i in range(3, 6):
            w.write(b'{"system_data":{},"i":%d}' % i, 1767225600.0 + i)
        rotated.write_bytes(path.read_bytes())
        os.truncate(path, 0)  # and once more right before it stops: no stray end of a stream in the new file
    assert _reports_in(rotated) == ([3, 4, 5], 0)
    assert path.stat().st_size == 0


def test_another_program_appending_between_reports_loses_nothing(tmp_path: Path) -> None:
    """``neuron-monitor | gzip >> night.jsonl.gz`` beside a recorder (the lock cannot stop a shell)."""
    path = tmp_path / "two.jsonl.gz"
    with RecordingWriter(path) as w:
        w.write(b'{"system_data":{},"i":0}', 1767225600.0)
        with path.open("ab") as f:
            f.write(gzip.compress(b'{"system_data":{},"i":1}\n'))
        w.write(b'{"system_data":{},"i":2}', 1767225602.0)
    assert _reports_in(path) == ([0, 1, 2], 0)


# --- appending to a cut compressed recording (issue 33) ---

@pytest.mark.parametrize("ext", ["gz", "zst"])
@pytest.mark.parametrize("keep", [0.77, 0.5, 0.93])
def test_appending_to_a_cut_compressed_file_loses_nothing_written_later(tmp_path: Path, ext: str,
                                                                        keep: float) -> None:
    """A copy of a file being written (or a crash) leaves its last member cut mid-block: the 10 reports appended
    after it were 'written' and could never be read (only 'skipped: 1')."""
    from neuron_top.recording.index import RecordingIndex
    from tests.recordings import Plan, cut, lines

    p = tmp_path / f"night.jsonl.{ext}"
    with RecordingWriter(p) as w:
        for line in lines(Plan(seconds=600, period=10)):
            w.write_line(line.rstrip(b"\n"))
    cut(p, keep)
    with RecordingIndex(p) as ix:
        ix.wait()
        before = len(ix)
    w = RecordingWriter(p)
    assert "was cut" in w.repaired and f"{before:,} whole reports kept" in w.repaired
    later = list(lines(Plan(seconds=90, period=10, start=1767300000.0)))
    for line in later:
        w.write_line(line.rstrip(b"\n"))
    w.close()
    with RecordingIndex(p) as ix:
        ix.wait()
        assert len(ix) == before + len(later)
        assert ix.timestamp(len(ix) - 1) == 1767300090.0
        assert ix.skipped == 0
    assert RecordingWriter(p).repaired == ""  # closed cleanly now: nothing more to do


def test_a_whole_compressed_file_is_left_as_it_is(tmp_path: Path) -> None:
    p = tmp_path / "ok.jsonl.gz"
    with RecordingWriter(p) as w:
        w.write(b'{"system_data":{}}', 1767225600.0)
    size = p.stat().st_size
    with RecordingWriter(p) as w:
        assert w.repaired == ""
    assert p.stat().st_size >= size


def test_a_dashboard_whose_recording_stopped_on_a_full_disk_says_so_and_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rec = RecordingWriter(tmp_path / "full.jsonl")
    rec.write(b'{"system_data":{}}', 1767225600.0)

    def fail() -> None:
        rec._failed = OSError(errno.ENOSPC, "No space left on device")

    assert run_dashboard(monkeypatch, rec, fail) == 1
    err = capsys.readouterr().err
    assert "--record full.jsonl stopped: No space left on device (1 report written before it)" in err

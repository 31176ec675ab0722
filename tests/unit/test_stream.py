"""stdin / command sources: EOF, garbage, truncation, a command that fails at once, close() while blocked."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from neuron_top.sources.base import RawReport, Skipped, State, Status
from neuron_top.sources.framing import NOT_A_REPORT, TRUNCATED
from neuron_top.sources.stream import (
    CommandSource,
    StreamSource,
    describe_exit,
    needs_shell,
)
from tests.unit.source_threads import Running

REPORT = json.dumps({"system_data": {"memory_info": {"memory_total_bytes": 1}}}).encode()


def collect(source: StreamSource | CommandSource) -> list[object]:
    stop = threading.Event()
    try:
        return list(source.items(stop))
    finally:
        source.close()


def states(items: list[object]) -> list[State]:
    return [i.state for i in items if isinstance(i, Status)]


def test_pipe_eof_ends_the_stream_after_delivering_every_report() -> None:
    r, w = os.pipe()
    os.write(w, REPORT + b"\nnoise\n" + REPORT)  # last one without newline
    os.close(w)
    items = collect(StreamSource(os.fdopen(r, "rb", buffering=0), "stdin", clock=lambda: 42.0))
    assert states(items) == [State.STARTING, State.LIVE, State.ENDED]
    reports = [i for i in items if isinstance(i, RawReport)]
    assert [r.data for r in reports] == [REPORT, REPORT]
    assert reports[0].ts == 42.0
    assert [i.reason for i in items if isinstance(i, Skipped)] == [NOT_A_REPORT]
    end = items[-1]
    assert isinstance(end, Status) and end.message == "stream ended (end of input on stdin) after 2 reports"


def test_truncated_tail_at_eof_is_reported() -> None:
    r, w = os.pipe()
    os.write(w, REPORT + b"\n" + REPORT[:20])
    os.close(w)
    items = collect(StreamSource(r, "stdin"))
    assert [i.reason for i in items if isinstance(i, Skipped)] == [TRUNCATED]
    assert states(items)[-1] is State.ENDED


def test_empty_input_ends_without_going_live() -> None:
    r, w = os.pipe()
    os.close(w)
    items = collect(StreamSource(r))
    assert states(items) == [State.STARTING, State.ENDED]
    assert "after 0 reports" in items[-1].message  # type: ignore[union-attr]


def test_close_from_another_thread_wakes_a_blocked_read() -> None:
    r, w = os.pipe()
    source = StreamSource(r)
    running = Running(source)
    os.write(w, REPORT + b"\n")
    running.wait_for(lambda i: isinstance(i, RawReport))
    assert running.close()
    assert states(running.got) == [State.STARTING, State.LIVE]  # closed, not ended: no ENDED status
    source.close()  # twice is fine
    os.close(w)


def test_stop_event_ends_a_quiet_stream() -> None:
    r, w = os.pipe()
    source = StreamSource(r)
    stop = threading.Event()
    stop.set()
    assert states(list(source.items(stop))) == [State.STARTING]
    source.close()
    os.close(w)


def test_command_streams_reports_and_keeps_stderr(tmp_path: Path) -> None:
    script = tmp_path / "emit.py"
    script.write_text(
        "import sys\n"
        f"sys.stdout.buffer.write({REPORT!r} + b'\\n' + {REPORT!r} + b'\\n')\n"
        "print('warming up', file=sys.stderr)\n"
    )
    items = collect(CommandSource(f"{sys.executable} {script}"))
    assert len([i for i in items if isinstance(i, RawReport)]) == 2
    end = items[-1]
    assert isinstance(end, Status) and end.state is State.ENDED
    assert "exited with status 0 after 2 reports" in end.message
    assert "warming up" in end.detail


def test_command_that_exits_non_zero_at_once_fails_with_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "fail.py"
    script.write_text(
        "import sys\nprint('ssh: connect to host trn: Connection refused', file=sys.stderr)\nsys.exit(255)\n"
    )
    items = collect(CommandSource(f"{sys.executable} {script}"))
    assert states(items) == [State.STARTING, State.FAILED]
    end = items[-1]
    assert isinstance(end, Status)
    assert "exited with status 255 after 0 reports" in end.message
    assert "Connection refused" in end.detail


def test_a_command_that_fails_after_reports_is_failed_with_its_exit_status(tmp_path: Path) -> None:
    """An ssh link that drops after reports failed too: FAILED, and the exit status travels in the Status (the
    header shows it, not only the message a narrow terminal cuts)."""
    script = tmp_path / "drop.py"
    script.write_text(f"import sys\nsys.stdout.buffer.write({REPORT!r} + b'\\n')\nsys.exit(255)\n")
    items = collect(CommandSource(f"{sys.executable} {script}"))
    assert states(items) == [State.STARTING, State.LIVE, State.FAILED]
    end = items[-1]
    assert isinstance(end, Status) and end.exit_status == 255
    assert "exited with status 255 after 1 report" in end.message


def test_missing_command_fails_without_raising() -> None:
    items = collect(CommandSource("/nonexistent/neuron-monitor --flag"))
    assert states(items) == [State.FAILED]
    assert "cannot run" in items[0].message  # type: ignore[union-attr]


def test_unparsable_command_fails_without_raising() -> None:
    items = collect(CommandSource("ssh 'unclosed", shell=False))
    assert states(items) == [State.FAILED]
    assert "cannot parse" in items[0].message  # type: ignore[union-attr]


def test_shell_command_runs_under_the_shell(tmp_path: Path) -> None:
    data = tmp_path / "reports.jsonl"
    data.write_bytes(REPORT + b"\n")
    items = collect(CommandSource(f"cat {data} | cat && echo oops >&2"))
    assert [i.data for i in items if isinstance(i, RawReport)] == [REPORT]
    assert "oops" in items[-1].detail  # type: ignore[union-attr]


def test_stderr_tail_keeps_only_the_last_lines_and_makes_them_printable(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nfor i in range(200):\n    print(f'line {i} \\x1b[2J', file=sys.stderr)\n")
    end = collect(CommandSource(f"{sys.executable} {script}"))[-1]
    assert isinstance(end, Status)
    lines = end.detail.splitlines()
    assert len(lines) == 50 and lines[-1].startswith("line 199")
    assert "\x1b" not in end.detail


def test_close_terminates_a_running_command(tmp_path: Path) -> None:
    script = tmp_path / "forever.py"
    script.write_text(
        "import sys, time\n"
        f"sys.stdout.buffer.write({REPORT!r} + b'\\n'); sys.stdout.flush()\n"
        "time.sleep(600)\n"
    )
    source = CommandSource(f"{sys.executable} {script}")
    running = Running(source)
    running.wait_for(lambda i: isinstance(i, RawReport))
    child = source._child
    assert child is not None
    assert running.close()
    assert child.proc.poll() is not None


def test_needs_shell() -> None:
    assert not needs_shell("ssh trn-host neuron-monitor -c /etc/m.conf")
    assert not needs_shell("ssh trn-host 'neuron-monitor | tee x'")  # quoted: ssh gets it as one argument
    assert needs_shell("neuron-monitor | tee /tmp/x")
    assert needs_shell("cd /x && neuron-monitor")
    assert needs_shell("ssh $HOST neuron-monitor")


def test_describe_exit() -> None:
    assert describe_exit(3) == "exited with status 3"
    assert describe_exit(-9) == "was killed by SIGKILL"
    assert describe_exit(None) == "is still running"


def test_take_stdin_without_a_tty_leaves_fd_0_alone(tmp_path: Path) -> None:
    """Run in a child without a controlling terminal (new session), stdin a pipe."""
    script = tmp_path / "child.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from neuron_top.sources.stream import take_stdin_for_reports\n"
        "before = os.fstat(0).st_ino\n"
        "f = take_stdin_for_reports()\n"
        "print(f.read().decode(), os.fstat(0).st_ino == before, os.isatty(0))\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], input=b"hello", capture_output=True, start_new_session=True, timeout=30
    )
    assert out.stdout.decode().split() == ["hello", "True", "False"], out.stderr


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a pty")
def test_take_stdin_with_a_tty_moves_the_pipe_and_reopens_the_terminal(tmp_path: Path) -> None:
    """A child whose controlling terminal is a pty and whose stdin is a pipe, as in `neuron-monitor | neuron-top`."""
    script = tmp_path / "child.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "r, w = os.pipe()\n"
        "os.write(w, b'report-bytes'); os.close(w)\n"
        "os.dup2(r, 0); os.close(r)\n"
        "assert not os.isatty(0)\n"
        "from neuron_top.sources.stream import take_stdin_for_reports\n"
        "f = take_stdin_for_reports()\n"
        "print('RESULT', f.read().decode(), os.isatty(0), flush=True)\n"
    )
    pid, master = pty.fork()
    if pid == 0:  # child: the pty is its controlling terminal
        try:
            os.execv(sys.executable, [sys.executable, str(script)])
        finally:
            os._exit(127)
    output = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.waitpid(pid, 0)
    os.close(master)
    assert b"RESULT report-bytes True" in output, output


def test_reports_split_across_many_small_writes_arrive_whole() -> None:
    pretty = json.dumps(json.loads(REPORT), indent=2).replace("\n", "\r\n").encode()
    data = (b"\xef\xbb\xbf" + pretty + b"\r\n" + REPORT + b"\n") * 20
    r, w = os.pipe()

    def writer() -> None:
        for i in range(0, len(data), 7):
            os.write(w, data[i : i + 7])
        os.close(w)

    thread = threading.Thread(target=writer)
    thread.start()
    items = collect(StreamSource(r))
    thread.join()
    reports = [i for i in items if isinstance(i, RawReport)]
    assert len(reports) == 40
    assert all(json.loads(r.data) == json.loads(REPORT) for r in reports)
    assert not any(isinstance(i, Skipped) for i in items)


def test_a_report_without_newline_arrives_while_the_pipe_stays_open() -> None:
    r, w = os.pipe()
    running = Running(StreamSource(r))
    os.write(w, REPORT)  # no newline, and the writer keeps the pipe open
    running.wait_for(lambda i: isinstance(i, RawReport))
    assert running.close()
    os.close(w)
    assert [i.data for i in running.got if isinstance(i, RawReport)] == [REPORT]


def test_a_flood_of_garbage_is_read_and_skipped_in_bulk() -> None:
    """8 MB of log lines and then one report: every line counted, but as a few hundred skipped items (one per
    chunk read), not one each (which cost a feed event and a UI message per line: a whole core)."""
    from neuron_top.feed import Feed, Report, SkippedInput

    lines = 100_000
    noise = b"".join(b"2026-01-01 WARN nrt: model not ready, retrying (attempt %06d)\n" % i for i in range(lines))
    r, w = os.pipe()

    def write() -> None:
        with os.fdopen(w, "wb") as f:
            f.write(noise + REPORT + b"\n")

    writer = threading.Thread(target=write)
    writer.start()
    events = list(Feed(StreamSource(r, "flood")).events())
    writer.join()
    skips = [e for e in events if isinstance(e, SkippedInput)]
    assert skips[-1].total == lines and all(e.skipped.reason == NOT_A_REPORT for e in skips)
    assert len(skips) <= len(noise) // 4096 + 2
    assert isinstance(events[-2], Report)


class WaitsRecorded(threading.Event):
    """A ``closed`` event for ``pump`` that records the waits asked of it instead of waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return False


def pumped(data: bytes) -> tuple[list[RawReport | Skipped], list[float | None]]:
    """What ``pump`` yields for ``data`` written to a pipe at once, and the waits it asked for."""
    from neuron_top.sources.stream import Waker, pump

    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, data) and None, os.close(w)))
    writer.start()
    closed, waker = WaitsRecorded(), Waker()
    got = list(pump(r, threading.Event(), closed, waker, lambda: 0.0))
    writer.join()
    os.close(r)
    waker.close()
    return got, closed.waits


def test_a_big_read_of_nothing_but_garbage_makes_the_reader_wait_and_a_report_does_not() -> None:
    """Backpressure on a flood: after a big read with no report in it the reader waits ``FLOOD_PAUSE`` (the
    writer then blocks on a full pipe); reads with a report are never held back."""
    from neuron_top.sources import stream
    from neuron_top.sources.stream import FLOOD_PAUSE, READ_SIZE

    noise = b"WARN nrt: not ready\n" * (READ_SIZE // 20 * 4)  # four full reads of garbage
    reports = (REPORT + b"\n") * (READ_SIZE // len(REPORT) * 2)  # two full reads of reports
    got, waits = pumped(noise + reports)
    assert sum(isinstance(x, RawReport) for x in got) == reports.count(b"\n")
    assert 1 <= waits.count(FLOOD_PAUSE) <= len(noise) // (READ_SIZE // 2) + 1
    assert stream.FLOOD_PAUSE > 0


@pytest.mark.parametrize("indent", [None, 1])
def test_a_report_bigger_than_a_read_is_not_held_back(indent: int | None) -> None:
    """A trn2 report (~110 KB) takes two reads: the first holds no whole report, but it is the head of one, not
    garbage, so the reader does not wait ``FLOOD_PAUSE`` (it did, every report: 20 ms late and a wake-up more).
    One-line and pretty-printed alike."""
    from neuron_top.sources.stream import FLOOD_PAUSE, READ_SIZE

    big = json.dumps({"system_data": {"vcpu_usage": {"usage_data": {str(i): {"idle": 1.5} for i in range(8000)}}}},
                     indent=indent).encode() + b"\n"
    assert len(big) > 2 * READ_SIZE
    got, waits = pumped(big * 3)
    assert sum(isinstance(x, RawReport) for x in got) == 3
    assert FLOOD_PAUSE not in waits


class _Polls:
    """``select.poll`` recording the timeout of every ``poll`` call (None: blocked until input or a wake-up)."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.timeouts: list[float | None] = []

    def __call__(self) -> object:
        inner = self.real()  # type: ignore[operator]
        outer = self

        class Poller:
            def register(self, *args: object) -> None:
                inner.register(*args)

            def poll(self, timeout: float | None = None) -> list[tuple[int, int]]:
                outer.timeouts.append(timeout)
                return inner.poll(timeout)  # type: ignore[no-any-return]

        return Poller()


def test_a_quiet_stream_with_a_stop_event_blocks_without_waking_and_stop_wakes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Between reports the reader sleeps until input comes: with a StopEvent (the Feed's) nothing needs a look
    every POLL_SECONDS, so setting it wakes the read at once. It had woken 4 times a second to look at stop."""
    import select as select_module

    import neuron_top.sources.stream as stream_module
    from neuron_top.sources.stream import StopEvent

    polls = _Polls(select_module.poll)
    monkeypatch.setattr(stream_module.select, "poll", polls)
    r, w = os.pipe()
    source = StreamSource(r)
    stop = StopEvent()
    got: list[object] = []
    thread = threading.Thread(target=lambda: got.extend(source.items(stop)))
    thread.start()
    os.write(w, REPORT + b"\n")
    deadline = time.monotonic() + 30
    while not any(isinstance(i, RawReport) for i in got):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.write(w, REPORT[:10])  # a buffered partial line: a quiet stream may complete it, so that poll has a timeout
    while len(polls.timeouts) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    assert polls.timeouts[0] is None and polls.timeouts[1] is None  # waiting for the report, then for more
    assert polls.timeouts[2] == stream_module.POLL_SECONDS * 1000  # a partial line buffered
    assert states(got) == [State.STARTING, State.LIVE]  # stopped: no ENDED status
    source.close()
    os.close(w)


def test_a_plain_event_stop_is_still_looked_at_every_poll_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    import select as select_module

    import neuron_top.sources.stream as stream_module

    polls = _Polls(select_module.poll)
    monkeypatch.setattr(stream_module.select, "poll", polls)
    monkeypatch.setattr(stream_module, "POLL_SECONDS", 0.01)
    r, w = os.pipe()
    source = StreamSource(r)
    stop = threading.Event()
    thread = threading.Thread(target=lambda: list(source.items(stop)))
    thread.start()
    deadline = time.monotonic() + 30
    while len(polls.timeouts) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    stop.set()  # no wake-up: the next look sees it
    thread.join(10)
    assert not thread.is_alive()
    assert set(polls.timeouts) == {10.0}
    source.close()
    os.close(w)

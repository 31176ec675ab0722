"""End-to-end: SIGTERM, SIGHUP and Ctrl+C end the dashboard, replay and the timeline cleanly in a real terminal.

Before, SIGTERM and SIGHUP killed the process the default way: the terminal stayed in the alternate screen with
mouse reporting on and the cursor hidden, the status was 143, and a ``--command`` child went on running, adopted by
PID 1. Now each ends as after ``q``: tmux's ``alternate_on`` is back to 0, the cursor is on, mouse reporting off,
the child's process group is gone, and the status is 128+signal (0 after a quit key, Ctrl+C included).
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.test_tmux import PY, Tmux, nt

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


@pytest.fixture
def term() -> Iterator[Callable[[int, int], Tmux]]:
    made: list[Tmux] = []

    def make(width: int, height: int) -> Tmux:
        made.append(Tmux(width, height))
        return made[-1]

    yield make
    for t in made:
        t.kill()

EMITTER = r"""
import json, os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
i = 0
while True:
    print(json.dumps({"system_data": {"vcpu_usage": {"period": 0.2, "error": ""}}, "i": i}), flush=True)
    i += 1
    time.sleep(0.2)
"""


def children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def program_pid(t: Tmux) -> int:
    """The neuron-top process: the child of the pane's shell."""
    shell = int(t.fmt("#{pane_pid}"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        kids = children_of(shell)
        if kids:
            return kids[0]
        time.sleep(0.05)
    pytest.fail("no program under the pane's shell")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
    return bool(stat) and stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def start_held(t: Tmux, command: str, tmp_path: Path) -> Path:
    """Run ``command`` and keep the pane's shell alive after it (a dead pane always reports its cursor off);
    returns the file its exit status is written to."""
    status = tmp_path / "status"
    t.start(f"{command}; echo $? > {status}; sleep 60")
    return status


def exit_status(status: Path, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = status.read_text().strip() if status.exists() else ""
        if text:
            return int(text)
        time.sleep(0.05)
    pytest.fail("the program did not exit")


def terminal_restored(t: Tmux) -> None:
    assert t.fmt("#{alternate_on}") == "0"
    assert t.fmt("#{cursor_flag}") == "1"
    assert t.fmt("#{mouse_any_flag}") == "0" and t.fmt("#{mouse_all_flag}") == "0"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_dashboard_restores_the_terminal_and_stops_its_command(term, tmp_path: Path,
                                                                               sig: signal.Signals) -> None:
    emitter = tmp_path / "emit.py"
    emitter.write_text(EMITTER)
    kid_file = tmp_path / "kid.pid"
    t = term(100, 30)
    status = start_held(t, nt("--command", f"{PY} {emitter} {kid_file} | cat", "--record",
                               str(tmp_path / "rec.jsonl.gz")), tmp_path)
    t.wait_for("LIVE")
    assert t.fmt("#{alternate_on}") == "1"
    kid = int(kid_file.read_text())
    assert alive(kid)
    os.kill(program_pid(t), sig)
    assert exit_status(status) == 128 + sig
    terminal_restored(t)
    assert gone_soon(kid), "the --command child outlived neuron-top"
    from neuron_top.recording.index import RecordingIndex

    with RecordingIndex(tmp_path / "rec.jsonl.gz") as ix:  # closed properly: the gzip stream has its end
        ix.wait()
        assert len(ix) >= 1 and ix.skipped == 0
    import gzip

    gzip.decompress((tmp_path / "rec.jsonl.gz").read_bytes())  # raises on a stream without its trailer


@pytest.mark.parametrize(("what", "sig"), [("replay", signal.SIGTERM), ("trace", signal.SIGHUP)])
def test_a_signal_to_replay_and_the_timeline(term, tmp_path: Path, what: str, sig: signal.Signals) -> None:
    t = term(100, 30)
    if what == "replay":
        from neuron_top.recording.writer import RecordingWriter
        from neuron_top.sources.demo import generate

        rec = tmp_path / "r.jsonl"
        with RecordingWriter(rec) as w:
            for i, data in enumerate(generate("inf1.xlarge", 1, 20)):
                w.write(data, 1767225600.0 + i)
        status = start_held(t, nt("replay", str(rec)), tmp_path)
        t.wait_for("REPLAY")
    else:
        status = start_held(t, nt("trace", str(ROOT / "tests" / "data" / "trace_small.json")), tmp_path)
        t.wait_for(lambda s: "Lane" in s or "lane" in s or "NC" in s)
    assert t.fmt("#{alternate_on}") == "1"
    os.kill(program_pid(t), sig)
    assert exit_status(status) == 128 + sig
    terminal_restored(t)


def test_ctrl_c_quits_even_from_a_prompt(term, tmp_path: Path) -> None:
    emitter = tmp_path / "emit.py"
    emitter.write_text(EMITTER)
    kid_file = tmp_path / "kid.pid"
    t = term(100, 30)
    status = start_held(t, nt("--command", f"{PY} {emitter} {kid_file}"), tmp_path)
    t.wait_for("LIVE")
    t.keys("/")  # the filter prompt holds the keyboard
    t.keys("C-c")
    assert exit_status(status) == 0  # a quit key
    terminal_restored(t)
    assert gone_soon(int(kid_file.read_text()))


def test_a_hangup_after_the_terminal_is_gone_still_exits(tmp_path: Path) -> None:
    """A closed ssh session: the terminal goes first (writes fail with EIO), SIGHUP comes after. Textual's writer
    thread died on the first failed write, the app kept queueing frames for it, and once its queue was full the
    exit blocked for ever on the next write, with every child (a fleet's ssh streams) left running."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    app = subprocess.Popen([PY, "-m", "neuron_top", "demo", "--seed", "3", "--period", "0.05"], cwd=ROOT,
                           stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                           env={**os.environ, "TERM": "xterm-256color"})
    os.close(slave)
    try:
        seen, end = b"", time.monotonic() + 30
        while b"NeuronCore" not in seen and time.monotonic() < end:  # the dashboard is up
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
        assert b"NeuronCore" in seen
        os.close(master)  # the terminal is gone; 20 reports a second keep the app drawing into it
        master = -1
        time.sleep(4)
        app.send_signal(signal.SIGHUP)
        assert app.wait(timeout=20) == 128 + signal.SIGHUP
    finally:
        if master >= 0:
            os.close(master)
        if app.poll() is None:
            app.kill()
            app.wait(10)


def test_suspend_and_resume_still_work(term, tmp_path: Path) -> None:
    """SIGTSTP (``kill -TSTP``) gives the terminal back and stops; SIGCONT takes it again. Before, the resumed
    input thread died on the wake-up pipe the suspension had closed (a traceback on screen), and the header,
    unchanged since before the suspension, stayed blank."""
    t = term(100, 30)
    status = start_held(t, nt("demo", "--instance", "inf1.xlarge", "--seed", "3"), tmp_path)
    t.wait_for("DEMO")
    pid = program_pid(t)
    os.kill(pid, signal.SIGTSTP)
    deadline = time.monotonic() + 15
    while t.fmt("#{alternate_on}") != "0" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert t.fmt("#{alternate_on}") == "0"  # suspended: the shell's screen is back
    os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 15
    while t.fmt("#{alternate_on}") != "1" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert t.fmt("#{alternate_on}") == "1"  # resumed
    t.wait_for("DEMO")
    t.keys("q")
    assert exit_status(status, timeout=8) == 0
    terminal_restored(t)

"""End-to-end: one exit policy (``cli/signals.py``) for every TUI, whichever renderer draws it.

Each case runs the real program in a pseudo-terminal that is its controlling terminal, as a login shell's is, with a
child of its own (the dashboard's ``--command``, the fleet's ssh stream) and a recording:

* SIGINT and SIGTERM end it as ``q`` does: status 128+signal, the terminal back (main screen, cursor on, mouse off,
  echo and line editing on), the child stopped, the recording closed (its gzip trailer written: a forced exit
  would leave it out);
* closing the terminal (the kernel's SIGHUP, and its SIGCONT) ends it the same way, although every write to the
  terminal now fails: ``--render textual`` was still running 25 s later;
* a clean exit that hangs is forced ``WATCHDOG`` (10) seconds after the signal, or at once by a second signal,
  terminal reset and children stopped. With the app's own SIGTERM handler in the way, it took 80 s; the fleet had
  no policy at all.

Signal, view and renderer are paired so that every pair of the three is tried once (six runs, not twelve); the
10-second hang runs once for the dashboard and once for the fleet, on different renderers.
"""

from __future__ import annotations

import fcntl
import gzip
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from neuron_top.cli.signals import WATCHDOG
from tests.conftest import ROOT
from tests.e2e.test_clean_exits import EMITTER, gone_soon
from tests.unit.test_clean_exits import wait_file

pytestmark = [pytest.mark.e2e]

PY = sys.executable


HANG = """
import sys, time
from pathlib import Path
from neuron_top.tui.app import NeuronTopApp
from neuron_top.cli.main import main

def on_unmount(self):  # a clean exit that never ends: the event loop stuck in the app's last handler
    Path(sys.argv[1]).write_text("hanging")
    time.sleep(3600)

NeuronTopApp.on_unmount = on_unmount
sys.exit(main(sys.argv[2:]))
"""
"""The program with its exit made to hang (argv: the file it writes when it hangs, then neuron-top's arguments)."""




def _take_terminal() -> None:
    """In the child, after ``setsid``: the pty becomes its controlling terminal (``/dev/tty``, the hangup)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """The program in a pseudo-terminal of 100x30; a thread keeps reading what it writes."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, preexec_fn=_take_terminal)
        os.close(slave)
        self.out = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                with self._lock:
                    self.out += chunk

    def seen(self) -> bytes:
        with self._lock:
            return bytes(self.out)

    def wait_for(self, text: bytes, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.seen():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"{text!r} never shown; status {self.proc.poll()}; output ends {self.seen()[-600:]!r}")

    def hang_up(self) -> None:
        """Close the terminal, as a dropped ssh session does: the kernel sends SIGHUP and SIGCONT."""
        self._stop.set()
        self._reader.join()
        os.close(self.master)
        self.master = -1

    def restored(self, since: int) -> None:
        """What was written after byte ``since`` puts the terminal back, and the line settings are back."""
        after = self.seen()[since:]
        assert b"\x1b[?1049l" in after  # the main screen
        assert b"\x1b[?25h" in after  # the cursor
        assert b"\x1b[?1000l" in after  # mouse reporting off
        lflag = termios.tcgetattr(self.master)[3]
        assert lflag & termios.ECHO and lflag & termios.ICANON

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        if self.master >= 0:
            self._stop.set()
            self._reader.join()
            os.close(self.master)




def start(view: str, render: str, tmp_path: Path, *, hang: bool = False) -> tuple[Terminal, int, Path]:
    """The dashboard (``--command``) or the fleet (one host over a stand-in for ssh), recording to a .gz; returns
    the terminal, the child's pid and the recording once the child runs and the view is up."""
    emitter = tmp_path / "emit.py"
    emitter.write_text(EMITTER)
    rec = tmp_path / "rec.jsonl.gz"
    if view == "dashboard":
        args = ["--command", f"{PY} {emitter} {tmp_path / 'kid'}", "--record", str(rec)]
        kid, shown = tmp_path / "kid", b"LIVE"
    else:
        args = ["fleet", "--ssh", "alpha", "--command", f"{PY} {emitter} {tmp_path}/kid-{{host}}", "--record",
                str(rec), "--refresh", "0.5"]
        kid, shown = tmp_path / "kid-alpha", b"alpha"
    args += ["--render", render]
    argv = [PY, "-c", HANG, str(tmp_path / "hanging"), *args] if hang else [PY, "-m", "neuron_top", *args]
    t = Terminal(argv)
    try:
        pid = int(wait_file(kid))
        t.wait_for(shown)
        wait_file_size(rec)
    except BaseException:
        t.close()
        raise
    return t, pid, rec


def wait_file_size(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > 0:
            return
        time.sleep(0.05)
    pytest.fail(f"nothing recorded to {path}")


CASES = [  # every pair of (signal, view), (signal, renderer) and (view, renderer) once
    ("SIGINT", "dashboard", "fast"),
    ("SIGINT", "fleet", "textual"),
    ("SIGTERM", "dashboard", "textual"),
    ("SIGTERM", "fleet", "fast"),
    ("SIGHUP", "dashboard", "textual"),
    ("SIGHUP", "fleet", "fast"),
]


@pytest.mark.parametrize(("sig", "view", "render"), CASES)
def test_a_signal_ends_it_as_q_does(tmp_path: Path, sig: str, view: str, render: str) -> None:
    signum = signal.Signals[sig]
    t, kid, rec = start(view, render, tmp_path)
    try:
        since = len(t.seen())
        if signum == signal.SIGHUP:
            t.hang_up()  # the kernel's SIGHUP, to a terminal that is gone
        else:
            os.kill(t.proc.pid, signum)
        assert t.proc.wait(timeout=WATCHDOG + 20) == 128 + signum
        if signum != signal.SIGHUP:
            t.restored(since)
        assert gone_soon(kid, 10.0), "the child outlived neuron-top"
        gzip.decompress(rec.read_bytes())  # closed, its trailer written: the clean way, not the watchdog's
    finally:
        t.close()


@pytest.mark.parametrize(("view", "render"), [("dashboard", "fast"), ("fleet", "textual")])
def test_an_exit_that_hangs_is_forced_after_the_watchdog(tmp_path: Path, view: str, render: str) -> None:
    t, kid, _ = start(view, render, tmp_path, hang=True)
    try:
        since = len(t.seen())
        sent = time.monotonic()
        os.kill(t.proc.pid, signal.SIGTERM)
        assert t.proc.wait(timeout=WATCHDOG + 20) == 128 + signal.SIGTERM
        took = time.monotonic() - sent
        assert (tmp_path / "hanging").exists()  # it did hang: the exit was the watchdog's
        assert took >= WATCHDOG - 0.5
        t.restored(since)  # reset by hand
        assert gone_soon(kid, 10.0)
    finally:
        t.close()


def test_a_second_signal_ends_a_hanging_exit_at_once(tmp_path: Path) -> None:
    t, kid, _ = start("dashboard", "textual", tmp_path, hang=True)
    try:
        since = len(t.seen())
        os.kill(t.proc.pid, signal.SIGINT)
        wait_file(tmp_path / "hanging")
        os.kill(t.proc.pid, signal.SIGTERM)
        assert t.proc.wait(timeout=WATCHDOG + 20) == 128 + signal.SIGTERM  # the second's status, not the watchdog's
        t.restored(since)
        assert gone_soon(kid, 10.0)
    finally:
        t.close()

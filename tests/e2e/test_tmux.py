"""End-to-end: the real program in a real terminal (tmux), driven by keys and read back with capture-pane.

Pilot tests run the app headless; these catch what only a terminal shows: the program starting from the CLI,
keys arriving through a tty (also when stdin is a pipe of reports), the exit status, and escape sequences in
untrusted strings reaching the terminal. Each test has its own tmux server (``-L``) so they never see each
other's panes and can run in parallel. Waits poll the screen with a generous timeout; nothing is a fixed sleep.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (needed to drive a real terminal)"),
]

PY = sys.executable
TIMEOUT = 20.0
"""Seconds to wait for text; a loaded 2-core machine starts the app in 1-3 s, so this only bounds failures."""
ESC_RE = re.compile(r"\x1b|\x9b")


class Tmux:
    """One private tmux server with one pane running one command; remain-on-exit keeps its last screen."""

    def __init__(self, width: int, height: int) -> None:
        self.socket = f"nt-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.width, self.height = width, height
        self.status_file = Path(tempfile.gettempdir()) / f"{self.socket}.status"

    def tmux(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                             text=True, check=check, timeout=10)
        return out.stdout

    def start(self, command: str) -> None:
        """Run ``command`` (a shell line) from the repo root, so the worktree's code is what runs."""
        # pytest exports COLUMNS/LINES for its own output; Textual (via shutil) would believe them over the tty.
        # The shell writes the exit status to a file: tmux sometimes leaves the exited pane process unreaped
        # (a zombie, pane_dead still 0) for many seconds, so #{pane_dead_status} alone is not reliable.
        line = (f"unset COLUMNS LINES; cd {shlex.quote(str(ROOT))} && {command}; "
                f"echo $? > {shlex.quote(str(self.status_file))}")
        self.tmux("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                  "new-session", "-d", "-s", "main", "-x", str(self.width), "-y", str(self.height),
                  "-e", "TERM=xterm-256color", "-e", "COLORTERM=truecolor", line)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main", check=False)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def fmt(self, spec: str) -> str:
        return self.tmux("display-message", "-p", "-t", "main", spec).strip()

    def dead(self) -> bool:
        return self.status_file.exists() or self.fmt("#{pane_dead}") == "1"

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = TIMEOUT) -> str:
        """Poll the screen until ``what`` (a substring or a predicate) holds; fail with the last screen."""
        test = (lambda s: what in s) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return screen
            if self.dead():
                screen = self.screen()
                if test(screen):
                    return screen
                pytest.fail(f"the program exited (status {self.wait_exit(5)}) while waiting for "
                            f"{what!r}; screen:\n{screen}")
            time.sleep(0.1)
        pytest.fail(f"timed out after {timeout:.0f}s waiting for {what!r}; screen:\n{screen}")

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        """The exit status of the command line (of its last program, for a pipeline)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.status_file.read_text().strip() if self.status_file.exists() else ""
            if text:
                return int(text)
            time.sleep(0.1)
        pytest.fail(f"the program did not exit within {timeout:.0f}s; screen:\n{self.screen()}")

    def kill(self) -> None:
        """Stop the server and remove its socket file (tmux leaves it behind after kill-server)."""
        sock = self.tmux("display-message", "-p", "#{socket_path}", check=False).strip()
        self.tmux("kill-server", check=False)
        if sock:
            Path(sock).unlink(missing_ok=True)
        self.status_file.unlink(missing_ok=True)


@pytest.fixture
def term() -> Iterator[Callable[[int, int], Tmux]]:
    made: list[Tmux] = []

    def make(width: int = 200, height: int = 60) -> Tmux:
        t = Tmux(width, height)
        made.append(t)
        return t

    yield make
    for t in made:
        t.kill()


def nt(*args: str) -> str:
    """The shell words for ``neuron-top ARGS`` run from this tree."""
    return " ".join(shlex.quote(a) for a in (PY, "-m", "neuron_top", *args))


# --- (a) the full dashboard ---------------------------------------------------------------------------------


def test_demo_dashboard_keys_and_clean_quit(term) -> None:
    t = term(200, 60)
    t.start(nt("demo", "--seed", "7", "--instance", "trn2.48xlarge"))
    # The screen settles over the first reports (panels grow): wait for the whole grid, 16 devices of 4 cores (the
    # grid's own last row: "ND15" also shows in the ECC panel's "no ECC errors on ND0-ND15", which a capture taken
    # while the first frame is still being written can hold before the grid's last rows), and every panel.
    t.wait_for(lambda s: re.search(r"ND15 (?:[^\n]*\[){4}", s) is not None and "NC3" in s
               and all(w in s for w in ("DEMO", "NeuronCore", "vCPU", "Memory", "ECC", "Latency")))

    t.keys("f")
    t.wait_for("TFLOPS per core (avg")
    t.keys("2")
    # The second tab is the first app; the tab bar marks the selection with >name<.
    t.wait_for(lambda s: re.search(r"\[2\]>[^<]+<", s) is not None)
    t.keys("q")
    assert t.wait_exit() == 0


def test_help_screen(term) -> None:
    t = term(200, 60)
    t.start(nt("demo", "--seed", "7", "--instance", "trn2.48xlarge"))
    t.wait_for("NeuronCore")
    t.keys("?")
    t.wait_for("neuron-top keys")
    t.keys("Escape")
    t.wait_for(lambda s: "neuron-top keys" not in s)
    t.keys("q")
    assert t.wait_exit() == 0


# --- (b) a small terminal --------------------------------------------------------------------------------------


LOWER = re.compile(r"^ ECC\b|^ Apps:", re.M)  # the apps panel's title, not the tab bar (" Apps  [1]>all<")
"""Panel titles below the fold at 80x24 (the first screen ends in the memory summary)."""


def test_small_terminal_tab_reaches_lower_panels(term) -> None:
    t = term(80, 24)
    t.start(nt("demo", "--seed", "7", "--instance", "trn2.48xlarge"))
    # the grid's last device with its cells (the ECC line's "ND0-ND15" shows before the grid is drawn)
    first = t.wait_for(lambda s: "DEMO" in s and re.search(r"ND15 [^\n]*\[", s) is not None)
    assert not LOWER.search(first), "the lower panels start below the fold at 80x24"

    def lower_visible(screen: str) -> bool:
        return LOWER.search(screen) is not None

    # Tab walks the focus panel by panel (tabs, grid, vCPU, executions, ...) and scrolls the focused one into
    # view. Stop at the first lower panel seen, so a slow app cannot be tabbed past them to the top again.
    for _ in range(8):
        t.keys("Tab")
        try:
            screen = t.wait_for(lower_visible, timeout=3.0)
            break
        except pytest.fail.Exception:
            continue
    else:
        pytest.fail(f"Tab never brought a lower panel into view:\n{t.screen()}")
    assert "DEMO" in screen, "the header stays visible while the panels scroll"
    t.keys("q")
    assert t.wait_exit() == 0


# --- (b2) everything that matters on the first screen at 120x40 ---------------------------------------------

FIRST_SCREEN = {
    "core utilization": re.compile(r"NeuronCore v\w+ utilization % \(avg [\d.]+%\)"),
    "every core cell": re.compile(r"ND15 (?:[^\n]*\[ *\d+%\]){2}"),
    "vCPU": re.compile(r"vCPU .*\d+ vCPUs · [\d.]+% busy"),
    "memory": re.compile(r"Memory Usage Summary[\s\S]*Device +Total: [\d.]+[KMGT]?B"),
    "ECC": re.compile(r"^ ECC\b", re.M),
    "latency p50/p99": re.compile(r"p50 +p99[\s\S]*\d(?:ms|us|s) +[\d.]+(?:ms|us|s)"),
    "errors": re.compile(r"\d+ errors[\s\S]*err/s"),
}


@pytest.mark.parametrize("instance", ["trn2.48xlarge", "trn1.32xlarge"])
def test_120x40_first_screen_has_everything_that_matters(term, instance: str) -> None:
    """Core utilization, vCPU, memory, ECC, latency and errors, without a key press (issue 25, deliverable 1)."""
    t = term(120, 40)
    t.start(nt("demo", "--seed", "7", "--instance", instance))
    screen = t.wait_for(lambda s: all(p.search(s) for p in FIRST_SCREEN.values()))
    assert len(screen.splitlines()) <= 40
    t.keys("q")
    assert t.wait_exit() == 0


# --- (c) reports on a pipe ------------------------------------------------------------------------------------


def test_pipe_once_prints_plain_text() -> None:
    line = f"{nt('demo', '--emit', '--count', '5', '--period', '0.05', '--seed', '7')} | {nt('--once')}"
    out = subprocess.run(["sh", "-c", line], cwd=ROOT, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    text = out.stdout.decode()
    assert "NeuronCore" in text or "NC" in text
    assert "trn2.48xlarge" in text
    assert not ESC_RE.search(text), "a text snapshot for a pipe must not carry escape sequences"


def test_pipe_tui_reads_keys_from_tty_and_keeps_data_when_stream_ends(term, tmp_path: Path) -> None:
    pidfile = tmp_path / "producer.pid"
    producer = (f"sh -c 'echo $$ > {shlex.quote(str(pidfile))}; exec "
                + nt("demo", "--emit", "--period", "0.2", "--seed", "7").replace("'", "'\\''") + "'")
    t = term(200, 60)
    t.start(f"{producer} | {nt()}")
    t.wait_for(lambda s: "LIVE" in s and "NeuronCore" in s and "[" in s and "%]" in s)
    # Keys reach the app although stdin is the report pipe: it reopened /dev/tty like less does.
    t.keys("f")
    t.wait_for("TFLOPS per core (avg")
    os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
    screen = t.wait_for(lambda s: "ENDED" in s.upper() and "ended" in s.lower())
    assert "TFLOPS per core (avg" in screen and "ND15" in screen, "the last data stays on screen after the stream ends"
    t.keys("q")
    assert t.wait_exit() == 0


# --- (d) replay ----------------------------------------------------------------------------------------------


def test_replay_end_key(term, tmp_path: Path) -> None:
    rec = tmp_path / "rec.ndjson"
    subprocess.run(["sh", "-c", f"{nt('demo', '--emit', '--count', '50', '--period', '0.01', '--seed', '7')} > "
                    f"{shlex.quote(str(rec))}"], cwd=ROOT, check=True, timeout=60)
    assert len(rec.read_bytes().splitlines()) == 50
    t = term(200, 60)
    t.start(nt("replay", str(rec)))
    # The 50 reports span 0.5 s, so playback may reach the end before the first look: pause, go to the start
    # (g), then check that G jumps to the end.
    t.wait_for(lambda s: "REPLAY" in s and "/50" in s)
    t.keys("p", "g")
    t.wait_for("report 1/50")
    t.keys("G")
    t.wait_for("report 50/50")
    t.keys("q")
    assert t.wait_exit() == 0


# --- (e) hostile strings -------------------------------------------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07[red]boom"


def test_hostile_tag_shows_literally_and_cannot_set_the_title(term, tmp_path: Path) -> None:
    out = subprocess.run([PY, "-m", "neuron_top", "demo", "--emit", "--count", "3", "--period", "0.01",
                          "--seed", "7", "--instance", "inf2.48xlarge"], cwd=ROOT, capture_output=True,
                         check=True, timeout=60)
    rec = tmp_path / "hostile.ndjson"
    lines = []
    for raw in out.stdout.splitlines():
        doc = json.loads(raw)
        for rt in doc["neuron_runtime_data"]:
            rt["neuron_runtime_tag"] = HOSTILE
        lines.append(json.dumps(doc))  # ensure_ascii: the ESC travels as \u001b, as JSON from a tool would
    assert "\\u001b]0;pwned" in lines[0]
    rec.write_text("\n".join(lines) + "\n")

    # Control: in this tmux an OSC 0 does set the pane title, so the check below can fail.
    ctl = term(80, 24)
    ctl.start(r"printf '\033]0;pwned\007'; sleep 30")
    deadline = time.monotonic() + TIMEOUT
    while ctl.fmt("#{pane_title}") != "pwned" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ctl.fmt("#{pane_title}") == "pwned", "control: tmux should honour OSC 0 from a program"

    t = term(200, 60)
    t.start(nt("replay", str(rec)))
    screen = t.wait_for(lambda s: "REPLAY" in s and "[red]boom" in s)
    assert "pwned" not in t.fmt("#{pane_title}")
    assert "[red]boom" in screen
    t.keys("q")
    assert t.wait_exit() == 0
    assert "pwned" not in t.fmt("#{pane_title}")


def test_ctrl_l_repaints_what_another_program_wrote_over(term) -> None:
    """The dashboard sends only cells that differ from its copy of the terminal, so text another program writes
    over it (``wall``, a background job) would stay until those cells change. Ctrl+L sends every cell again."""
    t = term(120, 40)
    t.start(nt("demo", "--instance", "inf2.48xlarge", "--seed", "3"))
    t.wait_for("ND11")
    t.keys("p")  # paused: nothing else repaints the cells under the intruder
    t.wait_for("PAUSED")
    tty = t.fmt("#{pane_tty}")
    with open(tty, "w") as f:  # the pane's terminal, as another process would write to it
        f.write("\x1b[20;5HINTRUDER-TEXT-FROM-ANOTHER-PROGRAM")
    t.wait_for("INTRUDER-TEXT")
    t.keys("C-l")
    t.wait_for(lambda s: "INTRUDER-TEXT" not in s and "PAUSED" in s)
    assert "ND11" in t.screen()


@pytest.mark.parametrize("how", ["option", "environment"])
def test_textuals_own_drawing_on_a_real_terminal(term, how: str) -> None:
    """The off switch of the render engine, as a user would reach for it: ``--render textual`` or
    ``NEURON_TOP_RENDER=textual``. The dashboard is drawn whole, keys work, and the program exits cleanly; with a
    value it does not know in the environment it says so and draws with the engine."""
    t = term(120, 40)
    args = ("demo", "--seed", "7", "--instance", "inf2.48xlarge")
    command = nt(*args, "--render", "textual") if how == "option" else "NEURON_TOP_RENDER=textual " + nt(*args)
    t.start(command)
    # The grid's last device with both its cores drawn, and the vCPU panel.
    t.wait_for(lambda s: re.search(r"ND11 [^\n]*\[[^\n]*\[", s) is not None and "vCPU" in s and "DEMO" in s)
    assert "render" not in t.screen()  # no notice: the user asked for it
    t.keys("f")
    t.wait_for("TFLOPS per core")
    t.keys("q")
    assert t.wait_exit() == 0


def test_an_unknown_render_mode_in_the_environment_is_shown(term) -> None:
    t = term(120, 40)
    t.start("NEURON_TOP_RENDER=curses " + nt("demo", "--seed", "7", "--instance", "inf2.48xlarge"))
    t.wait_for(lambda s: "NEURON_TOP_RENDER" in s and "curses" in s and "NeuronCore" in s)
    t.keys("q")
    assert t.wait_exit() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_ends_the_app_as_q_does(term, tmp_path: Path, sig: signal.Signals) -> None:
    """``kill`` once left the terminal in the alternate screen and the command's child running: the signal now
    ends the app as ``q`` does (the terminal restored, the child stopped), with the shell's status for it."""
    pidfile, childfile = tmp_path / "app.pid", tmp_path / "child.pid"
    child = (f"sh -c 'echo $$ > {shlex.quote(str(childfile))}; exec {shlex.quote(PY)} "
             f"{shlex.quote(str(ROOT / 'scripts' / 'fake-neuron-monitor'))} --period 0.5'")
    app = nt("--command", child)
    t = term(120, 40)
    t.start(f"sh -c 'echo $$ > {shlex.quote(str(pidfile))}; exec {app.replace(chr(39), chr(39) + chr(92) + chr(39) * 2)}'")
    t.wait_for(lambda s: "LIVE" in s and "NeuronCore" in s)
    assert t.fmt("#{alternate_on}") == "1"
    os.kill(int(pidfile.read_text().strip()), sig)
    assert t.wait_exit() == 128 + sig
    assert t.fmt("#{alternate_on}") == "0"  # the terminal is back from the alternate screen
    child_pid = int(childfile.read_text().strip())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{child_pid}").exists():
        time.sleep(0.1)
    assert not Path(f"/proc/{child_pid}").exists(), "the command the app started is still running"

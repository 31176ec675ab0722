"""The quiet input thread: it sleeps until input arrives, still times out a lone Esc, and stops at once."""

from __future__ import annotations

import asyncio
import errno
import io
import os
import selectors
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from textual import events
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver

from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.render.driver import QuietLinuxDriver, SafeLinuxDriver, _Terminal, driver_for
from tests.helpers import until


class FakeApp:
    """What the input thread needs of an app: somewhere to post events."""

    def __init__(self) -> None:
        self.events: list[object] = []

    async def _post_message(self, message: object) -> bool:
        self.events.append(message)
        return True

    def pressed(self) -> list[str]:
        return [e.key for e in self.events if isinstance(e, events.Key)]


@dataclass
class Rig:
    driver: QuietLinuxDriver
    app: FakeApp
    w: int
    """The write end of the pipe the input thread reads as its terminal."""
    timeouts: list[float | None]
    """Every timeout the input thread passed to select."""


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    """A driver whose input thread reads a pipe; yields the pipe's write end and every select timeout used."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH)}
    app = FakeApp()
    driver = QuietLinuxDriver(app, mouse=False)  # type: ignore[arg-type]
    r, w = os.pipe()
    driver.fileno = r
    timeouts: list[float | None] = []
    select = selectors.SelectSelector.select

    def spy(self: selectors.SelectSelector, timeout: float | None = None) -> list:
        timeouts.append(timeout)
        return select(self, timeout)

    selectors.SelectSelector.select = spy  # type: ignore[method-assign]
    thread = driver._key_thread = threading.Thread(target=driver._run_input_thread, daemon=True)
    thread.start()
    try:
        yield Rig(driver, app, w, timeouts)
    finally:
        driver.exit_event.set()
        os.write(driver._wake_w, b"x")
        thread.join(2)
        selectors.SelectSelector.select = select  # type: ignore[method-assign]
        driver.close()
        for fd in (r, w):
            os.close(fd)
        for s, h in handlers.items():
            signal.signal(s, h)


async def test_idle_input_thread_waits_without_a_timeout(rig: Rig) -> None:
    """Textual's own thread wakes every 0.1 s (select(0.1)); ours sleeps until something happens."""
    await asyncio.sleep(0.35)
    assert rig.timeouts and all(t is None for t in rig.timeouts)
    assert len(rig.timeouts) == 1


async def test_keys_arrive_and_a_lone_escape_times_out(rig: Rig) -> None:
    os.write(rig.w, b"q")
    await until(lambda: bool(rig.app.pressed()))
    assert rig.app.pressed() == ["q"]
    os.write(rig.w, b"\x1b")  # Esc or the start of a sequence: only time can tell
    await until(lambda: "escape" in rig.app.pressed())
    assert rig.app.pressed() == ["q", "escape"]
    assert any(t is not None and t <= 0.2 for t in rig.timeouts)  # it woke up for the parser's timeout
    assert rig.timeouts[-1] is None  # and went back to sleeping


async def test_disable_input_stops_the_thread_at_once(rig: Rig, monkeypatch) -> None:
    """The input thread sleeps without a timeout, so quitting must wake it (it would hang otherwise)."""
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # main-thread only; disable_input runs in a thread here
    stopper = threading.Thread(target=rig.driver.disable_input, daemon=True)
    t = time.monotonic()
    stopper.start()
    stopper.join(1.0)
    assert not stopper.is_alive() and time.monotonic() - t < 0.5
    assert not rig.driver._key_thread.is_alive()


def test_the_app_uses_it_only_in_place_of_linux_driver(monkeypatch) -> None:
    """The quiet driver for the fast renderer; with Textual's own drawing (``--render textual``, the documented
    fallback) the safe one, so that a closed terminal ends that app too (it ran on 25 s after SIGHUP)."""
    assert NeuronTopApp(None).driver_class is QuietLinuxDriver
    assert NeuronTopApp(None, render="textual").driver_class is SafeLinuxDriver
    assert driver_for(LinuxDriver) is QuietLinuxDriver
    assert driver_for(LinuxDriver, quiet=False) is SafeLinuxDriver
    other = type("Other", (LinuxDriver,), {})
    assert driver_for(other) is other
    monkeypatch.setattr("textual.constants.DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert driver_for(LinuxDriver) is LinuxDriver


def test_the_automatic_fallback_to_textuals_drawing_keeps_the_safe_driver(monkeypatch) -> None:
    """A Textual without a private name the engine needs switches to Textual's own drawing by itself; the driver's
    protections (a closed terminal ends the app, SIGTSTP/SIGCONT from the loop) stay, as with ``--render
    textual`` (it fell back to Textual's bare LinuxDriver)."""
    monkeypatch.setattr("neuron_top.tui.render.terminal.missing", lambda app: "a name")
    app = NeuronTopApp(None)
    assert app.render_engine is None and any("fast terminal path off" in n for n in app.render_notes)
    assert app.driver_class is SafeLinuxDriver


class Recorder:
    """The writer thread's ``write``: what would go to the terminal, one entry per queued write."""

    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> None:
        self.writes.append(text)

    def stop(self) -> None:
        pass


async def test_one_write_hands_on_everything_once_in_order() -> None:
    """(A coroutine only because a driver is made inside a running event loop.)"""
    driver = QuietLinuxDriver(FakeApp(), mouse=False)  # type: ignore[arg-type]
    try:
        driver._writer_thread = Recorder()  # type: ignore[assignment]
        with driver.one_write():
            driver.write("a")
            with driver.one_write():  # nested: still one write, at the end of the outer one
                driver.write("b")
            driver.write("c")
            assert driver._writer_thread.writes == []
        driver.write("d")
        with driver.one_write():
            pass  # nothing written: nothing queued
        assert driver._writer_thread.writes == ["abc", "d"]
    finally:
        driver.close()


async def test_a_frame_and_its_sync_brackets_reach_the_writer_as_one_write() -> None:
    """Textual queues begin-sync, the frame and end-sync separately; each woke the writer thread, which wrote and
    flushed it: three writes (three packets over SSH) a frame on a terminal with synchronized output."""
    from textual.app import SYNC_END, SYNC_START

    app = NeuronTopApp(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        headless = app._driver
        driver = QuietLinuxDriver(app, mouse=False)
        recorder = driver._writer_thread = Recorder()  # type: ignore[assignment]
        app._driver, app._sync_available = driver, True
        try:
            app._display(app.screen, app.screen._compositor.render_full_update())
        finally:
            app._driver, app._sync_available = headless, False
            driver.close()
        assert len(recorder.writes) == 1
        frame = recorder.writes[0]
        assert frame.startswith(SYNC_START) and frame.endswith(SYNC_END) and len(frame) > 1000


# --- a terminal that goes away -------------------------------------------------------------------------------------


class DeadTerminal(io.StringIO):
    """A terminal after a hangup: every write fails as a pty's does then."""

    def write(self, s: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def fileno(self) -> int:
        return 2


def returns_within(call: Callable[[], object], seconds: float = 5.0) -> bool:
    thread = threading.Thread(target=call, daemon=True)  # a daemon: a call that never returns cannot hold pytest
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


@pytest.mark.parametrize("cls", [QuietLinuxDriver, SafeLinuxDriver])
async def test_a_dead_terminal_blocks_neither_writes_nor_close(cls: type[SafeLinuxDriver]) -> None:
    """The SSH connection drops: the writer thread died on its first write (EIO). Textual's queue holds 30
    writes; the 31st (a second of frames) and the ``put`` that stops the thread at exit then waited for ever, and
    the process stayed behind, orphaned, with its source and children. The driver's file drops such writes, so
    the writer thread lives on and empties its queue."""
    driver = cls(FakeApp(), mouse=False)  # type: ignore[arg-type]
    driver._file = _Terminal(DeadTerminal())  # type: ignore[assignment]  # what __init__ wraps the terminal in
    driver._writer_thread = writer = WriterThread(driver._file)  # as start_application_mode makes it
    writer.start()
    assert returns_within(lambda: [driver.write(f"frame {i}") for i in range(100)])
    assert writer.is_alive()
    assert returns_within(driver.close)
    assert not writer.is_alive()


@pytest.mark.parametrize("cls", [QuietLinuxDriver, SafeLinuxDriver])
async def test_the_sigcont_of_a_hangup_does_not_start_application_mode_again(monkeypatch,
                                                                              cls: type[SafeLinuxDriver]) -> None:
    """A hangup sends SIGHUP (the app exits) and SIGCONT. Textual's driver starts application mode again on any
    SIGCONT, with a second writer thread (which then dies on the dead terminal, see above). Only a suspend's
    SIGCONT resumes it."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    started: list[int] = []
    handled: list[int] = []
    sigcont = cls._sigcont_application

    def counted(self: SafeLinuxDriver, *args: object) -> None:
        handled.append(1)
        sigcont(self, *args)

    monkeypatch.setattr(cls, "_sigcont_application", counted)
    monkeypatch.setattr(cls, "start_application_mode", lambda self: started.append(1))
    monkeypatch.setattr(cls, "stop_application_mode", lambda self: None)
    driver = cls(FakeApp(), mouse=False)  # type: ignore[arg-type]
    try:
        os.kill(os.getpid(), signal.SIGCONT)
        await until(lambda: handled == [1], what="the first SIGCONT handled")
        assert started == []
        driver.suspend_application_mode()  # Ctrl+Z, or App.suspend
        os.kill(os.getpid(), signal.SIGCONT)
        await until(lambda: handled == [1, 1], what="the second SIGCONT handled")
        assert started == [1]
    finally:
        driver.close()
        for s, h in handlers.items():
            signal.signal(s, h)


async def test_the_wake_pipe_outlives_a_suspension(monkeypatch) -> None:
    """A suspension closes the driver; the input thread of the resumed app must get a pipe that is open (it
    died with EBADF, and its traceback covered the screen)."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    driver = QuietLinuxDriver(FakeApp(), mouse=False)  # type: ignore[arg-type]
    monkeypatch.setattr(LinuxDriver, "start_application_mode", lambda self: None)
    try:
        driver.close()  # what suspend_application_mode does after stop_application_mode
        assert driver._wake_r == -1
        driver.start_application_mode()  # resume
        os.write(driver._wake_w, b"x")
        assert os.read(driver._wake_r, 1) == b"x"
    finally:
        driver.close()
        for s, h in handlers.items():
            signal.signal(s, h)


async def test_stop_and_continue_are_handled_from_the_event_loop(monkeypatch) -> None:
    """Textual's SIGTSTP and SIGCONT handlers write to the terminal. Run as Python signal handlers, they ran
    between two bytecodes of whatever the main thread was doing, inside the writer queue's ``put`` included, and
    their own ``put`` then waited for the lock it held, for ever (a dashboard stuck at 63% of a core for 43
    minutes after ``kill -TSTP``). From the event loop they run between two callbacks, where no lock is held."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    done: list[str] = []
    monkeypatch.setattr(LinuxDriver, "suspend_application_mode", lambda self: done.append("suspend"))
    monkeypatch.setattr(LinuxDriver, "resume_application_mode", lambda self: done.append("resume"))
    monkeypatch.setattr(os, "kill", lambda pid, sig: done.append(f"kill {sig}"))  # not the SIGSTOP for real
    _driver = QuietLinuxDriver(FakeApp(), mouse=False)  # type: ignore[arg-type]
    try:
        signal.raise_signal(signal.SIGTSTP)
        assert done == []  # a Python signal handler would have run already, wherever the main thread was
        await until(lambda: len(done) >= 2, what="SIGTSTP handled from the loop")
        assert done == ["suspend", f"kill {signal.SIGSTOP}"]
        signal.raise_signal(signal.SIGCONT)
        assert done == ["suspend", f"kill {signal.SIGSTOP}"]
        await until(lambda: len(done) >= 3, what="SIGCONT handled from the loop")
        assert done[-1] == "resume"
    finally:
        loop = asyncio.get_running_loop()
        for s, h in handlers.items():
            loop.remove_signal_handler(s)
            signal.signal(s, h)

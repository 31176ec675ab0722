"""A terminal driver whose input thread sleeps until there is input, instead of waking ten times a second, and
that hands a frame to the writer thread in one piece.

Why: Textual's ``LinuxDriver`` reads keys in a thread that calls ``select`` with a 0.1 s timeout, only to notice
that the app is exiting and to time out a lone Esc. Measured in tmux on the trn2 demo (per-thread CPU from
/proc): that thread cost 0.18% of a core, a fifth of the dashboard's whole 1% budget, and the same when paused.
Here it waits without a timeout; it wakes for input, for the end of a pending escape sequence (the parser says
when), or when ``disable_input`` writes to a pipe. Everything else is Textual's.

On a terminal with synchronized output (most current ones; not the tmux 3.3 the benchmarks run in), Textual writes
a frame as three pieces: begin synchronized update, the frame, end synchronized update. Each goes on the writer
thread's queue, which wakes that thread to write and flush it: three wake-ups, three ``write`` calls and, over
SSH, up to three packets a frame. ``one_write`` gathers them into one.

A terminal that goes away (an SSH connection dropped, the tmux pane killed) must not leave the app running
without it, whichever renderer draws (``--render textual`` too): that part is ``SafeLinuxDriver``, which the
quiet driver extends. The kernel sends SIGHUP, which asks the app to exit (``cli/signals.py``), and SIGCONT, on
which Textual's driver starts application mode again although nothing was suspended: a second writer thread, whose
first write to the dead terminal killed it (EIO). The writes that followed filled its queue (30 entries) and the
next one, or the ``put`` that stops it at exit, waited for ever: the process stayed, orphaned, for good. Here
SIGCONT resumes only what a suspend stopped, and a write to a terminal that is gone is dropped (``_Terminal``), so
the writer thread lives to the end. A suspension closes the driver; resuming opens a new wake-up pipe.

If Textual's driver no longer has the shape this was written for (Textual 8.2), the app keeps Textual's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
from codecs import getincrementaldecoder
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, cast

from textual import constants
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

try:
    from textual._parser import ParseError
    from textual._time import get_time
    from textual._xterm_parser import XTermParser
except ImportError:  # pragma: no cover - a Textual without them: ``driver_for`` keeps LinuxDriver
    XTermParser = None  # type: ignore[assignment,misc]


class _Terminal:
    """The terminal as the writer thread writes to it: once a write fails (EIO: the terminal was closed, an ssh
    session dropped before its SIGHUP came), the rest is dropped. Unwrapped, the failed write killed Textual's
    writer thread; the app went on queueing frames for it, and when its queue (30) was full the next write, the
    one restoring the terminal at exit included, blocked for ever, leaving every child running."""

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self.gone = False

    def write(self, text: str) -> None:
        if not self.gone:
            try:
                self._file.write(text)
            except OSError:
                self.gone = True

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except OSError:
                self.gone = True

    def __getattr__(self, name: str) -> object:  # fileno, isatty, encoding ...: the terminal's own
        return getattr(self._file, name)


class SafeLinuxDriver(LinuxDriver):
    """``LinuxDriver`` that survives its terminal: writes to a terminal that is gone are dropped, SIGCONT resumes
    only after a suspension of its own, and SIGTSTP and SIGCONT are handled from the event loop."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._file = _Terminal(cast(TextIO, self._file))  # type: ignore[assignment]
        self._suspended = False
        """Application mode was stopped by a suspend (Ctrl+Z, ``App.suspend``): SIGCONT may start it again."""
        self._in_loop(signal.SIGTSTP, self._sigtstp_application)
        self._in_loop(signal.SIGCONT, self._sigcont_application)

    def _in_loop(self, sig: int, handler: Callable[..., None]) -> None:
        """Run ``handler`` for ``sig`` from the event loop, as asyncio's signal handlers run, not from Python's
        handler. Textual's SIGTSTP and SIGCONT handlers write to the terminal, and Python runs a handler between any
        two bytecodes of the main thread: inside the writer queue's ``put``, which holds the queue's lock, the
        handler's own ``put`` waited for that lock for ever (seen: a dashboard stuck for 43 minutes at 63% of a
        core after ``kill -TSTP``). Where the loop cannot take the signal (not the main thread), Textual's stay.

        This also points the signal wake-up fd at the loop, so that SIGTERM, SIGHUP or SIGINT delivered to another
        thread wakes the loop for the command line's handler (``cli/signals.py``) at once."""
        with contextlib.suppress(RuntimeError, NotImplementedError, ValueError):
            asyncio.get_running_loop().add_signal_handler(sig, handler)

    def suspend_application_mode(self) -> None:
        self._suspended = True
        super().suspend_application_mode()

    def resume_application_mode(self) -> None:
        self._suspended = False
        super().resume_application_mode()

    def _sigcont_application(self, *_: object) -> None:
        if self._suspended:  # not the SIGCONT a hangup sends with SIGHUP, nor a stray ``kill -CONT``
            super()._sigcont_application()


class QuietLinuxDriver(SafeLinuxDriver):
    """``SafeLinuxDriver`` with an input thread that blocks until something happens, and ``one_write``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._wake_r = self._wake_w = -1
        self._open_wake()
        self._held: list[str] | None = None
        """What ``write`` was given inside ``one_write``, not yet passed on."""

    def write(self, data: str) -> None:
        if self._held is not None:
            self._held.append(data)
        else:
            super().write(data)

    @contextlib.contextmanager
    def one_write(self) -> Iterator[None]:
        """Every ``write`` inside reaches the writer thread as one, at the end (in order, nothing dropped)."""
        if self._held is not None:  # nested: the outer one passes it on
            yield
            return
        held = self._held = []
        try:
            yield
        finally:
            self._held = None
            if held:
                super().write("".join(held))

    def disable_input(self) -> None:
        # ``LinuxDriver.disable_input`` sets ``exit_event`` and joins the thread. The pipe is left readable until
        # the thread sees the event, so the thread cannot miss it; the next input thread drains it first.
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        super().disable_input()

    def _open_wake(self) -> None:
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)

    def start_application_mode(self) -> None:
        # A suspension (SIGTSTP) closes the driver, the pipe with it; the resumed input thread needs a new one.
        if self._wake_r < 0:
            self._open_wake()
        super().start_application_mode()

    def close(self) -> None:
        super().close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def run_input_thread(self) -> None:
        """``LinuxDriver.run_input_thread`` (Textual 8.2) with a blocking select."""
        _drain(self._wake_r)
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: Iterable[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for key, _mask in ready:
                if key.fd != fileno:
                    continue
                data = decode(os.read(fileno, 1024 * 4), final=final)
                if not data:  # stdin is a pipe that closed
                    break
                for event in parser.feed(data):
                    self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(_timeout(parser)))
            selector.unregister(self.fileno)
            process(selector.select(0.1), final=True)
        finally:
            selector.close()
            with contextlib.suppress(EOFError, ParseError):
                for _ in parser.feed(""):
                    pass


def _timeout(parser: object) -> float | None:
    """How long the input thread may sleep: until the parser's pending escape sequence times out (a lone Esc
    is a key only once nothing follows it), else until input arrives (None)."""
    due: float | None = getattr(parser, "_timeout_time", None)
    if due is None:
        return None
    return max(due - get_time(), 0.0) + 0.001


def _drain(fd: int) -> None:
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError):
        while os.read(fd, 64):
            pass


def driver_for(default: type[Driver], *, quiet: bool = True) -> type[Driver]:
    """The driver to use where Textual would use ``default``: ``QuietLinuxDriver`` (``quiet``, the fast renderer)
    or ``SafeLinuxDriver`` (Textual's own drawing) in place of ``LinuxDriver`` itself; ``default`` otherwise
    (Windows, a driver chosen through TEXTUAL_DRIVER, a Textual whose driver or parser has another shape)."""
    if default is not LinuxDriver or constants.DRIVER:
        return default
    if not all(hasattr(LinuxDriver, name) for name in ("_sigtstp_application", "_sigcont_application")):
        return default
    if not quiet or XTermParser is None:
        return SafeLinuxDriver
    probe = XTermParser(False)
    if not hasattr(probe, "_timeout_time") or not hasattr(probe, "tick"):
        return SafeLinuxDriver
    return QuietLinuxDriver

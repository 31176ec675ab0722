"""Clean exits on SIGTERM, SIGHUP and SIGINT: every mode stops the way a quit key stops it, then exits 128+signal.

What a signal must not leave behind: a terminal in the alternate screen with mouse reporting on and the cursor
hidden (the dashboard's, replay's, the timeline's), an unfinished recording, a ``--command`` child or
neuron-monitor adopted by PID 1. The default action of these signals kills the process at once and leaves all
three. So the command line installs a handler for the whole run:

* the TUI (the dashboard, replay, the timeline, the fleet, with either renderer: ``cli.common.run_app``): the
  handler asks the app to exit (``request_exit``), so the exit runs as after ``q``: screens unmounted, the
  collector closed (its source stops its children, its recorder is flushed and closed), the terminal restored by
  Textual's driver. The app adds no handler for these signals: asyncio's would replace this one, watchdog
  included;
* headless modes (``--once``, ``demo --emit``, ``replay --summary``, ``health``, ``fleet --once``): the handler
  raises ``SignalExit`` in the main thread, so ``finally`` blocks close what they opened;
* ``record`` and ``export``: the handler sets their stop event (the recording stops between two reports and closes
  the file; the server stops);

and, whatever happened, ``stop_all_children`` on the way out. A second signal while that runs means "now": the
terminal is reset by hand, children are killed, and the process exits at once with 128+signal. So does a clean
exit still running ``WATCHDOG`` seconds after the first signal: a process whose terminal is gone must not live on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["SIGNALS", "SignalExit", "Signals", "reset_terminal"]

SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)

RESET = ("\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1015l\x1b[?1006l"  # mouse reporting off (every mode)
         "\x1b[?1004l\x1b[?2004l"  # focus events and bracketed paste off
         "\x1b[?1049l"  # back to the main screen
         "\x1b[?25h")  # cursor on
"""What a second signal writes to the terminal before exiting at once (the first lets Textual do it)."""

WATCHDOG = 10.0
"""Seconds after the first signal until the exit is forced: longer than stopping a child takes (SIGTERM, 2 s, SIGKILL,
2 s) and than closing a recording."""


class SignalExit(BaseException):
    """Raised in the main thread of a headless mode by SIGTERM, SIGHUP or SIGINT (a BaseException, as
    KeyboardInterrupt, so ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def code(self) -> int:
        return 128 + self.signum


class Signals:
    """SIGTERM, SIGHUP and SIGINT handlers for one run; ``restore`` puts the previous ones back.

    ``on_signal(signum)`` runs on the first signal (in the main thread, between two bytecodes: it must only ask
    for the exit, not do it). Without it, the first signal raises ``SignalExit``. The second signal exits at once.
    """

    def __init__(self, on_signal: Callable[[int], None] | None = None, *, terminal: bool = False) -> None:
        self.on_signal = on_signal
        self.terminal = terminal
        """The TUI owns the terminal: a second signal resets it by hand."""
        self.received: int | None = None
        """The first signal that came, if one did."""
        self.watchdog = WATCHDOG
        """Seconds the clean exit may take after the first signal before the process exits at once."""
        self._old: dict[int, object] = {}
        self._tty_attrs: tuple[int, list[Any]] | None = None
        self._forced = False
        """``now`` has begun: the process is on its way out at once."""

    @property
    def code(self) -> int | None:
        """128 + the signal that came (what shells report for a process ended by it), or None."""
        return None if self.received is None else 128 + self.received

    def install(self) -> Signals:
        """Take over the signals (only possible in the main thread; elsewhere this does nothing)."""
        self._tty_attrs = _tty_attrs() if self.terminal else None
        try:
            for s in SIGNALS:
                self._old[s] = signal.signal(s, self._handle)
        except ValueError:  # not the main thread
            self.restore()
        return self

    def restore(self) -> None:
        for s, h in self._old.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(s, h)  # type: ignore[arg-type]
        self._old.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._forced:  # exiting at once already: a child told to stop may signal us back (see ``now``)
            return
        if self.received is not None:  # the second one: no more waiting
            self.now(signum)
        self.received = signum
        # A clean exit that hangs (a wedged thread, a terminal that is gone) must not leave the process running
        # unseen, its children with it: after ``watchdog`` seconds the exit is the second signal's.
        timer = threading.Timer(self.watchdog, self.now, (signum,))
        timer.daemon = True
        timer.start()
        if self.on_signal is None:
            raise SignalExit(signum)
        self.on_signal(signum)

    def now(self, signum: int) -> None:
        """Exit at once: terminal back to normal, children killed, status 128+signal.

        Once only: stopping a child sends it SIGTERM first, and a child that answers with a signal to us (a
        wrapper passing it on, a stubborn emitter) re-entered this, which stopped the child again, which signalled
        again... until a RecursionError, swallowed below, ended the process before any SIGKILL: the child was left
        to PID 1 (``test_record_ends_at_once_on_a_second_signal``, 13 of 30 runs beside three busy loops). Signals
        that come while this runs are ignored (``_handle``)."""
        from neuron_top.sources.stream import stop_all_children

        if self._forced:  # the watchdog and a second signal at once
            return
        self._forced = True
        if self.terminal:
            reset_terminal(self._tty_attrs)
        with contextlib.suppress(Exception):
            stop_all_children(grace=0.0)
        os._exit(128 + signum)


def _tty_attrs() -> tuple[int, list[Any]] | None:
    """The terminal's settings before the TUI changes them, to put back by hand if it must be cut short."""
    try:
        import termios

        fd = sys.stdin.fileno()
        if os.isatty(fd):
            return fd, termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        pass
    return None


def reset_terminal(attrs: tuple[int, list[Any]] | None = None) -> None:
    """Main screen, mouse off, cursor on, and the saved line settings back (echo, line editing)."""
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.write(fd, RESET.encode())
        os.close(fd)
    if attrs is not None:
        with contextlib.suppress(Exception):
            import termios

            termios.tcsetattr(attrs[0], termios.TCSANOW, attrs[1])

"""Reports from a byte stream: a pipe on stdin, or the stdout of a command such as ``ssh trn-host neuron-monitor``.

Both read with ``poll`` plus a wake-up pipe, so ``stop`` and ``close()`` interrupt a read that would otherwise
block forever on a quiet pipe. A stream that ends (EOF, a closed or broken pipe, a read error) ends the source with
a ``Status``; it is never an exception. The child-process helper here is shared with ``MonitorSource``.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from neuron_top.decode import has_report_group
from neuron_top.fmt import plural
from neuron_top.sources.base import Backoff, Item, RawReport, Skipped, State, Status, pause
from neuron_top.sources.framing import ReportFramer
from neuron_top.textsafe import clean

__all__ = [
    "POLL_SECONDS", "READ_SIZE", "STDERR_LINES", "ChildExit", "ChildProcess", "ChildSource", "Clock",
    "CommandSource", "PipeLifecycle", "ReportCounter", "StopEvent", "StreamSource", "Waker", "describe_exit",
    "needs_shell", "plural", "pump", "take_stdin_for_reports",
]

READ_SIZE = 1 << 16
FLOOD_PAUSE = 0.02
"""Seconds to wait after a big read (half of ``READ_SIZE`` or more: the pipe had a backlog) that held no report:
a flood of garbage (``yes | neuron-top``, a command printing a log in a loop) is then read at ~3 MB/s at most
and its writer waits, instead of the reader taking a whole core to skip hundreds of MB a second (``yes | neuron-top``
in tmux: 75% of a core before, 5% after). Reads that hold a report are never held back."""
POLL_SECONDS = 0.25
"""How often a blocked read looks at a plain ``threading.Event`` ``stop``, and how long a buffered last line that
completes a report waits for more before it is delivered. A ``StopEvent`` stop and close() wake the read at once,
so a read with neither to watch for blocks until input comes: no wake-ups between reports."""
STDERR_LINES = 50
"""Lines of a child's stderr kept for ``Status.detail``."""
REUSE_SAFE = 5.0
"""Seconds after reaping a child during which its process group may still be signalled by its id (pids go round
only after the whole pid space, 32768 on many machines, has been used)."""

Clock = Callable[[], float]


# -- reading ----------------------------------------------------------------------------------------------


class Waker:
    """A self-pipe: ``wake()`` from any thread makes a ``poll`` on ``fd`` return."""

    def __init__(self) -> None:
        self.fd, self._w = os.pipe()
        os.set_blocking(self._w, False)
        # re-entrant: a signal handler setting a StopEvent wakes this on the main thread, which may be inside
        # close() at that moment
        self._lock = threading.RLock()
        self._open = True

    def wake(self) -> None:
        with self._lock:
            if self._open:
                with contextlib.suppress(OSError):  # pipe full: it is awake already
                    os.write(self._w, b"x")

    def close(self) -> None:
        with self._lock:
            if self._open:
                self._open = False
                os.close(self.fd)
                os.close(self._w)


class StopEvent(threading.Event):
    """A stop flag that also wakes the reads watching it (``pump``), so that they need not look at it every
    ``POLL_SECONDS``. Why: at one report a second those looks were three wake-ups a second for nothing, ~90 us of
    a core each (0.03% of a core: a tenth of the dashboard's reader thread, more of the exporter's)."""

    def __init__(self) -> None:
        super().__init__()
        self._wakers: list[Waker] = []
        self._wakers_lock = threading.RLock()  # set() runs in signal handlers: the main thread may hold it

    def set(self) -> None:
        super().set()
        with self._wakers_lock:
            wakers = list(self._wakers)
        for waker in wakers:
            waker.wake()

    def watch(self, waker: Waker) -> None:
        """``waker`` is woken when this is set (at once if it is set already)."""
        with self._wakers_lock:
            self._wakers.append(waker)
        if self.is_set():
            waker.wake()

    def unwatch(self, waker: Waker) -> None:
        with self._wakers_lock, contextlib.suppress(ValueError):
            self._wakers.remove(waker)


def pump(
    fd: int, stop: threading.Event, closed: threading.Event, waker: Waker, clock: Clock
) -> Generator[RawReport | Skipped, None, str]:
    """Yield the reports and skipped input read from ``fd`` until it ends; return why it ended.

    The return value is ``"eof"``, ``"stopped"`` or ``"read error: ..."``; at EOF a last report without a trailing
    newline is still delivered and an unfinished one is reported as truncated. ``closed`` must come with
    ``waker.wake()``; ``stop`` may be any Event, but only a ``StopEvent`` lets a quiet read block without a timeout.
    """
    if isinstance(stop, StopEvent):
        stop.watch(waker)
        try:
            return (yield from _pump(fd, stop, closed, waker, clock, wakes=True))
        finally:
            stop.unwatch(waker)
    return (yield from _pump(fd, stop, closed, waker, clock, wakes=False))


def _pump(
    fd: int, stop: threading.Event, closed: threading.Event, waker: Waker, clock: Clock, wakes: bool
) -> Generator[RawReport | Skipped, None, str]:
    framer = ReportFramer()
    why = "eof"
    # poll, not select: no FD_SETSIZE limit, and unlike epoll it accepts regular files (``< run.jsonl``).
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    poller.register(waker.fd, select.POLLIN)
    timeout = POLL_SECONDS * 1000
    while True:
        if stop.is_set() or closed.is_set():
            return "stopped"
        try:
            # Blocks until input or a wake-up when nothing needs a look later: a stop that wakes us, and no
            # buffered line that a quiet stream would deliver (``flush_if_complete``).
            events = poller.poll(timeout if not wakes or framer.deliverable else None)
        except OSError as exc:
            if closed.is_set():
                return "stopped"
            why = f"read error: {exc}"
            break
        if not any(efd == fd for efd, _ in events):
            if not events:  # quiet: a report without its newline need not wait for the next one
                now = clock()
                for piece in framer.flush_if_complete():
                    yield RawReport(piece, ts=now) if isinstance(piece, bytes) else piece
            continue
        try:
            chunk = os.read(fd, READ_SIZE)
        except BlockingIOError:
            continue
        except OSError as exc:  # EIO from a hung-up tty, EBADF after close(), ...
            if closed.is_set():
                return "stopped"
            why = f"read error: {exc.strerror or exc}"
            break
        if not chunk:
            break
        now = clock()
        report = skipped = False
        for piece in framer.feed(chunk):
            if isinstance(piece, bytes):
                report = True
                yield RawReport(piece, ts=now)
            else:
                skipped = True
                yield piece
        if not report and len(chunk) >= READ_SIZE // 2 and (skipped or not framer.collecting):
            # A big read of nothing but garbage: let the writer wait, not us spin. Not the first part of a report
            # bigger than a read (every trn2 report): that paused each report 20 ms, a wake-up for nothing.
            closed.wait(FLOOD_PAUSE)
    now = clock()
    for piece in framer.finish():
        yield RawReport(piece, ts=now) if isinstance(piece, bytes) else piece
    # close() kills a child and wakes us at once: the EOF that follows is ours, not the stream's.
    return "stopped" if closed.is_set() else why


def describe_exit(returncode: int | None) -> str:
    """``exited with status 3``, ``was killed by SIGKILL``, ``is still running``."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


# -- stdin ------------------------------------------------------------------------------------------------


def take_stdin_for_reports() -> BinaryIO:
    """Take the report pipe off fd 0 and give fd 0 back to the terminal; return the pipe for reading.

    ``neuron-monitor | neuron-top`` leaves the terminal without a keyboard: fd 0 is the pipe. Like ``less``, we
    move the pipe to a new descriptor and open ``/dev/tty`` onto fd 0, so the TUI reads keys as usual. Call it
    before anything reads ``sys.stdin`` (Python's buffer would otherwise hold pipe bytes) and before the TUI
    starts. Without a controlling terminal (CI, cron, a container without ``-t``), ``/dev/tty`` cannot be opened:
    fd 0 is left alone and the returned object reads a duplicate of it, so there is no keyboard but reports flow.
    """
    report_fd = os.dup(0)
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        tty = -1
    if tty >= 0:
        try:
            if os.isatty(tty):
                os.dup2(tty, 0)
        finally:
            os.close(tty)
    return os.fdopen(report_fd, "rb", buffering=0)


def _fileno(stream: BinaryIO | int) -> int:
    return stream if isinstance(stream, int) else stream.fileno()


class PipeLifecycle:
    """close() from any thread: wake the reader now, free descriptors once the reader is out of ``poll``.

    Closing a descriptor another thread is polling is a race (the number can be reused), so ``close()``
    only frees resources itself when ``items()`` is not running; otherwise ``items()`` frees them on its way out.
    """

    def __init__(self) -> None:
        self._closed = threading.Event()
        self._waker = Waker()
        self._lock = threading.Lock()
        self._running = False
        self._released = False

    def items(self, stop: threading.Event) -> Iterator[Item]:
        with self._lock:
            if self._closed.is_set():
                return
            self._running = True
        try:
            yield from self._items(stop)
        finally:
            with self._lock:
                self._running = False
                if self._closed.is_set():
                    self._release_locked()

    def _items(self, stop: threading.Event) -> Iterator[Item]:
        """The source's own item stream (``items`` adds the close/release bookkeeping)."""
        raise NotImplementedError

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            self._waker.wake()
            if not self._running:
                self._release_locked()
        self._stop_children()

    def _release_locked(self) -> None:
        if not self._released:
            self._released = True
            self._release()
            self._waker.close()

    def _release(self) -> None:
        """Free what the subclass holds (called once, under the lock)."""

    def _stop_children(self) -> None:
        """Terminate child processes (called by every close(), outside the lock)."""


class StreamSource(PipeLifecycle):
    """Reports from an already open binary stream (usually the stdin pipe from ``take_stdin_for_reports``).

    Args:
        stream: a binary stream or file descriptor to read reports from.
        name: what the status line calls it.
        clock: Unix time for reports.
    """

    def __init__(self, stream: BinaryIO | int, name: str = "stdin", *, clock: Clock = time.time) -> None:
        super().__init__()
        self.name = clean(name, 60)
        self._stream = stream
        self._clock = clock

    def _items(self, stop: threading.Event) -> Iterator[Item]:
        try:
            fd = _fileno(self._stream)
        except (OSError, ValueError) as exc:
            yield Status(State.FAILED, f"cannot read {self.name}: {clean(exc)}")
            return
        yield Status(State.STARTING, f"waiting for reports on {self.name}")
        counter = ReportCounter()
        why = yield from counter.relay(
            pump(fd, stop, self._closed, self._waker, self._clock), f"reports from {self.name}"
        )
        if why == "stopped":
            return
        how = "end of input" if why == "eof" else clean(why)
        yield Status(
            State.ENDED, f"stream ended ({how} on {self.name}) after {plural(counter.reports, 'report')}"
        )

    def _release(self) -> None:
        if not isinstance(self._stream, int):
            with contextlib.suppress(OSError):
                self._stream.close()


class ReportCounter:
    """Counts reports passing through and announces LIVE at the first one.

    A JSON object with none of neuron-monitor's groups (``{"a": 1}`` from a command that is not neuron-monitor)
    passes through, for the feed to skip as "not a report", but is not counted and does not make the source LIVE:
    the header then says NO DATA, and "after N reports" counts what every other output counts."""

    def __init__(self) -> None:
        self.reports = 0

    def relay(
        self, reader: Generator[RawReport | Skipped, None, str], live_message: str
    ) -> Generator[Item, None, str]:
        while True:
            try:
                item = next(reader)
            except StopIteration as end:
                return str(end.value)
            if isinstance(item, RawReport) and has_report_group(item.data):
                self.reports += 1
                if self.reports == 1:
                    yield Status(State.LIVE, live_message)
            yield item


# -- commands ---------------------------------------------------------------------------------------------

_OPERATOR_CHARS = set("();<>|&")


def needs_shell(command: str) -> bool:
    """True when ``command`` uses shell syntax (pipes, redirections, ``;``, ``&&``, ``$VAR``, backquotes)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return True  # unbalanced quotes: let the shell produce its own error message
    if any(tok and set(tok) <= _OPERATOR_CHARS for tok in tokens):
        return True
    return "$" in command or "`" in command


class ChildProcess:
    """A child whose stdout we read and whose stderr tail we keep for the status line.

    It runs in its own session: it has no controlling terminal (so ``ssh`` fails instead of prompting for a
    password over the TUI) and terminal signals such as Ctrl-C do not reach it; ``terminate()`` signals its whole
    process group (a shell's children included).
    """

    def __init__(
        self, argv: Sequence[str] | str, *, shell: bool = False, env: dict[str, str] | None = None
    ) -> None:
        self.proc = subprocess.Popen(
            argv,
            shell=shell,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            bufsize=0,
            env=env,
        )
        self.pid = self.proc.pid
        self._reaped: float | None = None
        """Monotonic time the child was reaped (its pid, the group id, may be reused after that)."""
        with _LIVE_LOCK:
            _LIVE.add(self)
        self._tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, name=f"stderr-{self.pid}", daemon=True
        )
        self._stderr_thread.start()

    @property
    def stdout_fd(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        if stream is None:
            return
        partial = b""
        try:
            while chunk := stream.read(4096):
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()[-4096:]
                self._tail.extend(clean(line.rstrip(b"\r").decode("utf-8", "replace"), 300) for line in lines)
        except (OSError, ValueError):
            pass
        if partial:
            self._tail.append(clean(partial.decode("utf-8", "replace"), 300))

    def stderr_tail(self, wait: float = 0.0) -> str:
        """The last lines of stderr, each made printable, joined by newlines.

        ``wait`` gives the reader thread time to collect what a process that just exited wrote last.
        """
        if wait > 0:
            self._stderr_thread.join(wait)
        return "\n".join(self._tail)

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        if self._reaped is None:
            self._reaped = time.monotonic()
        return code

    def terminate(self, grace: float = 2.0, *, close_pipes: bool = True) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds; close our pipe ends. Idempotent.

        The group is signalled even when the child itself has already exited: a shell's children (``--command
        "a | b"``) outlive it in the group. From another thread than the reader, pass ``close_pipes=False``: the
        reader sees EOF and closes them.
        """
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            if self.wait(grace) is None:
                self._signal(signal.SIGKILL)
                self.wait(grace)
        elif self._reaped is None:
            self._reaped = time.monotonic()
        # Its group's other members (a shell's children) outlive it. The group id is the child's pid, which the
        # kernel hands out again only after going round the whole pid space: signal it only just after the child
        # was reaped (or while it cannot be: its pid is then still its own), never a group that may since belong
        # to someone else.
        if self._reaped is None or time.monotonic() - self._reaped < REUSE_SAFE:
            _kill_group(self.pid)
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if close_pipes:
            self.close_pipes()

    def close_pipes(self) -> None:
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _signal(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pid, sig)  # its own session: pgid == pid
        except OSError:
            with contextlib.suppress(OSError):
                self.proc.send_signal(sig)


_LIVE: weakref.WeakSet[ChildProcess] = weakref.WeakSet()
"""Every child started and not yet terminated, for ``stop_all_children``."""
_LIVE_LOCK = threading.Lock()


def _kill_group(pgid: int) -> None:
    """SIGKILL what is left of a child's process group (its own session: the group is the child's pid)."""
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def stop_all_children(grace: float = 1.0) -> int:
    """Terminate every child process group this process started and has not stopped yet; returns how many.

    The last line of defence of every exit path (the command line calls it whatever happened): a source that was
    never closed, an exception on the way out, a second signal. ``grace`` seconds for SIGTERM, then SIGKILL."""
    with _LIVE_LOCK:
        children = list(_LIVE)
    for child in children:
        child.terminate(grace, close_pipes=False)
    return len(children)


@dataclass(frozen=True)
class ChildExit:
    """How a child's stream ended: its exit code (None if it could not be reaped), stderr tail, reports read."""

    code: int | None
    detail: str
    reports: int


class ChildSource(PipeLifecycle):
    """A source reading reports from child processes (a ``--command``, neuron-monitor)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self._clock = clock
        self._child: ChildProcess | None = None

    def _run(
        self, child: ChildProcess, stop: threading.Event, started: str, live: str
    ) -> Generator[Item, None, ChildExit | None]:
        """Announce ``child``, relay its reports until its stdout ends and reap it; None when stopped or closed
        (the child is then terminated)."""
        with self._lock:
            self._child = child
        if self._closed.is_set():
            child.terminate()
            return None
        yield Status(State.STARTING, started)
        counter = ReportCounter()
        why = yield from counter.relay(
            pump(child.stdout_fd, stop, self._closed, self._waker, self._clock), live
        )
        if why == "stopped":
            child.terminate()
            return None
        code = child.wait(5.0)
        if code is None:  # it closed its stdout but lives on: we are done with it
            child.terminate()
            code = child.wait(0)
        detail = child.stderr_tail(wait=1.0)
        child.terminate(close_pipes=True)  # reaped: now only what it left in its group, if anything
        return ChildExit(code, detail, counter.reports)

    def _stop_children(self) -> None:
        with self._lock:
            child = self._child
        if child is not None:
            child.terminate(close_pipes=False)

    def _release(self) -> None:
        if self._child is not None:
            self._child.close_pipes()


class CommandSource(ChildSource):
    """Reports from the stdout of a command, e.g. ``--command "ssh trn-host neuron-monitor"``.

    A plain command is split with ``shlex``; one using shell syntax (pipes, ``&&``, ``$VAR``) runs under
    ``/bin/sh -c`` (``shell=None`` decides; pass True/False to force). When the command exits the source ends:
    ``ENDED`` when it exited with status 0, else ``FAILED`` (an ssh connection that dropped after an hour of
    reports failed too), with the exit status in the ``Status``. With ``restart`` (a ``Backoff``: what
    ``neuron-top export`` gives it, a daemon that a supervisor would otherwise never restart since it stays up) it
    is started again after the back-off instead, as ``MonitorSource`` restarts neuron-monitor: ``RESTARTING`` says
    how it ended and when it runs again; a run that lasted ``healthy_run`` with reports resets the back-off.

    Args:
        command: the command line; its stdout must carry neuron-monitor reports, one JSON document per line.
        shell: force (True) or forbid (False) ``/bin/sh -c``; None decides from the command's syntax.
        clock: Unix time for reports (injected by tests).
        restart: restart the command when it exits, with these delays (None: the source ends).
        restart_on_success: with ``restart``, restart after an exit with status 0 too (False: it ends).
        sleep: waits between restarts (injected by tests; returns early on stop or close by default).
        healthy_run: seconds a run with reports must last for the delay to start again from its shortest.
    """

    def __init__(self, command: str, *, shell: bool | None = None, clock: Clock = time.time,
                 restart: Backoff | None = None, sleep: Callable[[float], object] | None = None,
                 healthy_run: float = 30.0, restart_on_success: bool = True) -> None:
        super().__init__(clock)
        self.restart_on_success = restart_on_success
        """With ``restart``: also after an exit with status 0 (a daemon); False: that ends the source (the
        dashboard's ``--command "cat run.jsonl"`` said everything, while ``ssh host neuron-monitor`` that fails
        is restarted)."""
        self.command = command
        self.name = clean(command, 60)
        self._shell = needs_shell(command) if shell is None else shell
        self.restart = restart
        self._sleep = sleep
        self.healthy_run = healthy_run

    def _items(self, stop: threading.Event) -> Iterator[Item]:
        while True:
            try:
                argv: Sequence[str] | str = self.command if self._shell else shlex.split(self.command)
                if not argv:
                    raise ValueError("empty command")
                child = ChildProcess(argv, shell=self._shell)
            except ValueError as exc:
                yield Status(State.FAILED, f"cannot parse command {self.name}: {clean(exc)}")
                return
            except OSError as exc:
                yield Status(State.FAILED, f"cannot run {self.name}: {clean(exc.strerror or exc)}")
                return
            started = self._clock()
            end = yield from self._run(
                child,
                stop,
                f"started {self.name} (pid {child.pid})",
                f"reports from {self.name} (pid {child.pid})",
            )
            if end is None:
                return
            how = f"{self.name} {describe_exit(end.code)} after {plural(end.reports, 'report')}"
            if self.restart is None or (end.code == 0 and not self.restart_on_success):
                yield Status(State.ENDED if end.code == 0 else State.FAILED, f"stream ended: {how}",
                             detail=end.detail, exit_status=end.code)
                return
            if end.reports and self._clock() - started >= self.healthy_run:
                self.restart.reset()
            delay = self.restart.next()
            yield Status(State.RESTARTING, f"{how}; restarting in {delay:g} s", detail=end.detail,
                         exit_status=end.code, cause=how)
            pause(delay, self._sleep, stop, self._closed)
            if stop.is_set() or self._closed.is_set():
                return

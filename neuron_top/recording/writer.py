"""Write recordings: a tee of neuron-monitor reports that stays a valid neuron-monitor stream.

Each report is one line, exactly as received except for one key spliced in before its final ``}``:
``"neuron_top": {"ts": <unix seconds>}`` (the report is never re-encoded, so numbers and key order survive).
Durability, in order of what can go wrong:

* Every line is written with a single ``os.write`` on an ``O_APPEND`` descriptor, so a process killed at any
  point (even SIGKILL) leaves whole lines in a plain file. If a write comes up short (disk full) the file is cut
  back to the last whole line and the error is raised.
* ``.gz`` and ``.zst`` (chosen by the name) are flushed per report (a deflate sync flush / a zstd block flush),
  also as one write per report: a killed process loses at most that report; the stream then lacks its trailer,
  which ``neuron-top replay`` does not need (``zcat`` prints every report, then warns of the missing end).
* A file changed under the writer (``copytruncate``, another program appending) is noticed at the next report,
  which starts a new member/frame (or a fresh line), so the reports after it stay readable.
* ``os.fsync`` runs at most once a second (and on close), so a power cut loses at most about a second.
* SIGINT, SIGTERM and SIGHUP (``install_signal_handlers``; ``neuron-top record`` takes them through the exit
  policy of every mode, ``cli/signals.py``) only set a flag; the loop stops between reports and closes the file
  properly. A second signal ends the process at once, which still leaves whole lines (a per-report write).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import queue
import re
import signal
import stat
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import msgspec

from neuron_top.feed import Feed, PodSource, RecordingError, SkippedInput, StatusChanged
from neuron_top.fmt import plural
from neuron_top.sources.base import Backoff, Source, State
from neuron_top.sources.framing import split_concatenated
from neuron_top.textsafe import clean

if TYPE_CHECKING:
    from neuron_top.recording.index import Index

__all__ = ["RecordingBusy", "RecordingState", "RecordingWriter", "compression_for", "free_name",
           "install_signal_handlers", "record_main", "stamp", "write_range"]

# Our own key, as a previous recording wrote it (a re-recorded recording gets a fresh one, not two).
_OWN_KEY = re.compile(rb',?\s*"neuron_top"\s*:\s*\{[^{}]*\}\s*(?=\}\s*\Z)')


NOT_WRITTEN = (".xz", ".bz2", ".lz4", ".zip", ".7z")
"""Names that promise a compression recordings are not written in (xz and bzip2 are read): refused, not written
as plain text under a name that says otherwise."""


def compression_for(path: str | os.PathLike[str]) -> str | None:
    """``"gzip"`` for ``*.gz``, ``"zstd"`` for ``*.zst``/``*.zstd``, else None (plain). A name in ``NOT_WRITTEN``
    is an ``OSError`` (EINVAL) saying what is written."""
    name = str(path).lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith((".zst", ".zstd")):
        return "zstd"
    if name.endswith(NOT_WRITTEN):
        raise OSError(errno.EINVAL, f"recordings are written as plain text, .gz or .zst, not {name.rsplit('.', 1)[1]}"
                      " (compress it afterwards)")
    return None


def _one_line(data: bytes) -> bytes:
    """A pretty-printed document on one line: newlines can only be whitespace between tokens in valid JSON."""
    if b"\n" in data or b"\r" in data:
        return data.replace(b"\r", b" ").replace(b"\n", b" ")
    return data


def stamp(data: bytes, ts: float, pods: bytes = b"") -> bytes | None:
    """``data`` with ``"neuron_top": {"ts": ts}`` spliced in as its last key; None if it is not a JSON object.

    ``pods``: an ``attribution_record`` to keep beside it under ``"neuron_top_pods"`` (before ``neuron_top``; not
    when the report already has one, as a recording played into ``record`` does)."""
    body = data.strip().removeprefix(b"\xef\xbb\xbf").strip()
    if not body.startswith(b"{"):
        return None
    try:
        msgspec.json.decode(body, type=msgspec.Raw)
    except msgspec.DecodeError:
        return None
    body = _one_line(body)
    m = _OWN_KEY.search(body, max(0, len(body) - 512))
    if m is not None:
        body = body[: m.start()] + body[m.end() :]
    inner = body[:-1].rstrip()
    sep = b"" if inner.endswith(b"{") else b","
    if pods and b'"neuron_top_pods"' not in inner:
        inner, sep = b'%s%s"neuron_top_pods":%s' % (inner, sep, pods), b","
    return b'%s%s"neuron_top":{"ts":%.6f}}' % (inner, sep, ts)


@dataclass(frozen=True, slots=True)
class RecordingState:
    """What the header's recording indicator says: where, how much, and what went wrong."""

    name: str
    written: int
    skipped: int = 0
    """Inputs refused because they were not a JSON object."""
    failed: str = ""
    """Why recording stopped (a write failed for good), or empty while it goes on."""
    lost: int = 0
    """Reports not recorded while writes failed for a while (a full disk) and were retried."""
    paused: str = ""
    """Why recording is paused (``RETRIED``: "disk full"), or empty while writes succeed."""
    retry_in: float = 0.0
    """Seconds until the next try, while paused."""

    @property
    def text(self) -> str:
        """What the header's indicator says: "REC night.jsonl.zst 1234" ("· 2 refused" when inputs were not
        reports), "REC PAUSED: disk full, 12 reports not recorded, retrying in 8s · night.jsonl.zst 1234" while a
        full disk is retried, "REC night.jsonl.zst 1300 (12 reports lost while the disk was full)" once it
        resumed, or "REC STOPPED (Permission denied) night.jsonl.zst 1234" once a write failed for good; the most
        important first, as the header cuts it."""
        if self.failed:
            lost = f" ({plural(self.lost, 'report')} lost while the disk was full)" if self.lost else ""
            return f"REC STOPPED ({self.failed}) {self.name} {self.written}{lost}"
        if self.paused:
            wait = math.ceil(self.retry_in)
            when = f"retrying in {wait}s" if wait else "retrying with the next report"  # the back-off is over
            return (f"REC PAUSED: {self.paused}, {plural(self.lost, 'report')} not recorded, {when} · {self.name} "
                    f"{self.written}")
        refused = f" · {self.skipped} refused" if self.skipped else ""
        lost = f" ({plural(self.lost, 'report')} lost while the disk was full)" if self.lost else ""
        return f"REC {self.name} {self.written}{lost}{refused}"


class RecordingWriter:
    """Appends reports to ``path``; thread-safe. Raises ``OSError`` from the constructor or a failed write.

    ``write(data, ts)`` is what ``Collector`` calls for every live report. ``append=False`` truncates first.
    ``lock`` (default) takes an advisory lock on the file and raises ``RecordingBusy`` if another recorder holds
    it. Appending to a file whose contents are not the format its name asks for raises ``OSError`` (EINVAL).

    Args:
        path: the file; ``.gz`` and ``.zst`` compress (``compression="auto"``), anything else is plain NDJSON.
        append: add to an existing recording (False truncates).
        compression: "auto", "gzip", "zstd" or None.
        lock: take the advisory lock (a second recorder on the file is refused).
        clock: Unix time for reports written without one.
        fsync_interval: seconds between fsyncs, so a crash loses at most that much.
        level: the compression level (default: the codec's fast one).
        retry: after a write fails for want of space (``RETRIED``: a full disk, a quota), drop the reports that
            come (counted in ``lost``) and try again after a back-off (``sources.base.Backoff``), appending to the
            same file once there is room (a new gzip member / zstd frame: what was compressed for the failed write
            never reached the file); without it (or for any other error) a failed write stops the recording.
        monotonic: seconds for the back-off (tests drive it).
    """

    def __init__(self, path: str | os.PathLike[str], *, append: bool = True, compression: str | None = "auto",
                 lock: bool = True, clock: Callable[[], float] = time.time, fsync_interval: float = 1.0,
                 level: int | None = None, retry: bool = False,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.path = Path(path)
        self.compression = compression_for(path) if compression == "auto" else compression
        self.clock = clock
        self.fsync_interval = fsync_interval
        self.written = 0
        """Reports written."""
        self.skipped = 0
        """Reports refused because they were not a JSON object."""
        self.interrupted: int | None = None
        """The signal that asked the recording to stop, if one did."""
        self.stopping = threading.Event()
        """Set by the signal handlers when no ``stop`` event was given to ``install_signal_handlers``."""
        self._lock = threading.Lock()
        self._closed = False
        self._failed: OSError | None = None
        self.lost = 0
        """Reports not recorded while a full disk was retried (``retry``)."""
        self._retry = Backoff(first=RETRY_FIRST, cap=RETRY_CAP) if retry else None
        self._monotonic = monotonic
        self._paused: OSError | None = None
        """The write failure being retried (``retry``); None while writes succeed."""
        self._retry_at = 0.0
        self.stream = _is_stream(self.path)
        """A named pipe, a pipe (``/dev/stdout`` into ``| zstd``), a terminal: written as it comes, nothing read
        back (no format check, no repair, no size kept: they cannot seek)."""
        # a stream write-only: a pipe opened for reading too never says its reader left (EPIPE), it fills and
        # blocks; like a shell's redirection, this waits for a reader to open a named pipe. A file O_RDWR: to read
        # what an earlier writer left
        mode = os.O_WRONLY if self.stream else os.O_RDWR | os.O_CREAT
        self._fd = os.open(self.path, mode | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
        self.repaired = ""
        """What was done to a compressed file whose last member was cut (empty when it was whole)."""
        try:
            if lock:
                _lock(self._fd)
            if not self.stream:
                if not append:
                    os.ftruncate(self._fd, 0)  # only once the lock is ours: never cut a file another recorder writes
                _check_format(self._fd, self.compression)
                self.repaired = self._close_cut_member()
            self._level = level
            self._start(level)
        except BaseException:
            os.close(self._fd)
            raise

    def _close_cut_member(self) -> str:
        """Appending to a ``.gz``/``.zst`` whose last member was cut mid-write (a crash, a copy of a file being
        written): a reader would run on from the cut into our new member and lose all of it. So the cut member is
        closed first: its whole reports go into a finished member in its place, the cut tail (a part of a report,
        compressed bytes that do not decode) is dropped, counted and said. A member cut at a flush point (a
        recorder killed between reports) is closed the same way; costs one decompression of the file."""
        from neuron_top.recording.inflate import last_member, recover

        size = os.fstat(self._fd).st_size
        if self.compression is None or size == 0:
            return ""
        fd = self._fd
        last = last_member(self.compression, lambda n, at: os.pread(fd, n, at), size)
        if last is None or last.whole:
            return ""
        cut = os.pread(fd, size - last.start, last.start)
        data = recover(self.compression, cut)
        keep = data[: data.rfind(b"\n") + 1]
        reports = keep.count(b"\n")
        dropped = len(data) - len(keep)
        if self.compression == "gzip":
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
            member = c.compress(keep) + c.flush()
        else:
            import zstandard

            member = zstandard.ZstdCompressor(level=3).compress(keep)
        os.ftruncate(fd, last.start)
        if keep:
            os.write(fd, member)
        _sync(fd)
        tail = f"{dropped:,} bytes of a cut report dropped" if dropped else "nothing else lost"
        return (f"{clean(self.path.name, 60)}: its last {'member' if self.compression == 'gzip' else 'frame'} was "
                f"cut ({len(cut):,} compressed bytes): {reports:,} whole reports kept in a closed one, {tail}")

    def _start(self, level: int | None) -> None:
        """A recording session: a new gzip member / zstd frame of its own (the reader reads them all, and one cut
        short by a killed recorder costs nothing of the others), or a fresh line of a plain file."""
        self._size = 0 if self.stream else os.fstat(self._fd).st_size
        self._last_sync = time.monotonic()
        self._compressor: Any = None
        self._flush_mode = 0
        if self.compression == "gzip":
            self._compressor = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
            self._flush_mode = zlib.Z_SYNC_FLUSH
        elif self.compression == "zstd":
            import zstandard

            self._compressor = zstandard.ZstdCompressor(level=3 if level is None else level).compressobj()
            self._flush_mode = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        elif self._size and os.pread(self._fd, 1, self._size - 1) != b"\n":
            self._emit(b"\n")  # an earlier writer was cut mid-line: start ours on a fresh line

    def state(self) -> RecordingState:
        """A snapshot of the counts for the screen (read from the UI thread while the feed thread writes)."""
        failed, paused = self._failed, self._paused
        why = "" if failed is None else clean(failed.strerror or str(failed), 60)
        return RecordingState(clean(self.path.name, 60), self.written, self.skipped, why, self.lost,
                              _pause_reason(paused) if paused is not None else "",
                              max(0.0, self._retry_at - self._monotonic()) if paused is not None else 0.0)

    def write(self, data: bytes, ts: float | None = None, pods: bytes = b"") -> bool:
        """Record one report at time ``ts`` (default: now), or each of several run together on one line, with the
        pods the node named (``stamp``). Returns False (and counts it) if it is not a report."""
        if ts is None or not math.isfinite(ts):
            ts = self.clock()
        line = stamp(data, ts, pods)
        if line is not None:
            return self.write_line(line)
        # Several reports run together on one line (``cat`` of files without a final newline): one line each.
        parts = split_concatenated(data)
        lines = [stamp(p, ts, pods) for p in parts] if len(parts) > 1 else [None]
        good = [ln for ln in lines if ln is not None]
        if len(good) < len(lines):
            with self._lock:
                self.skipped += len(lines) - len(good)
        return bool(good) and all([self.write_line(ln) for ln in good])

    def write_line(self, line: bytes) -> bool:
        """Append ``line`` (one report, no line end) byte for byte, as one write.

        Returns False if the writer is already closed (a report racing shutdown is dropped, not an error)."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._closed:
                return False
            if self._paused is not None and self._monotonic() < self._retry_at:
                self.lost += 1  # the disk is still full, as far as we know: not recorded, counted
                return True
            try:
                self._append(line + b"\n", fresh=self._paused is not None)
            except OSError as exc:
                if self._retry is None or exc.errno not in RETRIED:
                    self._failed = exc
                    raise
                self._paused = exc
                self._retry_at = self._monotonic() + self._retry.next()
                self.lost += 1
                return True
            if self._paused is not None:  # room again: recording goes on in the same file
                self._paused = None
                self._retry.reset()  # type: ignore[union-attr]
            return True

    def _append(self, out: bytes, fresh: bool) -> None:
        """One report's line, as one write, and the fsync when one is due. ``fresh``: after failed writes, a new
        member/frame first (the compressor holds what never reached the file; a plain file was cut back to its
        last whole line)."""
        if fresh or (not self.stream and os.fstat(self._fd).st_size != self._size):
            # Someone else changed the file: logrotate's copytruncate emptied it (the rest of our gzip member
            # or zstd frame would begin mid-stream, unreadable to the end of the session), or a shell's >>
            # added to it. Go on in a member/frame (or on a line) of our own.
            self._start(self._level)
        if self._compressor is not None:
            out = self._compressor.compress(out) + self._compressor.flush(self._flush_mode)
        self._emit(out)
        self.written += 1
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval:
            self._last_sync = now
            _sync(self._fd)

    def _emit(self, out: bytes) -> None:
        try:
            n = os.write(self._fd, out)
            while n < len(out):  # short write: only on a full disk or a quota, where the next one raises
                n += os.write(self._fd, out[n:])
        except OSError:
            with contextlib.suppress(OSError):  # a stream cannot be cut (EINVAL): what went, went
                os.ftruncate(self._fd, self._size)  # no partial line, no half a compressed block
            raise
        self._size += len(out)

    def close(self) -> None:
        """Finish the compressed stream, fsync and close; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if (self._compressor is not None and self._failed is None and self._paused is None
                        and (self.stream or os.fstat(self._fd).st_size == self._size)):  # not a stream cut away
                    self._emit(self._compressor.flush())
                _sync(self._fd)
            finally:
                os.close(self._fd)

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


RETRIED = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
"""Write failures that pass once space is freed: a full disk, a quota. Others (a removed device, permissions)
stop the recording."""
RETRY_FIRST = 1.0
RETRY_CAP = 30.0
"""Seconds of the back-off between tries on a full disk (doubling from ``RETRY_FIRST``)."""


def _pause_reason(exc: OSError) -> str:
    return "disk full" if exc.errno == errno.ENOSPC else clean(exc.strerror or str(exc), 40).lower()


class RecordingBusy(OSError):
    """Another process holds the recording's lock: it is recording to that file now."""


def _is_stream(path: Path) -> bool:
    """Whether ``path`` exists and is not a regular file (a named pipe, ``/dev/stdout`` on a pipe, a terminal, a
    device): what cannot seek is written as a stream."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _sync(fd: int) -> None:
    """``os.fsync``, except where there is nothing to sync: a pipe or a device (``/dev/null``, a FIFO) answers
    EINVAL, which is not a failed recording."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EROFS) or stat.S_ISREG(os.fstat(fd).st_mode):
            raise


def _lock(fd: int) -> None:
    """An advisory lock for as long as the file is open (released by the kernel however we exit, even SIGKILL).

    Two recorders on one file would interleave their reports: in a plain file lines of both in turn, in a
    compressed one blocks of each stream inside the other's, which no reader can take apart. Only a regular file:
    a device or a pipe (``/dev/null``, ``/dev/stdout``, ``>(zstd > x)``) is one inode for every process on the
    machine, so a lock there would refuse a second, unrelated recorder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RecordingBusy(errno.EWOULDBLOCK, "another process is recording to it (choose another file, or stop "
                            "that recorder first)") from None
    except OSError:
        pass  # a file system without locks (some network mounts): record anyway


_FORMATS = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}


def _check_format(fd: int, compression: str | None) -> None:
    """Refuse to append to a file that holds another format than its name says we write (gzip members after
    plain lines, or the reverse): the reader goes by what the file starts with, and the new reports would be lost."""
    head = os.pread(fd, 4, 0)
    if not head.strip():
        return
    has = next((k for k, magic in _FORMATS.items() if head.startswith(magic)), None)
    if has != compression:
        def say(kind: str | None) -> str:
            return "plain text" if kind is None else f"{kind} data"
        raise OSError(errno.EINVAL, f"it holds {say(has)}, and its name asks for {say(compression)}: "
                      "record to a new file, or give it a name that matches")


def install_signal_handlers(writer: RecordingWriter, stop: threading.Event | None = None) -> Callable[[], None]:
    """Make SIGINT/SIGTERM/SIGHUP stop a recording between reports; returns a function restoring the old ones.

    The handler only sets ``stop`` (default: ``writer.stopping``) and notes the signal on ``writer``, so a line is never cut by Python code
    running mid-write. A second signal gets the default action (the file still holds whole lines). Outside the
    main thread, signals cannot be handled and this does nothing.
    """
    stop = writer.stopping if stop is None else stop
    sigs = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    old: dict[signal.Signals, object] = {}

    def handler(signum: int, frame: object) -> None:
        if writer.interrupted is not None:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        writer.interrupted = signum
        stop.set()

    try:
        for s in sigs:
            old[s] = signal.signal(s, handler)
    except ValueError:  # not the main thread
        for s, h in old.items():
            signal.signal(s, h)  # type: ignore[arg-type]
        return lambda: None

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)  # type: ignore[arg-type]

    return restore


_END = object()


def record_main(source: Source, path: str | os.PathLike[str], stop: threading.Event, *,
                err: TextIO | None = None, handle_signals: bool = True,
                signalled: Callable[[], int | None] | None = None, pods: PodSource | None = None) -> int:
    """``neuron-top record``: drain ``source`` into a recording at ``path`` until it ends or ``stop`` is set.

    The source runs in a thread so that a signal stops the recording at once even while the source waits for
    its next report. Prints status lines to stderr; returns the exit code (0; 2 if the file cannot be recorded to
    at all, as ``--record`` says; 1 if nothing could be recorded because the source failed, or reports were lost;
    128+signal after SIGINT, SIGTERM or SIGHUP, once the file is closed).
    With ``handle_signals`` it takes the signals itself (``install_signal_handlers``); the command line owns them
    instead (``cli/signals.py``) and passes ``signalled``, which says which signal set ``stop``, if one did.
    With ``pods`` (the kubelet's answer, ``k8s.PodWatcher``) each report is recorded with who held each core.
    """
    err = err if err is not None else sys.stderr
    try:
        writer = RecordingWriter(path, retry=True)  # a full disk pauses the recording until there is room again
    except OSError as exc:
        print(f"neuron-top: cannot record to {clean(str(path))}: {clean(exc.strerror or str(exc))}", file=err)
        return 2  # nothing started: as --record and fleet --record say it (a usage error)
    if writer.repaired:
        print(f"neuron-top: {writer.repaired}", file=err)
    restore = install_signal_handlers(writer, stop) if handle_signals else (lambda: None)
    # The feed runs in a thread (it writes each report as it comes), so a signal stops the recording at once
    # even while the source waits for its next report; this thread only reports what happened.
    feed = Feed(source, writer, decode=False, pods=pods)
    events: queue.Queue[object] = queue.Queue(maxsize=64)

    def pump() -> None:
        try:
            for event in feed.events(stop):
                while not stop.is_set():
                    try:
                        events.put(event, timeout=0.2)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    break
        finally:
            events.put(_END)

    thread = threading.Thread(target=pump, name="record source", daemon=True)
    thread.start()
    skipped, failed, rc = 0, "", 0
    paused = ""

    def say_pause() -> None:
        """A line when a full disk pauses the recording and one when it goes on (a daemon has no header)."""
        nonlocal paused
        st = writer.state()
        if st.paused and not paused:
            print(f"neuron-top: recording to {clean(str(path))} paused: {st.paused}; retrying (reports meanwhile "
                  "are not recorded)", file=err)
        elif paused and not st.paused and not st.failed:
            print(f"neuron-top: recording to {clean(str(path))} goes on: {plural(st.lost, 'report')} lost while "
                  f"{paused}", file=err)
        paused = st.paused

    try:
        while not stop.is_set():  # never stop.wait() here: the signal handler sets it on this thread
            say_pause()
            try:
                event = events.get(timeout=0.2)
            except queue.Empty:
                continue
            if event is _END:
                break
            if isinstance(event, SkippedInput):
                skipped = event.total
            elif isinstance(event, RecordingError):
                print(f"neuron-top: recording to {clean(str(path))} failed: {event.reason}", file=err)
                rc = 1
                break
            elif isinstance(event, StatusChanged) and event.status.state in (State.FAILED, State.RESTARTING):
                st = event.status
                failed = st.message if st.state is State.FAILED else failed
                said = f" (its last output: {st.last_words})" if st.last_words else ""
                print(f"neuron-top: {clean(st.message)}{said}", file=err)
    finally:
        stop.set()
        source.close()
        thread.join(timeout=2.0)
        say_pause()  # a pause the loop had no turn to see (the source ended at once)
        try:
            writer.close()
        except OSError as exc:
            print(f"neuron-top: closing {clean(str(path))} failed: {clean(str(exc))}", file=err)
            rc = 1
        restore()
    if failed and writer.written == 0:
        rc = 1
    if signalled is not None and writer.interrupted is None:
        writer.interrupted = signalled()
    if writer.interrupted:
        rc = 128 + writer.interrupted  # what shells expect of a process a signal ended, once the file is closed
    why = f", stopped by {signal.Signals(writer.interrupted).name}" if writer.interrupted else ""
    lost = f", {writer.lost} not recorded (disk full)" if writer.lost else ""
    print(f"neuron-top: {writer.written} reports written to {clean(str(path))}, {skipped} skipped{lost}{why}",
          file=err)
    if writer.lost and rc == 0:
        rc = 1  # data was lost: the status says so
    return rc


def write_range(index: Index, start: int, stop: int, out_path: str | os.PathLike[str]) -> int:
    """Copy reports ``[start, stop)`` of ``index`` to a new recording at ``out_path``; returns how many.

    Lines are copied byte for byte (a pretty-printed report is put on one line, line ends become ``\\n``);
    compression follows ``out_path``'s name. The file appears complete or not at all (written aside, then linked
    into place), and never over an existing file: ``FileExistsError`` if ``out_path`` exists, even if it appeared
    while this was writing.
    """
    start, stop = max(0, start), min(stop, len(index))
    out = Path(out_path)
    if out.exists():
        raise FileExistsError(errno.EEXIST, "a file of that name exists", str(out))
    tmp = out.with_name(f".{out.name}.{os.getpid()}.partial")
    count = 0
    try:
        with RecordingWriter(tmp, append=False, compression=compression_for(out), fsync_interval=math.inf) as w:
            for i in range(start, stop):
                w.write_line(_one_line(index.get(i)))
                count += 1
        try:
            os.link(tmp, out)  # fails if the name was taken meanwhile; os.replace would overwrite it
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: a checked rename (a small window, no overwrite seen)
            if out.exists():
                raise FileExistsError(errno.EEXIST, "a file of that name exists", str(out)) from None
            os.rename(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return count


def free_name(path: str | os.PathLike[str]) -> Path:
    """``path`` if no file has that name, else ``stem-2.ext``, ``stem-3.ext``, ... (the first free one): what ``w``
    writes to, since it must never overwrite a file."""
    p = Path(path)
    if not p.exists():
        return p
    name = p.name
    cut = name.find(".", 1)
    stem, ext = (name[:cut], name[cut:]) if cut > 0 else (name, "")
    k = 2
    while (p.with_name(f"{stem}-{k}{ext}")).exists():
        k += 1
    return p.with_name(f"{stem}-{k}{ext}")

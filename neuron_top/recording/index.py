"""Read recordings of neuron-monitor output: an index of where each report is, and a replay source.

A recording is what neuron-monitor writes: one JSON document per line (``neuron-top --record`` adds one key,
``"neuron_top": {"ts": <unix seconds>}``, at the end of each). Files saved by hand are accepted too: one or more
pretty-printed reports one after another (as ``jq .`` writes them), a last report with no trailing newline, reports
run together on one line (``cat`` of such files: ``{..}{..}``, also with blanks between and on the last line), a
BOM, CRLF line ends, blank lines and garbage lines (garbage is skipped and counted, never fatal).

How reports are found, and why it is cheap:

* Lines are found with ``mmap.find(b"\\n")`` (memchr speed, several GB/s). A line whose first and last
  non-blank bytes are ``{`` and ``}`` is taken as a report *without parsing it*: validating 1 GB of JSON costs
  ~2 s, four times the indexing budget, and every report is parsed by the decoder anyway, which counts the ones
  that fail. Only the unterminated last line of a file is parsed here, because that is where a killed writer
  leaves a cut report. At the end of a finished file it is a report if it parses, else a skipped "truncated
  report". While the input may still grow (follow mode, a pipe) it waits for its newline, or until the input
  has not grown for one poll (``refresh`` without growth; a pipe quiet for 0.2 s) and it parses: accepting it
  sooner would take ``{..}`` out of a line that is still being written as ``{..}junk``.
* A line that starts with ``{`` at column 0 but does not end with ``}`` may begin a pretty-printed report. The
  report runs to the next line that is exactly ``}`` at column 0 (``jq`` and ``json.dumps(indent=...)`` both put
  the outer braces there); that span is parsed, and kept if it is a JSON object. If another column-0 ``{`` comes
  first, or the span does not parse, that first line is skipped (a cut report) and the scan goes on from
  the line after it.
* A report's time is the ``"neuron_top": {"ts": ...}`` key, found with a regex over the last 256 bytes of the
  line (never a full decode). Reports without it get a synthesized time: the previous report's time plus this
  report's period, where the period is the first ``"period":`` value in the report's first 64 KiB (neuron-monitor
  writes the seconds since the group's last update there; groups share the global period in practice), or the
  previous period, or 1 s. The first report without the key is at 0.0, so such recordings have relative times
  (``wallclock`` is False), until a report with the key comes (a recorder appended to raw output): then the
  reports before it are moved to end one period before it, and the recording has wall-clock times. Times are
  kept as recorded, in file order, also when the clock goes back (``cat live.jsonl live.jsonl.1``, a clock
  stepped back): the scrubber, the summary and pacing show the jump back. ``find_time`` bisects the latest time
  so far at each report (a second array), so a time is found where the recording first reached it.
* ``.gz`` and ``.zst`` files (recognised by their magic bytes, not their names) have no random access. They are
  decompressed once, in the background, into an anonymous temporary spool file (in ``spool_dir``, default the
  system temp dir; it needs as much space as the uncompressed recording and vanishes when closed), and the spool
  is indexed like a plain file. Concatenated gzip members and zstd frames are read; a stream cut off by a killed
  writer is read up to its last flushed block.

Offsets live in ``array('q')`` (16 bytes per report) and times in ``array('d')``: a 1 GB recording of 120 KB
trn2 reports is ~9,000 reports, well under a megabyte of index. ``skipped`` counts garbage lines; ``blank``
counts blank lines (harmless, so not reported as skipped items); a BOM and CRLF are simply stripped.

Stdin (``SpooledIndex``) and named pipes are copied into a spool file as they are read, so seeking back works
within what has arrived; gzip/zstd on stdin is recognised by its magic bytes.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import math
import mmap
import os
import re
import select
import stat
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import msgspec

from neuron_top.decode import NOT_A_REPORT, has_report_group
from neuron_top.fmt import plural
from neuron_top.recording.inflate import Damage, Inflater, compression_of
from neuron_top.recording.pacing import HOLE_HOLD, Pacer
from neuron_top.sources.base import Item, RawReport, Skipped, State, Status
from neuron_top.sources.framing import PREFIX_MAX, after_log_prefix, concatenated_spans, prefix_time
from neuron_top.textsafe import clean

__all__ = ["Index", "RecordingIndex", "RecordingSource", "SpooledIndex", "open_recording"]

FLEET_MAGIC = b'{"neuron_top_fleet":'
"""How a fleet recording's line starts (``fleet.record``): indexed as a report is."""
_OTHER_FORMATS = ((b"\x04\x22\x4d\x18", "lz4"), (b"PK\x03\x04", "zip"), (b"7z\xbc\xaf", "7-Zip"))
"""Compressed formats recordings are not read in: a clear refusal instead of "no reports (56 bad lines skipped)"."""
_WS = b" \t\r\f\v"
_WS_SET = frozenset(_WS)
_LEAD = re.compile(rb"(?:[ \t\r\f\v]|\xef\xbb\xbf)*")  # whitespace and BOMs before a report
_TS_TAIL = re.compile(rb'"neuron_top"\s*:\s*\{\s*"ts"\s*:\s*(-?[0-9][0-9.eE+-]*)[^{}]*\}\s*\}\s*\Z')
_OWN_PREFIX = b'"neuron_top":{"ts":'
_OWN_LEN = len(_OWN_PREFIX)
_PERIOD = re.compile(rb'"period"\s*:\s*([0-9][0-9.eE+-]*)')
# A column-0 "}" line (or "}{": two pretty-printed reports run together by cat), or a line starting with "{".
_BRACKET_LINE = re.compile(rb"^(?:\}[ \t\r]*$|\}[ \t\r]*\{|\{)", re.M)
_TAIL_WINDOW = 256
_PERIOD_WINDOW = 64 * 1024
_MAX_PERIOD = 86400.0
_CHUNK = 1 << 20  # compressed bytes read per step
_PENDING = -1
_NO_DAMAGE = 1 << 62
_JOINT_WS = re.compile(rb"}[ \t]+{")  # reports on one line with blanks between ("printf '%s %s'", jq's input)


def _joined(mm: mmap.mmap, s: int, t: int) -> bool:
    """Whether ``[s, t)`` may hold reports run together: ``}{``, or ``}`` and ``{`` with blanks between."""
    return mm.find(b"}{", s, t) >= 0 or _JOINT_WS.search(mm, s, t) is not None


_JOIN_FIRST = 16  # the first reports of a file are all looked at for reports run together
_RELEASE = 64 << 20
_CAN_RELEASE = hasattr(mmap.mmap, "madvise") and hasattr(mmap, "MADV_DONTNEED")


def _valid_object(data: bytes | memoryview) -> bool:
    """Whether ``data`` is exactly one JSON document (the caller has checked it starts with ``{``)."""
    try:
        msgspec.json.decode(data, type=msgspec.Raw)
    except msgspec.DecodeError:
        return False
    return True


def _sample(data: bytes) -> str:
    return clean(data[:80].rstrip().decode("utf-8", "replace"), 80)


class Index(Protocol):
    """A recording index, whole: what the replay screens, the controller, ``--summary``, ``w`` and the trace
    timeline's metrics read. ``RecordingIndex`` and ``SpooledIndex`` are the two; a test's stand-in implements all
    of it, so a rename fails the type check instead of a ``getattr`` default going quietly wrong."""

    name: str
    """The file's name (or "stdin") for the header; not yet made safe to show (``textsafe.clean`` it)."""
    follow: bool
    """The input may still grow (``tail -f``, a pipe): its end is not final."""
    generation: int
    """Bumped when a followed input was replaced and indexing started over."""
    skipped: int
    """Garbage lines and cut reports skipped so far."""
    wallclock: bool
    """Report times are unix seconds (False: relative, from raw neuron-monitor output)."""
    error: str | None
    """Why reading stopped early, if it did."""

    def __len__(self) -> int: ...
    def get(self, i: int) -> bytes: ...
    def span(self, i: int) -> tuple[int, int]: ...
    def timestamp(self, i: int) -> float: ...
    def find_time(self, t: float) -> int: ...
    def find_at_or_before(self, t: float) -> int: ...
    def skips(self, start: int = 0) -> list[tuple[int, Skipped]]: ...
    def take_notices(self) -> list[str]: ...
    def refresh(self) -> int: ...
    def wait(self, timeout: float | None = None) -> bool: ...
    def wait_for(self, i: int, timeout: float | None = None) -> bool: ...
    def close(self) -> None: ...

    @property
    def done(self) -> bool: ...
    @property
    def finished(self) -> bool: ...
    @property
    def progress(self) -> float: ...
    @property
    def spooled(self) -> bool:
        """A stream copied as it is read (stdin, a pipe): the header says "reading", not "indexing N%"."""
        ...


class _IndexBase:
    """The index proper: scanning a data file that only grows, and reading reports back by number.

    Subclasses say where the data file's bytes come from (``_pump``). Scanning runs in one background thread
    first, then in ``refresh`` (under a lock); readers on other threads only read the published count ``_n``
    and the append-only arrays, which is safe under the GIL.
    """

    name: str
    follow: bool = False

    def __init__(self) -> None:
        self._data_fd = -1
        self._empty()
        self.generation = 0
        """Bumped when the input was replaced (a followed file rotated or truncated) and indexing started over:
        report numbers from before mean nothing now."""
        self.notices: list[str] = []
        """What happened to a followed file (rotated, truncated), for the screen to say; it takes them."""
        self._lock = threading.RLock()
        self._done = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    def _empty(self) -> None:
        """No reports, nothing scanned: the state before the first byte (and after the input was replaced)."""
        self._n = 0  # first: readers on other threads look below it
        self._starts = array("q")
        self._ends = array("q")
        self._ts = array("d")
        self._mono = array("d")  # the latest time so far at each report: what a time is looked up in
        self._pos = 0  # offset of the first byte not yet consumed by the scanner
        self._avail = 0  # bytes available in the data file
        self._eof = False  # no more bytes will ever come
        self._tail_end = -1  # end of an unterminated line accepted as a report
        self._last_period = 1.0
        self._last_ts = -math.inf
        self._max_ts = -math.inf
        self.skipped = 0
        """Garbage lines (and cut reports) skipped so far."""
        self.blank = 0
        """Blank lines seen (not reported as skipped: they are harmless)."""
        self.wallclock = False
        """True when report times are unix seconds from ``neuron_top.ts`` keys, False when relative."""
        self.error: str | None = None
        """Why reading stopped early (an I/O error), if it did."""
        self._skips: list[tuple[int, Skipped]] = []
        self._damage: list[tuple[int, Damage]] = []  # compressed data lost, by where it falls in the data
        self._next_damage = _NO_DAMAGE
        self._cur_skip: list = []  # [pos, reason, sample, count] being coalesced
        self._lengths: list[int] = []  # of the last reports indexed (see _add)
        self._join_len = 0.0  # lines longer than this are looked at for reports run together

    def take_notices(self) -> list[str]:
        """``notices`` since the last call."""
        out, self.notices = self.notices, []
        return out

    # -- public API ---------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    @property
    def done(self) -> bool:
        """The initial indexing pass has finished (for a pipe: its end was reached)."""
        return self._done.is_set()

    @property
    def finished(self) -> bool:
        """No more reports can ever appear (the input ended and we are not following it)."""
        return self._done.is_set() and (self._eof or self._closed)

    @property
    def progress(self) -> float:
        """Fraction of the input indexed so far, 0..1 (1.0 once the initial pass is done)."""
        if self._done.is_set():
            return 1.0
        total, got = self._progress_parts()
        return min(1.0, got / total) if total > 0 else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the initial pass is done; returns whether it is."""
        return self._done.wait(timeout)

    def wait_for(self, i: int, timeout: float | None = None) -> bool:
        """Block until report ``i`` is indexed or the initial pass ends; returns whether report ``i`` exists."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._n <= i and not self._done.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            self._done.wait(0.005 if left is None else min(0.005, left))
        return self._n > i

    def get(self, i: int) -> bytes:
        """Report ``i`` as bytes (no line end): one ``pread``, whatever the size of the file."""
        if not 0 <= i < self._n:
            raise IndexError(f"report {i} is not in the recording ({self._n} indexed)")
        s = self._starts[i]
        return os.pread(self._data_fd, self._ends[i] - s, s)

    def span(self, i: int) -> tuple[int, int]:
        """Byte offsets ``[start, end)`` of report ``i`` in the (decompressed) data."""
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._starts[i], self._ends[i]

    def timestamp(self, i: int) -> float:
        """Report ``i``'s time (see the module docstring for where it comes from)."""
        if not 0 <= i < self._n:
            raise IndexError(f"report {i} is not in the recording ({self._n} indexed)")
        return self._ts[i]

    def find_time(self, t: float) -> int:
        """Index of the first report at or after time ``t`` (the last report if all are before it); where the
        clock went back, the first report that reached ``t``."""
        n = self._n
        if n == 0:
            raise IndexError("the recording has no reports")
        return min(bisect.bisect_left(self._mono, t, 0, n), n - 1)

    def find_at_or_before(self, t: float) -> int:
        """Index of the last report at or before time ``t`` (the first report if all are after it): where a move
        to a time lands, as in dolphie, so a target between two reports never lands on the later one."""
        n = self._n
        if n == 0:
            raise IndexError("the recording has no reports")
        return max(bisect.bisect_right(self._mono, t, 0, n) - 1, 0)

    @property
    def spooled(self) -> bool:
        return False

    def skips(self, start: int = 0) -> list[tuple[int, Skipped]]:
        """Skipped items from number ``start`` on, each with the report number it came before."""
        return self._skips[start:]

    def refresh(self) -> int:
        """Index what was added to the input since the last look (``tail -f``); returns the report count.

        A no-op while the background pass is still running (it will get there)."""
        if self._closed or (self._thread is not None and self._thread.is_alive()):
            return self._n
        with self._lock:
            try:
                self._check_replaced()
                grew = False
                while self._pump():
                    grew = True
                    self._scan(self._eof)
                self._scan(self._eof, settled=not grew)
            except Exception as exc:  # bad input or I/O: say why, keep what was indexed
                self._fail(f"read error: {exc}")
        return self._n

    def close(self) -> None:
        """Stop indexing and release the files; safe to call twice and from another thread."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        if self._lock.acquire(timeout=2.0):  # a reader stuck in a blocking read keeps its files
            try:
                self._release()
            finally:
                self._lock.release()
        self._done.set()

    def __enter__(self) -> _IndexBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- for subclasses -----------------------------------------------------------------------------------------

    def _pump(self) -> bool:
        """Make more data bytes available (update ``_avail``, maybe ``_eof``); return whether any came."""
        raise NotImplementedError

    def _check_replaced(self) -> None:
        """Follow mode: start over if the input was rotated or truncated (``RecordingIndex``)."""

    def _progress_parts(self) -> tuple[int, int]:
        return 0, 0

    def _release(self) -> None:
        raise NotImplementedError

    def _start(self, name: str) -> None:
        self._thread = threading.Thread(target=self._run, name=f"index {name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self._lock:
                while not self._closed:
                    got = self._pump()
                    self._scan(self._eof, settled=not got and self._keep_waiting())
                    if self._eof or not (got or self._keep_waiting()):
                        break
        except Exception as exc:  # bad input or I/O: say why, keep what was indexed
            self._fail(str(exc))
        finally:
            self._flush_skip()
            self._done.set()

    def _keep_waiting(self) -> bool:
        """Whether the background pass should keep polling when no data came (a pipe: yes; a file: no)."""
        return False

    def _spool_out(self, outs: Iterable[bytes | Damage]) -> None:
        """Append decompressed bytes to the data file; note damage where it falls in the data, for the scanner to
        count as a skipped item between the reports around it."""
        for out in outs:
            if isinstance(out, Damage):
                self._damage.append((self._avail, out))
                self._next_damage = min(self._next_damage, self._avail)
            elif out:
                os.pwrite(self._data_fd, out, self._avail)
                self._avail += len(out)

    def _note_damage(self, pos: int) -> None:
        """Count the damage that lies before data offset ``pos``."""
        while self._damage and self._damage[0][0] <= pos:
            _, d = self._damage.pop(0)
            self._add_skip(self._n, "damaged compressed data", clean(d.text, 80))
        self._next_damage = self._damage[0][0] if self._damage else _NO_DAMAGE

    def _fail(self, message: str) -> None:
        self.error = message
        self._add_skip(self._n, "unreadable input", clean(message, 80))
        self._flush_skip()
        self._eof = True

    # -- scanning -----------------------------------------------------------------------------------------------

    def _scan(self, final: bool, settled: bool = False) -> None:
        """Index complete lines in ``[_pos, _avail)``; with ``final``, also the unterminated last line.

        ``settled``: the input has not grown for a while (a poll of a followed file, a quiet pipe), so an
        unterminated last line that parses is taken as complete; until then it waits for its newline, since
        more bytes on the same line would make it garbage."""
        avail = self._avail
        if self._pos >= avail or self._data_fd < 0:
            self._note_damage(avail)
            self._flush_skip()
            return
        mm = mmap.mmap(self._data_fd, avail, access=mmap.ACCESS_READ)
        try:
            self._scan_map(mm, avail, final, settled)
            if self._pos >= avail:
                self._note_damage(avail)
        finally:
            self._flush_skip()
            with contextlib.suppress(BufferError):  # a match object still alive: the GC closes it
                mm.close()

    def _scan_map(self, mm: mmap.mmap, avail: int, final: bool, settled: bool) -> None:
        find = mm.find
        pos = self._pos
        # Hand scanned pages back every 64 MiB: they stay in the page cache, but not in our RSS.
        released = pos - pos % mmap.PAGESIZE
        next_release = released + _RELEASE if _CAN_RELEASE else 1 << 62
        while pos < avail and not self._closed:
            if pos >= self._next_damage:
                self._note_damage(pos)
            if pos >= next_release:
                cut = pos - pos % mmap.PAGESIZE
                mm.madvise(mmap.MADV_DONTNEED, released, cut - released)
                released, next_release = cut, cut + _RELEASE
            nl = find(b"\n", pos, avail)
            if nl >= 0:
                # Fast path: "{...}\n" or "{...}\r\n", the shape of every line neuron-monitor writes.
                if mm[pos] == 0x7B and nl - pos >= 2:
                    last = nl - 1
                    if mm[last] == 0x0D:
                        last -= 1
                    if last > pos and mm[last] == 0x7D:
                        self._add(mm, pos, last + 1)
                        pos = self._pos = nl + 1
                        continue
                nxt = self._line(mm, pos, nl, avail, final, settled)
            else:
                nxt = self._line(mm, pos, avail, avail, final, settled)
            if nxt == _PENDING:
                break
            pos = self._pos = nxt

    def _strip(self, mm: mmap.mmap, s: int, e: int) -> tuple[int, int]:
        m = _LEAD.match(mm, s, e)
        s = m.end() if m else s
        del m
        t = e
        while t > s:
            w = mm[max(s, t - 4096) : t]
            r = w.rstrip(_WS)
            if r:
                t -= len(w) - len(r)
                break
            t -= len(w)
        return s, t

    def _line(self, mm: mmap.mmap, pos: int, e: int, avail: int, final: bool, settled: bool) -> int:
        """Classify the line ``[pos, e)`` (``e == avail``: no newline yet); return where the next line starts."""
        terminated = e < avail
        nxt = e + 1 if terminated else avail
        s, t = self._strip(mm, pos, e)
        if s == t:
            if not terminated and not final:
                return _PENDING
            if pos != self._tail_end and (terminated or pos < e):
                self.blank += 1
            return nxt
        first, last = mm[s], mm[t - 1]
        if first == 0x7B and last == 0x7D and t - s >= 2:
            if terminated:
                self._add(mm, s, t)
                return nxt
            # An unterminated last line: complete if it parses and the input is final or has settled.
            if (final or settled) and _valid_object(mm[s:t]):
                self._add(mm, s, t)
                self._tail_end = avail
                return nxt
            # `cat a.json b.json` of files saved without a final newline: "{..}{..}" and no newline at all. While
            # the input may still grow, only when every one is whole (the last may be still being written).
            if (final or settled) and _joined(mm, s, t) and self._salvage(mm, s, t, whole_only=not final):
                self._tail_end = avail
                return nxt
            if not final:
                return _PENDING
            self._add_skip(self._n, "truncated report", _sample(mm[s:t]))
            return nxt
        if first == 0x7B and (terminated or final) and _joined(mm, s, t) and self._salvage(mm, s, t):
            return nxt
        if first == 0x7B and mm[pos:s].strip(b"\xef\xbb\xbf") == b"":
            return self._multiline(mm, s, nxt, avail, final, settled)
        if not terminated and not final:
            return _PENDING
        if first != 0x7B and last == 0x7D and (j := after_log_prefix(mm[s : min(t, s + PREFIX_MAX + 1)])) > 0:
            # a logger's prefix (kubectl logs --timestamps, journalctl): the report after it, at the prefix's time
            # unless the report has a recorder's own
            self._add_one(mm, s + j, t, prefix_time(mm[s : s + j]))
            return nxt
        reason = "truncated report" if first == 0x7B else "not a report"
        self._add_skip(self._n, reason, _sample(mm[s : min(t, s + 80)]))
        return nxt

    def _salvage(self, mm: mmap.mmap, s: int, t: int, whole_only: bool = False) -> bool:
        """A line of reports run together with something cut or foreign among them: keep each whole report (parsed,
        since nothing else vouches for it), skip the rest. False when none is whole (``whole_only``: when any
        is not)."""
        spans = concatenated_spans(mm[s:t])
        good = [(a, b) for a, b in spans if mm[s + a] == 0x7B and _valid_object(mm[s + a : s + b])]
        if not good or (whole_only and len(good) < len(spans)):
            return False
        for a, b in spans:
            if (a, b) in good:
                self._add_one(mm, s + a, s + b)
            else:
                self._add_skip(self._n, "truncated report", _sample(mm[s + a : min(s + b, s + a + 80)]))
        return True

    def _multiline(self, mm: mmap.mmap, s: int, nxt: int, avail: int, final: bool, settled: bool) -> int:
        """A column-0 ``{`` line that is not a whole report: a pretty-printed report, or a cut one."""
        m = _BRACKET_LINE.search(mm, nxt, avail) if nxt < avail else None
        close = m.start() if m is not None and mm[m.start()] == 0x7D else -1
        other = m.start() if m is not None and close < 0 else -1
        del m
        if close < 0 and other < 0 and not final:
            return _PENDING
        if close >= 0:
            end_nl = mm.find(b"\n", close, avail)
            if end_nl < 0 and not (final or settled):
                return _PENDING
            ok = _valid_object(mm[s : close + 1])
            after = end_nl + 1 if end_nl >= 0 else avail
            nxt_open = mm.find(b"{", close, after)
            if nxt_open >= 0 and ok:  # "}{": the next report starts on this line
                self._add(mm, s, close + 1)
                return nxt_open
            if ok:
                self._add(mm, s, close + 1)
                if end_nl < 0:
                    self._tail_end = avail
                return after
        # Not a report: skip this line only; the lines after it are looked at one by one (one of them may be a
        # whole report, such as an indented one-line report).
        self._add_skip(self._n, "truncated report", _sample(mm[s : min(nxt, s + 80)]))
        return nxt

    def _add(self, mm: mmap.mmap, s: int, t: int) -> None:
        """Index ``[s, t)``: one report, or several run together on one line (``cat`` of files saved without a
        final newline gives ``{..}{..}``), each then an entry of its own.

        Looking for the joint in every report would cost a scan of all the data (``find(b"}{")`` runs at
        ~0.8 GB/s: seven times the whole indexing pass). Reports of one machine are of similar length, and lines
        holding two or more are longer, so only the first lines and those over 1.5 times the usual report length
        are searched; a find is confirmed by a parse of the line (``concatenated_spans``)."""
        size = t - s
        if (self._n < _JOIN_FIRST or size > self._join_len) and _joined(mm, s, t):
            spans = concatenated_spans(mm[s:t])
            if len(spans) > 1:
                for a, b in spans:
                    if mm[s + a] == 0x7B and mm[s + b - 1] == 0x7D:
                        self._add_one(mm, s + a, s + b)
                    else:
                        self._add_skip(self._n, "not a report", _sample(mm[s + a : min(s + b, s + a + 80)]))
                return
        self._add_one(mm, s, t)

    def _shift(self, delta: float) -> float:
        """Move the times of every report so far by ``delta`` (once: relative times become wall-clock times when
        the first report with its own time arrives); returns the last one."""
        for times in (self._ts, self._mono):
            for i in range(len(times)):
                times[i] += delta
        self._last_ts += delta
        self._max_ts += delta
        return self._last_ts

    def _add_one(self, mm: mmap.mmap, s: int, t: int, logged: float | None = None) -> None:
        # A JSON object without any of neuron-monitor's groups is not a report (``decode.has_report_group``: the
        # rule the feed, --once and --summary follow): skipped here, so it is neither a report number nor time.
        if not has_report_group(mm, s, t) and mm[s : s + len(FLEET_MAGIC)] != FLEET_MAGIC:
            self._add_skip(self._n, NOT_A_REPORT, _sample(mm[s : min(t, s + 80)]))
            return
        # Hot path (once per report): find the key with rfind (memchr speed), then match only there.
        ts = math.nan
        k = mm.rfind(b'"neuron_top"', t - _TAIL_WINDOW if t - _TAIL_WINDOW > s else s, t)
        if k >= 0:
            try:  # the exact bytes RecordingWriter writes ...
                if mm[k : k + _OWN_LEN] != _OWN_PREFIX or mm[t - 2 : t] != b"}}":
                    raise ValueError
                ts = float(mm[k + _OWN_LEN : t - 2])
            except ValueError:  # ... or any spacing (a recording passed through `jq .`)
                m = _TS_TAIL.match(mm, k, t)
                if m is not None:
                    with contextlib.suppress(ValueError):
                        ts = float(m.group(1))
                    del m
        if logged is not None and ts != ts:  # no recorder's time: the logger's prefix's
            ts = logged
        n = self._n
        prev = self._last_ts
        if ts == ts and ts - ts == 0.0:  # finite, without a function call
            if not self.wallclock:
                if n:  # raw neuron-monitor output, then a recorder on the same file: the raw reports end a period
                    prev = self._shift(ts - self._last_period - prev)  # before this one, not 56 years before
                self.wallclock = True
        else:
            p = _PERIOD.search(mm, s, min(t, s + _PERIOD_WINDOW))
            if p is not None:
                try:
                    v = float(p.group(1))
                except ValueError:
                    v = 0.0
                del p
                if 0.0 < v <= _MAX_PERIOD:
                    self._last_period = v
            ts = prev + self._last_period if n else 0.0
        if self._cur_skip:
            self._flush_skip()
        self._last_ts = ts
        self._starts.append(s)
        self._ends.append(t)
        self._ts.append(ts)
        if ts > self._max_ts:
            self._max_ts = ts
        self._mono.append(self._max_ts)
        lengths = self._lengths
        lengths.append(t - s)
        if len(lengths) >= _JOIN_FIRST:  # 1.5x the median of the last reports
            self._join_len = 1.5 * sorted(lengths)[_JOIN_FIRST // 2]
            lengths.clear()
        self._n = n + 1  # publish last: readers only look below _n

    def _add_skip(self, pos: int, reason: str, sample: str) -> None:
        """Count a skipped item; runs of the same reason before the same report become one item."""
        self.skipped += 1
        cur = self._cur_skip
        if cur and cur[0] == pos and cur[1] == reason:
            cur[3] += 1
            return
        self._flush_skip()
        self._cur_skip = [pos, reason, sample, 1]

    def _flush_skip(self) -> None:
        if self._cur_skip:
            pos, reason, sample, count = self._cur_skip
            self._skips.append((pos, Skipped(reason, sample, count)))
            self._cur_skip = []


class _PassThrough:
    """The ``Inflater`` of a plain file read into a spool (after a rotation): bytes as they are."""

    def feed(self, data: bytes) -> list[bytes]:
        return [data]

    def end(self) -> list[Damage]:
        return []


class RecordingIndex(_IndexBase):
    """Index of a recording file (plain, ``.gz`` or ``.zst``), built in a background thread.

    ``get(0)`` works as soon as the first report is indexed (``wait_for(0)``), long before the pass ends.
    With ``follow``, the end of the file is not final: an unfinished last line waits, and ``refresh`` picks up
    what was appended. Raises ``OSError`` if the file cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str], *, follow: bool = False,
                 spool_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.name = self.path.name
        self.follow = follow
        self._spool_dir = spool_dir
        self._retired: list[int | BinaryIO] = []
        """Descriptors of a file replaced while following: readers on other threads may still hold offsets into
        them for a moment, so they stay open (harmless, rare) until ``close``."""
        self._open(os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
        self._start(self.name)

    def _open(self, fd: int) -> None:
        """Read from ``fd`` (the recording, just opened); closes it on failure."""
        self._src_fd = fd
        self._src_pos = 0
        self._spool: BinaryIO | None = None
        self._inflater: Inflater | _PassThrough | None = None
        try:
            st = os.fstat(self._src_fd)
            self._src_id = (st.st_dev, st.st_ino)
            self._src_size = st.st_size
            head = os.pread(self._src_fd, 6, 0)
            self.compression = compression_of(head)
            other = next((name for magic, name in _OTHER_FORMATS if head.startswith(magic)), None)
            if self.compression is None and other is not None:
                raise OSError(errno.EINVAL, f"it holds {other} data; recordings are read as plain text, gzip, zstd, "
                              f"xz or bzip2 (decompress it first, or recompress it with zstd)")
            if self.compression:
                src = self._src_fd
                self._inflater = Inflater(self.compression, lambda size, at: os.pread(src, size, at))
                self._spool = tempfile.TemporaryFile(prefix="neuron-top-spool-", dir=self._spool_dir)  # noqa: SIM115 - lives as long as the index
                self._data_fd = self._spool.fileno()
            else:
                self._data_fd = self._src_fd
        except BaseException:
            os.close(self._src_fd)
            raise

    def _check_replaced(self) -> None:
        """``tail -F``: a new file at the path (rotated: ``mv`` then a new one) is read on after the old file's
        last reports (the old file is read to its end first: the writer may have added to it after our last look),
        so report numbers stay valid; this one shorter than what was read (truncated, or ``copytruncate``) is
        indexed from its start, the old reports gone from the list. While the path is missing (between the ``mv``
        and the new file), the old file is still followed."""
        if not self.follow or self._closed:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            return
        replaced = (st.st_dev, st.st_ino) != self._src_id
        if replaced:
            if st.st_size < 6:
                return  # too new to tell plain from compressed: look again next time (the old file meanwhile)
            try:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                return
            self._read_on(fd)
            return
        elif st.st_size < (self._src_pos if self._inflater is not None else self._avail):
            why = f"{clean(self.name)} was truncated: reading it again from its start"
        else:
            return
        try:
            fd = os.dup(self._src_fd)
        except OSError:
            return  # not readable (yet): look again next time
        old = self._n
        self._retired.append(self._src_fd)
        if self._spool is not None:
            self._retired.append(self._spool)
        self._empty()
        try:
            self._open(fd)
        except OSError as exc:
            self._src_fd = os.open(os.devnull, os.O_RDONLY)  # something to close; nothing more to read
            self._spool, self._inflater, self._data_fd = None, None, self._src_fd
            self._fail(f"cannot read the new {clean(self.name)}: {exc}")
            return
        self.generation += 1
        self.notices.append(f"{why} ({old} reports before are no longer in it)")

    def _read_on(self, fd: int) -> None:
        """Rotated (``mv`` then a new file): read the old file to its end, then go on with the new one after it in
        the same data (a spool: a plain recording's bytes are copied there once)."""
        old = self._n
        while self._pump():
            self._scan(False)
        if self._inflater is not None:
            self._spool_out(self._inflater.end())
        self._scan(False, settled=True)  # the old file is complete: its unterminated last line too, if whole
        if self._spool is None:  # plain: the data so far moves to a spool the new file's bytes are added to
            spool = tempfile.TemporaryFile(prefix="neuron-top-spool-", dir=self._spool_dir)  # noqa: SIM115 - lives as long as the index
            at = 0
            while at < self._avail:
                chunk = os.pread(self._src_fd, min(_CHUNK, self._avail - at), at)
                if not chunk:
                    break
                os.pwrite(spool.fileno(), chunk, at)
                at += len(chunk)
            self._spool = spool
            self._data_fd = spool.fileno()
        self._retired.append(self._src_fd)
        self._src_fd = fd
        self._src_pos = 0
        st = os.fstat(fd)
        self._src_id = (st.st_dev, st.st_ino)
        self._src_size = st.st_size
        kind = compression_of(os.pread(fd, 6, 0))
        self._inflater = Inflater(kind, lambda size, at: os.pread(fd, size, at)) if kind else _PassThrough()
        if self._avail and os.pread(self._data_fd, 1, self._avail - 1) != b"\n":
            self._spool_out([b"\n"])  # a cut last line of the old file must not run into the new file's first
        self.notices.append(f"{clean(self.name)} was rotated: {plural(self._n, 'report')} of the old file kept "
                            f"({self._n - old} read from its end), reading on in the new one")

    def _progress_parts(self) -> tuple[int, int]:
        if self._inflater is None:
            return self._src_size, self._pos
        return self._src_size, self._src_pos

    def _pump(self) -> bool:
        if self._eof or self._closed:
            return False
        if self._inflater is None:
            size = os.fstat(self._src_fd).st_size
            if size < self._avail:  # truncated: ``refresh`` starts over (when following); until then, what we have
                return False
            got = size > self._avail
            self._avail = size
            self._src_size = max(self._src_size, size)
            if not self.follow:
                self._eof = True
            return got
        chunk = os.pread(self._src_fd, _CHUNK, self._src_pos)
        if not chunk:
            if not self.follow:
                self._eof = True
                self._spool_out(self._inflater.end())
            return False
        self._src_pos += len(chunk)
        self._src_size = max(self._src_size, self._src_pos)
        self._spool_out(self._inflater.feed(chunk))
        return True

    def _release(self) -> None:
        if self._spool is not None:
            self._spool.close()
        os.close(self._src_fd)
        for old in self._retired:
            if isinstance(old, int):
                os.close(old)
            else:
                old.close()
        self._data_fd = -1


class SpooledIndex(_IndexBase):
    """Index of a stream that cannot seek (stdin): what is read is copied to a temporary spool file.

    Seeking back works within what has been read. gzip or zstd input is recognised by its magic bytes and
    inflated into the spool. The stream is not closed by ``close``.
    """

    follow = True

    def __init__(self, stream: BinaryIO, *, name: str = "stdin",
                 spool_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.name = name
        self._stream = stream
        self._owned_stream: BinaryIO | None = None
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None
        self._spool = tempfile.TemporaryFile(prefix="neuron-top-spool-", dir=spool_dir)  # noqa: SIM115 - lives as long as the index
        self._spool_dir = spool_dir
        self._raw: BinaryIO | None = None
        self._data_fd = self._spool.fileno()
        self._head = b""
        self._inflater: Inflater | None = None
        self._sniffed = False
        self.bytes_read = 0
        self._start(name)

    def _keep_waiting(self) -> bool:
        return True

    @property
    def spooled(self) -> bool:
        return True

    def _read(self) -> bytes | None:
        """Up to one chunk from the stream; None when nothing is ready yet, b"" at its end."""
        if self._fd is None:
            return self._stream.read(_CHUNK)
        try:
            ready, _, _ = select.select([self._fd], [], [], 0.2)
        except (OSError, ValueError):
            ready = [self._fd]
        if not ready:
            return None
        return os.read(self._fd, _CHUNK)

    def _pump(self) -> bool:
        if self._eof or self._closed:
            return False
        chunk = self._read()
        if chunk is None:
            return False
        if not chunk:
            self._eof = True
            chunk, self._head = self._head, b""
            if not chunk:
                return False
        self.bytes_read += len(chunk)
        if not self._sniffed:
            self._head += chunk
            if len(self._head) < 6 and not self._eof:
                return True
            chunk, self._head, self._sniffed = self._head, b"", True
            kind = compression_of(chunk)
            if kind:
                # The compressed input is kept too (a tenth of the data's size), so that a break in a member can be
                # read again up to its bad byte, as from a file.
                self._raw = tempfile.TemporaryFile(prefix="neuron-top-raw-", dir=self._spool_dir)  # noqa: SIM115 - lives as long as the index
                raw_fd = self._raw.fileno()
                self._inflater = Inflater(kind, lambda size, at: os.pread(raw_fd, size, at))
        if self._raw is not None and self._inflater is not None:
            os.pwrite(self._raw.fileno(), chunk, self._inflater.pos)
        self._spool_out([chunk] if self._inflater is None else self._inflater.feed(chunk))
        if self._eof and self._inflater is not None:
            self._spool_out(self._inflater.end())
        return True

    def _release(self) -> None:
        self._spool.close()
        if self._raw is not None:
            self._raw.close()
        self._data_fd = -1
        if self._owned_stream is not None:
            self._owned_stream.close()


def open_recording(target: str | os.PathLike[str], *, follow: bool = False,
                   spool_dir: str | os.PathLike[str] | None = None) -> RecordingIndex | SpooledIndex:
    """``-`` reads stdin; a pipe or device path (``<(zcat x.gz)``) is spooled like stdin; anything else is a
    recording file. Raises ``OSError`` if it cannot be opened.

    Args:
        target: a recording file, ``-``, or a pipe or device path.
        follow: keep reading as the file grows (a recording still being written).
        spool_dir: where a spooled stream is kept (default: the temporary directory).

    Returns:
        The index, being built in a background thread (``wait`` for all of it).
    """
    if str(target) == "-":
        return SpooledIndex(sys.stdin.buffer, spool_dir=spool_dir)
    if not stat.S_ISREG(os.stat(target).st_mode):
        stream = open(target, "rb", buffering=0)  # noqa: SIM115 - closed with the index
        index = SpooledIndex(stream, name=Path(target).name, spool_dir=spool_dir)
        index._owned_stream = stream
        return index
    converted = _converted(target, spool_dir)
    if converted is not None:  # a JSON array (jq -s) or UTF-16: read as the lines it holds
        with converted:  # deleted at once: the index keeps it open
            whole = RecordingIndex(converted.name, spool_dir=spool_dir)
        whole.name = Path(target).name
        whole.path = Path(target)
        return whole
    return RecordingIndex(target, follow=follow, spool_dir=spool_dir)


_UTF16 = (b"\xff\xfe", b"\xfe\xff")


def _converted(target: str | os.PathLike[str], spool_dir: str | os.PathLike[str] | None) -> Any:
    """A file saved in a shape recordings are not read in, rewritten to one report per line in a temporary file
    (deleted on close; the index keeps it open): UTF-16 text (a Windows editor, PowerShell's ``>``), and one
    JSON array of reports (``jq -s``, a tool that saves a list). None for anything else (read as it is).
    Raises ``OSError`` (EINVAL) for an array that is not valid JSON."""
    with open(target, "rb") as f:
        head = f.read(4096)
        if not head.startswith(_UTF16) and not _LEAD.sub(b"", head[:4096], count=1).startswith(b"["):
            return None
        data = head + f.read()
    if data.startswith(_UTF16):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise OSError(errno.EINVAL, f"it starts as UTF-16 text but is not: {exc.reason}") from None
    stripped = _LEAD.sub(b"", data, count=1)
    if stripped.startswith(b"["):
        try:
            items = msgspec.json.decode(stripped, type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise OSError(errno.EINVAL, f"it holds a JSON array that does not parse ({clean(str(exc), 80)}); "
                          "a recording is one report per line") from None
        data = b"".join(msgspec.json.format(bytes(raw), indent=-1) + b"\n" for raw in items)
    out = tempfile.NamedTemporaryFile(prefix="neuron-top-converted-", dir=spool_dir)  # noqa: SIM115 - the caller closes it
    out.write(data)
    out.flush()
    return out


class RecordingSource:
    """Replays an index as a ``Source``: ``Status(REPLAY)``, then every report in order, then ``Status(ENDED)``.

    ``speed`` None replays as fast as the consumer takes them; a number paces reports by their recorded times
    (2.0 = twice as fast) with the replay screen's rule (``recording.pacing``: each report held for its gap over
    the speed, a hole at most ``HOLE_HOLD`` s). ``clock``/``sleep`` are injectable so tests control time. With
    ``follow`` (default: the index's), the source waits for the file to grow instead of ending. ``seek`` and
    ``speed`` may change at any time.

    Args:
        index: an index from ``open_recording``.
        follow: wait for the file to grow at its end (default: the index's).
        speed: None for as fast as read, else a factor of recorded time.
        start: the first report (0-based).
        clock, sleep, poll: pacing (see above).
        own_index: close the index with the source.
    """

    def __init__(self, index: _IndexBase, *, follow: bool | None = None, speed: float | None = None,
                 start: int = 0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] | None = None, poll: float = 0.25,
                 own_index: bool = True) -> None:
        self.index = index
        self.name = index.name
        self.follow = index.follow if follow is None else follow
        self.speed = speed
        """Replay speed factor, or None for as fast as possible; read before every report."""
        self.clock = clock
        self._sleep = sleep
        self.poll = poll
        self._own = own_index
        self._next = max(0, start)
        self._seek_to: int | None = None
        self._closed = threading.Event()

    def seek(self, i: int) -> None:
        """Continue from report ``i`` (thread-safe; takes effect before the next report)."""
        self._seek_to = max(0, i)

    def _wait(self, seconds: float, stop: threading.Event) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
            return
        deadline = time.monotonic() + seconds
        while not (self._closed.is_set() or stop.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            stop.wait(min(left, 0.1))

    def items(self, stop: threading.Event) -> Iterator[Item]:
        idx = self.index
        yield Status(State.REPLAY, f"replaying {clean(self.name)}")
        i, cursor = self._next, 0
        first = i
        pacer = Pacer(idx, self.clock)
        paced_at: float | None = None  # the speed the pacer's anchor was set at
        while not (stop.is_set() or self._closed.is_set()):
            if self._seek_to is not None:
                i, self._seek_to = self._seek_to, None
                pacer.reset()
            n = len(idx)
            new = idx.skips(cursor)
            for pos, item in new:
                if pos > i and i < n:
                    break
                cursor += 1
                if pos >= first:
                    yield item
            if i < n:
                ts = idx.timestamp(i)
                speed = self.speed
                if not speed or speed <= 0:
                    pacer.reset()
                elif pacer.anchor is None or speed != paced_at or pacer.anchor[1] >= i:
                    pacer.start(i)  # the first report, or after a seek or a new speed: shown at once
                    paced_at = speed
                else:
                    at, hole = pacer.due(i, speed)
                    delay = at - self.clock()
                    if delay > 0:
                        self._wait(delay, stop)
                        if stop.is_set() or self._closed.is_set() or self._seek_to is not None:
                            continue
                    if hole is not None or delay < -HOLE_HOLD:  # after a hole, or far behind: count from here
                        pacer.start(i, max(at, self.clock()) if hole is None else at)
                yield RawReport(idx.get(i), ts, i)
                i += 1
                self._next = i
                continue
            if idx.finished or (idx.done and not self.follow):
                break
            if idx.done:
                idx.refresh()
            if len(idx) == n:
                self._wait(self.poll, stop)
        else:
            return
        for _, item in idx.skips(cursor):
            yield item
        extra = f", {idx.skipped} skipped" if idx.skipped else ""
        why = f" ({clean(idx.error)})" if idx.error else ""
        yield Status(State.ENDED, f"end of {clean(self.name)}: {plural(len(idx), 'report')}{extra}{why}")

    def close(self) -> None:
        self._closed.set()
        if self._own:
            self.index.close()

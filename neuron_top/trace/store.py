"""The columnar event store every trace loader fills and the timeline reads.

Why columnar: a neuron-det capture holds a million events. As Python objects that is ~800 B per event; as
``array`` columns (int64 nanosecond timestamps, int32 interned-string ids, one byte of flags) plus one shared
bytes blob for the args it is well under 200 B. The loaders append into a ``StoreBuilder`` in file order;
``StoreBuilder.build`` matches begin/end pairs, extends unfinished events to the trace end, lays each track out
in rows (nesting depth, plus overflow lanes for partially overlapping events) and orders the time columns by
(track, row, start) so every row is one contiguous, start-sorted, non-overlapping slice of them: the timeline
then finds what is under a screen column with a bisect instead of a scan. The other columns stay in file order
and are reached through ``orig`` (permuting them would cost a second per million events).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate, islice
from operator import itemgetter, le
from typing import Any

import msgspec
import numpy as np

from neuron_top.trace.flowbind import FlowMap, enclosing_slices, run_flows
from neuron_top.trace.layout import nest
from neuron_top.trace.timeparse import is_wall_clock

__all__ = [
    "ASYNC", "ERROR", "ERROR_NAMES", "FLOW", "FLOW_ID_LIMIT", "FLOW_IN", "FLOW_OUT", "FLOW_TEXT_LIMIT",
    "HARDWARE_EVENTS", "INSTANT", "UNFINISHED", "CounterTrack",
    "EventInfo", "StoreBuilder", "TraceStore", "Track", "decode_args", "is_error_name", "merge_args",
    "mip_levels", "mip_pick", "ret_is_error",
]

# Event flags (one byte per event).
UNFINISHED = 1
"""B without E, X without dur: extended to the trace end. The hang signal."""
ERROR = 2
"""Non-zero ``ret`` in args, or an error event type (numerical_err, ...)."""
INSTANT = 4
FLOW_OUT = 8
"""At least one flow arrow leaves the event (it is a flow's source)."""
ASYNC = 16
FLOW_IN = 32
"""At least one flow arrow arrives at the event."""
FLOW = FLOW_OUT | FLOW_IN
"""The event is an end of at least one flow arrow (a mask)."""

HARDWARE_EVENTS = frozenset(
    {
        "nc_exec_running",
        "cc_running",
        "cc_exec_barrier",
        "numerical_err",
        "nrt_model_switch",
        "timestamp_sync_point",
        "hw_notify",
    }
)
"""The Neuron "hardware" event group (capture-side filter syntax); every other type is "software"."""

ERROR_NAMES = frozenset({"numerical_err", "numerical_error", "error", "hw_error", "nrt_error", "exec_error"})

_DEVICE_CATS = frozenset(
    {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "neuron_hw", "memcpy", "memset"}
)
"""Event categories of device work, compared in lower case: Kineto writes "kernel", "gpu_memcpy" ..., and its
schemaVersion-1 traces (torch-tb-profiler's era) "Kernel", "Memcpy", "Memset"."""
_CORE_RE = re.compile(r"^(?:nc|neuroncore|core)[ _:-]?(\d+)$", re.IGNORECASE)
_INSTANCE_RE = re.compile(r"(?<![0-9A-Za-z])i-[0-9a-f]{6,}(?![0-9A-Za-z])")


def is_error_name(name: str) -> bool:
    """Event types that are errors by name (neuron-det draws them red): numerical_err, *_error, ..."""
    low = name.lower()
    return low in ERROR_NAMES or low.endswith(("_err", "_error"))


def ret_is_error(value: object) -> bool:
    """A LIBNRT status code in args: 0 (or absent) is success, anything else an error."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        s = value.strip().lower()
        return s not in ("", "0", "ok", "success", "nrt_success", "none")
    return False


_RET_SET = re.compile(rb'"ret"\s*:\s*(?!(?:0|null|false|"0"|"")\s*[,}])')
"""A "ret" key whose value is not an obvious success: only those events get their args decoded."""
_args_decoder = msgspec.json.Decoder(dict[str, Any])


def decode_args(raw: bytes | bytearray) -> dict[str, Any]:
    """Args are kept as raw JSON bytes and decoded only when someone looks at them."""
    if not raw:
        return {}
    try:
        return _args_decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {"<args>": raw[:200].decode("utf-8", "replace")}


UNPLACED = ("event without a valid ts", "event without a valid timestamp", "X with a bad dur")
"""The loaders' reasons for dropping an event whose time cannot be read: it is among the events that could not
be read (the header's first words, ``--check`` exits 2), not a problem of a trace read whole. In ``problems``,
a trace of epoch nanoseconds written as microseconds (every ts out of range) passed ``--check`` as clean."""


@dataclass
class Track:
    """One slice track: a thread (pid, tid), a process-scoped or global instant track, or an async track."""

    id: int
    key: tuple[Any, ...]
    kind: str
    """"thread", "process", "global" or "async"."""
    pid: Any = None
    tid: Any = None
    name: str = ""
    """Thread name, async slice name or neuron-explorer group; empty when unknown."""
    process: str = ""
    """Process name (or its pid as text)."""
    instance: str = ""
    """EC2 instance id when the format carries one."""
    core: int | None = None
    """NeuronCore index when the track belongs to one."""
    source: str = "cpu"
    """"cpu" or "device" (for the CPU vs device grouping)."""
    sort_index: int = 0
    """thread_sort_index metadata (Chrome M events)."""
    process_sort_index: int = 0
    rows: list[tuple[int, int]] = field(default_factory=list)
    """Per row, the [lo, hi) range of its events in the store columns."""
    mips: list[list[array] | None] = field(default_factory=list)
    """Per row, argmax-of-duration levels (see ``mip_levels``), built the first time the row is drawn dense."""
    count: int = 0
    file: str = ""
    """Which file the track came from, when several were opened together (rank 0, the file name, ...)."""

    @property
    def label(self) -> str:
        """What the row header shows: the thread name, else the tid; async tracks show their name."""
        if self.kind == "global":
            return "global"
        if self.kind == "process":
            return "process-wide"
        base = self.name or ("" if self.tid is None else str(self.tid))
        if self.core is not None and (not self.name or self.name.isdigit()):
            base = f"NC {self.core}"
        return base or "?"


@dataclass
class CounterTrack:
    """A counter series (C events, mem_usage, cpu_util, HBM usage): sorted timestamps and values."""

    id: int
    key: tuple[Any, ...]
    name: str
    pid: Any = None
    process: str = ""
    instance: str = ""
    core: int | None = None
    unit: str = ""
    ts: array = field(default_factory=lambda: array("q"))
    val: array = field(default_factory=lambda: array("d"))
    breakdown: list[dict[str, float]] | None = None
    """Per sample, a per-category split (HBM usage); None for plain counters."""
    mips: list[array] = field(default_factory=list)
    """argmax-of-value levels, as for slice rows."""
    file: str = ""
    group: str = ""
    """The timeline group it is drawn in ("" : "counters"; metrics from a recording have their own)."""

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class EventInfo:
    """Everything the details panel and ``--check`` show about one event."""

    index: int
    name: str
    cat: str
    phase: str
    start: int
    end: int
    track: Track
    args: dict[str, Any]
    unfinished: bool
    error: bool
    core: int | None

    @property
    def dur(self) -> int:
        return self.end - self.start


FLOW_ID_LIMIT = 1 << 40
FLOW_TEXT_LIMIT = 1 << 11
"""A flow id packs into one int64 key when its id is below ``FLOW_ID_LIMIT`` and its cat and name numbers below
``FLOW_TEXT_LIMIT`` (``StoreBuilder.flow_key``)."""

_BLOCK = 16
"""Events per block at the finest mipmap level; a column with fewer events than 2 blocks is scanned."""


def mip_levels(values: array | list[int] | list[float], lo: int = 0, hi: int | None = None) -> list[array]:
    """Argmax levels over ``values[lo:hi]`` (indices are absolute): level 0 holds the winner of each block of
    16, level 1 of each 32, ...

    Built with ``max`` over blocks and pairwise comprehensions (~n/16 Python steps), it lets a screen column
    that covers thousands of events pick the longest of them in a handful of lookups (Perfetto's mipmaps).
    """
    hi = len(values) if hi is None else hi
    if hi - lo <= 2 * _BLOCK:
        return []
    g = values.__getitem__
    cur = [max(range(k, min(k + _BLOCK, hi)), key=g) for k in range(lo, hi, _BLOCK)]
    levels = [array("i", cur)]
    while len(cur) > 1:
        if len(cur) % 2:
            cur.append(cur[-1])
        cur = [x if g(x) >= g(y) else y for x, y in zip(cur[0::2], cur[1::2], strict=True)]
        levels.append(array("i", cur))
    return levels


def mip_pick(
    levels: list[array], values: array | list[int] | list[float], lo: int, hi: int, base: int
) -> int:
    """The (approximately) largest-valued index in [lo, hi) of a row whose first index is ``base``.

    Small ranges are scanned; larger ones look at no more than ~6 precomputed block winners, so the cost does
    not depend on how many events the range holds.
    """
    k = hi - lo
    if k <= 1:
        return lo
    if k <= 2 * _BLOCK or not levels:
        return max(range(lo, min(hi, lo + 4 * _BLOCK)), key=values.__getitem__)
    lvl = min(max((k // (2 * _BLOCK)).bit_length() - 1, 0), len(levels) - 1)
    table = levels[lvl]
    size = _BLOCK << lvl
    best, bv = lo, values[lo]
    for blk in range((lo - base) // size, min((hi - 1 - base) // size + 1, len(table))):
        cand = table[blk]
        if lo <= cand < hi and values[cand] > bv:
            best, bv = cand, values[cand]
    return best


def _gather(col: np.ndarray, perm: np.ndarray) -> array:
    """``col[perm]`` as an int64 ``array``, written in place (no temporary of the column's size)."""
    out = array("q", [0]) * len(perm)
    if len(perm):
        np.take(col, perm, out=np.frombuffer(out, np.int64))
    return out




def _segments(track: array, ntracks: int) -> list[tuple[int, array | range]]:
    """Event positions grouped by track id, in file order within a track.

    Already grouped (the usual case): ranges, no copy. Otherwise one array of positions per track.
    """
    n = len(track)
    if n and all(map(le, track, islice(track, 1, None))):
        out: list[tuple[int, array | range]] = []
        i = 0
        while i < n:
            t = track[i]
            j = bisect_right(track, t, i)
            out.append((t, range(i, j)))
            i = j
        return out
    buckets = [array("i") for _ in range(ntracks)]
    for i, t in enumerate(track):
        buckets[t].append(i)
    return [(t, b) for t, b in enumerate(buckets) if len(b)]


def _find_bits(flags: array, mask: int) -> list[int]:
    """Indices whose flag byte has any bit of ``mask``: a C-speed scan per distinct byte value."""
    raw = flags.tobytes()
    out: list[int] = []
    for v in set(raw):
        if v & mask:
            b = bytes([v])
            p = raw.find(b)
            while p >= 0:
                out.append(p)
                p = raw.find(b, p + 1)
    return sorted(out)


def _find_int(col: array, value: int) -> list[int]:
    """Indices of ``value`` in an int32 column, found with bytes.find (aligned hits only)."""
    raw = col.tobytes()
    pat = array("i", [value]).tobytes()
    out: list[int] = []
    p = raw.find(pat)
    while p >= 0:
        if p % 4 == 0:
            out.append(p // 4)
            p = raw.find(pat, p + 4)
        else:
            p = raw.find(pat, p + 1)
    return out


class TraceStore:
    """The loaded trace, read-only after ``StoreBuilder.build``. Columns are indexed by event index."""

    def __init__(self) -> None:
        self.path = ""
        self.format = ""
        self.strings: list[str] = []
        # Display order (by track, row, start): every row is a contiguous, start-sorted, disjoint run.
        self.start = array("q")
        self.end = array("q")
        self.dur = array("q")
        self.orig = array("i")
        """Display index -> file-order index, for the columns below."""
        # File order (read through ``orig``): fewer columns to permute makes a load ~1 s faster per 1M events.
        self.name = array("i")
        self.cat = array("i")
        self.track = array("i")
        self.flags = array("B")
        self.phase = array("B")
        self.args_off = array("q", [0])
        self.args_blob: bytes | bytearray = b""
        self.tracks: list[Track] = []
        self.counters: list[CounterTrack] = []
        self.flows = FlowMap()
        """The flows (``FlowMap``): event index -> linked events, and each link's direction."""
        self.flow_count = 0
        self.problems: Counter[str] = Counter()
        self.phase_counts: Counter[str] = Counter()
        self.unfinished: list[int] = []
        self.errors: list[int] = []
        self.t_min = 0
        self.t_max = 0
        self.metadata: dict[str, str] = {}
        self.lost = 0
        """Events in the file that could not be read at all (``--check`` exits 2 when there are any)."""
        self.lost_reasons: Counter[str] = Counter()
        self.unread: list[str] = []
        """Parts of the file other than events that could not be read."""
        self.not_shown: dict[str, int] = {}
        """What the file holds that is not drawn (stackFrames, samples, systrace text), and how much."""

    @property
    def wall_offset(self) -> int | None:
        """Nanoseconds to add to this store's times to get Unix time, or None when its clock is not a wall clock.

        Kineto writes times relative to ``baseTimeNanoseconds``; neuron-explorer and older Kineto write epoch
        times; neuron-det and most Chrome traces use a monotonic clock (None).
        """
        base = self.metadata.get("baseTimeNanoseconds", "")
        if base.isdigit() and int(base) > 0:
            return int(base)
        if "wall_offset" in self.metadata:
            return int(self.metadata["wall_offset"])
        return 0 if len(self) and is_wall_clock(self.t_min) else None

    def __len__(self) -> int:
        return len(self.start)

    @property
    def format_label(self) -> str:
        """The format as the summary and the header say it; for Neuron Explorer's Parquet output, with the profile
        schema version it was read as (its Metadata table says it; without one, that it was not stated)."""
        if self.format != "neuron-explorer-parquet":
            return self.format
        version = self.metadata.get("profile_schema_version")
        return f"{self.format}, profile schema " + (version or "not stated (no Metadata table)")

    @property
    def drawn_tracks(self) -> int:
        """Slice tracks with events to draw. A thread that holds only the far ends of async slices and flows (all
        drawn elsewhere) has a track and no row: counted, the header said "10 tracks" over nine rows."""
        return sum(1 for t in self.tracks if t.count)

    @property
    def span(self) -> int:
        return max(self.t_max - self.t_min, 1)

    def name_of(self, ev: int) -> str:
        return self.strings[self.name[self.orig[ev]]]

    def flags_of(self, ev: int) -> int:
        return self.flags[self.orig[ev]]

    def track_of(self, ev: int) -> Track:
        return self.tracks[self.track[self.orig[ev]]]

    def args(self, ev: int) -> dict[str, Any]:
        o = self.orig[ev]
        return decode_args(self.args_blob[self.args_off[o] : self.args_off[o + 1]])

    def core_of(self, ev: int, args: dict[str, Any] | None = None) -> int | None:
        """NeuronCore of an event: args nc / nc_idx when an int, else its track's core."""
        a = self.args(ev) if args is None else args
        for k in ("nc", "nc_idx", "lnc_idx", "device_core_idx"):
            v = a.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
            if isinstance(v, str) and v.isdigit():
                return int(v)
        return self.track_of(ev).core

    def info(self, ev: int) -> EventInfo:
        args = self.args(ev)
        o = self.orig[ev]
        f = self.flags[o]
        return EventInfo(
            index=ev,
            name=self.strings[self.name[o]],
            cat=self.strings[self.cat[o]],
            phase=chr(self.phase[o]),
            start=self.start[ev],
            end=self.end[ev],
            track=self.tracks[self.track[o]],
            args=args,
            unfinished=bool(f & UNFINISHED),
            error=bool(f & ERROR),
            core=self.core_of(ev, args),
        )

    def row_of(self, ev: int) -> int:
        tr = self.track_of(ev)
        for r, (lo, hi) in enumerate(tr.rows):
            if lo <= ev < hi:
                return r
        return 0

    @property
    def shown_name(self) -> str:
        """The trace as its screen and ``--summary`` name it: the file's name; a pipe (bash's ``<(zcat t.gz)``,
        /dev/fd/63) or stdin by its whole path, whose last part ("63") names nothing."""
        p = self.path
        if not p:
            return "trace"
        if p == "stdin" or p.startswith(("/dev/", "/proc/")):
            return p
        return p.rstrip("/").rsplit("/", 1)[-1] or p

    def row_mips(self, track: Track, row: int) -> list[array]:
        """The row's mipmap levels, built on first use (tens of ms per million events in the row)."""
        got = track.mips[row]
        if got is None:
            lo, hi = track.rows[row]
            got = track.mips[row] = mip_levels(self.dur, lo, hi)
        return got

    def event_at(self, track_id: int, row: int, t: int) -> int | None:
        """The event of a row that covers time ``t`` (rows never overlap), or None."""
        tr = self.tracks[track_id]
        if row >= len(tr.rows):
            return None
        lo, hi = tr.rows[row]
        i = bisect_right(self.start, t, lo, hi) - 1
        if i >= lo and self.end[i] >= t:
            return i
        return None


class StoreBuilder:
    """Collects events in file order; ``build`` turns them into a ``TraceStore``.

    Hot loaders append to the public columns directly (a method call per event costs ~10% of a load).
    """

    def __init__(self, path: str = "", fmt: str = "") -> None:
        self.path = path
        self.format = fmt
        self.strings: list[str] = []
        self.smap: dict[str, int] = {}
        self.start = array("q")
        self.end = array("q")
        self.name = array("i")
        self.cat = array("i")
        self.track = array("i")
        self.flags = array("B")
        self.phase = array("B")
        self.args_off = array("q", [0])
        self.args_blob = bytearray()
        self.tracks: list[Track] = []
        self.tmap: dict[tuple[Any, ...], int] = {}
        self.counters: list[CounterTrack] = []
        self.cmap: dict[tuple[Any, ...], int] = {}
        self.async_events: list[tuple[Any, ...]] = []
        """Async events (b/e/n nestable, S/T/p/F legacy): (ts, seq, phase, scoped id, pid, name, cat, args)."""
        self.async_group: dict[int, int] = {}
        """Raw position of an async slice -> its root's position (a root and its children are laid out together)."""
        self.open_ended: list[int] = []
        self.disp_start, self.disp_end = array("q"), array("q")
        """The display-order time columns ``_layout`` builds (taken by ``build``)."""
        self.be_pos: dict[int, int] = {}
        """B index -> raw position of its slice, for the B events a v2 flow names."""
        self.async_pos: dict[int, int] = {}
        """Raw positions of events that never end: extended to the trace end in ``build``."""
        # Thread B/E events, in file order, as columns (a million tuples would cost ~150 B per event).
        self.be_ts = array("q")
        self.be_track = array("i")
        self.be_name = array("i")
        self.be_cat = array("i")
        self.be_begin = bytearray()
        self.be_off = array("q", [0])
        self.be_blob = bytearray()
        self.flow_keys: dict[tuple[Any, ...], int] = {}
        """Flow ids that are not one int64 (see ``flow_key``) -> their negative key number."""
        # Flow events (v1 s/t/f) as columns: Kineto has one for every launch and kernel.
        self.fv_key = array("q")
        """Each point's flow id as one int64: ``flow_key`` for one, ``ChromeLoader._ingest_flows`` for a batch."""
        self.fv_ts = array("q")
        self.fv_seq = array("q")
        self.fv_action = bytearray()
        self.fv_track = array("i")
        self.fv_enclosing = bytearray()
        """1: binds to the slice enclosing it (s, t, and f with ``"bp": "e"``); 0: to the next slice (f)."""
        self.flow_points: list[tuple[Any, ...]] = []
        """v2 points, few: (key number, ts, seq, action "s"/"t"/"f", where), ``where`` ("raw" | "be" | "async", ref)
        naming the slice that carries the ``bind_id``."""
        self.flow_links: list[tuple[int, int]] = []
        """Direct links between raw event positions (neuron-explorer flow ids)."""
        self.lost = 0
        """Events that could not be read at all (counted in the unreadable text)."""
        self.lost_reasons: Counter[str] = Counter()
        self.unread: list[str] = []
        """Other parts of the file that could not be read (not events)."""
        self.not_shown: dict[str, int] = {}
        """What the file holds that the timeline does not draw (stackFrames, samples, ...) and how much."""
        self.process_labels: dict[Any, str] = {}
        self.problems: Counter[str] = Counter()
        self.phase_counts: Counter[str] = Counter()
        self.process_names: dict[Any, str] = {}
        self.thread_names: dict[tuple[Any, Any], str] = {}
        self.process_sort: dict[Any, int] = {}
        self.thread_sort: dict[tuple[Any, Any], int] = {}
        self.seq = 0
        self.metadata: dict[str, str] = {}

    # -- interning -------------------------------------------------------------------------------------------
    def intern(self, s: str) -> int:
        i = self.smap.get(s)
        if i is None:
            i = self.smap[s] = len(self.strings)
            self.strings.append(s)
        return i

    def track_id(self, key: tuple[Any, ...], kind: str = "thread", **attrs: Any) -> int:
        t = self.tmap.get(key)
        if t is None:
            t = self.tmap[key] = len(self.tracks)
            pid = attrs.pop("pid", key[0] if key else None)
            tid = attrs.pop("tid", key[1] if len(key) > 1 and kind == "thread" else None)
            self.tracks.append(Track(id=t, key=key, kind=kind, pid=pid, tid=tid, **attrs))
        return t

    def counter(self, key: tuple[Any, ...], name: str, **attrs: Any) -> CounterTrack:
        c = self.cmap.get(key)
        if c is None:
            c = self.cmap[key] = len(self.counters)
            self.counters.append(CounterTrack(id=c, key=key, name=name, **attrs))
        return self.counters[c]

    # -- appending -------------------------------------------------------------------------------------------
    def add(
        self,
        track: int,
        start: int,
        end: int | None,
        name: str,
        cat: str = "",
        args: bytes | bytearray = b"",
        phase: str = "X",
        flags: int = 0,
    ) -> int:
        """One complete (or, with ``end=None``, unfinished) event; returns its raw position."""
        pos = len(self.start)
        self.start.append(start)
        if end is None:
            self.end.append(start)
            flags |= UNFINISHED
            self.open_ended.append(pos)
        else:
            self.end.append(end)
        self.name.append(self.intern(name))
        self.cat.append(self.intern(cat))
        self.track.append(track)
        self.flags.append(flags)
        self.phase.append(ord(phase[0]) if phase else 63)
        if args:
            self.args_blob += args
        self.args_off.append(len(self.args_blob))
        return pos

    def add_begin_end(self, ts: int, is_begin: bool, track: int, name: str, cat: str, args: bytes) -> None:
        """One thread B or E event (the batch path appends whole columns instead)."""
        self.be_ts.append(ts)
        self.be_track.append(track)
        self.be_name.append(self.intern(name))
        self.be_cat.append(self.intern(cat))
        self.be_begin.append(1 if is_begin else 0)
        self.be_blob += args
        self.be_off.append(len(self.be_blob))

    def add_async(self, phase: str, ident: tuple[Any, ...], ts: int, pid: Any, name: str, cat: str, args: bytes) -> None:
        """An async event (nestable b/e/n or legacy S/T/p/F); matched across processes in ``build``."""
        self.seq += 1
        self.async_events.append((ts, self.seq, phase, ident, pid, name, cat, args))

    def tuple_key(self, key: tuple[Any, ...]) -> int:
        """A flow id that does not pack into one int64 (a text id, a v2 ``bind_id``, a big id): a negative number,
        the same for equal ids."""
        got = self.flow_keys.get(key)
        if got is None:
            got = self.flow_keys[key] = -1 - len(self.flow_keys)
        return got

    def flow_key(self, fid: Any, cat: int, name: int) -> int:
        """A flow event's id (id, cat number, name number) as one int64: packed when the id is an int in
        [0, 2**40) and the numbers are below 2**11 (every Kineto flow), else ``tuple_key``. Equal ids always get
        equal keys, whichever way they come (a batch packs the same ones with array passes)."""
        if type(fid) is int and 0 <= fid < FLOW_ID_LIMIT and cat < FLOW_TEXT_LIMIT and name < FLOW_TEXT_LIMIT:
            return (cat << 51) | (name << 40) | fid
        return self.tuple_key((fid, cat, name))

    def flow_v1(self, key: int, phase: str, track: int, ts: int, enclosing: bool) -> None:
        """A flow event (s/t/f) with its ``flow_key``: bound in ``build`` to the slice enclosing it on its thread,
        or (an ``f`` without ``"bp": "e"``) to the next slice that begins there."""
        self.seq += 1
        self.fv_key.append(key)
        self.fv_ts.append(ts)
        self.fv_seq.append(self.seq)
        self.fv_action.append(ord(phase))
        self.fv_track.append(track)
        self.fv_enclosing.append(1 if enclosing else 0)

    def flow_v1_batch(
        self, keys: np.ndarray, ts: np.ndarray, actions: bytes, tracks: np.ndarray, enclosing: bytes
    ) -> None:
        """``flow_v1`` for a batch of flow events (in file order), keys already packed."""
        n = len(keys)
        self.fv_key.frombytes(np.ascontiguousarray(keys, np.int64).data.cast("B"))
        self.fv_ts.frombytes(np.ascontiguousarray(ts, np.int64).data.cast("B"))
        self.fv_seq += array("q", range(self.seq + 1, self.seq + 1 + n))
        self.seq += n
        self.fv_action += actions
        self.fv_track.frombytes(np.ascontiguousarray(tracks, np.int32).data.cast("B"))
        self.fv_enclosing += enclosing

    def flow_v2(self, key: tuple[Any, ...], action: str, ref: tuple[str, int], ts: int) -> None:
        """A slice that carries ``bind_id``: ``action`` "s" (flow_out), "t" (both), "f" (flow_in)."""
        self.seq += 1
        self.flow_points.append((self.tuple_key(key), ts, self.seq, action, ref))

    # -- building --------------------------------------------------------------------------------------------
    def _match_begin_end(self) -> None:
        """Pair B/E per thread in time order (file order on ties); E without B is a problem, B without E a hang.

        The file need not be sorted. The pairing loop only collects indices; the events are then appended
        column by column.
        """
        ts, begin = self.be_ts, self.be_begin
        if not len(ts):
            return
        bs: list[int] = []
        es: list[int] = []
        open_: list[int] = []
        orphans = 0
        for _t, members in _segments(self.be_track, len(self.tracks)):
            seg = list(members)
            seg.sort(key=ts.__getitem__)
            stack: list[int] = []
            push, pop = stack.append, stack.pop
            for p in seg:
                if begin[p]:
                    push(p)
                elif stack:
                    bs.append(pop())
                    es.append(p)
                else:
                    orphans += 1
            open_.extend(stack)
        if orphans:
            self.problems["E without begin"] += orphans
        off, blob = self.be_off, self.be_blob
        # B's args and E's merged (as catapult and Perfetto do); one of the two is usually empty
        pieces: list[bytes | bytearray] = [
            merge_args(blob[off[b] : off[b + 1]], blob[off[e] : off[e + 1]]) for b, e in zip(bs, es, strict=True)
        ]
        pieces += [blob[off[k] : off[k + 1]] for k in open_]
        base = len(self.args_blob)
        self.args_blob += b"".join(pieces)
        self.args_off += array("q", accumulate(map(len, pieces), initial=base))[1:]
        del pieces
        firsts = bs + open_
        base = len(self.start)
        need = {p[4][1] for p in self.flow_points if p[4][0] == "be"}
        if need:
            self.be_pos = {k: base + j for j, k in enumerate(firsts) if k in need}
        self.open_ended.extend(range(base + len(bs), base + len(firsts)))
        self.start += array("q", [ts[k] for k in firsts])
        self.end += array("q", [ts[k] for k in es]) + array("q", [ts[k] for k in open_])
        self.name += array("i", [self.be_name[k] for k in firsts])
        self.cat += array("i", [self.be_cat[k] for k in firsts])
        self.track += array("i", [self.be_track[k] for k in firsts])
        self.flags.frombytes(bytes(len(bs)) + bytes([UNFINISHED]) * len(open_))
        self.phase.frombytes(b"B" * len(firsts))
        self.be_ts, self.be_track, self.be_name, self.be_cat = array("q"), array("i"), array("i"), array("i")
        self.be_begin, self.be_off, self.be_blob = bytearray(), array("q", [0]), bytearray()

    def _match_async(self) -> None:
        """Async slices as catapult's importer pairs them, in time order (file order on ties).

        Legacy S/T/p/F: one slice per (name, id) across processes, from S to F, its T/p steps as sub-slices.
        Nestable b/e/n: per (cat, id) a stack of open begins; an ``e`` closes the nearest open ``b`` *of its
        name* (begins above it that never ended stay unmatched); an ``e`` that matches no ``b`` is a problem and
        closes nothing, and is drawn from the first event of its id to it (catapult's "no matching BEGIN"). An unmatched begin is unfinished: it runs to the last event of its id (catapult), or to
        the trace end when nothing of its id came after it.
        """
        evs = sorted(self.async_events, key=itemgetter(0, 1))
        self.async_events = []
        legacy: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        nestable: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        for ev in evs:
            ph, ident, name, cat = ev[2], ev[3], ev[5], ev[6]
            if ph in ("S", "T", "p", "F"):
                key = (name, ident)
                if ph == "S":
                    if key in legacy:
                        self.problems["async S for an id already open"] += 1
                        continue
                    legacy[key] = [ev]
                elif key not in legacy:
                    self.problems[f"async {ph} without S"] += 1
                else:
                    legacy[key].append(ev)
                    if ph == "F":
                        self._legacy_slice(legacy.pop(key), closed=True)
            else:
                nestable.setdefault((cat, ident), []).append(ev)
        for events in legacy.values():
            self._legacy_slice(events, closed=False)
        for events in nestable.values():
            self._nestable_slices(events)

    def _async_track(self, pid: Any, name: str) -> int:
        return self.track_id((pid, "<async>", name), "async", pid=pid, name=name)

    def _legacy_slice(self, events: list[tuple[Any, ...]], closed: bool) -> None:
        """S, its T (step into) or p (step past) steps, then F: one slice with the steps as sub-slices. Without
        F it runs to the trace end, unfinished, and so does its last T step."""
        kinds = {ev[2] for ev in events[1 : len(events) - (1 if closed else 0)]}
        if len(kinds) > 1:  # catapult drops such a slice
            self.problems["async slice with both T and p steps"] += 1
            return
        first, last = events[0], events[-1]
        ts0, _seq, _ph, _ident, pid, name, cat, args = first
        t = self._async_track(pid, name)
        end = last[0] if closed else None
        root = self.add(t, ts0, end, name, cat, merge_args(args, last[7]) if closed else args, "S", ASYNC)
        self.async_group[root] = root
        steps = events[1:-1] if closed else events[1:]
        bounds = events if closed else [*events, (None,)]
        for j, ev in enumerate(steps, start=1):
            if ev[2] == "T":  # step into: from this step to the next event
                a, b_ = ev[0], bounds[j + 1][0]
            else:  # step past: from the previous event to this step
                a, b_ = bounds[j - 1][0], ev[0]
            pos = self.add(t, a, b_, _decode_step(ev[7]) or name, cat, ev[7], ev[2], ASYNC)
            if b_ is None:  # the parent carries the hang; its last step just runs to the end with it
                self.flags[pos] &= ~UNFINISHED
            self.async_group[pos] = root

    def _nestable_slices(self, events: list[tuple[Any, ...]]) -> None:
        stack: list[list[Any]] = []  # [event, end event or None, parent entry or None, (then) its position]
        entries: list[list[Any]] = []
        ev: tuple[Any, ...]
        for ev in events:
            ph = ev[2]
            if ph == "e":
                k = len(stack) - 1
                while k >= 0 and stack[k][0][5] != ev[5]:
                    k -= 1
                if k < 0:  # drawn from the first event of its id to it, as catapult draws it (a problem still)
                    self.problems["async e without a matching b"] += 1
                    entries.append([ev, None, stack[-1] if stack else None])
                    continue
                stack[k][1] = ev
                del stack[k:]
                continue
            entry: list[Any] = [ev, None, stack[-1] if stack else None]
            entries.append(entry)
            if ph == "b":
                stack.append(entry)
        last_ts = events[-1][0]
        for item in entries:
            entry = item
            ev, end_ev = entry[0], entry[1]
            ts, seq, ph, _ident, _pid, name, cat, args = ev
            root: list[Any] = entry
            while root[2] is not None:
                root = root[2]
            rev = root[0]
            t = self._async_track(rev[4], rev[5])
            if ph == "n":
                pos = self.add(t, ts, ts, name, cat, args, "n", ASYNC | INSTANT)
            elif ph == "e":
                pos = self.add(t, events[0][0], ts, name, cat, args, "e", ASYNC)
            elif end_ev is not None:
                pos = self.add(t, ts, end_ev[0], name, cat, merge_args(args, end_ev[7]), "b", ASYNC)
            elif last_ts > ts:
                pos = self.add(t, ts, last_ts, name, cat, args, "b", ASYNC | UNFINISHED)
            else:
                pos = self.add(t, ts, None, name, cat, args, "b", ASYNC)
            entry.append(pos)
            self.async_pos[seq] = pos
            self.async_group[pos] = root[3] if len(root) > 3 else pos

    def _shown_process_names(self) -> dict[Any, str]:
        """Each pid's process name, with the pid after it when several processes of the trace share the name
        ("Renderer 18931", "Renderer 18811", as Perfetto names them): two Chrome renderers otherwise read as one,
        their tracks labelled alike and merged into one group by process."""
        used = {tr.pid for tr in self.tracks} | {c.pid for c in self.counters}
        pids_of: dict[str, set[Any]] = {}
        for pid, name in self.process_names.items():
            if pid in used:
                pids_of.setdefault(name, set()).add(pid)
        return {
            pid: f"{name} {pid}" if len(pids_of.get(name, ())) > 1 else name
            for pid, name in self.process_names.items()
        }

    def _distinct_thread_names(self) -> None:
        """Threads of one process sharing a name ("PAC thread #0" twice) get their tid after it, as Perfetto
        shows them, so their rows can be told apart."""
        tids_of: dict[tuple[Any, str], set[Any]] = {}
        for tr in self.tracks:
            if tr.kind == "thread" and tr.name:
                tids_of.setdefault((tr.pid, tr.name), set()).add(tr.tid)
        for tr in self.tracks:
            if tr.kind == "thread" and tr.name and len(tids_of[(tr.pid, tr.name)]) > 1 and tr.tid is not None:
                tr.name = f"{tr.name} {tr.tid}"

    def _finish_tracks(self) -> None:
        process_names = self._shown_process_names()
        for tr in self.tracks:
            if tr.kind == "thread":
                tn = self.thread_names.get((tr.pid, tr.tid))
                if tn:
                    tr.name = tn
                tr.sort_index = self.thread_sort.get((tr.pid, tr.tid), 0)
            tr.process_sort_index = self.process_sort.get(tr.pid, 0)
            if not tr.process:
                pn = process_names.get(tr.pid)
                tr.process = pn if pn else ("" if tr.pid is None else f"pid {tr.pid}")
            if not tr.instance:
                m = _INSTANCE_RE.search(tr.process)
                if m:
                    tr.instance = m.group(0)
            if tr.core is None and tr.name:
                m = _CORE_RE.match(tr.name.strip())
                if m:
                    tr.core = int(m.group(1))
        self._distinct_thread_names()
        for c in self.counters:
            if not c.process:
                pn = process_names.get(c.pid)
                c.process = pn if pn else ("" if c.pid is None else f"pid {c.pid}")

    def build(self) -> TraceStore:
        """Match pairs, close unfinished events, lay out rows, sort the display columns, find errors."""
        self._match_begin_end()
        self._match_async()
        self._finish_tracks()
        for reason in UNPLACED:  # dropped: counted as events that could not be read, not as a shape of the trace
            n = self.problems.pop(reason, 0)
            if n:
                self.lost += n
                self.lost_reasons[reason] += n
        st = TraceStore()
        st.path, st.format, st.strings = self.path, self.format, self.strings
        st.problems, st.phase_counts, st.metadata = self.problems, self.phase_counts, self.metadata
        st.lost, st.lost_reasons, st.unread, st.not_shown = self.lost, self.lost_reasons, self.unread, self.not_shown
        n = len(self.start)
        start, end, flags = self.start, self.end, self.flags
        ctimes = [c.ts[0] for c in self.counters if len(c.ts)] + [
            c.ts[-1] for c in self.counters if len(c.ts)
        ]
        s_np = np.frombuffer(start, np.int64) if n else None
        e_np = np.frombuffer(end, np.int64) if n else None
        t_min = min(([int(s_np.min())] if s_np is not None else []) + ctimes, default=0)
        t_max = max(([int(e_np.max()), int(s_np.max())] if e_np is not None and s_np is not None else []) + ctimes,
                    default=0)
        del s_np, e_np
        st.t_min, st.t_max = t_min, max(t_max, t_min)
        for i in self.open_ended:
            end[i] = st.t_max
        perm = self._layout()
        st.start, st.end = self.disp_start, self.disp_end
        self.disp_start = self.disp_end = array("q")
        st.dur = array("q", [0]) * n
        if n:
            np.subtract(np.frombuffer(st.end, np.int64), np.frombuffer(st.start, np.int64),
                        out=np.frombuffer(st.dur, np.int64))
        st.orig = perm
        del perm
        st.name, st.cat, st.track, st.flags, st.phase = self.name, self.cat, self.track, flags, self.phase
        st.args_off = self.args_off
        st.args_blob = self.args_blob  # a bytearray: slicing and regex work on it, and no 35 MB copy
        self.args_blob = bytearray()
        self._flag_errors(st)
        wanted = set(_find_bits(flags, UNFINISHED | ERROR))
        wanted.update(x for link in self.flow_links for x in link)
        wanted.update(self._flow_slices())
        inv = self._display_positions(st, start, wanted)
        st.errors = sorted(inv[o] for o in wanted if flags[o] & ERROR)
        st.unfinished = sorted(inv[o] for o in wanted if flags[o] & UNFINISHED)
        for tr in self.tracks:
            tr.count = sum(hi - lo for lo, hi in tr.rows)
            tr.mips = [None] * len(tr.rows)
            if tr.source == "cpu" and self._looks_device(st, tr):
                tr.source = "device"
        for c in self.counters:
            if len(c.ts) > 1 and any(c.ts[k] > c.ts[k + 1] for k in range(len(c.ts) - 1)):
                idx = sorted(range(len(c.ts)), key=c.ts.__getitem__)
                c.ts = array("q", [c.ts[k] for k in idx])
                c.val = array("d", [c.val[k] for k in idx])
                if c.breakdown is not None:
                    c.breakdown = [c.breakdown[k] for k in idx]
            c.mips = mip_levels(c.val)
        st.tracks = self.tracks
        st.counters = self.counters
        self._bind_flows(st, inv)
        return st

    def _display_positions(self, st: TraceStore, raw_start: array, wanted: set[int]) -> dict[int, int]:
        """Where the events in ``wanted`` (raw positions) went in display order: found in their track's rows by
        their start (a few bisects each), not by inverting the whole permutation."""
        if len(wanted) * 64 > len(st.orig):
            return {old: new for new, old in enumerate(st.orig) if old in wanted}
        out: dict[int, int] = {}
        orig, start = st.orig, st.start
        for w in wanted:
            s = raw_start[w]
            for lo, hi in self.tracks[self.track[w]].rows:
                k = bisect_left(start, s, lo, hi)
                while k < hi and start[k] == s and orig[k] != w:
                    k += 1
                if k < hi and orig[k] == w:
                    out[w] = k
                    break
        return out

    def _flag_errors(self, st: TraceStore) -> None:
        """Error flags: an error event type, or a "ret" in args that is not an obvious success."""
        flags, names = st.flags, st.name
        for k, s in enumerate(st.strings):
            if is_error_name(s):
                for i in _find_int(names, k):
                    flags[i] |= ERROR
        blob, off = st.args_blob, st.args_off
        n = len(flags)
        for m in _RET_SET.finditer(blob):
            o = bisect_right(off, m.start()) - 1
            if 0 <= o < n and ret_is_error(decode_args(blob[off[o] : off[o + 1]]).get("ret")):
                flags[o] |= ERROR

    @staticmethod
    def _looks_device(st: TraceStore, tr: Track) -> bool:
        """A track is "device" when most of its top-row events are hardware event types or GPU/NC categories."""
        if not tr.rows:
            return False
        lo, hi = tr.rows[0]
        step = max(1, (hi - lo) // 64)
        hits = total = 0
        for i in range(lo, hi, step):
            total += 1
            o = st.orig[i]
            if st.strings[st.name[o]] in HARDWARE_EVENTS or st.strings[st.cat[o]].lower() in _DEVICE_CATS:
                hits += 1
        return total > 0 and hits * 2 > total

    def _layout(self) -> array:
        """Give each event a row (nesting depth in its lane; partial overlaps go to overflow lanes).

        Returns the display order (by track, row, start), fills ``Track.rows`` with each row's range and the
        display-order time columns. Thread tracks are nested with whole-column numpy passes (``layout.nest``);
        async tracks, and the few tracks where some event overlaps its parent partially, take the stack walk.
        """
        n = len(self.start)
        start = np.frombuffer(self.start, np.int64) if n else np.empty(0, np.int64)
        end = np.frombuffer(self.end, np.int64) if n else np.empty(0, np.int64)
        track = np.frombuffer(self.track, np.int32) if n else np.empty(0, np.int32)
        is_async = np.array([tr.kind == "async" for tr in self.tracks] or [False], bool)
        nested = nest(start, end, track, is_async if is_async.any() else None)
        walk = np.zeros(len(is_async), bool)
        walk[nested.walk] = True
        walk |= is_async
        walked: dict[int, list[list[int]]] = {}
        overflow = 0
        if walk.any():
            sel = np.flatnonzero(walk[track])
            sel = sel[np.argsort(track[sel], kind="stable")]
            tsel = track[sel]
            cuts = np.flatnonzero(tsel[1:] != tsel[:-1]) + 1
            for part in np.split(sel, cuts) if len(sel) else []:
                t = int(track[part[0]])
                seg = part.tolist()
                if self.tracks[t].kind == "async":
                    lanes = self._async_lanes(seg)
                else:
                    seg.sort(key=self.start.__getitem__)
                    got = self._nest(seg, packed=False)
                    if got is None:  # equal starts in the wrong order (child before parent): by (start, -end)
                        got = self._nest(seg, packed=True)
                    assert got is not None
                    lanes = got
                    overflow += sum(len(row) for lane in lanes[1:] for row in lane)
                walked[t] = [row for lane in lanes for row in lane]
        pieces: list[np.ndarray] = []
        pos = 0
        for t, tr in enumerate(self.tracks):
            got_rows = nested.rows.get(t)
            if got_rows is not None:
                lo0, hi1 = got_rows[0][0], got_rows[-1][1]
                pieces.append(nested.perm[lo0:hi1])
                tr.rows.extend((pos + lo - lo0, pos + hi - lo0) for lo, hi in got_rows)
                pos += hi1 - lo0
            elif t in walked:
                for row in walked[t]:
                    pieces.append(np.array(row, np.int64))
                    tr.rows.append((pos, pos + len(row)))
                    pos += len(row)
        if overflow:
            self.problems["partially overlapping events (overflow lane)"] += overflow
        out = array("i", [0]) * n
        perm = np.frombuffer(out, np.int32) if n else np.empty(0, np.int32)
        if pieces:
            np.concatenate(pieces, out=perm, casting="unsafe")
        del pieces, nested
        self.disp_start, self.disp_end = _gather(start, perm), _gather(end, perm)
        del start, end, track, perm
        return out

    def _async_lanes(self, seg: list[int]) -> list[list[list[int]]]:
        """An async track: each root slice and its children is laid out as a unit, in the first lane free at its
        start (concurrent requests side by side, as Perfetto gives each id its own track); no overlap is a
        problem here, it is what async slices are for."""
        start, end = self.start, self.end
        groups: dict[int, list[int]] = {}
        for ev in seg:
            groups.setdefault(self.async_group.get(ev, ev), []).append(ev)
        spans = sorted(
            ((min(start[k] for k in evs), -max(end[k] for k in evs), gid) for gid, evs in groups.items())
        )
        lane_end: list[int] = []
        lane_events: list[list[int]] = []
        for s0, neg_end, gid in spans:
            ln = next((k for k, e0 in enumerate(lane_end) if e0 <= s0), len(lane_end))
            if ln == len(lane_end):
                lane_end.append(0)
                lane_events.append([])
            lane_end[ln] = -neg_end
            lane_events[ln].extend(groups[gid])
        out: list[list[list[int]]] = []
        for evs in lane_events:
            got = self._nest(evs, packed=True)
            assert got is not None
            out.append([row for lane in got for row in lane])
        return out

    def _nest(self, seg: list[int], packed: bool) -> list[list[list[int]]] | None:
        """Rows of one track as lanes of depth buckets; None when a re-sort by (start, -end) is needed."""
        start, end = self.start, self.end
        if packed:
            top = (1 << 64) - 1
            seg.sort(key=lambda k: (start[k], top - end[k]))
        inf = 1 << 63
        stack = [inf]
        pop, push = stack.pop, stack.append
        buckets: list[list[int]] = []
        adds: list[Any] = []  # the buckets' append methods (a bound-method call beats index + attribute)
        spill: list[int] = []
        for ev, s, e in zip(seg, map(start.__getitem__, seg), map(end.__getitem__, seg)):  # noqa: B905
            while stack[-1] <= s:
                pop()
            if e <= stack[-1]:
                d = len(stack) - 1
                if d < len(adds):
                    adds[d](ev)
                else:
                    buckets.append([ev])
                    adds.append(buckets[-1].append)
                push(e)
            else:
                spill.append(ev)
        if spill and not packed and len(set(start[k] for k in seg)) < len(seg):
            return None
        lanes = [buckets]
        if spill:
            lanes.extend(self._spill_lanes(spill))
        return lanes

    def _spill_lanes(self, spill: list[int]) -> list[list[list[int]]]:
        """Events that partially overlap their would-be parent: nest them in extra lanes (rows below)."""
        start, end = self.start, self.end
        inf = 1 << 63
        stacks: list[list[int]] = []
        lanes: list[list[list[int]]] = []
        for ev in spill:
            s, e = start[ev], end[ev]
            for ln in range(len(stacks) + 1):
                if ln == len(stacks):
                    stacks.append([inf])
                    lanes.append([])
                st = stacks[ln]
                while st[-1] <= s:
                    st.pop()
                if e <= st[-1]:
                    d = len(st) - 1
                    if d == len(lanes[ln]):
                        lanes[ln].append([])
                    lanes[ln][d].append(ev)
                    st.append(e)
                    break
        return lanes

    def _resolve(self, where: tuple[Any, ...]) -> int | None:
        """The raw position of the slice a v2 flow point names (None: its begin never became a slice)."""
        kind, ref = where[0], where[1]
        if kind == "raw":
            return ref  # type: ignore[no-any-return]
        if kind == "be":
            return self.be_pos.get(ref)
        return self.async_pos.get(ref)

    def _flow_slices(self) -> list[int]:
        """Raw positions of the slices v2 flow points name."""
        out = []
        for p in self.flow_points:
            raw = self._resolve(p[4])
            if raw is not None:
                out.append(raw)
        return out

    def _bind_flows(self, st: TraceStore, inv: dict[int, int]) -> None:
        """Flows as Perfetto's JSON importer binds them, in time order per flow id.

        v1 (s/t/f events): ``s`` and ``t`` bind to the innermost slice enclosing them on their thread (a slice
        starting exactly at the point first: flow points are usually written at their slice's start, Kineto's s
        at the launch, f at the kernel), ``f`` too with ``"bp": "e"``, else to the next slice that begins on its
        thread. v2: the slice carrying ``bind_id`` itself, ``flow_out`` a start, ``flow_in`` an end, both a step.
        A start opens the flow, a step links from the flow's current slice and moves it, an end links from it and
        leaves it (JSON flows never close, so several ends can share one start); a start after an end reuses the
        id for a new flow, as catapult does. Ids are per (id, cat, name) in v1 and per ``bind_id`` in v2.
        The binding and the flows are computed with array passes (``flowbind``).
        """
        links_a: list[int] = [inv[a] for a, _ in self.flow_links]
        links_b: list[int] = [inv[b] for _, b in self.flow_links]
        nv1, v2 = len(self.fv_ts), self.flow_points
        self.flow_points = []
        a = np.array(links_a, np.int64)
        b = np.array(links_b, np.int64)
        if nv1 or v2:
            n = len(st)
            flags = np.frombuffer(st.flags, np.uint8) if n else np.empty(0, np.uint8)
            orig = np.frombuffer(st.orig, np.int32) if n else np.empty(0, np.int32)
            instant = (flags[orig] & INSTANT) != 0
            start = np.frombuffer(st.start, np.int64) if n else np.empty(0, np.int64)
            end = np.frombuffer(st.end, np.int64) if n else np.empty(0, np.int64)
            rows = [tr.rows for tr in st.tracks]
            ev1 = enclosing_slices(
                np.frombuffer(self.fv_track, np.int32) if nv1 else np.empty(0, np.int32),
                np.frombuffer(self.fv_ts, np.int64) if nv1 else np.empty(0, np.int64),
                np.frombuffer(self.fv_enclosing, np.uint8).astype(bool) if nv1 else np.empty(0, bool),
                rows,
                start,
                end,
                instant,
            )
            del start, end, instant, flags, orig
            ev2 = []
            for p in v2:
                raw = self._resolve(p[4])
                got = None if raw is None else inv.get(raw)
                ev2.append(-1 if got is None else got)
            cols = [
                (self.fv_key, [p[0] for p in v2]),
                (self.fv_ts, [p[1] for p in v2]),
                (self.fv_seq, [p[2] for p in v2]),
            ]
            key, ts, seq = (
                np.concatenate((np.frombuffer(col, np.int64) if nv1 else np.empty(0, np.int64),
                                np.array(extra, np.int64)))
                for col, extra in cols
            )
            # flow ids numbered in order of first appearance (the lowest seq of each)
            uniq, which = np.unique(key, return_inverse=True)
            first = np.full(len(uniq), np.iinfo(np.int64).max, np.int64)
            np.minimum.at(first, which, seq)
            rank = np.empty(len(uniq), np.int64)
            rank[np.argsort(first)] = np.arange(len(uniq))
            kid = rank[which]
            del key, uniq, which, first, rank
            action = np.concatenate(
                (
                    np.frombuffer(self.fv_action, np.uint8) if nv1 else np.empty(0, np.uint8),
                    np.frombuffer("".join(p[3] for p in v2).encode(), np.uint8),
                )
            )
            ev = np.concatenate((ev1, np.array(ev2, np.int64)))
            fa, fb, problems = run_flows(kid, ts, seq, action, ev)
            self.problems.update(problems)
            a, b = np.concatenate((a, fa)), np.concatenate((b, fb))
        if len(a):
            flags_w = np.frombuffer(st.flags, np.uint8)
            orig_i = np.frombuffer(st.orig, np.int32)
            flags_w[orig_i[a]] |= FLOW_OUT
            flags_w[orig_i[b]] |= FLOW_IN
            del flags_w, orig_i
            st.flows = FlowMap(a, b)
        st.flow_count = len(a)

def merge_args(first: bytes | bytearray, second: bytes | bytearray) -> bytes | bytearray:
    """The args of a begin and its end together (the end's value wins a key both have, as catapult does)."""
    if len(second) <= 2:
        return first
    if len(first) <= 2:
        return second
    a, b = decode_args(first), decode_args(second)
    return msgspec.json.encode({**a, **b})


def _decode_step(args: bytes) -> str:
    """The name of a legacy async step: its ``args.step``."""
    if not args or b'"step"' not in args:
        return ""
    v = decode_args(args).get("step")
    return v if isinstance(v, str) else ""

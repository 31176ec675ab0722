"""What the timeline shows, independent of any UI: grouped lines, the visible window, navigation, search.

The Neuron Explorer System Trace Viewer groups events by CPU vs device (default), NeuronCore, thread, process or
instance. Here a grouping orders the tracks under group headers (each header summarises its tracks' top rows);
a track shows one line per row (nesting depth, then overflow lanes); counters show one line each.
"""

from __future__ import annotations

import heapq
import zlib
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuron_top.trace.columns import RowIndex
from neuron_top.trace.filters import Filters
from neuron_top.trace.store import CounterTrack, TraceStore, Track

__all__ = ["GROUPINGS", "GROUPING_LABELS", "PALETTE", "Line", "TimelineModel", "available_groupings", "name_slot"]

GROUPINGS = ("cpu-device", "core", "thread", "process", "instance")
GROUPING_LABELS = {
    "file": "file",
    "cpu-device": "CPU vs device",
    "core": "NeuronCore",
    "thread": "thread",
    "process": "process",
    "instance": "instance",
}


@dataclass(frozen=True)
class Line:
    """One screen line of the timeline."""

    kind: str
    """"group", "row" or "counter"."""
    label: str
    track: int = -1
    row: int = 0
    counter: int = -1
    group: int = -1
    """Index into ``TimelineModel.groups`` (for "group" lines and their members)."""
    title: str = ""
    """The track's name on every one of its lines (``label`` is empty after the first): shown on the top line
    when the view is scrolled into the middle of a tall track."""


def available_groupings(store: TraceStore, files: bool = False) -> tuple[str, ...]:
    """The groupings ``o`` cycles through: those that tell this trace's tracks apart. NeuronCore and instance only
    when some track or counter has one (on a trace with neither they put everything in one group, and the screen
    would not change); "file" when several files are open."""
    have_core = any(t.core is not None for t in store.tracks) or any(c.core is not None for c in store.counters)
    have_inst = any(t.instance for t in store.tracks) or any(c.instance for c in store.counters)
    modes = [m for m in GROUPINGS if (m != "core" or have_core) and (m != "instance" or have_inst)]
    return ("file", *modes) if files else tuple(modes)


def _group_of(track: Track, mode: str, files: dict[str, int] | None = None) -> tuple[Any, str]:
    """(sort key, label) of the group a track belongs to under ``mode``."""
    if mode == "file":
        return (0, (files or {}).get(track.file, 0)), track.file or "file"
    if mode == "cpu-device":
        return (0 if track.source == "cpu" else 1,), "CPU" if track.source == "cpu" else "Device"
    if mode == "core":
        if track.core is None:
            return (1, 0), "no NeuronCore"
        return (0, track.core), f"NC {track.core}"
    if mode == "thread":
        tid = "" if track.tid is None else str(track.tid)
        return (0, tid.isdigit(), int(tid) if tid.isdigit() else 0, tid), f"thread {tid or '-'}"
    if mode == "process":
        return (0, track.process), track.process or "process ?"
    return (0, track.instance), track.instance or "local"


PALETTE = 8
"""Slice colours (the widget's ``timeline--c0`` .. ``c7`` component classes)."""


def name_slot(name: str) -> int:
    """A stable colour slot per event type (name up to the first space), as neuron-det colours by NEFF."""
    return zlib.crc32(name.split(" ", 1)[0].encode("utf-8", "replace")) % PALETTE


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _track_sort(t: Track) -> tuple[Any, ...]:
    pid = t.pid
    tid = t.tid
    return (
        t.process_sort_index,
        t.process,
        {"global": 0, "process": 1, "thread": 2, "async": 3}.get(t.kind, 4),
        str(pid),
        t.sort_index,
        isinstance(tid, str),
        tid if isinstance(tid, int) else 0,
        str(tid),
        t.name,
        t.id,
    )


class TimelineModel:
    """Lines, row indexes (filtered when an event-type filter is on) and search over one store."""

    def __init__(self, store: TraceStore, grouping: str | None = None, filters: Filters | None = None) -> None:
        self.store = store
        labels = store.metadata.get("labels", "")
        self.files = {name: k for k, name in enumerate(labels.split("\n"))} if labels else {}
        """Several files opened together: their group names, in the order given (grouping "file")."""
        self.groupings = available_groupings(store, bool(self.files))
        self.grouping = grouping or self.groupings[0]
        self.filters = filters or Filters()
        self.lines: list[Line] = []
        self.groups: list[tuple[str, list[int]]] = []
        """(label, track ids) per group."""
        self._rows: dict[tuple[int, int], RowIndex] = {}
        self._names_ok = b""
        self._search_cache: tuple[str, list[int]] | None = None
        self._by_time_cache: dict[str, list[int]] = {}
        self._keys: array | None = None
        self._flow_turn: dict[tuple[int, bool], int] = {}
        """(slice, downstream?) -> how many times ``follow_flow`` left it that way: the next time takes the next
        flow end in turn, so L, H, L from a slice with two consumers reaches both."""
        self.rebuild()

    # -- structure ------------------------------------------------------------------------------------------
    def rebuild(self) -> None:
        st = self.store
        f = self.filters
        self._rows.clear()
        self._names_ok = f.name_table(st.strings) if f.types is not None else b""
        self._search_cache = None
        self._by_time_cache.clear()
        buckets: dict[Any, tuple[str, list[Track], list[CounterTrack]]] = {}
        for tr in sorted(st.tracks, key=_track_sort):
            if not tr.rows or not f.accepts_track(tr):
                continue
            key, label = _group_of(tr, self.grouping, self.files)
            buckets.setdefault(key, (label, [], []))[1].append(tr)
        for c in st.counters:
            if f.cores is not None and c.core not in f.cores:
                continue
            if f.instances is not None and c.instance not in f.instances:
                continue
            if self.grouping == "file" and c.file in self.files:
                key, label = _group_of(c, "file", self.files)  # type: ignore[arg-type]
            else:
                label = c.group or "counters"
                key = (9, label)
            buckets.setdefault(key, (label, [], []))[2].append(c)
        self.lines = []
        self.groups = []
        for key in sorted(buckets, key=repr):
            label, tracks, counters = buckets[key]
            g = len(self.groups)
            self.groups.append((label, [t.id for t in tracks]))
            n_ev = sum(t.count for t in tracks)
            header = (
                f"{label} ({_plural(len(tracks), 'track')}, {_plural(n_ev, 'event')})" if tracks else label
            )
            self.lines.append(Line("group", header, group=g))
            for tr in tracks:
                name = tr.label
                where = tr.instance or tr.process
                if self.grouping not in ("process", "instance") and tr.kind == "thread" and where:
                    name = f"{name} · {where}"
                for r in range(len(tr.rows)):
                    self.lines.append(Line("row", name if r == 0 else "", track=tr.id, row=r, group=g, title=name))
            for c in counters:
                self.lines.append(Line("counter", c.label, counter=c.id, group=g))

    def set_grouping(self, mode: str) -> None:
        self.grouping = mode
        self.rebuild()

    def cycle_grouping(self) -> str:
        modes = self.groupings
        k = modes.index(self.grouping) + 1 if self.grouping in modes else 0
        self.set_grouping(modes[k % len(modes)])
        return self.grouping

    def set_filters(self, filters: Filters) -> None:
        self.filters = filters
        self.rebuild()

    @property
    def names_ok(self) -> bytes:
        """One byte per interned name: 1 when the event-type filter shows it (empty: no type filter)."""
        return self._names_ok

    def row_lines(self) -> list[Line]:
        return [ln for ln in self.lines if ln.kind == "row"]

    def edge_event(self, last: bool) -> int | None:
        """The first (or last) event by start time on the lines shown."""
        best: tuple[int, int] | None = None
        for ln in self.row_lines():
            ri = self.row_index(ln.track, ln.row)
            if ri.hi <= ri.lo:
                continue
            k = ri.hi - 1 if last else ri.lo
            cand = (ri.start[k], ri.event(k))
            if best is None or (cand > best if last else cand < best):
                best = cand
        return None if best is None else best[1]

    def tail(self, n: int) -> tuple[int, int] | None:
        """Where "the end" is: the start of the ``n``-th last event (by start) on the lines shown, and the latest
        end of an event that is not a whole-run span. Such a span (Kineto's "PyTorch Profiler (0)", longer than
        half the trace) can end seconds after the last activity; it is the trace's end, not its last events."""
        tails: list[tuple[int, int]] = []
        ends: list[int] = []
        half = self.store.span // 2
        for ln in self.row_lines():
            ri = self.row_index(ln.track, ln.row)
            lo = max(ri.lo, ri.hi - n)
            tails.extend(zip(ri.start[lo : ri.hi], ri.end[lo : ri.hi], strict=True))
            end = np.frombuffer(ri.end, dtype=np.int64)[ri.lo : ri.hi]
            short = end[np.frombuffer(ri.dur, dtype=np.int64)[ri.lo : ri.hi] <= half]
            if len(short):
                ends.append(int(short.max()))
        if not tails:
            return None
        last = heapq.nlargest(n, tails)
        return last[-1][0], max(max(e for _s, e in last), *ends)

    def row_index(self, track: int, row: int) -> RowIndex:
        key = (track, row)
        ri = self._rows.get(key)
        if ri is None:
            if self._names_ok:
                ri = RowIndex.filtered(self.store, track, row, self._names_ok)
            else:
                ri = RowIndex.of_row(self.store, track, row)
            self._rows[key] = ri
        return ri

    @property
    def colour_keys(self) -> array:
        """Per event, colour slot * 4 + error/unfinished bits: what a dense cell looks like (built once, lazily).

        Neighbouring dense cells with equal keys merge into one span, so fewer, longer segments get drawn.
        """
        if self._keys is None:
            st = self.store
            slot = [name_slot(s) * 4 for s in st.strings]
            names, flags = st.name, st.flags
            self._keys = array("i", [slot[names[o]] + (flags[o] & 3) for o in st.orig])
        return self._keys

    def visible(self, ev: int) -> bool:
        """Whether the filters let ``ev`` show."""
        st = self.store
        if not self.filters.accepts_track(st.track_of(ev)):
            return False
        return not self._names_ok or bool(self._names_ok[st.name[st.orig[ev]]])

    def line_of_event(self, ev: int) -> int | None:
        st = self.store
        tid = st.track[st.orig[ev]]
        row = st.row_of(ev)
        for i, ln in enumerate(self.lines):
            if ln.kind == "row" and ln.track == tid and ln.row == row:
                return i
        return None

    # -- navigation ---------------------------------------------------------------------------------------------
    def _sorted_by_time(self, key: str, events: list[int]) -> list[int]:
        got = self._by_time_cache.get(key)
        if got is None:
            st = self.store
            got = sorted((e for e in events if self.visible(e)), key=lambda e: (st.start[e], e))
            self._by_time_cache[key] = got
        return got

    def errors(self) -> list[int]:
        return self._sorted_by_time("errors", self.store.errors)

    def unfinished(self) -> list[int]:
        return self._sorted_by_time("unfinished", self.store.unfinished)

    def step(self, events: list[int], current: int | None, t: int, forward: bool) -> int | None:
        """The next (or previous) event of a time-sorted list after the current one / time ``t``; wraps."""
        if not events:
            return None
        st = self.store
        keys = [(st.start[e], e) for e in events]
        cur = (st.start[current], current) if current is not None else (t, -1 if forward else 1 << 62)
        if forward:
            i = bisect_right(keys, cur)
            return events[i % len(events)]
        i = bisect_left(keys, cur) - 1
        return events[i % len(events)]

    # -- flows (Neuron Explorer's Dependency Chain Viewer: upstream and downstream of a slice) -----------------------
    def flow_ends(self, ev: int, downstream: bool) -> list[int]:
        """The other ends of ``ev``'s flows, downstream (flows leaving it) or upstream (flows arriving), by time;
        each once, without ``ev`` itself (a flow within one slice leads nowhere else), only those shown."""
        fm = self.store.flows
        got = fm.outgoing(ev) if downstream else fm.incoming(ev)
        st = self.store
        return sorted({e for e in got if e != ev and self.visible(e)}, key=lambda e: (st.start[e], e))

    def hidden_flow_ends(self, ev: int) -> int:
        """Other ends of ``ev``'s flows that the filters hide."""
        fm = self.store.flows
        return len({e for e in fm.outgoing(ev) + fm.incoming(ev) if e != ev and not self.visible(e)})

    def follow_flow(self, ev: int, downstream: bool) -> tuple[int | None, int, int]:
        """Where L (downstream) or H (upstream) goes from ``ev``: (the slice, its number k, of n). Asked again
        from the same slice the same way, the next of its n ends in turn (then the first again)."""
        ends = self.flow_ends(ev, downstream)
        if not ends:
            return None, 0, 0
        key = (ev, downstream)
        k = self._flow_turn.get(key, 0) % len(ends)
        self._flow_turn[key] = k + 1
        return ends[k], k + 1, len(ends)

    def chain_source(self, ev: int, limit: int = 10_000) -> tuple[int, int]:
        """The source of the flow chain through ``ev``: upstream (the earliest flow in, each time) until a slice
        no flow arrives at; with how many flows up it is (0: ``ev`` is a source). Stops on a cycle, and after
        ``limit`` flows (the list is redrawn on every selection: a chain of a million steps must not stall it)."""
        seen = {ev}
        steps = 0
        while steps < limit:
            ups = self.flow_ends(ev, downstream=False)
            if not ups or ups[0] in seen:
                return ev, steps
            ev = ups[0]
            seen.add(ev)
            steps += 1
        return ev, steps

    def search(self, text: str) -> list[int]:
        """Events whose name contains ``text`` (case-insensitive), sorted by time; cached per text."""
        text = text.strip().lower()
        if not text:
            return []
        if self._search_cache and self._search_cache[0] == text:
            return self._search_cache[1]
        st = self.store
        ids = {k for k, s in enumerate(st.strings) if text in s.lower()}
        hits: list[int] = []
        if ids:
            names, orig = st.name, st.orig
            hits = [i for i in range(len(st)) if names[orig[i]] in ids]
        result = self._sorted_by_time(f"search:{text}", hits)
        self._search_cache = (text, result)
        return result

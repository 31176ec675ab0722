"""Per-screen-column summaries of a time window: what the timeline draws, computed in bounded time.

A redraw must not cost more when a million events are in view than when ten are. Each displayed row is a
start-sorted run of non-overlapping events, so for every screen column two bisects give the range of events
under it; the column shows the longest of them (picked from precomputed argmax levels, Perfetto's mipmap idea)
and whether it is "dense" (several events share the column). Cost: O(columns x log events) per row.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .store import CounterTrack, TraceStore, mip_levels, mip_pick


class RowIndex:
    """The events of one displayed row: a [lo, hi) window of the store's display columns, or filtered copies.

    ``ids`` maps a position to the store's event index when the row was filtered (None: position == index).
    """

    __slots__ = ("dur", "end", "hi", "ids", "lo", "mips", "start")

    def __init__(
        self,
        start: array,
        end: array,
        dur: array,
        lo: int,
        hi: int,
        mips: list[array],
        ids: array | None = None,
    ) -> None:
        self.start, self.end, self.dur = start, end, dur
        self.lo, self.hi, self.mips, self.ids = lo, hi, mips, ids

    def __len__(self) -> int:
        return self.hi - self.lo

    def event(self, k: int) -> int:
        return k if self.ids is None else self.ids[k]

    @classmethod
    def of_row(cls, store: TraceStore, track_id: int, row: int) -> RowIndex:
        tr = store.tracks[track_id]
        lo, hi = tr.rows[row]
        return cls(store.start, store.end, store.dur, lo, hi, tr.mips[row])

    @classmethod
    def filtered(cls, store: TraceStore, track_id: int, row: int, keep: Sequence[bool] | bytes) -> RowIndex:
        """Only the events whose name id is set in ``keep`` (the event-type filter): an O(row) copy, once."""
        tr = store.tracks[track_id]
        lo, hi = tr.rows[row]
        names, orig = store.name, store.orig
        ids = array("i", [i for i in range(lo, hi) if keep[names[orig[i]]]])
        start = array("q", [store.start[i] for i in ids])
        end = array("q", [store.end[i] for i in ids])
        dur = array("q", [store.dur[i] for i in ids])
        return cls(start, end, dur, 0, len(ids), mip_levels(dur), ids)

    def at(self, t: int) -> int | None:
        """The event covering time ``t`` (rows never overlap), as a store event index."""
        k = bisect_right(self.start, t, self.lo, self.hi) - 1
        if k >= self.lo and self.end[k] >= t:
            return self.event(k)
        return None

    def nearest(self, t: int, tolerance: int) -> int | None:
        """The event covering ``t``, else the closest one within ``tolerance`` (a click on a thin slice)."""
        hit = self.at(t)
        if hit is not None:
            return hit
        k = bisect_right(self.start, t, self.lo, self.hi)
        best, dist = None, tolerance + 1
        for c in (k - 1, k):
            if self.lo <= c < self.hi:
                d = min(abs(self.start[c] - t), abs(self.end[c] - t))
                if d < dist:
                    best, dist = self.event(c), d
        return best


class Span(NamedTuple):
    """Columns [col, col_end) show one event (``dense``: with others squeezed into the same columns)."""

    col: int
    col_end: int
    event: int
    dense: bool


@dataclass(frozen=True)
class Window:
    """The visible time range [t0, t1) over ``width`` columns."""

    t0: int
    t1: int
    width: int

    def bounds(self) -> list[int]:
        w = max(self.width, 1)
        span = max(self.t1 - self.t0, 1)
        return [self.t0 + span * c // w for c in range(w + 1)]

    def col_of(self, t: int) -> int:
        span = max(self.t1 - self.t0, 1)
        return (t - self.t0) * max(self.width, 1) // span

    def time_of(self, col: int) -> int:
        span = max(self.t1 - self.t0, 1)
        return self.t0 + span * col // max(self.width, 1)


def summarise_row(row: RowIndex, bounds: list[int]) -> list[Span]:
    """Spans of one row for columns delimited by ``bounds`` (len = columns + 1)."""
    lo, hi = row.lo, row.hi
    if hi <= lo:
        return []
    start, end = row.start, row.end
    t0, t1 = bounds[0], bounds[-1]
    if start[lo] >= t1 or end[hi - 1] < t0:
        return []
    first = bisect_left(end, t0, lo, hi)
    last = bisect_left(start, t1, first, hi)
    if first >= last:
        return []
    # Columns' event ranges: I[c] = first event ending at/after the column start, J[c] = first starting after it.
    inner = bounds[1:-1]
    ii = [first, *[bisect_left(end, b, first, last) for b in inner]]
    jj = [*[bisect_left(start, b, first, last) for b in inner], last]
    spans: list[Span] = []
    dur, mips = row.dur, row.mips
    prev_ev, prev_dense, run_start = -1, False, 0
    for c, (i, j) in enumerate(zip(ii, jj, strict=True)):
        k = j - i
        if k <= 0:
            ev, dense = -1, False
        elif k == 1:
            ev, dense = i, False
        else:
            ev, dense = mip_pick(mips, dur, i, j, lo), True
        if ev != prev_ev or dense != prev_dense:
            if prev_ev >= 0:
                spans.append(Span(run_start, c, row.event(prev_ev), prev_dense))
            prev_ev, prev_dense, run_start = ev, dense, c
    if prev_ev >= 0:
        spans.append(Span(run_start, len(ii), row.event(prev_ev), prev_dense))
    return spans


def merge_spans(rows: list[list[Span]], width: int) -> list[Span]:
    """A group header's summary: per column, the first child row that has something there."""
    cells: list[tuple[int, bool] | None] = [None] * width
    for spans in rows:
        for sp in spans:
            for c in range(max(sp.col, 0), min(sp.col_end, width)):
                if cells[c] is None:
                    cells[c] = (sp.event, sp.dense)
    out: list[Span] = []
    c = 0
    while c < width:
        cell = cells[c]
        if cell is None:
            c += 1
            continue
        e = c + 1
        while e < width and cells[e] == cell:
            e += 1
        out.append(Span(c, e, cell[0], cell[1]))
        c = e
    return out


def summarise_counter(counter: CounterTrack, bounds: list[int]) -> list[float | None]:
    """Per column, the largest sample inside it, else the last value before it (a step function)."""
    ts, val = counter.ts, counter.val
    n = len(ts)
    if not n:
        return [None] * (len(bounds) - 1)
    out: list[float | None] = []
    idx = [bisect_left(ts, b) for b in bounds]
    for c in range(len(bounds) - 1):
        i, j = idx[c], idx[c + 1]
        if j > i:
            out.append(val[mip_pick(counter.mips, val, i, j, 0)])
        elif i > 0:
            out.append(val[i - 1])
        else:
            out.append(None)
    return out


def counter_sample_at(counter: CounterTrack, t: int) -> int | None:
    """Index of the sample in effect at ``t`` (the last one at or before it)."""
    i = bisect_right(counter.ts, t) - 1
    return i if i >= 0 else None


_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


def format_duration(ns: float) -> str:
    """A compact human duration: 1.5 s, 250 ms, 12.3 µs, 800 ns."""
    a = abs(ns)
    for scale, unit in _UNITS:
        if a >= scale or scale == 1:
            v = ns / scale
            if abs(v) >= 100 or v == int(v):
                return f"{v:.0f} {unit}"
            return f"{v:.3g} {unit}"
    return f"{ns} ns"


def nice_step(span: int, width: int, min_cols: int = 12) -> int:
    """A 1/2/5 x 10^k nanosecond tick step giving labels at least ``min_cols`` columns apart."""
    if width <= 0 or span <= 0:
        return 1
    target = span * min_cols / width
    step = 1
    while True:
        for m in (1, 2, 5):
            if step * m >= target:
                return step * m
        step *= 10


def axis_ticks(window: Window, origin: int, min_cols: int = 12) -> list[tuple[int, str]]:
    """(column, label) tick marks for a time axis; labels are times relative to ``origin``."""
    step = nice_step(window.t1 - window.t0, window.width, min_cols)
    rel0 = window.t0 - origin
    first = -(-rel0 // step) * step
    ticks = []
    t = first
    while t + origin < window.t1:
        col = window.col_of(t + origin)
        if 0 <= col < window.width:
            ticks.append((col, format_duration(t)))
        t += step
    return ticks

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

from neuron_top.trace.store import CounterTrack, TraceStore, mip_levels, mip_pick
from neuron_top.trace.timeparse import is_wall_clock

__all__ = [
    "RowIndex", "Span", "Window", "axis_ticks", "counter_sample_at", "format_duration", "nice_step",
    "overlay", "summarise_counter", "summarise_row",
]


class RowIndex:
    """The events of one displayed row: a [lo, hi) window of the store's display columns, or filtered copies.

    ``ids`` maps a position to the store's event index when the row was filtered (None: position == index).
    """

    __slots__ = ("_mips", "_source", "dur", "end", "hi", "ids", "lo", "start")

    def __init__(
        self,
        start: array,
        end: array,
        dur: array,
        lo: int,
        hi: int,
        mips: list[array] | None,
        ids: array | None = None,
        source: tuple[TraceStore, int, int] | None = None,
    ) -> None:
        self.start, self.end, self.dur = start, end, dur
        self.lo, self.hi, self._mips, self.ids = lo, hi, mips, ids
        self._source = source

    @property
    def mips(self) -> list[array]:
        """Mipmap levels: built (and kept on the track) the first time a dense summary needs them."""
        if self._mips is None:
            if self._source is not None:
                store, track, row = self._source
                self._mips = store.row_mips(store.tracks[track], row)
            else:
                self._mips = mip_levels(self.dur, self.lo, self.hi)
        return self._mips

    def __len__(self) -> int:
        return self.hi - self.lo

    def event(self, k: int) -> int:
        return k if self.ids is None else self.ids[k]

    @classmethod
    def of_row(cls, store: TraceStore, track_id: int, row: int) -> RowIndex:
        tr = store.tracks[track_id]
        lo, hi = tr.rows[row]
        return cls(store.start, store.end, store.dur, lo, hi, None, source=(store, track_id, row))

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


Span = tuple[int, int, int, bool]
"""(col, col_end, event, dense): columns [col, col_end) show one event; ``dense`` when others share them.
Plain tuples: building NamedTuples cost a third of a redraw."""


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


def summarise_row(row: RowIndex, bounds: list[int], keys: Sequence[int] | None = None) -> list[Span]:
    """Spans of one row for columns delimited by ``bounds`` (len = columns + 1).

    Per column: two bisects give the events under it; one event is drawn as itself, several as a "dense" cell
    in the colour of the longest (exact up to 32 events, else the winner of the mipmap block around the
    middle, a block at least a quarter of the column's events). No step depends on how many events are in view.

    ``keys`` (per store event, e.g. name id and error bit) lets neighbouring dense columns whose representatives
    look the same merge into one span: a zoomed-out row of a thousand ``nc_exec`` is one span, not one per column.
    """
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
    if (last - first) * 2 < len(bounds):
        return _summarise_sparse(row, bounds, first, last)
    # ii[c]: first event ending at/after the column start. The events under column c are [ii[c], jj[c]); as
    # rows never overlap, jj[c] is ii[c + 1] plus one when that event straddles the boundary: no second bisect.
    ii = [first, *[bisect_left(end, b, first, last) for b in bounds[1:-1]]]
    nxt = [*ii[1:], last]
    jj = [x + 1 if x < last and start[x] < b else x for x, b in zip(nxt, bounds[1:], strict=True)]
    spans: list[Span] = []
    dur = row.dur
    mips: list[array] = []
    nlev = -1
    ids = row.ids
    prev_ev, prev_dense, run_start = -1, False, 0
    c = 0
    for i, j in zip(ii, jj, strict=True):
        k = j - i
        if k == 1:
            ev, dense = i, False
        elif k <= 0:
            ev, dense = -1, False
        elif k < 32:
            m = (i + j) >> 1  # dense: the longer of the first and the middle event is close enough
            ev, dense = (i if dur[i] >= dur[m] else m), True
        else:
            if nlev < 0:  # the first column with 32+ events: fetch (or build) the row's mipmaps
                mips = row.mips
                nlev = len(mips)
            if nlev:
                lvl = min((k >> 5).bit_length() - 1, nlev - 1)
                ev = mips[lvl][((i + j) // 2 - lo) >> (lvl + 4)]
            else:
                m = (i + j) >> 1
                ev = i if dur[i] >= dur[m] else m
            dense = True
        if ev != prev_ev or dense != prev_dense:
            if (
                dense
                and prev_dense
                and keys is not None
                and keys[ev if ids is None else ids[ev]] == keys[prev_ev if ids is None else ids[prev_ev]]
            ):
                c += 1
                continue
            if prev_ev >= 0:
                spans.append((run_start, c, prev_ev if ids is None else ids[prev_ev], prev_dense))
            prev_ev, prev_dense, run_start = ev, dense, c
        c += 1
    if prev_ev >= 0:
        spans.append((run_start, c, prev_ev if ids is None else ids[prev_ev], prev_dense))
    return spans


def overlay(spans: list[Span], marks: list[tuple[int, int]], width: int) -> list[Span]:
    """Force single columns to show given events ((column, event) pairs, e.g. errors hidden in dense cells)."""
    if not marks:
        return spans
    cells: list[tuple[int, bool] | None] = [None] * width
    for c0, c1, ev, dense in spans:
        for c in range(max(c0, 0), min(c1, width)):
            cells[c] = (ev, dense)
    for col, ev in marks:
        if 0 <= col < width:
            cur = cells[col]
            cells[col] = (ev, cur is not None and cur[0] != ev)
    out: list[Span] = []
    c = 0
    while c < width:
        cell = cells[c]
        if cell is None:
            c += 1
            continue
        k = c + 1
        while k < width and cells[k] == cell:
            k += 1
        out.append((c, k, cell[0], cell[1]))
        c = k
    return out


def _summarise_sparse(row: RowIndex, bounds: list[int], first: int, last: int) -> list[Span]:
    """Fewer events in view than half the columns: place each event (two bisects on the column bounds)."""
    width = len(bounds) - 1
    start, end, dur, ids = row.start, row.end, row.dur, row.ids
    cells = [-1] * width
    dense = [False] * width
    for e in range(first, last):
        a = bisect_right(bounds, start[e]) - 1
        b = bisect_right(bounds, end[e]) - 1
        if a < 0:
            a = 0
        if b >= width:
            b = width - 1
        if a > b:
            continue
        prev = cells[a]
        if prev != -1:  # shares its first column with the previous event
            dense[a] = True
            if dur[e] > dur[prev]:
                cells[a] = e
            a += 1
        if a <= b:
            cells[a : b + 1] = [e] * (b - a + 1)
    spans: list[Span] = []
    c = 0
    while c < width:
        ev = cells[c]
        if ev == -1:
            c += 1
            continue
        d = dense[c]
        k = c + 1
        while k < width and cells[k] == ev and dense[k] == d:
            k += 1
        spans.append((c, k, ev if ids is None else ids[ev], d))
        c = k
    return spans


def counter_full_scale(counter: CounterTrack) -> float:
    """The value a full bar of a counter line stands for: 100 for a percentage (CPU busy, NeuronCore
    utilization: a core at 60% is not drawn full), else the largest sample (1 when there is none)."""
    top = max((v for v in counter.val if v == v), default=0.0)
    if counter.unit == "%":
        return max(top, 100.0)
    return top or 1.0


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


def _unit(ns: int) -> tuple[int, str]:
    a = abs(ns)
    for scale, unit in _UNITS:
        if a >= scale:
            return scale, unit
    return 1, "ns"


def _decimals(step: int, scale: int) -> int:
    """Digits after the point that show multiples of ``step`` exactly in units of ``scale``."""
    d = 0
    while d < 9 and (step * 10**d) % scale:
        d += 1
    return d


def exact_time(ns: int, scale: int, unit: str, decimals: int) -> str:
    """``ns`` in a unit with a fixed number of decimals, by integer arithmetic (no float rounding)."""
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(ns), scale)
    frac = f".{r * 10**decimals // scale:0{decimals}d}" if decimals else ""
    return f"{sign}{q}{frac} {unit}".rstrip()


def format_exact(ns: int) -> str:
    """A time in the unit its size calls for, to the nanosecond, without trailing zeros: ``260.189 ms``,
    ``1.5 s``, ``800 ns``. The details of an event say where it is exactly, whatever the zoom (``format_at``
    is for the axis and the status line, whose precision follows the window)."""
    scale, unit = _unit(ns)
    text = exact_time(ns, scale, unit, len(str(scale)) - 1)
    if "." in text:
        num, unit_ = text.split(" ", 1)
        text = f"{num.rstrip('0').rstrip('.')} {unit_}"
    return text


def format_at(ns: int, resolution: int) -> str:
    """A time (from the trace start) with enough digits to tell apart things ``resolution`` ns apart."""
    scale, unit = _unit(ns)
    d = 0
    while d < 9 and resolution * 10**d < scale:
        d += 1
    step = max(scale // 10**d, 1)
    ns = (ns + step // 2) // step * step if ns >= 0 else -((-ns + step // 2) // step * step)  # round, not cut
    return exact_time(ns, scale, unit, d)


def clock_time(ns: int, decimals: int) -> str:
    """Wall-clock time of day (local time) with ``decimals`` digits of the second."""
    import time as _time

    sec, frac = divmod(ns, 10**9)
    text = _time.strftime("%H:%M:%S", _time.localtime(sec))
    return text + (f".{frac * 10**decimals // 10**9:0{decimals}d}" if decimals else "")


def clock_date(ns: int) -> str:
    import time as _time

    return _time.strftime("%Y-%m-%d", _time.localtime(ns // 10**9))


def axis_ticks(
    window: Window, origin: int, min_cols: int = 12, absolute: bool = False
) -> tuple[str, list[tuple[int, str]]]:
    """(base, [(column, label)]): tick marks for a time axis, every label distinct.

    Labels are times relative to ``origin`` (the trace start, as Perfetto shows them), or with ``absolute`` the
    trace's own clock (a wall clock as time of day). Each shows as many digits as its tick step needs. When such
    labels would not fit between two ticks (deep in a long trace), they become offsets from the first tick and
    ``base`` says where that is; otherwise ``base`` is "".
    """
    step = nice_step(window.t1 - window.t0, window.width, min_cols)
    zero = 0 if absolute else origin
    first = -(-(window.t0 - zero) // step) * step
    values: list[tuple[int, int]] = []
    t = first
    while t + zero < window.t1:
        col = window.col_of(t + zero)
        if 0 <= col < window.width:
            values.append((col, t))
        t += step
    if not values:
        return "", []
    room = min_cols - 2
    wall = absolute and is_wall_clock(values[0][1])
    if wall:
        d = _decimals(step, 10**9)
        labels = [clock_time(v, d) for _, v in values]
    else:
        scale, unit = _unit(max(abs(v) for _, v in values))
        d = _decimals(step, scale)
        labels = [exact_time(v, scale, unit, d) for _, v in values]
    if max(map(len, labels)) <= room:
        return "", list(zip([c for c, _ in values], labels, strict=True))
    base = values[0][1]
    span = values[-1][1] - base
    scale, unit = _unit(span or step)
    d = _decimals(step, scale)
    if wall:
        head = f"{clock_date(base)} {clock_time(base, _decimals(step, 10**9))}"
    else:
        bscale, bunit = _unit(base)
        head = exact_time(base, bscale, bunit, _decimals(step, bscale))
        head = head if absolute else f"+{head}" if not head.startswith("-") else head
    return head, [(c, "+" + exact_time(v - base, scale, unit, d)) for c, v in values]


_KINDS = (
    ("N", "O", "D", "object snapshots (N/O/D)"),
    ("P", None, None, "stack samples (P)"),
    ("M", None, None, "metadata events (M)"),
    ("c", None, None, "clock sync events (c)"),
)


def not_drawn(store: TraceStore) -> list[tuple[str, int]]:
    """What the file holds that the timeline does not draw, and how many: events of the kinds it has no line for
    (stack samples, object snapshots, clock syncs; metadata is not among them: it names the tracks), then the
    parts after the events (stackFrames, samples, systrace text)."""
    pc = store.phase_counts
    out = []
    for phases, label in (("P", "P sample events"), ("NOD", "N/O/D object events"), ("c", "c clock sync events")):
        n = sum(pc.get(k, 0) for k in phases)
        if n:
            out.append((label, n))
    out.extend(sorted(store.not_shown.items()))
    return out


def what_it_holds(store: TraceStore) -> str:
    """For a store with nothing to draw: what its file held instead (objects, samples, metadata only ...)."""
    if len(store) or store.counters:
        return ""
    pc = store.phase_counts
    parts = []
    for a, b, c, label in _KINDS:
        n = sum(pc.get(k, 0) for k in (a, b, c) if k)
        if n:
            parts.append(f"{n} {label}")
    shown = {k for row in _KINDS for k in row[:3] if k}
    other = sum(v for k, v in pc.items() if k not in shown) - store.lost  # the lost ones are said on their own
    if other:
        parts.append(f"{other} other events that are not drawn")
    if store.not_shown:
        parts.extend(f"{v} {k} entries" for k, v in sorted(store.not_shown.items()))
    if not parts:
        return "nothing to draw: no event could be read" if store.lost else "no trace events in this file"
    return "nothing to draw: this file holds " + ", ".join(parts)

"""Area selection summary: slices in a time range (and a set of tracks) grouped by name.

What Perfetto's and Neuron Explorer's box selection show: per slice name the count, total, average and longest
duration of the slices that overlap the range (whole durations, as Perfetto's slice aggregation sums them),
sorted by total, and which instance is the longest so the timeline can jump to it.

Why it is cheap on a million events: each row of the store is a start-sorted run of non-overlapping slices, so
two bisects give a row's slices in the range; the rows' ranges are then gathered and grouped by name with numpy
(a stable sort of the name ids, sums and maxima per run of one name: exact int64 sums, no Python step per event).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from neuron_top.trace.store import TraceStore

__all__ = ["AggRow", "aggregate", "display_names"]


@dataclass(frozen=True)
class AggRow:
    """One slice name in the area."""

    name: str
    count: int
    total: int
    """Nanoseconds, whole durations of the slices that overlap the area."""
    longest: int
    """The store event index of the longest instance (Enter jumps there)."""
    max: int

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else 0.0


def display_names(store: TraceStore) -> array:
    """The name id of every event in display order (built once per store, a few ms per million events)."""
    got = getattr(store, "_display_names", None)
    if got is None or len(got) != len(store):
        got = array("i", [0]) * len(store)
        if len(store):
            np.take(np.frombuffer(store.name, np.int32), np.frombuffer(store.orig, np.int32),
                    out=np.frombuffer(got, np.int32))
        store._display_names = got  # type: ignore[attr-defined]
    return got


def aggregate(
    store: TraceStore, t0: int, t1: int, tracks: Iterable[int] | None = None, names_ok: bytes = b""
) -> list[AggRow]:
    """Slices overlapping [t0, t1) on ``tracks`` (all when None), by name, most total time first.

    ``names_ok`` (one byte per interned string, the event-type filter's table) drops names the filter hides.
    The longest instance of a name is the first one met (tracks in the order given, rows, then time) among
    those of its greatest duration.
    """
    if t1 < t0:
        t0, t1 = t1, t0
    start, end = store.start, store.end
    los: list[int] = []
    his: list[int] = []
    ids = range(len(store.tracks)) if tracks is None else tracks
    for tid in ids:
        for lo, hi in store.tracks[tid].rows:
            a = bisect_left(end, t0, lo, hi)
            b = bisect_left(start, t1, a, hi) if t1 > t0 else a
            while b < hi and start[b] == t1 == t0:  # a zero-width area still catches what starts there
                b += 1
            if a < b:
                los.append(a)
                his.append(b)
    if not los:
        return []
    lo_a, hi_a = np.array(los, np.int64), np.array(his, np.int64)
    lens = hi_a - lo_a
    if len(los) == 1:
        sel = np.arange(los[0], his[0], dtype=np.int64)
    else:  # the rows' ranges one after another: each position is its range's start plus its place in it
        offs = np.cumsum(lens) - lens
        sel = np.arange(int(lens.sum()), dtype=np.int64)
        sel += np.repeat(lo_a - offs, lens)
    names = np.frombuffer(display_names(store), np.int32)[sel]
    durs = np.frombuffer(store.dur, np.int64)[sel]
    small = len(store.strings) < (1 << 16)
    order = np.argsort(names.astype(np.uint16) if small else names, kind="stable")  # 16 bits: a radix sort
    names, durs, sel = names[order], durs[order], sel[order]
    first = np.flatnonzero(np.concatenate(([True], names[1:] != names[:-1])))
    counts = np.diff(np.append(first, len(names)))
    totals = np.add.reduceat(durs, first)
    maxes = np.maximum.reduceat(durs, first)
    group = np.repeat(np.arange(len(first)), counts)
    at_max = np.flatnonzero(durs == maxes[group])
    _, firsts_at_max = np.unique(group[at_max], return_index=True)
    longest = sel[at_max[firsts_at_max]]
    strings = store.strings
    rows = [
        AggRow(strings[k], n, t, ev, mx)
        for k, n, t, ev, mx in zip(
            names[first].tolist(), counts.tolist(), totals.tolist(), longest.tolist(), maxes.tolist(), strict=True
        )
        if not names_ok or names_ok[k]
    ]
    rows.sort(key=lambda r: (-r.total, -r.count, r.name))
    return rows

"""Area selection summary: slices in a time range (and a set of tracks) grouped by name.

What Perfetto's and Neuron Explorer's box selection show: per slice name the count, total, average and longest
duration of the slices that overlap the range (whole durations, as Perfetto's slice aggregation sums them),
sorted by total, and which instance is the longest so the timeline can jump to it.

Why it is cheap on a million events: each row of the store is a start-sorted run of non-overlapping slices, so
two bisects give a row's slices in the range; their name ids (display order, built once) and durations are array
slices, and a row with few distinct names is grouped with C-level passes (``compress`` over a name mask) instead
of a Python step per event. Rows with many names (GPU kernel streams) fall back to one Python pass.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq

from neuron_top.trace.store import TraceStore

__all__ = ["AggRow", "aggregate", "display_names"]

_FEW_NAMES = 8
"""Up to this many names in a row's part of the range, each name gets its own C-level pass over it."""


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
    """The name id of every event in display order (built once per store, ~40 ms per million events)."""
    got = getattr(store, "_display_names", None)
    if got is None or len(got) != len(store):
        got = array("i", map(store.name.__getitem__, store.orig))
        store._display_names = got  # type: ignore[attr-defined]
    return got


def aggregate(
    store: TraceStore, t0: int, t1: int, tracks: Iterable[int] | None = None, names_ok: bytes = b""
) -> list[AggRow]:
    """Slices overlapping [t0, t1) on ``tracks`` (all when None), by name, most total time first.

    ``names_ok`` (one byte per interned string, the event-type filter's table) drops names the filter hides.
    """
    if t1 < t0:
        t0, t1 = t1, t0
    dname = display_names(store)
    start, end, dur = store.start, store.end, store.dur
    count: Counter[int] = Counter()
    total: dict[int, int] = {}
    best: dict[int, tuple[int, int]] = {}  # name -> (longest duration, event)
    ids = range(len(store.tracks)) if tracks is None else tracks
    for tid in ids:
        for lo, hi in store.tracks[tid].rows:
            a = bisect_left(end, t0, lo, hi)
            b = bisect_left(start, t1, a, hi) if t1 > t0 else a
            while b < hi and start[b] == t1 == t0:  # a zero-width area still catches what starts there
                b += 1
            if a >= b:
                continue
            names = dname[a:b]
            durs = dur[a:b]
            k = names[0]
            mx = max(durs)
            imx = durs.index(mx)
            n_k = names.count(k)
            if n_k == b - a:  # one name (a depth row of neuron-det): no grouping at all
                count[k] += n_k
                total[k] = total.get(k, 0) + sum(durs)
                _better(best, k, mx, a + imx)
                continue
            here = set(names)
            if len(here) <= _FEW_NAMES:
                # every name but one gets a mask pass; the last one is what they leave (count, total), and its
                # longest is the row's longest unless that belongs to another name
                rest_n, rest_t = b - a, sum(durs)
                top = names[imx]
                ks = sorted(here, key=lambda v: v == top)  # the row's longest name last: its max is known
                for k in ks[:-1]:
                    mask = list(map(eq, names, repeat(k)))
                    n = mask.count(True)
                    t = sum(compress(durs, mask))
                    kmx = max(compress(durs, mask))
                    i = durs.index(kmx)
                    while names[i] != k:
                        i = durs.index(kmx, i + 1)
                    count[k] += n
                    total[k] = total.get(k, 0) + t
                    _better(best, k, kmx, a + i)
                    rest_n -= n
                    rest_t -= t
                k = ks[-1]
                count[k] += rest_n
                total[k] = total.get(k, 0) + rest_t
                _better(best, k, mx, a + imx)
            else:
                count.update(names)
                for i, (k, d) in enumerate(zip(names, durs, strict=True)):
                    total[k] = total.get(k, 0) + d
                    cur = best.get(k)
                    if cur is None or d > cur[0]:
                        best[k] = (d, a + i)
    strings = store.strings
    rows = [
        AggRow(strings[k], n, total[k], best[k][1], best[k][0])
        for k, n in count.items()
        if not names_ok or names_ok[k]
    ]
    rows.sort(key=lambda r: (-r.total, -r.count, r.name))
    return rows


def _better(best: dict[int, tuple[int, int]], k: int, d: int, ev: int) -> None:
    cur = best.get(k)
    if cur is None or d > cur[0]:
        best[k] = (d, ev)

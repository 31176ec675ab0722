"""Slice rows (nesting depth per track) for a whole trace at once, with numpy passes instead of a Python step
per event.

Why: laying a million events out one by one (the stack walk in ``StoreBuilder._nest``) cost ~0.3 µs of Python per
event, a quarter of a load. The stack walk has a closed form when nothing overlaps partially: taken in order of
(track, start, file position), an event's depth is the number of earlier events of its track that are still open
at its start, and that is a count two sorted searches give for every event at once. The walk's only other
outcome, an event that ends after its would-be parent (a partial overlap, sent to an overflow lane), is found
from the same numbers: the walk's parent of an event at depth d is the last earlier event at depth d - 1. Tracks
where any event fails that check are handed back to the stack walk, so the result is the walk's, event for event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_FIT = 1 << 62
"""Composite (track, time) keys must stay below this to fit int64 with room."""


@dataclass
class Nested:
    """What ``nest`` found for the tracks it could lay out."""

    perm: np.ndarray
    """Raw event positions in display order: by track, depth, start (file order on ties)."""
    rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """Per track, its rows as [lo, hi) ranges of ``perm``, depth 0 first."""
    walk: list[int] = field(default_factory=list)
    """Tracks with a partial overlap (or an order the walk must settle): lay these out with the stack walk."""


def _order(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Positions sorted by (track, start), file order on ties (a stable sort; none when already in order)."""
    if len(s) < 2:
        return np.arange(len(s))
    dt = np.diff(t)
    if not (dt < 0).any() and not ((dt == 0) & (np.diff(s) < 0)).any():
        return np.arange(len(s))
    base = int(s.min())
    width = int(s.max()) - base + 1
    if (int(t.max()) + 1) * width < _FIT:  # one int64 key; a stable sort of nearly sorted keys is a few passes
        return np.argsort(t.astype(np.int64) * width + (s - base), kind="stable")
    return np.lexsort((s, t))  # numpy's lexsort is stable too


def _open_before(ts: np.ndarray, te: np.ndarray, tt: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per event (sorted by track, start), how many events of its track ended at or before its start."""
    base = int(min(ts.min(), te.min()))
    width = int(max(ts.max(), te.max())) - base + 1
    ntracks = int(tt.max()) + 1
    if ntracks * width < _FIT:
        tk = tt.astype(np.int64) * width
        ends = np.sort(tk + (te - base))
        return np.searchsorted(ends, tk + (ts - base), side="right") - first
    out = np.empty(len(ts), np.int64)  # times too far apart for one key: one search per track
    bounds = np.flatnonzero(np.diff(tt)) + 1
    for a, b in zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [len(tt)])), strict=True):
        out[a:b] = np.searchsorted(np.sort(te[a:b]), ts[a:b], side="right")
    return out


def nest(start: np.ndarray, end: np.ndarray, track: np.ndarray, skip: np.ndarray | None = None) -> Nested:
    """Rows for every track of the events (raw columns ``start``, ``end``, ``track``), but those marked in
    ``skip`` (a bool per track id: async tracks, laid out their own way), which are left out.

    Returns the display order and rows of the tracks that nest properly, and the tracks to walk instead.
    """
    idx = np.arange(len(start)) if skip is None else np.flatnonzero(~skip[track])
    m = len(idx)
    if m == 0:
        return Nested(np.empty(0, np.int64))
    s, e, t = start[idx], end[idx], track[idx]
    order = _order(s, t)
    ts, te, tt = s[order], e[order], t[order]
    del s, e, t
    pos = np.arange(m)
    bounds = np.flatnonzero(tt[1:] != tt[:-1]) + 1
    firsts = np.concatenate(([0], bounds))
    first = np.repeat(firsts, np.diff(np.concatenate((firsts, [m]))))
    closed = _open_before(ts, te, tt, first)
    zero = te == ts
    if zero.any():
        # ``closed`` also counted zero-length events at the same start that come at or after the event itself
        # (they are not "earlier"): take those back, per run of equal (track, start).
        runs = np.flatnonzero((ts[1:] != ts[:-1]) | (tt[1:] != tt[:-1])) + 1
        run_end = np.repeat(np.concatenate((runs, [m])), np.diff(np.concatenate(([0], runs, [m]))))
        cz = np.cumsum(zero)
        closed -= cz[run_end - 1] - cz + zero
    depth = (pos - first) - closed
    del closed, first
    maxd = int(depth.max())
    bad = np.zeros(int(tt.max()) + 1, bool)
    if maxd:
        dtype = np.int16 if maxd < (1 << 15) else np.int64
        by_depth = np.argsort(depth.astype(dtype), kind="stable")
        cuts = np.searchsorted(depth[by_depth], np.arange(maxd + 2))
        for d in range(1, maxd + 1):
            parents = by_depth[cuts[d - 1] : cuts[d]]
            kids = by_depth[cuts[d] : cuts[d + 1]]
            k = np.searchsorted(parents, kids) - 1
            p = parents[np.maximum(k, 0)]
            fail = (k < 0) | (tt[p] != tt[kids]) | (te[p] <= ts[kids]) | (te[kids] > te[p])
            if fail.any():
                bad[tt[kids[fail]]] = True
        del by_depth
    walk = np.flatnonzero(bad).tolist()
    if walk:
        keep = ~bad[tt]
        order, tt, depth = order[keep], tt[keep], depth[keep]
    if not len(order):
        return Nested(np.empty(0, np.int64), walk=walk)
    key = tt.astype(np.int64) * (maxd + 1) + depth
    kt = np.int16 if int(key[-1]) < (1 << 15) and int(key.max()) < (1 << 15) else np.int64
    rank = np.argsort(key.astype(kt), kind="stable")
    perm = idx[order[rank]]
    key = key[rank]
    cuts = np.concatenate(([0], np.flatnonzero(key[1:] != key[:-1]) + 1, [len(key)]))
    rows: dict[int, list[tuple[int, int]]] = {}
    for lo, hi, k in zip(cuts[:-1].tolist(), cuts[1:].tolist(), key[cuts[:-1]].tolist(), strict=True):
        rows.setdefault(k // (maxd + 1), []).append((lo, hi))
    return Nested(perm, rows, walk)

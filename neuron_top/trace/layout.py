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

__all__ = ["CHUNK", "Nested", "nest"]

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


def _closed_at_start(ts: np.ndarray, te: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """Per event (sorted by track, start), how many events of its own or an earlier track (in that order) end at
    or before its start: with the event's position p, p minus this is how many events of its track that came
    before it are still open."""
    base = int(min(ts.min(), te.min()))
    width = int(max(ts.max(), te.max())) - base + 1
    ntracks = int(tt.max()) + 1
    if ntracks * width < _FIT:
        tk = tt.astype(np.int64)
        tk *= width
        ends = te - base
        ends += tk
        ends.sort()
        tk += ts
        tk -= base
        return np.searchsorted(ends, tk, side="right")
    out = np.empty(len(ts), np.int64)  # times too far apart for one key: one search per track
    bounds = np.flatnonzero(np.diff(tt)) + 1
    for a, b in zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [len(tt)])), strict=True):
        out[a:b] = np.searchsorted(np.sort(te[a:b]), ts[a:b], side="right") + a
    return out


def _depths(ts: np.ndarray, te: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """The stack walk's depth of each event (sorted by track, start, file order), if nothing overlaps partially."""
    m = len(ts)
    depth = np.arange(m, dtype=np.int64)
    depth -= _closed_at_start(ts, te, tt)
    zero = te == ts
    if zero.any():
        # the count also took in zero-length events at the same start that come at or after the event itself
        # (they are not earlier): give those back, per run of equal (track, start)
        runs = np.flatnonzero((ts[1:] != ts[:-1]) | (tt[1:] != tt[:-1])) + 1
        run_end = np.repeat(np.concatenate((runs, [m])), np.diff(np.concatenate(([0], runs, [m]))))
        cz = np.cumsum(zero)
        depth += cz[run_end - 1] - cz + zero
    return depth


def _bad_tracks(ts: np.ndarray, te: np.ndarray, tt: np.ndarray, depth: np.ndarray, bad: np.ndarray) -> None:
    """Mark in ``bad`` the tracks where the walk would find a partial overlap: an event whose parent (the last
    earlier event one level up) is not open at its start or ends before it does."""
    maxd = int(depth.max())
    if not maxd:
        return
    by_depth = np.argsort(depth.astype(np.int16 if maxd < (1 << 15) else np.int64), kind="stable")
    cuts = np.searchsorted(depth[by_depth], np.arange(maxd + 2))
    for d in range(1, maxd + 1):
        parents = by_depth[cuts[d - 1] : cuts[d]]
        kids = by_depth[cuts[d] : cuts[d + 1]]
        k = np.searchsorted(parents, kids) - 1
        p = parents[np.maximum(k, 0)]
        fail = (k < 0) | (tt[p] != tt[kids]) | (te[p] <= ts[kids]) | (te[kids] > te[p])
        if fail.any():
            bad[tt[kids[fail]]] = True


CHUNK = 1 << 17
"""Events laid out per pass (whole tracks): bounds the temporary arrays to a few MB whatever the trace's size."""


def nest(
    start: np.ndarray, end: np.ndarray, track: np.ndarray, skip: np.ndarray | None = None, chunk: int = CHUNK
) -> Nested:
    """Rows for every track of the events (raw columns ``start``, ``end``, ``track``), but those marked in
    ``skip`` (a bool per track id: async tracks, laid out their own way), which are left out.

    Returns the display order and rows of the tracks that nest properly, and the tracks to walk instead.
    Tracks are taken a chunk of events at a time (a track is never split), so memory beyond the result stays
    small.
    """
    if skip is None:
        order = _order(start, track)
    else:
        idx = np.flatnonzero(~skip[track])
        order = idx[_order(start[idx], track[idx])]
        del idx
    m = len(order)
    if m == 0:
        return Nested(np.empty(0, np.int64))
    order = order.astype(np.int32 if len(start) < (1 << 31) else np.int64)
    tt_all = track[order]
    bad = np.zeros(int(track.max()) + 1, bool)
    perm = np.empty(m, order.dtype)
    rows: dict[int, list[tuple[int, int]]] = {}
    firsts = np.concatenate(([0], np.flatnonzero(tt_all[1:] != tt_all[:-1]) + 1, [m]))
    out = 0
    a = 0
    while a < m:
        b = int(firsts[min(int(np.searchsorted(firsts, a + chunk, side="right")) - 1, len(firsts) - 1)])
        if b <= a:  # one track longer than a chunk: it alone
            b = int(firsts[np.searchsorted(firsts, a, side="right")])
        sub = order[a:b]
        ts, te, tt = start[sub], end[sub], tt_all[a:b]
        depth = _depths(ts, te, tt)
        _bad_tracks(ts, te, tt, depth, bad)
        del ts, te
        keep = ~bad[tt]
        if not keep.all():
            sub, tt, depth = sub[keep], tt[keep], depth[keep]
        if len(sub):
            maxd = int(depth.max())
            key = tt.astype(np.int64)
            key -= int(tt[0])
            key *= maxd + 1
            key += depth
            del depth
            rank = np.argsort(key.astype(np.int16) if int(key[-1]) < (1 << 15) and int(key.max()) < (1 << 15)
                              else key, kind="stable")
            perm[out : out + len(sub)] = sub[rank]
            key = key[rank]
            cuts = np.concatenate(([0], np.flatnonzero(key[1:] != key[:-1]) + 1, [len(key)]))
            t0 = int(tt[0])
            for lo, hi, k in zip(cuts[:-1].tolist(), cuts[1:].tolist(), key[cuts[:-1]].tolist(), strict=True):
                rows.setdefault(t0 + k // (maxd + 1), []).append((out + lo, out + hi))
            out += len(sub)
        a = b
    return Nested(perm[:out], rows, np.flatnonzero(bad).tolist())

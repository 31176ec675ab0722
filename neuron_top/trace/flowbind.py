"""Flow points bound to slices, and flows made of them, with numpy passes over all points at once.

The rules are the store's (``StoreBuilder._bind_flows`` documents them, after Perfetto's JSON importer); this
module only computes them column-wise. Why: a Kineto trace has a flow point for every CUDA launch and kernel
(a third of its events), and binding them one by one in Python (a dict lookup or bisect per point, a tuple per
point to sort, a step of the flow state machine per point) cost as much as decoding the whole file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

__all__ = ["FlowMap", "enclosing_slices", "run_flows"]

S, T, F = ord("s"), ord("t"), ord("f")


def enclosing_slices(
    track: np.ndarray,
    ts: np.ndarray,
    enclosing: np.ndarray,
    rows: Sequence[Sequence[tuple[int, int]]],
    start: np.ndarray,
    end: np.ndarray,
    instant: np.ndarray,
) -> np.ndarray:
    """The display index of the slice each flow event (v1) binds to, or -1.

    ``rows[t]`` are track t's rows (display ranges, depth rows then overflow lanes), ``start``/``end``/``instant``
    display-order columns. An enclosing point binds to the slice of its track that starts exactly at its time
    (the last row with one wins, as a start -> slice map filled row by row would), unless that is an instant;
    otherwise to the innermost non-instant slice enclosing it (the last row that has one). A non-enclosing
    point (``f`` without ``"bp": "e"``) binds to the first non-instant slice beginning at or after it (the
    earliest start, the first row on a tie).
    """
    out = np.full(len(ts), -1, np.int64)
    if not len(ts):
        return out
    by_track = np.argsort(track, kind="stable")
    tsorted = track[by_track]
    cuts = np.flatnonzero(tsorted[1:] != tsorted[:-1]) + 1
    for part in np.split(by_track, cuts):
        t = int(track[part[0]])
        if t >= len(rows) or not rows[t]:
            continue
        q = ts[part]
        enc = enclosing[part]
        exact = np.full(len(q), -1, np.int64)
        inner = np.full(len(q), -1, np.int64)
        nxt = np.full(len(q), -1, np.int64)
        for lo, hi in rows[t]:
            s_row = start[lo:hi]
            k = np.searchsorted(s_row, q, side="right") - 1 + lo
            kc = np.maximum(k, lo)
            has = k >= lo
            exact = np.where(has & (start[kc] == q), kc, exact)
            inner = np.where(has & (end[kc] >= q) & ~instant[kc], kc, inner)
            if not enc.all():
                j = np.searchsorted(s_row, q, side="left") + lo
                while True:  # skip instants
                    jc = np.minimum(j, hi - 1)
                    skip = (j < hi) & instant[jc]
                    if not skip.any():
                        break
                    j = j + skip
                ok = j < hi
                jc = np.minimum(j, hi - 1)
                better = ok & ((nxt < 0) | (start[jc] < start[np.maximum(nxt, 0)]))
                nxt = np.where(better, jc, nxt)
        use_exact = (exact >= 0) & ~instant[np.maximum(exact, 0)]
        got = np.where(use_exact, exact, inner)
        out[part] = np.where(enc, got, nxt)
    return out


def run_flows(
    kid: np.ndarray, ts: np.ndarray, seq: np.ndarray, action: np.ndarray, ev: np.ndarray
) -> tuple[np.ndarray, np.ndarray, Counter[str]]:
    """Links (from, to display indices) made by flow points, in the order the state machine makes them.

    Per flow id, in time order (file order on ties): a start opens the flow, a step links from the flow's
    current slice and moves it, an end links from it and leaves it open to more ends; a start after an end
    begins a new flow, a start while open is a problem. A link whose two ends are in one slice is a flow too,
    as Perfetto counts it (its flow table keeps slice_out == slice_in): kept, never dropped unseen. Ids whose points are one start and ends (or only
    ends) are done with array passes; the rest (steps, several starts) walk their points in Python.
    """
    problems: Counter[str] = Counter()
    order = np.lexsort((seq, ts, kid))
    e = ev[order]
    inside = e >= 0
    if not inside.all():
        problems["flow point outside any slice"] += int((~inside).sum())
    k, act, e = kid[order][inside], action[order][inside], e[inside]
    m = len(k)
    if not m:
        empty = np.empty(0, np.int64)
        return empty, empty, problems
    first = np.concatenate(([True], k[1:] != k[:-1]))
    gid = np.cumsum(first) - 1
    is_s, is_t = act == S, act == T
    ns = np.bincount(gid, weights=is_s).astype(np.int64)
    nt = np.bincount(gid, weights=is_t).astype(np.int64)
    simple = (nt == 0) & (ns <= 1)
    idx = np.arange(m)
    # simple ids: the one start (if any) and its ends
    s_at = np.full(len(ns), -1, np.int64)
    s_at[gid[is_s & simple[gid]]] = idx[is_s & simple[gid]]
    ends = (act == F) & simple[gid]
    src = s_at[gid]
    linked = ends & (src >= 0) & (src < idx)
    problems_f = int((ends & ~linked).sum())
    if problems_f:
        problems["flow end without a start"] += problems_f
    la, lb, lkey = [e[src[linked]]], [e[linked]], [idx[linked]]
    # the rest: the state machine, point by point
    rest = np.flatnonzero(~simple[gid])
    if len(rest):
        a2, b2, k2 = _walk(gid[rest].tolist(), act[rest].tolist(), e[rest].tolist(), rest.tolist(), problems)
        la.append(np.array(a2, np.int64))
        lb.append(np.array(b2, np.int64))
        lkey.append(np.array(k2, np.int64))
    a, b, key = np.concatenate(la), np.concatenate(lb), np.concatenate(lkey)
    o = np.argsort(key, kind="stable")
    return a[o], b[o], problems


def _walk(
    gids: list[int], acts: list[int], evs: list[int], where: list[int], problems: Counter[str]
) -> tuple[list[int], list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    keys: list[int] = []
    last = -1
    cur = -1
    ended = False
    for g, action, ev, i in zip(gids, acts, evs, where, strict=True):
        if g != last:
            last, cur, ended = g, -1, False
        if action == S:
            if cur < 0 or ended:
                cur, ended = ev, False
            else:
                problems["flow id started again while open (the first start kept)"] += 1
        elif cur < 0:
            problems["flow end without a start" if action == F else "flow step without a start"] += 1
        else:
            a.append(cur)
            b.append(ev)
            keys.append(i)
            if action == T:
                cur, ended = ev, False
            else:
                ended = True
    return a, b, keys


class FlowMap(Mapping[int, list[int]]):
    """The flows of a store: links (source, target) as display indices, with a flow's source the earlier end.

    As a mapping, event -> the events its flow arrows lead to in either direction (in the order the links were
    made; a flow with both ends in one slice lists that slice once). ``outgoing`` and ``incoming`` keep the
    direction (downstream and upstream, as Neuron Explorer's Dependency Chain Viewer shows them). Kept as sorted
    arrays: a Kineto trace has ~100,000 flow ends, and a dict of lists cost a Python step per end.
    """

    def __init__(self, a: np.ndarray | None = None, b: np.ndarray | None = None) -> None:
        a = np.empty(0, np.int64) if a is None else np.asarray(a, np.int64)
        b = np.empty(0, np.int64) if b is None else np.asarray(b, np.int64)
        self.a, self.b = a, b
        n = len(a)
        other = a != b  # a flow within one slice is listed once, not as a link and its reverse
        self._both = _Csr(np.concatenate((a, b[other])), np.concatenate((b, a[other])),
                          np.concatenate((np.arange(n), np.flatnonzero(other))))
        self._out = _Csr(a, b, np.arange(n))
        self._in = _Csr(b, a, np.arange(n))

    @property
    def within_one_slice(self) -> int:
        """Flows whose two ends are in one slice (counted as flows, as Perfetto counts them)."""
        return int((self.a == self.b).sum())

    def outgoing(self, ev: int) -> list[int]:
        """The targets of the flows that start at ``ev`` (downstream), in the order the links were made."""
        return self._out.get(ev)

    def incoming(self, ev: int) -> list[int]:
        """The sources of the flows that end at ``ev`` (upstream)."""
        return self._in.get(ev)

    def __getitem__(self, ev: int) -> list[int]:
        if self._both.find(ev) < 0:
            raise KeyError(ev)
        return self._both.get(ev)

    def __contains__(self, ev: object) -> bool:
        return self._both.find(ev) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._both.keys.tolist())

    def __len__(self) -> int:
        return len(self._both.keys)


class _Csr:
    """key -> values, sorted by key then by ``order`` (the link number): one searchsorted per lookup."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> None:
        o = np.lexsort((order, src))
        src, self.dst = src[o], dst[o]
        self.keys, starts = np.unique(src, return_index=True)
        self.off = np.append(starts, len(src))

    def find(self, ev: object) -> int:
        if not isinstance(ev, (int, np.integer)) or isinstance(ev, bool):
            return -1
        i = int(np.searchsorted(self.keys, ev))
        return i if i < len(self.keys) and self.keys[i] == ev else -1

    def get(self, ev: int) -> list[int]:
        i = self.find(ev)
        if i < 0:
            return []
        out: list[int] = self.dst[self.off[i] : self.off[i + 1]].tolist()
        return out

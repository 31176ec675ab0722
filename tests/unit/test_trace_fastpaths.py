"""The load's fast paths against the exact ways they stand in for: each could disagree with the slow path on some
input, so each is compared with it (or with an independent reference) on random inputs as well as on real files."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_top.trace.layout import nest

# -- layout: numpy nesting vs the stack walk ------------------------------------------------------------------------


def _walk(events: list[tuple[int, int, int]]) -> tuple[dict[int, list[list[int]]], set[int]]:
    """The reference: per track, events by (start, file order), the stack walk; a track where an event ends after
    its would-be parent is a "walk" track (the store lays those out with overflow lanes)."""
    by_track: dict[int, list[int]] = {}
    for i, (t, _s, _e) in enumerate(events):
        by_track.setdefault(t, []).append(i)
    rows: dict[int, list[list[int]]] = {}
    spilled: set[int] = set()
    for t, seg in by_track.items():
        seg.sort(key=lambda i: events[i][1])
        stack = [1 << 63]
        buckets: list[list[int]] = []
        for i in seg:
            s, e = events[i][1], events[i][2]
            while stack[-1] <= s:
                stack.pop()
            if e > stack[-1]:
                spilled.add(t)
                break
            d = len(stack) - 1
            if d == len(buckets):
                buckets.append([])
            buckets[d].append(i)
            stack.append(e)
        if t not in spilled:
            rows[t] = buckets
    return rows, spilled


def _times() -> st.SearchStrategy[int]:
    return st.integers(0, 40)


@st.composite
def _events(draw: Any) -> list[tuple[int, int, int]]:
    """Small integer times so that equal starts, equal ends, zero-length events and partial overlaps are common."""
    n = draw(st.integers(0, 60))
    out = []
    for _ in range(n):
        t = draw(st.integers(0, 3))
        s = draw(_times())
        d = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8, 20, draw(st.integers(0, 40))]))
        out.append((t, s, s + d))
    return out


@st.composite
def _nested_events(draw: Any) -> list[tuple[int, int, int]]:
    """Properly nested trees (what real traces mostly are), shuffled across tracks, sometimes out of order."""
    out: list[tuple[int, int, int]] = []
    for t in range(draw(st.integers(1, 3))):
        def tree(s: int, e: int, depth: int, t: int = t) -> None:
            out.append((t, s, e))
            if depth < 4 and e - s >= 2:
                cur = s
                for _ in range(draw(st.integers(0, 3))):
                    a = draw(st.integers(cur, e))
                    b = draw(st.integers(a, e))
                    tree(a, b, depth + 1)
                    cur = b
        cur = 0
        for _ in range(draw(st.integers(1, 4))):
            s = cur + draw(st.integers(0, 5))
            e = s + draw(st.integers(0, 60))
            tree(s, e, 0)
            cur = e
    if draw(st.booleans()):
        out = draw(st.permutations(out))
    return out


def _check(events: list[tuple[int, int, int]]) -> None:
    track = np.array([t for t, _, _ in events], np.int32)
    start = np.array([s for _, s, _ in events], np.int64)
    end = np.array([e for _, _, e in events], np.int64)
    got = nest(start, end, track)
    rows, spilled = _walk(events)
    assert set(got.walk) == spilled
    assert set(got.rows) == set(rows)
    for t, want in rows.items():
        assert [got.perm[lo:hi].tolist() for lo, hi in got.rows[t]] == want


@settings(max_examples=300, deadline=None)
@given(_events())
def test_nest_agrees_with_the_stack_walk_on_random_intervals(events: list[tuple[int, int, int]]) -> None:
    _check(events)


@settings(max_examples=300, deadline=None)
@given(_nested_events())
def test_nest_agrees_with_the_stack_walk_on_nested_trees(events: list[tuple[int, int, int]]) -> None:
    _check(events)


def test_nest_with_times_too_far_apart_for_one_key() -> None:
    """Epoch nanoseconds on many tracks do not fit one (track, time) int64 key: the per-track way must agree."""
    base = 1_712_195_495_519_689_047
    events = [(t, base + s * 10**15, base + e * 10**15) for t, s, e in
              [(0, 0, 10), (1000, 1, 2), (0, 2, 5), (1000, 0, 9), (0, 3, 4), (2000, 0, 1)]]
    _check(events)


def test_nest_leaves_skipped_tracks_out() -> None:
    track = np.array([0, 1, 0, 1], np.int32)
    start = np.array([0, 0, 1, 1], np.int64)
    end = np.array([5, 5, 2, 2], np.int64)
    got = nest(start, end, track, skip=np.array([False, True]))
    assert set(got.rows) == {0} and sorted(got.perm.tolist()) == [0, 2]

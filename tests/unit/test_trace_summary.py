"""Per-column summaries: right answers (against brute force) at bounded cost (independent of events in view)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as hs

from neuron_top.trace import TimelineModel, load_trace
from neuron_top.trace.columns import (
    RowIndex,
    Window,
    axis_ticks,
    format_duration,
    summarise_counter,
    summarise_row,
)
from neuron_top.trace.store import mip_levels, mip_pick
from tests.trace_helpers import DATA, ROOT, write_events, x


def _row(starts: list[int], durs: list[int]) -> RowIndex:
    s = array("q", starts)
    d = array("q", durs)
    e = array("q", [a + b for a, b in zip(starts, durs, strict=True)])
    return RowIndex(s, e, d, 0, len(s), mip_levels(d))


@hs.composite
def disjoint_rows(draw: hs.DrawFn) -> tuple[list[int], list[int]]:
    gaps = draw(hs.lists(hs.integers(0, 50), min_size=1, max_size=300))
    durs = draw(hs.lists(hs.integers(0, 80), min_size=len(gaps), max_size=len(gaps)))
    starts, t = [], 0
    for g, d in zip(gaps, durs, strict=True):
        t += g
        starts.append(t)
        t += d
    return starts, durs


@settings(max_examples=150, deadline=None)
@given(disjoint_rows(), hs.integers(1, 60), hs.integers(-100, 3000), hs.integers(1, 5000))
def test_summary_matches_brute_force(
    row: tuple[list[int], list[int]], width: int, t0: int, span: int
) -> None:
    starts, durs = row
    ri = _row(starts, durs)
    win = Window(t0, t0 + span, width)
    bounds = win.bounds()
    spans = summarise_row(ri, bounds)
    covered: dict[int, tuple[int, bool]] = {}
    for c0, c1, ev, dense in spans:
        assert 0 <= c0 < c1 <= width
        for c in range(c0, c1):
            assert c not in covered
            covered[c] = (ev, dense)
    for c in range(width):
        lo, hi = bounds[c], bounds[c + 1]
        inside = [i for i, (s, d) in enumerate(zip(starts, durs, strict=True)) if s < hi and s + d >= lo]
        if not inside:
            assert c not in covered
            continue
        ev, dense = covered[c]
        assert ev in inside
        assert dense == (len(inside) > 1)


@settings(max_examples=100, deadline=None)
@given(hs.lists(hs.integers(0, 10**6), min_size=1, max_size=2000), hs.data())
def test_mip_pick_picks_a_large_value_in_range(values: list[int], data: hs.DataObject) -> None:
    arr = array("q", values)
    levels = mip_levels(arr)
    lo = data.draw(hs.integers(0, len(values) - 1))
    hi = data.draw(hs.integers(lo + 1, len(values)))
    k = mip_pick(levels, arr, lo, hi, 0)
    assert lo <= k < hi
    if hi - lo <= 32:
        assert arr[k] == max(values[lo:hi])  # small ranges are exact
    else:
        # larger ranges: the winner of every whole 16-block inside the range was looked at ... or beaten
        inner = [max(values[b : b + 16]) for b in range(((lo + 15) // 16) * 16, hi - 15, 16)]
        assert not inner or arr[k] >= min(inner)


class Counting:
    """A sequence that counts reads: bisect and the summariser see it like the store's arrays."""

    reads = 0

    def __init__(self, data: array) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> int:
        Counting.reads += 1
        return self.data[i]


def _reads_for(n: int, width: int = 100) -> int:
    starts = list(range(0, 10 * n, 10))
    durs = [5] * n
    ri = _row(starts, durs)
    ri.start, ri.end, ri.dur = Counting(ri.start), Counting(ri.end), Counting(ri.dur)  # type: ignore[assignment]
    Counting.reads = 0
    spans = summarise_row(ri, Window(0, 10 * n, width).bounds())
    assert spans and all(sp[3] for sp in spans) == (n > width)
    return Counting.reads


def test_cost_does_not_grow_with_events_in_view() -> None:
    small, large = _reads_for(10_000), _reads_for(1_000_000)
    # bisect is logarithmic: 100x the events in view may add a few reads per column, never 100x.
    assert large < small * 1.6
    assert large < 100 * 80


def test_counter_summary_max_and_step() -> None:
    from neuron_top.trace.store import CounterTrack

    c = CounterTrack(0, ("c",), "c", ts=array("q", [0, 10, 11, 50]), val=array("d", [1, 5, 2, 7]))
    c.mips = mip_levels(c.val)
    vals = summarise_counter(c, Window(0, 60, 6).bounds())
    assert vals == [1.0, 5.0, 2.0, 2.0, 2.0, 7.0]
    assert summarise_counter(c, Window(-20, -10, 2).bounds()) == [None, None]


def test_axis_ticks_and_durations() -> None:
    assert format_duration(1_500_000_000) == "1.5 s"
    assert format_duration(250_000_000) == "250 ms"
    assert format_duration(800) == "800 ns"
    assert format_duration(12_345) == "12.3 µs"
    base, ticks = axis_ticks(Window(0, 1_000_000, 100), 0)
    assert base == "" and ticks[0] == (0, "0 µs")
    assert all(b[0] - a[0] >= 12 for a, b in itertools.pairwise(ticks))
    assert ticks[1][1] == "200 µs"


def test_model_groupings_and_lines() -> None:
    st = load_trace(DATA / "trace_small.json")
    m = TimelineModel(st)
    assert [ln.label for ln in m.lines if ln.kind == "group"] == ["Device (4 tracks, 57 events)"]
    seen = {m.grouping}
    for _ in range(4):
        seen.add(m.cycle_grouping())
        assert m.lines
    assert seen == {"cpu-device", "core", "thread", "process", "instance"}
    m.set_grouping("core")
    assert [ln.label.split(" (")[0] for ln in m.lines if ln.kind == "group"] == [
        "NC 0",
        "NC 1",
        "NC 2",
        "NC 3",
    ]
    assert m.cycle_grouping() == "thread"


def test_model_filters_search_and_navigation(tmp_path: Path) -> None:
    from neuron_top.trace import Filters

    st = load_trace(DATA / "trace_small.json")
    m = TimelineModel(st)
    hits = m.search("NUMERICAL")
    assert [st.name_of(e) for e in hits] == ["numerical_error"]
    errs = m.errors()
    assert len(errs) == 2
    first = m.step(errs, None, st.t_min, forward=True)
    second = m.step(errs, first, 0, forward=True)
    assert {first, second} == set(errs)
    assert m.step(errs, second, 0, forward=True) == first  # wraps
    assert m.step(errs, first, 0, forward=False) == second
    m.set_filters(Filters.parse(cores="0-1"))
    assert {st.tracks[ln.track].core for ln in m.lines if ln.kind == "row"} == {0, 1}
    m.set_filters(Filters.parse(types="nc_exec"))
    for ln in m.lines:
        if ln.kind == "row":
            ri = m.row_index(ln.track, ln.row)
            assert all(st.name_of(ri.event(k)) == "nc_exec" for k in range(ri.lo, ri.hi))
    assert [st.name_of(e) for e in m.errors()] == ["nc_exec"]
    line = m.line_of_event(errs[0])
    assert line is not None and m.lines[line].kind == "row"


def test_core_never_imports_textual_or_rich() -> None:
    code = (
        "import sys\nimport neuron_top.trace, neuron_top.trace.check, neuron_top.trace.model, neuron_top.trace.synth\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_rows_with_many_events_summarise_dense(tmp_path: Path) -> None:
    events = [x("e", i, 0.5) for i in range(500)]
    st = load_trace(write_events(tmp_path, events))
    m = TimelineModel(st)
    ri = m.row_index(0, 0)
    spans = summarise_row(ri, Window(st.t_min, st.t_max, 10).bounds())
    assert all(sp[3] for sp in spans)
    assert [c for sp in spans for c in range(sp[0], sp[1])] == list(range(10))

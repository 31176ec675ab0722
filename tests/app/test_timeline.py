"""The timeline screen driven by Pilot: keys, mouse, selection, search, filters, hangs, flows and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input, OptionList, Static

from neuron_top.trace import load_trace
from neuron_top.trace.filters import Filters
from neuron_top.tui.screens.timeline import TimelineScreen, filter_text, parse_filter_text
from neuron_top.tui.widgets.tracks import Timeline
from tests.app.timeline_app import FakeClock, TimelineApp, sync
from tests.trace_helpers import DATA, real_trace, write_events

SMALL = DATA / "trace_small.json"


def _screen(app: TimelineApp) -> TimelineScreen:
    scr = app.screen
    assert isinstance(scr, TimelineScreen)
    return scr


def _text(app: TimelineApp, wid: str) -> str:
    return str(_screen(app).query_one(wid, Static).render())


@sync
async def test_the_summary_line_keeps_whole_parts_at_80_columns() -> None:
    """At 80 columns the line wrapped by words: its second row was hidden and the first ended in a stray "·"."""
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        info = _screen(app).query_one("#trace-info", Static)
        shown = "".join(seg.text for seg in info.render_line(0)).strip()
        whole = " · ".join(info._parts)
        assert shown.endswith(" · …") and shown[:-4] in whole and len(shown) <= 78, (shown, whole)
        await pilot.resize_terminal(200, 24)  # wide enough: the whole line, no mark
        await pilot.pause()
        assert "".join(seg.text for seg in info.render_line(0)).strip() == whole


@sync
async def test_opens_on_the_whole_trace_with_grouping_in_title() -> None:
    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        assert (tl.t0, tl.t1) == (store.t_min, store.t_max)
        assert _screen(app).sub_title == "grouping: CPU vs device"
        assert "grouping: CPU vs device (o)" in _text(app, "#trace-status")
        assert "neuron-det" in _text(app, "#trace-info")


@sync
async def test_zoom_pan_fit_start_end() -> None:
    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        full = tl.t1 - tl.t0
        await pilot.press("plus")
        assert tl.t1 - tl.t0 == full // 2
        await pilot.press("plus", "plus")
        span = tl.t1 - tl.t0
        t0 = tl.t0
        await pilot.press("right")
        assert tl.t0 == t0 + span // 4
        await pilot.press("h")
        assert tl.t0 == t0
        await pilot.press("end")
        assert tl.t1 == store.t_max
        await pilot.press("home")
        assert tl.t0 == store.t_min
        await pilot.press("minus")
        assert tl.t1 - tl.t0 == 2 * span
        await pilot.press("0")
        assert (tl.t0, tl.t1) == (store.t_min, store.t_max)


@sync
async def test_wheel_zooms_at_the_pointer() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        span = tl.t1 - tl.t0
        x = tl.label_w + 1 + tl.area_w // 4
        anchor = tl.window.time_of(x - tl.label_w - 1)
        tl.on_mouse_scroll_up(events.MouseScrollUp(tl, x, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert tl.t1 - tl.t0 < span
        assert abs(tl.window.time_of(x - tl.label_w - 1) - anchor) <= (tl.t1 - tl.t0) // tl.area_w + 1
        tl.on_mouse_scroll_down(events.MouseScrollDown(tl, x, 5, 0, 1, 0, False, False, False))
        await pilot.pause()
        tl.on_mouse_scroll_down(events.MouseScrollDown(tl, x, 5, 0, 1, 0, True, False, False))  # shift: lines
        assert tl.cursor == 3
        assert tl.t1 - tl.t0 >= span * 0.99


@sync
async def test_grouping_cycles_through_the_five_modes() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(5):
            await pilot.press("o")
            seen.append(_screen(app).sub_title)
        assert seen == [
            "grouping: NeuronCore",
            "grouping: thread",
            "grouping: process",
            "grouping: instance",
            "grouping: CPU vs device",
        ]
        assert "grouping: CPU vs device (o)" in _text(app, "#trace-status")


@sync
async def test_errors_select_and_show_details() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        tl = _screen(app).timeline
        st = tl.model.store
        assert tl.selected is not None and tl.selected in st.errors
        first = tl.selected
        details = _screen(app).query_one("#trace-details", Static)
        assert details.has_class("-visible")
        text = _text(app, "#trace-details")
        assert "ERROR" in text and "ret: 1003" in text and "NC 1" in text
        await pilot.press("e")
        assert tl.selected != first and tl.selected in st.errors
        await pilot.press("E")
        assert tl.selected == first
        assert tl.model.lines[tl.cursor].track == st.track_of(first).id
        await pilot.press("escape")
        assert tl.selected is None and not details.has_class("-visible")


@sync
async def test_enter_selects_on_the_cursor_line_and_ctrl_arrows_step() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        st = tl.model.store
        await pilot.press("down")  # from the group header to the first track's first row
        await pilot.press("enter")
        assert tl.selected is not None and st.name_of(tl.selected) == "nrt_execute"
        before = st.start[tl.selected]
        await pilot.press("ctrl+right")
        assert st.start[tl.selected] > before and st.name_of(tl.selected) == "nrt_execute"
        await pilot.press("ctrl+left")
        assert st.start[tl.selected] == before


@sync
async def test_click_selects_the_event_under_the_pointer() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        st = tl.model.store
        line = next(i for i, ln in enumerate(tl.model.lines) if ln.kind == "row" and ln.row == 2)
        ln = tl.model.lines[line]
        ri = tl.model.row_index(ln.track, ln.row)
        ev = ri.event(ri.lo)
        col = tl.window.col_of((st.start[ev] + st.end[ev]) // 2)
        await pilot.click(Timeline, offset=(tl.label_w + 1 + col, line - tl.top + 1))
        await pilot.pause()
        assert tl.selected == ev and tl.cursor == line
        assert st.name_of(ev) in _text(app, "#trace-details")


@sync
async def test_keys_typed_right_after_slash_go_into_the_search() -> None:
    """``/cc_op`` arriving at once: the box is focused before ``o`` (grouping) is routed; so is ``f``'s."""
    from tests.helpers import type_at_once

    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        grouping = _screen(app).timeline.model.grouping
        type_at_once(app, "/cc_op/")
        await pilot.pause()
        assert _screen(app).query_one("#trace-search", Input).value == "cc_op/"
        assert _screen(app).timeline.model.grouping == grouping
        await pilot.press("escape")
        type_at_once(app, "fname=of")  # the filters' box: "f" and "o" typed, not run
        await pilot.pause()
        assert _screen(app).query_one("#trace-filter", Input).value.endswith("name=of")
        assert _screen(app).timeline.model.grouping == grouping


@sync
async def test_search_with_next_and_previous_match() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        box = _screen(app).query_one("#trace-search", Input)
        assert box.has_class("-visible") and box.has_focus
        await pilot.press(*"cc_op", "enter")
        tl = _screen(app).timeline
        st = tl.model.store
        assert not box.has_class("-visible")
        matches = _screen(app).matches
        assert len(matches) > 3 and all(st.name_of(m) == "cc_op_exec" for m in matches)
        assert tl.selected == matches[0]
        await pilot.press("greater_than_sign")
        assert tl.selected == matches[1]
        await pilot.press("less_than_sign", "less_than_sign")
        assert tl.selected == matches[-1]  # wraps
        assert f"/cc_op: {len(matches)} matches" in _text(app, "#trace-status")


@sync
async def test_filters_in_neuron_syntax() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("f")
        assert _screen(app).query_one("#trace-filter-box").has_class("-visible")
        assert "type=nrt_execute,hardware,^cc_exec" in _text(app, "#trace-filter-hint")
        await pilot.press(*"nc=1-2 type=nc_exec", "enter")
        tl = _screen(app).timeline
        st = tl.model.store
        rows = [ln for ln in tl.model.lines if ln.kind == "row"]
        assert {st.tracks[ln.track].core for ln in rows} == {1, 2}
        for ln in rows:
            ri = tl.model.row_index(ln.track, ln.row)
            assert all(st.name_of(ri.event(k)) == "nc_exec" for k in range(ri.lo, ri.hi))
        assert "filter: NC 1-2; types nc_exec" in _text(app, "#trace-info")
        await pilot.press("f")
        box = _screen(app).query_one("#trace-filter", Input)
        assert box.value == "nc=1-2 type=nc_exec"
        box.value = "nc=x"
        await pilot.press("enter")
        assert box.has_class("-visible")  # a bad filter keeps the box open (and says why)
        box.value = ""
        await pilot.press("enter")
        assert not tl.model.filters.active


@sync
async def test_hang_list_jumps_to_unfinished_events() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("u")
        hangs = _screen(app).query_one("#trace-hangs", OptionList)
        assert hangs.has_class("-visible") and hangs.option_count == 2
        await pilot.press("down", "enter")
        tl = _screen(app).timeline
        st = tl.model.store
        assert tl.selected in st.unfinished
        assert "UNFINISHED" in _text(app, "#trace-details")
        await pilot.press("u")
        assert not hangs.has_class("-visible")


@sync
async def test_replay_moves_the_playhead_with_the_injected_clock() -> None:
    clock = FakeClock()
    store = load_trace(SMALL)
    app = TimelineApp(store, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        await pilot.press("r")
        assert scr.playing and tl.playhead == store.t_min
        clock.now += 1.0
        scr.tick()
        expected = store.t_min + int(1e9 * scr.speed)
        assert tl.playhead == expected
        await pilot.press("s")  # twice as fast
        clock.now += 1.0
        scr.tick()
        assert tl.playhead == expected + int(2e9 * scr.speed / 2)
        replay = _text(app, "#trace-replay")
        assert "NC 0:" in replay and "NC 3:" in replay
        await pilot.press("r")
        assert not scr.playing
        clock.now += 5.0
        scr.tick()
        assert tl.playhead == expected + int(2e9 * scr.speed / 2)  # paused: no movement
        await pilot.press("R")
        assert tl.playhead is None


def test_replay_lists_active_events_per_core() -> None:
    store = load_trace(SMALL)
    scr = TimelineScreen(store)
    from neuron_top.trace.model import TimelineModel

    scr.model = TimelineModel(store)
    nc0 = next(t for t in store.tracks if t.core == 0)
    ev = next(i for i in range(*nc0.rows[2]))  # an nc_exec on NC 0
    active = dict(scr.active_at((store.start[ev] + store.end[ev]) // 2))
    assert active["NC 0"][:3] == ["nrt_execute", active["NC 0"][1], "nc_exec"]
    assert active["NC 0"][1].startswith("sync_exec - ")


async def _follow(app: TimelineApp, pilot: Any, name: str) -> str:
    """Select the event called ``name``, see its one flow in the details, press L: the name of where L went."""
    tl = _screen(app).timeline
    st = tl.model.store
    tl.select(next(i for i in range(len(st)) if st.name_of(i) == name))
    await pilot.pause()
    assert "flows: 1 out (L) · D lists them" in _text(app, "#trace-details")
    await pilot.press("L")
    return st.name_of(tl.selected)  # type: ignore[arg-type]


@sync
async def test_follow_a_flow(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "name": "launch", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"ph": "X", "name": "kernel", "ts": 50, "dur": 10, "pid": 1, "tid": 2},
        {"ph": "s", "id": 1, "cat": "ac2g", "name": "f", "ts": 1, "pid": 1, "tid": 1},
        {"ph": "f", "id": 1, "cat": "ac2g", "name": "f", "ts": 50, "pid": 1, "tid": 2, "bp": "e"},
    ]
    p = tmp_path / "flow.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(p)  # from a path: loaded in the worker
    async with app.run_test(size=(100, 20)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert await _follow(app, pilot, "launch") == "kernel"
        tl = _screen(app).timeline
        assert "flows: 1 in (H) · D lists them" in _text(app, "#trace-details")
        await pilot.press("L")  # the end of the chain: L stays, and says so
        assert tl.model.store.name_of(tl.selected) == "kernel"  # type: ignore[arg-type]
        await pilot.press("H")  # and back
        assert tl.model.store.name_of(tl.selected) == "launch"  # type: ignore[arg-type]


@sync
async def test_follow_a_v2_flow_on_perfetto_s_own_trace() -> None:
    """Flow v2 (bind_id, flow_in, flow_out): L said "this event has no flow" (issue 24, item 2)."""
    from tests.trace_helpers import real_trace

    store = load_trace(real_trace("perfetto_flow_events_json_v2.json"))
    app = TimelineApp(store)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        assert await _follow(app, pilot, "SenderB") == "Blergh"


@sync
async def test_unreadable_path_shows_a_one_line_error(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text("garbage")
    app = TimelineApp(p)
    async with app.run_test(size=(100, 20)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "not a trace file" in _text(app, "#trace-loading")
        await pilot.press("plus", "e", "o")  # keys do nothing harmful without a trace


@sync
async def test_hostile_event_names_are_shown_literally(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": "[red]x\x1b[2J", "ts": 0, "dur": 10, "pid": "[b]p", "tid": 1}]
    p = tmp_path / "evil.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(load_trace(p))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        rows = [tl.render_line(y).text for y in range(4)]
        assert any("[red]x\\x1b[2J" in r for r in rows)
        assert all("\x1b" not in r for r in rows)
        await pilot.press("down", "down", "enter")
        assert "[red]x\\x1b[2J" in _text(app, "#trace-details")


def test_filter_text_round_trip() -> None:
    f = parse_filter_text("nc=0-3,8 type=hardware,^cc_running inst=i-abc")
    assert f == Filters.parse("0-3,8", "hardware,^cc_running", "i-abc")
    assert parse_filter_text(filter_text(f)) == f
    assert parse_filter_text("0,2 i-abc nrt_execute") == Filters.parse("0,2", "nrt_execute", "i-abc")


@sync
async def test_counter_line_shows_value_and_breakdown(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "name": "work", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
        {"ph": "C", "name": "hbm", "ts": 0, "pid": 1, "args": {"used": 10}},
        {"ph": "C", "name": "hbm", "ts": 50, "pid": 1, "args": {"used": 30}},
    ]
    p = tmp_path / "c.json"
    p.write_text(json.dumps(events))
    store = load_trace(p)
    store.counters[0].breakdown = [{"tensors": 6.0, "code": 4.0}, {"tensors": 20.0, "code": 10.0}]
    app = TimelineApp(store)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        line = next(i for i, ln in enumerate(tl.model.lines) if ln.kind == "counter")
        tl.move_cursor(line - tl.cursor)
        await pilot.press("enter")  # the sample at the window centre (t = 50 µs)
        text = _text(app, "#trace-details")
        assert "hbm" in text and "30" in text
        assert "tensors: 20" in text and "(66.7%)" in text
        row = tl.render_line(line - tl.top + 1).text
        assert "▃" in row and "█" in row  # 10 then 30, scaled to the maximum


@sync
async def test_wide_characters_keep_the_columns_aligned(tmp_path: Path) -> None:
    events = [
        {
            "ph": "X",
            "name": "計算カーネル実行中" * 3,
            "ts": 0,
            "dur": 10,
            "pid": 1,
            "tid": "スレッド名前が長い",
        }
    ]
    p = tmp_path / "wide.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(load_trace(p))
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        for y in range(4):
            assert tl.render_line(y).cell_length == tl.size.width
        row = tl.render_line(2)
        label_cells = sum(seg.cell_length for seg in list(row)[:1])
        assert label_cells == tl.label_w


# -- issue 24: navigation, axis, area, several files, metrics, help --------------------------------------------


@sync
async def test_step_first_last_and_fit_keys() -> None:
    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        await pilot.press("g")
        assert tl.selected is not None and store.start[tl.selected] == store.t_min
        await pilot.press("G")
        last = tl.selected
        assert last is not None and store.start[last] == max(store.start)
        await pilot.press("F")
        pad = max(store.dur[last] // 10, 10)
        assert (tl.t0, tl.t1) == (store.start[last] - pad, store.end[last] + pad)
        await pilot.press("g", "full_stop")
        first_next = tl.selected
        assert first_next is not None and store.start[first_next] > store.t_min
        await pilot.press("comma")
        assert store.start[tl.selected] == store.t_min  # type: ignore[index]
        await pilot.press("exclamation_mark")
        problems = sorted(set(store.errors) | set(store.unfinished), key=lambda e: store.start[e])
        assert tl.selected == problems[0]


@sync
async def test_at_end_closes_up_on_the_last_events_not_a_whole_run_span() -> None:
    """A Kineto rank: the "PyTorch Profiler (0)" span runs to 3.37 s, the last activity ends near 2.0 s. --at end
    showed 1.95 s to 3.37 s, the last events squeezed at the left edge of an empty window."""
    from tests.trace_helpers import ns, real_trace, trace_events

    path = real_trace("hta_trace_filter_sampled_rank-0.json.gz")
    store = load_trace(path)
    xs = [e for e in trace_events(path) if e.get("ph") == "X" and not e["name"].startswith("PyTorch Profiler")]
    last_end = max(ns(e["ts"]) + ns(e["dur"]) for e in xs)
    last_start = max(ns(e["ts"]) for e in xs)
    assert store.t_max - last_end > 1_000_000_000  # the span's tail: more than a second with nothing else
    app = TimelineApp(store, at="end")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        assert tl.t0 < last_start < last_end <= tl.t1  # the last events are in the window
        assert tl.t1 - last_end <= (tl.t1 - tl.t0) // 10  # and it ends with them, not a second later
        assert tl.t1 - tl.t0 < store.span // 10  # close up


@sync
async def test_fit_without_a_selection_says_how() -> None:
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("F")
        await pilot.pause()
        assert any("select an event first" in str(n.message) for n in app._notifications)


@sync
async def test_axis_labels_stay_distinct_when_zoomed_deep(tmp_path: Path) -> None:
    """The issue saw "273 ms" on eight ticks of a 1 ms window, and "1122420 s" on every tick of an epoch trace."""
    events = [{"ph": "X", "name": f"e{k}", "ts": 1122420_000_000 + k * 137.5, "dur": 100, "pid": 1, "tid": 1}
              for k in range(4000)]
    p = tmp_path / "epoch.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(load_trace(p))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        st = tl.model.store
        for t0, width in ((st.t_min + 273_000_000, 1_000_000), (st.t_min + 400_000_000, 3_000), (st.t_min, st.span)):
            tl.set_window(t0, t0 + width)
            for absolute in (False, True):
                tl.set_absolute(absolute)
                await pilot.pause()
                axis = tl.render_line(0).text
                labels = [part.split("┆")[0].strip() for part in axis[tl.label_w + 1 :].split("┆")[1:]]
                labels = [lb for lb in labels if lb]
                assert len(labels) >= 3 and len(set(labels)) == len(labels), (axis, absolute)
        tl.set_absolute(False)
        await pilot.press("c")
        assert tl.absolute


@sync
async def test_track_name_stays_visible_when_scrolled_into_it(tmp_path: Path) -> None:
    events = [x for k in range(12) for x in ({"ph": "B", "name": f"d{k}", "ts": k, "pid": 1, "tid": 7},)]
    events += [{"ph": "E", "ts": 100 - k, "pid": 1, "tid": 7} for k in range(12)]
    events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "deep-thread"}})
    p = tmp_path / "deep.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(load_trace(p))
    async with app.run_test(size=(80, 8)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        await pilot.press(*["down"] * 9)
        assert tl.top > 1 and tl.model.lines[tl.top].row > 0
        assert tl.render_line(1).text.startswith("deep-thread")


@sync
async def test_area_summary_and_jump_to_the_longest() -> None:
    from neuron_top.trace.aggregate import aggregate

    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        await pilot.press("a")  # the visible window: the whole trace
        box = scr.query_one("#trace-agg-box")
        assert box.has_class("-visible") and tl.area == (store.t_min, store.t_max)
        rows = scr.area_rows
        assert rows == aggregate(store, store.t_min, store.t_max)
        assert rows[0].name == "nrt_execute" and sum(r.count for r in rows) == len(store)
        assert "57 slices, 10 names in 6.17 ms (+0 ns to +6.17 ms)" in str(
            scr.query_one("#trace-agg-title", Static).render()
        )
        await pilot.press("enter")  # the first row: the longest nrt_execute
        assert tl.selected == rows[0].longest
        await pilot.press("escape", "escape")  # the summary closes, then the area clears
        assert not box.has_class("-visible") and tl.area is None


@sync
async def test_details_and_area_summary_leave_the_tracks_room_at_80x24() -> None:
    """At 80x24 the details (12 lines) and the area summary (14) used to take the whole screen: the tracks, and
    the event Enter jumps to, were gone."""
    from neuron_top.tui.screens.timeline import MIN_TRACK_LINES

    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        await pilot.press("e", "a", "enter")  # details of an error, then the window's summary, then a jump
        await pilot.pause()
        assert scr.query_one("#trace-agg-box").has_class("-visible") and tl.selected is not None
        assert tl.size.height >= MIN_TRACK_LINES
        assert scr.query_one("#trace-agg").size.height >= 3  # its header and two rows at least
        await pilot.press("escape")  # the summary closes: the details get their room back
        await pilot.pause()
        assert scr.query_one("#trace-details").styles.max_height is not None
        assert scr.query_one("#trace-details").styles.max_height.value == 12


@sync
async def test_area_by_marks_and_marked_tracks() -> None:
    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        await pilot.press("down", "space")  # mark the first track (NC 0) for the area
        nc0 = tl.model.lines[tl.cursor].track
        assert tl.area_tracks == {nc0} and tl.render_line(2).text.startswith("▸")
        tl.set_window(store.t_min, store.t_min + 1_000_000)
        await pilot.press("m")
        assert tl.mark == store.t_min + 500_000
        tl.set_window(store.t_min + 2_000_000, store.t_min + 4_000_000)
        await pilot.press("m")
        assert tl.area == (store.t_min + 500_000, store.t_min + 3_000_000)
        assert {store.track_of(r.longest).id for r in scr.area_rows} == {nc0}


@sync
async def test_drag_marks_an_area_without_selecting() -> None:
    store = load_trace(SMALL)
    app = TimelineApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        x0, x1 = tl.label_w + 11, tl.label_w + 41
        await pilot.mouse_down(Timeline, offset=(x0, 2))
        await pilot.hover(Timeline, offset=(x1, 6))
        await pilot.mouse_up(Timeline, offset=(x1, 6))
        await pilot.pause()
        assert tl.area is not None and tl.area[0] == tl.window.time_of(10)
        assert tl.area_tracks  # dragged across lines: those tracks
        assert scr.query_one("#trace-agg-box").has_class("-visible")


@sync
async def test_object_only_trace_says_what_it_holds(tmp_path: Path) -> None:
    events = [
        {"ph": "N", "name": "Layer", "id": "0x1", "ts": 1, "pid": 1},
        {"ph": "O", "name": "Layer", "id": "0x1", "ts": 2, "pid": 1, "args": {"snapshot": {}}},
        {"ph": "D", "name": "Layer", "id": "0x1", "ts": 3, "pid": 1},
    ]
    p = tmp_path / "objects.json"
    p.write_text(json.dumps(events))
    app = TimelineApp(p)
    async with app.run_test(size=(100, 20)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "nothing to draw: this file holds 3 object snapshots (N/O/D)" in _text(app, "#trace-empty")
        await pilot.press("plus", "a", "g")  # keys do nothing harmful


@sync
async def test_events_lost_are_said_in_the_header(tmp_path: Path) -> None:
    p = tmp_path / "cut.json"
    p.write_text('[{"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":2,"du')
    app = TimelineApp(p)
    async with app.run_test(size=(120, 20)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert _text(app, "#trace-info").startswith("unreadable: 1 event could not be read")


@sync
async def test_several_files_on_one_wall_clock() -> None:
    from tests.trace_helpers import real_trace

    paths = [real_trace("hta_trace_filter_sampled_rank-0.json.gz"), real_trace("hta_trace_filter_sampled_rank-1.json.gz")]
    app = TimelineApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        scr = _screen(app)
        assert _text(app, "#trace-info").startswith("2 files (one wall clock)")
        groups = [ln.label for ln in scr.timeline.model.lines if ln.kind == "group"]
        assert [g.split(" (")[0] for g in groups] == ["rank 0", "rank 1"]
        st = scr.timeline.model.store
        assert len(st) == len(load_trace(paths[0])) + len(load_trace(paths[1]))


@sync
async def test_help_in_the_timeline_lists_its_keys_first_with_human_names() -> None:
    from neuron_top.tui.screens.help import HelpScreen

    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.push_screen(HelpScreen())
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        titles = [t for t, _ in help_screen.sections]
        assert titles[0] == "Timeline (T, or neuron-top trace FILE)" and "Dashboard" in titles[1:]
        keys = dict(help_screen.sections[0][1])
        assert keys[">"] == "next match" and keys[". / ^→"] == "next event on this line"
        assert keys["!"] == "first error or unfinished event" and keys["esc"] == "close / clear"
        assert keys["L"].startswith("follow a flow downstream") and keys["H"].startswith("follow a flow upstream")
        assert keys["D"].startswith("flows of the selected slice")
        every = " ".join(k for _, rows in help_screen.sections for k, _ in rows)
        assert "greater_than_sign" not in every and "full_stop" not in every and "question_mark" not in every


def _wall_trace(tmp_path: Path, t0: float, seconds: int) -> Path:
    """A Kineto-like trace on the wall clock: epoch microseconds with nanoseconds, one step a second."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": f"step {k}", "pid": 1, "tid": 1,
         "ts": f"{int(t0 * 1e6) + k * 1_000_000}.125", "dur": 900_000}
        for k in range(seconds)
    ]
    p = tmp_path / "wall.json"
    p.write_text('{"schemaVersion": 1, "traceEvents": [' + ",".join(
        json.dumps(e).replace('"ts": "', '"ts": ').replace('.125"', ".125") for e in events) + "]}")
    return p


def _recording(tmp_path: Path, t0: float, n: int) -> Path:
    from neuron_top.recording.writer import RecordingWriter
    from neuron_top.sources.demo import generate

    p = tmp_path / "rec.ndjson"
    with RecordingWriter(p, append=False) as w:
        for i, data in enumerate(generate("inf2.48xlarge", 5, n)):
            w.write(data, t0 + i)
    return p


T_WALL = 1767225600.0


@sync
async def test_metrics_beside_the_trace_on_its_wall_clock(tmp_path: Path) -> None:
    trace = _wall_trace(tmp_path, T_WALL + 10, 20)
    rec = _recording(tmp_path, T_WALL, 60)
    app = TimelineApp(trace, metrics=rec)
    async with app.run_test(size=(120, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        scr = _screen(app)
        st = scr.timeline.model.store
        assert scr.metrics is not None and scr.metrics.matched
        metrics = [c for c in st.counters if c.group == "metrics"]
        names = {c.name for c in metrics}
        assert {"device memory used", "vCPU busy (average)"} <= names
        assert any(n.startswith("NC ") and n.endswith(" utilization") for n in names)
        mem = next(c for c in metrics if c.name == "device memory used")
        # reports 9..30 bracket the trace (10 s to 29.9 s after T_WALL), at their exact wall times
        assert list(mem.ts) == [round((T_WALL + i) * 1e9) for i in range(9, 31)]
        groups = [ln.label for ln in scr.timeline.model.lines if ln.kind == "group"]
        assert "metrics" in groups
        assert "metrics on the wall clock" in _text(app, "#trace-status")


@sync
async def test_metrics_whose_clock_does_not_match_can_be_shifted(tmp_path: Path) -> None:
    rec = _recording(tmp_path, T_WALL, 10)
    app = TimelineApp(load_trace(SMALL), metrics=rec)  # neuron-det: a monotonic clock
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        assert scr.metrics is not None and not scr.metrics.matched
        assert "clocks cannot be matched" in scr.metrics.note
        st = scr.timeline.model.store
        mem = next(c for c in st.counters if c.name == "device memory used")
        assert mem.ts[0] == st.t_min  # the recording's start at the trace's start
        await pilot.press("O")
        await pilot.press(*"+2ms", "enter")
        assert mem.ts[0] == st.t_min + 2_000_000
        assert "placed by hand (O)" in _text(app, "#trace-status")


@sync
async def test_replay_and_timeline_follow_each_other(tmp_path: Path) -> None:
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import ReplayController
    from neuron_top.tui.app import NeuronTopApp
    from neuron_top.tui.screens.replay import ReplayScreen

    trace = _wall_trace(tmp_path, T_WALL + 10, 20)
    rec = _recording(tmp_path, T_WALL, 60)
    index = RecordingIndex(rec)
    index.wait()
    controller = ReplayController(index, start=15, clock=lambda: 5000.0)  # a still clock: no playback
    app = NeuronTopApp(None, replay=controller, replay_name="rec", traces=[str(trace)], clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.get_screen("timeline")
        assert isinstance(timeline, TimelineScreen)
        await pilot.press("T")  # to the timeline: its trace loads, with the replay's metrics
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert timeline.metrics is not None and timeline.metrics.matched
        await pilot.press("T")  # back to the replay
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        await pilot.press("right_square_bracket")  # one report on: the timeline's playhead follows
        await pilot.pause()
        assert controller.position == 16
        assert timeline.timeline.playhead == round((T_WALL + 16) * 1e9)
        timeline.timeline.set_playhead(round((T_WALL + 25.5) * 1e9))  # and the other way round
        await pilot.pause()
        await pilot.pause()
        assert controller.position == 25  # the report in effect at 25.5 s
        await pilot.pause()
        assert timeline.timeline.playhead == round((T_WALL + 25.5) * 1e9)  # not moved back by its own echo


@sync
async def test_beside_a_replay_the_timeline_opens_at_its_position_and_r_plays_from_there(tmp_path: Path) -> None:
    """The first r played from the trace's start and dragged the replay back; the timeline opened without a
    playhead at the replay's position."""
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import ReplayController
    from neuron_top.tui.app import NeuronTopApp

    trace = _wall_trace(tmp_path, T_WALL + 10, 20)
    rec = _recording(tmp_path, T_WALL, 60)
    index = RecordingIndex(rec)
    index.wait()
    controller = ReplayController(index, start=18, clock=lambda: 5000.0)
    app = NeuronTopApp(None, replay=controller, replay_name="rec", traces=[str(trace)], clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("T")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        timeline = app.get_screen("timeline")
        assert timeline.timeline.playhead == round((T_WALL + 18) * 1e9)  # opened at the replay's position
        assert timeline.timeline.t0 <= timeline.timeline.playhead < timeline.timeline.t1  # and in view
        await pilot.press("r")
        await pilot.pause()
        assert timeline.timeline.playhead >= round((T_WALL + 18) * 1e9)
        assert controller.position >= 18  # never dragged back to the trace's start
        await pilot.press("r")  # pause before leaving


def _in_view(tl: Timeline, ev: int) -> bool:
    """The event is inside the window, at least a cell wide (not hidden in a shaded cell), on a line shown."""
    st = tl.model.store
    s, e = st.start[ev], st.end[ev]
    line = tl.model.line_of_event(ev)
    wide = (e - s) * tl.area_w >= (tl.t1 - tl.t0) or e == s
    return tl.t0 <= s and e <= tl.t1 and wide and line is not None and tl.top <= line < tl.top + tl.body_h


def _track_text(tl: Timeline, ev: int) -> str:
    """What the event's line shows right of the labels."""
    line = tl.model.line_of_event(ev)
    assert line is not None
    return tl.render_line(line - tl.top + 1).text[tl.label_w + 1 :]


@sync
async def test_chain_from_its_middle_source_consumers_and_back_each_in_view() -> None:
    """Perfetto's flow v2 test trace: SenderA -> OtherSlice -> SomeSlice and SomeOtherSlice (issue 35)."""
    from tests.trace_helpers import real_trace

    store = load_trace(real_trace("perfetto_flow_events_json_v2.json"))
    ev = {store.name_of(i): i for i in range(len(store))}
    app = TimelineApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        tl.zoom(64)  # far from every end of the chain
        tl.select(ev["OtherSlice"])
        await pilot.pause()
        assert "flows: 1 in (H), 2 out (L) · D lists them" in _text(app, "#trace-details")
        assert "→OtherSlice" in _track_text(tl, ev["OtherSlice"])  # marked: a flow in, and one out at its end
        assert _track_text(tl, ev["OtherSlice"]).rstrip().endswith("→")
        walk = []
        for key in ("H", "L", "L", "H", "L", "H"):
            await pilot.press(key)
            await pilot.pause()
            assert tl.selected is not None and _in_view(tl, tl.selected)
            walk.append(store.name_of(tl.selected))
        # H: the source (10 µs, under a cell: zoomed in); L, L: back, then the first consumer; H back; L the
        # second consumer (L again from a slice takes the next in turn); H back to the middle
        assert walk == ["SenderA", "OtherSlice", "SomeSlice", "OtherSlice", "SomeOtherSlice", "OtherSlice"]
        await pilot.press("D")
        await pilot.pause()
        box = scr.query_one("#trace-flows", OptionList)
        listed = [str(box.get_option_at_index(k).prompt) for k in range(box.option_count)]
        assert listed[1:3] == ["↑ upstream (H): 1", "  SenderA\n    15903 @ +3.002 ms"]
        assert listed[3] == "↓ downstream (L): 2" and [x.split("\n")[0] for x in listed[4:6]] == [
            "  SomeSlice", "  SomeOtherSlice"
        ]
        await pilot.press("down", "down", "enter")  # from SenderA (highlighted first) to SomeOtherSlice
        await pilot.pause()
        assert tl.selected == ev["SomeOtherSlice"] and _in_view(tl, ev["SomeOtherSlice"])
        listed = [str(box.get_option_at_index(k).prompt) for k in range(box.option_count)]
        assert listed[1].startswith("⇤ chain source: SenderA (2 flows up)")  # the list follows the selection
        await pilot.press("escape")
        await pilot.pause()
        assert not box.has_class("-visible") and tl.selected == ev["SomeOtherSlice"]


@sync
async def test_search_brings_a_match_under_a_cell_into_view() -> None:
    from tests.trace_helpers import real_trace

    store = load_trace(real_trace("perfetto_flow_events_json_v2.json"))
    app = TimelineApp(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        await pilot.press("slash", *"SenderA", "enter")  # from the whole trace
        await pilot.pause()
        sender = tl.selected
        assert sender is not None and store.name_of(sender) == "SenderA"
        assert store.dur[sender] * 90 < store.span  # under a cell at the whole trace: it needed the zoom
        assert _in_view(tl, sender) and "SenderA" in _track_text(tl, sender)


@sync
async def test_a_flow_within_one_slice_is_said_in_the_details() -> None:
    """Lighthouse's iframe page load: DocumentLoader::InitializeWindow holds both ends of one flow (issue 35)."""
    from tests.trace_helpers import real_trace

    store = load_trace(real_trace("lighthouse_iframe_trace.json.gz"))
    (ev,) = [a for a, b in zip(store.flows.a.tolist(), store.flows.b.tolist(), strict=True)
             if a == b and store.name_of(a) == "DocumentLoader::InitializeWindow"]
    app = TimelineApp(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        scr.timeline.select(ev)
        await pilot.pause()
        assert "flows: 1 in (H), 1 out (L), 1 within this slice · D lists them" in _text(app, "#trace-details")
        await pilot.press("D")
        await pilot.pause()
        box = scr.query_one("#trace-flows", OptionList)
        last = str(box.get_option_at_index(box.option_count - 1).prompt)
        assert last == "1 flow(s) with both ends in this slice"


@sync
async def test_keys_typed_right_after_T_go_to_the_timeline() -> None:
    """``T/cc_op`` arriving at once: ``/`` was routed while the dashboard was still on top, so it opened the
    dashboard's filter and ``cc_op`` filtered every app out, unseen behind the timeline, whose search stayed
    empty."""
    from tests.helpers import demo_snapshots, feed, make_app, type_at_once, until

    app = make_app(demo_snapshots("trn2.48xlarge", 7, 4), traces=[str(SMALL)])
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        timeline = app.get_screen("timeline")
        await until(lambda: app.screen is timeline, what="the timeline, shown first without a source")
        await pilot.press("T")  # to the dashboard
        await until(lambda: app.screen is not timeline, what="the dashboard")
        type_at_once(app, "T/cc_op!")
        box = lambda: timeline.query_one("#trace-search", Input).value  # noqa: E731
        await until(lambda: app.screen is timeline and box().endswith("!"), what="the timeline's search")
        assert box() == "cc_op!"
        assert app.selection.pattern is None  # the dashboard's filter untouched
        type_at_once(app, "T")  # in the search box T is a character, not "back to the dashboard"
        await until(lambda: box().endswith("T"), what="T typed")
        assert app.screen is timeline


@sync
async def test_details_break_between_whole_parts_at_80_columns_and_again_when_resized() -> None:
    """A Kineto cpu_op at 80 columns: wrapped by words, the details read "... · phase X · cat" with "cpu_op" alone
    on the line under it."""
    app = TimelineApp(load_trace(real_trace("hta_kineto_alexnet_trace.json.gz")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        scr = _screen(app)
        tl = scr.timeline
        st = tl.model.store
        ev = next(e for e in range(len(st)) if st.info(e).cat == "cpu_op" and st.info(e).name == "aten::empty_strided")
        tl.select(ev)
        await pilot.pause()
        details = scr.query_one("#trace-details", Static)

        def shown() -> list[str]:
            return ["".join(s.text for s in details.render_line(y)).strip() for y in range(details.size.height)]

        lines = shown()
        assert "cat cpu_op" in lines, lines
        assert not any(line.endswith((" cat", "·", " phase", " duration")) for line in lines), lines
        at_80 = next(line for line in lines if line.startswith("start +"))
        assert "cat" not in at_80  # it did not fit: the whole part went under
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        wide = next(line for line in shown() if line.startswith("start +"))
        assert wide.startswith(at_80) and wide.endswith(" · cat cpu_op")  # drawn again for the new width


def test_quitting_while_a_trace_loads_gives_the_load_up(monkeypatch: Any, tmp_path: Path) -> None:
    """The app's exit waited for the loading thread: 7 s after q on a 165 MB trace. The screen's worker is
    cancelled when the app closes, and the load now asks it between batches."""
    import time

    import neuron_top.tui.screens.timeline as timeline_screen

    seen: list[str] = []

    def slow_load(paths: Any, cancelled: Any = None) -> Any:
        deadline = time.monotonic() + 20
        seen.append("started")
        while time.monotonic() < deadline:
            if cancelled is not None and cancelled():
                seen.append("given up")
                raise timeline_screen.TraceError("loading given up")
            time.sleep(0.01)
        raise timeline_screen.TraceError("never asked")

    monkeypatch.setattr(timeline_screen, "load_traces", slow_load)
    path = tmp_path / "t.json"
    path.write_text("[]")
    t0 = time.monotonic()

    @sync
    async def run() -> None:
        app = TimelineApp(path)
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 10
            while not seen:
                assert time.monotonic() < deadline
                await pilot.pause(0.02)
        # leaving the block closes the app, as q does

    run()
    assert seen == ["started", "given up"] and time.monotonic() - t0 < 10


@sync
async def test_the_span_shown_is_never_cut_into_another_number() -> None:
    """With the hangs list open at 80 columns the label column is 10 wide: "6.17 ms shown" was cut from the left
    to "…7 ms shown", read as 7 ms (and 17.9 s as "…9 s shown")."""
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        assert tl.render_line(0).text.startswith("6.17 ms shown")
        await pilot.press("u")
        await pilot.pause()
        assert tl.label_w < len("6.17 ms shown")
        assert tl.render_line(0).text.startswith("6.17 ms ")


@sync
async def test_keys_zoom_around_the_selected_event_while_it_is_in_view() -> None:
    """+ zoomed around the window's centre: an event selected near the end of the trace left the window at the
    second press. It now zooms around the selection (the playhead when there is one; the centre otherwise)."""
    app = TimelineApp(load_trace(SMALL))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        tl = _screen(app).timeline
        st = tl.model.store
        await pilot.press("G", "0")  # the last event selected, the whole trace in view
        ev = tl.selected
        assert ev is not None and st.start[ev] > (st.t_min + st.t_max) // 2
        await pilot.press("plus", "plus", "plus", "plus")
        assert tl.t1 - tl.t0 < st.span // 8
        assert st.start[ev] <= tl.t1 and st.end[ev] >= tl.t0  # still in view
        tl.select(None)
        centre = (tl.t0 + tl.t1) // 2
        await pilot.press("minus")
        assert abs((tl.t0 + tl.t1) // 2 - centre) <= 1  # no selection: around the centre, as before


@sync
async def test_T_in_trace_only_mode_stays_on_the_timeline() -> None:
    """``neuron-top trace FILE`` has no metrics source: T switched to a dashboard that said "waiting for the first
    report…" forever. It stays on the timeline and says why."""
    from neuron_top.tui.app import NeuronTopApp
    from tests.helpers import until

    app = NeuronTopApp(None, traces=[str(SMALL)], clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = app.get_screen("timeline")
        await until(lambda: app.screen is timeline, what="the timeline, shown first without a source")
        await pilot.press("T")
        await pilot.pause()
        assert app.screen is timeline
        assert any("the trace alone" in n.message for n in app._notifications)


@sync
async def test_rows_that_read_alike_when_cut_keep_what_tells_them_apart(tmp_path: Path) -> None:
    """Two Chrome renderers' threads at 120 columns: "CrRendererMain · Renderer 18811" and "... 18931" were both
    drawn "CrRendererMain · Render…"; the start and the words that differ are kept now."""
    events: list[dict[str, Any]] = []
    for pid in (18811, 18931):
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "Renderer"}})
        for tid, name in ((pid + 1, "CrRendererMain"), (pid + 2, "Chrome_ChildIOThread"), (pid + 3, "Compositor")):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
            events.append({"ph": "X", "name": "work", "ts": 0, "dur": 10, "pid": pid, "tid": tid})
    app = TimelineApp(load_trace(write_events(tmp_path, events, "renderers.json")))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        lw = _screen(app).timeline.label_w
        shown = [_screen(app).timeline.render_line(y).text[:lw] for y in range(1, 12)]
        rows = [s.strip() for s in shown if "…" in s or "·" in s]
        assert len(rows) == 6 and len(set(rows)) == 6, shown
        assert "CrRendererMain… 18811" in rows and "Chrome_ChildIOThr… 18931" in rows

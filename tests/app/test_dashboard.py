"""Pilot tests: every dashboard key and drill-down, on deterministic data."""

from __future__ import annotations

import asyncio

import pytest

from neuron_top.tui import age as age_module
from neuron_top.tui.screens.app_detail import AppScreen
from neuron_top.tui.screens.detail import CoreScreen, DeviceScreen
from neuron_top.tui.screens.help import HelpScreen
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.memory import MemoryTree
from neuron_top.tui.widgets.tabs import AppTabs
from tests.conftest import DATA
from tests.helpers import demo_snapshots, feed, file_snapshots, make_app, until


def text_of(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


@pytest.fixture
def trn2():
    return demo_snapshots("trn2.48xlarge", 7, 20)


async def test_quit(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("q")
    assert app.return_code == 0


async def test_help_lists_keys_and_closes(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        from neuron_top.tui.screens.help import help_sections

        shown = " ".join(f"{k} {d}" for _, rows in help_sections(list(type(app).BINDINGS)) for k, d in rows)
        for needle in ("pause", "FLOPS", "filter", "open core", "expand", "timeline", "play/pause", "zoom"):
            assert needle in shown, needle
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_pause_freezes_the_view(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot, trn2[:5])
        await pilot.press("p")
        tick = app.screen.view.tick
        await feed(pilot, trn2[5:10])
        assert app.screen.view.tick == tick  # nothing redrawn while paused
        assert "PAUSED" in app.screen.query_one(HeaderBar).render_line(0).text
        assert len(app.history) == 10  # but history keeps recording
        await pilot.press("p")
        assert app.screen.view.tick > tick
        assert app.screen.view.snapshot is trn2[9]


async def test_flops_and_physical_toggles(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        assert "utilization % (avg" in grid.render_line(0).text
        await pilot.press("f")
        assert "effective TFLOPS per core (avg " in grid.render_line(0).text and ", total " in grid.render_line(0).text
        await pilot.press("f", "v")
        assert "physical cores: utilization % (avg" in grid.render_line(0).text
        assert "NC3.1" in grid.render_line(1).text


async def test_tabs_select_cycle_and_panels_follow(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        apps = app.visible_apps()
        await pilot.press("2")
        assert app.pid == apps[0].pid
        assert app.screen.view.app.label == apps[0].label
        assert f"({apps[0].label})" not in app.screen.query_one(CoreGrid).render_line(0).text or True
        assert ">" + apps[0].label + "<" in app.screen.query_one(AppTabs).render_line(0).text
        await pilot.press("d")
        assert app.pid == apps[1].pid
        await pilot.press("a", "a")
        assert app.pid is None
        await pilot.press("a")
        assert app.pid == apps[-1].pid
        await pilot.press("1")
        assert app.pid is None


async def test_filter_as_you_type_and_invalid_regex(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        before = len(app.visible_apps())
        await pilot.press("slash", *"serve")
        shown = app.visible_apps()
        assert 0 < len(shown) < before and all("serve" in a.tag for a in shown)
        await pilot.press("backspace", *"[")
        assert "invalid" in app.tag_text
        assert "invalid" in app.screen.query_one(AppTabs).render_line(0).text
        await pilot.press("escape")
        assert app.tag_text == "" and len(app.visible_apps()) == before


async def test_tag_flag_presets_the_filter(trn2) -> None:
    app = make_app(trn2, tag="^bert")
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        assert [a.tag for a in app.visible_apps()] == ["bert-base-inf"]


async def test_enter_on_core_opens_core_and_escape_returns(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        app.screen.query_one(CoreGrid).focus()
        # two devices a row at 200 columns: down goes to the device under ND0 (ND2), right to its next core
        await pilot.press("down", "right", "enter")
        assert isinstance(app.screen, CoreScreen)
        assert app.screen.crumb.text().strip() == "dashboard › core 9"
        body = text_of(app.screen.panel)
        assert "NeuronCore 9 (ND2 NC1)" in body and "util % history" in body and "apps using it" in body
        await feed(pilot, trn2[:2])  # the drill-down follows updates
        await pilot.press("escape")
        assert isinstance(app.screen.query_one(CoreGrid), CoreGrid)


async def test_enter_on_device_column_opens_device(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        app.screen.query_one(CoreGrid).focus()
        await pilot.press("down", "down", "left", "enter")  # two devices a row: ND4's label
        assert isinstance(app.screen, DeviceScreen)
        body = text_of(app.screen.panel)
        assert "Neuron device ND4" in body and "DRAM uncorrected" in body


async def test_click_on_core_cell_opens_it(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        await pilot.click(CoreGrid, offset=(10, 2))  # device 0, core 0
        await pilot.pause()
        assert isinstance(app.screen, CoreScreen), grid


async def test_enter_on_app_tab_opens_app(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        app.screen.query_one(AppTabs).focus()
        await pilot.press("right", "enter")
        assert isinstance(app.screen, AppScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, AppScreen)


async def test_x_expands_the_memory_tree(trn2) -> None:
    app = make_app(trn2, layout="full")
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        tree = app.screen.query_one(MemoryTree)
        rows = len(tree.rows())
        await pilot.press("x")
        assert len(tree.rows()) > rows
        await pilot.press("x")
        assert len(tree.rows()) < rows


async def test_theme_cycles(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        first = app.theme
        await pilot.press("t")
        assert app.theme != first and app.theme in {"neuron-16", "neuron-dark", "neuron-light", "solarized-dark"}


async def test_every_shipped_theme_can_be_cycled_through(trn2) -> None:
    """``t`` all the way round: each shipped theme is applied and the dashboard still draws (an ANSI theme
    without Textual's ``ansi-background`` once stopped the app)."""
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        seen = set()
        for _ in range(8):
            await pilot.press("t")
            await pilot.pause()
            seen.add(app.theme)
            assert "ND" in app.screen.query_one(CoreGrid).render_line(2).text
        assert {"neuron-16", "neuron-dark", "neuron-light", "solarized-dark"} <= seen


async def test_the_16_colour_theme_sends_the_terminals_own_colours(trn2) -> None:
    """``ansi = true`` in a theme file: no conversion of ANSI colours to RGB, on every Textual we support (before
    8.2.5 Textual knew no ``Theme(ansi=...)``; themes.py turns the conversion off itself), and on again after."""
    from textual.filter import ANSIToTruecolor

    def converting(app) -> bool:
        return any(f.enabled for f in app._filters if isinstance(f, ANSIToTruecolor))

    app = make_app(trn2, theme="neuron-16")
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot)
        assert app.theme == "neuron-16" and not converting(app)
        app.theme = "neuron-dark"
        await pilot.pause()
        assert converting(app)
        app.theme = "neuron-16"
        await pilot.pause()
        assert not converting(app)


async def test_hostile_strings_render_literally() -> None:
    snaps = file_snapshots(DATA / "trn2_small.json")
    app = make_app(snaps)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        tabs = app.screen.query_one(AppTabs).render_line(0).text
        assert "[red]boom" in tabs
        await pilot.press("x")
        tree = text_of(app.screen.query_one(MemoryTree))
        assert "\\x1b[2J" in tree and "\x1b" not in tree


async def test_timeline_key_without_trace_says_so(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("T")
        await pilot.pause()
        assert any("no trace loaded" in n.message for n in app._notifications)


async def test_panels_with_a_row_per_app_keep_their_height_when_an_app_stops() -> None:
    """Apps that stop must not move every panel below (a full layout and repaint each time a batch job
    comes or goes): the panel keeps its height with blank rows, and shrinks only after SHRINK_AFTER reports."""
    import json

    from neuron_top.decode import decode_report
    from neuron_top.snapshot import Snapshot
    from neuron_top.sources.demo import generate
    from neuron_top.tui.widgets.executions import ExecPanel
    from neuron_top.tui.widgets.latency import LatencyPanel
    from neuron_top.tui.widgets.panel import SHRINK_AFTER
    from tests.helpers import T0

    def snap(i: int, data: bytes, drop: bool) -> Snapshot:
        doc = json.loads(data)
        if drop:
            doc["neuron_runtime_data"] = doc["neuron_runtime_data"][:1]
        report, problems = decode_report(json.dumps(doc).encode())
        return Snapshot(report, T0 + i, i + 1, problems)

    raw = list(generate("inf2.48xlarge", 3, 12 + SHRINK_AFTER))
    app = make_app(layout="full")
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot, [snap(i, d, False) for i, d in enumerate(raw[:10])])
        panels = [app.screen.query_one(ExecPanel), app.screen.query_one(LatencyPanel)]
        heights = [p.size.height for p in panels]
        await feed(pilot, [snap(10, raw[10], True)])
        assert all(len(p.build(p.view, p.size.width)) < h for p, h in zip(panels, heights, strict=True))
        assert [p.size.height for p in panels] == heights
        assert all(not p.render_line(p.size.height - 1).text.strip() for p in panels)
        await feed(pilot, [snap(11 + i, d, True) for i, d in enumerate(raw[11:])])
        assert all(p.size.height < h for p, h in zip(panels, heights, strict=True))


def draws(monkeypatch, kind: type) -> list[int]:
    """The lines ``kind.draw_line`` draws from now on, in order."""
    drawn: list[int] = []
    original = kind.draw_line
    monkeypatch.setattr(kind, "draw_line", lambda self, y: drawn.append(y) or original(self, y))
    return drawn


async def test_the_tab_bar_is_drawn_only_when_its_tabs_change(monkeypatch) -> None:
    """Every report hands the bar a new tuple of apps; it redraws only when the tabs it shows change (an app
    starts or stops), and the drawn bar then shows the change."""
    snaps = demo_snapshots("trn2.48xlarge", 7, 14)  # the 8th app starts at report 10
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        app.accept_snapshot(snaps[0])
        await pilot.pause()
        tabs = app.screen.query_one(AppTabs)
        drawn = draws(monkeypatch, AppTabs)
        for s in snaps[1:10]:
            app.accept_snapshot(s)
            await pilot.pause()
        assert drawn == []
        labels = {a.label for a in snaps[10].apps} - {a.label for a in snaps[9].apps}
        assert len(labels) == 1
        app.accept_snapshot(snaps[10])
        await pilot.pause()
        assert drawn and labels.pop() in tabs.render_line(0).text


async def test_the_header_is_drawn_only_when_what_it_says_changes(monkeypatch) -> None:
    """A new snapshot and report time every second, and the clock ticking, usually leave the header saying the
    same ("updated 0s ago"): no drawing then. When the age or the source changes, the header shows it."""
    now = [1000.0]
    snaps = demo_snapshots("trn2.48xlarge", 7, 8)
    app = make_app(clock=lambda: now[0])
    async with app.run_test(size=(200, 60)) as pilot:
        app.accept_snapshot(snaps[0])
        await pilot.pause()
        header = app.screen.query_one(HeaderBar)
        drawn = draws(monkeypatch, HeaderBar)
        for s in snaps[1:5]:
            now[0] += 1.0
            app.accept_snapshot(s)
            app._tick_clock()
            await pilot.pause()
        assert drawn == []
        now[0] += 3.0  # no report for three seconds
        app._tick_clock()
        await pilot.pause()
        assert drawn and "updated 3s ago" in header.render_line(0).text
        drawn.clear()
        await pilot.press("p")
        assert drawn and "PAUSED" in header.render_line(0).text


async def test_the_age_of_the_last_report_counts_on_when_reports_stop(monkeypatch) -> None:
    """Once a report is late, the header counts its age every tick; not while paused, and on again after."""
    monkeypatch.setattr(age_module, "AGE_GRACE", 0.05)
    monkeypatch.setattr(age_module, "AGE_TICK", 0.05)
    now = [1000.0]
    snaps = demo_snapshots("trn2.48xlarge", 7, 2)
    app = make_app(clock=lambda: now[0])
    async with app.run_test(size=(200, 60)) as pilot:
        header = app.screen.query_one(HeaderBar)

        async def shows(text: str, tries: int = 100) -> bool:
            for _ in range(tries):
                await asyncio.sleep(0.02)
                await pilot.pause()
                if text in header.render_line(0).text:
                    return True
            return False

        app.accept_snapshot(snaps[0])
        assert await shows("updated 0s ago")
        now[0] += 4.0
        assert await shows("updated 4s ago")
        now[0] += 3.0
        assert await shows("updated 7s ago")
        await pilot.press("p")
        now[0] += 3.0
        assert not await shows("updated 10s ago", tries=15)
        await pilot.press("p")  # the view catches up at once, and the count goes on
        assert await shows("updated 10s ago")
        now[0] += 2.0
        assert await shows("updated 12s ago")


async def test_reports_on_time_leave_the_clock_asleep(monkeypatch) -> None:
    """While reports come more often than ``AGE_GRACE`` the UI thread is not woken to look at their age (a clock
    ticking every second cost ~5% of the dashboard's CPU at one report a second)."""
    monkeypatch.setattr(age_module, "AGE_GRACE", 1.0)  # reports come every 0.05 s: a stall of 0.95 s would tick
    snaps = demo_snapshots("trn2.48xlarge", 7, 30)
    app = make_app()
    ticks = []
    tick = app._tick_clock
    app._tick_clock = lambda: (ticks.append(1), tick())
    async with app.run_test(size=(200, 60)) as pilot:
        for s in snaps:
            app.accept_snapshot(s)
            await asyncio.sleep(0.05)
        await pilot.pause()
        assert ticks == []
        await until(lambda: ticks, what="a look at the late report's age")
        assert ticks == [1]  # the last report is late now (and the next look is due a second later)


async def test_a_panel_that_grows_lays_the_screen_out_once(trn2, monkeypatch) -> None:
    """Report 15 of the demo adds rows to the latency and executions panels. Textual's layout then told every
    widget whose virtual size changed, which asked for a second layout of the whole screen finding the same
    sizes (``settle_size``): one layout it must be."""
    from textual.screen import Screen

    layouts = []
    original = Screen._refresh_layout

    def counted(self: Screen, *args: object, **kwargs: object) -> None:
        layouts.append(type(self).__name__)
        original(self, *args, **kwargs)

    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        for s in trn2[:15]:
            app.accept_snapshot(s)
            await pilot.pause()
        heights = [p.size.height for p in app.screen.query("LatencyPanel, ExecPanel")]
        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        app.accept_snapshot(trn2[15])
        for _ in range(3):
            await pilot.pause()
        assert [p.size.height for p in app.screen.query("LatencyPanel, ExecPanel")] != heights
    assert layouts == ["DashboardScreen"]


async def test_the_body_still_gets_its_scrollbar_when_the_panels_outgrow_it(trn2) -> None:
    """In the apps layout at 200x30 the trn2 panels fit until report 11 makes them one row taller than the body:
    the second layout is gone, but the scrollbar must still appear and the last row can be scrolled to. The
    scrollbar's room is kept from the start (``scrollbar-gutter: stable``): when it appears, no panel changes
    width. Without it the core grid lost two columns and its k8s column at start-up on trn2 at 200x60, redrawn
    40 ms after the first data frame."""
    app = make_app(layout="apps")
    async with app.run_test(size=(200, 30)) as pilot:
        body = app.screen.query_one("#body")
        columns = app.screen.query_one("#columns")
        for s in trn2[:10]:
            app.accept_snapshot(s)
            await pilot.pause()
        assert not body.show_vertical_scrollbar and body.max_scroll_y == 0
        widths = [p.size.width for p in app.screen.query("Panel")]
        assert columns.size.width == 200 - body.styles.scrollbar_size_vertical
        app.accept_snapshot(trn2[10])
        await pilot.pause()
        await pilot.pause()
        assert body.show_vertical_scrollbar and body.max_scroll_y >= 1
        assert columns.size.width == 200 - body.styles.scrollbar_size_vertical
        assert [p.size.width for p in app.screen.query("Panel")] == widths

"""Direct repaints (widgets/paint.py): panels' changed cells skip the compositor, unless that would be wrong."""

from __future__ import annotations

from textual._compositor import ChopsUpdate, CompositorUpdate
from textual.app import App
from textual.geometry import Region
from textual.widget import Widget

from neuron_top.tui.render.paint import HIDDEN, placement
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.vcpu import VcpuPanel
from tests.helpers import demo_snapshots, feed, make_app, until


def quiet(app: App) -> bool:
    """Nothing left to do on screen: no layout, scroll or repaint pending, no callback waiting for a refresh, no
    message queued for the app, the screen or a widget (Textual's own bookkeeping, read, not changed)."""
    screen = app.screen
    return not (screen._layout_required or screen._scroll_required or screen._repaint_required
                or screen._dirty_widgets or screen._callbacks or app._message_queue.qsize()
                or any(node._message_queue.qsize() for node in (screen, *screen.walk_children())))


async def settled(app: App, polls: int = 5) -> None:
    """Until ``quiet`` holds ``polls`` times in a row, 20 ms apart. What the test needs before it watches one
    report: ``pilot.pause()`` guesses the app is done when the process's CPU time stands still, which on a loaded
    machine it also does while a layout is pending (seen: six panels refreshed by the previous report's layout)."""
    seen = 0

    def again() -> bool:
        nonlocal seen
        seen = seen + 1 if quiet(app) else 0
        return seen >= polls

    await until(again, what="the screen settled")


async def test_a_report_reaches_the_terminal_as_one_write_without_textuals_refresh(monkeypatch) -> None:
    """One report: every panel's changed cells go out in a single partial update, and no panel asks Textual
    for a refresh (which would re-render its lines through the compositor)."""
    refreshed: list[str] = []
    sent: list[CompositorUpdate] = []
    original = Widget.refresh

    def refresh(self: Widget, *regions: Region, **kw: bool) -> Widget:
        if isinstance(self, Panel):
            refreshed.append(type(self).__name__)
        return original(self, *regions, **kw)

    def capture(self: App, screen: object, renderable: object) -> None:
        renderable = getattr(renderable, "update", renderable)  # the engine's wrapper of Textual's update
        if isinstance(renderable, ChopsUpdate):
            sent.append(renderable)

    snaps = demo_snapshots("trn2.48xlarge", 7, 13)
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot, snaps[:11])  # the 11th report starts an app: the apps panel grows a row
        await settled(app)  # its layout done before the 12th report is watched
        monkeypatch.setattr(Widget, "refresh", refresh)
        monkeypatch.setattr(App, "_display", capture)
        app.accept_snapshot(snaps[11])
        await settled(app)
        grid, vcpu = app.screen.query_one(CoreGrid).region, app.screen.query_one(VcpuPanel).region
    assert refreshed == []
    assert len(sent) == 1
    spans = sent[0].spans
    assert any(grid.contains(x, y) for y, x, _ in spans) and any(vcpu.contains(x, y) for y, x, _ in spans)


async def test_a_toast_over_a_panel_sends_that_panel_through_textual() -> None:
    """At 80x24 the toast covers the bottom right of the screen: writing the cells of a panel under it directly
    would draw over the toast, so such a panel must go through Textual, which draws the toast on top. The core
    grid, at the top, is uncovered."""
    from textual.widgets._toast import Toast

    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 10))
        cores = app.screen.query_one(CoreGrid)
        panels = [p for p in app.screen.query(Panel) if p.display and p.region]
        assert all(placement(p) is not None for p in panels)
        app.notify("over a panel", timeout=60)
        for _ in range(3):
            await pilot.pause()
        toast = app.screen.query_one(Toast).region
        under = [p for p in panels if p.region.overlaps(toast)]
        assert under and all(placement(p) is None for p in under)
        assert placement(cores) == (cores.region, cores.region)


async def test_where_a_panel_is_is_found_once_per_layout(monkeypatch) -> None:
    """Finding a panel's place walks every widget above it, checking its styles reads five rules and its
    background walks its ancestors: all are kept until Textual's map of visible widgets is made anew (anything
    moved, appeared or scrolled, as the toast test above shows) or the theme changes."""
    from neuron_top.tui.render import paint

    app = make_app()
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot, snaps[:12])  # past the layout changes of the first reports
        walks: list[str] = []
        plain: list[str] = []
        real_place, real_plain = paint._place, paint._plain
        monkeypatch.setattr(paint, "_place", lambda w, v: walks.append(type(w).__name__) or real_place(w, v))
        monkeypatch.setattr(paint, "_plain", lambda w: plain.append(type(w).__name__) or real_plain(w))
        for s in snaps[12:16]:
            app.accept_snapshot(s)
            await pilot.pause()
        assert walks and len(walks) == len(set(walks))  # each panel at most once over four reports
        assert plain and len(plain) == len(set(plain))
        cores = app.screen.query_one(CoreGrid)
        assert paint._background(cores) == cores.background_colors[1]
        app.theme = "neuron-light"
        for s in snaps[16:]:
            app.accept_snapshot(s)
            await pilot.pause()
        assert paint._background(cores) == cores.background_colors[1]  # the new theme's, not the old one's


async def test_a_panel_scrolled_out_of_view_is_not_written_and_is_current_when_it_returns() -> None:
    app = make_app()
    snaps = demo_snapshots("inf2.48xlarge", 3, 20)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot, snaps[:10])
        body = app.screen.query_one("#body")
        body.scroll_to(y=60, animate=False)
        await pilot.pause()
        cores = app.screen.query_one(CoreGrid)
        assert placement(cores) is HIDDEN
        for s in snaps[10:]:
            app.accept_snapshot(s)
        await pilot.pause()
        body.scroll_to(y=0, animate=False)
        await pilot.pause()
        shown = cores.render_lines(Region(0, 0, cores.size.width, cores.size.height))
        assert [s.text.rstrip() for s in shown] == [s.text.rstrip() for s in cores._lines(cores.size.width)]


async def test_a_screen_over_the_dashboard_sends_updates_through_textual() -> None:
    """Under the help screen the dashboard is not current: nothing may be written over the help."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 10))
        cores = app.screen.query_one(CoreGrid)
        assert placement(cores) is not None
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen is not cores.screen
        assert placement(cores) is None


def test_quick_truecolor_passes_theme_lines_through_and_converts_ansi_ones_as_textual_does() -> None:
    from rich.segment import Segment
    from rich.style import Style
    from textual.color import Color
    from textual.filter import ANSIToTruecolor

    from neuron_top.tui.render.paint import QuickTruecolor

    theme = App().ansi_theme
    quick, textual = QuickTruecolor(theme), ANSIToTruecolor(theme)
    under = Color.parse("#0f1419")
    first = Style(bgcolor="#0f1419")
    quick.apply([Segment("x", first)], under)
    # An equal style made for another line: the conversion's cache answers with the first one (equal, not it).
    line = [Segment("abc", Style(color="#ff8800", bold=True)), Segment(" ", Style(bgcolor="#0f1419")),
            Segment("-", None)]
    assert quick.apply(line, under) is line
    ansi = [Segment("err", Style(color="red")), Segment(" ok", Style(color="#00ff00", dim=True))]
    converted = quick.apply(ansi, under)
    assert converted is not ansi and converted == textual.apply(ansi, under)
    assert converted[0].style.color.triplet is not None


async def test_the_app_keeps_quick_truecolor_when_the_terminal_theme_changes() -> None:
    from neuron_top.tui.render.paint import QuickTruecolor

    app = make_app()
    async with app.run_test(size=(80, 24)):
        assert [type(f) for f in app._filters] == [QuickTruecolor]
        app._refresh_truecolor_filter(app.ansi_theme_light)
        assert [type(f) for f in app._filters] == [QuickTruecolor]


def test_a_textual_whose_filter_has_another_shape_keeps_its_own(monkeypatch) -> None:
    from textual.filter import ANSIToTruecolor

    from neuron_top.tui.render.paint import QuickTruecolor, quicken_filters

    original = ANSIToTruecolor(App().ansi_theme)
    filters = [original]
    monkeypatch.delattr(original, "_terminal_theme")
    quicken_filters(filters)
    assert filters == [original]
    monkeypatch.undo()
    quicken_filters(filters)
    assert type(filters[0]) is QuickTruecolor


async def test_changed_cells_are_carried_line_by_line_and_dirty_once_per_line(monkeypatch) -> None:
    """Panels hand their changes over as ``(y, [(x1, x2), ...])`` (no Region per span); the StylesCache is told
    once per changed line, and the spans are the ones ``changed_regions`` finds."""
    from neuron_top.tui.render import spans

    app = make_app()
    snaps = demo_snapshots("trn2.48xlarge", 7, 16)
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot, snaps[:14])
        cores = app.screen.query_one(CoreGrid)
        dirty: list[tuple[int, ...]] = []
        real = cores._styles_cache.set_dirty
        monkeypatch.setattr(cores._styles_cache, "set_dirty",
                            lambda *regions: dirty.append(tuple(r.y for r in regions)) or real(*regions))
        before = list(cores._strips)
        app.accept_snapshot(snaps[14])
        after = list(cores._strips)
        lines = spans.changed_lines(before, after)
        assert lines and all(xs for _, xs in lines)
        assert [Region(x1, y, x2 - x1, 1) for y, xs in lines for x1, x2 in xs] == \
            spans.changed_regions(before, after)
        assert dirty == [tuple(y for y, _ in lines)]  # one call, one region per changed line
        assert sum(len(xs) for _, xs in lines) > len(lines)  # several spans on a line: fewer regions than spans
        await pilot.pause()

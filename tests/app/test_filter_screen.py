"""The ``/`` filter and ``--tag`` narrow the whole dashboard, not only the tab bar: the core grid (other apps'
cores dimmed, the title says the filter), the Apps, Latency and Executions panels and the "all" totals."""

from __future__ import annotations

import pytest

from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from tests.helpers import demo_snapshots, feed, make_app, type_at_once


def text_of(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_tag_narrows_every_panel_and_the_grid_says_so(size: tuple[int, int]) -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    others = [a.label for a in snaps[-1].apps if "serve" not in a.tag]
    app = make_app(snaps, tag="serve", layout="full")
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        view = app.screen.view
        assert [a.tag for a in view.snapshot.apps] == ["llama-70b-serve", "mistral-7b-serve"]
        assert view.app.is_all and {a.pid for a in view.app.apps} == {a.pid for a in view.snapshot.apps}
        grid = text_of(app.screen.query_one(CoreGrid))
        assert "filter" in grid.splitlines()[0]
        assert "[   ·]" in grid  # the cores of apps filtered out, dimmed
        checked = 0
        for panel in (AppsPanel, LatencyPanel, ExecPanel):
            shown = app.screen.query(panel)
            if not shown or not shown.first().display or not shown.first().size.height:
                continue
            checked += 1
            text = text_of(shown.first())
            for label in others:
                assert label not in text, (panel.__name__, label)
        assert checked
        await pilot.press("slash")
        await pilot.press("escape")  # cleared: every app back, the grid says no filter
        assert len(app.screen.view.snapshot.apps) == len(snaps[-1].apps)
        assert app.screen.view.snapshot.filter is None


async def test_keys_typed_right_after_slash_go_into_the_filter_not_to_the_dashboard() -> None:
    """Keys arriving together (typed fast, pasted, one ssh packet) after ``/``: the box was focused by a callback
    queued behind them, so ``/llama`` ran ``l`` (next layout) and ``a`` (previous app) on the dashboard, and
    ``/q`` quit. Posted back to back, as the driver posts what one read gave it."""
    from textual.widgets import Input

    app = make_app(demo_snapshots("trn2.48xlarge", 7, 20))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        layout, pid = app.layout_state, app.pid
        for text in ("/llama", "/q"):
            type_at_once(app, text)
            await pilot.pause()
            assert app.is_running
            assert app.screen.query_one("#filter", Input).value == text[1:]
            assert app.layout_state == layout and app.pid == pid
            await pilot.press("escape")
        type_at_once(app, "/a/b")  # in the box, "/" is a character
        await pilot.pause()
        assert app.screen.query_one("#filter", Input).value == "a/b"


async def test_a_filter_that_empties_the_panels_typed_fast_does_not_crash() -> None:
    """Two builds of a panel before one flush, the second shorter (``/xyz`` typed at once: every app filtered
    out): the first build's pending repaint named lines the panel no longer had, and the app died with an
    IndexError and a traceback (seen in tmux at 120x40, overview)."""
    from textual.widgets import Input

    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps, layout="overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("slash")
        type_at_once(app, "xyz")
        await pilot.pause()
        assert app.is_running and app.screen.query_one("#filter", Input).value == "xyz"
        assert not app.screen.view.snapshot.apps
        type_at_once(app, "\b\b\b")  # and back: every app, the panels taller again
        await pilot.pause()
        assert app.is_running and app.screen.query_one("#filter", Input).value == ""
        assert len(app.screen.view.snapshot.apps) == len(snaps[-1].apps)


async def test_a_filter_that_matches_no_app_says_so_not_that_there_is_none() -> None:
    """``--tag zzz`` on a machine running eight apps: the Apps, Latency and Executions panels said "no Neuron
    applications" and the memory tree "no device memory reported": untrue, and a different thing from a filter
    that lets nothing through."""
    from neuron_top.tui.widgets.memory import MemoryTree

    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps, tag="zzz", layout="full")
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        said = f"no app matches filter 'zzz' ({len(snaps[-1].apps)} apps hidden)"
        for panel in (AppsPanel, LatencyPanel, ExecPanel, MemoryTree):
            text = text_of(app.screen.query_one(panel))
            assert said in text, panel.__name__
            assert "no Neuron applications" not in text and "not reported" not in text


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_the_filter_box_is_drawn_above_the_footer(size: tuple[int, int]) -> None:
    """Docked to the bottom edge, the box was drawn under the footer at every size: ``/`` took the keyboard and
    nothing showed what was typed but the tab bar's end (as the replay's go-to and the fleet's filter once)."""
    from textual.widgets import Footer, Input

    app = make_app(demo_snapshots("inf2.48xlarge", 5, 5))
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        await pilot.press("slash", *"llama")
        await pilot.pause()
        box = app.screen.query_one("#filter", Input)
        assert box.has_focus and box.value == "llama"
        assert box.region.bottom <= app.screen.query_one(Footer).region.y
        assert app.screen.get_widget_at(box.region.x + 1, box.region.y)[0] is box

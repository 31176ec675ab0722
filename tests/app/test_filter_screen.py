"""The ``/`` filter and ``--tag`` narrow the whole dashboard, not only the tab bar: the core grid (other apps'
cores dimmed, the title says the filter), the Apps, Latency and Executions panels and the "all" totals."""

from __future__ import annotations

import pytest

from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from tests.helpers import demo_snapshots, feed, make_app


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

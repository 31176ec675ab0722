"""The tab bar scrolls to the selected app; 300 runtimes are reachable by a/d and by the picker's filter."""

from __future__ import annotations

import json
from functools import lru_cache

from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot
from neuron_top.tui.screens.picker import AppPicker
from neuron_top.tui.widgets.tabs import AppTabs
from tests.helpers import T0, demo_snapshots, feed, make_app


@lru_cache(maxsize=1)
def many_runtimes(n: int = 300) -> tuple[Snapshot, ...]:
    """A trn2 demo report with ``n`` runtimes (copies of its own, each with its own pid and tag)."""
    from neuron_top.sources.demo import generate

    doc = json.loads(next(iter(generate("trn2.48xlarge", 7, 1))))
    base = doc["neuron_runtime_data"]
    runtimes = []
    for i in range(n):
        rt = json.loads(json.dumps(base[i % len(base)]))
        rt["pid"] = 10_000 + i
        rt["neuron_runtime_tag"] = f"job-{i:03d}-{rt['neuron_runtime_tag']}"
        runtimes.append(rt)
    doc["neuron_runtime_data"] = runtimes
    report, problems = decode_report(json.dumps(doc).encode())
    return (Snapshot(report, T0, 1, problems),)


def bar(app) -> str:
    return app.screen.query_one(AppTabs).render_line(0).text


async def test_the_selected_tab_is_always_drawn_at_120_columns() -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        apps = app.visible_apps()
        assert len(apps) >= 7
        for n in range(2, min(len(apps) + 2, 10)):
            await pilot.press(str(n))
            label = apps[n - 2].label
            text = bar(app)
            assert f">{label}<" in text, (n, text)
            assert len(text) == 120
        assert "‹" in bar(app)  # tabs scrolled off the left are counted
        await pilot.press("1")
        assert ">all<" in bar(app) and "‹" not in bar(app)


async def test_300_runtimes_are_reached_by_a_and_d_and_the_bar_follows() -> None:
    app = make_app(many_runtimes())
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        apps = app.visible_apps()
        assert len(apps) == 300
        assert "300 apps" in bar(app) and "›" in bar(app)
        await pilot.press("a")  # from "all" back round to the last app
        assert app.pid == apps[-1].pid
        assert f">{apps[-1].label}<" in bar(app) and "‹" in bar(app) and "›" not in bar(app)
        for _ in range(12):
            await pilot.press("d")
        assert app.pid == apps[10].pid and f">{apps[10].label}<" in bar(app)
        assert "[1]" not in bar(app)  # scrolled: "all" and the first apps are off the left


async def test_the_picker_filters_300_apps_and_selects_one() -> None:
    app = make_app(many_runtimes())
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("o")
        assert isinstance(app.screen, AppPicker)
        await pilot.press(*"job-271")
        options = app.screen.query_one("#picker-list")
        assert options.option_count == 1
        await pilot.press("enter")
        assert not isinstance(app.screen, AppPicker)
        assert app.pid == 10_271
        assert ">job-271-" in bar(app)
        await pilot.press("o", "escape")  # cancel keeps the selection
        assert app.pid == 10_271
        await pilot.press("o")
        app.screen.query_one("#picker-filter").value = ""
        await pilot.pause()
        await pilot.press("home")  # in the input: its start; the list still highlights the current app
        options = app.screen.query_one("#picker-list")
        assert options.get_option_at_index(options.highlighted).id == "10271"
        await pilot.press(*["pageup"] * 28)
        await pilot.press("enter")
        assert app.pid is None  # "all apps" heads the list


async def test_a_click_on_the_more_mark_scrolls_the_bar() -> None:
    app = make_app(many_runtimes())
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        tabs = app.screen.query_one(AppTabs)
        more = bar(app).index("›")
        await pilot.click(AppTabs, offset=(more, 0))
        await pilot.pause()
        assert app.pid is not None and f">{app.screen.view.app.label}<" in tabs.render_line(0).text


async def test_tag_presets_the_slash_filter_which_shows_and_clears_and_a_source_filter_is_said_apart() -> None:
    """``--tag`` is the ``/`` filter, on screen and editable: clearing it brings every app back. A ``tag_filter``
    in the ``-c`` config (neuron-monitor's own) is said in the header as such, not in the ``/`` filter."""
    from neuron_top.tui.widgets.header import HeaderBar

    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps, tag="serve$", source_filter="^(llama|mistral|bert)")
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        every = len(snaps[-1].apps)
        assert {a.tag for a in app.visible_apps()} == {"llama-70b-serve", "mistral-7b-serve"}
        assert "filter /serve$/" in bar(app) and "llama" not in bar(app).split("filter")[1]
        header = app.screen.query_one(HeaderBar).render_line(0).text
        assert "source filter: tag_filter ^(llama|mistral|bert)" in header and "serve$" not in header
        await pilot.press("slash")
        box = app.screen.query_one("#filter")
        assert box.value == "serve$" and box.has_focus  # visible, editable
        await pilot.press("escape")  # clears it: every app the source sent is back
        assert len(app.visible_apps()) == every and "filter /" not in bar(app)
        assert "source filter: tag_filter" in app.screen.query_one(HeaderBar).render_line(0).text


async def test_keys_typed_right_after_o_go_into_the_pickers_filter() -> None:
    """``o`` and part of a name arriving together (typed fast, pasted, one ssh packet): the picker opened, but the
    letters went to the dashboard (which does nothing while another screen is on top) before the picker's box had
    the focus, and were lost. Posted back to back, as the driver posts what one read gave it."""
    from tests.helpers import type_at_once, until

    app = make_app(many_runtimes())
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        layout = app.layout_state
        type_at_once(app, "ojob-271!")
        box = lambda: "".join(b.value for b in app.screen.query("#picker-filter"))  # noqa: E731
        await until(lambda: isinstance(app.screen, AppPicker) and box().endswith("!"), what="the picker's filter")
        assert box() == "job-271!"
        assert app.screen.query_one("#picker-list").option_count == 0
        assert app.layout_state == layout
        type_at_once(app, "o")  # in the picker's box, "o" is a character, not a second picker
        await until(lambda: box().endswith("o"), what="o typed")
        assert box() == "job-271!o" and len(app.screen_stack) == 3  # the default screen, the dashboard, the picker

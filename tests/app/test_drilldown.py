"""Drill-down screens own their keys, open one another by keyboard and mouse, and share one breadcrumb."""

from __future__ import annotations

import pytest

from neuron_top.selection import app_cores
from neuron_top.tui.screens.app_detail import AppScreen
from neuron_top.tui.screens.detail import CoreScreen, DeviceScreen, DrillScreen
from neuron_top.tui.screens.problems import ProblemsScreen
from neuron_top.tui.widgets.app_cores import AppCoresPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.crumb import Breadcrumb
from neuron_top.tui.widgets.device_detail import DeviceDetail
from neuron_top.tui.widgets.tabs import AppTabs
from tests.helpers import demo_snapshots, feed, make_app


@pytest.fixture
def trn2():
    return demo_snapshots("trn2.48xlarge", 7, 20)


def dashboard_state(app) -> tuple[object, ...]:
    return (app.flops, app.physical, app.pid, app.tag_text, app.tick)


async def open_app(pilot, n: int = 2) -> AppScreen:
    """Tab ``n`` selected on the dashboard, then its app screen opened with Enter on the tab bar."""
    app = pilot.app
    await pilot.press(str(n))
    app.screen.query_one(AppTabs).focus()
    await pilot.press("enter")
    assert isinstance(app.screen, AppScreen)
    return app.screen


@pytest.mark.parametrize("where", ["core", "device", "problems"])
async def test_dashboard_keys_do_nothing_behind_a_drill_down_screen(trn2, where: str) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        grid.focus()
        if where == "core":
            await pilot.press("enter")
        elif where == "device":
            await pilot.press("left", "enter")
        else:
            await pilot.press("E")
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        before = dashboard_state(app)
        await pilot.press("f", "v", "d", "5", "a", "x", "slash")
        assert app.screen is screen
        assert dashboard_state(app) == before
        for key in ("f", "v", "d", "a", "slash", "5"):  # nor does the footer offer them
            active = app.active_bindings.get(key)
            assert active is None or active.node is not app, key


async def test_the_app_screen_owns_f_visibly_and_ignores_the_other_view_keys(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        screen = await open_app(pilot, 3)
        pid = app.pid
        cores = screen.query_one(AppCoresPanel)
        assert "%" in cores.render_line(2 + (cores.render_line(1).text.startswith(" runtime vCPU"))).text
        await pilot.press("v", "d", "5", "a")
        assert (app.physical, app.pid) == (False, pid) and app.screen is screen
        await pilot.press("f")  # FLOPS in its own core cells: shown, and in the footer
        assert app.flops and "TF" in "".join(cores.render_line(y).text for y in range(cores.size.height))
        assert "FLOPS" in {b.binding.description for b in app.active_bindings.values()}


async def test_app_to_core_and_back_by_keyboard(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        screen = await open_app(pilot, 2)
        label = app.screen.view.app.label if app.screen.view.pid else screen._shown.app.label
        owned = app_cores(screen._shown.app, trn2[-1].cores_per_device)
        assert screen.query_one(AppCoresPanel).has_focus
        await pilot.press("right", "enter")
        assert isinstance(app.screen, CoreScreen) and app.screen.index == owned[1]
        assert app.screen.crumb.text() == f" dashboard › app {label} (pid {app.pid}) › core {owned[1]}"
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("escape")
        assert isinstance(app.screen.query_one(CoreGrid), CoreGrid)


async def test_app_to_core_and_back_by_mouse(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        screen = await open_app(pilot, 2)
        panel = screen.query_one(AppCoresPanel)
        _, cw, first = panel._grid
        owned = app_cores(screen._shown.app, trn2[-1].cores_per_device)
        await pilot.click(AppCoresPanel, offset=(cw + 2, first))  # the second cell of the first row
        await pilot.pause()
        assert isinstance(app.screen, CoreScreen) and app.screen.index == owned[1]
        crumb = app.screen.crumb.text()
        await pilot.click(Breadcrumb, offset=(crumb.index("app ") + 1, 0))  # one step up: the app screen
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("enter")
        assert isinstance(app.screen, CoreScreen)
        await pilot.click(Breadcrumb, offset=(2, 0))  # "dashboard": all the way back
        await pilot.pause()
        assert isinstance(app.screen.query_one(CoreGrid), CoreGrid)


async def test_the_device_screen_opens_its_cores(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        grid.focus()
        for _ in range(2 // grid._shape.per_row):  # to ND2's row (devices stand side by side when they fit)
            await pilot.press("down")
        await pilot.press("left", "enter")
        dev = app.screen
        assert isinstance(dev, DeviceScreen) and dev.device == 2
        assert dev.query_one(DeviceDetail).has_focus
        await pilot.press("down", "enter")
        cpd = trn2[-1].cores_per_device
        assert isinstance(app.screen, CoreScreen) and app.screen.index == 2 * cpd + 1
        assert app.screen.crumb.text() == f" dashboard › device ND2 › core {2 * cpd + 1}"
        await pilot.press("escape")
        assert app.screen is dev
        detail = dev.query_one(DeviceDetail)
        row = next(y for y, i in detail._rows.items() if i == 2 * cpd + 3)
        await pilot.click(DeviceDetail, offset=(5, row - int(detail.scroll_offset.y)))
        await pilot.pause()
        assert isinstance(app.screen, CoreScreen) and app.screen.index == 2 * cpd + 3


async def test_the_core_cursor_starts_on_the_first_core_of_the_selected_app(trn2) -> None:
    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        apps = app.visible_apps()
        cpd = trn2[-1].cores_per_device
        n, target = next((n, a) for n, a in enumerate(apps, start=2) if min(app_cores(a, cpd)) > 0)
        await pilot.press(str(n))
        app.screen.query_one(CoreGrid).focus()
        await pilot.press("enter")
        assert isinstance(app.screen, CoreScreen) and app.screen.index == min(app_cores(target, cpd))


async def test_every_drill_down_screen_has_the_same_breadcrumb_and_the_header(trn2) -> None:
    from neuron_top.tui.widgets.header import HeaderBar

    app = make_app(trn2)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        seen = []

        def look() -> None:
            s = app.screen
            seen.append(type(s))
            crumbs = list(s.query(Breadcrumb))
            assert len(crumbs) == 1 and crumbs[0].text().startswith(" dashboard")
            assert len(list(s.query(HeaderBar))) == 1

        await open_app(pilot, 2)
        look()
        await pilot.press("enter")
        look()
        await pilot.press("escape", "escape")
        app.screen.query_one(CoreGrid).focus()
        await pilot.press("left", "enter")
        look()
        await pilot.press("escape", "E")
        look()
        assert seen == [AppScreen, CoreScreen, DeviceScreen, ProblemsScreen]


async def test_a_breadcrumb_too_long_for_the_screen_ends_in_an_ellipsis(trn2) -> None:
    """At 80 columns the app screen's crumb ended "pod batch/eval-harness-d8prgmlx69-ztvh": the pod's name cut
    by one letter with nothing to say so, which reads as another pod."""
    app = make_app(trn2)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot)
        screen = await open_app(pilot, 2)
        await pilot.pause()
        crumb = screen.query_one(Breadcrumb)
        full, drawn = crumb.text(), crumb.render_line(0).text
        assert len(full) > 80 and "pod " in full
        assert len(drawn) == 80 and drawn.endswith("…") and full.startswith(drawn[:-1])
    short = make_app(trn2)
    async with short.run_test(size=(200, 24)) as pilot:  # room for it all: drawn whole, no "…"
        await feed(pilot)
        screen = await open_app(pilot, 2)
        await pilot.pause()
        crumb = screen.query_one(Breadcrumb)
        assert crumb.render_line(0).text.rstrip() == crumb.text().rstrip()

"""The main screen's layout: exact core cells at every width, what the first screen shows, panels and layouts by
key (remembered), focus and scrolling. Each "seen" test is a thing the issue saw that failed before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from neuron_top.decode import decode_report
from neuron_top.layouts import PANELS, PRESETS
from neuron_top.settings import SettingsStore
from neuron_top.snapshot import Snapshot
from neuron_top.sources.demo import generate
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemoryTree
from neuron_top.tui.widgets.panel import SHRINK_AFTER, Panel
from neuron_top.tui.widgets.vcpu import VcpuPanel
from tests.helpers import T0, demo_snapshots, feed, make_app, until
from tests.screen_text import svg_lines

CELL = re.compile(r"\[([^\[\]]*)\]")


def screen(app) -> list[str]:
    return svg_lines(app.export_screenshot())


def grid_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"ND\d+ ", line)]


def edited(instance: str, n: int, edit) -> list[Snapshot]:
    """``n`` demo reports, each changed by ``edit(i, doc)``."""
    out = []
    for i, data in enumerate(generate(instance, 3, n)):
        doc = json.loads(data)
        edit(i, doc)
        report, problems = decode_report(json.dumps(doc).encode())
        out.append(Snapshot(report, T0 + i, i + 1, problems))
    return out


FLOPS = [0.0, 0.004e12, 1.5e12, 9.99e12, 10.0e12, 56.1e12, 99.996e12, 123.4e12, 999.9e12]
"""FLOPS per core from 0 to 999 TF, the widths that shifted the rows before (under 10 TF, over 100 TF)."""


def _flops(i: int, doc: dict) -> None:
    k = 0
    for rt in doc["neuron_runtime_data"]:
        for core in rt["report"]["neuroncore_counters"]["neuroncores_in_use"].values():
            core["effective_flops"] = FLOPS[k % len(FLOPS)]
            k += 1


def check_cells(rows: list[str], width: int, count: int | None = None) -> None:
    """Every core cell closed, all one width, no line longer than the screen; ``count`` cells a device."""
    assert rows, "no core grid rows on screen"
    widths = set()
    for row in rows:
        assert len(row) <= width
        assert row.count("[") == row.count("]"), row  # a cut or overrun value leaves a bracket open
        cells = CELL.findall(row)
        assert cells and all(re.fullmatch(r" *(\d+(\.\d+)?%?|-)", c) for c in cells), row
        widths |= {len(c) for c in cells}
        if count is not None:
            assert len(cells) % count == 0, row
    assert len(widths) == 1, widths


# --- seen 1: the FLOPS view cut the last column, shifted rows and ran into the memory panel ---------------------

async def test_seen_1_flops_cells_are_exact_at_every_width_for_0_to_999_tf() -> None:
    snaps = edited("trn2.48xlarge", 3, _flops)
    app = make_app(snaps)
    async with app.run_test(size=(80, 50)) as pilot:
        await feed(pilot)
        await pilot.press("f")
        for width in (*range(80, 251, 10), 99, 101, 159, 161, 199, 201):
            await pilot.resize_terminal(width, 50)
            await pilot.pause()
            lines = screen(app)
            title = next(line for line in lines if line.startswith(" NeuronCore "))
            assert "TFLOPS per core" in title, title
            check_cells(grid_rows(lines), width, count=4)
            cells = [c for row in grid_rows(lines) for c in CELL.findall(row)]
            assert {"0.0", "1.5", "10.0", "56.1", "999.9"} <= {c.strip() for c in cells}  # 1 decimal to 999.9


async def test_seen_1_the_title_names_what_the_cells_show_and_v_keeps_every_column_at_80() -> None:
    app = make_app(demo_snapshots("trn2.48xlarge", 7, 20))
    async with app.run_test(size=(80, 40)) as pilot:
        await feed(pilot)
        await pilot.press("f", "v")  # FLOPS, then the physical cores: utilization is what they report
        lines = screen(app)
        title = next(line for line in lines if "physical cores" in line)
        assert "physical cores: utilization %" in title and "no FLOPS per physical core" in title
        check_cells(grid_rows(lines), 80, count=8)  # 4 logical cores x 2 physical, none cut at 80 columns
        await pilot.press("v")
        title = next(line for line in screen(app) if line.startswith(" NeuronCore "))
        assert "effective TFLOPS per core (total" in title


async def test_cells_are_exact_in_every_view_and_size_for_every_instance() -> None:
    """The utilization, FLOPS and v3d cells of each demo machine, from 80 to 250 columns."""
    for instance in ("inf1.xlarge", "inf2.48xlarge", "trn1.32xlarge", "trn2.48xlarge"):
        app = make_app(demo_snapshots(instance, 7, 6))
        async with app.run_test(size=(80, 40)) as pilot:
            await feed(pilot)
            for keys in ((), ("f",), ("v",)):
                await pilot.press(*keys)
                for width in (80, 123, 160, 250):
                    await pilot.resize_terminal(width, 40)
                    await pilot.pause()
                    check_cells(grid_rows(screen(app)), width)
                await pilot.press(*keys)  # back to utilization


# --- seen 2: the vCPU line cut the context-switch rate with no ellipsis ------------------------------------------

def _busy_vcpus(i: int, doc: dict) -> None:
    """Every kind of CPU time in two digits and 133.7k context switches a second: the longest vCPU line."""
    g = doc["system_data"]["vcpu_usage"]
    g["average_usage"] = {"user": 44.4, "nice": 10.5, "system": 13.4, "io_wait": 10.2, "irq": 10.1,
                          "soft_irq": 10.3, "idle": 1.1}
    g["context_switch_count"] = round(133_700 * g["period"])


async def test_seen_2_the_vcpu_panel_never_cuts_a_number_without_a_mark() -> None:
    snaps = edited("trn2.48xlarge", 4, _busy_vcpus)
    app = make_app(snaps)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        lines = screen(app)
        assert any("ctxsw 133.7k/s" in line for line in lines)  # the whole rate, at 160x50
        assert any(re.search(r"(softirq|si) 10.3%", line) for line in lines)  # the last kind too
        panel = app.screen.query_one(VcpuPanel)
        for width in range(30, 251, 7):
            for strip in panel.build(panel.view, width):
                text = strip.text
                assert strip.cell_length <= width, (width, text)
                if "ctxsw" in text and "ctxsw 133.7k/s" not in text:
                    assert text.rstrip().endswith("…"), (width, text)  # cut, and says so


# --- deliverable 1: one screen at 120x40 ---------------------------------------------------------------------

@pytest.mark.parametrize("instance", ["inf1.xlarge", "inf2.48xlarge", "trn1.32xlarge", "trn2.48xlarge"])
async def test_one_screen_at_120x40_shows_everything_that_matters(instance: str) -> None:
    snaps = demo_snapshots(instance, 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        body = app.screen.query_one("#body")
        assert body.max_scroll_y == 0, "the overview fits 120x40 without scrolling"
        text = "\n".join(screen(app))
        last = snaps[-1]
        for needle in ("utilization % (avg", "vCPU", "Memory", "ECC", "p50", "p99", "err/s", " bad"):  # bad: the title
            assert needle in text, needle
        assert f"ND{last.device_count - 1} " in text  # every device row
        for a in last.apps:  # every app with its latency
            assert a.label[:14] in text, a.label


async def test_a_big_terminal_shows_more_and_a_small_one_scrolls() -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(250, 80)) as pilot:
        await feed(pilot)
        await pilot.pause()
        shown = {p.id for p in app.screen.query(Panel) if p.display}
        assert {"latency", "vcpu-grid", "executions"} <= shown  # the overview's extras fit
        assert app.screen.query_one("#body").max_scroll_y == 0
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.pause()
        shown = {p.id for p in app.screen.query(Panel) if p.display}
        assert shown == {*PRESETS["overview"], "core-history"}  # its "all" line fits under the left column
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.screen.has_class("-narrow") and app.screen.query_one("#body").max_scroll_y > 0


async def test_the_vcpu_grid_and_the_core_history_both_fit_at_200x60_from_the_start() -> None:
    """On trn2 at 200x60 the core history took the vCPU grid's place: the fit counted the vCPU summary's heat
    strip as taken, though the grid replaces it, so the grid fitted only if it was shown already (after 250x80,
    not from the start). Both fit (the strip's rows go to the grid), without scrolling, whichever way the
    terminal got there; and when the ECC panel then lists devices with errors, the extras are fitted again
    rather than the screen scrolling."""
    from neuron_top.tui.widgets.ecc import EccPanel

    def ecc_later(i: int, doc: dict) -> None:
        for d in doc["system_data"]["neuron_hw_counters"]["neuron_devices"]:
            for k in ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected"):
                d[k] = 0
            if i == 7 and d["neuron_device_index"] in (2, 5, 9, 13):
                d["mem_ecc_corrected"] = 1

    snaps = edited("trn2.48xlarge", 8, ecc_later)

    async def shown_at(*sizes: tuple[int, int]) -> set[str]:
        app = make_app(snaps[:7])
        async with app.run_test(size=sizes[0]) as pilot:
            await feed(pilot)
            for size in sizes[1:]:
                await pilot.resize_terminal(*size)
            screen, body = app.screen, app.screen.query_one("#body")
            await until(lambda: screen._extras and screen.size == sizes[-1] and body.size.height == sizes[-1][1] - 4,
                        what="the extras fitted at the last size")
            await pilot.pause()
            shown = {p.id for p in screen.query(Panel) if p.display}
            assert body.max_scroll_y == 0, shown
            assert not screen.query_one(VcpuPanel).strip  # the grid shows every vCPU instead
            await feed(pilot, snaps[7:])  # corrected ECC on four devices: the ECC panel grows by rows
            await until(lambda: len(screen.query_one(EccPanel)._lines(body.size.width // 2)) > 1, what="ECC rows")
            await until(lambda: "vcpu-grid" not in screen._extras, what="the extras fitted again")
            await pilot.pause()
            assert body.max_scroll_y == 0
            return shown

    fresh = await shown_at((200, 60))
    assert {"core-history", "vcpu-grid", "latency"} <= fresh
    assert await shown_at((250, 80), (200, 60)) == fresh


# --- deliverable 2: panels and layouts by key, remembered# --- deliverable 2: panels and layouts by key, remembered --------------------------------------------------------

async def test_panel_keys_and_layouts_are_remembered(tmp_path: Path) -> None:
    path = tmp_path / "neuron-top" / "config.toml"
    snaps = demo_snapshots("inf2.48xlarge", 7, 5)
    app = make_app(snaps, settings=SettingsStore.open(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        await pilot.press("C")
        await pilot.pause()
        assert not grid.display and "panels = [" in path.read_text()
        built = grid._cache_key
        await feed(pilot, snaps[:2])
        assert grid._cache_key == built  # a hidden panel is not built
        await pilot.press("C", "l")
        await pilot.pause()
        assert app.layout_state.name == "full" and 'layout = "full"' in path.read_text()
        assert {p.id for p in app.screen.query(Panel) if p.display} == {p.id for p in PANELS}
        await pilot.press("K", "t")
        await pilot.pause()
        theme = app.theme
    text = path.read_text()
    assert f'theme = "{theme}"' in text and '"ecc"' not in text
    again = make_app(snaps, settings=SettingsStore.open(path))
    async with again.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        assert again.theme == theme and again.layout_state.name == "full"
        assert not again.screen.query_one("#ecc").display
    flagged = make_app(snaps, settings=SettingsStore.open(path), layout="cores")
    async with flagged.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        assert {p.id for p in flagged.screen.query(Panel) if p.display} == set(PRESETS["cores"])


async def test_theme_on_the_command_line_is_for_one_run_and_a_picked_one_is_remembered(tmp_path: Path) -> None:
    """``--theme`` as ``--layout``: for this run. It used to be written over the remembered theme as soon as the
    app started (the config file says it is written when you change the theme, with t)."""
    path = tmp_path / "neuron-top" / "config.toml"
    path.parent.mkdir()
    path.write_text('theme = "solarized-dark"\n')
    snaps = demo_snapshots("inf2.48xlarge", 7, 3)
    app = make_app(snaps, settings=SettingsStore.open(path), theme="neuron-light")
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        assert app.theme == "neuron-light"
        await pilot.press("l")  # a layout change writes the file: the theme in it stays
        await pilot.pause()
        assert 'layout = "full"' in path.read_text() and 'theme = "solarized-dark"' in path.read_text()
        await pilot.press("t")
        await pilot.pause()
        picked = app.theme
    assert picked != "neuron-light" and f'theme = "{picked}"' in path.read_text()


async def test_a_broken_config_is_reported_and_the_app_runs(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("layout = [\n")
    app = make_app(demo_snapshots("inf1.xlarge", 7, 3), settings=SettingsStore.open(path))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await feed(pilot)
        assert any("not valid TOML" in n.message for n in app._notifications)
        await pilot.press("l")
        await pilot.pause()
        assert app.layout_state.name == "full"
        assert any("not saved" in n.message for n in app._notifications)
    assert path.read_text() == "layout = [\n"


async def test_layout_keys_do_nothing_on_a_drill_down_screen() -> None:
    app = make_app(demo_snapshots("inf1.xlarge", 7, 3))
    async with app.run_test(size=(100, 30)) as pilot:
        await feed(pilot)
        await pilot.press("tab", "enter")  # the core screen
        assert not isinstance(app.screen, type(app.screen_stack[1]))
        await pilot.press("l", "C")
        assert app.layout_state.name == "overview" and not app.layout_state.custom


async def test_enter_on_an_app_row_opens_the_app_and_the_grid_title_averages_its_own_cores() -> None:
    from neuron_top.tui.screens.app_detail import AppScreen

    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("3")
        chosen = snaps[-1].app(app.pid)
        title = app.screen.query_one(CoreGrid).render_line(0).text
        assert f"(avg {snaps[-1].app_util(chosen):.1f}%)" in title  # not diluted by the zeros of other cores
        app.screen.query_one(AppsPanel).focus()
        await pilot.pause()
        assert app.screen.query_one(AppsPanel).cursor == 1  # on the selected app
        await pilot.press("down", "enter")
        assert isinstance(app.screen, AppScreen) and app.screen.pid == snaps[-1].apps[2].pid


# --- seen 7 / deliverable 8: focus and scrolling -----------------------------------------------------------------

async def test_seen_7_the_first_tab_lands_on_the_core_grid_with_a_visible_cursor() -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("3")  # an app: the cursor starts on the first core it uses
        await pilot.press("tab")
        grid = app.screen.query_one(CoreGrid)
        assert app.focused is grid
        app_cores = snaps[-1].cores_of(snaps[-1].app(app.pid))
        assert grid.cursor == snaps[-1].core_location(app_cores[0])
        cursor = grid.style("cursor")
        assert any(seg.style == cursor for strip in grid._strips for seg in strip)
        assert "core " in grid.render_line(0).text  # the title says where the cursor is


async def test_seen_7_x_brings_the_tree_into_view() -> None:
    app = make_app(demo_snapshots("trn2.48xlarge", 7, 20))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        for _ in range(2):  # open, then closed: both times the tree's top and first rows are on screen
            await pilot.press("x")
            await pilot.pause()
            await pilot.pause()
            tree = app.screen.query_one(MemoryTree)
            body = app.screen.query_one("#body")
            assert tree.display
            top = tree.region.y - body.region.y  # where the tree's title is, in the body's rows on screen
            assert top >= 0 and top + MemoryTree.HEADER_ROWS + 3 <= body.size.height, (top, body.scroll_y)
            lines = screen(app)
            assert any("Memory Usage Details" in line for line in lines)
            assert any("ND 0" in line for line in lines)


async def test_seen_7_panels_keep_their_height_while_an_app_goes_idle() -> None:
    first: list[int] = []

    def idle_from_5(i: int, doc: dict) -> None:
        if i == 0:
            first.extend(rt["pid"] for rt in doc["neuron_runtime_data"])
        doc["neuron_runtime_data"] = [rt for rt in doc["neuron_runtime_data"] if rt["pid"] in first]  # same apps
        if i >= 5:
            stats = doc["neuron_runtime_data"][0]["report"]["execution_stats"]
            stats["latency_stats"] = {"total_latency": None, "device_latency": None}
            stats["execution_summary"] = dict.fromkeys(stats["execution_summary"], 0)

    snaps = edited("inf2.48xlarge", 5 + 20 + SHRINK_AFTER + 5, idle_from_5)
    app = make_app(layout="full", history=20)  # after 20 idle reports the app has no latency history left
    async with app.run_test(size=(200, 80)) as pilot:
        await feed(pilot, snaps[:5])
        panels = [app.screen.query_one(AppsPanel), app.screen.query_one(LatencyPanel)]
        heights = [p.size.height for p in panels]
        for s in snaps[5:]:
            app.accept_snapshot(s)
        await pilot.pause()
        assert [p.size.height for p in panels] == heights

"""The dashboard panels and the app drill-down, mounted in a tiny app and read back as rendered text."""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec
import pytest
from rich.style import Style
from textual.containers import VerticalScroll

from neuron_top.alerts import new_uncorrected
from neuron_top.decode import decode_report
from neuron_top.history import History
from neuron_top.memtree import build_tree
from neuron_top.schema import Report
from neuron_top.snapshot import Snapshot
from neuron_top.tui.screens.app_detail import AppScreen
from neuron_top.tui.widgets.app_cores import AppCoresPanel
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.ecc import EccPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.models import ModelsPanel
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.vcpu import VcpuGrid
from neuron_top.view import View
from tests.panel_app import PanelApp, sync
from tests.panel_views import REPORTS, fixture_view, hand_view, snapshots, view_of

TRN1N = "trn1n_32xlarge_32runtimes_cwagent_test.json"
INF2 = "inf2_xlarge_rt2.30.51_trimmed_pantheon.json"


def lines(panel: Panel) -> list[str]:
    return [panel.render_line(y).text for y in range(panel.size.height)]


def text(panel: Panel) -> str:
    return "\n".join(lines(panel))


def only(*panels: type[Panel]):
    return lambda: [p(id=p.__name__.lower()) for p in panels]


# --- vCPU ---

def _vcpu_snaps(busy: list[float | None]) -> list[Snapshot]:
    """One report per value: vCPU 0 is ``busy`` percent busy (None: the report has no vCPU data), vCPU 1 idle."""
    out = []
    for i, b in enumerate(busy):
        usage = {} if b is None else {"0": {"user": b, "idle": 100.0 - b}, "1": {"idle": 100.0}}
        data = msgspec.json.encode({"system_data": {"vcpu_usage": {
            "period": 1.0, "average_usage": {"user": 1.0, "idle": 99.0}, "usage_data": usage}}})
        report, problems = decode_report(data)
        out.append(Snapshot(report, 1700000000.0 + i, seq=i, problems=problems))
    return out


def _spark(panel: Panel, cpu: int) -> str:
    row = next(r for r in lines(panel) if f" {cpu:>3} " in r)
    return row.split(f" {cpu:>3} ")[1][:6]


@sync
async def test_the_histories_say_one_cell_span_from_the_reports_spacing() -> None:
    """The built-in collector's first report covers a quarter second: the vCPU history said "549ms per cell"
    while the NeuronCore history (its own rule) said nothing; then both followed each report's period. One rule
    now: two reports' spacing as the history holds it, none before the second report."""
    from neuron_top.tui.widgets.core_history import CoreHistory

    snaps = _vcpu_snaps([10.0, 20.0, 30.0, 40.0])
    times = [1700000000.0, 1700000000.27, 1700000005.27, 1700000010.27]  # a quarter second, then every 5 s
    snaps = [Snapshot(s.report, t, seq=s.seq) for s, t in zip(snaps, times, strict=True)]
    history = History(maxlen=120)
    history.push(snaps[0])
    app = PanelApp(View(snapshot=snaps[0], history=history, tick=1), only(VcpuGrid, CoreHistory))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert "per cell" not in lines(app.query_one(VcpuGrid))[0]  # one report: no spacing yet
        for n in (2, 3, 4):
            history.push(snaps[n - 1])
            app.set_view(View(snapshot=snaps[n - 1], history=history, tick=n))
            await pilot.pause()
        for panel in (VcpuGrid, CoreHistory):
            assert "10s per cell" in lines(app.query_one(panel))[0], panel.__name__


@sync
async def test_vcpu_sparkline_cells_are_two_report_means_and_move_every_second_report() -> None:
    snaps = _vcpu_snaps([100.0, 100.0, 0.0, 100.0, None, None, 50.0, 50.0, 100.0, 100.0])
    history = History(maxlen=120)
    history.extend(snaps[:8])

    def view(n: int) -> View:
        return View(snapshot=snaps[n - 1], history=history, tick=n)

    app = PanelApp(view(8), only(VcpuGrid))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(VcpuGrid)
        # cells: (100, 100) full, (0, 100) half, (None, None) a gap never a zero, (50, 50) half; older: gaps
        assert _spark(panel, 0) == "  █▄ ▄"
        assert "2s per cell" in lines(panel)[0]
        before = list(panel._strips)
        history.push(snaps[8])  # the 9th report starts a new cell: nothing moves yet
        app.set_view(view(9))
        await pilot.pause()
        assert _spark(panel, 0) == "  █▄ ▄"
        assert panel._strips[-1] is before[-1]  # the same strips: the diff skips them at once
        history.push(snaps[9])  # the 10th completes it
        app.set_view(view(10))
        await pilot.pause()
        assert _spark(panel, 0) == " █▄ ▄█"


@sync
async def test_vcpu_history_without_per_vcpu_data_says_not_reported_not_0_vcpus() -> None:
    """A host's dashboard made from Prometheus has the average vCPU use but no per-vCPU data (not exported): the
    title said "0 vCPUs", which is a machine without CPUs, not data not reported."""
    snaps = _vcpu_snaps([None, None])
    history = History(maxlen=120)
    history.extend(snaps)
    app = PanelApp(View(snapshot=snaps[-1], history=history, tick=2), only(VcpuGrid))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(VcpuGrid)
        assert "0 vCPUs" not in lines(panel)[0] and "vCPUs -" in lines(panel)[0]
        assert "no per-vCPU data" in text(panel)


# --- memory summary ---

@sync
async def test_memory_summary_shows_every_category_and_host_memory() -> None:
    app = PanelApp(hand_view(), only(MemorySummary))
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        out = text(app.query_one(MemorySummary))
    for name in ("Host Used Memory", "Device Used Memory", "Tensors:", "Constants:", "DMA Buffers:", "App. Memory:",
                 "Model Code:", "Runtime Memory:", "Model Scratchpad:"):
        assert name in out
    assert "Total: 972.0MB" in out  # 908MB + 64MB, both apps
    assert "Model Scratchpad: 256.0MB" in out
    assert "16.0GB/64.0GB" in out and "1.0GB/8.0GB" in out  # RAM and swap


@sync
async def test_memory_summary_narrow_abbreviates_and_fits() -> None:
    app = PanelApp(hand_view(1001), only(MemorySummary))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        panel = app.query_one(MemorySummary)
        out = text(panel)
        assert "Scratch: 256.0MB" in out and "DMA: 8.0MB" in out
        assert "[red]boom" in lines(panel)[0]  # the tag, literally, in the title
        assert all(s.cell_length <= 80 for s in panel._lines(80))


# --- memory tree ---

def tree_rows(tree: MemoryTree) -> list[str]:
    return [line.strip() for line in lines(tree)[MemoryTree.HEADER_ROWS:]]


@sync
async def test_tree_parents_are_sums_and_expand_collapse_by_keys() -> None:
    app = PanelApp(hand_view(1001), only(MemoryTree))
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.focus()
        await pilot.pause()
        rows = tree_rows(tree)
        assert rows[0].startswith("[-] ND 0") and "1008.0MB" in rows[0]  # 888MB (NC 0) + 120MB (NC 1)
        assert rows[1].startswith("[-] NC 0") and "888.0MB" in rows[1]
        assert rows[2].startswith("[+] bert") and "10001" in rows[2]  # models start closed
        assert not any(r.startswith("App. Memory") for r in rows)
        await pilot.press("down", "down", "enter")  # open the model
        rows = tree_rows(tree)
        assert rows[2].startswith("[-] bert")
        assert rows[3].startswith("Tensors") and rows[4].startswith("Constants")
        assert any(r.startswith("App. Memory") for r in rows)
        await pilot.press("left")  # close it again
        assert tree_rows(tree)[2].startswith("[+] bert")
        await pilot.press("left")  # on a closed node: go to the parent
        await pilot.press("left")  # and close it
        rows = tree_rows(tree)
        assert rows[1].startswith("[+] NC 0") and rows[2].startswith("[-] NC 1")
        await pilot.press("right")
        assert tree_rows(tree)[1].startswith("[-] NC 0")


@sync
async def test_x_toggles_the_whole_tree() -> None:
    app = PanelApp(hand_view(), only(MemoryTree))
    async with app.run_test(size=(120, 60)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.focus()
        await pilot.pause()
        before = len(tree_rows(tree))
        await pilot.press("x")
        opened = tree_rows(tree)
        assert len(opened) > before
        assert all(not r.startswith("[+]") for r in opened)
        assert "x: collapse all" in lines(tree)[0]
        await pilot.press("x")
        closed = tree_rows(tree)
        assert closed == [r for r in closed if r.startswith("[+] ND")] and len(closed) == 2
        tree.action_toggle_all()  # what the app's global binding calls
        await pilot.pause()
        assert tree_rows(tree) == opened


@sync
async def test_tree_state_survives_new_reports() -> None:
    snaps = snapshots()
    app = PanelApp(view_of(snaps[:2], 1001), only(MemoryTree))
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.focus()
        await pilot.pause()
        await pilot.press("down", "down", "enter", "down")  # open bert, cursor on its first category
        key = tree._cursor_key
        app.set_view(view_of(snaps, 1001))
        await pilot.pause()
        assert tree_rows(tree)[2].startswith("[-] bert")
        assert tree._cursor_key == key


@sync
async def test_click_selects_and_toggles() -> None:
    app = PanelApp(hand_view(1001), only(MemoryTree))
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(MemoryTree)
        await pilot.pause()
        await pilot.click(MemoryTree, offset=(6, MemoryTree.HEADER_ROWS + 2))  # the bert row
        await pilot.pause()
        assert tree_rows(tree)[2].startswith("[-] bert")
        assert tree._cursor_key is not None and tree._cursor_key[0] == "model"


@sync
async def test_tree_scrolls_its_container_to_the_cursor() -> None:
    app = PanelApp(hand_view(), only(MemorySummary, MemoryTree))
    async with app.run_test(size=(80, 12)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.focus()
        await pilot.press("x")
        body = app.query_one("#body", VerticalScroll)
        body.scroll_home(animate=False)
        await pilot.pause()
        assert body.scroll_y == 0
        for _ in range(20):
            await pilot.press("down")
        await pilot.pause()
        cursor_y = tree.virtual_region.y + MemoryTree.HEADER_ROWS + tree.cursor_row()
        assert body.scroll_y > 0
        assert body.scroll_y <= cursor_y < body.scroll_y + body.scrollable_content_region.height


@sync
async def test_model_name_escape_sequence_and_markup_show_literally() -> None:
    app = PanelApp(hand_view(1001), only(MemoryTree))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        out = text(app.query_one(MemoryTree))
    assert "bert\\x1b[31m.neff" in out
    assert "\x1b" not in out
    assert "[red]resnet50.neff" in out


def test_tree_arithmetic_on_the_32_runtime_fixture() -> None:
    view = fixture_view(TRN1N)
    nodes = build_tree(view.snapshot, view.app)
    assert len(nodes) == 16
    for dev in nodes:
        assert dev.device == sum(c.device for c in dev.children)
        for core in dev.children:
            assert core.device == sum(c.device for c in core.children)
    # each runtime's core total equals what it reported for that core
    # A core shows what its runtime reported for it, except where the models' shares of a category add up to more
    # than the core's own figure (256 bytes in this file): the tree keeps the models' figures, never a negative row.
    core1 = nodes[0].children[1]
    assert core1.key == ("core", 1) and 0 <= core1.device - 9532596107 <= 256


# --- ECC ---

@sync
async def test_uncorrected_ecc_is_highlighted_with_deltas() -> None:
    app = PanelApp(hand_view(), only(EccPanel))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(EccPanel)
        out = text(panel)
        row = panel.render_line(2)
        assert "ND1" in row.text and "0/1" in row.text
        # segments of one style are joined, so look for the run that holds the device name
        assert _segment_style(panel, 2, "ND1") == panel.style("bad") != _segment_style(panel, 2, "ND0")
        # counts are per period: totals are sums over the stream, "last report" is the newest report's events
        assert "18/0" in out and "+6/+0" in out  # device 0: DRAM corrected total, and the last report's
        assert "+2/+1" in out  # device 1: the new uncorrected error in the last report
        assert "1 uncorrected" in lines(panel)[0]


def _segment_style(panel: Panel, y: int, needle: str) -> Style | None:
    for seg in panel.render_line(y):
        if needle in seg.text:
            return seg.style
    return None


@sync
async def test_ecc_bad_style_marks_only_devices_with_uncorrected_errors() -> None:
    app = PanelApp(hand_view(), only(EccPanel))
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(EccPanel)
        bad_bg = panel.style("bad").bgcolor
        assert bad_bg is not None
        nd1 = _segment_style(panel, 2, "ND1")
        nd0 = _segment_style(panel, 2, "ND0")
        assert nd1 is not None and nd1.bgcolor == bad_bg
        assert nd0 is not None and nd0.bgcolor != bad_bg


@sync
async def test_ecc_without_errors_is_one_line() -> None:
    app = PanelApp(fixture_view(INF2), only(EccPanel))
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        rows = lines(app.query_one(EccPanel))
    assert len(rows) == 1 and rows[0].strip().endswith("no errors on ND0 (DRAM and SRAM) since start")


def test_alert_on_the_hand_stream() -> None:
    snaps = snapshots()
    assert [new_uncorrected(b) for b in snaps[1:]] == [[], [], [1]]


@sync
async def test_ecc_many_devices_side_by_side() -> None:
    app = PanelApp(fixture_view(TRN1N), only(EccPanel))
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        panel = app.query_one(EccPanel)
        assert len(lines(panel)) == 2 + 16 // 4  # four devices a row at 200 columns
        assert "ND15" in text(panel)


# --- latency ---

@sync
async def test_idle_latency_is_idle_never_zero() -> None:
    app = PanelApp(hand_view(), only(LatencyPanel))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        rows = lines(app.query_one(LatencyPanel))
    idle_app = next(r for r in rows if "idle-app" in r)
    assert idle_app.strip() == "idle (1): idle-app"  # idle now and in all history: one line for all such apps
    boom = next(r for r in rows if "[red]boom" in r)
    device = rows[rows.index(boom) + 1].split()
    # null device latency from an app that ran 503 executions: not reported ("-"), not idle (it did run)
    assert device[:2] == ["device", "-"] and "ms" not in "".join(device[2:])
    assert "3.00ms" in boom and "18.0ms" in boom  # p50 and p100 of the last report


@sync
async def test_idle_app_with_history_keeps_its_rows() -> None:
    snaps = snapshots()
    # report 2: [red]boom's latency is null, with history; it ran 3 executions (none completed cleanly), so "-"
    app = PanelApp(view_of(snaps[:3]), only(LatencyPanel))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        rows = lines(app.query_one(LatencyPanel))
    boom = next(r for r in rows if "[red]boom" in r)
    assert boom.split()[1:3] == ["total", "-"] and "ms" not in boom and "idle (1): idle-app" in rows[-1]


@sync
async def test_latency_sparkline_has_a_gap_for_an_idle_step_and_keeps_spikes() -> None:
    s0, s1, idle, s3 = snapshots()  # [red]boom: latency in reports 0, 1 and 3; idle (null) in report 2
    history = History(maxlen=120)
    history.extend([s0, s1, idle, idle, s3, idle])  # steps of two: (0, 1), (idle, idle), (3, idle)
    app = PanelApp(View(snapshot=idle, history=history, tick=6, pid=1001), only(LatencyPanel))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        row = lines(app.query_one(LatencyPanel))[2]
    spark = row.rstrip()[-3:]  # the newest three cells of the p99 history
    assert spark[1] == " "  # a whole step idle: a gap, never a zero
    assert spark[2] in "▁▂▃▄▅▆▇█"  # one idle report in a step does not hide the other's latency


@sync
async def test_latency_fixture_with_missing_percentiles() -> None:
    app = PanelApp(fixture_view(INF2), only(LatencyPanel))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        rows = lines(app.query_one(LatencyPanel))
    assert rows[2].split()[1:3] == ["total", "-"]  # total latency absent, 816 executions: not reported, not idle
    assert "1.12ms" in rows[3] and " -" in rows[3]  # device p50 there, p25 not reported


# --- executions ---

@sync
async def test_exec_rates_and_error_types() -> None:
    app = PanelApp(hand_view(), only(ExecPanel))
    async with app.run_test(size=(200, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(ExecPanel)
        rows = lines(panel)
        assert "compiler" in rows[1]  # an error type this version does not know still gets a column
        boom = next(r for r in rows if "[red]boom" in r)
        assert "500.0/s" in boom and "2.0/s" in boom and "1.0/s" in boom
        y = rows.index(boom)
        high = panel.style("high")
        styles = [seg.style for seg in panel.render_line(y) if seg.text.strip() == "2.0/s"]
        assert styles and all(s is not None and s.color == high.color for s in styles)


@sync
async def test_exec_narrow_uses_two_lines_per_app() -> None:
    app = PanelApp(hand_view(), only(ExecPanel))
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        panel = app.query_one(ExecPanel)
        rows = lines(panel)
        assert len(rows) == 3 + 2 + 1  # heads, [red]boom on two lines, the idle app by name
        assert rows[-1].strip() == "idle, no errors (1): idle-app"
        assert all(s.cell_length <= 80 for s in panel._lines(80))


def test_quiet_apps_are_those_with_nothing_in_the_whole_history() -> None:
    """An idle app is listed by name (``_quiet``) only while its whole kept history has no latency (the latency
    panel: a 0.0 is a latency) and no execution or error (the executions panel: zeros are nothing): one value
    anywhere in the history, even the oldest, brings its rows back."""
    view = hand_view()
    idle = next(a for a in view.snapshot.apps if a.pid == 1002)
    h = view.history
    assert LatencyPanel._quiet(view, idle) and ExecPanel._quiet(view, idle)
    assert len(h.series(("exec", idle.pid))) == len(h) and not any(h.series(("exec", idle.pid)))  # zeros: quiet
    h.series(("exec", idle.pid))[0] = 3.0
    assert not ExecPanel._quiet(view, idle)
    assert LatencyPanel._quiet(view, idle)  # executions are not latency
    h._series["lat", idle.pid, "device", "p99"] = deque([0.0] + [None] * (len(h) - 1))
    assert not LatencyPanel._quiet(view, idle)


# --- every panel, every width ---

@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("source", ["hand", TRN1N, INF2])
@sync
async def test_every_panel_fits_its_width(width: int, source: str) -> None:
    view = hand_view() if source == "hand" else fixture_view(source)
    panels = (MemorySummary, MemoryTree, EccPanel, LatencyPanel, ExecPanel, AppCoresPanel, ModelsPanel)
    app = PanelApp(view, only(*panels))
    async with app.run_test(size=(width, 40)) as pilot:
        await pilot.press("x")  # the tree, all open (it has no focus: the app-level x is not bound here)
        app.query_one(MemoryTree).action_toggle_all()
        await pilot.pause()
        for p in app.query(Panel):
            strips = p._lines(p.size.width)
            assert strips, type(p).__name__
            assert all(s.cell_length <= p.size.width for s in strips), type(p).__name__


# --- the app drill-down ---

class ScreenApp(PanelApp):
    def __init__(self, view: View, pid: int) -> None:
        super().__init__(view, lambda: [])
        self.pid = pid

    def on_mount(self) -> None:
        self.push_screen(AppScreen(self.pid, self._view))


@sync
async def test_app_screen_shows_one_app_and_escape_goes_back() -> None:
    app = ScreenApp(hand_view(), 1001)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AppScreen)
        assert screen.crumb.text() == " dashboard › app [red]boom (pid 1001)"  # literal, not markup
        models = text(screen.query_one(ModelsPanel))
        assert "v2=nc_v2.0" in models and "bert\\x1b[31m.neff" in models
        assert models.count("└ sg_00") == 1  # resnet's one plain subgraph has no row of its own
        cores = text(screen.query_one(AppCoresPanel))
        assert "ND0 NC0" in cores and "ND0 NC1" in cores and "ND1" not in cores
        tree = screen.query_one(MemoryTree)
        assert screen.query_one(AppCoresPanel).has_focus  # the keyboard on its cores: Enter opens one
        assert "idle-model" not in text(tree)  # only this app's models
        assert "idle-app" not in text(screen.query_one(LatencyPanel))
        await pilot.press("x")
        assert all(not r.startswith("[+]") for r in tree_rows(tree))
        await pilot.press("escape")
        assert not isinstance(app.screen, AppScreen)


@sync
async def test_app_screen_follows_updates_and_marks_an_ended_app() -> None:
    snaps = snapshots()
    app = ScreenApp(view_of(snaps[:3]), 1001)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AppScreen)
        assert "total         -" in text(screen.query_one(LatencyPanel))  # report 2: null, but it ran
        screen.view = view_of(snaps)
        await pilot.pause()
        assert "3.00ms" in text(screen.query_one(LatencyPanel))
        screen.view = view_of(snaps).with_(snapshot=Snapshot(Report(), snaps[-1].ts + 1), tick=99)  # no apps
        await pilot.pause()
        assert screen.ended
        assert "ended: showing its last report" in screen.crumb.text()
        assert "3.00ms" in text(screen.query_one(LatencyPanel))  # its last data stays


@sync
async def test_app_screen_shows_what_the_monitor_could_not_collect() -> None:
    view = fixture_view("inf1_xlarge_4runtimes_vcpu_errors.json")
    app = ScreenApp(view, view.snapshot.apps[0].pid)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        cores = text(app.screen.query_one(AppCoresPanel))
    assert "neuron_runtime_vcpu_usage: open /proc/" in cores


def test_app_screen_bindings_have_descriptions() -> None:
    for b in AppScreen.BINDINGS:
        assert getattr(b, "description", "")


# --- whatever the data, nothing crashes ---

def _all_fixture_names() -> list[str]:
    return sorted(p.name for p in REPORTS.glob("*.json"))


WEIRD: dict[str, Any] = {
    "neuron_hardware_info": {"neuron_device_count": -3, "neuroncore_per_device_count": 0,
                             "neuron_device_memory_size": -1},
    "neuron_runtime_data": [None, {"pid": None, "neuron_runtime_tag": "\x1b]0;pwned\x07", "report": {
        "execution_stats": {"period": 0, "error_summary": {"generic": -5, "brand_new": 3},
                            "execution_summary": {"completed": 10**15},
                            "latency_stats": {"total_latency": {"p50": float("inf")}, "device_latency": {}}},
        "memory_used": {"neuron_runtime_used_bytes": {"host": -1, "usage_breakdown": {
            "neuroncore_memory_usage": {"99999999": {"tensors": 1}, "1": None}}},
            "loaded_models": [None, {"name": None, "subgraphs": {"sg": None, "sg2": {"neuroncore_index": -4}}}]}}}],
    "system_data": {"neuron_hw_counters": {"neuron_devices": [None, {"neuron_device_index": 2,
                                                                    "mem_ecc_uncorrected": 10**12}]},
                    "vcpu_usage": {"error": "\x1b[2J"},
                    "memory_info": {"memory_total_bytes": 0, "memory_used_bytes": 5}},
}


def _weird_view() -> View:
    report, _ = decode_report(msgspec.json.encode(WEIRD))
    return view_of([Snapshot(report, 0.0)])


@pytest.mark.parametrize("source", ["empty", "weird", *_all_fixture_names()])
@sync
async def test_panels_never_crash(source: str) -> None:
    if source == "empty":
        view = view_of([Snapshot(Report(), 0.0)])
    elif source == "weird":
        view = _weird_view()
    else:
        view = fixture_view(source)
    panels = (MemorySummary, MemoryTree, EccPanel, LatencyPanel, ExecPanel, AppCoresPanel, ModelsPanel)
    app = PanelApp(view, only(*panels))
    async with app.run_test(size=(80, 30)) as pilot:
        app.query_one(MemoryTree).focus()
        await pilot.press("x", "down", "enter", "left", "end", "home")
        for p in app.query(Panel):
            out = "\n".join(s.text for s in p._lines(p.size.width))
            assert "\x1b" not in out and "\x07" not in out, type(p).__name__


@sync
async def test_ecc_group_error_is_shown_cleaned() -> None:
    doc = {"system_data": {"neuron_hw_counters": {"error": "\x1b[2Jno driver [b]x"}}}
    app = PanelApp(view_of([Snapshot(decode_report(msgspec.json.encode(doc))[0], 0.0)]), only(EccPanel))
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        out = text(app.query_one(EccPanel))
    assert "no ECC data: \\x1b[2Jno driver [b]x" in out and "\x1b" not in out


@sync
async def test_weird_report_details() -> None:
    app = PanelApp(_weird_view(), only(LatencyPanel, ExecPanel))
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        lat = text(app.query_one(LatencyPanel))
        ex = text(app.query_one(ExecPanel))
    assert "\\x1b]0;pwned\\x07" in lat
    assert "total" in lat and "inf" not in lat and "idle" not in lat  # an infinite percentile is no data: "-"
    assert "brand_new" in ex


# --- rows kept from the previous build (Panel.memo) ---

async def test_kept_rows_are_what_a_fresh_build_draws_and_are_kept_when_unchanged() -> None:
    """ECC, the executions' error rows and the memory summary's rows are kept between reports while what they
    show is the same. On every report of the demo they must equal what a build without kept rows draws, and
    the ECC panel (its counts change a few times a minute) must hand out the very same strips most reports."""
    from tests.helpers import demo_snapshots, make_app

    snaps = demo_snapshots("trn2.48xlarge", 7, 50)
    app = make_app(layout="full")
    kept = {EccPanel: 0, ExecPanel: 0, MemorySummary: 0}
    async with app.run_test(size=(120, 80)) as pilot:
        app.accept_snapshot(snaps[0])
        await pilot.pause()
        for s in snaps[1:]:
            before = {kind: list(app.screen.query_one(kind)._strips) for kind in kept}
            app.accept_snapshot(s)
            await pilot.pause()
            for kind in kept:
                panel = app.screen.query_one(kind)
                shown = list(panel._strips)
                kept[kind] += sum(a is b for a, b in zip(before[kind], shown, strict=False))
                saved = panel._memo, panel._memo_next
                panel._memo, panel._memo_next = {}, {}  # a build that keeps nothing
                fresh = panel.build(panel.view, panel._width)
                panel._memo, panel._memo_next = saved
                assert [list(x) for x in shown[:len(fresh)]] == [list(x) for x in fresh], kind.__name__
    assert kept[EccPanel] >= 45 * 3  # all its (five) lines, on most reports
    assert kept[ExecPanel] >= 45 * 4 and kept[MemorySummary] >= 45 * 2


async def test_memory_panels_skip_reports_that_change_nothing_they_show() -> None:
    """The memory summary and tree are built only when what they show changed (``Panel.content``): most demo
    reports change neither. Whether built or skipped, what they show must be what a build from scratch on the
    current report draws (the RAM gauge's bytes move on every report, its text and bar now and then)."""
    from tests.helpers import demo_snapshots, make_app

    snaps = demo_snapshots("trn2.48xlarge", 7, 80)
    app = make_app(layout="full")
    skipped = {MemorySummary: 0, MemoryTree: 0}
    rebuilt_gauges = 0
    async with app.run_test(size=(200, 60)) as pilot:
        for s in snaps[:30]:
            app.accept_snapshot(s)
        await pilot.pause()
        for s in snaps[30:]:
            before = {kind: app.screen.query_one(kind)._strips for kind in skipped}
            gauges = list(app.screen.query_one(MemorySummary)._strips)[-1]
            app.accept_snapshot(s)
            await pilot.pause()
            for kind in skipped:
                panel = app.screen.query_one(kind)
                shown = list(panel._strips)
                skipped[kind] += panel._strips is before[kind]
                kept = panel._content, panel._memo, panel._memo_next
                panel._content = panel.content(panel.view, panel._width)
                panel._memo, panel._memo_next = {}, {}
                if kind is MemoryTree:
                    panel._row_strips.clear()
                fresh = list(panel.build(panel.view, panel._width))
                panel._content, panel._memo, panel._memo_next = kept
                assert [list(x) for x in shown] == [list(x) for x in fresh], kind.__name__
            rebuilt_gauges += list(app.screen.query_one(MemorySummary)._strips)[-1] is not gauges
    assert skipped[MemorySummary] >= 25 and skipped[MemoryTree] >= 25, skipped
    assert rebuilt_gauges > 0  # the comparison above saw the gauges change too


async def test_a_theme_change_starts_the_kept_rows_afresh() -> None:
    from tests.helpers import demo_snapshots, make_app

    snaps = demo_snapshots("trn2.48xlarge", 7, 3)
    app = make_app()
    async with app.run_test(size=(120, 80)) as pilot:
        for s in snaps[:2]:
            app.accept_snapshot(s)
            await pilot.pause()
        panel = app.screen.query_one(EccPanel)
        old = list(panel._strips)
        from neuron_top.tui.widgets.cores import CoreGrid

        grid = app.screen.query_one(CoreGrid)
        old_cells = list(grid._parts.values())
        app.theme = next(t for t in app.available_themes if t != app.theme and "light" in t)
        app.accept_snapshot(snaps[2])
        await pilot.pause()
        assert not any(a is b for a, b in zip(old, panel._strips, strict=False))
        assert next(iter(panel._strips[0])).style == panel.style("title")
        # core cells too: none made with the old theme's styles is handed out again
        assert grid._parts and not any(cell is old for cell in grid._parts.values() for old in old_cells)


async def test_core_cells_made_once_are_the_cells_a_fresh_build_makes() -> None:
    """Core cells are kept by what they show (bar whole and eighth cells, colour band, value): any percent,
    width and colour source must give what building the cell afresh gives."""
    import random

    from neuron_top.tui.widgets.cores import CoreGrid
    from tests.helpers import demo_snapshots, make_app

    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        app.accept_snapshot(demo_snapshots("trn2.48xlarge", 7, 1)[0])
        await pilot.pause()
        grid = app.screen.query_one(CoreGrid)
        rnd = random.Random(3)
        edges = [None, -3.0, 0.0, 0.01, 12.5, 49.999, 50.0, 79.99, 80.0, 99.99, 100.0, 140.0, float("inf"), float("nan")]
        for pct in edges + [rnd.uniform(-5, 105) for _ in range(3000)]:
            for bar_w in (1, 7, 11, 18):
                colour = rnd.choice([None, None, rnd.uniform(0, 100)])
                selected = rnd.random() < 0.1
                value = f"{pct:.0f}%" if pct is not None else "-"
                last = rnd.random() < 0.25
                kept = grid._cell(pct, value, bar_w, selected, colour, last)
                fresh = grid._make_cell(pct, value, bar_w, selected, colour, last)
                assert kept == fresh, (pct, bar_w, colour, selected, last)
        assert len(grid._parts) < 3000  # made once each, not once per call


async def test_value_cells_kept_by_what_they_read_are_the_cells_num_makes() -> None:
    """``Panel.num``: the latency and execution value cells are kept by text, width and style (an equal style
    made apart is the same key; another style is not)."""
    from rich.style import Style

    from neuron_top.tui.widgets.fixedwidth import num
    from neuron_top.tui.widgets.latency import LatencyPanel
    from tests.helpers import demo_snapshots, make_app

    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        app.accept_snapshot(demo_snapshots("trn2.48xlarge", 7, 1)[0])
        await pilot.pause()
        panel = app.screen.query_one(LatencyPanel)
        red, green = Style(color="red"), Style(color="green")
        for text in ("12.5ms", "idle", "-", "1.20s", "a much too long value", ""):
            for width in (1, 2, 8, 10):
                for style in (None, red, green):
                    first = panel.num(text, width, style)
                    assert first == num(text, width, style)
                    assert panel.num(text, width, style) is first
        assert panel.num("5ms", 8, Style(color="red")) is panel.num("5ms", 8, red)
        assert panel.num("5ms", 8, green) is not panel.num("5ms", 8, red)


async def test_the_lines_sent_directly_are_what_render_line_draws() -> None:
    """``Panel._line`` (what ``paint.flush`` sends) pads a short row itself: it must be exactly Textual's
    ``crop_extend`` of that row, for every line of every panel on the trn2 dashboard at two widths."""
    from neuron_top.tui.widgets.panel import Panel
    from tests.helpers import demo_snapshots, feed, make_app

    for size in ((200, 60), (120, 40)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await feed(pilot, demo_snapshots("trn2.48xlarge", 7, 12))
            await pilot.pause()
            padded = 0
            for panel in app.screen.query(Panel):
                width = panel._width
                for y, row in enumerate(panel._strips):
                    sent = panel._line(y)
                    assert list(sent) == list(panel._grounded(row).crop_extend(0, width, panel._base_style)), (panel, y)
                    assert list(sent) == list(panel.render_line(y)), (panel, y)
                    assert sent.cell_length == width
                    padded += row.cell_length < width
            assert padded  # the case is exercised


async def test_history_sparklines_are_made_once_per_step_and_match_a_fresh_build(monkeypatch) -> None:
    """The latency and executions sparklines only move every STEP reports: they are kept for the step
    (``Panel.per_step``), and at a step each moves on by a cell (``StepCells``). Each report's rows must be what
    a build that keeps nothing draws, and a report in the middle of a step must not compute a single
    sparkline."""
    from neuron_top.tui.widgets import sparkline
    from tests.helpers import demo_snapshots, make_app

    made = {"n": 0}
    real = sparkline.stepped

    def counting(*args: Any, **kw: Any) -> Any:
        made["n"] += 1
        return real(*args, **kw)
    monkeypatch.setattr(sparkline, "stepped", counting)
    snaps = demo_snapshots("trn2.48xlarge", 7, 40)
    app = make_app(layout="full")
    mid_step = []
    async with app.run_test(size=(200, 60)) as pilot:
        for i, s in enumerate(snaps):
            made["n"] = 0
            app.accept_snapshot(s)
            await pilot.pause()
            same_apps = i > 0 and [a.pid for a in s.apps] == [a.pid for a in snaps[i - 1].apps]
            if app.history.pushed % 2 == 1 and app.history.pushed > 1 and same_apps:  # (a new app's are made)
                mid_step.append((i, made["n"]))
            for kind in (LatencyPanel, ExecPanel, AppsPanel):
                panel = app.screen.query_one(kind)
                shown = [list(x) for x in panel._strips]
                panel._step_at = None  # a build that keeps nothing: no step's parts, no cells moved on
                kept, panel._cells = panel._cells, sparkline.StepCells(panel._cells.combine)
                fresh = [list(x) for x in panel.build(panel.view, panel._width)]
                panel._cells = kept
                assert shown[:len(fresh)] == fresh, kind.__name__
    assert len(mid_step) >= 15 and not any(n for _, n in mid_step), [m for m in mid_step if m[1]]
    assert made["n"] > 0  # and the rebuilds above did compute them


def test_step_cells_kept_between_steps_match_a_full_computation() -> None:
    """The latency and execution sparklines move on by one cell per step (``StepCells``), their text too while
    the scale holds: after every report, with gaps, a jump of several steps, a cleared history, another width
    and a scale that changes, each must be what ``stepped`` and ``spark_text`` make from scratch."""
    import random

    from neuron_top.tui.widgets.sparkline import StepCells, peak, spark_text, stepped

    rnd = random.Random(5)
    busy = [None if rnd.random() < 0.2 else rnd.uniform(0, 100) for _ in range(120)]
    snaps = _vcpu_snaps(busy)
    history, cells = History(600), StepCells(max)
    checked = 0
    for n, s in enumerate(snaps):
        if n == 60:
            history.clear()
        history.push(s)
        if n % 9 == 4 or 80 <= n < 86:
            continue  # not drawn: the next draw is a step or several later
        width = 12 if n < 100 else 8
        key = ("vcpu", 0)
        values = cells.values(history, key, width)
        assert values == stepped(history, key, width, max), n
        for top in (peak(values), 100.0):  # the series' own scale, then a fixed one
            assert cells.text(key, width, top) == spark_text(stepped(history, key, width, max), width, top), n
        checked += 1
    assert checked > 90


def test_step_cells_of_many_series_move_on_together_and_match_a_full_computation() -> None:
    """At a step every series a ``StepCells`` drew at the step before moves on at once: with several series,
    one of them drawn at two widths, one drawn only at some steps, one with less than a whole step of history,
    another history in between and a cleared one, each must be what ``stepped`` and ``spark_text`` make from
    scratch."""
    import random

    from neuron_top.tui.widgets.sparkline import StepCells, peak, spark_text, stepped

    rnd = random.Random(8)
    busy = [None if rnd.random() < 0.2 else rnd.uniform(0, 100) for _ in range(90)]
    snaps = _vcpu_snaps(busy)
    history, other, cells = History(600), History(600), StepCells(max)
    other.extend(snaps[::-1][:32])  # at report 30 one step ahead of the history: its step before is the history's
    checked = 0
    for n, s in enumerate(snaps):
        if n == 50:
            history.clear()
        history.push(s)
        h = other if n == 30 else history
        asked = [(("vcpu", 0), 10), (("vcpu", 0), 4), (("vcpu", 1), 10), (("vcpu", 7), 6)]  # 7: never reported
        if n % 6 < 3:
            asked.append((("vcpu", 1), 3))  # drawn at some steps only
        for key, width in asked:
            values = cells.values(h, key, width)
            want = stepped(h, key, width, max)
            assert values == want, (n, key, width)
            assert cells.text(key, width, peak(values)) == spark_text(want, width, peak(want)), (n, key, width)
            checked += 1
    assert checked > 400


def test_stepped_sparks_kept_between_steps_match_a_full_computation() -> None:
    """The vCPU grid's sparklines move on by one cell per step instead of being recomputed: after every report,
    with gaps, a series that appears late, a jump of several steps and a cleared (replayed) history, each must
    be what the full computation draws."""
    import random

    from neuron_top.tui.widgets.sparkline import SteppedSparks, spark_text, stepped

    rnd = random.Random(11)
    busy = [None if rnd.random() < 0.15 else rnd.uniform(0, 100) for _ in range(90)]
    snaps = _vcpu_snaps(busy)
    history, sparks, grid = History(600), SteppedSparks(6), SteppedSparks(6)
    for n, s in enumerate(snaps):
        if n == 40:
            history.clear()  # a replay seek rebuilds the history
        history.push(s)
        if n % 7 == 3:
            continue  # not drawn at this report: the next one may be a step or two later
        keys = [("vcpu", 0), ("vcpu", 1), ("vcpu", 5)]  # 5 is never reported: all gaps
        if n >= 20:
            keys.insert(1, ("vcpu", 2))  # asked for the first time in the middle of a grid
        full = [(spark_text(means, 6), means[-1]) for means in (stepped(history, key, 6) for key in keys)]
        for key, want in zip(keys, full, strict=True):  # one series at a time
            assert [(text, newest) for _, text, newest in sparks.many(history, [key])] == [want], (n, key)
        # the vCPU grid asks for all of them in one call
        assert [(text, newest) for _, text, newest in grid.many(history, keys)] == full, n


def test_stepped_sparks_moved_on_together_follow_the_keys_and_the_history() -> None:
    """A call of many series with the keys of the call before, one step on, moves every sparkline on at once
    (``newest_cells``): the keys' list changed in place by the caller (the vCPU strip keeps one list), a series
    with less than a whole step of history, a history cleared or replaced, each must draw what the full
    computation draws, never the sparklines kept for other keys or another history."""
    import random

    from neuron_top.tui.widgets.sparkline import _TOGETHER, SteppedSparks, newest_cells, spark_text, stepped

    rnd = random.Random(3)
    n_cpus = _TOGETHER + 2
    snaps = []
    for i in range(70):
        usage = {str(c): {"idle": 100.0 - rnd.uniform(0, 100)} for c in range(n_cpus) if rnd.random() > 0.1}
        data = msgspec.json.encode({"system_data": {"vcpu_usage": {
            "period": 1.0, "average_usage": {"user": 1.0, "idle": 99.0}, "usage_data": usage}}})
        report, problems = decode_report(data)
        snaps.append(Snapshot(report, 1700000000.0 + i, seq=i, problems=problems))
    history, other, sparks = History(600), History(600), SteppedSparks(5)
    other.extend(snaps[::-1][:52])  # at report 50 a step ahead of the history: its step before is the history's
    keys = [("vcpu", c) for c in range(n_cpus)]
    moved = 0
    for n, s in enumerate(snaps):
        if n == 30:
            history.clear()
        history.push(s)
        if n == 20:
            keys[:] = keys[::-1]  # the same list, the keys in another order
        if n == 45:
            keys.append(("vcpu", 99))  # never reported: no whole step of it
        h = other if n == 50 else history  # another history in between: not the one kept
        for combine in (max, sum):
            assert newest_cells(h, keys, combine) == [stepped(h, k, 1, combine)[0] for k in keys], n
        full = [(spark_text(means, 5), means[-1]) for means in (stepped(h, key, 5) for key in keys)]
        before = sparks._drawn
        assert [(text, newest) for _, text, newest in sparks.many(h, keys)] == full, n
        moved += sparks._drawn is not before and bool(before) and before[0][0][2] + 1 == sparks._drawn[0][0][2]
    assert moved > 20  # the steps moved on together were checked


async def test_no_devices_says_what_is_shown_whole_at_80_columns() -> None:
    """Without Neuron devices the core grid's one line was cut at the panel's edge: "neuron driver not found (no
    /sys/devices/virtual/neuron_device). Showing host" at 80 columns. It wraps now."""
    import msgspec

    from neuron_top.snapshot import snapshot_from
    from neuron_top.tui.widgets.cores import CoreGrid
    from tests.helpers import feed, make_app

    doc = {"neuron_hardware_info": {"error": "neuron driver not found (no /sys/devices/virtual/neuron_device)"},
           "system_data": {"vcpu_usage": {"period": 1.0, "average_usage": {"user": 10.0, "system": 1.0}}}}
    snaps = [snapshot_from(msgspec.json.encode(doc), 1000.0 + i, i + 1) for i in range(2)]
    app = make_app(snaps)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        text = " ".join("".join(s.text for s in grid.render_line(y)).strip() for y in range(1, 4)).strip()
        assert "neuron driver not found" in text and text.endswith("Showing host metrics only."), text

"""The main screen as a Trainium user expects it (issue 32): the hardware story in the header and grid, ..."""

from __future__ import annotations

import json

import pytest

from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.header import HeaderBar
from tests.conftest import ROOT
from tests.helpers import T0, feed, make_app

FIXTURES = ROOT / "tests" / "fixtures" / "neuron-monitor"


def text_of(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def snap_of(doc: dict, i: int = 0) -> Snapshot:
    report, problems = decode_report(json.dumps(doc).encode())
    return Snapshot(report, T0 + i, i + 1, problems)


def inf1() -> dict:
    return json.loads((FIXTURES / "inf1_xlarge_4runtimes_vcpu_errors.json").read_text())


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_inf1_without_hardware_info_is_one_device_of_four_cores(size: tuple[int, int]) -> None:
    doc = inf1()
    del doc["neuron_hardware_info"]
    app = make_app([snap_of(doc)])
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        grid = text_of(app.screen.query_one(CoreGrid))
        assert "ND0" in grid and "ND1" not in grid
        assert grid.count("NC3") >= 1
        line2 = app.screen.query_one(HeaderBar).render_line(1).text
        assert "1x neuron · 4 NeuronCores" in line2 or line2.rstrip().endswith("…")


async def test_zero_devices_says_not_visible() -> None:
    doc = json.loads((FIXTURES / "inf1_xlarge_idle_no_runtimes.json").read_text())
    doc["neuron_hardware_info"] = {"neuron_device_count": 0, "neuroncore_per_device_count": 4, "error": ""}
    doc["system_data"]["neuron_hw_counters"] = {"neuron_devices": None, "error": ""}
    app = make_app([snap_of(doc)])
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        line2 = app.screen.query_one(HeaderBar).render_line(1).text
        assert "no Neuron devices visible (container without /dev/neuron*?)" in line2
        grid = text_of(app.screen.query_one(CoreGrid))
        assert "container without /dev/neuron*" in grid and "driver" not in grid


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_pause_holds_in_drill_downs_and_after_escape(size: tuple[int, int]) -> None:
    """A core screen opened from a paused grid shows the paused data; after Esc the paused grid has not moved;
    the panels say they are paused (new reports, an ECC mark, are not in what they show)."""
    from neuron_top.tui.screens.detail import CoreScreen
    from neuron_top.tui.widgets.ecc import EccPanel
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=size) as pilot:
        await feed(pilot, snaps[:5])
        await pilot.press("p")
        grid = app.screen.query_one(CoreGrid)
        before = text_of(grid)
        assert "PAUSED" in before.splitlines()[0]
        ecc = app.screen.query(EccPanel)
        if ecc and ecc.first().display and ecc.first().size.height:
            assert "PAUSED" in ecc.first().render_line(0).text
        grid.focus()
        await pilot.pause()
        before = text_of(grid)
        await feed(pilot, snaps[5:15])
        assert text_of(grid) == before
        await pilot.press("enter")
        assert isinstance(app.screen, CoreScreen)
        assert app.screen.view.snapshot.seq == snaps[4].seq and app.screen.view.frozen
        assert len(app.screen.view.history) == 5  # the history as it was when paused
        await feed(pilot, snaps[15:17])
        assert app.screen.view.snapshot.seq == snaps[4].seq
        await pilot.press("escape")
        await pilot.pause()
        assert text_of(app.screen.query_one(CoreGrid)) == before
        await pilot.press("p")
        assert app.screen.view.snapshot.seq == snaps[16].seq and not app.screen.view.frozen
        assert "PAUSED" not in app.screen.query_one(CoreGrid).render_line(0).text


async def test_one_report_shows_the_vcpu_strip() -> None:
    """A single report (the trn1n fixture's 128 vCPUs) fills the per-vCPU heat strip: it was blank until a
    second report made a pair."""
    from neuron_top.tui.widgets.vcpu import VcpuPanel

    doc = json.loads((FIXTURES / "trn1n_32xlarge_32runtimes_cwagent_test.json").read_text())
    app = make_app([snap_of(doc)])
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        panel = app.screen.query_one(VcpuPanel)
        strip = [ln for ln in text_of(panel).splitlines()[1:] if ln.strip()[:1].isdigit()]
        assert strip, text_of(panel)
        cells = "".join(ln.split(maxsplit=1)[1] if len(ln.split(maxsplit=1)) > 1 else "" for ln in strip)
        assert sum(c in "▁▂▃▄▅▆▇█" for c in cells) >= 100


def test_done_per_second_is_a_rate_when_execution_stats_has_no_period() -> None:
    """The inf2 fixture's execution_stats has counts and no period: the runtime's other groups give it, so
    done/s is a rate, not a count."""
    from neuron_top.output.cells import app_cells

    doc = json.loads((FIXTURES / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json").read_text())
    rt = doc["neuron_runtime_data"][0]["report"]
    rt["execution_stats"] = {"execution_summary": {"completed": 816}, "error_summary": {}}
    rt["neuroncore_counters"]["period"] = 2.0
    snap = snap_of(doc)
    a = snap.apps[0]
    assert a.period == 2.0
    assert app_cells(snap, a)["done"] == "408.0/s"


async def test_replay_of_a_report_with_uncorrected_ecc_shows_the_mark(tmp_path) -> None:
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import ReplayController

    doc = inf1()
    doc["system_data"]["neuron_hw_counters"]["neuron_devices"][0]["mem_ecc_uncorrected"] = 2
    path = tmp_path / "ecc.json"
    path.write_text(json.dumps(doc) + "\n")
    index = RecordingIndex(path)
    index.wait()
    app = make_app(replay=ReplayController(index), replay_name=path.name)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(50):
            await pilot.pause()
            if app.latest is not None:
                break
        await pilot.pause()
        assert "ECC! ND0" in app.screen.query_one(HeaderBar).render_line(0).text


INSTANCES = ("inf1.xlarge", "inf2.48xlarge", "trn1.32xlarge", "trn2.48xlarge")


@pytest.mark.parametrize("instance", INSTANCES)
async def test_header_line_2_is_whole_or_cut_at_a_field_boundary(instance: str) -> None:
    """At 80, 120 and 200 columns, every demo instance: each field of line 2 is whole or "…" (at 120 columns it
    was cut inside the device memory, "8.0GB/devi…")."""
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots(instance, 7, 2)
    full = machine_fields(snaps[-1])
    for size in ((80, 24), (120, 40), (200, 60)):
        app = make_app(snaps)
        async with app.run_test(size=size) as pilot:
            await feed(pilot)
            line = app.screen.query_one(HeaderBar).render_line(1).text.rstrip()
            shown = line.strip().split(" · ")
            assert all(f == "…" or f in full for f in shown), (size, line)
            assert any("NeuronCores" in f for f in shown), (size, line)  # the layout stays
        if size[0] >= 200:
            assert "…" not in line


def machine_fields(snap: Snapshot) -> list[str]:
    from neuron_top.tui.widgets.header import machine_line

    return machine_line(snap, 10_000).strip().split(" · ")


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_memory_tree_keeps_what_tells_model_names_apart(size: tuple[int, int]) -> None:
    """trn1's training models are /tmp/neuroncc_compile_workdir/<hash>/model.MODULE_<n>+c7db2df4.neff: cut from
    the left they all read "…7db2df4.neff"; the part that differs stays."""
    from neuron_top.tui.widgets.memory import MemoryTree
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn1.32xlarge", 7, 4)
    app = make_app(snaps, layout="full")
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        tree = app.screen.query(MemoryTree)
        if not tree or not tree.first().display or not tree.first().size.height:
            pytest.skip("no memory tree in this layout at this size")
        tree.first().focus()
        await pilot.press("x")  # expand all
        text = text_of(tree.first())
        import re

        rows = re.findall(r"\[[-+]\] (\S+)\s+(\d{5})\b", text)  # model rows: the name and the model id
        by_id = {mid: name for name, mid in rows}
        assert len(by_id) >= 2, text
        assert len(set(by_id.values())) == len(by_id), by_id  # another model, another name
        names = list(by_id.values())
        assert not any(n.endswith("7db2df4.neff") and "MODULE" not in n for n in names)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_app_screen_core_labels_never_run_into_their_bars(size: tuple[int, int]) -> None:
    """llama-70b-serve on trn2 uses ND8-ND11: " ND10 NC0" filled its 9-cell label and ran into the bar."""
    import re

    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.widgets.app_cores import AppCoresPanel
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn2.48xlarge", 7, 4)
    app = make_app(snaps)
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        pid = next(a.pid for a in snaps[-1].apps if a.tag == "llama-70b-serve")
        app.open_app(pid)
        await pilot.pause()
        assert isinstance(app.screen, AppScreen)
        panel = app.screen.query_one(AppCoresPanel)
        text = text_of(panel)
        assert "ND10 NC0" in text
        assert not re.search(r"ND\d+ NC\d+[^ \d]", text), text


async def test_help_key_column_is_narrow_at_200x60() -> None:
    """The key column was 46 wide at 200x60: a section title sat in it. Now the longest key, at most 24."""
    from neuron_top.tui.screens.help import KEYS_MAX
    from tests.helpers import demo_snapshots, statics_text

    app = make_app(demo_snapshots("inf1.xlarge", 3, 5))
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        await pilot.press("question_mark")
        lines = statics_text(app.screen, 88).splitlines()
        row = next(ln for ln in lines if ln.startswith("q ") or ln.startswith("q  "))
        assert row.index("quit") <= KEYS_MAX + 2, row
        assert any(ln.strip() == "Fleet replay (neuron-top replay FLEET.jsonl)" for ln in lines)


async def test_problems_screen_shows_the_command_in_full() -> None:
    """The header cuts a long --command; the problems screen promised it in full and cut it at 60 characters."""
    from neuron_top.sources.stream import CommandSource
    from neuron_top.tui.app import NeuronTopApp
    from neuron_top.tui.screens.problems import ProblemsScreen, problems_text

    command = ("ssh -o BatchMode=yes -o ConnectTimeout=10 -J bastion.example.com trn-host-0042.internal "
               "/opt/aws/neuron/bin/neuron-monitor -c /etc/neuron-monitor/monitor.conf")
    app = NeuronTopApp(CommandSource(command), clock=lambda: 1000.0)
    app.collect = lambda: None  # type: ignore[method-assign]  # no child started: the screen only
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("E")
        assert isinstance(app.screen, ProblemsScreen)
        assert command in problems_text(app.session, 1000.0).plain


async def test_enter_on_the_all_tab_opens_the_app_it_picks() -> None:
    """The footer says "⏎ open app" on the tab bar; on "all" Enter did nothing. It opens the picker, then the app."""
    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.screens.picker import AppPicker
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("inf1.xlarge", 3, 4)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        app.screen.query_one(AppTabs).focus()
        await pilot.press("1", "enter")
        assert isinstance(app.screen, AppPicker)
        await pilot.press(*snaps[-1].apps[1].tag[:6], "enter")
        await pilot.pause()
        assert isinstance(app.screen, AppScreen) and app.pid == snaps[-1].apps[1].pid


async def test_keys_typed_right_after_enter_on_the_all_tab_go_into_the_pickers_filter() -> None:
    """Enter on "all" and a name arriving together (typed fast, or queued while the app drew a report): the
    letters were routed to the tab bar before the picker opened, and were lost (``l`` changed the layout)."""
    from neuron_top.tui.screens.picker import AppPicker
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.helpers import demo_snapshots, type_at_once, until

    snaps = demo_snapshots("inf1.xlarge", 3, 4)
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        layout = app.layout_state
        app.screen.query_one(AppTabs).focus()
        await pilot.press("1")
        type_at_once(app, "\rlla!")
        box = lambda: "".join(b.value for b in app.screen.query("#picker-filter"))  # noqa: E731
        await until(lambda: isinstance(app.screen, AppPicker) and box().endswith("!"), what="the picker's filter")
        assert box() == "lla!" and app.layout_state == layout


async def test_keys_typed_right_after_enter_on_an_app_tab_go_to_the_app_screen() -> None:
    """Enter on an app's tab and ``o`` arriving together: ``o`` was routed while the dashboard was still on top and
    opened the picker, and the app's screen then opened over it (Esc showed a picker nobody asked for)."""
    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.screens.picker import AppPicker
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.helpers import demo_snapshots, type_at_once, until

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        app.screen.query_one(AppTabs).focus()
        await pilot.press("2")
        type_at_once(app, "\ro")
        await until(lambda: isinstance(app.screen, AppScreen), what="the app's screen")
        await pilot.pause()
        assert isinstance(app.screen, AppScreen) and not any(isinstance(s, AppPicker) for s in app.screen_stack)


async def test_v_says_when_there_is_nothing_to_show() -> None:
    from tests.helpers import demo_snapshots

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("v")
        assert not app.physical
        assert any("no physical cores" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_s_sorts_the_apps_table_by_each_column_and_S_reverses(size: tuple[int, int]) -> None:
    from neuron_top.tui.screens.help import help_sections
    from neuron_top.tui.widgets.apps import AppsPanel
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn2.48xlarge", 7, 6)
    app = make_app(snaps, layout="apps")
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        panel = app.screen.query_one(AppsPanel)

        def labels() -> list[str]:
            rows = text_of(panel).splitlines()[2:]
            return [r.split()[0].lstrip(">") for r in rows if r.strip() and not r.startswith(" no ")]

        by_pid = [a.label for a in snaps[-1].apps]
        assert labels()[:len(by_pid)] == by_pid
        await pilot.press("s")  # by name
        assert labels()[:len(by_pid)] == sorted(by_pid, key=str.lower)
        assert "App▲" in text_of(panel).splitlines()[1]
        await pilot.press("s", "s")  # cores, then util: the busiest first
        assert app.apps_sort == ("util", True)
        utils = [snaps[-1].app_util(a) for a in snaps[-1].apps]
        want = [a.label for u, a in sorted(zip(utils, snaps[-1].apps, strict=True), key=lambda t: (t[0] is None, -(t[0] or 0)))]
        assert labels()[:len(want)] == want
        assert "util▼" in text_of(panel).splitlines()[1]
        await pilot.press("S")
        assert app.apps_sort == ("util", False)
    shown = " ".join(f"{k} {d}" for _, rows in help_sections(list(type(app).BINDINGS)) for k, d in rows)
    assert "sort apps by the next column" in shown and "reverse the apps' order" in shown


async def test_the_layout_s_name_is_on_screen() -> None:
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.helpers import demo_snapshots

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4), layout="overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        bar = app.screen.query_one(AppTabs)
        assert bar.render_line(0).text.rstrip().endswith("overview layout")
        await pilot.press("l")
        await pilot.pause()
        assert bar.render_line(0).text.rstrip().endswith(f"{app.layout_state.name} layout")
        assert app.layout_state.name != "overview"


async def test_the_app_screen_shows_a_local_runtime_s_process() -> None:
    """nvitop's habit: a runtime whose pid is on this machine gets its command line, user, start time and RSS."""
    import os

    from neuron_top.tui.screens.app_detail import AppScreen

    doc = inf1()
    doc["neuron_runtime_data"][0]["pid"] = os.getpid()
    app = make_app([snap_of(doc)])
    app.local_pids = True
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        app.open_app(os.getpid())
        await pilot.pause()
        assert isinstance(app.screen, AppScreen)
        line = app.screen.query_one("#app-process")
        assert line.display and " RSS " in str(line.render()) and "user " in str(line.render())
    app = make_app([snap_of(doc)])  # a replay or a remote source: no local process, nothing said
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        app.open_app(os.getpid())
        await pilot.pause()
        assert not app.screen.query_one("#app-process").display


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_dot_gives_two_decimals_in_the_grid_and_the_core_screen_has_them(size: tuple[int, int]) -> None:
    """AWS neuron-top's 56.81%: "." in the grid (whole percents by default), always in the core screen."""
    import re

    from neuron_top.tui.screens.detail import CoreScreen
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("inf2.48xlarge", 7, 6)
    app = make_app(snaps)
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        assert not re.search(r"\[ *\d+\.\d\d%\]", text_of(grid))
        await pilot.press("full_stop")
        assert re.search(r"\[ *\d+\.\d\d%\]", text_of(grid)), text_of(grid)
        assert not any(re.search(r"\]\S", ln) for ln in text_of(grid).splitlines())  # cells still apart
        grid.focus()
        await pilot.press("right", "enter")
        assert isinstance(app.screen, CoreScreen)
        title = app.screen.panel.render_line(0).text
        assert re.search(r"now \d+\.\d\d%", title), title


def test_once_precise_prints_two_decimals(capfdbinary) -> None:
    from neuron_top.cli.main import main

    assert main(["demo", "--seed", "7", "--instance", "inf1.xlarge", "--once", "--precise"]) == 0
    out = capfdbinary.readouterr().out.decode()
    import re

    row = next(ln for ln in out.splitlines() if ln.strip().startswith("ND0"))
    assert len(re.findall(r"\[ *\d+\.\d\d%\]", row)) == 4, row


async def test_the_apps_title_says_1_app() -> None:
    from neuron_top.tui.widgets.apps import AppsPanel
    from tests.helpers import demo_snapshots

    app = make_app(demo_snapshots("trn1.32xlarge", 7, 4), tag="llama-7b-serve")
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        title = app.screen.query_one(AppsPanel).render_line(0).text
        assert "1 app · 0 errors" in title, title


def _device_memory_by_hand(doc: dict, cores_per_device: int, size: int | None) -> dict[int, str]:
    """Each device's memory used from the report's ``memory_used`` (every runtime's per-core categories), as the
    grid should print it: brute force, not the core's code."""
    used: dict[int, int] = {}
    for rt in doc["neuron_runtime_data"]:
        per_core = rt["report"]["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"][
            "neuroncore_memory_usage"]
        for core, cats in per_core.items():
            d = int(core) // cores_per_device
            used[d] = used.get(d, 0) + sum(v for v in cats.values() if isinstance(v, int) and v >= 0)
    gib = 2 ** 30
    return {d: f"{u / gib:.1f}/{size // gib}G" if size else f"{u / gib:.1f}G" for d, u in used.items()}


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_each_device_shows_its_memory_beside_its_cores(size: tuple[int, int]) -> None:
    """nvitop's MEM beside UTIL: on the real trn1n.32xlarge report (32 runtimes, 16 devices x 2 cores), every
    device's row ends with its memory used (of its size when the report gives one), at 120x40 and 200x60; at
    80x24, where the bars are one cell already (trn1n and trn2), the column is left out whole, never cut."""
    import re

    from tests.helpers import demo_snapshots

    doc = json.loads((FIXTURES / "trn1n_32xlarge_32runtimes_cwagent_test.json").read_text())
    snap = snap_of(doc)
    want = _device_memory_by_hand(doc, snap.cores_per_device, snap.hardware.neuron_device_memory_size)
    assert len(want) > 1
    mem = re.compile(r"ND(\d+) .*?\]\s+(\d[\d.]*(?:/\d+)?G|-)(?=\s+ND|\s*$)")
    for snaps in ([snap], demo_snapshots("trn2.48xlarge", 7, 4)):
        app = make_app(snaps)
        async with app.run_test(size=size) as pilot:
            await feed(pilot)
            lines = [s.text for s in app.screen.query_one(CoreGrid)._strips]
            assert all(len(line.rstrip()) <= size[0] - 2 for line in lines)
            shown = {int(d): m for line in lines[2:] for d, m in mem.findall(line)}
            if size == (80, 24):
                assert "MEM" not in lines[1] and not shown
            else:
                assert "MEM" in lines[1] and len(shown) == snaps[-1].device_count
                if snaps[-1] is snap:
                    assert shown == {d: want.get(d, "-") for d in range(snap.device_count)}


def test_device_memory_without_a_per_core_breakdown_on_one_device() -> None:
    """The inf2.xlarge fixture (runtime 2.30) gives only the runtime's device total, no per-core breakdown: on a
    machine of one device that total is the device's (MEM 0.1/32G), not "-"."""
    from neuron_top.output.cells import core_cells

    doc = json.loads((FIXTURES / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json").read_text())
    snap = snap_of(doc)
    used = sum(rt["report"]["memory_used"]["neuron_runtime_used_bytes"]["neuron_device"]
               for rt in doc["neuron_runtime_data"])
    size = doc["neuron_hardware_info"]["neuron_device_memory_size"]
    assert snap.device_count == 1 and used > 0
    assert core_cells(snap, snap.all).memory(0)[0] == f"{used / 2**30:.1f}/{size / 2**30:.0f}G"


@pytest.mark.parametrize(("panel", "key"), [("apps", "o"), ("apps", "/"), ("cores", "o"), ("cores", "/")])
async def test_keys_typed_right_after_enter_on_a_panel_go_to_the_screen_it_opens(panel: str, key: str) -> None:
    """Enter on the apps panel or the core grid, then ``o`` (or ``/``), in one read: Enter went to the panel's queue
    while the app took ``o``, a priority key, at once and opened the picker; Enter then chose "all" in it, or the
    panel's "open" message opened the drill-down over the picker. The panels' Enter is a priority key now, and the
    screen handles what it opens in the key's own turn (``keys.handle_now``). (The drill-downs' own core lists
    need neither: no priority key acts there.)"""
    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.screens.detail import CoreScreen
    from neuron_top.tui.screens.picker import AppPicker
    from neuron_top.tui.widgets.apps import AppsPanel
    from tests.helpers import demo_snapshots, type_at_once, until

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        widget, opens = {"apps": (AppsPanel, AppScreen), "cores": (CoreGrid, CoreScreen)}[panel]
        below = app.screen
        app.screen.query_one(widget).focus()
        await pilot.pause()
        type_at_once(app, "\r" + key)
        await until(lambda: isinstance(app.screen, opens) and app.screen is not below, what="the opened screen")
        await pilot.pause()
        assert isinstance(app.screen, opens) and not any(isinstance(s, AppPicker) for s in app.screen_stack), \
            app.screen_stack


async def test_two_runtimes_of_one_pid_each_have_their_tab() -> None:
    """The trn1n CloudWatch agent fixture: tags 367 and 123 in one pid. Tab 3 (123) showed 367's figures, and the
    tab bar marked both tabs as selected."""
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.conftest import REPORTS

    data = (REPORTS / "trn1n_32xlarge_cwagent_test_2024_line.json").read_bytes()
    snaps = []
    for i in range(3):
        report, problems = decode_report(data)
        snaps.append(Snapshot(report, T0 + i, i + 1, problems))
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        tabs = app.screen.query_one(AppTabs)
        for key, tag in (("2", "367"), ("3", "123")):
            await pilot.press(key)
            await pilot.pause()
            assert app.current_view().app.tag == tag
            bar = "".join(seg.text for seg in tabs.render_line(0))
            assert bar.count(">") == 1 and f">{tag}<" in bar, bar


@pytest.mark.parametrize(("keys", "value"), [
    (["a", "b", "backspace", "x"], "ax"),
    (["a", "home", "x"], "xa"),
    (["a", "b", "left", "x", "end", "y"], "axby"),
])
async def test_editing_keys_in_one_read_act_in_the_order_typed(keys: list[str], value: str) -> None:
    """``ab``, Backspace, ``x`` arriving in one read (typed fast, pasted, coalesced by ssh) left ``ab`` in the
    filter box: Textual's Input inserts a character where it gets the key, but runs an editing key as a binding
    once the key has bubbled up to the app, after the characters behind it (``widgets/textbox.py``)."""
    from textual import events
    from textual.widgets import Input

    from tests.helpers import demo_snapshots, until

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        for key in keys:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await until(lambda: len(box.value) >= len(value), what="the typed keys")
        await pilot.pause()
        assert box.value == value


@pytest.mark.parametrize("case", ["down enter on the apps panel", "2 enter on the tabs", "2 / on the tabs"])
async def test_keys_in_one_read_are_taken_in_the_order_typed(case: str) -> None:
    """Textual runs a priority binding (Enter on the tabs and panels, ``/``) when the app gets the key, and any other
    binding once its key has bubbled back up from the focused widget: keys in one read were taken out of order.
    ↓ Enter on the apps panel opened the app the cursor had been on; ``2`` Enter on the tabs opened the picker
    ("all" was still selected); ``2/b`` typed ``2b`` into the filter (``keys.in_order``)."""
    from textual import events
    from textual.widgets import Input

    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.widgets.apps import AppsPanel
    from neuron_top.tui.widgets.tabs import AppTabs
    from tests.helpers import demo_snapshots, until

    app = make_app(demo_snapshots("inf1.xlarge", 3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        apps = app.session.latest.apps
        if case.startswith("down"):
            app.screen.query_one(AppsPanel).focus()
            keys, opens = [("down", None), ("enter", "\r")], apps[1].key
        else:
            app.screen.query_one(AppTabs).focus()
            keys, opens = ([("2", "2"), ("enter", "\r")], apps[0].key) if "enter" in case else \
                ([("2", "2"), ("slash", "/"), ("b", "b")], None)
        await pilot.pause()
        for key, char in keys:
            app.post_message(events.Key(key, char))
        if opens is not None:
            await until(lambda: isinstance(app.screen, AppScreen), what="the app's screen")
            assert app.screen.pid == opens
        else:
            box = app.screen.query_one("#filter", Input)
            await until(lambda: box.value != "", what="the filter's text")
            await pilot.pause()
            assert (box.value, app.pid) == ("b", apps[0].key)  # "b" keeps bert-base-inf (tab 2) shown

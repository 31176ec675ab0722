"""Pilot tests of the fleet screen: every key, the drill-down and back, the heat map, label values shown
literally, a fleet replay, and the ssh fleet with a local stand-in for ssh (one host failing)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import msgspec
import pytest
from textual.widgets import Input, Static

from neuron_top.fleet.frame import FleetFrame, Problem
from neuron_top.fleet.record import FleetRecorder
from neuron_top.fleet.rows import DOWN, UP, FleetRow
from neuron_top.fleet.ssh import command_for
from neuron_top.recording.index import open_recording
from neuron_top.recording.player import ReplayController
from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.screens.fleet_host import FleetHostScreen
from neuron_top.tui.screens.fleet_replay import FleetReplayScreen
from neuron_top.tui.screens.fleet_sources import SshFleetScreen
from neuron_top.tui.screens.help import HelpScreen
from neuron_top.tui.widgets.fleet_header import FleetHeader
from neuron_top.tui.widgets.fleet_table import FleetTable
from neuron_top.tui.widgets.heatmap import HeatMap
from tests.conftest import ROOT
from tests.fleet_app import StaticFleet, fleet_app
from tests.fleet_support import FLEET_T0, demo_frame
from tests.helpers import demo_snapshots, type_at_once, until


def table_text(widget) -> list[str]:  # type: ignore[no-untyped-def]
    return [widget.render_line(y).text for y in range(widget.size.height)]


def hosts_shown(app: NeuronTopApp) -> list[str]:
    table = app.screen.query_one(FleetTable)
    return [ln.key for ln in table.lines if isinstance(ln, FleetRow)]


async def test_table_sorts_by_any_column_and_reverses() -> None:
    screen = StaticFleet(demo_frame(20))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert hosts_shown(app) == sorted(hosts_shown(app))
        for _ in range(5):  # host, name, type, zone, cores -> util
            await pilot.press("s")
        assert screen.sort == "util"
        utils = [r.util for r in app.screen.query_one(FleetTable).lines if isinstance(r, FleetRow)]
        assert utils == sorted(utils, reverse=True)
        await pilot.press("r")
        utils = [r.util for r in app.screen.query_one(FleetTable).lines if isinstance(r, FleetRow)]
        assert utils == sorted(utils)
        assert "UTIL ▲" in table_text(app.screen.query_one(FleetTable))[0]
        await pilot.press("S")
        assert screen.sort == "cores"


async def test_click_on_a_title_sorts_by_it() -> None:
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(FleetTable)
        x = table_text(table)[0].index("BAD/s")
        await pilot.click(FleetTable, offset=(x + 1, 0))
        assert screen.sort == "err" and not screen.reverse
        await pilot.click(FleetTable, offset=(x + 1, 0))
        assert screen.reverse


async def test_keys_typed_right_after_slash_go_into_the_fleet_filter() -> None:
    """``/hbq`` arriving at once: the box is focused before ``h`` (heat map), ``b`` (group by) and ``q`` (quit)
    are routed, so they are the filter's text."""
    screen = StaticFleet(demo_frame(30))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        group, heat = screen.group, screen.heat
        type_at_once(app, "/hbq/")
        await pilot.pause()
        assert app.is_running and app.screen.query_one("#fleet-filter", Input).value == "hbq/"
        assert (screen.group, screen.heat) == (group, heat)


async def test_filter_by_regex_over_names_and_labels() -> None:
    screen = StaticFleet(demo_frame(30))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"inf1")
        await pilot.pause()
        box = app.screen.query_one("#fleet-filter", Input)
        hint = app.screen.query_one("#fleet-filter-hint", Static)
        for widget in (box, hint):  # on screen: not under the footer (it was, docked to the same edge)
            assert app.screen.get_widget_at(widget.region.x + 1, widget.region.y)[0] is widget
        assert box.value == "inf1" and box.has_focus
        assert hosts_shown(app) and all(
            r.instance_type == "inf1.xlarge" for r in screen.frame.rows if r.key in hosts_shown(app))
        assert "filter /inf1/" in table_text(app.screen.query_one(FleetHeader))[0]
        await pilot.press("(")  # "inf1(" is not a regex: the line under the box says so, the last good one stays
        await pilot.pause()
        assert str(hint.render()).startswith("invalid regex: missing ), unterminated subpattern")
        assert screen.filter_text == "inf1"
        await pilot.press("backspace", "enter")  # Enter keeps the filter and puts the prompt away
        await pilot.pause()
        assert screen.filter_text == "inf1" and not app.screen.query_one("#fleet-filter-bar").display and str(hint.render()).startswith("filter:")
        await pilot.press("slash")
        await pilot.pause()
        assert box.value == "inf1"
        await pilot.press("z")  # typing replaces the filter shown selected; nothing matches "z": the table says so
        await pilot.pause()
        assert hosts_shown(app) == [] and "no host matches /z/" in table_text(app.screen.query_one(FleetTable))[1]
        await pilot.press("escape")
        assert screen.filter_text == "" and len(hosts_shown(app)) == 30


async def test_group_by_label_and_trouble_first() -> None:
    screen = StaticFleet(demo_frame(30))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("b")  # by instance type
        text = "\n".join(table_text(app.screen.query_one(FleetTable)))
        assert "▾ type inf1.xlarge ·" in text and "▾ type trn2.48xlarge ·" in text
        await pilot.press("b", "b", "b", "b")  # zone, region, status, back to none
        assert screen.group is None
        await pilot.press("end", "exclamation_mark")
        rows = [ln for ln in app.screen.query_one(FleetTable).lines if isinstance(ln, FleetRow)]
        assert rows[0].ecc_uncorrected  # the worst trouble on top
        assert screen.cursor_key == rows[0].key  # and the cursor on it
        assert table_text(app.screen.query_one(FleetTable))[1].startswith("! ")
        assert "trouble first" in table_text(app.screen.query_one(FleetHeader))[0]


async def test_enter_opens_a_host_and_escape_comes_back_with_the_cursor_kept() -> None:
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = app.session
        await pilot.press("end", "up")  # sorted by host: the copies ("i-000…") first, the real demo hosts last
        key = screen.cursor_key
        assert key == hosts_shown(app)[-2]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FleetHostScreen)
        assert app.session is not before and app.session.latest is not None
        assert screen.opened == [key]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and app.session is before
        assert screen.left == [key] and screen.cursor_key == key
        assert app.screen.query_one(FleetTable).current.key == key  # type: ignore[union-attr]
        await pilot.press("q")
    assert app.return_code == 0


async def test_keys_typed_right_after_enter_go_to_the_hosts_dashboard() -> None:
    """Enter and ``/bert`` arriving together (typed fast, or queued while a refresh was drawn): ``/`` was routed
    while the fleet was still on top, so it opened the fleet's filter and ``bert`` filtered the hosts, unseen
    behind the host's dashboard, whose filter stayed empty."""
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("end", "up")
        type_at_once(app, "\r/bert!")
        box = lambda: "".join(b.value for b in app.screen.query("#filter"))  # noqa: E731
        await until(lambda: isinstance(app.screen, FleetHostScreen) and box().endswith("!"),
                    what="the host dashboard's filter")
        assert box() == "bert!"
        assert screen.filter_text == ""  # the fleet's filter untouched


@pytest.mark.parametrize("heat", [False, True])
async def test_a_double_click_opens_a_host(heat: bool) -> None:
    """In the table and in the heat map (the help's "double click a host: open it")."""
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("r")  # the real demo hosts (with dashboards) first
        if heat:
            await pilot.press("h")
            await pilot.pause()
        view = app.screen.query_one(HeatMap if heat else FleetTable)
        await pilot.click(view, offset=(1, 0 if heat else 1), times=2)
        await until(lambda: isinstance(app.screen, FleetHostScreen), what="the host's dashboard")
        assert screen.opened


async def test_a_refresh_before_the_screen_hears_of_a_move_keeps_the_cursor_where_the_user_put_it() -> None:
    """End, then a refresh (a host's stream reported a status) handled before the table's ``Moved`` message: the
    refresh put the cursor back on the screen's older key, and Enter opened another host (the ssh fleet test's
    flake under load: "app.session is not the trn1-1 session")."""
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(FleetTable)
        first = table.current.key  # type: ignore[union-attr]
        table.action_edge(1)  # End: Moved is posted, not yet handled
        screen.apply_frame(screen.frame)  # type: ignore[arg-type]  # the refresh comes first
        assert table.current.key == hosts_shown(app)[-1] != first  # type: ignore[union-attr]
        await pilot.pause()
        assert screen.cursor_key == hosts_shown(app)[-1]
        table.action_edge(-1)
        await pilot.pause()
        table.action_edge(1)
        screen.action_trouble()  # a key after the move: ! puts the cursor on the worst host, as asked
        assert table.current.key == hosts_shown(app)[0] == screen.cursor_key  # type: ignore[union-attr]


async def test_a_host_without_a_dashboard_says_why_and_l_needs_a_template() -> None:
    screen = StaticFleet(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("home", "enter")  # sorted by host, the first is a copy ("i-000…"): no dashboard
        await pilot.pause()
        assert app.screen is screen
        assert any("no per-host dashboard" in str(n.message) for n in app._notifications)
        screen.action_live()
        await pilot.pause()
        assert any("--ssh-template" in str(n.message) for n in app._notifications)


async def test_heat_map_fits_256_hosts_at_80x24() -> None:
    screen = StaticFleet(demo_frame(256))
    app = fleet_app(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        heat = app.screen.query_one(HeatMap)
        assert heat.display and not app.screen.query_one(FleetTable).display
        lines = table_text(heat)
        cells = sum(len(ln.replace(" ", "")) for ln in lines[: heat.size.height - 2])
        assert cells >= 256  # every host has a cell on screen at once
        assert heat.top == 0 and heat._cell in (1, 3)
        assert lines[-1].lstrip().startswith("util 0-100%")
        await pilot.press("right", "right", "down")
        assert heat.current is not None and screen.cursor_key == heat.current.key
        await pilot.press("c")
        assert heat.heat == "util_max" and "util_max" in table_text(app.screen.query_one(FleetHeader))[0]
        await pilot.press("h")
        await pilot.pause()
        assert app.screen.query_one(FleetTable).current.key == heat.current.key  # type: ignore[union-attr]


async def test_heat_map_draws_stale_hosts_as_stale_not_by_their_old_value() -> None:
    """A host whose data is 5 minutes old at 95% was a full-strength cell; its old value also set the scale of the
    relative columns for everyone."""
    frame = demo_frame(6)
    rows = list(frame.rows)
    rows[0] = msgspec.structs.replace(rows[0], status="stale", age=300.0, util=95.0, exec_rate=1e6)
    rows[1] = msgspec.structs.replace(rows[1], status=DOWN, util=99.0, exec_rate=1e6)
    screen = StaticFleet(msgspec.structs.replace(frame, rows=rows))
    app = fleet_app(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        heat = app.screen.query_one(HeatMap)
        cells = {heat.lines[i].key: heat._cell_segment(i).text[0] for i in range(len(heat.lines))
                 if isinstance(heat.lines[i], FleetRow)}
        assert cells[rows[0].key] == "?" and cells[rows[1].key] == "×"
        heat.heat = "exec"
        heat.show(heat.lines, "host", False, None)
        live = max(r.exec_rate or 0.0 for r in rows[2:])
        assert heat._top_value == live  # the scale: current hosts only


async def test_apps_view_one_row_per_runtime_tag_and_enter_lists_its_hosts() -> None:
    """``a``: where each app runs and how busy it is, across hosts; Enter narrows the hosts to the app's."""
    from textual.widgets import DataTable

    from neuron_top.fleet.apps import apps_from_snapshots

    frame = demo_frame(12)
    hosts = [r.key for r in frame.rows]
    snaps = {h: demo_snapshots("trn2.48xlarge", i, 3)[-1] for i, h in enumerate(hosts[:3])}
    snaps[hosts[3]] = demo_snapshots("inf1.xlarge", 9, 1)[0]
    apps = apps_from_snapshots(snaps)
    screen = StaticFleet(msgspec.structs.replace(frame, apps=apps))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        table = app.screen.query_one("#fleet-apps", DataTable)
        assert table.display and not app.screen.query_one(FleetTable).display
        assert table.row_count == len(apps) and table.has_focus
        first = [str(c) for c in table.get_row_at(0)]
        assert first[0] == apps[0].tag and first[1] == str(len(apps[0].hosts))
        await pilot.press("enter")
        await pilot.pause()
        assert not screen.show_apps and app.screen.query_one(FleetTable).display
        assert sorted(hosts_shown(app)) == sorted(apps[0].hosts)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.show_apps


async def test_untrusted_label_values_render_literally() -> None:
    evil = FleetRow(key="i-[bold red]boom[/]", name="\x1b[31mred\x1b[0m", instance_type="trn2\x1b]0;pwn\x07",
                    util=50.0, note="[link=http://x]click[/link]")
    frame = FleetFrame(ts=FLEET_T0, source="prometheus [b]x[/b]", rows=[evil])
    screen = StaticFleet(frame)
    app = fleet_app(screen)
    async with app.run_test(size=(200, 24)) as pilot:
        await pilot.pause()
        lines = table_text(app.screen.query_one(FleetTable))
        row = lines[1]
        assert "i-[bold red]boom[/]" in row and "trn2\\x1b]0;pw" in row
        assert "[link=http://x]click[/li" in row
        assert "trn2\\x1b]0;pwn\\x07" in lines[-1] and "[link=http://x]click[/link]" in lines[-1]  # in full
        assert all("\x1b" not in ln and "\x07" not in ln for ln in lines)
        assert "prometheus [b]x[/b]" in table_text(app.screen.query_one(FleetHeader))[0]
        await pilot.press("h")
        await pilot.pause()
        info = table_text(app.screen.query_one(HeatMap))[-2]
        assert "i-[bold red]boom[/]" in info and "\x1b" not in info


async def test_header_summary_and_problems() -> None:
    frame = msgspec.structs.replace(demo_frame(10), state="partial", problems=[
        Problem(name="ecc", message="bad_data: parse error", query="sum(increase(x[15x]))")])
    screen = StaticFleet(frame)
    app = fleet_app(screen)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        text = table_text(app.screen.query_one(FleetHeader))
        assert "PARTIAL" in text[0] and "9 queries in 42 ms" in text[0]
        assert text[1].lstrip().startswith("10 hosts:")
        assert "query 'ecc' failed: bad_data: parse error · query: sum(increase(x[15x]))" in text[2]
        await pilot.press("e")
        assert any("sum(increase(x[15x]))" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("width", [80, 100, 120])
async def test_the_header_leaves_out_whole_parts_at_any_width(width: int) -> None:
    """At 120 columns it ended "· 5 queries in" (the milliseconds cut away), at 80 "· prometheu". A figure is
    shown whole or left out; the source, words, may be cut with its "…"."""
    frame = msgspec.structs.replace(demo_frame(10), source="prometheus http://127.0.0.1:19090", notes=["raw series"])
    app = fleet_app(StaticFleet(frame))
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        line = table_text(app.screen.query_one(FleetHeader))[0].rstrip()
        whole = ["sort host ▼", "raw series", "prometheus http://127.0.0.1:19090", "9 queries in 42 ms"]
        *kept, last = line.split(" · ")[1:]
        assert kept == whole[:len(kept)], line
        assert last == "…" or (last.endswith("…") and whole[len(kept)].startswith(last[:-1]) and len(kept) == 2), line


async def test_header_says_how_the_figures_were_read_and_what_the_server_warned() -> None:
    frame = msgspec.structs.replace(demo_frame(10), state="partial", notes=[
        "recording rules", "answers over 500 series split by availability_zone (3 parts)"], problems=[
        Problem(name="util", message="store-2: unavailable, partial response", query="avg by (instance_id) (x)",
                warning=True)])
    app = fleet_app(StaticFleet(frame))
    async with app.run_test(size=(220, 40)) as pilot:
        await pilot.pause()
        text = table_text(app.screen.query_one(FleetHeader))
        assert "PARTIAL" in text[0] and "· recording rules · answers over 500 series split by availability_zone" \
            in text[0]
        assert "query 'util' warned: store-2: unavailable, partial response" in text[2]


async def test_help_lists_the_fleet_keys() -> None:
    app = fleet_app(StaticFleet(demo_frame(4)))
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        sections = dict(app.screen.sections)  # as the help screen made them, opened from the fleet
        shown = " ".join(f"{k} {d}" for rows in sections.values() for k, d in rows)
        assert {"Fleet (neuron-top fleet)", "Fleet heat map (h)", "Fleet host (⏎ on a host)"} <= set(sections)
        assert next(iter(sections)) == "Fleet (neuron-top fleet)"  # opened from the fleet: its keys first
        for words in ("! trouble first", "b group by", "h heat map", "esc back to the fleet", "l live over ssh",
                      "/ filter", "s sort"):
            assert words in shown, words


async def test_a_recorded_fleet_replays_with_transport_keys(tmp_path: Path) -> None:
    path = tmp_path / "fleet.jsonl"
    rec = FleetRecorder(path)
    base = demo_frame(6)
    for i in range(5):
        rows = list(base.rows)
        if i >= 3:  # the second host goes down at refresh 4
            rows[1] = msgspec.structs.replace(rows[1], status=DOWN, age=300.0)
        rec.write(msgspec.structs.replace(base, ts=FLEET_T0 + 2 * i, rows=rows))
    rec.close()
    index = open_recording(path)
    index.wait()
    controller = ReplayController(index)
    controller.playing = False
    screen = FleetReplayScreen(controller, str(path))
    app = fleet_app(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        header = app.screen.query_one(FleetHeader)
        assert "refresh 1/5" in table_text(header)[0]
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert "refresh 4/5" in table_text(header)[0]
        assert screen.frame is not None and screen.frame.rows[1].status == DOWN
        await until(lambda: controller.markers, what="the markers scanned")
        assert [m.index for m in controller.markers if m.kind == "host-down"] == [3]  # not "z stall"
        await pilot.press("g")  # the replay's start key
        assert "refresh 1/5" in table_text(header)[0]
        await pilot.press("enter")
        assert any("keeps each host's row" in str(n.message) for n in app._notifications)


@pytest.fixture
def fast_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SSH_PERIOD", "0.3")


async def test_ssh_fleet_with_a_failing_host(fast_demo: None) -> None:
    template = f"{sys.executable} {ROOT / 'tests' / 'fake_ssh.py'} {{host}} neuron-monitor"
    screen = SshFleetScreen(["trn1-1", "bad-2", "inf1-3"], lambda h: command_for(template, {"host": h}),
                            interval=0.5)
    app = fleet_app(screen)
    async with app.run_test(size=(160, 40)) as pilot:

        def rows() -> dict[str, FleetRow]:
            return {r.key: r for r in screen.frame.rows} if screen.frame else {}

        # the failing host's stderr can show in its note while it is still starting: wait for it down
        await until(lambda: (r := rows()) and r["trn1-1"].status == UP and r["inf1-3"].status == UP
                    and r["bad-2"].status == DOWN, what="two hosts up, the third down")
        rows = rows()  # type: ignore[assignment]
        assert rows["bad-2"].status == DOWN and "Connection refused" in rows["bad-2"].note
        assert rows["trn1-1"].instance_type == "trn1.32xlarge" and rows["inf1-3"].util is not None
        text = "\n".join(table_text(app.screen.query_one(FleetTable)))
        assert "Connection refused" in text
        await pilot.press("end")  # sorted by host: trn1-1 is last
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, FleetHostScreen), what="the host's dashboard")
        assert app.session is screen.fleet.sessions["trn1-1"]
        reports = app.session.reports
        # the host's stream keeps coming while its dashboard is open
        await until(lambda: app.session.reports > reports, what="another report")
        await pilot.press("escape")
        await until(lambda: app.screen is screen, what="back to the fleet")
        await pilot.press("q")
    await asyncio.sleep(0)


async def test_l_opens_the_hosts_live_stream_over_ssh(fast_demo: None) -> None:
    """A Prometheus host's ``l``: its ``--ssh-template`` command, filled with the row's labels, as a live source."""
    from neuron_top.fleet.ssh import HostStream
    from neuron_top.tui.screens.fleet_sources import PromFleetScreen, template_values

    template = f"{sys.executable} {ROOT / 'tests' / 'fake_ssh.py'} trn1-{{instance_type}} neuron-monitor"

    class WithSsh(StaticFleet):
        BINDINGS = PromFleetScreen.BINDINGS  # the Prometheus fleet's l

        def live_command(self, row: FleetRow):  # type: ignore[no-untyped-def]
            return HostStream(row.key, command_for(template, template_values(row, "instance_id")))

    screen = WithSsh(demo_frame(12))
    app = fleet_app(screen)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("end", "l")
        await until(lambda: isinstance(app.screen, FleetHostScreen) and app.session.latest is not None,
                    what="the host's first report over ssh")
        assert isinstance(app.screen, FleetHostScreen) and "(live over ssh)" in app.screen.host_title
        assert "fake_ssh.py" in app.session.status.name and app.session.latest is not None
        await pilot.press("escape")
        # its stream stopped when its dashboard closed (after the pop: a pause guessed it done too soon under load)
        await until(lambda: app.screen is screen and screen.left, what="the live stream left")

"""ssh mode: commands built without a shell, one restarting stream per host (with a local stand-in for ssh), and the
rows made from the hosts' sessions, including a host that fails."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from neuron_top.feed import Feed, Report, StatusChanged
from neuron_top.fleet.rows import DOWN, UP
from neuron_top.fleet.sessions import SessionFleet
from neuron_top.fleet.ssh import HostStream, TemplateError, command_for, read_hosts
from neuron_top.sources.base import State
from neuron_top.sources.monitor import Backoff
from tests.conftest import REPORTS, ROOT

FAKE_SSH = f"{sys.executable} {ROOT / 'tests' / 'fake_ssh.py'} -o BatchMode=yes {{host}} neuron-monitor"


@pytest.fixture(autouse=True)
def fast_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SSH_PERIOD", "0.2")


def test_host_names_never_become_shell_syntax() -> None:
    argv = command_for("ssh -o BatchMode=yes {host} 'neuron-monitor -c /etc/n.conf'", {"host": "h; rm -rf ~"})
    assert argv == ["ssh", "-o", "BatchMode=yes", "h; rm -rf ~", "neuron-monitor -c /etc/n.conf"]
    assert command_for("ssh ec2-user@{instance_id}", {"instance_id": "i-1", "host": "x"}) == ["ssh", "ec2-user@i-1"]


@pytest.mark.parametrize("template, why", [("ssh '{host}", "cannot split"), ("ssh {hots}", "{hots}"),
                                           ("", "empty"), ("ssh {host!x}", "bad"),
                                           ("ssh {host.upper}", "plain names"), ("ssh {}", "plain names")])
def test_bad_templates_are_said(template: str, why: str) -> None:
    with pytest.raises(TemplateError, match=why.replace("{", r"\{").replace("}", r"\}")):
        command_for(template, {"host": "h"})


def test_hosts_file(tmp_path: Path) -> None:
    f = tmp_path / "hosts"
    f.write_text("# the training job\ntrn2-1 trn2-2\n\n  trn2-3  # the odd one\ntrn2-1\n")
    assert read_hosts(f) == ["trn2-1", "trn2-2", "trn2-3"]


def events_until(feed: Feed, want, timeout: float = 20.0) -> list:  # type: ignore[no-untyped-def]
    got = []
    deadline = time.monotonic() + timeout
    for ev in feed.events():
        got.append(ev)
        if want(got) or time.monotonic() > deadline:
            break
    return got


def test_a_host_streams_reports() -> None:
    stream = HostStream("trn2-3", command_for(FAKE_SSH, {"host": "trn2-3"}))
    feed = Feed(stream)
    try:
        got = events_until(feed, lambda evs: sum(isinstance(e, Report) for e in evs) >= 2)
    finally:
        feed.close()
    reports = [e for e in got if isinstance(e, Report)]
    assert len(reports) >= 2 and reports[0].snapshot.instance.instance_type == "trn2.48xlarge"
    assert any(isinstance(e, StatusChanged) and e.status.state == State.LIVE for e in got)


def test_a_failing_host_says_why_and_is_retried_with_backoff() -> None:
    stream = HostStream("bad-1", command_for(FAKE_SSH, {"host": "bad-1"}), backoff=Backoff(0.05, 0.1))
    feed = Feed(stream)
    try:
        got = events_until(feed, lambda evs: sum(isinstance(e, StatusChanged) and e.status.state == State.RESTARTING
                                                 for e in evs) >= 2)
    finally:
        feed.close()
    restarts = [e.status for e in got if isinstance(e, StatusChanged) and e.status.state == State.RESTARTING]
    assert len(restarts) == 2
    assert restarts[0].message == ("ssh: connect to host bad-1 port 22: Connection refused (exited with status 255 "
                                   "after 0 reports); retrying in 0.05 s")
    assert "retrying in 0.1 s" in restarts[1].message  # the back-off doubles


def test_a_dropped_stream_comes_back() -> None:
    stream = HostStream("flaky-2", command_for(FAKE_SSH, {"host": "flaky-2"}), backoff=Backoff(0.05, 0.1))
    feed = Feed(stream)
    try:
        got = events_until(feed, lambda evs: sum(isinstance(e, Report) for e in evs) >= 5)
    finally:
        feed.close()
    states = [e.status.state for e in got if isinstance(e, StatusChanged)]
    assert State.RESTARTING in states and states.count(State.LIVE) >= 2


def test_close_stops_the_child_at_once() -> None:
    me = psutil.Process()
    stream = HostStream("trn1-4", command_for(FAKE_SSH, {"host": "trn1-4"}))
    feed = Feed(stream)
    done = threading.Event()

    def run() -> None:
        for ev in feed.events():
            if isinstance(ev, Report):
                done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert done.wait(20)
    children = me.children(recursive=True)
    assert children
    feed.close()
    t.join(10)
    assert not t.is_alive()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive


def test_session_fleet_rows_say_why_a_host_is_down() -> None:
    hosts = ["trn2-1", "bad-host", "inf1-2"]
    fleet = SessionFleet(hosts)
    lock = threading.Lock()
    feeds = {h: Feed(HostStream(h, command_for(FAKE_SSH, {"host": h}), backoff=Backoff(5, 5))) for h in hosts}
    seen: dict[str, set[str]] = {h: set() for h in hosts}

    def run(h: str) -> None:
        for ev in feeds[h].events():
            with lock:
                fleet.apply(h, ev)
                seen[h].add(type(ev).__name__ if not isinstance(ev, StatusChanged) else ev.status.state.value)

    threads = [threading.Thread(target=run, args=(h,), daemon=True) for h in hosts]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with lock:
            if "Report" in seen["trn2-1"] and "Report" in seen["inf1-2"] and "restarting" in seen["bad-host"]:
                break
        time.sleep(0.05)
    for f in feeds.values():
        f.close()
    with lock:
        frame = fleet.frame()
    rows = {r.key: r for r in frame.rows}
    assert [r.key for r in frame.rows] == hosts
    assert rows["trn2-1"].status == UP and rows["trn2-1"].instance_type == "trn2.48xlarge"
    assert rows["inf1-2"].status == UP and rows["inf1-2"].util is not None
    bad = rows["bad-host"]
    assert bad.status == DOWN and "Connection refused" in bad.note and bad.util is None
    assert frame.source == "ssh 3 hosts"


def test_the_stand_in_is_executable_as_a_command() -> None:
    assert os.access(ROOT / "tests" / "fake_ssh.py", os.R_OK)


def test_a_host_that_stops_reporting_turns_stale_by_its_session() -> None:
    from neuron_top.feed import Report as R
    from neuron_top.sources.base import Status
    from tests.helpers import demo_snapshots

    t = [100.0]
    fleet = SessionFleet(["h"], clock=lambda: t[0])
    fleet.apply("h", StatusChanged(Status(State.LIVE, "reports from ssh h")))
    assert fleet.row("h").status == "starting"  # connected, nothing to show yet
    for snap in demo_snapshots("inf1.xlarge", 3, 3):
        fleet.apply("h", R(snap, b""))
        t[0] += 1.0
    assert fleet.row("h").status == UP
    t[0] += 60.0  # three of its periods and more without a report
    row = fleet.row("h")
    assert row.status == "stale" and row.util is not None and "no report for" in row.note


def test_once_keeps_reading_every_host_while_it_waits_for_a_slow_one() -> None:
    """``fleet --ssh ... --once`` waits for every host's first report; a host that answered early keeps being read
    meanwhile, so it is up at the end, not stale because the wait was long (it was, when its feed stopped at its
    first report)."""
    from neuron_top.cli.fleet_cmd import ssh_once

    frame = ssh_once(["trn2-5", "mute-1", "garbage-1"], lambda h: command_for(FAKE_SSH, {"host": h}), timeout=8.0)
    rows = {r.key: r for r in frame.rows}
    assert rows["trn2-5"].status == UP and rows["trn2-5"].age is not None and rows["trn2-5"].age < 3.0, rows  # reports come every 0.2 s
    # a command that hangs, and one that prints only banners: down when the wait is over (they were "starting")
    assert rows["mute-1"].status == DOWN and rows["mute-1"].util is None
    assert "not one report within 8 s" in rows["mute-1"].note
    assert rows["garbage-1"].status == DOWN and "only input that is not a report within 8 s" in rows["garbage-1"].note


def test_once_shows_a_host_whose_command_ends_after_its_report_as_up() -> None:
    """``--command 'cat ...'``-like hosts: one report, then the command exits. A host whose exit came before the
    slowest host's report was "down 0s (exited with status 0 after 1 report; retrying in 1 s)" beside its figures,
    the others up: the same input, two outcomes, as the race decided."""
    from neuron_top.cli.fleet_cmd import ssh_once

    files = [str(REPORTS / f) for f in ("inf1_xlarge_single_runtime.json", "wandb_trn1_2xlarge_0.json")]
    slow = str(REPORTS / "inf1_xlarge_idle_no_runtimes.json")

    def command(host: str) -> list[str]:
        return ["sh", "-c", f'{"sleep 1; " if host == slow else ""}cat "$0"', host]

    frame = ssh_once([*files, slow], command, timeout=10.0)
    assert {r.key: (r.status, r.note) for r in frame.rows} == {h: (UP, "") for h in (*files, slow)}
    assert all(r.instance_type for r in frame.rows)


def test_a_host_that_hangs_or_prints_garbage_is_down_after_the_deadline_not_starting_for_ever() -> None:
    from neuron_top.feed import Report as R
    from neuron_top.feed import SkippedInput
    from neuron_top.sources.base import Skipped, Status
    from tests.helpers import demo_snapshots

    t = [100.0]
    fleet = SessionFleet(["mute", "garbage", "ok"], clock=lambda: t[0], first_report_within=30.0)
    for h in ("mute", "garbage", "ok"):
        fleet.apply(h, StatusChanged(Status(State.LIVE, f"reports from ssh {h}")))
    for n in range(1, 50):
        fleet.apply("garbage", SkippedInput(Skipped("not JSON", "Welcome"), n))
    fleet.apply("ok", R(demo_snapshots("inf1.xlarge", 3, 1)[0], b""))
    t[0] += 20.0
    assert {r.key: r.status for r in fleet.frame().rows} == {"mute": "starting", "garbage": "starting",
                                                             "ok": "stale"}  # one report, 20 s ago
    t[0] += 15.0
    rows = {r.key: r for r in fleet.frame().rows}
    assert rows["mute"].status == DOWN and rows["mute"].note.startswith("not one report within 30 s")
    assert rows["garbage"].status == DOWN and "only input that is not a report" in rows["garbage"].note
    assert "49 bad input skipped" in rows["garbage"].note
    assert rows["ok"].status == "stale"  # it reported once: stale, by its session's rule, not down
    # it reconnects: waited for afresh, up with its first report
    fleet.apply("mute", StatusChanged(Status(State.RESTARTING, "ssh exited; retrying in 2 s")))
    fleet.apply("mute", StatusChanged(Status(State.STARTING, "connecting")))
    assert fleet.row("mute").status == "starting"
    fleet.apply("mute", StatusChanged(Status(State.LIVE, "reports from ssh mute")))
    fleet.apply("mute", R(demo_snapshots("inf1.xlarge", 4, 1)[0], b""))
    assert fleet.row("mute").status == UP


def test_once_exits_1_when_no_host_answered_over_ssh_as_over_prometheus(capsys: pytest.CaptureFixture) -> None:
    """``fleet --ssh ... --once`` exited 0 with every host down, where Prometheus mode exits 1 when nothing
    answered: one rule now (``FleetFrame.none_answered``), whatever the source."""
    import argparse

    from neuron_top.cli.fleet_cmd import print_frame
    from neuron_top.fleet.frame import FleetFrame
    from neuron_top.fleet.rows import FleetRow

    ns = argparse.Namespace(json=True)
    down = [FleetRow(key=h, status=DOWN) for h in ("a", "b")]
    assert print_frame(FleetFrame(ts=0.0, source="ssh 2 hosts", rows=down), ns) == 1
    assert print_frame(FleetFrame(ts=0.0, source="ssh 2 hosts", rows=[*down, FleetRow(key="c")]), ns) == 0
    assert print_frame(FleetFrame(ts=0.0, source="prometheus x", state="unreachable"), ns) == 1
    assert print_frame(FleetFrame(ts=0.0, source="prometheus x"), ns) == 0  # no host at all: said, not failed
    capsys.readouterr()

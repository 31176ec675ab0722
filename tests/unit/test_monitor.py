"""MonitorSource against a fake neuron-monitor that prints reports, writes to stderr and exits."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from neuron_top.sources.base import RawReport, State, Status
from neuron_top.sources.monitor import Backoff, MonitorSource, find_neuron_monitor
from tests.unit.source_threads import Running

REPORT = {"neuron_runtime_data": [], "system_data": {"memory_info": {"memory_total_bytes": 7}}}

FAKE = """#!{python}
import json, os, sys, time
args = sys.argv[1:]
state = {state!r}
runs = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(runs + 1))
with open(state + ".args", "a") as f:
    f.write(json.dumps(args) + "\\n")
if "-c" in args:
    with open(state + ".conf", "wb") as f:
        f.write(open(args[args.index("-c") + 1], "rb").read())
print("neuron-monitor run", runs, "starting", file=sys.stderr, flush=True)
for i in range({reports}):
    sys.stdout.write(json.dumps({report}) + "\\n")
    sys.stdout.flush()
{tail}
"""


def install_fake(tmp_path: Path, *, reports: int = 2, tail: str = "sys.exit(3)") -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "neuron-monitor"
    exe.write_text(
        FAKE.format(
            python=sys.executable, state=str(tmp_path / "runs"), reports=reports, report=REPORT, tail=tail
        )
    )
    exe.chmod(0o755)
    return exe


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def take(source: MonitorSource, until: int, stop: threading.Event | None = None) -> list[object]:
    """Collect items until ``until`` RESTARTING statuses were seen (each means one run ended)."""
    stop = stop or threading.Event()
    out: list[object] = []
    for item in source.items(stop):
        out.append(item)
        if isinstance(item, Status) and item.state is State.RESTARTING:
            until -= 1
            if until == 0:
                stop.set()
    source.close()
    return out


def test_find_neuron_monitor_on_path(tmp_path: Path) -> None:
    exe = install_fake(tmp_path)
    assert find_neuron_monitor(str(exe.parent)) == str(exe)
    assert find_neuron_monitor(str(tmp_path / "empty")) in (None, "/opt/aws/neuron/bin/neuron-monitor")


def test_a_monitor_that_dies_is_restarted_with_backoff_and_its_stderr_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = install_fake(tmp_path)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    sleeps: list[float] = []
    source = MonitorSource(sleep=sleeps.append, clock=FakeClock())
    items = take(source, until=4)
    reports = [i for i in items if isinstance(i, RawReport)]
    assert len(reports) == 8
    assert json.loads(reports[0].data) == REPORT
    restarts = [i for i in items if isinstance(i, Status) and i.state is State.RESTARTING]
    assert (
        restarts[0].message
        == "neuron-monitor exited with status 3 after 0 s and 2 reports; restarting in 1 s"
    )
    assert restarts[0].exit_status == 3
    assert "neuron-monitor run 0 starting" in restarts[0].detail
    assert "neuron-monitor run 3 starting" in restarts[3].detail
    assert sleeps == [1.0, 2.0, 4.0]  # the 4th wait is skipped: stop was set
    assert [i.state for i in items if isinstance(i, Status)][:3] == [
        State.STARTING,
        State.LIVE,
        State.RESTARTING,
    ]
    assert (tmp_path / "runs").read_text() == "4"


def test_backoff_caps_and_resets_after_a_healthy_run(tmp_path: Path) -> None:
    backoff = Backoff()
    assert [backoff.next() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    backoff.reset()
    assert backoff.next() == 1

    exe = install_fake(tmp_path)
    clock = FakeClock()

    def ticking() -> float:
        clock.now += 100  # every look at the clock is 100 s later: every run is long, hence healthy
        return clock.now

    sleeps: list[float] = []
    take(MonitorSource(executable=str(exe), sleep=sleeps.append, clock=ticking, healthy_run=50), until=3)
    assert sleeps == [1.0, 1.0]
    sleeps.clear()
    take(MonitorSource(executable=str(exe), sleep=sleeps.append, clock=clock, healthy_run=50), until=3)
    assert sleeps == [1.0, 2.0]  # a frozen clock: every run is short


def test_a_monitor_that_exits_at_once_without_reports_keeps_backing_off(tmp_path: Path) -> None:
    exe = install_fake(
        tmp_path, reports=0, tail="print('config error: bad period', file=sys.stderr); sys.exit(1)"
    )
    sleeps: list[float] = []
    source = MonitorSource(executable=str(exe), sleep=sleeps.append, clock=FakeClock())
    items = take(source, until=3)
    restarts = [i for i in items if isinstance(i, Status) and i.state is State.RESTARTING]
    assert "exited with status 1 after 0 s and 0 reports" in restarts[0].message
    assert "config error: bad period" in restarts[0].detail
    assert not any(isinstance(i, RawReport) for i in items)
    assert sleeps == [1.0, 2.0]


def test_config_is_passed_with_dash_c(tmp_path: Path) -> None:
    exe = install_fake(tmp_path)
    conf = tmp_path / "monitor.conf"
    conf.write_text('{"period": "1s", "system_metrics": [{"type": "memory_info"}]}')
    take(MonitorSource(conf, executable=str(exe), sleep=lambda s: None), until=1)
    assert json.loads((tmp_path / "runs.args").read_text().splitlines()[0]) == ["-c", str(conf)]


def test_tag_rewrites_the_config_for_neuron_monitor_and_cleans_up(tmp_path: Path) -> None:
    exe = install_fake(tmp_path)
    source = MonitorSource(tag="^bert", executable=str(exe), sleep=lambda s: None)
    take(source, until=1)
    seen = json.loads((tmp_path / "runs.conf").read_text())
    assert [r["tag_filter"] for r in seen["neuron_runtimes"]] == ["^bert"]
    args = json.loads((tmp_path / "runs.args").read_text().splitlines()[0])
    assert not os.path.exists(args[1])  # the temporary config is removed by close()


def test_bad_tag_fails_without_starting(tmp_path: Path) -> None:
    exe = install_fake(tmp_path)
    items = take(MonitorSource(tag="(", executable=str(exe), sleep=lambda s: None), until=1)
    assert [i.state for i in items if isinstance(i, Status)] == [State.FAILED]
    assert "--tag" in items[0].message  # type: ignore[union-attr]
    assert not (tmp_path / "runs").exists()


def test_missing_executable_is_reported_and_retried(tmp_path: Path) -> None:
    sleeps: list[float] = []
    source = MonitorSource(executable=str(tmp_path / "gone"), sleep=sleeps.append)
    items = take(source, until=2)
    assert all(isinstance(i, Status) and i.state is State.RESTARTING for i in items)
    assert "cannot start neuron-monitor" in items[0].message  # type: ignore[union-attr]
    assert sleeps == [1.0]


def test_not_found_at_all_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("neuron_top.sources.monitor.find_neuron_monitor", lambda path=None: None)
    items = list(MonitorSource().items(threading.Event()))
    assert [i.state for i in items if isinstance(i, Status)] == [State.FAILED]
    assert "neuron-monitor not found" in items[0].message  # type: ignore[union-attr]


def test_close_terminates_a_running_monitor_and_ends_items(tmp_path: Path) -> None:
    exe = install_fake(tmp_path, reports=1, tail="time.sleep(600)")
    source = MonitorSource(executable=str(exe))
    running = Running(source)
    running.wait_for(lambda i: isinstance(i, RawReport))
    child = source._child
    assert child is not None
    assert running.close()
    assert child.proc.poll() is not None
    assert not any(isinstance(i, Status) and i.state is State.RESTARTING for i in running.got)


def test_close_wakes_the_restart_wait(tmp_path: Path) -> None:
    exe = install_fake(tmp_path, reports=0)
    running = Running(MonitorSource(executable=str(exe), backoff=Backoff(first=600)))
    running.wait_for(lambda i: isinstance(i, Status) and i.state is State.RESTARTING)
    assert running.close()  # long before the 600 s back-off is over


def test_the_fake_neuron_monitor_script_is_restarted(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "fake-neuron-monitor"
    conf = tmp_path / "m.conf"
    conf.write_text('{"period": "10ms", "system_metrics": [{"type": "memory_info"}]}')
    exe = tmp_path / "neuron-monitor"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {script} --die-after 2 --exit-code 4 "$@"\n')
    exe.chmod(0o755)
    sleeps: list[float] = []
    items = take(MonitorSource(conf, executable=str(exe), sleep=sleeps.append), until=2)
    assert len([i for i in items if isinstance(i, RawReport)]) == 4
    restart = next(i for i in items if isinstance(i, Status) and i.state is State.RESTARTING)
    assert "exited with status 4" in restart.message
    assert "exiting after 2 reports" in restart.detail


def test_a_monitor_that_disappears_after_running_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = install_fake(tmp_path)
    found = iter([str(exe), None, None, str(exe)])
    monkeypatch.setattr("neuron_top.sources.monitor.find_neuron_monitor", lambda path=None: next(found))
    sleeps: list[float] = []
    items = take(MonitorSource(sleep=sleeps.append), until=4)
    restarts = [i.message for i in items if isinstance(i, Status) and i.state is State.RESTARTING]
    assert "not found" in restarts[1] and "retrying in 2 s" in restarts[1]
    assert "not found" in restarts[2]
    assert "exited with status 3" in restarts[3]
    assert len([i for i in items if isinstance(i, RawReport)]) == 4

"""The dashboard's ``--command`` is restarted with back-off when it fails, as neuron-monitor is (issue 32 item 8);
a command that exits 0 has ended (it said everything); one that cannot run fails at once."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from neuron_top.sources.base import Backoff, RawReport, State, Status
from neuron_top.sources.live import choose_live_source
from neuron_top.sources.stream import CommandSource

REPORT = b'{"neuron_runtime_data":[],"system_data":{}}'


def _until(source: CommandSource, restarts: int) -> list[object]:
    stop = threading.Event()
    out: list[object] = []
    for item in source.items(stop):
        out.append(item)
        if sum(isinstance(i, Status) and i.state is State.RESTARTING for i in out) >= restarts:
            stop.set()
    source.close()
    return out


def _dashboard_source(command: str, slept: list[float]) -> CommandSource:
    src = choose_live_source(config_path=None, tag=None, command=command, monitor=lambda: None).source
    assert isinstance(src, CommandSource) and src.restart is not None and not src.restart_on_success
    src._sleep = slept.append
    src.restart = Backoff(1.0, 30.0)
    return src


def test_a_failing_command_is_restarted_with_back_off(tmp_path: Path) -> None:
    script = tmp_path / "drop.py"
    script.write_text(f"import sys\nsys.stdout.buffer.write({REPORT!r} + b'\\n')\n"
                      "print('Connection reset by peer', file=sys.stderr)\nsys.exit(255)\n")
    slept: list[float] = []
    items = _until(_dashboard_source(f"{sys.executable} {script}", slept), 3)
    restarts = [i for i in items if isinstance(i, Status) and i.state is State.RESTARTING]
    assert len(restarts) == 3 and slept[:2] == [1.0, 2.0]
    assert restarts[0].exit_status == 255 and "Connection reset" in restarts[0].detail
    assert "exited with status 255 after 1 report; restarting in 1 s" in restarts[0].message
    assert sum(isinstance(i, RawReport) for i in items) == 3  # each run's report came through
    assert not any(isinstance(i, Status) and i.state is State.FAILED for i in items)


def test_exit_zero_ends_and_a_command_that_cannot_run_fails_at_once(tmp_path: Path) -> None:
    data = tmp_path / "r.jsonl"
    data.write_bytes(REPORT + b"\n")
    items = _until(_dashboard_source(f"cat {data}", []), 1)
    assert isinstance(items[-1], Status) and items[-1].state is State.ENDED
    items = _until(_dashboard_source("/nonexistent/neuron-monitor", []), 1)
    assert [i.state for i in items if isinstance(i, Status)] == [State.FAILED]

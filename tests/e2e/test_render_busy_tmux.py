"""End-to-end: on a busy machine the terminal shows what the app drew (the render engine's direct path).

With the CPU taken by other processes and the app niced, several fleet refreshes land before one flush of the
panels' changed cells. The engine used to send such a frame with cells missing (``paint.merged`` says why):
the fleet's summary line read ``p10 51.7rs -/s · ex0/s`` until Ctrl+L. Here the table is paused after a busy
run, the screen captured, then Ctrl+L makes the app send every cell again: the two captures must be the same
(the header's first line, whose "refreshed N s ago" ticks, aside).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.test_tmux import Tmux, nt, term  # noqa: F401 (term is the fixture)

pytestmark = [pytest.mark.e2e]

BUSY_SECONDS = 15.0


@pytest.fixture
def busy_cpu() -> Iterator[None]:
    """Two processes spinning (the machine's other work), stopped afterwards whatever happens."""
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
    try:
        yield
    finally:
        for p in hogs:
            p.kill()
            p.wait(10)


def screen_matches_a_full_repaint(t: Tmux) -> None:
    """Pause, capture, Ctrl+L (every cell sent again), capture: the same lines but the first."""
    t.keys("p")
    t.wait_for(lambda s: "PAUSED" in s.splitlines()[0] if s else False)
    time.sleep(1.0)  # any frame still on its way is written
    before = t.screen().splitlines()
    t.keys("C-l")
    time.sleep(1.0)
    after = t.wait_for(lambda s: len(s.splitlines()) == len(before)).splitlines()
    for y, (a, b) in enumerate(zip(before[1:], after[1:], strict=True), 1):
        assert a == b, f"row {y} on the terminal:\n{a}\nafter Ctrl+L:\n{b}"


def test_busy_fleet_screen_is_what_the_app_drew(term, busy_cpu, tmp_path: Path) -> None:  # noqa: F811
    tag = uuid.uuid4().int % 9000 + 1000
    hosts = tmp_path / "hosts"
    hosts.write_text("".join(f"{h}\n" for h in (f"trn2-{tag}", f"trn1-{tag}", f"inf2-{tag}", f"bad-{tag}",
                                                 f"flaky-{tag}")))
    command = (f"nice -n 19 {shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests' / 'fake_ssh.py'))} "
               "{host} neuron-monitor")
    t = term(200, 60)
    t.start("nice -n 19 " + nt("fleet", "--hosts", str(hosts), "--command", command))
    t.wait_for(lambda s: "5 hosts:" in s and s.count(" up ") >= 3, timeout=60)
    time.sleep(BUSY_SECONDS)
    screen_matches_a_full_repaint(t)
    t.keys("q")
    assert t.wait_exit() == 0

"""End-to-end: the fleet view in tmux.

Prometheus mode (the acceptance of the fleet issue): Debian's Prometheus scrapes 8 real
``neuron-top demo --emit --instance X --seed N | neuron-top export`` pipelines of four instance types; the fleet
view shows 8 rows with the demos' instance ids and their utilization within 2 points of each demo's own
``--once``; Enter opens a host, Esc comes back; killing one exporter turns its row stale, then down; the refreshes
recorded with ``--record`` replay. ssh mode: a local stand-in for ssh (tests/fake_ssh.py), one host failing.

The demos run with ``--period 600``: each exporter keeps serving the demo's first report during the test, the
report ``--once`` prints, so the two can be compared (the demo's load moves by tens of points from one report to
the next).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT
from tests.e2e.test_tmux import PY, Tmux, nt, term  # noqa: F401 (term is the fixture)
from tests.fleet_support import PROMETHEUS, Prometheus, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus,
              pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed")]

HOSTS = [(inst, seed) for inst in ("trn2.48xlarge", "trn1.32xlarge", "inf2.48xlarge", "inf1.xlarge")
         for seed in (31, 32)]
PERIOD = "600"
GRID = re.compile(r"NeuronCore.*utilization.*\(avg", re.I)
"""The dashboard's core grid title: a host's dashboard is on screen."""
ROW = re.compile(r"^[! ] (i-[0-9a-f]{17})\s")


class Exporters:
    """8 ``demo --emit | export`` pipelines on free loopback ports, and a Prometheus scraping them."""

    def __init__(self) -> None:
        self.procs: dict[str, tuple[subprocess.Popen, subprocess.Popen]] = {}
        self.ports: dict[str, int] = {}
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for inst, seed in HOSTS:
            name, port = f"{inst}-{seed}", free_port()
            demo = subprocess.Popen([PY, "-m", "neuron_top", "demo", "--emit", "--instance", inst, "--seed", str(seed),
                                     "--period", PERIOD], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=env)
            export = subprocess.Popen([PY, "-m", "neuron_top", "export", "--listen", f"127.0.0.1:{port}",
                                       "--no-process-metrics"], cwd=ROOT, stdin=demo.stdout,
                                      stderr=subprocess.DEVNULL, env=env)
            assert demo.stdout is not None
            demo.stdout.close()
            self.procs[name], self.ports[name] = (demo, export), port
        self.prom = Prometheus({n: (f"127.0.0.1:{p}", "/metrics", {}) for n, p in self.ports.items()})
        self.prom.wait_ready()
        self.prom.wait_for("count(instance_info)", lambda r: bool(r) and r[0]["value"][1] == "8", timeout=60)

    def kill_exporter(self, name: str) -> None:
        _, export = self.procs[name]
        export.send_signal(signal.SIGKILL)  # as a crash: no goodbye
        export.wait(10)

    def stop(self) -> None:
        self.prom.stop()
        for demo, export in self.procs.values():
            for p in (export, demo):
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait(10)


@pytest.fixture
def exporters() -> Iterator[Exporters]:
    e = Exporters()
    yield e
    e.stop()


def once(inst: str, seed: int) -> tuple[str, float]:
    """(instance id, "NeuronCores (all): avg N%") of ``neuron-top demo --once`` with the exporters' demo
    arguments (the period shapes the simulated load)."""
    out = subprocess.run([PY, "-m", "neuron_top", "demo", "--instance", inst, "--seed", str(seed), "--period", PERIOD,
                          "--once"],
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout
    iid = re.search(r"^instance: \S+ (i-[0-9a-f]+) ", out, re.M)[1]  # type: ignore[index]
    return iid, float(re.search(r"NeuronCores \(all\):.*?avg ([0-9.]+)%", out)[1])  # type: ignore[index]


def rows_on(screen: str) -> dict[str, str]:
    return {m[1]: line for line in screen.splitlines() if (m := ROW.match(line))}


def test_eight_exporters_in_prometheus(term, exporters: Exporters, tmp_path: Path) -> None:  # noqa: F811
    want = {name: once(inst, seed) for (inst, seed), name in zip(HOSTS, exporters.ports, strict=True)}
    record = tmp_path / "fleet.jsonl"
    t = term(200, 60)
    t.start(nt("fleet", "--prometheus", exporters.prom.url, "--down-after", "6", "--stale-after", "300",
               "--refresh", "1", "--record", str(record)))
    screen = t.wait_for(lambda s: len(rows_on(s)) == 8 and "8 hosts: 8 up" in s, timeout=40)
    title = next(ln for ln in screen.splitlines() if "HOST" in ln and "UTIL" in ln)
    util_at = title.index("UTIL")
    rows = rows_on(screen)
    assert set(rows) == {iid for iid, _ in want.values()}
    for name, (iid, util) in want.items():
        shown = float(rows[iid][util_at - 2: util_at + 4].strip().rstrip("%"))
        assert abs(shown - util) <= 2.0, (name, shown, util)

    # Enter opens the host under the cursor (the first, sorted by id); Esc comes back to the same host
    first = min(rows)
    t.keys("Enter")
    t.wait_for(lambda s: f"instance_id={first} via prometheus" in s and GRID.search(s) is not None)
    t.keys("Escape")
    t.wait_for(lambda s: "8 hosts:" in s and f"{first}" in s.splitlines()[-2])  # the cursor host's line

    # a crashed exporter: down at Prometheus's next failed scrape (up == 0), with why, not stale for --down-after
    victim = "inf2.48xlarge-31"
    vid = want[victim][0]
    exporters.kill_exporter(victim)
    t.wait_for(lambda s: "down" in rows_on(s).get(vid, "") and "scrape fails" in rows_on(s).get(vid, ""),
               timeout=30)
    screen = t.screen()
    assert all(" up " in line for iid, line in rows_on(screen).items() if iid != vid)
    t.keys("q")
    assert t.wait_exit() == 0

    # the refreshes were recorded, and replay reads them back
    out = subprocess.run([PY, "-m", "neuron_top", "replay", str(record), "--once"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "8 hosts: 7 up, 0 stale, 1 down" in out.stdout


def test_ssh_fleet_with_a_failing_host(term) -> None:  # noqa: F811
    tag = uuid.uuid4().int % 9000 + 1000  # unique seeds: this test's demos can be found afterwards
    hosts = [f"trn2-{tag}", f"bad-{tag}", f"inf1-{tag + 1}"]
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests' / 'fake_ssh.py'))} {{host}} neuron-monitor"
    t = term(160, 40)
    t.start("FAKE_SSH_PERIOD=0.5 " + nt("fleet", "--ssh", *hosts, "--command", command))
    t.wait_for(lambda s: "Connection refused" in s and s.count(" up ") >= 2, timeout=30)
    screen = t.screen()
    bad = next(line for line in screen.splitlines() if f"bad-{tag}" in line)
    assert "down" in bad
    t.keys("End")  # sorted by host: trn2-… is last
    t.wait_for(lambda s: f"trn2-{tag}" in s.splitlines()[-2])
    t.keys("Enter")
    t.wait_for(lambda s: "trn2.48xlarge" in s and GRID.search(s) is not None)
    t.keys("Escape")
    t.wait_for(lambda s: "3 hosts:" in s)
    t.keys("q")
    assert t.wait_exit() == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # every ssh stand-in and demo we started is gone
        left = [p for p in psutil.process_iter(["cmdline"])
                if any(a in (str(tag), str(tag + 1)) for a in (p.info["cmdline"] or []))]
        if not left:
            break
        time.sleep(0.2)
    assert not left

"""The alert rules on a real Prometheus scraping real ``neuron-top export`` processes, each fed by ``--command`` with a
real report repeated every half second: a healthy busy node whose monitor is containerised (vCPU errors), AWS's
scraped node with cores idle at 1.6e-12 holding models, a node with an uncorrected ECC event in its first report, a
slow runtime, one with 10% of executions timing out, one whose memory group fails, a neuron-monitor that worked
once and then fails at every restart, and an exporter that dies. The rules file is loaded with its windows scaled
from minutes to seconds (the expressions are the shipped ones); each alert fires for its node, and the healthy
node raises none. (NeuronMonitorStale's 60 s threshold is a value, not a window: promtool covers it.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPORTS, ROOT
from tests.e2e.test_prometheus import RULES, _stop, free_port, tool

STREAM = """
import json, os, sys, time
first, rest = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
once = sys.argv[3] if len(sys.argv) > 3 else None
if once is not None:  # a neuron-monitor that worked once, then fails at every start
    if os.path.exists(once):
        sys.exit(1)
    open(once, "w").close()
print(json.dumps(first), flush=True)
while once is None:
    time.sleep(0.5)
    print(json.dumps(rest), flush=True)
time.sleep(1)
"""
SCALE = {"15m": "6s", "5m": "4s", "2m": "3s", "1m": "2s"}


def scaled_rules() -> str:
    """The shipped rules with every ``for`` and range in minutes made seconds (``[1h]`` stays)."""
    text = re.sub(r"for: (\d+m)", lambda m: f"for: {SCALE[m[1]]}", RULES.read_text())
    return re.sub(r"\[(\d+m)\]", lambda m: f"[{SCALE[m[1]]}]", text)


def _reports(tmp: Path) -> dict[str, tuple[Path, Path]]:
    healthy = json.loads((REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").read_text())
    idle = json.loads((FIXTURES / "prometheus-reports" / "inf1_xlarge_4runtimes_datadog.report.json").read_text())
    ecc = json.loads(json.dumps(healthy))
    ecc["system_data"]["neuron_hw_counters"]["neuron_devices"][0]["mem_ecc_uncorrected"] = 1
    slow = json.loads(json.dumps(healthy))
    for rt in slow["neuron_runtime_data"]:
        rt["report"]["execution_stats"]["latency_stats"]["total_latency"]["p99"] = 0.8
    failing = json.loads(json.dumps(healthy))
    for rt in failing["neuron_runtime_data"]:
        rt["report"]["execution_stats"]["execution_summary"].update(completed=45, timed_out=5)  # 10%
    broken = json.loads(json.dumps(healthy))
    for rt in broken["neuron_runtime_data"]:
        rt["report"]["memory_used"]["error"] = "failed to read the runtime's memory usage"
    out = {}
    for name, (first, rest) in {"healthy": (healthy, healthy), "idle": (idle, idle), "ecc": (ecc, healthy),
                                "slow": (slow, slow), "failing": (failing, failing), "broken": (broken, broken),
                                "dies": (healthy, healthy), "gone": (healthy, healthy)}.items():
        a, b = tmp / f"{name}.first.json", tmp / f"{name}.rest.json"
        a.write_text(json.dumps(first))
        b.write_text(json.dumps(rest))
        out[name] = (a, b)
    return out


@pytest.fixture(scope="module")
def alerts_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    prometheus = tool("prometheus")
    tmp = tmp_path_factory.mktemp("alerts")
    (tmp / "stream.py").write_text(STREAM)
    (tmp / "rules.yml").write_text(scaled_rules())
    procs: list[subprocess.Popen] = []
    targets = {}
    for name, (first, rest) in _reports(tmp).items():
        port = free_port()
        targets[name] = f"127.0.0.1:{port}"
        cmd = f"{sys.executable} {tmp / 'stream.py'} {first} {rest}" + (f" {tmp / 'ran'}" if name == "dies" else "")
        procs.append(subprocess.Popen([sys.executable, "-m", "neuron_top", "export", "--listen", targets[name],
                                       "--no-process-metrics", "--command", cmd], cwd=ROOT,
                                      stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    prom_port = free_port()
    (tmp / "prometheus.yml").write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "rule_files": ["rules.yml"],
        "scrape_configs": [{"job_name": "neuron", "static_configs": [{"targets": list(targets.values())}]}]}))
    procs.append(subprocess.Popen(
        [prometheus, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"], cwd=tmp,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        yield f"http://127.0.0.1:{prom_port}", {v: k for k, v in targets.items()}, dict(zip(targets, procs[:-1], strict=True))
    finally:
        for p in reversed(procs):
            _stop(p)


def firing(url: str, names: dict[str, str]) -> set[tuple[str, str]]:
    try:
        with urllib.request.urlopen(f"{url}/api/v1/alerts", timeout=5) as r:
            alerts = json.loads(r.read())["data"]["alerts"]
    except OSError:
        return set()
    return {(names.get(a["labels"].get("instance", ""), "?"), a["labels"]["alertname"]) for a in alerts
            if a["state"] == "firing"}


def scraped(url: str, instance: str) -> bool:
    q = urllib.parse.urlencode({"query": f'neurontop_info{{instance="{instance}"}}'})
    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=5) as r:
            return bool(json.loads(r.read())["data"]["result"])
    except OSError:
        return False


def test_each_rule_fires_for_its_node_and_the_healthy_node_raises_none(alerts_server) -> None:
    url, names, procs = alerts_server
    want = {("idle", "NeuronCoresIdleWhileAllocated"), ("ecc", "NeuronUncorrectedECC"),
            ("slow", "NeuronLatencyP99High"), ("failing", "NeuronExecutionErrorRate"),
            ("broken", "NeuronMetricGroupErrors"), ("dies", "NeuronMonitorDown"), ("gone", "NeuronExporterDown")}
    gone = next(addr for addr, name in names.items() if name == "gone")
    deadline = time.monotonic() + 30
    while not scraped(url, gone) and time.monotonic() < deadline:
        time.sleep(0.2)
    _stop(procs["gone"])  # the exporter itself dies: its target's scrapes fail from now on
    deadline = time.monotonic() + 60
    got: set[tuple[str, str]] = set()
    while time.monotonic() < deadline and not want <= got:
        time.sleep(0.5)
        got = firing(url, names)
    assert want <= got, got
    # the nodes started together and the longest window (idle, 6 s) has run: the healthy node's have too, and it
    # raises nothing (no metric-group error for its containerised monitor's vCPUs, no idle core at 2.5%)
    assert got == want, got

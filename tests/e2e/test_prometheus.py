"""A real Prometheus (Debian's ``prometheus`` package) scraping ``neuron-top demo --emit | neuron-top export``
every second: AWS's Grafana dashboard's queries, the label names, our alert rules loaded; and promtool on the
rules file. One Prometheus for the module, on free loopback ports, with a temporary config and storage."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

RULES = ROOT / "deploy" / "prometheus" / "neuron-top.rules.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "neuron-top.rules.test.yml"
DASHBOARD = ROOT / "tests" / "fixtures" / "grafana" / "neuron-monitor-grafana.json"
OUR_DASHBOARD = ROOT / "deploy" / "grafana" / "neuron-top.json"
AWS_LABELS = {"instance_name", "instance_id", "instance_type", "availability_zone", "region", "subnet_id"}


def tool(name: str) -> str:
    path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install prometheus; .ci/run installs it)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dashboard_queries() -> list[tuple[str, str]]:
    out = []

    def walk(panels: list[dict]) -> None:
        for p in panels:
            out.extend((p.get("title", ""), t["expr"]) for t in p.get("targets") or () if t.get("expr"))
            walk(p.get("panels") or [])

    walk(json.loads(DASHBOARD.read_text())["panels"])
    return out


class Prom:
    def __init__(self, url: str) -> None:
        self.url = url
        self.ready_at = time.monotonic()
        """When the server answered /-/ready (its first scrape of the exporter is due within a second)."""

    def api(self, path: str, **params: str) -> dict:
        q = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}{q}", timeout=10) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict]:
        return self.api("query", query=expr)["result"]


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


def start_prometheus(prometheus: str, tmp: Path, port: int) -> tuple[subprocess.Popen, Prom]:
    """Prometheus on 127.0.0.1:``port`` with ``tmp``/prometheus.yml and its storage in ``tmp``, once it answers
    /-/ready (the test fails with its log if it does not within 30 s)."""
    server = subprocess.Popen(
        [prometheus, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "wb"))  # noqa: SIM115
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return server, Prom(url)
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > end:
            _stop(server)
            pytest.fail(f"prometheus did not start: {(tmp / 'prometheus.log').read_text()[-2000:]}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    prometheus = tool("prometheus")
    tmp = tmp_path_factory.mktemp("prometheus")
    export_port, prom_port = free_port(), free_port()
    shutil.copy(RULES, tmp / RULES.name)
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files: [{RULES.name}]\n"
        "scrape_configs:\n  - job_name: neuron\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{export_port}']}}]\n")
    try:
        with demo_exporter(["--seed", "11"], ["--listen", f"127.0.0.1:{export_port}"]):
            yield from serve_prometheus(prometheus, tmp, prom_port)
    finally:
        if os.environ.get("KEEP_PROMETHEUS_DATA") is None:
            shutil.rmtree(tmp / "data", ignore_errors=True)


@contextlib.contextmanager
def demo_exporter(demo_args: list[str], export_args: list[str]) -> Iterator[None]:
    """``neuron-top demo --emit DEMO_ARGS | neuron-top export EXPORT_ARGS`` for the ``with`` block."""
    py = [sys.executable, "-m", "neuron_top"]
    demo = subprocess.Popen([*py, "demo", "--emit", *demo_args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    export = subprocess.Popen([*py, "export", *export_args], cwd=ROOT, stdin=demo.stdout, stderr=subprocess.DEVNULL)
    assert demo.stdout is not None
    demo.stdout.close()
    try:
        yield
    finally:
        for p in (export, demo):
            _stop(p)


def serve_prometheus(prometheus: str, tmp: Path, port: int) -> Iterator[Prom]:
    """``start_prometheus`` for a fixture: yields it, stops it afterwards."""
    server, prom = start_prometheus(prometheus, tmp, port)
    try:
        yield prom
    finally:
        _stop(server)


def wait_until(check, timeout: float = 45.0, step: float = 0.5):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while True:
        result = check()
        if result is True or time.monotonic() > end:
            return result
        time.sleep(step)


def test_every_grafana_dashboard_query_returns_data(prom: Prom) -> None:
    """AWS's dashboard, unchanged: each panel query answers with at least one series from our exporter."""
    queries = dashboard_queries()
    assert len(queries) == 21  # every target of every panel, rows included (the Instance Info table, 9 graphs, ...)

    def empty() -> list[str] | bool:
        missing = [f"{title}: {expr}" for title, expr in queries if not prom.query(expr)]
        return missing or True

    assert wait_until(empty) is True
    # the acceptance: every query has data within 15 s of a Prometheus scraping every second
    assert time.monotonic() - prom.ready_at <= 15.0, time.monotonic() - prom.ready_at


def our_dashboard() -> dict:
    return json.loads(OUR_DASHBOARD.read_text())


def test_our_grafana_dashboard_is_importable_unchanged() -> None:
    """No ``__inputs`` to fill, no data source named by a local uid: every panel and target use the dashboard's
    ``datasource`` variable (of type prometheus), and queries name only variables the dashboard defines."""
    d = our_dashboard()
    assert "__inputs" not in d and d.get("id") is None and d["uid"] == "neuron-top"
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    known = {"$" + n for n in variables} | {"$__rate_interval"}
    panels = [p for p in d["panels"] if p["type"] != "row"]
    for p in panels:
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        for t in p["targets"]:
            assert t["datasource"] == p["datasource"]
            assert set(re.findall(r"\$[\w]+", t["expr"])) <= known, (p["title"], t["expr"])
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))


def test_every_query_of_our_grafana_dashboard_returns_data(prom: Prom) -> None:
    """Each target of deploy/grafana/neuron-top.json, with Grafana's variables as a user's first view has them
    (every instance, a rate interval), answers with at least one series from the exporter."""
    queries = [(p["title"], t["expr"].replace("$instance_id", ".*").replace("$__rate_interval", "5s"))
               for p in our_dashboard()["panels"] for t in p.get("targets") or ()]
    assert len(queries) == 25

    def empty() -> list[str] | bool:
        missing = [f"{title}: {expr}" for title, expr in queries if not prom.query(expr)]
        return missing or True

    assert wait_until(empty) is True


def test_dashboard_metrics_carry_aws_label_names(prom: Prom) -> None:
    want = {
        "neuroncore_utilization_ratio": AWS_LABELS | {"runtime_tag", "neuroncore"},
        "neuron_runtime_vcpu_usage_ratio": AWS_LABELS | {"runtime_tag", "usage_type"},
        "neuron_runtime_memory_used_bytes": AWS_LABELS | {"runtime_tag", "memory_location"},
        "execution_status_total": AWS_LABELS | {"runtime_tag", "status_type"},
        "execution_latency_seconds": AWS_LABELS | {"runtime_tag", "percentile"},
        "system_vcpu_usage_ratio": AWS_LABELS | {"usage_type"},
        "system_vcpu_count": AWS_LABELS,
        "system_memory_used_bytes": AWS_LABELS,
        "system_memory_total_bytes": AWS_LABELS,
        "instance_info": AWS_LABELS,
        "hardware_ecc_events_total": AWS_LABELS | {"event_type", "neuron_device_index"},
    }
    assert wait_until(lambda: all(prom.query(name) for name in want)) is True
    for name, labels in want.items():
        for series in prom.query(name):
            assert set(series["metric"]) - {"__name__", "job", "instance"} == labels, name


def test_target_is_healthy_and_our_rules_load(prom: Prom) -> None:
    def scraped() -> bool:
        targets = prom.api("targets")["activeTargets"]
        return bool(targets) and all(t["health"] == "up" for t in targets)

    assert wait_until(scraped, timeout=20) is True
    assert all(t["lastError"] == "" for t in prom.api("targets")["activeTargets"])
    rules = [r for g in prom.api("rules")["groups"] for r in g["rules"]]
    assert len(rules) == 8 and all(r["health"] == "ok" for r in rules), rules
    assert prom.query("neurontop_source_up")[0]["value"][1] == "1"
    # the demo's trn2.48xlarge: 16 devices, each with device memory in use
    assert len(prom.query("neurontop_device_memory_used_bytes")) == 16


def test_promtool_checks_the_rules() -> None:
    out = subprocess.run([tool("promtool"), "check", "rules", str(RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS: 8 rules found" in out.stdout


def test_promtool_rule_unit_tests_cover_every_rule_firing_and_not() -> None:
    out = subprocess.run([tool("promtool"), "test", "rules", str(RULE_TESTS)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    alerts = re.findall(r"(?m)^\s*- alert: (\w+)", RULES.read_text())
    cases: dict[str, set[str]] = {}
    lines = RULE_TESTS.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*alertname: (\w+)", line)
        if m:
            nxt = lines[i + 1].strip()
            cases.setdefault(m.group(1), set()).add("silent" if nxt == "exp_alerts: []" else "fires")
    assert len(alerts) == 8
    assert {a: cases.get(a) for a in alerts} == {a: {"silent", "fires"} for a in alerts}

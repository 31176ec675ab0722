"""The alert rules (deploy/prometheus/neuron-top.rules.yml) on what exporters really publish: real neuron-monitor
reports fed minute by minute through ``neuron-top export``'s exposition (and through AWS's exporter rebuilt, for the
rules that must hold on its output too), turned into ``promtool test rules`` input series. Idle cores at 1.6e-12,
latency that turns null when a runtime stops, a containerised monitor's vCPU errors: each rule fires where it
should within its ``for`` window and stays silent on the healthy streams."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from neuron_top.export import Exporter, ExportOptions
from neuron_top.snapshot import snapshot_from
from tests.conftest import FIXTURES, REPORTS
from tests.e2e.test_prometheus import RULES, tool
from tests.export_reference import NaiveExporter

INSTANCE = "n1:8000"
VCPU_ERRORS = REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json"
"""Four busy runtimes (2.5-3% each, a model on each core) whose vCPU group says ``open /proc/<pid>/stat``."""
IDLE = FIXTURES / "prometheus-reports" / "inf1_xlarge_4runtimes_datadog.report.json"
"""AWS's Datadog scrape rebuilt: runtime 31961 holds a model on core 0 at 1.6491081503838823e-12."""
ALERTS = ("NeuronUncorrectedECC", "NeuronExecutionErrorRate", "NeuronLatencyP99High", "NeuronCoresIdleWhileAllocated",
          "NeuronMonitorDown", "NeuronExporterDown", "NeuronMonitorStale", "NeuronMetricGroupErrors")


def ours(reports: Iterable[dict]) -> list[str]:
    """``neuron-top export``'s scrape after each report (one a minute)."""
    exp = Exporter(ExportOptions(process_metrics=False), clock=lambda: 1_700_000_000.0)
    out = []
    for i, r in enumerate(reports):
        exp.apply_snapshot(snapshot_from(msgspec.json.encode(r), 1_700_000_000.0 + 60 * i, i + 1))
        out.append(exp.render().decode())
    return out


def aws(reports: Iterable[dict]) -> list[str]:
    """AWS's ``neuron-monitor-prometheus.py`` (rebuilt with prometheus_client) after each report."""
    naive = NaiveExporter()
    out = []
    for i, r in enumerate(reports):
        naive.apply(snapshot_from(msgspec.json.encode(r), 60.0 * i, i + 1).report)
        out.append(generate_latest(naive.registry).decode())
    return out


def input_series(scrapes: list[str]) -> list[dict[str, str]]:
    """promtool's ``input_series``: one value a minute per series, ``_`` where a scrape did not have it."""
    values: dict[str, list[str]] = {}
    for minute, text in enumerate(scrapes):
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                labels = {**s.labels, "instance": INSTANCE, "job": "neuron"}
                inner = ",".join(f'{k}={json.dumps(v)}' for k, v in sorted(labels.items()))
                values.setdefault(f"{s.name}{{{inner}}}", ["_"] * len(scrapes))[minute] = repr(float(s.value))
    return [{"series": k, "values": " ".join(v)} for k, v in values.items()]


def promtool(tmp_path: Path, scrapes: list[str], cases: list[dict]) -> None:
    test = {"rule_files": [str(RULES)], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": input_series(scrapes), "alert_rule_test": cases}]}
    path = tmp_path / "real.test.yml"
    path.write_text(json.dumps(test))  # JSON is YAML
    out = subprocess.run([tool("promtool"), "test", "rules", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def silent(minute: int, *names: str) -> list[dict]:
    return [{"eval_time": f"{minute}m", "alertname": n, "exp_alerts": []} for n in names or ALERTS]


def report(path: Path, change: Callable[[dict], None] | None = None) -> dict:
    d = json.loads(path.read_text())
    if change is not None:
        change(d)
    return d


def test_busy_runtimes_of_a_containerised_monitor_raise_nothing(tmp_path: Path) -> None:
    """Twenty minutes of the real report: every runtime's vCPU group carries the containerised monitor's error.
    Before: NeuronMetricGroupErrors fired for it on every such node."""
    promtool(tmp_path, ours([report(VCPU_ERRORS)] * 20), silent(8) + silent(19))


def test_idle_cores_at_1e_12_holding_a_model_fire(tmp_path: Path) -> None:
    """AWS's scrape: core 0 of runtime 31961 at 1.6e-12 with a model loaded, core 1 of 32786 at 0.3% (below the
    fleet's 1% "busy" line). Before: ``== 0`` never matched, the alert never fired."""
    def inst(tag: str, core: str) -> dict:
        return {"exp_labels": {"severity": "warning", "instance": INSTANCE, "instance_id": "i-022af70542e30e040",
                               "runtime_tag": tag, "neuroncore": core},
                "exp_annotations": {"summary": f"NeuronCore {core} on i-022af70542e30e040 is allocated to runtime "
                                               f"{tag} but idle"}}

    for scrapes in (ours([report(IDLE)] * 20), aws([report(IDLE)] * 20)):
        promtool(tmp_path, scrapes, [
            *silent(10, "NeuronCoresIdleWhileAllocated"),
            {"eval_time": "16m", "alertname": "NeuronCoresIdleWhileAllocated",
             "exp_alerts": [inst("31961", "0"), inst("32786", "1")]},
        ])


def _slow(d: dict) -> None:
    for rt in d["neuron_runtime_data"]:
        rt["report"]["execution_stats"]["latency_stats"]["total_latency"]["p99"] = 0.8


def _stopped(d: dict) -> None:
    for rt in d["neuron_runtime_data"]:
        st = rt["report"]["execution_stats"]
        st["latency_stats"] = {"total_latency": None, "device_latency": None}
        st["execution_summary"] = dict.fromkeys(st["execution_summary"], 0)
        for c in rt["report"]["neuroncore_counters"]["neuroncores_in_use"].values():
            c["neuroncore_utilization"] = 0.0


def test_p99_fires_while_executing_and_stops_when_the_runtime_stops(tmp_path: Path) -> None:
    """Eight minutes at p99 0.8 s, then the runtime executes nothing (latency null) for twenty. On AWS's
    exporter the gauge stays at 0.8 s: before, the alert kept firing for as long as the runtime lived."""
    stream = [report(VCPU_ERRORS, _slow)] * 8 + [report(VCPU_ERRORS, _stopped)] * 20
    iid = stream[0]["instance_info"]["instance_id"]
    firing = {"eval_time": "7m", "alertname": "NeuronLatencyP99High", "exp_alerts": [{
        "exp_labels": {"severity": "warning", "instance": INSTANCE, "instance_id": iid, "runtime_tag": "1"},
        "exp_annotations": {"summary": f"Neuron runtime 1 on {iid}: p99 latency 800ms"}}]}
    for scrapes in (ours(copy.deepcopy(stream)), aws(copy.deepcopy(stream))):
        promtool(tmp_path, scrapes, [firing, *silent(14, "NeuronLatencyP99High"),
                                     *silent(27, "NeuronLatencyP99High")])
    # our exporter has no p99 sample while the latency is null (nothing to freeze); AWS's keeps 0.8
    assert "execution_latency_seconds{" not in ours(copy.deepcopy(stream))[-1]
    assert 'percentile="p99"' in aws(copy.deepcopy(stream))[-1]


def test_a_real_metric_group_error_still_fires(tmp_path: Path) -> None:
    def broken(d: dict) -> None:
        for rt in d["neuron_runtime_data"]:
            rt["report"]["memory_used"]["error"] = "failed to read the runtime's memory usage"

    promtool(tmp_path, ours([report(VCPU_ERRORS, broken)] * 10), [
        *silent(3, "NeuronMetricGroupErrors"),
        {"eval_time": "8m", "alertname": "NeuronMetricGroupErrors", "exp_alerts": [{
            "exp_labels": {"severity": "warning", "instance": INSTANCE, "group": "memory_used"},
            "exp_annotations": {"summary": f"neuron-monitor on {INSTANCE} fails to collect memory_used"}}]},
    ])

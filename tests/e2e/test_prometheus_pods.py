"""A real Prometheus scraping ``neuron-top export --pod-labels`` whose pods come from a real gRPC server speaking
the kubelet's PodResources v1 on a unix socket: the info family, the join on (instance_id, neuroncore) that the
README documents, and the per-core series carrying the pod."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("grpc")

from tests.conftest import ROOT
from tests.e2e.test_prometheus import Prom, demo_exporter, free_port, serve_prometheus, tool, wait_until
from tests.kubelet_server import FakeKubelet, pod

pytestmark = pytest.mark.prometheus

JOIN = ("neurontop_neuroncore_utilization_ratio * on (instance_id, neuroncore) group_left (pod, namespace) "
        "neurontop_neuroncore_pod_info")


@pytest.fixture(scope="module")
def prom() -> Iterator[Prom]:
    prometheus = tool("prometheus")
    tmp = Path(tempfile.mkdtemp(prefix="nt-prom-pods-"))  # short: a unix socket path is at most ~107 bytes
    kubelet = FakeKubelet(str(tmp / "kubelet.sock"))
    kubelet.pods = [pod("train-0", "ml", ("worker", {"aws.amazon.com/neuroncore": [str(i) for i in range(8)]})),
                    pod("infer-1", "serve", ("server", {"aws.amazon.com/neuron": ["4"]}))]
    kubelet.offered = {"aws.amazon.com/neuron": [str(i) for i in range(16)]}
    export_port, prom_port = free_port(), free_port()
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n  - job_name: neuron\n    honor_labels: true\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{export_port}']}}]\n")
    try:
        with demo_exporter(["--seed", "5", "--instance", "trn1.32xlarge"],
                           ["--listen", f"127.0.0.1:{export_port}", "--pod-labels", "--kubelet-socket", kubelet.path,
                            "--no-process-metrics"]):
            yield from serve_prometheus(prometheus, tmp, prom_port)
    finally:
        kubelet.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def test_info_family_names_every_allocated_core(prom: Prom) -> None:
    def ready() -> bool:
        return len(prom.query("neurontop_neuroncore_pod_info")) == 8 + 2  # 8 cores + device 4 (2 cores on trn1)

    assert wait_until(ready) is True
    got = {(s["metric"]["neuroncore"], s["metric"]["namespace"], s["metric"]["pod"], s["metric"]["container"])
           for s in prom.query("neurontop_neuroncore_pod_info")}
    assert ("0", "ml", "train-0", "worker") in got and ("9", "serve", "infer-1", "server") in got
    assert all(s["metric"].get("instance_id") for s in prom.query("neurontop_neuroncore_pod_info"))


def test_the_join_query_answers_by_pod(prom: Prom) -> None:
    assert wait_until(lambda: len(prom.query(JOIN)) == 10) is True
    by_pod = prom.query(f"count by (namespace, pod) ({JOIN})")
    assert {(s["metric"]["namespace"], s["metric"]["pod"]): s["value"][1] for s in by_pod} == {
        ("ml", "train-0"): "8", ("serve", "infer-1"): "2"}


def test_pod_labels_ride_on_aws_per_core_and_per_runtime_families(prom: Prom) -> None:
    assert wait_until(lambda: bool(prom.query('neuroncore_utilization_ratio{pod="train-0"}'))) is True
    cores = {s["metric"]["neuroncore"] for s in prom.query('neuroncore_utilization_ratio{pod="train-0"}')}
    assert cores <= {str(i) for i in range(8)} and cores
    assert {s["metric"]["namespace"] for s in prom.query('neuroncore_utilization_ratio{pod="train-0"}')} == {"ml"}
    runtime_pods = {s["metric"].get("pod", "") for s in prom.query("neuron_runtime_vcpu_usage_ratio")}
    assert runtime_pods & {"train-0", "infer-1"}, runtime_pods


@pytest.mark.parametrize("group", ["namespace", "pod"])
def test_fleet_by_namespace_and_pod_aggregates_on_the_server(prom: Prom, group: str) -> None:
    import json

    assert wait_until(lambda: len(prom.query(JOIN)) == 10) is True
    out = subprocess.run([sys.executable, "-m", "neuron_top", "fleet", "--prometheus", prom.url, "--by", group,
                          "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["problems"] == [] and doc["by"] == group
    rows = {(g["namespace"], g["pod"]): g for g in doc["groups"]}
    key = ("ml", "train-0" if group == "pod" else None)
    assert rows[key]["cores"] == 8 and rows[key]["hosts"] == 1
    serve = rows[("serve", "infer-1" if group == "pod" else None)]
    assert serve["cores"] == 2
    for g in doc["groups"]:  # idle = held cores at most 1% busy or reported by no runtime
        assert 0 <= g["idle_cores"] <= g["cores"]
        assert g["utilization"] is None or 0 <= g["utilization"] <= 100
    text = subprocess.run([sys.executable, "-m", "neuron_top", "fleet", "--prometheus", prom.url, "--by", group,
                           "--once"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and "NeuronCores held" in text.stdout
    assert ("ml/train-0" if group == "pod" else "\nml ") in text.stdout

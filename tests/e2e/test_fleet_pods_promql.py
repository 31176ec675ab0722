"""The fleet's by-pod queries evaluated by Prometheus's own engine (``promtool test rules``, no server): a core
two runtimes share is counted by the rule every view uses, the runtimes' summed share (``derived.core_utilization``),
and a host scraped by two jobs is not added up twice."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from neuron_top.fleet.pods import PodQueries

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")

CORE = 'instance_id="i-1",neuroncore="0"'


def series(job: str) -> list[dict]:
    """One host, core 0 held by pod ml/train-0 and used by two runtimes (30% and 40%), scraped by ``job``."""
    where = f'instance="h:8000",job="{job}",{CORE}'
    return [
        {"series": f'neuroncore_utilization_ratio{{{where},runtime_tag="a"}}', "values": "0.3x5"},
        {"series": f'neuroncore_utilization_ratio{{{where},runtime_tag="b"}}', "values": "0.4x5"},
        {"series": f'neurontop_neuroncore_pod_info{{{where},namespace="ml",pod="train-0",container="c"}}',
         "values": "1x5"},
    ]


@pytest.mark.parametrize("jobs", [("neuron",), ("neuron", "neuron-copy")])
def test_a_shared_core_is_the_summed_share_once_per_host(tmp_path: Path, jobs: tuple[str, ...]) -> None:
    q = PodQueries("pod").queries()
    test = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [s for job in jobs for s in series(job)],
        "promql_expr_test": [
            {"expr": q["util"], "eval_time": "2m",
             "exp_samples": [{"labels": '{namespace="ml",pod="train-0"}', "value": 0.7}]},
            {"expr": q["cores"], "eval_time": "2m",
             "exp_samples": [{"labels": '{namespace="ml",pod="train-0"}', "value": 1}]},
        ]}]}
    path = tmp_path / "pods.test.yml"
    path.write_text(json.dumps(test))  # JSON is YAML
    out = subprocess.run([shutil.which("promtool") or "promtool", "test", "rules", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]

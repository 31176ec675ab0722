"""The examples in ``examples/`` run as a user would run them, on real and simulated data, without Textual.

Each runs in a fresh interpreter that then checks ``sys.modules``: the public core API must not pull in textual
or rich (an exporter or a notebook should not pay for the TUI).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from neuron_top.sources.demo import generate
from tests.conftest import REPORTS, ROOT

EXAMPLES = ROOT / "examples"
_RUN = """
import runpy, sys
sys.argv = sys.argv[1:]
code = 0
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    code = exc.code or 0
ui = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich"))
print("UI-MODULES:", ui, file=sys.stderr)
sys.exit(code)
"""


def run(example: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-c", _RUN, str(EXAMPLES / example), *args], cwd=ROOT,
                         input=stdin.decode() if stdin is not None else None, capture_output=True, text=True,
                         timeout=60)
    assert "UI-MODULES: []" in out.stderr, out.stderr[-1500:]
    return out


def test_every_example_is_run_here() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == ["pod_cores.py", "recording_markers.py",
                                                             "stream_utilization.py"]


def test_utilization_from_the_simulator() -> None:
    out = run("stream_utilization.py", "--demo", "inf2.48xlarge", "--count", "3")
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) == 3
    assert lines[0].startswith("report 1: NC0 ") and lines[0].count(" NC") == 24  # inf2.48xlarge: 24 NeuronCores
    assert "%" in lines[0]
    assert "source: demo" in out.stderr


def test_utilization_from_a_real_recording_and_from_stdin() -> None:
    stream = REPORTS / "wandb_trn1_2xlarge_stream.ndjson"
    n = sum(1 for line in stream.read_bytes().splitlines() if line.strip())
    from_file = run("stream_utilization.py", "--recording", str(stream))
    assert from_file.returncode == 0 and len(from_file.stdout.splitlines()) == n
    assert from_file.stdout.startswith("report 1: NC0 ")
    from_stdin = run("stream_utilization.py", stdin=stream.read_bytes())
    assert from_stdin.stdout == from_file.stdout


def test_utilization_counts_bad_input_and_says_when_there_was_no_report() -> None:
    out = run("stream_utilization.py", stdin=b"not json\n{\"half\":\n")
    assert out.returncode == 1 and out.stdout == ""
    assert "skipped:" in out.stderr


def test_markers_of_a_recording(tmp_path: Path) -> None:
    rec = tmp_path / "run.ndjson"
    rec.write_bytes(b"".join(d + b"\n" for d in generate("trn2.48xlarge", 3, 400)))
    out = run("recording_markers.py", str(rec))
    assert out.returncode == 0, out.stderr
    kinds = {line.split()[3] for line in out.stdout.splitlines()}
    assert {"app+", "app-", "error"} <= kinds
    assert f"{len(out.stdout.splitlines())} markers in 400 reports" in out.stderr
    only = run("recording_markers.py", str(rec), "--kind", "app+")
    assert only.stdout and all(line.split()[3] == "app+" for line in only.stdout.splitlines())
    # the docstring's own example: "ecc" is a family (both ECC kinds), not a kind that never occurs
    ecc = run("recording_markers.py", str(rec), "--kind", "ecc")
    assert ecc.returncode == 0 and ecc.stdout
    assert {line.split()[3] for line in ecc.stdout.splitlines()} <= {"ecc-uncorrected", "ecc-corrected"}
    assert ecc.stdout.splitlines() == [line for line in out.stdout.splitlines() if " ecc-" in line]
    typo = run("recording_markers.py", str(rec), "--kind", "eccc")
    assert typo.returncode == 2 and "invalid choice" in typo.stderr  # a kind that can never match says so


def test_markers_of_a_file_without_reports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ndjson"
    bad.write_bytes(b"garbage\n")
    out = run("recording_markers.py", str(bad))
    assert out.returncode == 1 and "no reports" in out.stderr
    missing = run("recording_markers.py", str(tmp_path / "nope.ndjson"))
    assert missing.returncode == 2 and "cannot open" in missing.stderr


def test_pods_of_the_simulator_and_of_a_kubelet(tmp_path: Path) -> None:
    out = run("pod_cores.py", "--demo", "trn2.48xlarge")
    assert out.returncode == 0, out.stderr
    assert "pods: neuron-monitor" in out.stderr
    assert any(line.startswith("training/") and " cores " in line for line in out.stdout.splitlines())
    import pytest

    pytest.importorskip("grpc")
    import tempfile

    from tests.kubelet_server import FakeKubelet, pod

    k = FakeKubelet(tempfile.mkdtemp(prefix="nt-ex-") + "/kubelet.sock")
    try:
        k.pods = [pod("train-0", "ml", ("worker", {"aws.amazon.com/neuroncore": ["0", "1"]}))]
        k.offered = {"aws.amazon.com/neuroncore": [str(i) for i in range(64)]}
        out = run("pod_cores.py", "--demo", "trn2.48xlarge", "--kubelet-socket", k.path)
    finally:
        k.stop()
    assert out.returncode == 0, out.stderr
    assert "pods: kubelet, 1 with Neuron cores" in out.stderr
    assert out.stdout.splitlines()[0].startswith("ml/train-0  cores 0-1  util ")
    assert out.stdout.splitlines()[-1] == "not allocated: cores 2-63"

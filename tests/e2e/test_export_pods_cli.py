"""``neuron-top export`` says on stderr how pods are found, or why not, since it has no header."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT

PY = [sys.executable, "-m", "neuron_top"]


def stderr_until(args: list[str], data: bytes, want: str, tmp: Path) -> str:
    """Run ``export`` on ``data`` until its stderr holds ``want`` (the source's end is also said), then stop it."""
    log = tmp / "err.txt"
    with open(log, "wb") as err:
        p = subprocess.Popen([*PY, "export", "--listen", "127.0.0.1:0", *args], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=err)
        assert p.stdin is not None
        p.stdin.write(data)
        p.stdin.close()
        deadline = time.monotonic() + 30
        try:
            while want not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=15)
    return log.read_text()


def test_export_says_why_there_are_no_pods(tmp_path: Path) -> None:
    demo = subprocess.run([*PY, "demo", "--emit", "--seed", "1", "--instance", "trn1.32xlarge", "--count", "3"],
                          cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    sock = tmp_path / "absent.sock"
    err = stderr_until(["--kubelet-socket", str(sock)], demo, "stream ended", tmp_path)
    assert f"neuron-top: pods: none (kubelet socket absent: {sock})" in err, err  # asked before the first report
    quiet = stderr_until(["--no-k8s"], demo, "stream ended", tmp_path)
    assert "pods" not in quiet, quiet


def test_record_keeps_the_kubelets_pods_and_replay_shows_them(tmp_path: Path) -> None:
    """``neuron-top record`` on a node: each report is kept with who held each core then (a real gRPC server
    speaking the kubelet's PodResources protocol), so ``replay --once`` of the file names the pods; before, a
    recording had the reports only and the post-mortem could not say which pod held a core."""
    import json
    import shlex
    import tempfile

    from tests.kubelet_server import FakeKubelet, pod

    sock_dir = Path(tempfile.mkdtemp(prefix="nt-rec-pods-"))  # short: a unix socket path is at most ~107 bytes
    kubelet = FakeKubelet(str(sock_dir / "kubelet.sock"))
    kubelet.pods = [pod("train-0", "ml", ("worker", {"aws.amazon.com/neuroncore": ["0", "1"]}))]
    kubelet.offered = {"aws.amazon.com/neuron": [str(i) for i in range(16)]}
    rec = tmp_path / "node.jsonl.gz"
    emit = shlex.join([*PY, "demo", "--emit", "--seed", "1", "--instance", "trn1.32xlarge", "--count", "3",
                       "--period", "1"])
    try:
        done = subprocess.run([*PY, "record", str(rec), "--command", emit, "--kubelet-socket", kubelet.path],
                              cwd=ROOT, capture_output=True, timeout=60)
    finally:
        kubelet.stop()
    assert done.returncode == 0, done.stderr
    out = subprocess.run([*PY, "replay", str(rec), "--once", "--json"], cwd=ROOT, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    text = json.dumps(doc)
    assert "train-0" in text and "as recorded" in text, text[:2000]

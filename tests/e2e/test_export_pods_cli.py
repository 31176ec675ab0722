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

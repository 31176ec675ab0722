"""``neuron-top export`` as a user runs it: a real process fed by ``demo --emit`` through a pipe, scraped over
HTTP on a free loopback port, stopped with SIGTERM; a busy port is a one-line error."""

from __future__ import annotations

import gzip
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psutil
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ROOT

NEURON_TOP = [sys.executable, "-m", "neuron_top"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, accept: str | None = None, timeout: float = 5.0) -> tuple[str, str]:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.headers["Content-Type"], r.read().decode()


def wait_for(url: str, want: str, timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    body = ""
    while time.monotonic() < end:
        try:
            body = get(url)[1]
            if want in body:
                return body
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{want!r} never appeared; last body:\n{body[:2000]}")


def wait_for_reports(url: str, n: int, timeout: float = 20.0) -> str:
    """The first body whose ``neurontop_reports_total`` is at least ``n`` (waiting for exactly ``n`` misses it
    when a loaded machine delays the scrapes past the next report)."""
    end = time.monotonic() + timeout
    while True:
        body = wait_for(url, "neurontop_reports_total ", max(end - time.monotonic(), 0.1))
        m = re.search(r"^neurontop_reports_total (\S+)$", body, re.M)
        if m and float(m[1]) >= n:
            return body
        if time.monotonic() > end:
            raise AssertionError(f"fewer than {n} reports: {m[0] if m else body[:500]}")
        time.sleep(0.1)


def stop(exp: subprocess.Popen, sig: signal.Signals) -> str:
    """Stop the exporter with ``sig`` (exit status 128+sig, as every mode) and return its stderr."""
    exp.send_signal(sig)
    assert exp.wait(timeout=15) == 128 + sig
    assert exp.stderr is not None
    err = exp.stderr.read()
    exp.stderr.close()
    return err.decode() if isinstance(err, bytes) else err


@pytest.fixture
def exporter_on_demo():
    port = free_port()
    demo = subprocess.Popen([*NEURON_TOP, "demo", "--emit", "--seed", "5", "--period", "0.2"], cwd=ROOT,
                            stdout=subprocess.PIPE)
    exp = subprocess.Popen([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}"], cwd=ROOT, stdin=demo.stdout,
                           stderr=subprocess.PIPE, text=True)
    assert demo.stdout is not None
    demo.stdout.close()
    try:
        yield port, exp
    finally:
        for p in (exp, demo):
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)
        if exp.stderr:
            exp.stderr.close()


def test_demo_piped_into_export_serves_both_formats_and_stops_on_sigterm(exporter_on_demo) -> None:
    port, exp = exporter_on_demo
    url = f"http://127.0.0.1:{port}/metrics"
    body = wait_for_reports(url, 3)
    names = {f.name for f in text_string_to_metric_families(body)}
    assert {"neuroncore_utilization", "neuroncore_utilization_ratio", "execution_status", "instance_info",
            "neuron_hardware_info", "process_cpu_seconds", "neurontop_source_up"} & names >= {
        "neuroncore_utilization_ratio", "execution_status", "instance_info", "neuron_hardware_info",
        "neurontop_source_up"}
    ctype, om = get(url, accept="application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
    assert ctype.startswith("application/openmetrics-text") and om.endswith("# EOF\n")
    assert {f.name for f in om_parse(om)} >= {"execution_status", "instance", "neuron_hardware"}
    # curl -H 'Accept-Encoding: gzip': gzip, as AWS's prometheus_client-based script sends it (Prometheus asks)
    req = urllib.request.Request(url, headers={"Accept-Encoding": "deflate, gzip;q=0.9"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.headers["Content-Encoding"] == "gzip" and r.headers["Vary"] == "Accept-Encoding"
        raw = r.read()
    text = gzip.decompress(raw).decode()
    assert "neuroncore_utilization_ratio{" in text and len(raw) * 5 < len(text)
    req = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.headers["Content-Encoding"] is None and r.read().startswith(b"# HELP")
    assert get(f"http://127.0.0.1:{port}/")[1].startswith("<html>")
    with pytest.raises(urllib.error.HTTPError):
        get(f"http://127.0.0.1:{port}/nothing")
    exp.send_signal(signal.SIGTERM)
    assert exp.wait(timeout=10) == 128 + signal.SIGTERM  # as every mode (cli/signals.py)
    err = exp.stderr.read()
    assert f"serving http://127.0.0.1:{port}/metrics from stdin" in err
    assert "Traceback" not in err


def test_export_keeps_serving_after_the_pipe_ends_and_says_the_source_is_down() -> None:
    port = free_port()
    reports = subprocess.run([*NEURON_TOP, "demo", "--emit", "--seed", "2", "--count", "2", "--period", "0.01"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    exp = subprocess.Popen([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}", "--no-process-metrics"],
                           cwd=ROOT, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=False)
    try:
        assert exp.stdin is not None
        exp.stdin.write(reports + b'not json at all\n')
        exp.stdin.close()
        body = wait_for(f"http://127.0.0.1:{port}/metrics", "neurontop_source_up 0.0")
        assert "neurontop_reports_total 2.0" in body
        assert "neurontop_input_skipped_total 1.0" in body
        assert "neuroncore_utilization_ratio{" in body  # the last values stay, as AWS's script keeps them
        assert "process_cpu_seconds_total" not in body
        assert exp.poll() is None
    finally:
        err = stop(exp, signal.SIGINT)
    assert "Traceback" not in err


def test_record_keeps_every_report_the_exporter_read(tmp_path) -> None:
    port = free_port()
    rec = tmp_path / "run.jsonl"
    reports = subprocess.run([*NEURON_TOP, "demo", "--emit", "--seed", "2", "--count", "3", "--period", "0.01"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    exp = subprocess.Popen([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}", "--record", str(rec)],
                           cwd=ROOT, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert exp.stdin is not None
        exp.stdin.write(reports)
        exp.stdin.close()
        wait_for(f"http://127.0.0.1:{port}/metrics", "neurontop_reports_total 3.0")
    finally:
        exp.send_signal(signal.SIGTERM)
        assert exp.wait(timeout=10) == 128 + signal.SIGTERM
    lines = rec.read_bytes().splitlines()
    assert len(lines) == 3 and all(b'"neuron_top":{"ts":' in line for line in lines)


def test_sigterm_stops_the_command_child_too() -> None:
    """``export --command CMD``: SIGTERM (systemd, kubelet) leaves no orphan reading on, and says 128+15."""
    port = free_port()
    child = f"{sys.executable} -c 'import time; time.sleep(3600)' export-child-{port}"
    exp = subprocess.Popen([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}", "--command", child], cwd=ROOT,
                           stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/metrics", "neurontop_source_up")
        deadline = time.monotonic() + 20
        while not (kids := [p for p in psutil.Process(exp.pid).children(recursive=True)
                            if f"export-child-{port}" in p.cmdline()]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(kids) == 1
        exp.send_signal(signal.SIGTERM)
        assert exp.wait(timeout=10) == 128 + signal.SIGTERM
        assert not kids[0].is_running() or kids[0].status() == psutil.STATUS_ZOMBIE
    finally:
        if exp.poll() is None:
            exp.kill()
            exp.wait(10)
        assert exp.stderr is not None
        err = exp.stderr.read()
        exp.stderr.close()
    assert "Traceback" not in err


def test_busy_port_is_a_one_line_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = subprocess.run([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}"], cwd=ROOT,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                             env={**os.environ, "PATH": "/nonexistent"})
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"neuron-top: cannot listen on 127.0.0.1:{port}: address already in use (another exporter on this port?)"]


@pytest.mark.parametrize("spec", ["nope", "127.0.0.1:99999", "host:"])
def test_bad_listen_address_is_a_one_line_error(spec: str) -> None:
    out = subprocess.run([*NEURON_TOP, "export", "--listen", spec], cwd=ROOT, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "is not [HOST:]PORT" in out.stderr


def test_parse_listen() -> None:
    from neuron_top.export.server import parse_listen

    assert parse_listen("8000") == ("", 8000)
    assert parse_listen(":9100") == ("", 9100)
    assert parse_listen("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen("[::1]:8000") == ("::1", 8000)


def test_export_restarts_its_command_with_back_off_and_says_so_meanwhile() -> None:
    """Kill ``export --command``'s child: the exporter stays up (a supervisor would never restart it), so it must
    run the command again itself. Meanwhile it serves the last values with ``neurontop_source_up 0``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    cmd = f"{sys.executable} -m neuron_top demo --emit --seed 3 --period 0.2"
    exp = subprocess.Popen([*NEURON_TOP, "export", "--listen", f"127.0.0.1:{port}", "--no-process-metrics",
                            "--command", cmd], cwd=ROOT, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_reports(url, 2)
        [child] = [c for c in psutil.Process(exp.pid).children() if "demo" in " ".join(c.cmdline())]
        child.kill()
        # the first back-off is 1 s: the exporter says so while it serves the last values
        body = wait_for(url, 'state="restarting"')
        assert "neurontop_source_up 0.0" in body and "neurontop_source_restarts_total 1.0" in body
        assert "neuroncore_utilization_ratio{" in body
        body = wait_for(url, 'state="live"')
        assert "neurontop_source_up 1.0" in body
        again = [c for c in psutil.Process(exp.pid).children() if "demo" in " ".join(c.cmdline())]
        assert again and again[0].pid != child.pid
        assert exp.poll() is None
    finally:
        err = stop(exp, signal.SIGTERM)
    assert "restarting in 1 s" in err and "Traceback" not in err

"""``neuron-top health``: the rules on constructed reports, the exit codes as node-problem-detector sees them on
the demo, on a demo recording with an uncorrected ECC event and with no source at all, the rules file, and the
sample NPD config."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import msgspec
import pytest

from neuron_top.export.health import (
    MAX_MESSAGE,
    OK,
    PROBLEM,
    UNKNOWN,
    HealthCheck,
    HealthRules,
    RulesError,
    load_rules,
)
from neuron_top.feed import StatusChanged
from neuron_top.snapshot import snapshot_from
from neuron_top.sources.base import State, Status
from neuron_top.sources.demo import generate
from tests.conftest import REPORTS, ROOT

NEURON_TOP = [sys.executable, "-m", "neuron_top"]


def run(*args: str, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, list[str]]:
    out = subprocess.run([*NEURON_TOP, "health", *args], cwd=ROOT, input=stdin, capture_output=True,
                         timeout=timeout, stdin=None if stdin is not None else subprocess.DEVNULL)
    assert b"Traceback" not in out.stderr
    return out.returncode, out.stdout.decode().splitlines()


# --- as node-problem-detector runs it -------------------------------------------------------------------------
def test_demo_is_healthy() -> None:
    """``neuron-top demo --emit | neuron-top health``: ten reports 0.2 s apart, then the pipe ends."""
    demo = subprocess.Popen([*NEURON_TOP, "demo", "--emit", "--seed", "4", "--count", "10", "--period", "0.2"],
                            cwd=ROOT, stdout=subprocess.PIPE)
    out = subprocess.run([*NEURON_TOP, "health", "--for", "30"], cwd=ROOT, stdin=demo.stdout, capture_output=True,
                         timeout=60)
    assert demo.stdout is not None
    demo.stdout.close()
    demo.wait(timeout=10)
    lines = out.stdout.decode().splitlines()
    assert (out.returncode, len(lines)) == (OK, 1), lines
    assert re.fullmatch(r"OK: 16 Neuron devices, 7 runtimes, 10 reports over [12] s", lines[0]), lines


def test_recording_with_an_uncorrected_ecc_event_is_a_problem(tmp_path) -> None:
    """200 s of the demo: its scheduled uncorrected DRAM event (and one random one) show up."""
    rec = tmp_path / "run.jsonl"
    rec.write_bytes(b"\n".join(generate("trn2.48xlarge", 4, 200, period=1.0)) + b"\n")
    code, lines = run("--recording", str(rec))
    assert (code, lines) == (PROBLEM, ["PROBLEM: uncorrected ECC errors on device 0 (1), device 10 (1)"])
    # the first 50 s of the same run are clean
    rec.write_bytes(b"\n".join(generate("trn2.48xlarge", 4, 50, period=1.0)) + b"\n")
    assert run("--recording", str(rec))[0] == OK


def test_one_device_and_one_runtime_are_singular() -> None:
    """A one-device node said "OK: 1 Neuron devices, 1 runtimes" (the line node-problem-detector shows)."""
    rec = ROOT / "tests" / "fixtures" / "neuron-monitor" / "wandb_trn1_2xlarge_stream.ndjson"
    code, lines = run("--recording", str(rec))
    assert code == OK and lines[0].startswith("OK: 1 Neuron device, 1 runtime, 3 reports over "), lines


def test_errors_by_type_are_named_on_an_ok_line() -> None:
    """The same recording: `replay --summary` flags 71,095 execution errors (a `generic` error_summary) while
    health said a bare OK, as if there were none. Errors alone stay no problem (every execution completed): the
    OK line names them, counted as the summary counts them."""
    rec = ROOT / "tests" / "fixtures" / "neuron-monitor" / "wandb_trn1_2xlarge_stream.ndjson"
    code, lines = run("--recording", str(rec))
    assert code == OK and lines[0].endswith(
        "; note: runtimes reported 71,095 errors (generic 71,095); all 780 executions completed cleanly"), lines
    summary = subprocess.run([sys.executable, "-m", "neuron_top", "replay", str(rec), "--summary"],
                             capture_output=True, text=True, timeout=60).stdout
    assert "errors 71,095" in summary, summary


def test_no_source_at_all_is_unknown() -> None:
    code, lines = run("--command", "true", "--for", "10")
    assert code == UNKNOWN and len(lines) == 1 and lines[0].startswith("UNKNOWN: no report from true")


def test_a_monitor_that_dies_at_once_is_a_problem() -> None:
    code, lines = run("--command", "sh -c 'exit 3'", "--for", "4")  # time for its exit to be seen under load
    assert code == PROBLEM and lines[0].startswith("PROBLEM: neuron-monitor does not start:")


def test_a_monitor_that_cannot_start_says_why_in_the_line() -> None:
    """The verdict said "... exited with status 3 after 0 reports; restarting in 2 s": node-problem-detector's
    condition then told nobody why; the monitor's last line on stderr now ends it."""
    code, lines = run("--command", "sh -c 'echo error: cannot open /dev/neuron0 >&2; exit 3'", "--for", "4")
    assert code == PROBLEM and lines[0].endswith(
        "exited with status 3 after 0 reports; its last output: error: cannot open /dev/neuron0"), lines


def test_no_neuron_hardware_is_unknown() -> None:
    """The built-in collector on this machine (no Neuron devices): nothing to judge."""
    code, lines = run("--builtin", "--for", "3")
    assert (code, lines) == (UNKNOWN, ["UNKNOWN: no Neuron devices or runtimes in the reports"])


@pytest.mark.parametrize("args", [["--bogus"], ["--recording", "/nonexistent/run.jsonl"],
                                  ["--rules", "/nonexistent/rules.toml"]])
def test_usage_errors_are_one_unknown_line(args: list[str]) -> None:
    code, lines = run(*args)
    assert code == UNKNOWN and len(lines) == 1 and lines[0].startswith("UNKNOWN: ")


@pytest.mark.parametrize("seconds", ["0", "-1", "nan"])
def test_no_time_to_read_is_a_usage_error_not_no_report(seconds: str) -> None:
    """``--for 0`` read nothing and said "UNKNOWN: no report from built-in collector ..." as if the node had no
    monitor."""
    code, lines = run("--for", seconds)
    assert (code, lines) == (UNKNOWN, [f"UNKNOWN: --for {seconds}: give the seconds to read live reports, above 0 "
                                       "(12 by default)"])


def test_a_fleet_recording_is_said_to_be_one(tmp_path) -> None:
    """It said "UNKNOWN: no report from fleet.jsonl: end of fleet.jsonl: 2 reports"."""
    from neuron_top.fleet.record import encode_frame
    from tests.fleet_support import demo_frame

    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(encode_frame(demo_frame(3, ts)) + b"\n" for ts in (1.0, 2.0)))
    code, lines = run("--recording", str(path))
    assert (code, lines) == (UNKNOWN, [f"UNKNOWN: {path} is a fleet recording (neuron-top fleet --record): health "
                                       "judges one node's reports (neuron-top replay reads it)"])


# --- the rules ------------------------------------------------------------------------------------------------
def _check(docs: list[dict], rules: HealthRules | None = None, start: float = 0.0, step: float = 5.0
           ) -> tuple[int, str]:
    hc = HealthCheck(rules)
    hc.apply(StatusChanged(Status(State.LIVE)))
    for i, d in enumerate(docs):
        hc._report(snapshot_from(msgspec.json.encode(d), start + i * step, i + 1))
    return hc.verdict()


def _base() -> dict:
    return msgspec.json.decode(generate("inf1.xlarge", 2, 1)[0])


def _with_runtime(util: float, timed_out: int = 0, completed: int = 0, failed: int = 0) -> dict:
    d = _base()
    rt = next(r for r in d["neuron_runtime_data"] if r["report"]["memory_used"]["neuron_runtime_used_bytes"]
              ["neuron_device"] > 0)
    d["neuron_runtime_data"] = [rt]
    for c in rt["report"]["neuroncore_counters"]["neuroncores_in_use"].values():
        c["neuroncore_utilization"] = util
    es = rt["report"]["execution_stats"]
    es["execution_summary"] = {"completed": completed, "timed_out": timed_out, "failed_to_queue": failed}
    return d


def test_the_ok_note_on_errors_names_the_largest_types_and_the_unclean_executions() -> None:
    doc = _with_runtime(50.0, completed=99, failed=1)  # 1% did not complete cleanly: under the 5% rule
    rt = doc["neuron_runtime_data"][0]["report"]["execution_stats"]
    rt["error_summary"] = {"generic": 5, "numerical": 3, "transient": 3, "model": 1, "runtime": 0, "hardware": None}
    code, line = _check([doc, doc])
    assert code == OK and line.endswith(
        "; note: runtimes reported 24 errors (generic 10, numerical 6, transient 6, ...); 2 of 200 executions did "
        "not complete cleanly"), line
    rt["error_summary"] = {"generic": 0}
    assert "errors" not in _check([doc])[1]  # none counted: no note


def test_hang_needs_zero_cores_while_loaded_and_executions_timing_out() -> None:
    hung = [_with_runtime(0.0, timed_out=1) for _ in range(4)]
    code, line = _check(hung)
    assert code == PROBLEM and "runtime hung" in line
    idle = [_with_runtime(0.0) for _ in range(4)]
    assert _check(idle)[0] == OK  # loaded, no work asked: idle, not hung
    short = [_with_runtime(0.0, timed_out=1) for _ in range(2)]
    assert _check(short)[0] == OK  # 5 s < hang_seconds
    recovered = [*hung, _with_runtime(50.0, completed=10)]
    assert _check(recovered)[0] == OK
    assert _check(hung, HealthRules(hang_seconds=-1))[0] == OK


def test_error_rate() -> None:
    bad = [_with_runtime(50.0, completed=90, failed=10) for _ in range(3)]
    code, line = _check(bad)
    assert code == PROBLEM and "10% of 300 executions failed" in line
    assert _check(bad, HealthRules(max_error_rate=0.2))[0] == OK
    assert _check([_with_runtime(50.0, completed=5, failed=5)])[0] == OK  # 10 < min_executions


def test_group_errors_and_missing_devices() -> None:
    d = _base()
    d["system_data"]["vcpu_usage"]["error"] = "cannot read /proc/stat"
    code, line = _check([d])
    assert code == PROBLEM and "neuron-monitor error in system_data.vcpu_usage: cannot read /proc/stat" in line
    assert _check([d], HealthRules(group_errors=False))[0] == OK
    d = _base()
    d["neuron_hardware_info"]["neuron_device_count"] = 4
    code, line = _check([d])
    assert code == PROBLEM and "3 of 4 Neuron devices missing" in line


def test_containerised_monitor_vcpu_errors_are_a_note_not_a_problem() -> None:
    """AWS's real 4-runtime inf1 report: each runtime's vCPU group says ``open /proc/<pid>/stat: no such file or
    directory`` (neuron-monitor in a container without hostPID). Healthy, with a note, within NPD's 200 chars."""
    data = (REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").read_bytes()
    code, line = _check([msgspec.json.decode(data)] * 3)
    assert code == OK, line
    assert "cannot open /proc/<pid> of 4 runtimes" in line and len(line) <= MAX_MESSAGE
    # the same error on another group, or any other vCPU error, is still a problem, and cut to NPD's limit
    d = msgspec.json.decode(data)
    for rt in d["neuron_runtime_data"]:
        rt["report"]["neuron_runtime_vcpu_usage"]["error"] = "permission denied: " + "x" * 300
    code, line = _check([d])
    assert code == PROBLEM and "neuron_runtime_vcpu_usage: permission denied" in line
    assert len(line) <= MAX_MESSAGE


# --- configuration ---------------------------------------------------------------------------------------------
def test_rules_file(tmp_path) -> None:
    shipped = load_rules(ROOT / "deploy" / "node-problem-detector" / "neuron-health.toml")
    assert shipped == HealthRules()
    p = tmp_path / "r.toml"
    p.write_text("[health]\nmax_error_rate = 0.5\nhang_seconds = 30\n")
    assert load_rules(p) == HealthRules(max_error_rate=0.5, hang_seconds=30.0)
    for bad in ("[health]\nnope = 1\n", "[health]\nmax_error_rate = 'x'\n", "[health\n", "health = 3\n"):
        p.write_text(bad)
        with pytest.raises(RulesError):
            load_rules(p)


def test_sample_npd_config_runs_neuron_top_health_within_its_timeout() -> None:
    cfg = json.loads((ROOT / "deploy" / "node-problem-detector" / "neuron-health-plugin.json").read_text())
    assert cfg["plugin"] == "custom"
    (rule,) = cfg["rules"]
    assert rule["path"].endswith("/neuron-top") and rule["args"][0] == "health"
    seconds = float(rule["args"][rule["args"].index("--for") + 1])
    assert float(rule["timeout"].rstrip("s")) > seconds + 10
    assert {c["type"] for c in cfg["conditions"]} == {rule["condition"]}
    # NPD sets a custom plugin's condition True when the check fails: the condition names the problem, so a
    # taint on "=True" hits the nodes with a problem (a "NeuronHealthy" condition read False on healthy nodes)
    assert rule["condition"] == "NeuronProblem" and rule["reason"] == "NeuronHasProblem"
    assert cfg["pluginConfig"]["max_output_length"] == MAX_MESSAGE

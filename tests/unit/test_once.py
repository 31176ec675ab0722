"""--once text and JSON: every panel's data is there, nothing is markup or a control character."""

from __future__ import annotations

import msgspec
import pytest

from neuron_top.output.text import SourceInfo, as_json, text
from tests.conftest import DATA, REPORTS, load_snapshot


def test_text_has_every_section() -> None:
    out = text(load_snapshot(DATA / "trn2_small.json"), SourceInfo("x.jsonl", "replay", skipped=2,
                                                                  skipped_reasons={"malformed JSON": 2}))
    for needle in ("REPLAY", "i-0123456789abcdef0", "trn2.48xlarge", "2x trainium2 v4", "LNC=2",
                   "NeuronCores (all): NeuronCore v3d utilization % (avg 52.9%)", "ND1  [ 55%] [   -]",
                   "vCPU (4):", "ctxsw 5000.0/s", "memory (all)", "ECC", "UNCORRECTED", "latency", "idle",
                   "completed 120.0/s", "failed_to_queue 3", "[red]boom    2   52%  120.0/s  13.0ms  20.0ms",
                   "numerical 2.0/s", "skipped: 2 bad input (malformed JSON: 2)", "[1] [red]boom (pid 4242)",
                   "serve.neuron_runtime_vcpu_usage: open /proc/5151/stat"):
        assert needle in out, needle
    assert "\x1b" not in out


def test_text_flops_and_selected_app() -> None:
    out = text(load_snapshot(DATA / "trn2_small.json"), SourceInfo("s", "live"), pid=4242, flops=True)
    assert "NeuronCores ([red]boom): NeuronCore v3d effective TFLOPS per core" in out
    assert "[ 1.10]" in out  # effective_flops preferred over flops


def test_json_round_trips() -> None:
    doc = msgspec.json.decode(as_json(load_snapshot(DATA / "trn2_small.json"), SourceInfo("s", "live")))
    assert doc["device_count"] == 2
    assert doc["apps"][0]["label"] == "[red]boom"
    assert doc["apps"][1]["latency"]["total"] is None
    assert doc["apps"][0]["models"][0]["subgraphs"][0]["extra"]["v2"] == "nc_v2.0"
    assert doc["ecc"][1]["mem_uncorrected"] == 1


@pytest.mark.parametrize("name", ["trn1n_32xlarge_32runtimes_cwagent_test.json", "inf2_xlarge_rt2.30.51_trimmed_pantheon.json",
                                  "trn1_2xlarge_first_record_no_runtime_allsmi.json"])
def test_real_reports_render(name: str) -> None:
    snap = load_snapshot(REPORTS / name)
    out = text(snap, SourceInfo(name, "replay"))
    assert "NeuronCores" in out
    msgspec.json.decode(as_json(snap, SourceInfo(name, "replay")))


def test_hardware_line_leaves_out_what_the_report_does_not_say() -> None:
    """An older neuron-monitor (trn1n, the CloudWatch agent's test report) gives neither the core version nor the
    device memory: the line said "2 NeuronCore  per device, - each"."""
    out = text(load_snapshot(REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json"), SourceInfo("stdin", "live"))
    assert "hardware: 16x neuron device, 2 NeuronCore per device\n" in out
    full = text(load_snapshot(REPORTS / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json"), SourceInfo("stdin", "live"))
    assert "hardware: 1x inferentia2 v3, 2 NeuronCore v2 per device, 32.0GB each  LNC=1\n" in full


def test_once_with_record_records_the_report_it_prints(tmp_path, capfdbinary) -> None:
    """``--once --record FILE`` printed a report and left no FILE, without a word."""
    from neuron_top.cli.main import main
    from neuron_top.recording.index import RecordingIndex

    path = tmp_path / "one.jsonl.zst"
    assert main(["demo", "--instance", "inf1.xlarge", "--seed", "3", "--record", str(path), "--once"]) == 0
    assert "inf1.xlarge" in capfdbinary.readouterr().out.decode()
    with RecordingIndex(path) as ix:
        assert ix.wait(30) and len(ix) == 1 and ix.skipped == 0 and ix.wallclock


def test_once_with_record_on_a_file_being_recorded_is_refused(tmp_path, capfdbinary) -> None:
    from neuron_top.cli.main import main
    from neuron_top.recording.writer import RecordingWriter

    path = tmp_path / "busy.jsonl"
    with RecordingWriter(path):
        assert main(["demo", "--seed", "3", "--record", str(path), "--once"]) == 2
    assert "another process is recording to it" in capfdbinary.readouterr().err.decode()


def test_once_states_its_source_as_the_session_does() -> None:
    """``--once`` reads its source's state through a ``Session``, the dashboard's one vocabulary: input that is
    not a report before the first report is counted with its reason, and the header says the state the
    dashboard's header would."""
    import subprocess
    import sys

    bad = b"not a report\n"
    good = (REPORTS / "inf1_xlarge_single_runtime.json").read_bytes().replace(b"\n", b" ") + b"\n"
    out = subprocess.run([sys.executable, "-m", "neuron_top", "--once"], input=bad + good, capture_output=True,
                         timeout=60)
    head = out.stdout.decode().splitlines()
    assert out.returncode == 0, out.stderr
    assert "[LIVE]" in head[0] and any(line.startswith("skipped: 1 bad input (") for line in head), head[:4]


def test_a_report_without_apps_says_so_under_executions_as_under_latency() -> None:
    """The executions section was a title over nothing (latency's said "no apps"): it read as cut off."""
    from tests.conftest import ROOT

    snap = load_snapshot(ROOT / "tests" / "fixtures" / "neuron-monitor" / "inf1_xlarge_idle_no_runtimes.json")
    lines = text(snap, SourceInfo("s", "live")).splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("executions / errors"))
    assert lines[i + 1] == "  no Neuron applications"
    narrowed = load_snapshot(REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").narrowed(lambda a: False, "zzz")
    assert "executions / errors (per second; counts in the report's period):\n  no app matches filter 'zzz' (4 apps" \
        " hidden)\n" in text(narrowed, SourceInfo("s", "live"))


def test_an_instance_known_by_name_alone_has_no_trailing_space() -> None:
    """The built-in collector on a VM knows only its name: the line was "instance: vm " (a space after it)."""
    import json

    from neuron_top.snapshot import snapshot_from

    snap = snapshot_from(json.dumps({"instance_info": {"instance_name": "vm", "instance_id": "",
                                                       "instance_type": ""}}).encode(), 0.0, 1)
    assert "instance: vm\n" in text(snap, SourceInfo("s", "live"))


def test_no_runtime_means_every_memory_category_is_zero_as_the_total_is() -> None:
    """A report with no runtime: the total said 0B (nothing used, ``AllApps.memory_reported``) while every
    category said "-" (not reported) beside it, on the dashboard and in ``--once``. A runtime that gives its
    totals without a breakdown still shows "-" per category."""
    from neuron_top.output.cells import memory_values
    from neuron_top.snapshot import HOST_CATEGORIES

    snap = load_snapshot(REPORTS / "inf1_xlarge_idle_no_runtimes.json")
    assert not snap.apps
    out = text(snap, SourceInfo("x", "live"))
    assert "host   total 0B  tensors 0B  constants 0B" in out and "tensors -" not in out
    app = load_snapshot(REPORTS / "inf1_xlarge_single_runtime.json").apps[0]
    assert memory_values(app, HOST_CATEGORIES, {}, 5)[1:] == [(n, None) for n in HOST_CATEGORIES]


def test_no_runtime_means_no_runtime_vcpu_used_as_no_memory_is() -> None:
    """The same absence, said the same way: with no runtime, ``--once`` printed "host total 0B" (nothing used)
    and "runtime vCPU (all): user - system -" (not reported) in one output."""
    snap = load_snapshot(REPORTS / "inf1_xlarge_idle_no_runtimes.json")
    assert not snap.apps and snap.all.vcpu == (0.0, 0.0)
    assert "runtime vCPU (all): user 0.0% system 0.0%" in text(snap, SourceInfo("x", "live"))
    one = load_snapshot(REPORTS / "inf1_xlarge_single_runtime.json")
    assert one.all.vcpu == one.apps[0].vcpu  # one runtime: its own reading, "-" when it gives none

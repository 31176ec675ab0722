"""One report, every output: the dashboard (Pilot), ``--once``, ``--json``, the exporter's samples, a fleet host
row and ``replay --summary`` give the same figure and the same state (a value, ``-`` not reported, ``idle``,
``err`` failed) for each value, because each only formats what the core decided (``derived``, ``snapshot``,
``output.cells``).

The reports: every real one in ``tests/fixtures/neuron-monitor`` and generated edge reports, each made so that an
output computing a rule itself would disagree: two runtimes sharing a core (summed share 80%, where a max says
50%), errors by type beside executions that did not complete cleanly (``err/s`` and ``bad/s`` differ), only device
latency (shown, marked, not ``idle``), a failed group (``err``, not ``0.0%``), a failed runtime (not "idle, no
errors"), a value missing (``-``), an app that ran nothing (``idle``), no devices at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from neuron_top.cli.main import main as cli_main
from neuron_top.derived import per_second
from neuron_top.export.exposition import exposition
from neuron_top.fleet.apps import apps_from_snapshots
from neuron_top.fleet.rows import from_snapshot
from neuron_top.fmt import plural
from neuron_top.output.cells import APP_COLUMNS, FAILED, latency_cell
from neuron_top.output.text import SourceInfo, as_json, text
from neuron_top.recording.writer import RecordingWriter
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.memory import MemorySummary
from neuron_top.tui.widgets.vcpu import VcpuPanel
from tests.app.test_once_agrees import cells_by_device, section
from tests.conftest import ROOT
from tests.helpers import feed, make_app

FIXTURES = ROOT / "tests" / "fixtures" / "neuron-monitor"
REAL = sorted(p.name for p in FIXTURES.glob("*.json"))
LAT = {"p0": 0.001, "p1": 0.0011, "p25": 0.0015, "p50": 0.002, "p75": 0.0025, "p99": 0.008, "p100": 0.012}


def runtime(pid: int, tag: str, *, cores: dict[str, float] | None = None, completed: int = 100, bad: int = 0,
            errors: int = 0, total: Any = LAT, device: Any = LAT, vcpu: Any = (10.0, 2.0), error: str = "",
            group_errors: tuple[str, ...] = (), drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """One runtime's entry as neuron-monitor writes it; ``drop`` leaves groups out, ``group_errors`` sets their
    ``error`` (keeping the values they carry: a failed group's zeros must not be shown as a reading)."""
    rep: dict[str, Any] = {
        "neuroncore_counters": {"period": 1.0, "neuroncores_in_use": {
            k: {"neuroncore_utilization": u, "flops": u * 1e10} for k, u in (cores or {"0": 40.0}).items()}},
        "execution_stats": {"period": 1.0, "error_summary": {"generic": errors, "numerical": 0},
                            "execution_summary": {"completed": completed, "completed_with_err": bad,
                                                  "completed_with_num_err": 0, "timed_out": 0,
                                                  "incorrect_input": 0, "failed_to_queue": 0},
                            "latency_stats": {"total_latency": total, "device_latency": device}},
        "memory_used": {"period": 1.0, "neuron_runtime_used_bytes": {"host": 1 << 20, "neuron_device": 1 << 30}},
        "neuron_runtime_vcpu_usage": {"period": 1.0, "vcpu_usage": {"user": vcpu[0], "system": vcpu[1]}},
    }
    for g in drop:
        rep.pop(g)
    for g in group_errors:
        rep[g]["error"] = f"{g} could not be read"
    return {"pid": pid, "neuron_runtime_tag": tag, "error": error, "report": rep}


def report(*runtimes: dict[str, Any], devices: int = 1) -> bytes:
    hw = {"neuron_device_type": "inferentia2", "neuroncore_version": "v2", "neuron_device_count": devices,
          "neuroncore_per_device_count": 2, "neuron_device_memory_size": 32 << 30, "error": ""}
    return json.dumps({
        "instance_info": {"instance_id": "i-0123456789abcdef0", "instance_type": "inf2.xlarge"},
        "neuron_hardware_info": hw if devices else {"error": "no Neuron devices found"},
        "neuron_runtime_data": list(runtimes),
        "system_data": {"vcpu_usage": {"period": 1.0, "average_usage": {
            "user": 20.0, "nice": 0.0, "system": 5.0, "idle": 75.0, "io_wait": 0.0, "irq": 0.0, "soft_irq": 0.0},
            "usage_data": {"0": {"user": 20.0, "nice": 0.0, "system": 5.0, "idle": 75.0, "io_wait": 0.0,
                                 "irq": 0.0, "soft_irq": 0.0}}, "context_switch_count": 100}},
    }).encode()


EDGE = {
    "two_runtimes_one_core": report(runtime(11, "a", cores={"0": 30.0, "1": 0.0}),
                                    runtime(12, "b", cores={"0": 50.0, "1": 10.0})),
    "errors_beside_bad_executions": report(runtime(11, "a", errors=7, bad=2), runtime(12, "b", errors=0, bad=3)),
    "only_device_latency": report(runtime(11, "a", completed=816, total=None)),
    "group_with_an_error": report(runtime(11, "a", errors=5, bad=4,  # a failed group's counts are not a reading
                                          group_errors=("execution_stats", "neuron_runtime_vcpu_usage")),
                                  runtime(12, "b", group_errors=("neuron_runtime_vcpu_usage",))),
    "runtime_with_an_error": report(runtime(11, "a", error="runtime unreachable"), runtime(12, "b")),
    "value_missing": report(runtime(11, "a", drop=("neuron_runtime_vcpu_usage",), total=None, device=None)),
    "memory_failed": report(runtime(11, "a", group_errors=("memory_used",))),
    "ran_nothing": report(runtime(11, "a", completed=0, total=None, device=None)),
    "zero_devices": report(devices=0),
}
CASES = [*REAL, *EDGE]


def load(case: str) -> Snapshot:
    data = EDGE[case] if case in EDGE else (FIXTURES / case).read_bytes()
    return snapshot_from(data, 1000.0, 1)


# --- reading each output back ---------------------------------------------------------------------------------


def once_rows(out: str) -> dict[str, list[str]]:
    if "apps: none" in out:
        return {}
    table = section(out, "apps (")
    return {line.split()[0]: line.split()[1:] for line in table[2:]}


def samples(scrape: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(scrape):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def sample(got: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float | None:
    vals = [v for lab, v in got.get(name, []) if all(lab.get(k) == x for k, x in labels.items())]
    assert len(vals) <= 1, (name, labels, vals)
    return vals[0] if vals else None


# --- the test -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
async def test_every_output_gives_the_same_figure_and_state(case: str, tmp_path: Path,
                                                            capfd: pytest.CaptureFixture[str]) -> None:
    snap = load(case)
    apps = snap.apps
    once = text(snap, SourceInfo("test", "live"))
    doc = json.loads(as_json(snap, SourceInfo("test", "live")))
    scrape = samples(exposition([snap]))
    row = from_snapshot("host", snap)

    # dashboard (Pilot): the apps table, the runtime vCPU, the core grid of every app together
    app = make_app([snap])
    async with app.run_test(size=(250, 80)) as pilot:
        await feed(pilot)
        panel = app.screen.query_one(AppsPanel)
        shown = {line.split()[0].lstrip(">"): line.split()[1:] for line in (s.text for s in panel._strips[2:])
                 if line.strip() and not line.startswith(" no Neuron")}
        runtime_line = app.screen.query_one(VcpuPanel)._strips
        grid = [s.text for s in app.screen.query_one(CoreGrid)._strips]
        memory = [s.text for s in app.screen.query_one(MemorySummary)._strips]
    runtime_text = next((s.text for s in runtime_line if " user " in s.text and "(all apps)" in s.text), "")

    # each app's row: the same text on screen, in --once and in --json, column by column
    once_table = once_rows(once)
    n = len(APP_COLUMNS)
    for a, j in zip(apps, doc["apps"], strict=True):
        label = a.label
        if " " in label:
            continue  # a label with spaces cannot be read back by words
        cells = [j["cells"][k] for k, _ in APP_COLUMNS]
        assert once_table[label] == cells, (case, label)
        assert shown[label][:n] == cells, (case, label)
        # the states the cells show are the core's
        lat = a.latency_shown
        assert j["shown"]["latency"]["state"] == lat.state
        assert j["cells"]["p99"] == latency_cell(lat, "p99")
        if a.failure("execution_stats"):
            assert j["cells"]["p99"] == j["cells"]["done"] == j["cells"]["bad"] == FAILED
            assert "execution_stats" in j["shown"]["failed"]
        if lat.state == "idle":
            assert a.rates.ran == 0  # idle only when the app ran nothing
        assert j["shown"]["bad"] == a.rates.bad_count and j["shown"]["bad_per_second"] == a.rates.bad_per_second
        assert j["shown"]["errors_per_second"] == a.rates.errors_per_second

    # the runtime vCPU of every app together: screen and --once
    once_rt = re.search(r"runtime vCPU \(all\): user (\S+) system (\S+)", once)
    assert once_rt is not None
    if runtime_text:
        assert f"user {once_rt[1]}  sys {once_rt[2]}" in runtime_text, case
    if apps and all(a.failure("neuron_runtime_vcpu_usage") for a in apps):
        assert (once_rt[1], once_rt[2]) == (FAILED, FAILED)  # not 0.0%

    # used memory: "-" on screen and in --once when no runtime's memory is known (a failed group is not 0B)
    once_mem = section(once, "memory (")
    screen_total = re.search(r"Total:? +(\S+)", " ".join(memory[1:3]))
    once_total = re.search(r"host +total (\S+)", once_mem[1])
    assert screen_total is not None and once_total is not None
    assert screen_total[1] == once_total[1], (case, memory[1:3], once_mem[1])
    assert (once_total[1] == "-") == (not snap.all.memory_reported), case

    # the core grid: the same cells on screen and in --once
    if snap.has_neuron:
        assert cells_by_device(section(once, "NeuronCores (")[1:]) == cells_by_device(grid[2:]), case

    # the exporter: a sample exactly where the core has a value, the same value; none where it has none
    util = snap.all.core_stats.util
    for core in range(max([*util, -1]) + 1):
        got = sample(scrape, "neurontop_neuroncore_utilization_ratio", neuroncore=str(core))
        want = util.get(core)
        assert got == (None if want is None else pytest.approx(want / 100)), (case, core)
    tags = [str(a._rt.neuron_runtime_tag) if a._rt is not None else "" for a in apps]  # as AWS's: str(tag)
    for a, tag in zip(apps, tags, strict=True):
        if tags.count(tag) > 1:
            continue  # AWS's families are keyed by runtime_tag: runtimes sharing one share the series
        lat = a.latency_shown
        got50 = sample(scrape, "execution_latency_seconds", runtime_tag=tag, percentile="p50")
        want50 = lat.get("p50") if lat.state == "total" else None
        assert got50 == want50, (case, a.label, lat.state)
        dev = sample(scrape, "neurontop_execution_device_latency_seconds", runtime_tag=tag, percentile="p50")
        want_dev = None if a.failure("execution_stats") else (a.latency("device") or {}).get("p50")
        assert dev == want_dev, (case, a.label)
        user = sample(scrape, "neuron_runtime_vcpu_usage_ratio", runtime_tag=tag, usage_type="user")
        want_user = a.vcpu[0]
        assert user == (None if want_user is None else pytest.approx(want_user / 100)), (case, a.label)

    # the fleet's row of this host: the same rules, the same "not reported"
    vals = [u for u in util.values() if u is not None]
    assert row.util_max == (max(vals) if vals else None)
    assert row.util == (pytest.approx(sum(vals) / len(vals)) if vals else None)
    assert row.err_rate == snap.all.rates.bad_per_second  # the fleet's BAD/s is bad/s
    assert row.vcpu == snap.cpu.busy
    assert (row.mem_used is None) == (not snap.has_neuron or not snap.all.memory_reported), case
    p99s = [lat.get("p99") for a in apps if (lat := a.latency_shown).state == "total" and lat.get("p99") is not None]
    assert row.p99 == (max(p99s) if p99s else None)

    # the fleet's apps view (over ssh, from this host's report): each runtime's executions and bad/s by the rules
    by_tag = {r.tag: r for r in apps_from_snapshots({"host": snap})}
    for a in apps:
        if [b.tag for b in apps].count(a.tag) == 1 and not a.error and a.tag in by_tag:
            assert by_tag[a.tag].err_rate == a.rates.bad_per_second, (case, a.label)
            assert by_tag[a.tag].exec_rate == per_second(a.rates.ran, a.rates.period), (case, a.label)

    # replay --summary: an app's trouble as the apps table counts it (errors by type; bad executions)
    path = tmp_path / "one.jsonl"
    with RecordingWriter(path) as w:
        w.write(EDGE[case] if case in EDGE else (FIXTURES / case).read_bytes(), 1000.0)
    capfd.readouterr()
    cli_main(["replay", str(path), "--summary", "--json"])
    events = json.loads(capfd.readouterr().out)["events"]
    troubles = [e["text"] for e in events if e["kind"] == "error"]
    want = []
    for a in apps:
        errs, bad = a.rates.error_count, a.rates.bad_count or 0
        if errs or bad:
            what = [plural(k, w) for k, w in ((errs, "execution error"), (bad, "bad execution")) if k]
            want.append(f"app {a.label}: {', '.join(what)}")
    assert sorted(troubles) == sorted(want), case


def test_the_edge_reports_show_what_they_were_made_for() -> None:
    """The edge reports pin the rules themselves, so a rule changed in the core is a decision, not a drift."""
    two = load("two_runtimes_one_core")
    assert two.all.core_stats.util[0] == 80.0  # summed share, not the max (50) nor the mean (40)
    errs = load("errors_beside_bad_executions").apps
    assert [(a.rates.error_count, a.rates.bad_count) for a in errs] == [(7, 2), (0, 3)]
    dev = load("only_device_latency").apps[0]
    assert dev.latency_shown.state == "device" and latency_cell(dev.latency_shown, "p50") == "2.00ms*"
    grp = load("group_with_an_error")
    assert grp.apps[0].latency_shown.state == "err" and grp.all.vcpu == (None, None)
    assert grp.all.failure("neuron_runtime_vcpu_usage")  # every runtime's vCPU failed: err, not 0.0%
    assert grp.apps[0].rates.bad_count is None and grp.apps[0].rates.error_count == 0  # failed: no counts
    rt = load("runtime_with_an_error").apps[0]
    assert rt.latency_shown.state == "err" and rt.failure("neuroncore_counters") == "runtime unreachable"
    assert load("value_missing").apps[0].latency_shown.state == "-"
    assert load("ran_nothing").apps[0].latency_shown.state == "idle"
    inf2 = load("inf2_xlarge_rt2.30.51_trimmed_pantheon.json").apps[0]
    assert inf2.rates.ran == 816 and inf2.latency_shown.state == "device"  # the real report

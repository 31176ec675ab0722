"""The simulator: valid neuron-monitor reports, deterministic per seed, with the motion the UI needs to show."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
import pytest

from neuron_top.schema import Report
from neuron_top.snapshot import INSTANCE_LAYOUTS
from neuron_top.sources.base import RawReport, State, Status
from neuron_top.sources.demo import (
    BATCH,
    GROUPS,
    INSTANCE_TYPES,
    PROFILES,
    DemoSource,
    emit_main,
    generate,
    iter_reports,
    trn2_benchmark_report,
)
from tests.conftest import GUIDE

PERCENTILES = ("p0", "p1", "p25", "p50", "p75", "p99", "p100")

# Every field name of the neuron-monitor user guide (report part), plus the newer ones seen in real output.
GUIDE_FIELDS = {
    "neuron_runtime_data", "pid", "address", "neuron_runtime_tag", "error", "report",
    "neuroncore_counters", "period", "neuroncores_in_use", "neuroncore_utilization", "flops", "v3d",
    "execution_stats", "error_summary", "generic", "numerical", "transient", "model", "runtime", "hardware",
    "execution_summary", "completed", "completed_with_err", "completed_with_num_err", "timed_out",
    "incorrect_input", "failed_to_queue", "latency_stats", "total_latency", "device_latency", *PERCENTILES,
    "memory_used", "neuron_runtime_used_bytes", "host", "neuron_device", "usage_breakdown", "application_memory",
    "constants", "dma_buffers", "tensors", "neuroncore_memory_usage", "model_code", "model_shared_scratchpad",
    "runtime_memory", "loaded_models", "name", "uuid", "model_id", "is_running", "subgraphs", "memory_used_bytes",
    "neuroncore_index", "neuron_device_index", "neuron_runtime_vcpu_usage", "vcpu_usage", "user", "system",
    "system_data", "neuron_hw_counters", "neuron_devices", "mem_ecc_corrected", "mem_ecc_uncorrected",
    "sram_ecc_corrected", "sram_ecc_uncorrected", "average_usage", "usage_data", "nice", "idle", "io_wait", "irq",
    "soft_irq", "context_switch_count", "memory_info", "memory_total_bytes",
    "swap_total_bytes", "swap_used_bytes", "instance_info", "instance_name", "instance_id", "instance_type",
    "instance_availability_zone", "instance_availability_zone_id", "instance_region", "ami_id", "subnet_id",
    "neuron_hardware_info", "neuron_device_type", "neuron_device_version", "neuroncore_version",
    "neuron_device_count", "neuron_device_memory_size", "neuroncore_per_device_count", "logical_neuroncore_config",
    "neuron_k8s_info", "neuroncores_k8s_info", "neurondevices_k8s_info", "pod_name", "namespace", "container_name",
    # newer than the guide
    "effective_flops", "mem_ecc_repairable_uncorrected",
}


@cache
def _reports(instance: str, seed: int, n: int) -> tuple[dict[str, Any], ...]:
    return tuple(msgspec.json.decode(b) for b in generate(instance, seed, n))


def _long() -> tuple[dict[str, Any], ...]:
    """Four minutes of trn2.48xlarge, shared by the tests that need a long run."""
    return _reports("trn2.48xlarge", 0, 240)


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from _keys(v)
    elif isinstance(node, list):
        for v in node:
            yield from _keys(v)


def _runtimes(reports: tuple[dict[str, Any], ...]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, r in enumerate(reports):
        for rt in r["neuron_runtime_data"]:
            yield i, rt


# --- format -----------------------------------------------------------------------------------------------------


def test_the_command_line_offers_every_profile() -> None:
    from neuron_top.cli.main import INSTANCES

    assert INSTANCES == INSTANCE_TYPES


@pytest.mark.parametrize("instance", ["inf2.xlarge", "trn1.2xlarge", "trn2.3xlarge"])
def test_one_device_instances_fit_their_hardware(instance: str) -> None:
    """The sizes people start on (``demo --instance inf2.xlarge`` was refused): every app's cores on the one
    device, its vCPUs on the instance's, the device and host memory within the instance's."""
    prof = PROFILES[instance]
    assert (prof.device_count, prof.cores_per_device) == INSTANCE_LAYOUTS[instance]
    for spec in prof.apps:
        assert spec.first_core >= 0 and spec.first_core + spec.cores <= prof.core_count
        assert spec.vcpus[0] + spec.vcpus[1] <= prof.vcpus
    assert sum(s.host_memory for s in prof.apps) < prof.host_memory
    per_core = {c: 0 for c in range(prof.core_count)}
    for spec in prof.apps:
        for c in range(spec.first_core, spec.first_core + spec.cores):
            per_core[c] += spec.tensors + spec.scratchpad + sum(m.constants + m.code for m in spec.models)
    assert sum(per_core.values()) < prof.device_memory
    for data in generate(instance, 3, 60):
        report = msgspec.json.decode(data, type=Report)
        for rt in report.neuron_runtime_data or []:
            cores = rt.report.neuroncore_counters.neuroncores_in_use
            assert all(int(c) < prof.core_count for c in cores)


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_every_report_decodes_into_the_schema(instance: str) -> None:
    raw = generate(instance, 3, 80)
    assert len(raw) == 80
    for data in raw:
        assert b"\n" not in data
        report = msgspec.json.decode(data, type=Report)
        assert report.instance_info is not None and report.instance_info.instance_type == instance
        assert report.system_data is not None and report.system_data.vcpu_usage is not None


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_hardware_facts_match_the_instance(instance: str) -> None:
    facts = {  # devices, cores per device, device memory GiB, vCPUs, core version, LNC
        "inf1.xlarge": (1, 4, 8, 4, "v1", 1),
        "inf2.xlarge": (1, 2, 32, 4, "v2", 1),
        "inf2.48xlarge": (12, 2, 32, 192, "v2", 1),
        "trn1.2xlarge": (1, 2, 32, 8, "v2", 1),
        "trn1.32xlarge": (16, 2, 32, 128, "v2", 1),
        "trn2.3xlarge": (1, 4, 96, 12, "v3d", 2),
        "trn2.48xlarge": (16, 4, 96, 192, "v3d", 2),
    }[instance]
    r = _reports(instance, 0, 1)[0]
    hw = r["neuron_hardware_info"]
    got = (hw["neuron_device_count"], hw["neuroncore_per_device_count"], hw["neuron_device_memory_size"] >> 30,
           len(r["system_data"]["vcpu_usage"]["usage_data"]), hw["neuroncore_version"],
           hw["logical_neuroncore_config"])
    assert got == facts
    assert len(r["system_data"]["neuron_hw_counters"]["neuron_devices"]) == facts[0]
    assert r["instance_info"]["instance_name"] == "neuron-top-demo"


def test_trn2_shows_physical_cores_behind_each_logical_core() -> None:
    r = _reports("trn2.48xlarge", 0, 1)[0]
    assert r["neuron_hardware_info"]["neuron_device_version"] == "v4"
    seen = 0
    for rt in r["neuron_runtime_data"]:
        for key, core in rt["report"]["neuroncore_counters"]["neuroncores_in_use"].items():
            v3d = core["v3d"]
            assert sorted(v3d) == sorted({f"nc_v3.{int(key) * 2}", f"nc_v3.{int(key) * 2 + 1}"})
            mean = sum(p["neuroncore_utilization"] for p in v3d.values()) / 2
            assert mean == pytest.approx(core["neuroncore_utilization"], abs=1.0)
            seen += 1
    assert seen > 32


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_memory_totals_are_the_sum_of_their_breakdown(instance: str) -> None:
    for _, rt in _runtimes(_reports(instance, 9, 120)):
        used = rt["report"]["memory_used"]["neuron_runtime_used_bytes"]
        breakdown = used["usage_breakdown"]
        assert used["host"] == sum(breakdown["host"].values())
        assert used["neuron_device"] == sum(sum(c.values()) for c in breakdown["neuroncore_memory_usage"].values())


def test_every_field_of_the_guide_appears() -> None:
    seen: set[str] = set()
    for instance in INSTANCE_TYPES:
        for r in _reports(instance, 0, 20):
            seen.update(_keys(r))
    assert GUIDE_FIELDS - seen == set()


def test_every_field_in_the_guide_text_appears() -> None:
    """Cross-check against the guide itself: every ``"key":`` in its JSON output section."""
    text = (GUIDE / "neuron-monitor-user-guide.rst").read_text(encoding="utf-8")
    text = text[text.index("The JSON output format"):text.index("Companion scripts")]
    named = {k for k in re.findall(r'"(\w+)"\s*:', text) if not k.isdigit()} - {"metric_group", "sg_00", "subgraph_name",
                                                                                     "neurondevice_index"}
    assert named - GUIDE_FIELDS == set()


# --- determinism --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_same_seed_same_bytes_other_seed_other_bytes(instance: str) -> None:
    a = generate(instance, 11, 25)
    assert a == generate(instance, 11, 25)
    assert generate(instance, 11, 10) == a[:10]
    b = generate(instance, 12, 25)
    assert all(x != y for x, y in zip(a, b, strict=True))


def test_determinism_does_not_depend_on_the_process_hash_seed() -> None:
    code = ("import hashlib; from neuron_top.sources.demo import generate; "
            "print(hashlib.sha256(b''.join(generate('inf2.48xlarge', 5, 8))).hexdigest())")
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                             cwd=Path(__file__).resolve().parents[2])
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_demo_source_yields_status_then_the_generated_reports() -> None:
    now = [1000.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    src = DemoSource("trn2.48xlarge", 7, clock=lambda: now[0], sleep=sleep, start_ts=5000.0, count=4)
    items = list(src.items(threading.Event()))
    assert items[0] == Status(State.DEMO, "simulated, seed 7")  # "demo trn2.48xlarge" names the instance
    reports = [it for it in items if isinstance(it, RawReport)]
    assert [r.data for r in reports] == generate("trn2.48xlarge", 7, 4)
    assert [r.ts for r in reports] == [5000.0, 5001.0, 5002.0, 5003.0]
    assert [r.index for r in reports] == [None] * 4  # live reports, not a recording's: --record keeps them
    assert slept == [1.0, 1.0, 1.0, 1.0]
    assert items[-1].state is State.ENDED
    assert src.name == "demo trn2.48xlarge"


def test_the_demo_simulates_reports_in_batches_and_hands_each_out_at_its_tick() -> None:
    """The first report alone (it shows at once), then BATCH at a time: the simulator's code is cold once a
    second, and a batch costs less per report. What comes out is the same as simulating one at a time."""
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    src = DemoSource("trn2.48xlarge", 7, clock=lambda: now[0], sleep=sleep, start_ts=0.0)
    simulated_at_yield = []
    reports = []
    for item in src.items(threading.Event()):
        if isinstance(item, RawReport):
            reports.append(item)
            simulated_at_yield.append(src._world.index)
            if len(reports) == 2 * BATCH + 1:
                break
    assert [r.data for r in reports] == generate("trn2.48xlarge", 7, 2 * BATCH + 1)
    assert [r.ts for r in reports] == [float(i) for i in range(2 * BATCH + 1)]
    assert simulated_at_yield == [0] + [BATCH] * BATCH + [2 * BATCH] * BATCH


def test_demo_source_stops_on_the_event_and_on_close() -> None:
    stop = threading.Event()
    src = DemoSource("inf1.xlarge", 1, clock=lambda: 0.0, sleep=lambda s: None)
    it = src.items(stop)
    assert isinstance(next(it), Status)
    assert isinstance(next(it), RawReport)
    stop.set()
    assert list(it) == []
    src2 = DemoSource("inf1.xlarge", 1, clock=lambda: 0.0, sleep=lambda s: None)
    it2 = src2.items(threading.Event())
    next(it2)
    next(it2)
    src2.close()
    src2.close()
    assert list(it2) == []


@pytest.mark.parametrize("how", ["close", "stop"])
def test_close_or_stop_from_another_thread_ends_a_waiting_source(how: str) -> None:
    src = DemoSource("inf1.xlarge", 0, period=60.0)  # real clock and waiting: would sleep a minute
    stop = threading.Event()
    got: list[object] = []
    first = threading.Event()

    def run() -> None:
        for item in src.items(stop):
            got.append(item)
            if isinstance(item, RawReport):
                first.set()  # now it waits for the next tick

    worker = threading.Thread(target=run)
    worker.start()
    assert first.wait(10)
    if how == "close":
        src.close()
    else:
        stop.set()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert isinstance(got[0], Status)


class _CountingEvent(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        return super().wait(timeout)


def test_the_wait_between_reports_is_one_blocking_wait() -> None:
    """No polling: the thread wakes once per report, not every 0.1 s (it runs in a 1%-of-a-core budget)."""
    stop = _CountingEvent()
    items = list(DemoSource("inf1.xlarge", 0, period=0.25, count=3).items(stop))
    assert sum(isinstance(it, RawReport) for it in items) == 3
    assert stop.waits == 3


def test_unknown_instance_and_bad_tag_filter_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown demo instance"):
        generate("p5.48xlarge", 0, 1)
    with pytest.raises(ValueError, match="invalid tag filter"):
        generate("inf1.xlarge", 0, 1, tag_filter="(")
    with pytest.raises(ValueError, match="unknown demo instance"):
        iter_reports("trn3.48xlarge")  # at the call, not at the first next()
    with pytest.raises(ValueError, match="unknown demo instance"):
        DemoSource("trn3.48xlarge")


# --- motion -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_latency_percentiles_are_ordered_and_device_within_total(instance: str) -> None:
    checked = 0
    for _, rt in _runtimes(_reports(instance, 9, 120)):
        lat = rt["report"]["execution_stats"]["latency_stats"]
        if lat["total_latency"] is None:
            assert lat["device_latency"] is None
            continue
        total = [lat["total_latency"][p] for p in PERCENTILES]
        dev = [lat["device_latency"][p] for p in PERCENTILES]
        assert total == sorted(total) and dev == sorted(dev)
        assert all(0 < d <= t for d, t in zip(dev, total, strict=True))
        checked += 1
    assert checked > 50


def test_latency_is_null_when_an_app_is_idle_and_rises_with_load() -> None:
    idle = 0
    by_load: list[tuple[float, float]] = []
    for _, rt in _runtimes(_long()):
        ex = rt["report"]["execution_stats"]
        if ex["execution_summary"]["completed"] == 0:
            assert ex["latency_stats"]["total_latency"] is None
            idle += 1
        if rt["neuron_runtime_tag"] == "llama-70b-serve" and ex["latency_stats"]["total_latency"]:
            cores = rt["report"]["neuroncore_counters"]["neuroncores_in_use"].values()
            util = sum(c["neuroncore_utilization"] for c in cores) / len(cores)
            by_load.append((util, ex["latency_stats"]["total_latency"]["p99"]))
    assert idle > 0
    by_load.sort()
    low = [p99 for _, p99 in by_load[: len(by_load) // 4]]
    high = [p99 for _, p99 in by_load[-len(by_load) // 4:]]
    assert sum(high) / len(high) > 1.3 * sum(low) / len(low)


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_utilization_stays_within_0_and_100(instance: str) -> None:
    values = []
    for _, rt in _runtimes(_reports(instance, 9, 120)):
        for core in rt["report"]["neuroncore_counters"]["neuroncores_in_use"].values():
            values.append(core["neuroncore_utilization"])
            values.extend(p["neuroncore_utilization"] for p in core.get("v3d", {}).values())
            assert core.get("flops", 0) >= 0 and core.get("effective_flops", 0) <= core.get("flops", 1e30)
    assert all(0 <= v <= 100 for v in values)
    assert max(values) > 50


def test_training_utilization_oscillates_and_flops_track_it() -> None:
    series = []
    for _, rt in _runtimes(_long()):
        if rt["neuron_runtime_tag"] == "llama3-70b-pretrain":
            core = rt["report"]["neuroncore_counters"]["neuroncores_in_use"]["0"]
            series.append((core["neuroncore_utilization"], core["flops"]))
    utils = [u for u, _ in series]
    assert max(utils) > 80 and min(utils) < 50
    dips = sum(1 for a, b in pairwise(utils) if a > 70 and b < 50)
    assert dips >= 5  # one all-reduce dip per training step
    ordered = sorted(series)
    assert ordered[0][1] < ordered[-1][1]


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_an_app_starts_and_one_stops_and_its_cores_are_freed(instance: str) -> None:
    reports = _reports(instance, 9, 120)
    pids = [{rt["pid"] for rt in r["neuron_runtime_data"]} for r in reports]
    started = set().union(*pids[1:]) - pids[0]
    stopped = set().union(*pids[:-1]) - pids[-1]
    assert started and stopped
    # The report after an app's last one no longer lists its cores with memory.
    for i in range(1, len(reports)):
        for pid in pids[i - 1] - pids[i]:
            gone = next(rt for rt in reports[i - 1]["neuron_runtime_data"] if rt["pid"] == pid)
            assert gone["report"]["neuron_runtime_vcpu_usage"]["error"].startswith("open /proc/")
            mem = gone["report"]["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]
            owned = {c for c, m in mem["neuroncore_memory_usage"].items() if sum(m.values())}
            for rt in reports[i]["neuron_runtime_data"]:
                now = rt["report"]["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]
                assert not owned & {c for c, m in now["neuroncore_memory_usage"].items() if sum(m.values())}


def test_memory_grows_while_loading_and_then_stays() -> None:
    series: dict[int, list[int]] = {}
    for _, rt in _runtimes(_long()):
        series.setdefault(rt["pid"], []).append(rt["report"]["memory_used"]["neuron_runtime_used_bytes"]["neuron_device"])
    loaded_here = [s for s in series.values() if s[0] < s[-1]]
    assert loaded_here
    for s in series.values():
        assert s == sorted(s)  # device memory never shrinks while an app lives
    for s in loaded_here:
        assert s[-1] == s[-2]  # and is steady once loaded


def test_ecc_events_happen_corrected_often_uncorrected_rarely() -> None:
    only_ecc = {g: 0 for g in GROUPS if g != "neuron_hw_counters"}
    reports = [msgspec.json.decode(b) for b in generate("trn2.48xlarge", 0, 240, periods=only_ecc)]
    totals: dict[str, int] = {}
    first_corrected = None
    for i, r in enumerate(reports):
        for dev in r["system_data"]["neuron_hw_counters"]["neuron_devices"]:
            for k, v in dev.items():
                if k != "neuron_device_index":
                    totals[k] = totals.get(k, 0) + v
        if first_corrected is None and totals.get("mem_ecc_corrected"):
            first_corrected = i
    assert first_corrected is not None and first_corrected <= 30
    assert totals["mem_ecc_uncorrected"] >= 1
    assert totals["mem_ecc_corrected"] + totals["sram_ecc_corrected"] > totals["mem_ecc_uncorrected"]


@pytest.mark.parametrize("instance", INSTANCE_TYPES)
def test_uncorrected_ecc_within_a_few_minutes_for_any_seed(instance: str) -> None:
    only_ecc = {g: 0 for g in GROUPS if g != "neuron_hw_counters"}  # the ECC story does not depend on them
    for seed in (0, 1):
        raw = generate(instance, seed, 200, periods=only_ecc)
        hits = sum(d["mem_ecc_uncorrected"] for b in raw
                   for d in msgspec.json.decode(b)["system_data"]["neuron_hw_counters"]["neuron_devices"])
        assert hits >= 1


def test_execution_errors_occur_now_and_then() -> None:
    errors: dict[str, int] = {}
    completed = 0
    for _, rt in _runtimes(_long()):
        ex = rt["report"]["execution_stats"]
        completed += ex["execution_summary"]["completed"]
        for k, v in [*ex["error_summary"].items(), *ex["execution_summary"].items()]:
            if k != "completed":
                errors[k] = errors.get(k, 0) + v
    assert completed > 80_000
    rare = sum(v for k, v in errors.items() if k != "failed_to_queue")
    assert 0 < rare < completed / 1000


def test_a_burst_beyond_capacity_rejects_and_times_out() -> None:
    """Over one and a half simulated days, a request burst meets the daily peak and overflows the queue."""
    only = {g: 0 for g in GROUPS if g != "execution_stats"}
    raw = generate("trn2.48xlarge", 0, 900, periods=only, tag_filter="^llama-70b-serve$")
    rejected = [msgspec.json.decode(b)["neuron_runtime_data"][0]["report"]["execution_stats"]["execution_summary"]
                ["failed_to_queue"] for b in raw]
    assert sum(rejected) > 0
    assert sum(1 for r in rejected if r) < len(rejected) / 4  # bursts, not the normal state


# --- configuration ------------------------------------------------------------------------------------------------


def test_group_periods_are_honoured() -> None:
    raw = generate("inf1.xlarge", 0, 11, periods={"memory_info": 5.0, "neuron_hw_counters": 0})
    reports = [msgspec.json.decode(b) for b in raw]
    assert all("neuron_hw_counters" not in r["system_data"] for r in reports)
    mem = [r["system_data"]["memory_info"] for r in reports]
    assert mem[0] == mem[4] and mem[5] != mem[4] and mem[5] == mem[9]
    assert mem[5]["period"] == pytest.approx(5.0, rel=1e-3)
    assert reports[1]["system_data"]["vcpu_usage"]["period"] == pytest.approx(1.0, rel=1e-3)


def test_a_longer_period_slows_the_ticks_and_counts_per_period() -> None:
    fast = _long()[:20]
    slow = [msgspec.json.decode(b) for b in generate("trn2.48xlarge", 0, 5, period=5.0)]
    assert slow[2]["system_data"]["vcpu_usage"]["period"] == pytest.approx(5.0, rel=1e-3)

    def completed(rs: Any) -> int:
        return sum(rt["report"]["execution_stats"]["execution_summary"]["completed"]
                   for r in rs for rt in r["neuron_runtime_data"] if rt["neuron_runtime_tag"] == "bert-base-inf")

    assert completed(slow[1:4]) == pytest.approx(completed(fast[1:16]), rel=0.3)


def test_tag_filter_keeps_matching_runtimes_only_and_leaves_others_unchanged() -> None:
    raw = generate("trn2.48xlarge", 0, 30, tag_filter="serve$")
    tags = {rt["neuron_runtime_tag"] for b in raw for rt in msgspec.json.decode(b)["neuron_runtime_data"]}
    assert tags == {"llama-70b-serve", "mistral-7b-serve"}
    full = _long()
    filtered = msgspec.json.decode(raw[20])
    assert filtered["neuron_runtime_data"][0]["report"]["neuroncore_counters"]["neuroncores_in_use"] == next(
        rt for rt in full[20]["neuron_runtime_data"] if rt["neuron_runtime_tag"] == "llama-70b-serve"
    )["report"]["neuroncore_counters"]["neuroncores_in_use"]


# --- size and benchmark -------------------------------------------------------------------------------------------


def test_trn2_report_size_is_realistic() -> None:
    sizes = sorted(len(b) for b in generate("trn2.48xlarge", 0, 60))
    assert 100_000 <= sizes[len(sizes) // 2] <= 160_000


def test_trn2_benchmark_report_is_full() -> None:
    data = trn2_benchmark_report(0)
    assert data == trn2_benchmark_report(0)
    assert 100_000 <= len(data) <= 160_000
    r = msgspec.json.decode(data, type=Report)
    assert r.neuron_runtime_data is not None and len(r.neuron_runtime_data) == 8
    cores = {k for rt in r.neuron_runtime_data for k in rt.report.neuroncore_counters.neuroncores_in_use}
    physical = {p for rt in r.neuron_runtime_data for c in rt.report.neuroncore_counters.neuroncores_in_use.values()
                for p in c.v3d}
    assert len(cores) == 64 and len(physical) == 128
    assert all(rt.report.memory_used.loaded_models for rt in r.neuron_runtime_data)
    assert len(r.system_data.vcpu_usage.usage_data) == 192


# --- emit ---------------------------------------------------------------------------------------------------------


def test_emit_writes_one_report_per_line() -> None:
    out = io.BytesIO()
    slept: list[float] = []
    assert emit_main("inf2.48xlarge", 3, out, count=5, sleep=slept.append, clock=lambda: 0.0) == 0
    lines = out.getvalue().splitlines()
    assert lines == generate("inf2.48xlarge", 3, 5)
    assert slept == [1.0, 2.0, 3.0, 4.0]  # absolute deadlines from a clock that did not move


def test_emit_to_a_text_stream_uses_its_buffer() -> None:
    buf = io.BytesIO()
    text = io.TextIOWrapper(buf, encoding="utf-8")
    assert emit_main("inf1.xlarge", 0, text, count=2, sleep=lambda s: None) == 0
    assert len(buf.getvalue().splitlines()) == 2


def test_emit_survives_a_closed_pipe() -> None:
    r, w = os.pipe()
    os.close(r)
    with open(w, "wb") as out:
        assert emit_main("trn1.32xlarge", 0, out, count=3, sleep=lambda s: None) == 0


def test_emit_exits_quietly_when_piped_into_head() -> None:
    code = "import sys; from neuron_top.sources.demo import emit_main; sys.exit(emit_main('inf1.xlarge', 0, period=0.01))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=30)
    assert msgspec.json.decode(first, type=Report).instance_info is not None
    assert proc.returncode == 0
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_emit_reports_bad_arguments_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.BytesIO()
    assert emit_main("p5.48xlarge", 0, out, count=1) == 2
    assert emit_main("inf1.xlarge", 0, out, count=1, tag_filter="[") == 2
    assert emit_main("inf1.xlarge", 0, out, count=1, period=0) == 2
    assert out.getvalue() == b""
    err = capsys.readouterr().err
    assert "unknown demo instance" in err and "invalid tag filter" in err and "between 0.01 s and 600 s" in err


def test_the_demo_never_imports_the_tui() -> None:
    code = ("import sys, neuron_top.sources.demo as d; d.generate('trn2.48xlarge', 0, 2); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"


def test_iter_reports_is_endless_and_lazy() -> None:
    it = iter_reports("inf1.xlarge", 0)
    for _ in range(3):
        assert next(it).startswith(b'{"neuron_runtime_data":')
    assert set(PROFILES) == set(INSTANCE_TYPES)


# --- any period from 0.01 s to 10 min -------------------------------------------------------------------------------


@pytest.mark.parametrize("instance", sorted(PROFILES))
@pytest.mark.parametrize("period", [0.01, 55.0, 60.0, 600.0])
def test_every_period_from_a_hundredth_of_a_second_to_ten_minutes_runs(instance: str, period: float) -> None:
    """At 55 s and more the load wander's Euler step diverged: OverflowError after about twenty reports."""
    reports = [msgspec.json.decode(b, type=Report) for b in generate(instance, 1, 60, period=period)]
    utils = [c.neuroncore_utilization for r in reports for rt in r.neuron_runtime_data
             for c in (rt.report.neuroncore_counters.neuroncores_in_use or {}).values()
             if rt.report.neuroncore_counters is not None]
    assert utils and all(0.0 <= u <= 100.0 for u in utils)


def test_a_ten_minute_period_counts_events_not_one_of_each_every_report() -> None:
    """At 10 minutes the chance of an error in a report passes 1: a count is drawn, so reports differ."""
    reports = [msgspec.json.decode(b) for b in generate("inf2.48xlarge", 2, 40, period=600.0)]
    generic = [rt["report"]["execution_stats"]["error_summary"]["generic"]
               for r in reports for rt in r["neuron_runtime_data"] if rt["report"].get("execution_stats")]
    assert len(set(generic)) > 1  # not every report with exactly one


def test_the_usual_periods_keep_their_reports() -> None:
    """Snapshots and recordings rely on these bytes: the long-period fix must not change them."""
    import hashlib

    digest = hashlib.sha1(b"".join(generate("trn2.48xlarge", 3, 300, period=1.0)
                                   + generate("inf1.xlarge", 3, 300, period=5.0))).hexdigest()
    assert digest == "53a0edcc049aae5962ae8e411d6cc009fcb0c01a"


@pytest.mark.parametrize("period", ["0.001", "700", "0", "nan"])
def test_demo_period_out_of_range_is_a_usage_error(period: str, capsys: pytest.CaptureFixture[str]) -> None:
    from neuron_top.cli.main import main

    assert main(["demo", "--emit", "--count", "1", "--period", period]) == 2
    assert "between 0.01 s and 600 s" in capsys.readouterr().err


def test_demo_record_records(tmp_path: Path) -> None:
    """``demo --record FILE`` wrote nothing: the demo marked its reports as a recording's (``index``), which the
    feed does not record again."""
    from neuron_top.feed import Feed
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.writer import RecordingWriter

    path = tmp_path / "demo.jsonl.zst"
    with RecordingWriter(path) as w:
        feed = Feed(DemoSource("inf1.xlarge", 3, count=5, sleep=lambda s: None), w)
        assert sum(1 for e in feed.events() if type(e).__name__ == "Report") == 5
    with RecordingIndex(path) as ix:
        ix.wait()
        assert len(ix) == 5 and ix.wallclock

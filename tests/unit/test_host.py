"""The built-in collector: neuron-monitor-format reports from psutil and a fake Neuron sysfs tree."""

from __future__ import annotations

import json
import threading
from collections import namedtuple
from pathlib import Path
from typing import Any

import msgspec
import pytest

from neuron_top.config import parse_config
from neuron_top.schema import Report
from neuron_top.sources.base import RawReport, State, Status
from neuron_top.sources.host import SYSFS_TAG, HostCollector, HostProbes
from neuron_top.sources.sysfs import NeuronSysfs, parse_neuron_ls, read_int
from tests.unit.source_threads import Running

CpuTimes = namedtuple("CpuTimes", "user nice system idle iowait irq softirq steal")
Mem = namedtuple("Mem", "total used")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class FakeCpu:
    """Each call advances every CPU by 1 s: 30% user, 10% system, 60% idle."""

    def __init__(self, cpus: int = 2) -> None:
        self.t = 0
        self.cpus = cpus

    def __call__(self) -> list[CpuTimes]:
        self.t += 1
        return [CpuTimes(0.3 * self.t, 0, 0.1 * self.t, 0.6 * self.t, 0, 0, 0, 0) for _ in range(self.cpus)]


def probes() -> HostProbes:
    switches = iter(range(0, 10**9, 500))
    return HostProbes(
        cpu_times=FakeCpu(),
        ctx_switches=lambda: next(switches),
        virtual_memory=lambda: Mem(16 << 30, 4 << 30),
        swap_memory=lambda: Mem(2 << 30, 1 << 20),
        hostname=lambda: "trn-dev-\x1b[31m",
    )


def run(collector: HostCollector, reports: int) -> tuple[list[Status], list[dict[str, Any]]]:
    stop = threading.Event()
    statuses: list[Status] = []
    out: list[dict[str, Any]] = []
    for item in collector.items(stop):
        if isinstance(item, Status):
            statuses.append(item)
        elif isinstance(item, RawReport):
            msgspec.json.decode(item.data, type=Report)  # the schema accepts it
            out.append(json.loads(item.data))
            if len(out) == reports:
                stop.set()
    collector.close()
    return statuses, out


def collector(tmp_path: Path, clock: FakeClock, **kwargs: Any) -> HostCollector:
    kwargs.setdefault("sysfs_root", tmp_path / "sys" / "devices" / "virtual" / "neuron_device")
    kwargs.setdefault("dmi_root", tmp_path / "dmi")
    kwargs.setdefault("neuron_ls", lambda: None)
    kwargs.setdefault("first_interval", 0.0)
    kwargs.setdefault("probes", probes())
    return HostCollector(clock=clock, sleep=clock.sleep, **kwargs)


def test_without_driver_reports_host_metrics_and_says_the_driver_is_missing(tmp_path: Path) -> None:
    clock = FakeClock()
    statuses, reports = run(collector(tmp_path, clock), 2)
    assert statuses[0].state is State.LIVE
    assert (
        "neuron driver not found" in statuses[0].message and "host CPU and memory only" in statuses[0].message
    )
    first, second = reports
    assert first["neuron_runtime_data"] == []
    assert "neuron driver not found" in first["neuron_hardware_info"]["error"]
    assert "neuron driver not found" in first["system_data"]["neuron_hw_counters"]["error"]
    assert (
        first["instance_info"]["instance_name"] == "trn-dev-\x1b[31m"
    )  # raw, like neuron-monitor; the UI cleans
    vcpu = second["system_data"]["vcpu_usage"]
    assert vcpu["usage_data"]["0"] == {
        "user": 30.0,
        "nice": 0.0,
        "system": 10.0,
        "idle": 60.0,
        "io_wait": 0.0,
        "irq": 0.0,
        "soft_irq": 0.0,
    }
    assert vcpu["average_usage"]["user"] == 30.0
    assert vcpu["context_switch_count"] == 500
    assert vcpu["period"] == 5.0
    assert second["system_data"]["memory_info"] == {
        "period": 5.0,
        "memory_total_bytes": 16 << 30,
        "memory_used_bytes": 4 << 30,
        "swap_total_bytes": 2 << 30,
        "swap_used_bytes": 1 << 20,
        "error": "",
    }
    assert clock.sleeps == [5.0]


def test_the_first_report_covers_a_short_interval_not_the_time_since_boot(tmp_path: Path) -> None:
    """``--once`` with the built-in collector: CPU shares and context switches over ``FIRST_INTERVAL``, as the
    live view's later reports are (since boot, it printed 40.4% for a machine at 100%, and ctxsw 0.0/s)."""
    from neuron_top.sources.host import FIRST_INTERVAL

    samples = iter([[CpuTimes(10.0, 0, 0, 990.0, 0, 0, 0, 0)],  # since boot: 1% busy
                    [CpuTimes(10.0 + FIRST_INTERVAL, 0, 0, 990.0, 0, 0, 0, 0)]])  # since: 100% user
    switches = iter([1000, 1500])
    busy = HostProbes(cpu_times=lambda: next(samples), ctx_switches=lambda: next(switches),
                      virtual_memory=lambda: Mem(16 << 30, 4 << 30), swap_memory=lambda: Mem(2 << 30, 1 << 20),
                      hostname=lambda: "h")
    clock = FakeClock()
    _, (first,) = run(collector(tmp_path, clock, probes=busy, first_interval=FIRST_INTERVAL), 1)
    vcpu = first["system_data"]["vcpu_usage"]
    assert clock.sleeps == [FIRST_INTERVAL]
    assert vcpu["period"] == FIRST_INTERVAL and vcpu["average_usage"]["user"] == 100.0
    assert vcpu["context_switch_count"] == 500  # 2000/s over the interval


def test_each_group_keeps_its_own_period(tmp_path: Path) -> None:
    config = parse_config(
        {
            "period": "1s",
            "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info", "period": "2s"}],
        }
    )
    clock = FakeClock()
    _, reports = run(collector(tmp_path, clock, config=config), 5)
    groups = [sorted(r["system_data"]) for r in reports]
    assert groups == [
        ["memory_info", "vcpu_usage"],
        ["vcpu_usage"],
        ["memory_info", "vcpu_usage"],
        ["vcpu_usage"],
        ["memory_info", "vcpu_usage"],
    ]
    assert reports[2]["system_data"]["memory_info"]["period"] == 2.0
    assert set(clock.sleeps) == {1.0}


def test_real_psutil_report_decodes() -> None:
    clock = FakeClock()
    source = HostCollector(
        sysfs_root=Path("/nonexistent"), neuron_ls=lambda: None, clock=clock, sleep=clock.sleep
    )
    _, reports = run(source, 2)
    usage = reports[1]["system_data"]["vcpu_usage"]
    assert len(usage["usage_data"]) >= 1
    assert sum(usage["average_usage"].values()) == pytest.approx(100, abs=1)


# -- sysfs ------------------------------------------------------------------------------------------------


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{value}\n")


def make_tree(root: Path, *, layout: str, devices: int = 2, cores: int = 2) -> dict[str, Path]:
    """A Neuron sysfs tree. "old": counters as {total,present} dirs, cores directly under the device.
    "new": cores one level deeper, counters as plain files, cached ECC copies under health_status."""
    busy: dict[str, Path] = {}
    for d in range(devices):
        dev = root / f"neuron{d}"
        write(dev / "core_count", cores)
        write(dev / "info" / "architecture" / "device_name", "Trainium")
        write(dev / "info" / "architecture" / "instance_type", "trn1.32xlarge")
        hw = dev / "stats" / "hardware"
        write(hw / "mem_ecc_uncorrected", d)
        write(hw / "sram_ecc_uncorrected", 0)
        write(hw / "mem_ecc_corrected", 10 + d)
        if layout == "new":
            write(hw / "health_status" / "mem_ecc_uncorrected", 999)
        for c in ("application_memory", "dma_buffers", "tensors", "constants"):
            write(dev / "stats" / "memory_usage" / "host_mem" / c / "total", 1000)
        for c in range(cores):
            core = dev / (f"neuron_core{c}" if layout == "old" else f"cores/neuron_core{c}")
            write(core / "info" / "architecture" / "arch_type", "NCv2")
            other = core / "stats" / "other_info"
            if layout == "old":
                write(other / "nc_time_in_use" / "total", 0)
                write(other / "nc_time_in_use" / "present", 0)
                write(other / "flop_count" / "total", 0)
                busy[f"{d}.{c}"] = other / "nc_time_in_use" / "total"
            else:
                write(other / "nc_time_in_use", 0)
                write(other / "flop_count", 0)
                busy[f"{d}.{c}"] = other / "nc_time_in_use"
            mem = core / "stats" / "memory_usage" / "device_mem"
            write(mem / "total", 3 << 20)
            write(mem / "tensors" / "total", 1 << 20)
            write(mem / "constants" / "total", 2 << 20)
            write(core / "stats" / "status" / "success" / "total", 100)
            write(core / "stats" / "status" / "hw_error" / "total", 0)
    return busy


@pytest.mark.parametrize("layout", ["old", "new"])
def test_sysfs_tree_fills_hardware_ecc_utilisation_and_memory(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "sys" / "devices" / "virtual" / "neuron_device"
    busy = make_tree(root, layout=layout)
    config = parse_config(
        {
            "period": "1s",
            "neuron_runtimes": [
                {
                    "metrics": [
                        {"type": "neuroncore_counters"},
                        {"type": "memory_used"},
                        {"type": "execution_stats"},
                    ]
                }
            ],
            "system_metrics": [{"type": "neuron_hw_counters"}],
        }
    )
    clock = FakeClock()
    source = collector(tmp_path, clock, config=config, sysfs_root=root)

    def advance(seconds: float) -> None:
        clock.sleeps.append(seconds)
        clock.now += seconds
        for key, path in busy.items():  # core d.c was busy (d*2+c)*10 % of the second
            d, c = map(int, key.split("."))
            write(path, read_int(path) + int(seconds * 1e6 * (d * 2 + c) * 0.1))
        flop = path.parent.parent / "flop_count/total" if layout == "old" else path.parent / "flop_count"
        write(flop, 4_000_000)
        success = (
            root
            / "neuron0"
            / ("neuron_core0" if layout == "old" else "cores/neuron_core0")
            / "stats/status/success/total"
        )
        write(success, read_int(success) + 7)

    source._sleep = advance
    statuses, reports = run(source, 2)
    assert "2 devices" in statuses[0].message
    first, second = reports
    hw = first["neuron_hardware_info"]
    assert hw == {
        "neuron_device_count": 2,
        "neuroncore_per_device_count": 2,
        "neuron_device_type": "trainium",
        "neuroncore_version": "v2",
        "error": "",
    }
    assert first["instance_info"]["instance_type"] == "trn1.32xlarge"
    ecc = first["system_data"]["neuron_hw_counters"]["neuron_devices"]
    assert ecc[1] == {
        "neuron_device_index": 1,
        "mem_ecc_uncorrected": 1,
        "sram_ecc_uncorrected": 0,
        "mem_ecc_corrected": 11,
    }
    (runtime,) = second["neuron_runtime_data"]
    assert runtime["pid"] == 0 and runtime["neuron_runtime_tag"] == SYSFS_TAG
    cores = runtime["report"]["neuroncore_counters"]["neuroncores_in_use"]
    assert {k: v["neuroncore_utilization"] for k, v in cores.items()} == {
        "0": 0.0,
        "1": 10.0,
        "2": 20.0,
        "3": 30.0,
    }
    assert cores["3"]["flops"] == 4_000_000
    assert first["neuron_runtime_data"][0]["report"]["neuroncore_counters"]["neuroncores_in_use"] == {}
    memory = runtime["report"]["memory_used"]["neuron_runtime_used_bytes"]
    assert memory["neuron_device"] == 4 * (3 << 20)
    assert memory["usage_breakdown"]["neuroncore_memory_usage"]["2"] == {
        "constants": 2 << 20,
        "tensors": 1 << 20,
    }
    assert memory["usage_breakdown"]["host"]["dma_buffers"] == 2000
    stats = runtime["report"]["execution_stats"]
    assert stats["execution_summary"] == {"completed": 7}
    assert stats["error_summary"] == {"hardware": 0}


def test_neuron_ls_adds_memory_size_and_lnc(tmp_path: Path) -> None:
    root = tmp_path / "sys" / "devices" / "virtual" / "neuron_device"
    make_tree(root, layout="old", devices=1)
    ls = json.dumps(
        [
            {
                "neuron_device": 0,
                "nc_count": 2,
                "memory_size": 34359738368,
                "logical_neuroncore_config": 1,
                "neuron_processes": [],
            }
        ]
    ).encode()
    calls: list[int] = []

    def neuron_ls() -> bytes:
        calls.append(1)
        return ls

    clock = FakeClock()
    _, reports = run(collector(tmp_path, clock, sysfs_root=root, neuron_ls=neuron_ls), 3)
    hw = reports[0]["neuron_hardware_info"]
    assert hw["neuron_device_memory_size"] == 34359738368
    assert hw["logical_neuroncore_config"] == 1
    assert hw["neuron_device_count"] == 1
    assert calls == [1]  # run once, not every report


def test_neuron_ls_without_sysfs_still_counts_devices(tmp_path: Path) -> None:
    ls = json.dumps([{"nc_count": 4, "memory_size": 1}, {"nc_count": 4, "memory_size": 1}]).encode()
    clock = FakeClock()
    _, reports = run(collector(tmp_path, clock, neuron_ls=lambda: ls), 1)
    assert reports[0]["neuron_hardware_info"]["neuron_device_count"] == 2
    assert reports[0]["neuron_hardware_info"]["error"] == ""


@pytest.mark.parametrize("data", [b"", b"garbage", b"{}", b"[1, 2]", b'{"x": 1}', b"[]", None])
def test_unusable_neuron_ls_output_is_ignored(data: bytes | None) -> None:
    assert parse_neuron_ls(data) is None


def test_unreadable_and_odd_sysfs_values_do_not_crash(tmp_path: Path) -> None:
    root = tmp_path / "sys" / "devices" / "virtual" / "neuron_device"
    make_tree(root, layout="old", devices=1)
    write(root / "neuron0" / "core_count", "not a number")
    write(root / "neuron0" / "stats" / "hardware" / "mem_ecc_uncorrected", "")
    (root / "neuron0" / "neuron_core0" / "stats" / "other_info" / "nc_time_in_use" / "total").unlink()
    (root / "neuron7").mkdir()  # an empty device directory
    clock = FakeClock()
    _, reports = run(collector(tmp_path, clock, sysfs_root=root), 2)
    assert reports[1]["neuron_hardware_info"]["neuron_device_count"] == 2
    ecc = reports[1]["system_data"]["neuron_hw_counters"]["neuron_devices"]
    assert "mem_ecc_uncorrected" not in ecc[0]


def test_dmi_gives_instance_type_and_id_on_ec2(tmp_path: Path) -> None:
    write(tmp_path / "dmi" / "sys_vendor", "Amazon EC2")
    write(tmp_path / "dmi" / "product_name", "inf2.xlarge")
    write(tmp_path / "dmi" / "board_asset_tag", "i-0123456789abcdef0")
    clock = FakeClock()
    _, reports = run(collector(tmp_path, clock), 1)
    info = reports[0]["instance_info"]
    assert (info["instance_type"], info["instance_id"]) == ("inf2.xlarge", "i-0123456789abcdef0")


def test_device_list_changes_are_noticed(tmp_path: Path) -> None:
    root = tmp_path / "neuron_device"
    sysfs = NeuronSysfs(root)
    assert sysfs.devices() == []
    make_tree(root, layout="old", devices=1)
    assert [d.index for d in sysfs.devices()] == [0]
    make_tree(root, layout="old", devices=3)
    assert [d.index for d in sysfs.devices()] == [0, 1, 2]
    assert sysfs.cores_per_device() == 2


def test_close_stops_the_collector_loop(tmp_path: Path) -> None:
    running = Running(HostCollector(sysfs_root=tmp_path, neuron_ls=lambda: None, probes=probes()))
    running.wait_for(lambda i: isinstance(i, RawReport))
    assert running.close()  # long before the next 5 s report


def test_empty_driver_directory_says_no_devices(tmp_path: Path) -> None:
    root = tmp_path / "neuron_device"
    root.mkdir()
    clock = FakeClock()
    statuses, reports = run(collector(tmp_path, clock, sysfs_root=root), 1)
    assert "no Neuron devices" in statuses[0].message
    assert "no Neuron devices" in reports[0]["neuron_hardware_info"]["error"]


def test_a_driver_loaded_while_running_is_announced(tmp_path: Path) -> None:
    root = tmp_path / "sys" / "devices" / "virtual" / "neuron_device"
    clock = FakeClock()
    source = collector(tmp_path, clock, sysfs_root=root)

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        make_tree(root, layout="old", devices=1)

    source._sleep = sleep
    statuses, reports = run(source, 2)
    assert "neuron driver not found" in statuses[0].message
    assert "1 device" in statuses[1].message and "devices" not in statuses[1].message
    assert reports[1]["neuron_hardware_info"]["neuron_device_count"] == 1

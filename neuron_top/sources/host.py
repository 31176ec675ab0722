"""The built-in collector: neuron-monitor-format reports made from psutil and the Neuron driver's sysfs.

Used when neuron-monitor is not installed (a laptop, a CI box, a container without the tools). The reports are
byte-for-byte the neuron-monitor JSON format, so the rest of neuron-top cannot tell the difference, except that
``neuron_hardware_info.error`` says plainly when no Neuron driver was found.

What it fills:

* always: ``system_data.vcpu_usage`` (per CPU and average, from ``/proc/stat`` deltas via psutil),
  ``system_data.memory_info``, ``instance_info`` (hostname; instance type/id from DMI when on EC2; no network),
  ``neuron_hardware_info``.
* with the driver's sysfs tree: hardware facts (device count, cores per device, type, core version), ECC counters
  in ``neuron_hw_counters``, and one pseudo-runtime (pid 0, tag ``SYSFS_TAG``) that carries per-core utilisation
  derived from ``nc_time_in_use`` deltas, flops from ``flop_count`` deltas, per-core device memory, and execution
  counts from the per-core status counters. The driver does not say which process owns a core, so everything is
  attributed to that single pseudo-runtime.
* with ``neuron-ls --json-output``: device memory size and logical NeuronCore config.

Each metric group is emitted at its own configured period; a report is produced every base period (the shortest).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import psutil

from neuron_top.config import RUNTIME_METRICS, SYSTEM_METRICS, MonitorConfig, default_config
from neuron_top.fmt import plural
from neuron_top.sources.base import Item, RawReport, State, Status, pause
from neuron_top.sources.sysfs import (
    SYSFS_ROOT,
    Device,
    LsFacts,
    NeuronSysfs,
    global_core_index,
    lazy_once,
    parse_neuron_ls,
    read_int,
    read_text,
    run_neuron_ls,
    sum_known,
)
from neuron_top.textsafe import clean

__all__ = ["DMI_ROOT", "SYSFS_TAG", "HostCollector", "HostProbes"]

SYSFS_TAG = "all processes (driver sysfs)"
"""Tag of the pseudo-runtime carrying per-core data read from sysfs."""
DMI_ROOT = Path("/sys/devices/virtual/dmi/id")
_CPU_FIELDS = ("user", "nice", "system", "idle", "io_wait", "irq", "soft_irq")
_PSUTIL_FIELDS = {"io_wait": "iowait", "soft_irq": "softirq"}
_DUE_SLACK = 0.05
FIRST_INTERVAL = 0.25
"""Seconds the first report's CPU shares and context switches cover (``HostCollector._prime``)."""
"""A group is due when at least (1 - slack) of its period has passed, so timer jitter does not skip a beat."""

# sysfs core status counter -> neuron-monitor execution_summary key
_EXECUTION = {
    "completed": ("success",),
    "completed_with_err": ("execute_completed_with_error", "infer_completed_with_error"),
    "completed_with_num_err": ("execute_completed_with_num_error", "infer_completed_with_num_error"),
    "timed_out": ("timeout",),
    "incorrect_input": ("exec_bad_input", "infer_bad_input"),
    "failed_to_queue": ("execute_failed_to_queue", "infer_failed_to_queue"),
}
_ERRORS = {
    "generic": ("generic_error",),
    "numerical": ("execute_completed_with_num_error", "infer_completed_with_num_error"),
    "hardware": (
        "hw_error",
        "hw_collectives_error",
        "hw_hbm_ue_error",
        "hw_nc_ue_error",
        "hw_dma_abort_error",
    ),
    "runtime": (
        "resource_error",
        "resource_nc_error",
        "invalid_error",
        "unsupported_neff_version",
        "oob_error",
    ),
}
_CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
_HOST_MEMORY = ("application_memory", "constants", "dma_buffers", "tensors")


@dataclass
class HostProbes:
    """Where host numbers come from; tests replace these with fakes."""

    cpu_times: Callable[[], list[Any]] = lambda: psutil.cpu_times(percpu=True)
    ctx_switches: Callable[[], int] = lambda: psutil.cpu_stats().ctx_switches
    virtual_memory: Callable[[], Any] = psutil.virtual_memory
    swap_memory: Callable[[], Any] = psutil.swap_memory
    hostname: Callable[[], str] = socket.gethostname


_CPU_SOURCES = (*(_PSUTIL_FIELDS.get(f, f) for f in _CPU_FIELDS), "steal")
"""psutil's names for neuron-monitor's seven fields, plus steal (counted in the total, not shown)."""


def _cpu_deltas(prev: Any, cur: Any) -> tuple[float, ...]:
    """Seconds spent in each state since ``prev`` (since boot when ``prev`` is None), in ``_CPU_SOURCES`` order."""

    def value(sample: Any, name: str) -> float:
        return float(getattr(sample, name, 0.0) or 0.0) if sample is not None else 0.0

    return tuple(max(0.0, value(cur, n) - value(prev, n)) for n in _CPU_SOURCES)


def _percent(deltas: Sequence[float]) -> dict[str, float]:
    """neuron-monitor's seven percentages from ``_cpu_deltas`` (an idle-looking 100 when no time passed)."""
    total = sum(deltas)
    if total <= 0:
        return {f: (100.0 if f == "idle" else 0.0) for f in _CPU_FIELDS}
    return {
        f: round(100.0 * d / total, 2) for f, d in zip(_CPU_FIELDS, deltas[: len(_CPU_FIELDS)], strict=True)
    }


class HostCollector:
    """A ``Source`` producing neuron-monitor reports itself (see the module docstring).

    Args:
        config: the neuron-monitor config whose groups and periods to follow (default: every group every 5 s).
        reason: why the built-in collector is used, shown in the status line.
        sysfs_root, dmi_root, neuron_ls, probes: where devices, the instance type and host figures come from
            (injected by tests).
        clock, sleep: pacing.
    """

    name = "built-in collector"

    def __init__(
        self,
        config: MonitorConfig | None = None,
        *,
        reason: str = "neuron-monitor not found",
        sysfs_root: Path = SYSFS_ROOT,
        dmi_root: Path = DMI_ROOT,
        neuron_ls: Callable[[], bytes | None] | None = None,
        probes: HostProbes | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], object] | None = None,
        first_interval: float = FIRST_INTERVAL,
    ) -> None:
        self.config = config or default_config()
        self.first_interval = first_interval
        """Seconds between the baselines and the first report (``_prime``); 0: at once (tests)."""
        self.reason = reason
        self.sysfs = NeuronSysfs(sysfs_root)
        self.dmi_root = Path(dmi_root)
        self._neuron_ls = lazy_once(neuron_ls if neuron_ls is not None else run_neuron_ls)
        self.probes = probes or HostProbes()
        self._clock = clock
        self._sleep = sleep
        self._closed = threading.Event()
        self._last_emit: dict[str, float] = {}
        self._cpu_prev: list[Any] | None = None
        self._ctx_prev: int | None = None
        self._core_prev: dict[int, tuple[float, int | None, int | None]] = {}  # key -> (ts, time_us, flops)
        self._status_prev: dict[tuple[int, int, str], int] = {}
        self._instance: dict[str, str] | None = None
        self._primed_at: float | None = None

    # -- Source --------------------------------------------------------------------------------------------

    def items(self, stop: threading.Event) -> Iterator[Item]:
        periods = {
            g: p for g, p in self.config.group_periods().items() if g in (*RUNTIME_METRICS, *SYSTEM_METRICS)
        }
        base = min(periods.values(), default=self.config.period)
        self._prime()
        yield Status(State.LIVE, self.describe())
        if self.first_interval > 0:  # the first report's interval (``_prime``)
            pause(self.first_interval, self._sleep, stop, self._closed)
        devices = len(self.sysfs.devices())
        while not (stop.is_set() or self._closed.is_set()):
            now = self._clock()
            if len(self.sysfs.devices()) != devices:  # the driver was loaded or unloaded while we run
                devices = len(self.sysfs.devices())
                yield Status(State.LIVE, self.describe())
            due = {
                g
                for g, p in periods.items()
                if g not in self._last_emit or now - self._last_emit[g] >= p * (1 - _DUE_SLACK)
            }
            # an early wake-up has nothing due: no report
            report = self._safe_collect(now, due) if due or not periods else None
            if isinstance(report, Status):
                yield report
            elif report is not None:
                yield RawReport(msgspec.json.encode(report), ts=now)
            # like neuron-monitor: sleep until the next group is due (each group keeps its own period)
            next_due = min((self._last_emit.get(g, now) + p for g, p in periods.items()), default=now + base)
            delay = max(0.0, next_due - self._clock())
            pause(delay, self._sleep, stop, self._closed)

    def close(self) -> None:
        self._closed.set()

    def _safe_collect(self, now: float, due: set[str]) -> dict[str, Any] | Status:
        try:
            return self.collect(now, due)
        except Exception as exc:  # a collector bug must not end the dashboard: say so and carry on
            return Status(State.LIVE, f"built-in collector error: {clean(exc)}")

    # -- the report ----------------------------------------------------------------------------------------

    def describe(self) -> str:
        devices = self.sysfs.devices()
        if devices:
            return f"built-in collector ({self.reason}): reading the Neuron driver's sysfs, {plural(len(devices), 'device')}"
        return f"built-in collector ({self.reason}); {self._no_driver()}: showing host CPU and memory only"

    def _prime(self) -> None:
        """Baselines, so the first report's CPU shares and context switches cover a real, short interval
        (``FIRST_INTERVAL``) instead of the time since boot: ``--once`` printed 40.4% while the machine was at
        100%, and ``ctxsw 0.0/s``."""
        try:
            self._ctx_prev = int(self.probes.ctx_switches())
        except Exception:
            self._ctx_prev = None
        try:
            self._cpu_prev = list(self.probes.cpu_times())
        except Exception:
            self._cpu_prev = None
        self._primed_at = self._clock()

    def collect(self, now: float, due: set[str]) -> dict[str, Any]:
        """One report with the groups in ``due``; ``instance_info`` and ``neuron_hardware_info`` always."""
        devices = self.sysfs.devices()
        ls = parse_neuron_ls(self._neuron_ls())
        system: dict[str, Any] = {}
        if "vcpu_usage" in due:
            system["vcpu_usage"] = self._vcpu_usage(self._period("vcpu_usage", now))
        if "memory_info" in due:
            system["memory_info"] = self._memory_info(self._period("memory_info", now))
        if "neuron_hw_counters" in due:
            system["neuron_hw_counters"] = self._hw_counters(devices, self._period("neuron_hw_counters", now))
        runtime_due = due & set(RUNTIME_METRICS)
        runtimes: list[dict[str, Any]] = []
        if devices and runtime_due:
            runtimes.append(self._sysfs_runtime(devices, runtime_due, now))
        for group in due:
            self._last_emit[group] = now
        return {
            "neuron_runtime_data": runtimes,
            "system_data": system,
            "instance_info": self._instance_info(devices),
            "neuron_hardware_info": self._hardware_info(devices, ls),
        }

    def _period(self, group: str, now: float) -> float:
        last = self._last_emit.get(group, self._primed_at)
        configured = self.config.group_periods().get(group, self.config.period)
        return round(now - last, 9) if last is not None and now > last else configured

    # -- system groups -------------------------------------------------------------------------------------

    def _vcpu_usage(self, period: float) -> dict[str, Any]:
        try:
            cur = list(self.probes.cpu_times())
            ctx = int(self.probes.ctx_switches())
        except Exception as exc:
            return {"period": period, "error": f"cannot read CPU times: {clean(exc)}"}
        prev = self._cpu_prev if self._cpu_prev is not None and len(self._cpu_prev) == len(cur) else None
        usage: dict[str, dict[str, float]] = {}
        totals = [0.0] * len(_CPU_SOURCES)
        for i, sample in enumerate(cur):
            deltas = _cpu_deltas(prev[i] if prev else None, sample)
            usage[str(i)] = _percent(deltas)
            totals = [a + b for a, b in zip(totals, deltas, strict=True)]
        self._cpu_prev = cur
        switches = max(0, ctx - self._ctx_prev) if self._ctx_prev is not None else 0
        self._ctx_prev = ctx
        return {
            "period": period,
            "average_usage": _percent(totals),
            "usage_data": usage,
            "context_switch_count": switches,
            "error": "",
        }

    def _memory_info(self, period: float) -> dict[str, Any]:
        try:
            vm = self.probes.virtual_memory()
            swap = self.probes.swap_memory()
        except Exception as exc:
            return {"period": period, "error": f"cannot read memory info: {clean(exc)}"}
        return {
            "period": period,
            "memory_total_bytes": int(vm.total),
            "memory_used_bytes": int(vm.used),
            "swap_total_bytes": int(swap.total),
            "swap_used_bytes": int(swap.used),
            "error": "",
        }

    def _no_driver(self) -> str:
        if self.sysfs.root.is_dir():
            return f"no Neuron devices (the driver's {self.sysfs.root} is empty)"
        return f"neuron driver not found (no {self.sysfs.root})"

    def _hw_counters(self, devices: list[Device], period: float) -> dict[str, Any]:
        if not devices:
            return {"period": period, "neuron_devices": [], "error": self._no_driver()}
        rows = []
        for dev in devices:
            row: dict[str, Any] = {"neuron_device_index": dev.index}
            for key in (
                "mem_ecc_corrected",
                "mem_ecc_uncorrected",
                "sram_ecc_corrected",
                "sram_ecc_uncorrected",
                "mem_ecc_repairable_uncorrected",
            ):
                value = read_int(dev.find(f"stats/hardware/{key}", key, avoid="health_status"))
                if value is not None:
                    row[key] = value
            rows.append(row)
        return {"period": period, "neuron_devices": rows, "error": ""}

    # -- the sysfs pseudo-runtime --------------------------------------------------------------------------

    def _sysfs_runtime(self, devices: list[Device], due: set[str], now: float) -> dict[str, Any]:
        per_device = self.sysfs.cores_per_device()
        report: dict[str, Any] = {}
        if "neuroncore_counters" in due:
            report["neuroncore_counters"] = self._core_counters(devices, per_device, now)
        if "memory_used" in due:
            report["memory_used"] = self._memory_used(devices, per_device, self._period("memory_used", now))
        if "execution_stats" in due:
            report["execution_stats"] = self._execution_stats(devices, self._period("execution_stats", now))
        return {"pid": 0, "address": "", "neuron_runtime_tag": SYSFS_TAG, "error": "", "report": report}

    def _core_counters(self, devices: list[Device], per_device: int | None, now: float) -> dict[str, Any]:
        cores: dict[str, dict[str, float]] = {}
        period = self._period("neuroncore_counters", now)
        for dev in devices:
            for core in dev.cores:
                key = global_core_index(dev.index, core.index, per_device)
                busy_us = core.counter("nc_time_in_use")
                flops = core.counter("flop_count")
                prev = self._core_prev.get(key)
                self._core_prev[key] = (now, busy_us, flops)
                if prev is None or now <= prev[0]:
                    continue
                dt = now - prev[0]
                entry: dict[str, float] = {}
                if busy_us is not None and prev[1] is not None and busy_us >= prev[1]:
                    entry["neuroncore_utilization"] = round(
                        min(100.0, 100.0 * (busy_us - prev[1]) / (dt * 1e6)), 2
                    )
                if flops is not None and prev[2] is not None and flops >= prev[2]:
                    entry["flops"] = round((flops - prev[2]) / dt)
                if entry:
                    cores[str(key)] = entry
        return {"period": period, "neuroncores_in_use": cores, "error": ""}

    def _memory_used(self, devices: list[Device], per_device: int | None, period: float) -> dict[str, Any]:
        per_core: dict[str, dict[str, int]] = {}
        device_total: list[int | None] = []
        for dev in devices:
            for core in dev.cores:
                usage = {
                    c: v
                    for c in _CORE_MEMORY
                    if (v := read_int(core.find(f"device_mem/{c}/total"))) is not None
                }
                total = read_int(core.find("device_mem/total"))
                device_total.append(total if total is not None else (sum(usage.values()) if usage else None))
                if usage:
                    per_core[str(global_core_index(dev.index, core.index, per_device))] = usage
        host = {
            c: v
            for c in _HOST_MEMORY
            if (v := sum_known(read_int(d.find(f"host_mem/{c}/total")) for d in devices)) is not None
        }
        used: dict[str, Any] = {
            "host": sum(host.values()),
            "neuron_device": sum_known(device_total) or 0,
            "usage_breakdown": {"host": host, "neuroncore_memory_usage": per_core},
        }
        return {"period": period, "neuron_runtime_used_bytes": used, "loaded_models": [], "error": ""}

    def _execution_stats(self, devices: list[Device], period: float) -> dict[str, Any]:
        names = {n for group in (*_EXECUTION.values(), *_ERRORS.values()) for n in group}
        deltas: dict[str, int] = {}  # counter name -> increase since the last report, summed over cores
        for dev in devices:
            for core in dev.cores:
                for name in names:
                    value = read_int(core.find(f"status/{name}/total", f"status/{name}"))
                    if value is None:
                        continue
                    prev = self._status_prev.get((dev.index, core.index, name))
                    self._status_prev[(dev.index, core.index, name)] = value
                    # the first sample, or a counter reset by a write, counts as zero
                    deltas[name] = deltas.get(name, 0) + (
                        value - prev if prev is not None and value >= prev else 0
                    )

        def pick(mapping: dict[str, tuple[str, ...]]) -> dict[str, int]:
            return {
                key: sum(deltas[n] for n in group if n in deltas)
                for key, group in mapping.items()
                if any(n in deltas for n in group)
            }

        return {
            "period": period,
            "error_summary": pick(_ERRORS),
            "execution_summary": pick(_EXECUTION),
            "latency_stats": {"total_latency": None, "device_latency": None},
            "error": "",
        }

    # -- always-present objects ----------------------------------------------------------------------------

    def _instance_info(self, devices: list[Device]) -> dict[str, str]:
        if self._instance is None:
            info = {"instance_name": "", "instance_id": "", "instance_type": "", "error": ""}
            with contextlib.suppress(Exception):
                info["instance_name"] = self.probes.hostname()
            vendor = read_text(self.dmi_root / "sys_vendor") or ""
            if "amazon" in vendor.lower():
                info["instance_type"] = read_text(self.dmi_root / "product_name") or ""
                tag = read_text(self.dmi_root / "board_asset_tag") or ""
                if tag.startswith("i-"):
                    info["instance_id"] = tag
            if devices and not info["instance_type"]:
                info["instance_type"] = read_text(devices[0].find("architecture/instance_type")) or ""
            self._instance = info
        return self._instance

    def _hardware_info(self, devices: list[Device], ls: LsFacts | None) -> dict[str, Any]:
        if not devices and ls is None:
            return {"neuron_device_count": 0, "error": self._no_driver()}
        info: dict[str, Any] = {}
        if ls is not None:
            info["neuron_device_count"] = ls.device_count
            for key, value in (
                ("neuroncore_per_device_count", ls.cores_per_device),
                ("neuron_device_memory_size", ls.memory_size),
                ("logical_neuroncore_config", ls.logical_neuroncore_config),
            ):
                if value is not None:
                    info[key] = value
        if devices:
            info["neuron_device_count"] = len(devices)
            per_device = self.sysfs.cores_per_device()
            if per_device is not None:
                info["neuroncore_per_device_count"] = per_device
            name = read_text(devices[0].find("architecture/device_name"))
            if name:
                info["neuron_device_type"] = name.lower()
            core = devices[0].cores[0] if devices[0].cores else None
            arch = read_text(core.find("architecture/arch_type")) if core is not None else None
            if arch:
                info["neuroncore_version"] = arch.lower().removeprefix("nc")
        info["error"] = ""
        return info

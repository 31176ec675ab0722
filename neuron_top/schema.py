"""The neuron-monitor report as msgspec Structs.

Every field has a default, every list and object may be ``null``, and unknown fields are ignored, so reports
from older and newer neuron-monitor versions decode (msgspec's schema-evolution rules). Structs are frozen: a
decoded report is handed between threads and never changes.

Source: the neuron-monitor user guide (classic and current), plus fields seen in real output (``effective_flops``,
trn2 ``v3d`` physical cores, ``logical_neuroncore_config``, ``neuron_device_version``, ``neuron_k8s_info``, extra
string keys inside subgraphs).
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "RUNTIME_GROUPS", "SYSTEM_GROUPS", "CoreCounters", "CpuShare", "CpuTimes", "DeviceCounters",
    "ExecutionStats", "Group", "HardwareInfo", "HwCounters", "InstanceInfo", "K8sEntry", "K8sInfo",
    "LatencyStats", "LoadedModel", "MemoryInfo", "MemoryUsed", "NeuronTopMeta", "NeuroncoreCounters",
    "PhysicalCore", "Report", "Runtime", "RuntimeReport", "RuntimeVcpuUsage", "Subgraph", "SystemData",
    "UsageBreakdown", "UsedBytes", "VcpuUsage", "decode_models",
]


class _S(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Base: immutable, keyword-only, defaults omitted when re-encoded.

    ``gc=False``: a decoded report is a tree (no struct can reach itself), so the cycle collector has nothing to
    find in it; untracked structs decode ~6% faster and are not walked by every later collection."""


class Group(_S, frozen=True, kw_only=True):
    """Fields every metric group carries."""

    period: float | None = None
    """The actual captured period, in seconds."""
    error: str | None = None
    """Non-empty when neuron-monitor failed to collect this group."""


# --- application (runtime) level groups ---------------------------------------------------------------------


class PhysicalCore(_S, frozen=True, kw_only=True):
    """One physical core of a logical NeuronCore (``v3d``: its utilization on trn2)."""

    neuroncore_utilization: float | None = None


class CoreCounters(_S, frozen=True, kw_only=True):
    """One NeuronCore in ``neuroncore_counters.neuroncores_in_use``: utilization and FLOPS."""

    neuroncore_utilization: float | None = None
    flops: float | None = None
    effective_flops: float | None = None
    v3d: dict[str, PhysicalCore | None] | None = None
    """trn2 with LNC=2: utilization of each physical core behind this logical core, keyed "nc_v3.N"."""


class NeuroncoreCounters(Group, frozen=True, kw_only=True):
    """The ``neuroncore_counters`` group of a runtime: its cores, by index as a string."""

    neuroncores_in_use: dict[str, CoreCounters | None] | None = None


class LatencyStats(_S, frozen=True, kw_only=True):
    """Execution latency percentiles (seconds) of a runtime: total and on device."""

    total_latency: dict[str, float | None] | None = None
    """Percentiles ("p0", "p1", "p25", "p50", "p75", "p99", "p100") in seconds; null when the app was idle."""
    device_latency: dict[str, float | None] | None = None


class ExecutionStats(Group, frozen=True, kw_only=True):
    """The ``execution_stats`` group: executions by outcome, errors by type, latency."""

    error_summary: dict[str, int | None] | None = None
    """generic, numerical, transient, model, runtime, hardware (and whatever newer versions add)."""
    execution_summary: dict[str, int | None] | None = None
    """completed, completed_with_err, completed_with_num_err, timed_out, incorrect_input, failed_to_queue."""
    latency_stats: LatencyStats | None = None


class UsageBreakdown(_S, frozen=True, kw_only=True):
    """Memory by category, on the host and on the Neuron device."""

    host: dict[str, int | None] | None = None
    """application_memory, constants, dma_buffers, tensors."""
    neuroncore_memory_usage: dict[str, dict[str, int | None] | None] | None = None
    """Per NeuronCore: constants, model_code, model_shared_scratchpad, runtime_memory, tensors."""
    neuron_device: dict[str, int | None] | None = None
    """Inside a subgraph: the device categories of that subgraph."""


class UsedBytes(_S, frozen=True, kw_only=True):
    """Bytes in use on the host and the device, with their breakdown."""

    host: int | None = None
    neuron_device: int | None = None
    usage_breakdown: UsageBreakdown | None = None


class LoadedModel(_S, frozen=True, kw_only=True):
    """One model in ``memory_used.loaded_models``, with its subgraphs."""

    name: str | None = None
    uuid: str | None = None
    model_id: int | None = None
    is_running: bool | None = None
    subgraphs: dict[str, dict[str, Any] | None] | None = None
    """Kept loose: besides memory_used_bytes / neuroncore_index / neuron_device_index, newer runtimes add string
    keys (e.g. ``"v2": "nc_v2.0"``) that we show as they are. See ``Subgraph`` for the typed part."""


class Subgraph(_S, frozen=True, kw_only=True):
    """One subgraph of a loaded model: its memory and the NeuronCore it runs on."""

    memory_used_bytes: UsedBytes | None = None
    neuroncore_index: int | None = None
    neuron_device_index: int | None = None


class MemoryUsed(Group, frozen=True, kw_only=True):
    """The ``memory_used`` group of a runtime (``loaded_models`` kept raw: decoded on first use)."""

    neuron_runtime_used_bytes: UsedBytes | None = None
    loaded_models: msgspec.Raw = msgspec.Raw()
    """``list[LoadedModel | None] | None`` kept as raw JSON and decoded on first use (``decode_models``): models
    and their subgraphs are half of a trn2 report's decode time and most frames never read them."""


_MODELS = msgspec.json.Decoder(list[LoadedModel | None] | None, strict=False)


def decode_models(raw: msgspec.Raw) -> tuple[list[LoadedModel], str | None]:
    """The loaded models of a ``MemoryUsed`` group, and an error message when they do not decode."""
    if not raw:
        return [], None
    try:
        models = _MODELS.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        return [], f"loaded_models: {exc}"
    return [m for m in models or () if m is not None], None


class CpuShare(_S, frozen=True, kw_only=True):
    """A runtime's vCPU use, user and system, in percent."""

    user: float | None = None
    system: float | None = None


class RuntimeVcpuUsage(Group, frozen=True, kw_only=True):
    """The ``neuron_runtime_vcpu_usage`` group."""

    vcpu_usage: CpuShare | None = None


class RuntimeReport(_S, frozen=True, kw_only=True):
    """Every metric group neuron-monitor reports for one runtime."""

    neuroncore_counters: NeuroncoreCounters | None = None
    execution_stats: ExecutionStats | None = None
    memory_used: MemoryUsed | None = None
    neuron_runtime_vcpu_usage: RuntimeVcpuUsage | None = None


class Runtime(_S, frozen=True, kw_only=True):
    """One entry of ``neuron_runtime_data``: a Neuron runtime (an app), its tag and its report."""

    pid: int | None = None
    address: str | None = None
    neuron_runtime_tag: str | None = None
    error: str | None = None
    report: RuntimeReport | None = None


# --- system level groups ------------------------------------------------------------------------------------


class DeviceCounters(_S, frozen=True, kw_only=True):
    """One Neuron device's hardware counters (ECC events, by type)."""

    neuron_device_index: int | None = None
    mem_ecc_corrected: int | None = None
    mem_ecc_uncorrected: int | None = None
    sram_ecc_corrected: int | None = None
    sram_ecc_uncorrected: int | None = None
    mem_ecc_repairable_uncorrected: int | None = None


class HwCounters(Group, frozen=True, kw_only=True):
    """The ``neuron_hw_counters`` system group."""

    neuron_devices: list[DeviceCounters | None] | None = None


class CpuTimes(_S, frozen=True, kw_only=True):
    """vCPU time shares in percent (user, nice, system, idle, io wait, irq, soft irq)."""

    user: float | None = None
    nice: float | None = None
    system: float | None = None
    idle: float | None = None
    io_wait: float | None = None
    irq: float | None = None
    soft_irq: float | None = None


class VcpuUsage(Group, frozen=True, kw_only=True):
    """The ``vcpu_usage`` system group: the average and each vCPU's, and context switches."""

    average_usage: CpuTimes | None = None
    usage_data: dict[str, CpuTimes | None] | None = None
    context_switch_count: int | None = None


class MemoryInfo(Group, frozen=True, kw_only=True):
    """The ``memory_info`` system group: host memory and swap."""

    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    swap_total_bytes: int | None = None
    swap_used_bytes: int | None = None


class SystemData(_S, frozen=True, kw_only=True):
    """The system groups of a report."""

    neuron_hw_counters: HwCounters | None = None
    vcpu_usage: VcpuUsage | None = None
    memory_info: MemoryInfo | None = None


class InstanceInfo(_S, frozen=True, kw_only=True):
    """The ``instance_info`` key: the EC2 instance's name, type, zone and ids."""

    instance_name: str | None = None
    instance_id: str | None = None
    instance_type: str | None = None
    instance_availability_zone: str | None = None
    instance_availability_zone_id: str | None = None
    instance_region: str | None = None
    ami_id: str | None = None
    subnet_id: str | None = None
    ultraserver_id: str | None = None
    """Newer neuron-monitor on Trn2 UltraServers; AWS's exporter adds it to its instance labels when present."""
    error: str | None = None


class HardwareInfo(_S, frozen=True, kw_only=True):
    """The ``neuron_hardware_info`` key: device type, count and cores per device."""

    neuron_device_type: str | None = None
    neuron_device_version: str | None = None
    neuroncore_version: str | None = None
    neuron_device_count: int | None = None
    neuron_device_memory_size: int | None = None
    neuroncore_per_device_count: int | None = None
    logical_neuroncore_config: int | None = None
    error: str | None = None


class K8sEntry(_S, frozen=True, kw_only=True):
    """Kubernetes placement of a core or device: pod, namespace and container."""

    pod_name: str | None = None
    namespace: str | None = None
    container_name: list[str | None] | None = None


class K8sInfo(Group, frozen=True, kw_only=True):
    """The ``neuron_k8s_info`` key: Kubernetes placement by core and by device."""

    neuroncores_k8s_info: dict[str, K8sEntry | None] | None = None
    neurondevices_k8s_info: dict[str, K8sEntry | None] | None = None


class NeuronTopMeta(_S, frozen=True, kw_only=True):
    """The one key neuron-top adds to recorded reports; other readers ignore it."""

    ts: float | None = None


class Report(_S, frozen=True, kw_only=True):
    """One neuron-monitor report: every runtime, the system groups and the instance and hardware keys."""

    neuron_runtime_data: list[Runtime | None] | None = None
    system_data: SystemData | None = None
    instance_info: InstanceInfo | None = None
    neuron_hardware_info: HardwareInfo | None = None
    neuron_k8s_info: K8sInfo | None = None
    neuron_top_pods: msgspec.Raw | None = None
    """Who held each core, as a recording kept it (``k8s.model.attribution_record``)."""
    neuron_top: NeuronTopMeta | None = None


RUNTIME_GROUPS = ("neuroncore_counters", "execution_stats", "memory_used", "neuron_runtime_vcpu_usage")
SYSTEM_GROUPS = ("neuron_hw_counters", "vcpu_usage", "memory_info")

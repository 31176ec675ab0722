"""An immutable, UI-free view of one report.

``Snapshot.build`` does only the cheap, always-needed work eagerly (the app list and the per-core arrays every
frame draws); everything else (models, memory trees, k8s maps) is computed on first use and cached. Nothing here
is mutated after construction: a snapshot is built in the collector thread and read by the UI.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any, Generic, Protocol, TypeVar, overload

import msgspec

from neuron_top import schema
from neuron_top.decode import decode_report
from neuron_top.derived import (
    ERROR_TYPES,
    EXEC_TYPES,
    AppRates,
    CoreStats,
    CpuSummary,
    Latency,
    PhysicalStats,
    app_rates,
    core_stats,
    core_utilization,
    cpu_summary,
    device_utils,
    error_types,
    joined_core_stats,
    latency_state,
    mean_util,
    owned_cores,
    physical_stats,
)
from neuron_top.fmt import plural
from neuron_top.k8s.model import Attribution, PodMap, PodRef, PodUsage, attribution_from_record, resolve
from neuron_top.textsafe import clean

__all__ = [
    "DEVICE_CATEGORIES", "ERROR_TYPES", "EXEC_TYPES", "HOST_CATEGORIES", "INSTANCE_LAYOUTS", "MAX_CORES",
    "PERCENTILES", "AllApps", "AppFilter", "AppView", "DeviceEcc", "GroupStatus", "Latency", "ModelView", "Snapshot",
    "SubgraphView", "across", "cached", "finite", "k8s_label", "pid_not_visible", "snapshot_from",
]

HOST_CATEGORIES = ("tensors", "constants", "dma_buffers", "application_memory")
DEVICE_CATEGORIES = ("tensors", "constants", "model_code", "runtime_memory", "model_shared_scratchpad")
PERCENTILES = ("p0", "p1", "p25", "p50", "p75", "p99", "p100")
MAX_CORES = 4096
"""Core indices beyond this are absurd (trn2 has 128 logical cores) and are dropped as bad data."""
INSTANCE_LAYOUTS: dict[str, tuple[int, int]] = {
    "inf1.xlarge": (1, 4), "inf1.2xlarge": (1, 4), "inf1.6xlarge": (4, 4), "inf1.24xlarge": (16, 4),
    "inf2.xlarge": (1, 2), "inf2.8xlarge": (1, 2), "inf2.24xlarge": (6, 2), "inf2.48xlarge": (12, 2),
    "trn1.2xlarge": (1, 2), "trn1.32xlarge": (16, 2), "trn1n.32xlarge": (16, 2),
    "trn2.3xlarge": (1, 4), "trn2.48xlarge": (16, 4), "trn2u.48xlarge": (16, 4),
}
"""Instance type -> (Neuron devices, NeuronCores per device as neuron-monitor counts them: logical cores at the
default LNC=2 on trn2), for reports without ``neuron_hardware_info`` (AWS's instance type pages)."""

_EMPTY_INSTANCE = schema.InstanceInfo()
_EMPTY_HARDWARE = schema.HardwareInfo()

_T = TypeVar("_T")


class cached(Generic[_T]):
    """``functools.cached_property`` without its lock: on Python 3.11 every first access takes a class-wide
    RLock, which doubles the cost of the ~20 properties a frame reads from each new snapshot. Two threads racing
    on a first access both compute the same value from immutable data; the last write wins, harmlessly."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> cached[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


def finite(x: float | int | None) -> float | None:
    """``x`` as a float, or None when it is missing, NaN or infinite."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


_KEYS = [str(i) for i in range(1024)]
"""Canonical decimal keys "0".."1023": neuron-monitor writes core and vCPU maps with these, in order."""
_KEY_INDEX = {k: i for i, k in enumerate(_KEYS)}


def _index(key: str) -> int | None:
    i = _KEY_INDEX.get(key)  # a dict hit is several times cheaper than int() on the common keys
    if i is not None:
        return i
    try:
        i = int(key)
    except ValueError:
        return None
    return i if 0 <= i < MAX_CORES else None


def _int_keyed(d: Mapping[str, _T | None]) -> dict[int, _T]:
    """``d`` with its keys as indices (keys that are not indices and null values are dropped)."""
    out: dict[int, _T] = {}
    get = _KEY_INDEX.get
    for k, v in d.items():
        i = get(k)
        if i is None:
            i = _index(k)
        if i is not None and v is not None:
            out[i] = v
    return out


def _counts(d: Mapping[str, int | None] | None) -> dict[str, int]:
    return {k: v for k, v in (d or {}).items() if isinstance(v, int) and v >= 0}


_PID_NOT_VISIBLE = re.compile(r"open /proc/\d+/stat: no such file or directory\Z")


def pid_not_visible(group: str, error: str) -> bool:
    """Whether a metric group's ``error`` is neuron-monitor failing to open a runtime's ``/proc/<pid>/stat``.

    A containerised neuron-monitor without the host's PID namespace (``hostPID``) cannot see the runtimes' pids,
    so every runtime's ``neuron_runtime_vcpu_usage`` carries this error on every report (every real multi-runtime
    fixture has it; so does a runtime that just exited). Only that runtime's vCPU figure is missing: a detail of
    how the monitor is deployed, not a fault of the node, so it is a note, never a problem or an alert."""
    return group == "neuron_runtime_vcpu_usage" and _PID_NOT_VISIBLE.match(error.strip()) is not None


@dataclass(frozen=True, slots=True)
class GroupStatus:
    where: str
    """e.g. "system_data.vcpu_usage" or "app 1234 (train).memory_used"."""
    error: str

    @property
    def detail(self) -> bool:
        """A deployment detail rather than a failure (``pid_not_visible``)."""
        return pid_not_visible(self.where.rpartition(".")[2], self.error)


@dataclass(frozen=True, slots=True)
class SubgraphView:
    name: str
    core: int | None
    device: int | None
    host_bytes: int
    device_bytes: int
    host: dict[str, int]
    device_categories: dict[str, int]
    extra: tuple[tuple[str, str], ...]
    """String fields newer runtimes add (e.g. ("v2", "nc_v2.0")), shown as they are."""

    def global_core(self, cores_per_device: int) -> int | None:
        """``core`` is the index within its device (as the real reports show); this is the global index."""
        if self.core is None:
            return None
        if self.device is not None and self.device >= 0 and 0 <= self.core < cores_per_device:
            core = self.device * cores_per_device + self.core
        else:
            core = self.core
        return core if 0 <= core < MAX_CORES else None


@dataclass(frozen=True, slots=True)
class ModelView:
    name: str
    uuid: str
    model_id: int | None
    is_running: bool | None
    subgraphs: tuple[SubgraphView, ...]

    @property
    def device_bytes(self) -> int:
        return sum(s.device_bytes for s in self.subgraphs)

    @property
    def host_bytes(self) -> int:
        return sum(s.host_bytes for s in self.subgraphs)

    def cores(self, cores_per_device: int) -> tuple[int, ...]:
        """Global NeuronCore indices this model's subgraphs sit on."""
        return tuple(sorted({c for s in self.subgraphs if (c := s.global_core(cores_per_device)) is not None}))


def _subgraph(name: str, raw: dict[str, Any] | None) -> SubgraphView | None:
    if not isinstance(raw, dict):
        return None
    try:
        sg = msgspec.convert(raw, schema.Subgraph, strict=False)
    except msgspec.ValidationError:
        sg = schema.Subgraph()
    mem = sg.memory_used_bytes or schema.UsedBytes()
    bd = mem.usage_breakdown or schema.UsageBreakdown()
    extra = tuple(
        (clean(k, 40), clean(v, 80))
        for k, v in raw.items()
        if isinstance(v, str | int | float) and k not in ("neuroncore_index", "neuron_device_index")
        and not isinstance(v, bool)
    )
    return SubgraphView(
        name=clean(name, 40),
        core=sg.neuroncore_index if sg.neuroncore_index is not None and 0 <= sg.neuroncore_index < MAX_CORES else None,
        device=sg.neuron_device_index,
        host_bytes=max(mem.host or 0, 0),
        device_bytes=max(mem.neuron_device or 0, 0),
        host=_counts(bd.host),
        device_categories=_counts(bd.neuron_device),
        extra=extra,
    )


class across(cached[_T]):
    """``cached``, and kept across reports too: the value is reused from an earlier report whenever the raw data
    it is made from (``obj._memory_raw()``) is equal. For the memory aggregates (per-core categories, their
    totals), which a trn2 report changes in one report out of four or five, yet each new snapshot computed them
    again for the memory panels: ~5% of an update. The values are shared between snapshots: never modify them."""

    _kept: dict[tuple[object, ...], tuple[object, object]] = {}
    """(property, pid, is_all) -> (raw, value), for the last report of each app."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        raw = obj._memory_raw()
        key = (self.name, obj.key, obj.is_all)
        kept = across._kept.get(key)
        if kept is not None and kept[0] == raw:
            value = kept[1]
        else:
            value = self.func(obj)
            if len(across._kept) >= 4096:  # pids come and go; this only bounds a long run
                across._kept.clear()
            across._kept[key] = (raw, value)
        obj.__dict__[self.name] = value
        return value


def app_key(pid: int, tag: str, first_tag: str) -> int:
    """``AppView.key`` of a runtime whose pid another runtime of the report shares (the trn1n CloudWatch agent
    fixture: tags 367 and 123 in pid 457402). The one with the first tag keeps its pid; each other gets the pid
    plus a number made from its tag (CRC-32, above 2**32: never another process's pid), so it is the same in
    every report. Before, both were the pid: the tabs marked both, and the second showed the first's figures."""
    return pid if tag == first_tag else pid + ((zlib.crc32(tag.encode()) + 1) << 32)


class AppView:
    """One Neuron application (runtime) in one report, or the "all" aggregate. Read-only.

    Args:
        pid: the runtime's process id (0 for the "all" aggregate).
        tag: its ``neuron_runtime_tag``; label: the tab title; error: the runtime's own error text.
        cores: global NeuronCore index -> counters, for the cores this app reports.
        runtime: the raw runtime entry, decoded lazily for memory, models, latency and execution.
        is_all: True for the aggregate of every app (``AllApps``).
    """

    __slots__ = ("__dict__", "_rt", "cores", "error", "is_all", "label", "models_error", "pid", "tag")

    def __init__(self, pid: int, tag: str, label: str, error: str, cores: dict[int, schema.CoreCounters],
                 runtime: schema.Runtime | None, is_all: bool = False) -> None:
        self.pid = pid
        self.key = pid
        """Which app this is, report after report: its pid, unless another runtime of the report has the same pid
        (``app_key``). What the tabs, the selection, ``Snapshot.app`` and the history's per-app series go by; the
        pid is what is shown."""
        self.tag = tag
        self.label = label
        """The tab title: the tag, with the pid when several apps share the tag."""
        self.error = error
        self.cores = cores
        """Global NeuronCore index -> counters, for the cores this app reports."""
        self._rt = runtime
        self.is_all = is_all
        self.models_error: str | None = None
        """Set when this app's ``loaded_models`` did not decode (they are decoded on first use)."""

    # --- groups of this app's report ---
    @property
    def _report(self) -> schema.RuntimeReport:
        return (self._rt.report if self._rt is not None else None) or schema.RuntimeReport()

    @cached
    def execution(self) -> schema.ExecutionStats:
        return self._report.execution_stats or schema.ExecutionStats()

    @cached
    def memory(self) -> schema.MemoryUsed:
        return self._report.memory_used or schema.MemoryUsed()

    @cached
    def core_counters(self) -> schema.NeuroncoreCounters:
        return self._report.neuroncore_counters or schema.NeuroncoreCounters()

    def failure(self, group: str) -> str:
        """Why ``group`` (one of ``schema.RUNTIME_GROUPS``) of this app has no values: the runtime's own error,
        else the group's; "" when it reported. Every output shows a failed value as failed ("err"), not as
        missing or zero."""
        if self.error:
            return self.error
        g = getattr(self._report, group, None)
        return clean(g.error) if g is not None and g.error else ""

    @cached
    def vcpu(self) -> tuple[float | None, float | None]:
        """Runtime vCPU (user%, system%); (None, None) when not reported or failed (``failure``)."""
        if self.failure("neuron_runtime_vcpu_usage"):
            return (None, None)
        g = self._report.neuron_runtime_vcpu_usage
        u = g.vcpu_usage if g is not None else None
        return (finite(u.user), finite(u.system)) if u is not None else (None, None)

    @cached
    def exec_summary(self) -> dict[str, int]:
        """Executions by outcome in the period; empty when not reported or failed (a failed group's counts are
        not a reading: every rate made from them is then None, shown "err")."""
        return {} if self.failure("execution_stats") else _counts(self.execution.execution_summary)

    @cached
    def error_summary(self) -> dict[str, int]:
        """Errors by type in the period; empty when not reported or failed (as ``exec_summary``)."""
        return {} if self.failure("execution_stats") else _counts(self.execution.error_summary)

    @cached
    def period(self) -> float | None:
        """Seconds the execution counters cover: ``execution_stats.period``, else (trimmed or older output with
        counts and no period) the runtime's other groups', which neuron-monitor collects over the same period:
        "done/s" then stays a rate, not a count."""
        p = finite(self.execution.period)
        if p and p > 0:
            return p
        r = self._report
        ps = [q for g in (r.neuroncore_counters, r.memory_used, r.neuron_runtime_vcpu_usage)
              if g is not None and (q := finite(g.period)) and q > 0]
        return max(ps) if ps else None

    # --- derived (``neuron_top.derived``: the rules every output shares) ---
    @cached
    def core_stats(self) -> CoreStats:
        """Utilization and FLOPS of this app's cores: per core, the average, the total, the peak."""
        return core_stats(self.cores)

    @cached
    def physical_stats(self) -> PhysicalStats:
        """trn2 v3d: the physical cores behind each of this app's logical cores."""
        return physical_stats(self.cores)

    @cached
    def rates(self) -> AppRates:
        """Executions and errors of the report's period, as counts and rates."""
        return app_rates(self.exec_summary, self.error_summary, self.period)

    @cached
    def latency_shown(self) -> Latency:
        """The latency every output shows (``derived.latency_state``): total, else device (marked), else idle
        when the app ran nothing, else not reported; failed when the runtime or ``execution_stats`` did."""
        return latency_state(self.latency("total"), self.latency("device"), self.rates.ran,
                             self.failure("execution_stats"))

    def latency(self, kind: str = "total") -> dict[str, float] | None:
        """Percentiles in seconds for "total" or "device" latency; None when null in the report. Kept once
        made (history, the latency panel and its idle test each ask, every report); do not modify it."""
        key = "_latency_" + kind
        try:
            return self.__dict__[key]  # type: ignore[no-any-return]
        except KeyError:
            out = self.__dict__[key] = self._latency(kind)
            return out

    def _latency(self, kind: str) -> dict[str, float] | None:
        ls = self.execution.latency_stats
        if ls is None or self.failure("execution_stats"):
            return None
        d = ls.total_latency if kind == "total" else ls.device_latency
        if not d:
            return None
        out = {}
        for k, v in d.items():  # a loop, not a generator in a comprehension: 14 of these a trn2 report
            x = finite(v)
            if x is not None and x >= 0:
                out[k] = x
        return out or None

    # --- memory ---
    @cached
    def used_bytes(self) -> tuple[int, int]:
        """(host, device) bytes used."""
        u = self.memory.neuron_runtime_used_bytes
        if u is None:
            return (0, 0)
        return (max(u.host or 0, 0), max(u.neuron_device or 0, 0))

    @property
    def memory_reported(self) -> bool:
        """Whether the report gives this app's used memory: ``memory_used`` there, without an error, with its
        totals. When not, ``used_bytes`` is (0, 0) for sums, and every output shows "-", not 0B."""
        return not self.failure("memory_used") and self.memory.neuron_runtime_used_bytes is not None

    def _memory_raw(self) -> object:
        """What the memory aggregates are made from (see ``across``)."""
        return self.memory.neuron_runtime_used_bytes

    @across
    def host_breakdown(self) -> dict[str, int]:
        u = self.memory.neuron_runtime_used_bytes
        bd = u.usage_breakdown if u is not None else None
        return _counts(bd.host if bd is not None else None)

    @across
    def core_memory(self) -> dict[int, dict[str, int]]:
        """Global core index -> device memory by category."""
        u = self.memory.neuron_runtime_used_bytes
        bd = u.usage_breakdown if u is not None else None
        out: dict[int, dict[str, int]] = {}
        for k, cats in ((bd.neuroncore_memory_usage if bd is not None else None) or {}).items():
            i = _index(k)
            if i is not None:
                out[i] = _counts(cats)
        return out

    @across
    def device_breakdown(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for cats in self.core_memory.values():
            for k, v in cats.items():
                total[k] = total.get(k, 0) + v
        return total

    @cached
    def models(self) -> tuple[ModelView, ...]:
        out = []
        loaded, self.models_error = schema.decode_models(self.memory.loaded_models)
        for m in loaded:
            sgs = tuple(s for s in (_subgraph(n, raw) for n, raw in (m.subgraphs or {}).items()) if s is not None)
            out.append(ModelView(clean(m.name or "?"), clean(m.uuid or "", 64), m.model_id, m.is_running, sgs))
        return tuple(out)

    def group_statuses(self) -> list[GroupStatus]:
        out = []
        if self.error:
            out.append(GroupStatus(self.label, self.error))
        for name in schema.RUNTIME_GROUPS:
            g = getattr(self._report, name)
            if g is not None and g.error:
                out.append(GroupStatus(f"{self.label}.{name}", clean(g.error)))
        if self.models_error:
            out.append(GroupStatus(f"{self.label}.memory_used", clean(self.models_error)))
        return out


class AllApps(AppView):
    """The aggregate of every app, like AWS neuron-top's "all" tab."""

    def __init__(self, apps: tuple[AppView, ...], cores: dict[int, schema.CoreCounters]) -> None:
        super().__init__(0, "all", "all", "", cores, None, is_all=True)
        self.apps = apps

    def failure(self, group: str) -> str:
        """Failed only when every app's ``group`` failed (then their reasons); one app's error leaves the rest."""
        reasons = [a.failure(group) for a in self.apps]
        if not reasons or not all(reasons):
            return ""
        return "; ".join(dict.fromkeys(reasons))

    @cached
    def latency_shown(self) -> Latency:
        return latency_state(None, None, None, self.failure("execution_stats"))  # per app only

    @cached
    def core_stats(self) -> CoreStats:
        """``core_stats`` of every core; when each core is one app's own, with that app's counters (no core
        reported twice: ``_merge_cores`` keeps them as they are, in the apps' order), joined from the apps' stats
        (``derived.joined_core_stats``), which every report reads too: a core's figures are then worked out once,
        not for its app and again for "all"."""
        cores = self.cores
        parts = [a for a in self.apps if a.cores]
        if sum(len(a.cores) for a in parts) == len(cores) and all(
                cores.get(i) is c for a in parts for i, c in a.cores.items()):
            stats = joined_core_stats(a.core_stats for a in parts)
            if list(stats.util) == list(cores):  # the same cores in the same order: the same values
                return stats
        return core_stats(cores)

    @cached
    def vcpu(self) -> tuple[float | None, float | None]:
        """The runtimes' vCPU shares summed; no runtime: nothing used, 0 (``memory_reported``'s rule: it read
        "user -" beside the memory's "Total: 0B")."""
        if not self.apps:
            return (0.0, 0.0)
        vals = [a.vcpu for a in self.apps]
        us = [u for u, _ in vals if u is not None]
        ss = [s for _, s in vals if s is not None]
        return (sum(us) if us else None, sum(ss) if ss else None)

    @cached
    def exec_summary(self) -> dict[str, int]:
        return _sum_dicts(a.exec_summary for a in self.apps)

    @cached
    def error_summary(self) -> dict[str, int]:
        return _sum_dicts(a.error_summary for a in self.apps)

    @cached
    def period(self) -> float | None:
        ps = [a.period for a in self.apps if a.period]
        return max(ps) if ps else None

    def latency(self, kind: str = "total") -> dict[str, float] | None:
        return None  # percentiles do not add up across apps; the panel lists each app

    @cached
    def used_bytes(self) -> tuple[int, int]:
        h = d = 0
        for a in self.apps:
            ah, ad = a.used_bytes
            h += ah
            d += ad
        return (h, d)

    @property
    def memory_reported(self) -> bool:
        """No runtime: nothing used (reported zero); else some runtime's memory must be known."""
        return not self.apps or any(a.memory_reported for a in self.apps)

    def _memory_raw(self) -> object:
        return [(a.pid, a.memory.neuron_runtime_used_bytes) for a in self.apps]

    @across
    def host_breakdown(self) -> dict[str, int]:
        return _sum_dicts(a.host_breakdown for a in self.apps)

    @across
    def core_memory(self) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {}
        for a in self.apps:
            for i, cats in a.core_memory.items():
                out[i] = _sum_dicts((out.get(i, {}), cats))
        return out

    @cached
    def models(self) -> tuple[ModelView, ...]:
        return tuple(m for a in self.apps for m in a.models)

    def group_statuses(self) -> list[GroupStatus]:
        return [s for a in self.apps for s in a.group_statuses()]


def _sum_dicts(ds: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in ds:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _merge_cores(apps: tuple[AppView, ...]) -> dict[int, schema.CoreCounters]:
    """Per core, the utilization over apps by the one rule (``derived.core_utilization``: the summed share),
    FLOPS added up (operations each runtime did). Apps whose core counters failed give no cores."""
    apps = tuple(a for a in apps if not a.failure("neuroncore_counters"))
    if len(apps) == 1:
        return apps[0].cores
    disjoint: dict[int, schema.CoreCounters] = {}
    for a in apps:
        disjoint.update(a.cores)
    if len(disjoint) == sum(len(a.cores) for a in apps):
        return disjoint  # no core reported twice (the usual case): nothing to add up
    acc: dict[int, list[Any]] = {}
    for a in apps:
        for i, c in a.cores.items():
            cur = acc.get(i)
            if cur is None:
                acc[i] = [core_utilization((c.neuroncore_utilization,)), c.flops, c.effective_flops, c.v3d, c]
                continue
            cur[0] = core_utilization((cur[0], c.neuroncore_utilization))
            cur[1] = _add(cur[1], c.flops)
            cur[2] = _add(cur[2], c.effective_flops)
            if c.v3d and (c.neuroncore_utilization or 0) > 0:
                cur[3] = c.v3d
            cur[4] = None
    out = {}
    for i, (u, f, ef, v3d, single) in acc.items():
        if single is not None:
            out[i] = single
        else:
            out[i] = schema.CoreCounters(neuroncore_utilization=u, flops=f, effective_flops=ef, v3d=v3d)
    return out


def _add(a: float | None, b: float | None) -> float | None:
    if b is None:
        return a
    return b if a is None else a + b


class DeviceEcc(msgspec.Struct, frozen=True, gc=False):
    """ECC counts of one device in one report (or summed over a history). A Struct, not a dataclass: a frozen
    slots dataclass spends ~1 us per instance in ``object.__setattr__``, 16 of them every frame."""

    device: int
    mem_corrected: int
    mem_uncorrected: int
    sram_corrected: int
    sram_uncorrected: int

    @property
    def uncorrected(self) -> int:
        return self.mem_uncorrected + self.sram_uncorrected

    @property
    def corrected(self) -> int:
        return self.mem_corrected + self.sram_corrected

    @property
    def has_events(self) -> bool:
        """Whether any event, of any kind, is counted here: a device the ECC panel lists (with a row of its own)."""
        return bool(self.mem_corrected or self.mem_uncorrected or self.sram_corrected or self.sram_uncorrected)

    def plus(self, other: DeviceEcc) -> DeviceEcc:
        """These counts and ``other``'s (the same device's, a later period or part): a total is a sum."""
        return DeviceEcc(self.device, self.mem_corrected + other.mem_corrected,
                         self.mem_uncorrected + other.mem_uncorrected, self.sram_corrected + other.sram_corrected,
                         self.sram_uncorrected + other.sram_uncorrected)


_DEVICE = attrgetter("device")


class _DeviceCounters(Protocol):
    """What ``device_ecc`` reads: the report's ``neuron_hw_counters`` or the recording index's slim decode of it."""

    @property
    def neuron_devices(self) -> Sequence[schema.DeviceCounters | None] | None: ...


def device_ecc(counters: _DeviceCounters | None) -> tuple[DeviceEcc, ...]:
    """The ECC counts of a report's ``neuron_hw_counters``, by device: devices with a valid index only, a negative
    or missing count read as 0, in device order. The one rule for the snapshot and the recording's markers."""
    out = []
    for d in (counters.neuron_devices if counters is not None else None) or ():
        if d is None or not isinstance(i := d.neuron_device_index, int) or not 0 <= i < MAX_CORES:
            continue
        # decoded counts are int or None (inline: 64 calls a frame)
        mc, mu, sc, su = d.mem_ecc_corrected, d.mem_ecc_uncorrected, d.sram_ecc_corrected, d.sram_ecc_uncorrected
        out.append(DeviceEcc(i, mc if mc is not None and mc > 0 else 0, mu if mu is not None and mu > 0 else 0,
                             sc if sc is not None and sc > 0 else 0, su if su is not None and su > 0 else 0))
    out.sort(key=_DEVICE)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class AppFilter:
    """The tag filter (``/``, ``--tag``) a snapshot was narrowed by (``Snapshot.narrowed``): every output says it."""

    text: str
    """The filter as the user typed it."""
    shown: int
    """Apps it lets through."""
    total: int
    """Apps in the report."""
    hidden_cores: frozenset[int]
    """Cores used only by the apps it leaves out: the core grid dims them."""

    def describe(self) -> str:
        """``filter 'serve': 2 of 8 apps``."""
        return f"filter {self.text!r}: {self.shown} of {self.total} apps"


class Snapshot:
    """One report, ready to draw.

    Args:
        report: the decoded report (``decode.decode_report``).
        ts: Unix time of the report.
        seq: its number in its stream (1-based; 0 when unknown).
        problems: what the lenient decoder had to skip (one line each).
    """

    __slots__ = ("__dict__", "all", "apps", "attribution", "filter", "problems", "report", "seq", "ts")

    def __init__(self, report: schema.Report, ts: float, seq: int = 0, problems: tuple[str, ...] = ()) -> None:
        self.report = report
        self.ts = ts
        """Unix seconds: the recorded time when known, else when the report was received."""
        self.seq = seq
        self.problems = problems
        """What the decoder had to drop from this report (wrong shapes), one line each."""
        self.filter: AppFilter | None = None
        """The tag filter this snapshot was narrowed by (``narrowed``); None: every app of the report."""
        self.attribution: Attribution | None = None
        """What the node said about pods when this report arrived (``k8s.PodWatcher``), set by the feed; None
        when attribution is off (replay, ``--no-k8s``)."""
        apps: list[AppView] = []
        runtimes = [(rt, clean(rt.neuron_runtime_tag or "", 64))
                    for rt in (report.neuron_runtime_data or ()) if rt is not None]
        tags: dict[str, int] = {}
        for _, tag in runtimes:
            tags[tag] = tags.get(tag, 0) + 1
        for rt, tag in runtimes:
            pid = rt.pid if isinstance(rt.pid, int) else -1
            label = tag or str(pid)
            if tag and tags[tag] > 1:
                label = f"{tag}:{pid}"
            nc = rt.report.neuroncore_counters if rt.report is not None else None
            in_use = nc.neuroncores_in_use if nc is not None else None
            cores = _int_keyed(in_use) if in_use else {}
            apps.append(AppView(pid, tag, label, clean(rt.error or ""), cores, rt))
        apps.sort(key=lambda a: (a.pid < 0, a.pid))
        shared: dict[int, list[AppView]] = {}
        for a in apps:
            shared.setdefault(a.pid, []).append(a)
        for same in shared.values():
            if len(same) > 1:
                first = min(a.tag for a in same)
                for a in same:
                    a.key = app_key(a.pid, a.tag, first)
        self.apps: tuple[AppView, ...] = tuple(apps)
        self.all = AllApps(self.apps, _merge_cores(self.apps))

    @property
    def no_apps(self) -> str:
        """What a list of apps says when it has none: none in the report, or none that the tag filter lets
        through (every panel said "no Neuron applications" of a machine running three)."""
        f = self.filter
        if f is not None and f.total:
            return f"no app matches filter {f.text!r} ({plural(f.total, 'app')} hidden)"
        return "no Neuron applications"

    def narrowed(self, keep: Callable[[AppView], bool], text: str) -> Snapshot:
        """This report as seen through a tag filter: only the apps ``keep`` lets through, and "all" (its cores, its
        totals, its memory and models) over them alone. Every panel, the tabs, the totals and ``--once`` then
        draw the narrowed snapshot and need no filter of their own. The machine stays the whole machine: the
        devices, ECC, vCPUs, host memory and the metric-group errors are not an app's.

        Cores that only filtered-out apps use are left out of "all" and named in ``filter.hidden_cores`` (the
        grid dims them); idle cores nobody uses stay, as the apps shown report them.

        Args:
            keep: which apps to show.
            text: the filter as typed, for the titles.
        """
        apps = tuple(a for a in self.apps if keep(a))
        out = Snapshot.__new__(Snapshot)
        out.report, out.ts, out.seq, out.problems = self.report, self.ts, self.seq, self.problems
        out.attribution = self.attribution
        out.apps = apps
        shown = {c for a in apps for c in self.cores_of(a)}
        hidden = frozenset(c for a in self.apps if not keep(a) for c in self.cores_of(a)) - shown
        merged = _merge_cores(apps)
        out.all = AllApps(apps, {i: c for i, c in merged.items() if i not in hidden} if hidden else merged)
        out.filter = AppFilter(text, len(apps), len(self.apps), hidden)
        # the machine as the whole report shows it (a filtered "all" must not shrink the device count)
        for name in ("device_count", "cores_per_device", "has_neuron", "group_statuses", "ecc"):
            out.__dict__[name] = getattr(self, name)
        for a in apps:
            key = f"_cores_of_{a.key}"
            if key in self.__dict__:
                out.__dict__[key] = self.__dict__[key]
        # pods: those of the apps shown, their figures from the whole report (a pod's cores that only hidden
        # apps use are busy, not "allocated but idle", and must not read so under a filter)
        kept = {a.pid for a in apps}
        out.__dict__["pod_usage"] = tuple(u for u in self.pod_usage
                                          if kept.intersection(u.pids) or shown.intersection(u.cores))
        return out

    def app(self, key: int | None) -> AppView:
        """The app with this key (``AppView.key``: its pid, unless two runtimes share one), or the "all" aggregate
        for None (or an app that is gone)."""
        if key is not None:
            for a in self.apps:
                if a.key == key:
                    return a
        return self.all

    # --- static-ish info ---
    @cached
    def instance(self) -> schema.InstanceInfo:
        return self.report.instance_info or _EMPTY_INSTANCE

    @cached
    def hardware(self) -> schema.HardwareInfo:
        return self.report.neuron_hardware_info or _EMPTY_HARDWARE

    @cached
    def layout_source(self) -> str:
        """Where the device x core layout comes from: "neuron_hardware_info", "instance type" (a known instance
        type, ``INSTANCE_LAYOUTS``), or "" when it is unknown (cores per device guessed, devices from the cores
        reported)."""
        n = self.hardware.neuroncore_per_device_count
        if isinstance(n, int) and 0 < n <= 64:
            return "neuron_hardware_info"
        if self._instance_layout is not None:
            return "instance type"
        return ""

    @cached
    def _instance_layout(self) -> tuple[int, int] | None:
        return INSTANCE_LAYOUTS.get((self.instance.instance_type or "").strip().lower())

    @cached
    def cores_per_device(self) -> int:
        """NeuronCores per device: from ``neuron_hardware_info``, else the instance type, else a guess (the
        header then says "layout unknown")."""
        n = self.hardware.neuroncore_per_device_count
        if isinstance(n, int) and 0 < n <= 64:
            return n
        known = self._instance_layout
        if known is not None:
            return known[1]
        return 1 if self.hardware.neuron_device_type else 2

    @cached
    def device_count(self) -> int:
        """Devices on the machine: from hardware info, else the instance type (when the report shows Neuron at
        all: a container that sees no device shows none), else the highest core and ECC index."""
        n = self.hardware.neuron_device_count
        seen = 0
        if self.all.cores:
            seen = max(self.all.cores) // self.cores_per_device + 1
        if self.ecc:
            seen = max(seen, self.ecc[-1].device + 1)  # sorted by device
        if isinstance(n, int) and 0 <= n <= MAX_CORES:
            return max(n, seen)
        known = self._instance_layout
        if known is not None and (seen or self.apps):
            return max(known[0], seen)
        return seen

    @cached
    def no_devices(self) -> str:
        """Why the report shows no Neuron device ("" when it shows some): the collector's own reason (the
        built-in one says the driver was not found), else that none is visible, as in a container started without
        ``/dev/neuron*`` (neuron-monitor runs there and reports zero devices)."""
        if self.has_neuron:
            return ""
        if self.hardware.error:
            return clean(self.hardware.error, 160)
        return "no Neuron devices visible (container without /dev/neuron*?)"

    def layout_text(self) -> str:
        """The layout as the header and ``--once`` say it: "16x trainium2 · 64 NeuronCores", with where it came
        from when not from ``neuron_hardware_info``."""
        hw = self.hardware
        dev = clean(hw.neuron_device_type or "neuron", 20)
        text = f"{self.device_count}x {dev} · {self.core_count} NeuronCores"
        if self.layout_source == "instance type":
            return f"{text} (layout of {clean(self.instance.instance_type or '', 30)})"
        if not self.layout_source:
            return f"layout unknown · {len(self.all.cores)} NeuronCores reported"
        return text

    @property
    def core_count(self) -> int:
        return self.device_count * self.cores_per_device

    def core_location(self, index: int) -> tuple[int, int]:
        """Global NeuronCore index -> (device index, core index within the device)."""
        return divmod(index, self.cores_per_device)

    def cores_of(self, app: AppView) -> tuple[int, ...]:
        """The cores ``app`` uses (``derived.owned_cores``), found once per snapshot."""
        key = f"_cores_of_{'all' if app.is_all else app.key}"  # by key: two runtimes of one pid had one entry
        got = self.__dict__.get(key)
        if got is None:
            got = self.__dict__[key] = owned_cores(app.core_memory, lambda: app.models, app.core_stats,
                                                   self.cores_per_device)
        return got

    @cached
    def device_utils(self) -> dict[int, float]:
        """Device index -> the mean utilization of its cores (``derived.device_utils``), once a report: the
        history's per-device lines and the core history panel's newest values read it."""
        return device_utils(self.all.core_stats, self.cores_per_device)

    def app_util(self, app: AppView) -> float | None:
        """The mean utilization of the cores ``app`` uses (``cores_of``); for "all", of every core."""
        return app.core_stats.util_avg if app.is_all else mean_util(app.core_stats, self.cores_of(app))

    def app_flops_avg(self, app: AppView) -> float | None:
        """The mean FLOPS per core of the cores ``app`` uses (``cores_of``); for "all", of every core reporting
        FLOPS (AWS neuron-top's "Avg" beside its "Total")."""
        flops = app.core_stats.flops
        vals = [f for i in (flops if app.is_all else self.cores_of(app)) if (f := flops.get(i)) is not None]
        return sum(vals) / len(vals) if vals else None

    @cached
    def error_types(self) -> tuple[str, ...]:
        """Every error type a column is shown for: the documented ones, then any other an app reports."""
        return error_types(a.error_summary for a in self.apps)

    @cached
    def has_neuron(self) -> bool:
        """Whether the report carries any Neuron hardware at all (False for the built-in host collector)."""
        return self.device_count > 0 or bool(self.apps)

    # --- system groups ---
    @cached
    def system(self) -> schema.SystemData:
        return self.report.system_data or schema.SystemData()

    @cached
    def ecc(self) -> tuple[DeviceEcc, ...]:
        return device_ecc(self.system.neuron_hw_counters)

    @cached
    def vcpu(self) -> schema.VcpuUsage | None:
        return self.system.vcpu_usage

    @cached
    def vcpus(self) -> tuple[tuple[int, schema.CpuTimes], ...]:
        """Per vCPU usage, sorted by CPU number (neuron-monitor writes them in order: sort only if not)."""
        g = self.system.vcpu_usage
        data = g.usage_data if g is not None else None
        if not data:
            return ()
        n = len(data)
        if n <= len(_KEYS) and list(data) == _KEYS[:n]:  # "0", "1", ... in order, as neuron-monitor writes
            cpus = list(data.values())
            return tuple(compress(zip(range(n), cpus, strict=True), cpus))  # type: ignore[arg-type]  # drops nulls: a Struct is truthy
        out = [(int(k), v) for k, v in data.items()
               if v is not None and k.isascii() and k.isdigit() and len(k) < 5]
        out.sort(key=itemgetter(0))
        return tuple(out)

    @cached
    def cpu(self) -> CpuSummary:
        """The vCPUs: average busy share by kind, context switches per second, each vCPU's busy share."""
        return cpu_summary(self.vcpu, self.vcpus)

    @cached
    def host_memory(self) -> schema.MemoryInfo | None:
        return self.system.memory_info

    @cached
    def k8s_cores(self) -> dict[int, schema.K8sEntry]:
        g = self.report.neuron_k8s_info
        return _k8s_map(g.neuroncores_k8s_info if g is not None else None)

    @cached
    def k8s_devices(self) -> dict[int, schema.K8sEntry]:
        g = self.report.neuron_k8s_info
        return _k8s_map(g.neurondevices_k8s_info if g is not None else None)

    _pods_kept: tuple[object, ...] = ()
    """(attribution, neuron_k8s_info's two maps, cores per device, app cores, PodMap) of the last ``pods`` made:
    most reports change none of them, and making it again cost ~1.5 ms a trn2 report (comparing, ~0.1 ms)."""

    @cached
    def pods(self) -> PodMap:
        """Which pod holds each core and each app (``k8s.resolve``, the one rule: the kubelet, else the runtimes'
        cgroups, else neuron-monitor's ``neuron_k8s_info``)."""
        app_cores = self._cores_by_pid
        g, cpd = self.report.neuron_k8s_info, self.cores_per_device
        k8s = (g.neuroncores_k8s_info, g.neurondevices_k8s_info) if g is not None else None  # not its period
        kept = Snapshot._pods_kept
        if kept and kept[0] is self.attribution and kept[2] == cpd and kept[3] == app_cores and kept[1] == k8s:
            return kept[4]  # type: ignore[return-value]

        def ref(e: schema.K8sEntry) -> PodRef:
            return PodRef.of(e.namespace or "", e.pod_name or "", ",".join(c for c in e.container_name or () if c),
                             "neuron-monitor")

        value = resolve(self.attribution, cpd, app_cores, {i: ref(e) for i, e in self.k8s_cores.items()},
                        {i: ref(e) for i, e in self.k8s_devices.items()})
        Snapshot._pods_kept = (self.attribution, k8s, cpd, app_cores, value)
        return value

    @cached
    def pod_usage(self) -> tuple[PodUsage, ...]:
        """Each pod with Neuron cores: its cores, their mean utilization, the ones allocated but idle, its apps."""
        return self.pods.usage(self.all.core_stats.util, self._cores_by_pid)

    @cached
    def _cores_by_pid(self) -> dict[int, tuple[int, ...]]:
        """Each process's cores, for the pods (a pod holds processes): the cores of every runtime of a pid, where
        the last runtime's had replaced the others'. Once a snapshot (``pods`` and ``pod_usage`` read it)."""
        out: dict[int, tuple[int, ...]] = {}
        for a in self.apps:
            cores = self.cores_of(a)
            had = out.get(a.pid)
            out[a.pid] = cores if had is None else tuple(sorted({*had, *cores}))
        return out

    def app_pod(self, app: AppView) -> PodRef | None:
        """The pod ``app`` runs in, when known (None for "all")."""
        return None if app.is_all else self.pods.apps.get(app.pid)

    def with_attribution(self, attribution: Attribution | None) -> Snapshot:
        """The same report with another attribution (``--once`` waits for the first answer): a new snapshot,
        this one is left as it is."""
        out = Snapshot(self.report, self.ts, self.seq, self.problems)
        out.attribution = attribution
        return out

    @cached
    def group_statuses(self) -> tuple[GroupStatus, ...]:
        """Every non-empty ``error`` string in the report, and what the decoder dropped."""
        out: list[GroupStatus] = []
        if self.instance.error:
            out.append(GroupStatus("instance_info", clean(self.instance.error)))
        if self.hardware.error:
            out.append(GroupStatus("neuron_hardware_info", clean(self.hardware.error)))
        for name in schema.SYSTEM_GROUPS:
            g = getattr(self.system, name)
            if g is not None and g.error:
                out.append(GroupStatus(f"system_data.{name}", clean(g.error)))
        k8s = self.report.neuron_k8s_info
        if k8s is not None and k8s.error:
            out.append(GroupStatus("neuron_k8s_info", clean(k8s.error)))
        out.extend(self.all.group_statuses())
        out.extend(GroupStatus("decode", p) for p in self.problems)
        return tuple(out)

    def period(self) -> float | None:
        """The report's period: the largest group period in it (what neuron-monitor's pace is)."""
        ps = [finite(getattr(self.system, n).period) for n in schema.SYSTEM_GROUPS if getattr(self.system, n)]
        ps += [a.period for a in self.apps]
        ps2 = [p for p in ps if p and p > 0]
        return max(ps2) if ps2 else None


def snapshot_from(data: bytes, fallback_ts: float, seq: int = 0) -> Snapshot:
    """Decode one report into a Snapshot, timed by its ``neuron_top.ts`` when it was recorded by us, else by
    ``fallback_ts`` (when it was received, or the recording index's synthesized time). Raises ``DecodeError``.

    Args:
        data: one report's JSON document.
        fallback_ts: Unix time to use when the report carries none of ours.
        seq: its number in its stream.

    Returns:
        The snapshot.
    """
    report, problems = decode_report(data)
    meta = report.neuron_top
    ts = meta.ts if meta is not None and meta.ts is not None and finite(meta.ts) is not None else fallback_ts
    snap = Snapshot(report, ts, seq, problems)
    if report.neuron_top_pods is not None:  # a recording kept who held each core (a live feed sets its own)
        snap.attribution = attribution_from_record(bytes(report.neuron_top_pods))
    return snap


def _k8s_map(d: Mapping[str, schema.K8sEntry | None] | None) -> dict[int, schema.K8sEntry]:
    return _int_keyed(d) if d else {}


def k8s_label(e: schema.K8sEntry) -> str:
    """A Kubernetes placement as one short label: ``namespace/pod [containers]``, each part cleaned and cut."""
    ns = clean(e.namespace or "", 40)
    pod = clean(e.pod_name or "", 60)
    cont = ",".join(clean(c, 40) for c in (e.container_name or ()) if c)
    s = f"{ns}/{pod}" if ns else pod
    return f"{s} [{cont}]" if cont else s

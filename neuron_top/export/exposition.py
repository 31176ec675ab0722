"""The Prometheus exposition of neuron-monitor reports, compatible with AWS's ``neuron-monitor-prometheus.py``.

An ``Exporter`` is fed the feed's events (``neuron_top.feed``) and renders the text a scrape returns. What it
publishes, and why it looks the way it does:

* AWS's families, names, types, HELP strings and label sets (the README's metric table; real scrapes in
  ``tests/fixtures/prometheus/``; Grafana dashboards, Datadog, the CloudWatch agent key on them), with AWS's
  rules: a metric group whose ``error`` is non-empty is skipped, so is a runtime whose ``error`` is non-empty
  (AWS's script keeps their last values; we serve no sample for a value not reported or failed, see below); an
  empty or missing runtime list clears every per-runtime series; the series of a runtime tag that is no longer
  in the list are dropped (AWS since SDK 2.25); counters grow by each report's per-period counts and carry the
  ``_created`` sample prometheus_client adds; ``instance_info`` and ``neuron_hardware_info`` come from the first
  report that has them. Values are the same floats
  (``util / 100.0``, bytes as floats) and are written with prometheus_client's own number formatting.
* Where we differ, we differ on purpose: bad values (null, wrong types the decoder dropped, and absurd ones: a
  negative or 1e15 utilization, byte count, latency or count, bounds ``MAX_*``) skip that series instead of
  killing the exporter or being passed on, and an idle machine (no runtimes) does not reset the ECC counters
  (AWS's script clears every counter then, so ``hardware_ecc_events_total`` restarts from 0). A null latency
  (the runtime executed nothing that period) removes the runtime's latency samples: AWS's script keeps serving
  the last percentiles, so a runtime that stopped shows its last p99 for ever, and an alert on it fires for a
  runtime that does nothing (a value not reported has no sample, rule files guard AWS's frozen gauge anyway).
* ``neurontop_*`` families for what only we know (device latency, per-device memory, the true per-core
  utilisation, the source's health) are new names, so they change nothing AWS users chart. The one option that
  changes AWS series, dropping the zero rows of cores a runtime does not use, is off unless asked for.

Threads: ``apply`` runs on the feed's thread, ``render`` on the HTTP server's; both hold one lock, so a scrape
sees the state after a whole report, never half of one. The text of the report part is built once per report
and format (``render`` caches it), so scrapes between reports cost a copy.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.utils import floatToGoString

from neuron_top import __version__, schema
from neuron_top.feed import FeedEvent, Report, SourceTally
from neuron_top.k8s.model import PodMap, PodRef
from neuron_top.session import Pace
from neuron_top.snapshot import Snapshot, pid_not_visible, snapshot_from
from neuron_top.sources.base import State
from neuron_top.textsafe import escape_label_value

__all__ = [
    "CONTENT_TYPE_OPENMETRICS",
    "CONTENT_TYPE_TEXT",
    "POD_LABELS",
    "ExportOptions",
    "Exporter",
    "escape_label_value",
    "exposition",
]

CONTENT_TYPE_TEXT = "text/plain; version=0.0.4; charset=utf-8"
CONTENT_TYPE_OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"

INSTANCE_LABELS = (
    ("instance_name", "instance_name"),
    ("instance_id", "instance_id"),
    ("instance_type", "instance_type"),
    ("availability_zone", "instance_availability_zone"),
    ("region", "instance_region"),
    ("subnet_id", "subnet_id"),
)
"""(label, ``instance_info`` field): AWS's ``get_instance_labels``; ``ultraserver_id`` is added when present."""

CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
ECC_EVENTS = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")
GROUPS = ("runtime", *schema.RUNTIME_GROUPS, *schema.SYSTEM_GROUPS, "instance_info", "neuron_hardware_info")
"""The ``group`` values of ``neurontop_metric_group_errors`` ("runtime": a runtime's own ``error``)."""
_GROUP_GAUGES: dict[str, tuple[str, ...]] = {
    "neuroncore_counters": ("neuroncore_utilization_ratio",),
    "neuron_runtime_vcpu_usage": ("neuron_runtime_vcpu_usage_ratio",),
    "memory_used": ("neuron_runtime_memory_used_bytes", *(f"neuroncore_memory_usage_{c}" for c in CORE_MEMORY)),
    "execution_stats": ("execution_latency_seconds", "neurontop_execution_device_latency_seconds"),
    "vcpu_usage": ("system_vcpu_count", "system_vcpu_usage_ratio"),
    "memory_info": tuple(f"system_{w}_{s}" for w in ("memory", "swap") for s in ("total_bytes", "used_bytes")),
}
"""Each metric group's gauge families: emptied for a runtime (or the system) when its group is not reported or
failed. Counters are left: they hold totals since the exporter started."""
_UP_STATES = frozenset({State.LIVE, State.DEMO, State.REPLAY})


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What the exporter publishes beyond AWS's families."""

    used_cores_only: bool = False
    """Drop the ``neuroncore_utilization_ratio`` and ``neuroncore_memory_usage_*`` rows of cores a runtime does
    not use (no memory and 0% on that core). Neuron runtimes list every core of the machine, so AWS's series are
    mostly zeros and ``avg(neuroncore_utilization_ratio)`` is diluted; off by default because it changes what
    those queries return."""
    process_metrics: bool = True
    """Also publish prometheus_client's ``process_*`` and ``python_*`` families, as AWS's script does."""
    pod_labels: bool = False
    """Add ``pod``, ``namespace`` and ``container`` to the per-core families (the core's pod) and the per-runtime
    ones (the runtime's pod), as dcgm-exporter does: a Grafana panel by pod without a join. Off by default: it
    changes AWS's series (new label sets). ``neurontop_neuroncore_pod_info`` is published either way."""


POD_LABELS = ("pod", "namespace", "container")
_NO_POD: tuple[tuple[str, str], ...] = (("container", ""), ("namespace", ""), ("pod", ""))


def _pod_pairs(ref: PodRef | None) -> tuple[tuple[str, str], ...]:
    """The pod labels of a series (empty values, which Prometheus reads as absent, when no pod holds it)."""
    if ref is None:
        return _NO_POD
    return (("container", ref.container), ("namespace", ref.namespace), ("pod", ref.pod))


def _label_text(pairs: Iterable[tuple[str, str]]) -> str:
    """``a="x",b="y"``, sorted by name as prometheus_client writes them."""
    return ",".join(f'{k}="{escape_label_value(v)}"' for k, v in sorted(pairs))


_FMT: dict[float, str] = {}


def _fmt(value: float) -> str:
    """prometheus_client's ``floatToGoString``, remembered for the values that repeat (0.0, sizes, counts)."""
    s = _FMT.get(value)
    if s is None:
        s = floatToGoString(value)
        if len(_FMT) < 65536:
            _FMT[value] = s
    return s


def _num(x: object) -> float | None:
    """A finite number from a report field, else None (null, a bool, NaN, a type the decoder let through)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def _within(x: object, top: float) -> float | None:
    """``_num``, but only from 0 to ``top``: a negative utilization or a 1e15 count is a broken report, and
    passing it on would poison every sum, average and alert downstream, so that one series is skipped."""
    f = _num(x)
    return f if f is not None and 0.0 <= f <= top else None


MAX_PERCENT = 100.0 + 1e-6
"""Utilization and CPU shares are percent (float noise above 100 is let through)."""
MAX_BYTES = float(1 << 50)
"""1 PiB: more than any host's or device's memory."""
MAX_SECONDS = 86400.0
"""A latency of more than a day is not one."""
MAX_COUNT = 1e9
"""Executions, errors or ECC events in one report period (neuron-monitor reports every few seconds)."""


def _pct(x: object) -> float | None:
    return _within(x, MAX_PERCENT)


def _bytes(x: object) -> float | None:
    return _within(x, MAX_BYTES)


def _count(x: object) -> float | None:
    """A per-period count to add to a counter: a number >= 0 (prometheus_client refuses to decrease one)."""
    return _within(x, MAX_COUNT)


class _Family:
    """One metric family: rows by runtime tag (None: not per runtime), each a map label text -> value.

    ``kind`` is "gauge", "counter" or "info" (AWS's ``Info``: a gauge ``NAME_info`` in the 0.0.4 text, an
    ``info`` family in OpenMetrics). A counter's value is ``[total, created]``."""

    __slots__ = ("help", "kind", "name", "rows")

    def __init__(self, name: str, kind: str, help: str) -> None:
        self.name = name
        """The OpenMetrics name: without ``_total`` for a counter, without ``_info`` for an info."""
        self.kind = kind
        self.help = help
        self.rows: dict[str | None, dict[str, Any]] = {}

    def row(self, tag: str | None) -> dict[str, Any]:
        r = self.rows.get(tag)
        if r is None:
            r = self.rows[tag] = {}
        return r

    def render(self, out: list[str], openmetrics: bool) -> None:
        if not any(self.rows.values()):
            return
        name, kind = self.name, self.kind
        if kind == "counter":
            total, created = name + "_total", name + "_created"
            if openmetrics:
                out.append(f"# HELP {name} {self.help}\n# TYPE {name} counter\n")
                for rows in self.rows.values():
                    for lt, (v, c) in rows.items():
                        out.append(f"{total}{{{lt}}} {_fmt(v)}\n{created}{{{lt}}} {_fmt(c)}\n")
                return
            out.append(f"# HELP {total} {self.help}\n# TYPE {total} counter\n")
            out.extend(f"{total}{{{lt}}} {_fmt(v[0])}\n"
                       for rows in self.rows.values() for lt, v in rows.items())
            out.append(f"# HELP {created} {self.help}\n# TYPE {created} gauge\n")
            out.extend(f"{created}{{{lt}}} {_fmt(v[1])}\n"
                       for rows in self.rows.values() for lt, v in rows.items())
            return
        sample = name + "_info" if kind == "info" else name
        if openmetrics:
            out.append(f"# HELP {name} {self.help}\n# TYPE {name} {kind}\n")
        else:
            out.append(f"# HELP {sample} {self.help}\n# TYPE {sample} gauge\n")
        fmt, cache = _fmt, _FMT
        for rows in self.rows.values():
            out.extend([f"{sample}{{{lt}}} {cache.get(v) or fmt(v)}\n" if lt else f"{sample} {fmt(v)}\n"
                        for lt, v in rows.items()])


class Exporter:
    """The state behind ``/metrics``: fed ``FeedEvent`` values (or snapshots), rendered per scrape.

    Args:
        options: what to publish beyond AWS's families.
        clock: Unix time, for counters' ``_created`` and the report age (injected by tests).
        source: the source's name, for ``neurontop_source_info``.
    """

    def __init__(self, options: ExportOptions | None = None, *, clock: Callable[[], float] = time.time,
                 source: str = "") -> None:
        self.options = options or ExportOptions()
        self.clock = clock
        self.lock = threading.Lock()
        self._fams: dict[str, _Family] = {}
        for name, kind, help in _FAMILIES:
            self._fams[name] = _Family(name, kind, help)
        self._instance: tuple[tuple[str, str], ...] | None = None
        self._hardware_done = False
        self._tags: set[str] = set()
        self._labels: dict[object, str] = {}
        self._pods: PodMap | None = None
        """With ``pod_labels``: the report's pods, while its runtimes are read."""
        self._rt_pod: tuple[tuple[str, str], ...] = ()
        """With ``pod_labels``: the pod labels of the runtime being read."""
        # status (neurontop_*)
        self.source = source
        self.tally = SourceTally()
        """The source's state, skipped input, restarts, recording failures: counted as the dashboard counts them."""
        self.reports = 0
        self.last_report: float | None = None
        self.pace = Pace()
        """When the next report is due: ``state="stale"`` by the dashboard's rule."""
        self._created = clock()
        """When the ``neurontop_*`` counters began (their ``_created``)."""
        self._version = 0
        self._cache: dict[bool, tuple[int, str]] = {}
        self._process = _process_registry() if self.options.process_metrics else None

    # --- fed --------------------------------------------------------------------------------------------------
    def apply(self, event: FeedEvent) -> None:
        """One feed event: a report updates the families; the others update the ``neurontop_*`` status."""
        if isinstance(event, Report):
            self.apply_snapshot(event.snapshot)
            return
        with self.lock:
            self.tally.apply(event)
            self._version += 1

    def apply_snapshot(self, snap: Snapshot) -> None:
        """One decoded report, with AWS's rules (module docstring)."""
        report = snap.report
        with self.lock:
            self.reports += 1
            self.last_report = snap.ts
            self.pace.arrived(self.clock(), snap.period())
            if self.tally.state not in _UP_STATES:
                self.tally.state = State.LIVE  # a report says the source is up, whatever it said before
            if self._instance is None and report.instance_info is not None:
                self._set_instance(report.instance_info)
            errors = dict.fromkeys((*GROUPS, "pid_not_visible"), 0)
            runtimes = [rt for rt in report.neuron_runtime_data or () if rt is not None]
            self._pods = snap.pods if self.options.pod_labels else None
            if runtimes:
                self._runtimes(runtimes, errors)
            else:
                self._clear_runtimes()
            self._system(report.system_data, errors)
            hw = report.neuron_hardware_info
            if hw is not None and not self._hardware_done:
                self._set_hardware(hw)
            if report.instance_info is not None and report.instance_info.error:
                errors["instance_info"] += 1
            if hw is not None and hw.error:
                errors["neuron_hardware_info"] += 1
            self._extras(snap, runtimes, errors)
            self._version += 1

    # --- rendered ---------------------------------------------------------------------------------------------
    def render(self, openmetrics: bool = False) -> bytes:
        """The whole exposition: the report families (cached per report), the exporter's own status, and the
        process/python families; OpenMetrics 1.0 when ``openmetrics``, else the 0.0.4 text format."""
        with self.lock:
            version, text = self._cache.get(openmetrics, (-1, ""))
            if version != self._version:
                out: list[str] = []
                for fam in self._fams.values():
                    fam.render(out, openmetrics)
                text = "".join(out)
                self._cache[openmetrics] = (self._version, text)
            tail = self._status(openmetrics)
        parts = [text, tail]
        if self._process is not None:
            parts.append(_render_registry(self._process, openmetrics))
        if openmetrics:
            parts.append("# EOF\n")
        return "".join(parts).encode("utf-8", "replace")

    def series(self) -> int:
        """How many samples the report families hold now (a counter counts twice: total and created)."""
        with self.lock:
            return sum(len(r) * (2 if f.kind == "counter" else 1) for f in self._fams.values()
                       for r in f.rows.values())

    # --- inside: labels ---------------------------------------------------------------------------------------
    def _set_instance(self, info: schema.InstanceInfo) -> None:
        pairs = [(label, _text(getattr(info, field))) for label, field in INSTANCE_LABELS]
        if info.ultraserver_id is not None:
            pairs.append(("ultraserver_id", str(info.ultraserver_id)))
        self._instance = tuple(pairs)
        self._labels.clear()
        row = self._fams["instance"].row(None)
        row.clear()
        row[_label_text(self._instance)] = 1.0

    def _set_hardware(self, hw: schema.HardwareInfo) -> None:
        self._hardware_done = True
        pairs = [("neuron_device_count", _text(hw.neuron_device_count)),
                 ("neuroncore_per_device_count", _text(hw.neuroncore_per_device_count))]
        if hw.neuron_device_memory_size is not None:
            pairs.append(("neuron_device_memory_size", str(hw.neuron_device_memory_size)))
        self._fams["neuron_hardware"].row(None)[_label_text((*(self._instance or ()), *pairs))] = 1.0

    def _lt(self, tag: str | None, *extra: tuple[str, str]) -> str:
        """The label text of one series: instance labels, ``runtime_tag`` when per runtime, ``extra``."""
        if tag is not None and self._pods is not None and not any(k == "pod" for k, _ in extra):
            extra = (*extra, *self._rt_pod)
        key = (tag, extra)
        text = self._labels.get(key)
        if text is None:
            pairs = list(self._instance or ())
            if tag is not None:
                pairs.append(("runtime_tag", tag))
            pairs.extend(extra)
            text = self._labels[key] = _label_text(pairs)
        return text

    def _core_pod(self, core: str) -> tuple[tuple[str, str], ...]:
        """With ``pod_labels``, the labels of the pod holding ``core`` (a per-core series is that pod's, whichever
        runtime reports it); else none."""
        if self._pods is None:
            return ()
        return _pod_pairs(self._pods.cores.get(int(core)))

    # --- inside: AWS's families -------------------------------------------------------------------------------
    def _clear_runtimes(self) -> None:
        for fam in self._fams.values():
            for tag in [t for t in fam.rows if t is not None]:
                del fam.rows[tag]
        self._tags.clear()

    def _runtimes(self, runtimes: list[schema.Runtime], errors: dict[str, int]) -> None:
        present = {str(rt.neuron_runtime_tag) for rt in runtimes}
        gone = self._tags - present
        if gone:
            for fam in self._fams.values():
                for tag in gone:
                    fam.rows.pop(tag, None)
            self._labels = {k: v for k, v in self._labels.items() if k[0] not in gone}  # type: ignore[index]
            self._tags -= gone
        for rt in runtimes:
            tag = str(rt.neuron_runtime_tag)
            if rt.error:
                errors["runtime"] += 1
                self._drop_gauges(tag, schema.RUNTIME_GROUPS)  # failed: no sample, not the last value
                continue
            self._tags.add(tag)
            rep = rt.report
            if rep is None:
                self._drop_gauges(tag, schema.RUNTIME_GROUPS)
                continue
            if self._pods is not None:
                self._rt_pod = _pod_pairs(self._pods.apps.get(rt.pid) if isinstance(rt.pid, int) else None)
            used = self._used_cores(rep) if self.options.used_cores_only else None
            for name in schema.RUNTIME_GROUPS:
                group = getattr(rep, name)
                if group is None or group.error:
                    if group is not None:  # a containerised monitor's /proc/<pid> vCPU error is counted apart
                        errors["pid_not_visible" if pid_not_visible(name, group.error) else name] += 1
                    self._drop_gauges(tag, (name,))  # not reported or failed: no sample
                    continue
                getattr(self, "_" + name)(group, tag, used)

    def _drop_gauges(self, tag: str | None, groups: Iterable[str]) -> None:
        """Remove ``tag``'s gauge samples of ``groups``: a value not reported (or reported as failed) has no
        sample, rather than the last one it had (counters keep their totals)."""
        for name in groups:
            for fam_name in _GROUP_GAUGES.get(name, ()):
                self._fams[fam_name].rows.pop(tag, None)

    @staticmethod
    def _used_cores(rep: schema.RuntimeReport) -> set[str]:
        """Cores this runtime uses: some memory on it, or some utilisation."""
        used: set[str] = set()
        nc = rep.neuroncore_counters
        for k, c in ((nc.neuroncores_in_use if nc is not None else None) or {}).items():
            if c is not None and (_pct(c.neuroncore_utilization) or 0.0) > 0:
                used.add(k)
        mem = rep.memory_used
        ub = mem.neuron_runtime_used_bytes if mem is not None else None
        bd = ub.usage_breakdown if ub is not None else None
        for k, cats in ((bd.neuroncore_memory_usage if bd is not None else None) or {}).items():
            if cats and any((_bytes(v) or 0.0) > 0 for v in cats.values()):
                used.add(k)
        return used

    def _neuroncore_counters(self, g: schema.NeuroncoreCounters, tag: str, used: set[str] | None) -> None:
        fam = self._fams["neuroncore_utilization_ratio"]
        row = fam.row(tag)
        if used is not None:
            row.clear()
        lt = self._lt
        for k, c in (g.neuroncores_in_use or {}).items():
            if c is None or (used is not None and k not in used):
                continue
            v = _pct(c.neuroncore_utilization)
            core = _core_key(k)
            if v is not None and core is not None:
                row[lt(tag, ("neuroncore", core), *self._core_pod(core))] = v / 100.0

    def _neuron_runtime_vcpu_usage(self, g: schema.RuntimeVcpuUsage, tag: str, used: set[str] | None) -> None:
        if g.vcpu_usage is None:
            return
        row = self._fams["neuron_runtime_vcpu_usage_ratio"].row(tag)
        for field in ("user", "system"):
            v = _pct(getattr(g.vcpu_usage, field))
            if v is not None:
                row[self._lt(tag, ("usage_type", field))] = v / 100.0

    def _memory_used(self, g: schema.MemoryUsed, tag: str, used: set[str] | None) -> None:
        ub = g.neuron_runtime_used_bytes
        if ub is None:
            return
        row = self._fams["neuron_runtime_memory_used_bytes"].row(tag)
        for loc in ("host", "neuron_device"):
            v = _bytes(getattr(ub, loc))
            if v is not None:
                row[self._lt(tag, ("memory_location", loc))] = v
        bd = ub.usage_breakdown
        per_core = (bd.neuroncore_memory_usage if bd is not None else None) or {}
        rows = [self._fams[f"neuroncore_memory_usage_{c}"].row(tag) for c in CORE_MEMORY]
        if used is not None:
            for r in rows:
                r.clear()
        lt = self._lt
        for k, cats in per_core.items():
            core = _core_key(k)
            if cats is None or core is None or (used is not None and k not in used):
                continue
            label = lt(tag, ("memory_location", "None"), ("neuroncore", core), *self._core_pod(core))
            for cat, r in zip(CORE_MEMORY, rows, strict=True):
                v = _bytes(cats.get(cat))
                if v is not None:
                    r[label] = v

    def _execution_stats(self, g: schema.ExecutionStats, tag: str, used: set[str] | None) -> None:
        now = None
        for fam_name, label, counts in (("execution_errors", "error_type", g.error_summary),
                                        ("execution_status", "status_type", g.execution_summary)):
            row = self._fams[fam_name].row(tag)
            for kind, n in (counts or {}).items():
                v = _count(n)
                if v is None:
                    continue
                lt = self._lt(tag, (label, kind))
                cur = row.get(lt)
                if cur is None:
                    now = now if now is not None else self.clock()
                    row[lt] = [v, now]
                else:
                    cur[0] += v
        lat = g.latency_stats
        for fam_name, pcts in (("execution_latency_seconds", lat.total_latency if lat else None),
                               ("neurontop_execution_device_latency_seconds", lat.device_latency if lat else None)):
            row = self._fams[fam_name].row(tag)
            row.clear()  # null (idle, or not reported): no sample, not the last values as AWS's exporter leaves
            if pcts is None:
                continue
            for p, v in pcts.items():
                f = _within(v, MAX_SECONDS)
                if f is not None:
                    row[self._lt(tag, ("percentile", p))] = f

    def _system(self, system: schema.SystemData | None, errors: dict[str, int]) -> None:
        for name in schema.SYSTEM_GROUPS:
            group = getattr(system, name) if system is not None else None
            if group is None or group.error:
                errors[name] += 1 if group is not None else 0
                self._drop_gauges(None, (name,))
                continue
            getattr(self, "_" + name)(group)

    def _neuron_hw_counters(self, g: schema.HwCounters) -> None:
        row = self._fams["hardware_ecc_events"].row(None)
        now = None
        for dev in g.neuron_devices or ():
            if dev is None or dev.neuron_device_index is None:
                continue
            index = str(dev.neuron_device_index)
            for event in ECC_EVENTS:
                v = _count(getattr(dev, event))
                if v is None:
                    continue
                lt = self._lt(None, ("event_type", event), ("neuron_device_index", index))
                cur = row.get(lt)
                if cur is None:
                    now = now if now is not None else self.clock()
                    row[lt] = [v, now]
                else:
                    cur[0] += v

    def _vcpu_usage(self, g: schema.VcpuUsage) -> None:
        if g.usage_data is not None:
            self._fams["system_vcpu_count"].row(None)[self._lt(None)] = float(len(g.usage_data))
        avg = g.average_usage
        if avg is None:
            return
        row = self._fams["system_vcpu_usage_ratio"].row(None)
        for usage_type, fields in (("user", ("user", "nice")), ("system", ("system", "io_wait", "irq", "soft_irq"))):
            vals = [_pct(getattr(avg, f)) for f in fields]
            if any(v is None for v in vals):
                continue
            row[self._lt(None, ("usage_type", usage_type))] = min(sum(vals), 100.0) / 100.0  # type: ignore[arg-type]

    def _memory_info(self, g: schema.MemoryInfo) -> None:
        for what in ("memory", "swap"):
            for stat in ("total_bytes", "used_bytes"):
                v = _bytes(getattr(g, f"{what}_{stat}"))
                if v is not None:
                    self._fams[f"system_{what}_{stat}"].row(None)[self._lt(None)] = v

    # --- inside: ours -----------------------------------------------------------------------------------------
    def _extras(self, snap: Snapshot, runtimes: list[schema.Runtime], errors: dict[str, int]) -> None:
        """The per-report ``neurontop_*`` families: each core's utilisation by the one rule (``Snapshot.all``:
        ``derived.core_utilization``), per-device memory, group errors."""
        per_device: dict[int, float] = {}
        cpd = snap.cores_per_device
        unknown = False  # some runtime's memory is not known (failed, not reported): a device without data is not 0
        for rt in runtimes:
            rep = rt.report
            mem = rep.memory_used if rep is not None else None
            if rt.error or mem is None or mem.error:
                unknown = True
                continue
            ub = mem.neuron_runtime_used_bytes
            bd = ub.usage_breakdown if ub is not None else None
            for k, cats in ((bd.neuroncore_memory_usage if bd is not None else None) or {}).items():
                core = _core_key(k)
                if cats is None or core is None:
                    continue
                total = sum(v for v in (_bytes(x) for x in cats.values()) if v is not None and v > 0)
                dev = int(core) // cpd
                per_device[dev] = per_device.get(dev, 0.0) + total
        fams = self._fams
        row = fams["neurontop_neuroncore_utilization_ratio"].row(None)
        row.clear()
        for index, u in sorted(snap.all.core_stats.util.items()):
            v = _pct(u)
            if v is not None:
                row[self._lt(None, ("neuroncore", str(index)))] = v / 100.0
        size = _bytes(snap.hardware.neuron_device_memory_size)
        used_row = fams["neurontop_device_memory_used_bytes"].row(None)
        total_row = fams["neurontop_device_memory_total_bytes"].row(None)
        used_row.clear()
        total_row.clear()
        devices = range(snap.device_count) if snap.has_neuron else range(0)
        for dev in sorted(set(devices) | set(per_device)):
            label = self._lt(None, ("neuron_device_index", str(dev)))
            if dev in per_device or not unknown:
                used_row[label] = per_device.get(dev, 0.0)
            if size is not None:
                total_row[label] = size
        pod_row = fams["neurontop_neuroncore_pod"].row(None)
        pod_row.clear()
        for core_index, ref in sorted(snap.pods.cores.items()):
            pod_row[self._lt(None, ("neuroncore", str(core_index)), *_pod_pairs(ref))] = 1.0
        err_row = fams["neurontop_metric_group_errors"].row(None)
        hidden = errors.pop("pid_not_visible", 0)
        for group, n in errors.items():
            err_row[_label_text((("group", group),))] = float(n)
        fams["neurontop_runtimes_pid_not_visible"].row(None)[""] = float(hidden)
        fams["neurontop_runtimes"].row(None)[""] = float(len(runtimes))

    def _status(self, openmetrics: bool) -> str:
        """The exporter's own families, made at each scrape (the report's age moves with the clock)."""
        out: list[str] = []
        now = self.clock()
        up = 1.0 if self.tally.state in _UP_STATES and self.last_report is not None else 0.0
        state = self.tally.state.value
        if self.tally.state is State.LIVE and self.pace.stale(now):
            state = "stale"  # the dashboard's STALE: no report for three of the reports' own periods
        gauges: list[tuple[str, str, list[tuple[str, float]]]] = [
            ("neurontop_info", "neuron-top exporter version", [(f'version="{__version__}"', 1.0)]),
            ("neurontop_source_up", "1 while the report source is live and has sent a report, else 0",
             [("", up)]),
            ("neurontop_source_info", "The report source and its state",
             [(_label_text((("source", self.source), ("state", state))), 1.0)]),
        ]
        if self.last_report is not None:
            gauges.append(("neurontop_last_report_timestamp_seconds", "Unix time of the last report",
                           [("", self.last_report)]))
            gauges.append(("neurontop_last_report_age_seconds", "Seconds since the last report",
                           [("", max(0.0, now - self.last_report))]))
        for name, help, samples in gauges:
            out.append(f"# HELP {name} {help}\n# TYPE {name} gauge\n")
            out.extend(f"{name}{{{lt}}} {_fmt(v)}\n" if lt else f"{name} {_fmt(v)}\n" for lt, v in samples)
        for name, help, value in (
            ("neurontop_reports", "Reports received", self.reports),
            ("neurontop_input_skipped", "Input items skipped (not reports: malformed, truncated)", self.tally.skipped),
            ("neurontop_source_restarts", "Times neuron-monitor exited and was started again", self.tally.restarts),
            ("neurontop_recording_errors", "Recording write failures", self.tally.recording_errors),
        ):
            created = self._created
            if openmetrics:
                out.append(f"# HELP {name} {help}\n# TYPE {name} counter\n"
                           f"{name}_total {_fmt(value)}\n{name}_created {_fmt(created)}\n")
            else:
                out.append(f"# HELP {name}_total {help}\n# TYPE {name}_total counter\n{name}_total {_fmt(value)}\n"
                           f"# HELP {name}_created {help}\n# TYPE {name}_created gauge\n"
                           f"{name}_created {_fmt(created)}\n")
        return "".join(out)


def _text(value: object) -> str:
    """A label value from a report field: AWS's ``str(value)``, except that a missing field is empty rather than
    "None" (AWS's script fails on a report without it; the built-in collector has no zone, region or subnet)."""
    return "" if value is None else str(value)


def _core_key(k: str) -> str | None:
    """A core index as AWS writes it (``int(nc_idx)``: "07" -> "7"), or None when the key is not an index."""
    if k.isdigit():
        return k if k[0] != "0" or k == "0" else str(int(k))
    try:
        return str(int(k))
    except ValueError:
        return None


_FAMILIES: tuple[tuple[str, str, str], ...] = (
    # AWS's families, in the order its script first creates them for a report with runtimes
    ("neuroncore_utilization_ratio", "gauge", "NeuronCore utilization ratio"),
    ("neuron_runtime_vcpu_usage_ratio", "gauge", "Runtime vCPU utilization ratio"),
    ("neuron_runtime_memory_used_bytes", "gauge", "Runtime memory used bytes"),
    *((f"neuroncore_memory_usage_{c}", "gauge", f"NeuronCore memory utilization for {c}") for c in CORE_MEMORY),
    ("execution_errors", "counter", "Execution errors total"),
    ("execution_status", "counter", "Execution status total"),
    ("execution_latency_seconds", "gauge", "Execution latency in seconds"),
    ("hardware_ecc_events", "counter", "Hardware ecc events total"),
    ("system_vcpu_count", "gauge", "System vCPU count"),
    ("system_vcpu_usage_ratio", "gauge", "System CPU utilization ratio"),
    *((f"system_{w}_{s}", "gauge", f"System {w} {s} bytes") for w in ("memory", "swap")
      for s in ("total_bytes", "used_bytes")),
    ("instance", "info", "EC2 instance information"),
    ("neuron_hardware", "info", "Neuron Hardware Information"),
    # ours
    ("neurontop_execution_device_latency_seconds", "gauge",
     "Execution latency on the device in seconds (neuron-monitor's device_latency)"),
    ("neurontop_neuroncore_utilization_ratio", "gauge",
     "NeuronCore utilization ratio per core: the runtimes' shares added up, at most 1 (runtimes report 0 for cores they do "
     "not use)"),
    ("neurontop_device_memory_used_bytes", "gauge", "Neuron device memory used by all runtimes, in bytes"),
    ("neurontop_device_memory_total_bytes", "gauge", "Neuron device memory size, in bytes"),
    ("neurontop_runtimes", "gauge", "Neuron runtimes in the last report"),
    ("neurontop_neuroncore_pod", "info",
     "The Kubernetes pod holding each NeuronCore (kubelet PodResources, cgroups or neuron_k8s_info), 1 per core; "
     "join: * on (instance_id, neuroncore) group_left (pod, namespace) neurontop_neuroncore_pod_info"),
    ("neurontop_metric_group_errors", "gauge",
     "Metric groups (or runtimes, group=runtime) that carried an error in the last report"),
    ("neurontop_runtimes_pid_not_visible", "gauge",
     "Runtimes whose /proc/<pid>/stat neuron-monitor cannot open (a container without the host PID namespace: "
     "no per-runtime vCPU; not counted as a metric group error)"),
)


def _process_registry():  # type: ignore[no-untyped-def]
    """prometheus_client's process, platform and GC collectors in a registry of their own (not the global one,
    so several exporters in one process, as in tests, do not collide)."""
    from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector

    registry = CollectorRegistry(auto_describe=False)
    GCCollector(registry=registry)
    PlatformCollector(registry=registry)
    ProcessCollector(registry=registry)
    return registry


def _render_registry(registry, openmetrics: bool) -> str:  # type: ignore[no-untyped-def]
    if openmetrics:
        from prometheus_client.openmetrics.exposition import generate_latest as om

        text: str = om(registry).decode()
        return text[: -len("# EOF\n")] if text.endswith("# EOF\n") else text
    from prometheus_client.exposition import generate_latest

    return generate_latest(registry).decode()


def exposition(reports: Iterable[Snapshot | bytes | FeedEvent], *, options: ExportOptions | None = None,
               openmetrics: bool = False, clock: Callable[[], float] = time.time, source: str = "") -> str:
    """The exposition after feeding ``reports`` in order: raw report bytes, snapshots or feed events.

    For tools and tests (the fleet view makes many hosts' scrapes with it). Process families are left out
    unless ``options`` asks for them: they describe this process, not the reports.

    Raises ``neuron_top.decode.DecodeError`` for bytes that are not a report.
    """
    exp = Exporter(options or ExportOptions(process_metrics=False), clock=clock, source=source)
    for item in _items(reports, clock):
        if isinstance(item, Snapshot):
            exp.apply_snapshot(item)
        else:
            exp.apply(item)
    return exp.render(openmetrics).decode()


def _items(reports: Iterable[Snapshot | bytes | FeedEvent], clock: Callable[[], float]
           ) -> Iterator[Snapshot | FeedEvent]:
    for n, item in enumerate(reports, 1):
        yield snapshot_from(item, clock(), n) if isinstance(item, bytes) else item

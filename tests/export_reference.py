"""AWS's exporter rebuilt the naive way: prometheus_client Gauge/Counter/Info objects set per report.

It is what ``neuron-monitor-prometheus.py`` does (its rules as the reference table states them, written from
scratch here against our decoded structs), with our two deliberate differences (bad values skipped; the ECC
counters survive an idle machine). Two users:

* the tests compare our exposition with this one byte for byte (prometheus_client writes both formats), so
  our hand-made text is proved to be what the library would write;
* ``benchmarks/bench_export.py`` measures it as the baseline (``labels(...).set`` per series per report, the
  library's ``generate_latest`` per scrape).
"""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, Counter, Gauge, Info

from neuron_top import schema

INSTANCE = (("instance_name", "instance_name"), ("instance_id", "instance_id"), ("instance_type", "instance_type"),
            ("availability_zone", "instance_availability_zone"), ("region", "instance_region"),
            ("subnet_id", "subnet_id"))
CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")


def _num(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


class NaiveExporter:
    """One registry, AWS's metric objects made up front (in our family order, so the texts line up)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.inst: dict[str, str] | None = None
        self.made = False
        self.hw_done = False
        self.tags: set[str] = set()

    def _make(self) -> None:
        r, il = self.registry, [k for k, _ in INSTANCE]
        if self.inst and "ultraserver_id" in self.inst:
            il.append("ultraserver_id")
        rl = [*il, "runtime_tag"]
        self.util = Gauge("neuroncore_utilization_ratio", "NeuronCore utilization ratio", [*rl, "neuroncore"],
                          registry=r)
        self.rvcpu = Gauge("neuron_runtime_vcpu_usage_ratio", "Runtime vCPU utilization ratio",
                           [*rl, "usage_type"], registry=r)
        self.rmem = Gauge("neuron_runtime_memory_used_bytes", "Runtime memory used bytes",
                          [*rl, "memory_location"], registry=r)
        self.cmem = {c: Gauge(f"neuroncore_memory_usage_{c}", f"NeuronCore memory utilization for {c}",
                              [*rl, "neuroncore", "memory_location"], registry=r) for c in CORE_MEMORY}
        self.errs = Counter("execution_errors_total", "Execution errors total", [*rl, "error_type"], registry=r)
        self.stat = Counter("execution_status_total", "Execution status total", [*rl, "status_type"], registry=r)
        self.lat = Gauge("execution_latency_seconds", "Execution latency in seconds", [*rl, "percentile"],
                         registry=r)
        self.ecc = Counter("hardware_ecc_events_total", "Hardware ecc events total",
                           [*il, "event_type", "neuron_device_index"], registry=r)
        self.vcount = Gauge("system_vcpu_count", "System vCPU count", il, registry=r)
        self.vratio = Gauge("system_vcpu_usage_ratio", "System CPU utilization ratio", [*il, "usage_type"],
                            registry=r)
        self.sysmem = {f"{w}_{s}": Gauge(f"system_{w}_{s}", f"System {w} {s} bytes", il, registry=r)
                       for w in ("memory", "swap") for s in ("total_bytes", "used_bytes")}
        self.instance = Info("instance", "EC2 instance information", registry=r)
        self.hardware = Info("neuron_hardware", "Neuron Hardware Information", registry=r)
        self.per_runtime = [self.util, self.rvcpu, self.rmem, *self.cmem.values(), self.errs, self.stat, self.lat]

    def apply(self, report: schema.Report) -> None:
        if self.inst is None and report.instance_info is not None:
            info = report.instance_info
            self.inst = {k: "" if getattr(info, f) is None else str(getattr(info, f)) for k, f in INSTANCE}
            if info.ultraserver_id is not None:
                self.inst["ultraserver_id"] = str(info.ultraserver_id)
        if not self.made:
            self._make()
            self.made = True
            if self.inst is not None:
                self.instance.info(self.inst)
        inst = self.inst or {}
        runtimes = [rt for rt in report.neuron_runtime_data or () if rt is not None]
        if runtimes:
            present = {str(rt.neuron_runtime_tag) for rt in runtimes}
            for gone in self.tags - present:
                for m in self.per_runtime:
                    for key in [k for k in m._metrics if k[len(inst)] == gone]:
                        m.remove(*key)
            self.tags &= present
            for rt in runtimes:
                if rt.error or rt.report is None:
                    continue
                tag = str(rt.neuron_runtime_tag)
                self.tags.add(tag)
                self._runtime(rt.report, {**inst, "runtime_tag": tag})
        else:
            for m in self.per_runtime:
                m.clear()
            self.tags.clear()
        sd = report.system_data
        if sd is not None:
            self._system(sd, inst)
        hw = report.neuron_hardware_info
        if hw is not None and not self.hw_done:
            self.hw_done = True
            labels = {k: "" if getattr(hw, k) is None else str(getattr(hw, k))
                      for k in ("neuron_device_count", "neuroncore_per_device_count")} | inst
            if hw.neuron_device_memory_size is not None:
                labels["neuron_device_memory_size"] = str(hw.neuron_device_memory_size)
            self.hardware.info(labels)

    def _runtime(self, rep: schema.RuntimeReport, rl: dict[str, str]) -> None:
        nc = rep.neuroncore_counters
        if nc is not None and not nc.error:
            for k, c in (nc.neuroncores_in_use or {}).items():
                v = _num(c.neuroncore_utilization) if c is not None else None
                if v is not None:
                    self.util.labels(**rl, neuroncore=int(k)).set(v / 100.0)
        vc = rep.neuron_runtime_vcpu_usage
        if vc is not None and not vc.error and vc.vcpu_usage is not None:
            for f in ("user", "system"):
                v = _num(getattr(vc.vcpu_usage, f))
                if v is not None:
                    self.rvcpu.labels(**rl, usage_type=f).set(v / 100.0)
        mu = rep.memory_used
        ub = mu.neuron_runtime_used_bytes if mu is not None and not mu.error else None
        if ub is not None:
            for loc in ("host", "neuron_device"):
                v = _num(getattr(ub, loc))
                if v is not None:
                    self.rmem.labels(**rl, memory_location=loc).set(v)
            bd = ub.usage_breakdown
            for k, cats in ((bd.neuroncore_memory_usage if bd is not None else None) or {}).items():
                for c in CORE_MEMORY:
                    v = _num((cats or {}).get(c))
                    if v is not None:
                        self.cmem[c].labels(**rl, neuroncore=int(k), memory_location=None).set(v)
        ex = rep.execution_stats
        if ex is not None and not ex.error:
            for counter, label, counts in ((self.errs, "error_type", ex.error_summary),
                                           (self.stat, "status_type", ex.execution_summary)):
                for kind, n in (counts or {}).items():
                    v = _num(n)
                    if v is not None and v >= 0:
                        counter.labels(**rl, **{label: kind}).inc(v)
            ls = ex.latency_stats
            if ls is not None and ls.total_latency is not None:
                for p, v in ls.total_latency.items():
                    f = _num(v)
                    if f is not None:
                        self.lat.labels(**rl, percentile=p).set(f)

    def _system(self, sd: schema.SystemData, inst: dict[str, str]) -> None:
        hw = sd.neuron_hw_counters
        if hw is not None and not hw.error:
            for d in hw.neuron_devices or ():
                if d is None or d.neuron_device_index is None:
                    continue
                for ev in ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected"):
                    v = _num(getattr(d, ev))
                    if v is not None and v >= 0:
                        self.ecc.labels(**inst, event_type=ev, neuron_device_index=d.neuron_device_index).inc(v)
        vu = sd.vcpu_usage
        if vu is not None and not vu.error:
            if vu.usage_data is not None:
                self.vcount.labels(**inst).set(len(vu.usage_data))
            a = vu.average_usage
            if a is not None:
                for t, fs in (("user", ("user", "nice")), ("system", ("system", "io_wait", "irq", "soft_irq"))):
                    vals = [_num(getattr(a, f)) for f in fs]
                    if None not in vals:
                        self.vratio.labels(**inst, usage_type=t).set(min(sum(vals), 100.0) / 100.0)  # type: ignore[arg-type]
        mi = sd.memory_info
        if mi is not None and not mi.error:
            for key, g in self.sysmem.items():
                v = _num(getattr(mi, key))
                if v is not None:
                    g.labels(**inst).set(v)

"""``--once``: one snapshot as plain text or JSON, for scripts and for a quick look without the TUI.

The text mirrors the dashboard's panels. It never contains colour or control characters: every string from the
data has passed through ``textsafe.clean``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from neuron_top import __version__, fmt, schema
from neuron_top.derived import COUNTED, RATED
from neuron_top.k8s.model import PodRef
from neuron_top.output.cells import (
    APP_COLUMNS,
    FAILED,
    app_cells,
    core_cells,
    latency_row,
    memory_values,
    runtime_vcpu,
)
from neuron_top.snapshot import (
    DEVICE_CATEGORIES,
    HOST_CATEGORIES,
    PERCENTILES,
    AppView,
    Snapshot,
    finite,
)
from neuron_top.textsafe import clean

if TYPE_CHECKING:
    from neuron_top.session import Session

__all__ = [
    "SourceInfo", "app_lines", "as_json", "core_lines", "ecc_lines", "exec_lines", "header_lines", "latency_lines",
    "memory_lines", "pod_lines", "text", "vcpu_lines",
]

_CPU_NAMES = {"io_wait": "iowait", "soft_irq": "softirq"}


@dataclass
class SourceInfo:
    """What the header says about where data comes from."""

    name: str
    state: str
    skipped: int = 0
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    reports: int = 0
    position: str = ""
    """For replay: "report 12/345"."""

    @classmethod
    def of(cls, session: Session) -> SourceInfo:
        """What a ``Session`` says about its source, as the dashboard's header says it (``Session.shown``: the
        same states, "no data" for input without a report), so ``--once`` and the screen use one vocabulary."""
        st = session.shown()
        return cls(name=st.name, state=st.state, skipped=st.skipped,
                   skipped_reasons={k: n for k, (n, _) in session.skip_reasons.items()}, reports=session.reports,
                   position=st.position)


def header_lines(snap: Snapshot, src: SourceInfo) -> list[str]:
    """The ``--once`` header: source, state, time, instance and what was skipped."""
    inst, hw = snap.instance, snap.hardware
    lines = [f"neuron-top {__version__}  source: {clean(src.name)} [{src.state.upper()}]"
             + (f"  {src.position}" if src.position else "")]
    where = " ".join(clean(x) for x in (inst.instance_name, inst.instance_id, inst.instance_type,
                                        inst.instance_region, inst.instance_availability_zone) if x)
    lines.append(f"instance: {where or '-'}")
    if snap.has_neuron:
        lnc = f"  LNC={hw.logical_neuroncore_config}" if hw.logical_neuroncore_config else ""
        dv = f" {clean(hw.neuron_device_version)}" if hw.neuron_device_version else ""
        cv = f" {clean(hw.neuroncore_version)}" if hw.neuroncore_version else ""
        each = f", {fmt.human_bytes(hw.neuron_device_memory_size)} each" if hw.neuron_device_memory_size else ""
        where = {"instance type": f" (layout of {clean(inst.instance_type or '', 30)})",
                 "": " (layout unknown: cores per device guessed)"}.get(snap.layout_source, "")
        lines.append(f"hardware: {snap.device_count}x {clean(hw.neuron_device_type or 'neuron device')}{dv}, "
                     f"{snap.cores_per_device} NeuronCore{cv} per device{each}{lnc}{where}")
    else:
        lines.append(f"hardware: {snap.no_devices}")
    if snap.filter is not None:
        lines.append(f"{snap.filter.describe()} (--tag; apps, cores and totals below are theirs alone)")
    pods = snap.pods.status()
    if pods:
        lines.append(pods)
    if src.skipped:
        why = ", ".join(f"{k}: {v}" for k, v in sorted(src.skipped_reasons.items()))
        lines.append(f"skipped: {src.skipped} bad input" + (f" ({why})" if why else ""))
    return lines


def core_lines(snap: Snapshot, app: AppView, flops: bool = False, physical: bool = False,
               digits: int = 0) -> list[str]:
    """The core grid as the dashboard draws it: its title, then each device's cells and memory used of its size
    (``output.cells``); ``digits`` decimals in the utilization cells (``--precise``: 2, as AWS neuron-top prints them)."""
    if not snap.has_neuron:
        return ["NeuronCores: none (no Neuron devices reported)"]
    cells = core_cells(snap, app, flops, physical, digits)
    out = [f"NeuronCores ({clean(app.label)}): {cells.title}"]
    cpd = snap.cores_per_device
    width = len(f"ND{max(snap.device_count - 1, 0)}")
    mem_w = cells.memory_width
    for dev in range(snap.device_count):
        values = [f"[{text}]" for c in range(cpd) for text, _, _ in cells.core(dev * cpd + c)]
        mem = f"  mem {cells.memory(dev)[0]:>{mem_w}}" if mem_w else ""  # the grid's MEM column
        out.append(f"  {f'ND{dev}':<{width}}  " + " ".join(values) + mem)
    return out


def vcpu_lines(snap: Snapshot, app: AppView) -> list[str]:
    """The ``--once`` vCPU lines: the machine's busy share by kind, context switches, and the app's runtime vCPU."""
    cpu, g = snap.cpu, snap.vcpu
    out = []
    if not cpu.kinds:
        out.append("vCPU: no data" + (f" ({clean(g.error)})" if g is not None and g.error else ""))
    else:
        parts = " ".join(f"{_CPU_NAMES.get(k, k)} {fmt.pct(v)}" for k, v in cpu.kinds)
        ctx = f"  ctxsw {fmt.rate(cpu.ctxsw)}" if cpu.ctxsw is not None else ""
        out.append(f"vCPU ({cpu.count}): {fmt.pct(cpu.busy)} busy: {parts}{ctx}")
    ru, rs = runtime_vcpu(app)
    out.append(f"runtime vCPU ({clean(app.label)}): user {ru} system {rs}")
    return out


def app_lines(snap: Snapshot) -> list[str]:
    """Every app's row of the dashboard's apps panel: its cores, load, throughput, p50/p99 and errors."""
    if not snap.apps:
        return ["apps: none"]
    rows = [(clean(a.label), app_cells(snap, a)) for a in snap.apps]
    label_w = max(3, *(len(label) for label, _ in rows))
    widths = {k: max(len(h), *(len(r[k]) for _, r in rows)) for k, h in APP_COLUMNS}
    out = ["apps (throughput, latency, errors in the last report):",
           f"  {'app':<{label_w}}  " + "  ".join(f"{h:>{widths[k]}}" for k, h in APP_COLUMNS)]
    out += [f"  {label:<{label_w}}  " + "  ".join(f"{r[k]:>{widths[k]}}" for k, _ in APP_COLUMNS)
            for label, r in rows]
    return out


def pod_lines(snap: Snapshot) -> list[str]:
    """The pods screen as lines: each pod with Neuron cores, its cores, their utilization, the ones allocated but
    idle, its apps; then the cores the node offers that no pod holds. Empty when no pod is known."""
    usage = snap.pod_usage
    free = snap.pods.free
    if not usage and not free:
        return []
    out = [f"pods ({snap.pods.source or 'none'}): cores, utilization, allocated but idle"]
    for u in usage:
        cont = f" [{','.join(u.containers)}]" if u.containers else ""
        idle = f"  idle {fmt.core_ranges(u.idle)}" if u.idle else ""
        apps = f"  pids {','.join(map(str, u.pids))}" if u.pids else ""
        out.append(f"  {u.ref.name}{cont}  cores {fmt.core_ranges(u.cores) or '-'}  util {fmt.pct(u.util)}{idle}{apps}")
    if free:
        out.append(f"  not allocated: cores {fmt.core_ranges(free)}")
    return out


def memory_lines(snap: Snapshot, app: AppView) -> list[str]:
    """The ``--once`` memory lines: host and device, by category."""
    h, d = app.used_bytes
    out = [f"memory ({clean(app.label)}):"]
    for head, values in (("  host  ", memory_values(app, HOST_CATEGORIES, app.host_breakdown, h)),
                         ("  device", memory_values(app, DEVICE_CATEGORIES, app.device_breakdown, d))):
        out.append(head + "".join(f" {k.lower() if k == 'Total' else k} {fmt.human_bytes(v)} " for k, v in values)
                   .rstrip())
    m = snap.host_memory
    if m is not None and m.memory_total_bytes:
        out.append(f"  host memory {fmt.human_bytes(m.memory_used_bytes)}/{fmt.human_bytes(m.memory_total_bytes)}"
                   f"  swap {fmt.human_bytes(m.swap_used_bytes)}/{fmt.human_bytes(m.swap_total_bytes)}")
    for model in app.models[:50]:
        out.append(f"  model {model.name} id={model.model_id} device {fmt.human_bytes(model.device_bytes)} "
                   f"host {fmt.human_bytes(model.host_bytes)} cores {','.join(map(str, model.cores(snap.cores_per_device))) or '-'}")
    if len(app.models) > 50:
        out.append(f"  ... {len(app.models) - 50} more models")
    return out


def ecc_lines(snap: Snapshot) -> list[str]:
    """The ``--once`` ECC lines: each device's corrected and uncorrected events."""
    if not snap.ecc:
        return ["ECC: no data"]
    out = ["ECC events in this report (DRAM corrected/uncorrected, SRAM corrected/uncorrected):"]
    for e in snap.ecc:
        line = f"  ND{e.device:<3} dram {e.mem_corrected}/{e.mem_uncorrected}  sram {e.sram_corrected}/{e.sram_uncorrected}"
        if e.uncorrected:
            line += "  UNCORRECTED"
        out.append(line)
    return out


def latency_lines(snap: Snapshot, app: AppView) -> list[str]:
    """The ``--once`` latency lines: the app's percentiles."""
    apps = snap.apps if app.is_all else (app,)
    out = ["latency (" + " ".join(PERCENTILES) + "):"]
    if not apps:
        out.append(f"  {snap.no_apps}")
    for a in apps:
        for kind in ("total", "device"):
            out.append(f"  {clean(a.label)} {kind}: {' '.join(latency_row(a, kind, PERCENTILES))}")
    return out


def exec_lines(snap: Snapshot, app: AppView) -> list[str]:
    """As the executions panel: outcomes per second (timeouts, bad input and queue rejections as counts in the
    report's period), then every error type per second."""
    apps = snap.apps if app.is_all else (app,)
    out = ["executions / errors (per second; counts in the report's period):"]
    if not apps:
        out.append(f"  {snap.no_apps}")
    for a in apps:
        r = a.rates
        if a.failure("execution_stats"):
            out.append(f"  {clean(a.label)}: {FAILED}")
            continue
        ex = "  ".join([*(f"{k} {fmt.per_period(r.executions[k], r.period)}" for k in RATED),
                        *(f"{k} {'-' if r.executions[k] is None else r.executions[k]}" for k in COUNTED)])
        errs = "  ".join(f"{k} {fmt.per_period(r.errors[k], r.period)}" for k in snap.error_types if k in r.errors)
        out.append(f"  {clean(a.label)}: {ex}  bad {fmt.per_period(r.bad_count, r.period)}")
        out.append(f"  {' ' * len(clean(a.label))}  errors: {errs or ('none' if a.execution.error_summary is not None else '-')}")
    return out


def text(snap: Snapshot, src: SourceInfo, pid: int | None = None, flops: bool = False, digits: int = 0) -> str:
    """The ``--once`` text: what the dashboard's panels show, as plain lines.

    Args:
        snap: the report to print.
        src: its source, state and skipped input (the header).
        pid: the app to show (None: every app together).
        flops: show FLOPS instead of utilization where the panels would.
        digits: decimals of the core grid's utilization cells (``--precise``: 2).

    Returns:
        The lines, each ending in a newline.
    """
    app = snap.app(pid)
    lines = header_lines(snap, src)
    lines.append("apps: " + (" ".join(f"[{i + 1}] {clean(a.label)} (pid {a.pid}){_pod_of(snap, a)}"
                                      for i, a in enumerate(snap.apps)) or "none"))
    for part in (core_lines(snap, app, flops, digits=digits), vcpu_lines(snap, app), app_lines(snap),
                 pod_lines(snap), memory_lines(snap, app), ecc_lines(snap), latency_lines(snap, app),
                 exec_lines(snap, app)):
        if not part:
            continue
        lines.append("")
        lines.extend(part)
    statuses = snap.group_statuses
    if statuses:
        lines.append("")
        lines.append(f"errors reported by metric groups ({len(statuses)}):")
        lines.extend(f"  {s.where}: {s.error}" for s in statuses[:40])
    return "\n".join(lines) + "\n"


def _pod_of(snap: Snapshot, a: AppView) -> str:
    ref = snap.app_pod(a)
    return f" pod {ref.name}" if ref is not None else ""


def _ref_dict(ref: PodRef | None) -> dict[str, str] | None:
    if ref is None:
        return None
    return {"namespace": ref.namespace, "pod": ref.pod, "container": ref.container, "source": ref.source}


def _pods_dict(snap: Snapshot) -> dict[str, Any]:
    m = snap.pods
    return {
        "source": m.source or None, "note": m.note or None,
        "cores": {str(i): _ref_dict(r) for i, r in sorted(m.cores.items())},
        "offered_cores": sorted(m.offered) if m.offered is not None else None,
        "free_cores": list(m.free) if m.free is not None else None,
        "pods": [{"namespace": u.ref.namespace, "pod": u.ref.pod, "containers": list(u.containers),
                  "cores": list(u.cores), "utilization": u.util, "idle_cores": list(u.idle), "pids": list(u.pids)}
                 for u in snap.pod_usage],
    }


def _app_dict(a: AppView, cpd: int, pod: PodRef | None = None) -> dict[str, Any]:
    return {
        "pid": a.pid, "tag": a.tag, "label": a.label, "error": a.error or None, "pod": _ref_dict(pod),
        "cores": {str(i): {"utilization": finite(c.neuroncore_utilization), "flops": finite(c.flops),
                           "effective_flops": finite(c.effective_flops),
                           "v3d": {clean(k): finite(v.neuroncore_utilization) for k, v in (c.v3d or {}).items() if v}
                           or None}
                  for i, c in sorted(a.cores.items())},
        "vcpu": {"user": a.vcpu[0], "system": a.vcpu[1]},
        "memory": {"host": a.used_bytes[0], "device": a.used_bytes[1], "host_breakdown": a.host_breakdown,
                   "device_breakdown": a.device_breakdown,
                   "per_core": {str(i): v for i, v in sorted(a.core_memory.items())}},
        "models": [{"name": m.name, "uuid": m.uuid, "model_id": m.model_id, "is_running": m.is_running,
                    "device_bytes": m.device_bytes, "host_bytes": m.host_bytes, "cores": list(m.cores(cpd)),
                    "subgraphs": [{"name": s.name, "core": s.core, "device": s.device, "extra": dict(s.extra)}
                                  for s in m.subgraphs]} for m in a.models],
        "latency": {"total": a.latency("total"), "device": a.latency("device")},
        "execution_summary": a.exec_summary, "error_summary": a.error_summary, "period": a.period,
        # as shown: the four states (a value, "-" not reported, "idle", "err" failed) and the rules' figures
        "shown": {
            "latency": {"state": a.latency_shown.state, "values": dict(a.latency_shown.values) or None},
            "errors_per_second": a.rates.errors_per_second, "bad": a.rates.bad_count,
            "bad_per_second": a.rates.bad_per_second,
            "failed": {g: why for g in schema.RUNTIME_GROUPS if (why := a.failure(g))},
        },
    }


def as_json(snap: Snapshot, src: SourceInfo) -> bytes:
    """The ``--json`` document: the snapshot's figures as neuron-top shows them, with where they came from.

    Args:
        snap: the report to print.
        src: its source, state and skipped input.

    Returns:
        One JSON object, UTF-8, without a final newline.
    """
    inst, hw = snap.instance, snap.hardware
    doc = {
        "neuron_top_version": __version__,
        "source": {"name": src.name, "state": src.state, "skipped": src.skipped,
                   "skipped_reasons": src.skipped_reasons, "reports": src.reports, "position": src.position or None},
        "ts": snap.ts,
        "instance": {k: clean(v) if isinstance(v, str) else v for k, v in msgspec.structs.asdict(inst).items()},
        "hardware": {k: clean(v) if isinstance(v, str) else v for k, v in msgspec.structs.asdict(hw).items()},
        "device_count": snap.device_count, "cores_per_device": snap.cores_per_device,
        "apps": [{**_app_dict(a, snap.cores_per_device, snap.app_pod(a)), "cells": app_cells(snap, a)}
                 for a in snap.apps],
        "all": _app_dict(snap.all, snap.cores_per_device),
        "ecc": [{"device": e.device, "mem_corrected": e.mem_corrected, "mem_uncorrected": e.mem_uncorrected,
                 "sram_corrected": e.sram_corrected, "sram_uncorrected": e.sram_uncorrected} for e in snap.ecc],
        "vcpu": msgspec.to_builtins(snap.vcpu) if snap.vcpu is not None else None,
        "host_memory": msgspec.to_builtins(snap.host_memory) if snap.host_memory is not None else None,
        "errors": [{"where": s.where, "error": s.error} for s in snap.group_statuses],
        "filter": None if snap.filter is None else {
            "tag": snap.filter.text, "apps_shown": snap.filter.shown, "apps_total": snap.filter.total,
            "hidden_cores": sorted(snap.filter.hidden_cores)},
        "pods": _pods_dict(snap),
    }
    return msgspec.json.encode(doc)

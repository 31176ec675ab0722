"""What happened in a recording, report by report: the replay scrubber's markers and ``replay --summary``'s events
(no UI imports).

A marker is something a person looking into an incident wants to find: ECC errors, execution errors, an app that
stopped or started, an app whose utilization collapsed to zero, a metric group that began to fail, a hole in the
recording. They are ranked by severity (``KINDS``, most severe first) so that a scrubber cell holding many shows
the worst, and a busy recording, where nearly every report carries a corrected ECC event, still lets the rare
serious ones be seen.

Scanning a recording decodes every report. Most of a report (per-vCPU times, memory breakdowns, latency
percentiles, loaded models) says nothing about markers, so the scan decodes a *brief* view: the same field names
as ``neuron_top.schema`` for the parts markers read, everything else skipped by the decoder without building
objects (four times faster on an inf2.48xlarge report). A ``Snapshot`` built on the brief view computes the
markers exactly as on a full one, so the rules (labels, which groups, which outcomes are errors) live once, in
``snapshot.py`` and below. A report the brief decoder refuses (a group of the wrong shape) is decoded fully, as
replay does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import msgspec

from neuron_top import schema
from neuron_top.decode import DecodeError
from neuron_top.recording.pacing import Hole
from neuron_top.snapshot import AppView, Snapshot, snapshot_from

__all__ = ["KINDS", "LABELS", "Facts", "Marker", "brief_snapshot", "hole_marker", "markers_between", "severity"]

KINDS = ("ecc-uncorrected", "error", "app-", "app+", "stall", "group-error", "gap", "ecc-corrected")
"""Marker kinds, most severe first."""
_RANK = {"ecc-uncorrected": 0, "error": 1, "app-": 2, "app+": 2, "stall": 3, "group-error": 4, "gap": 5,
         "ecc-corrected": 6}
LABELS = {"ecc-uncorrected": "uncorrected ECC", "error": "execution errors", "app-": "app stopped",
          "app+": "app started", "stall": "utilization collapse", "group-error": "metric-group error",
          "gap": "gap without data", "ecc-corrected": "corrected ECC"}
STALL_FROM = 5.0
"""Percent: an app busier than this whose cores all fall to 0% (while it still runs) is a collapse."""
_BAD_EXEC = ("completed_with_err", "completed_with_num_err", "timed_out", "failed_to_queue", "incorrect_input")


def severity(kind: str) -> int:
    """0 for the most severe kind; larger is milder."""
    return _RANK.get(kind, len(_RANK))


@dataclass(frozen=True, slots=True)
class Marker:
    index: int
    """The report it happened in (0-based)."""
    kind: str
    """One of ``KINDS``."""
    text: str
    """One line for the screen: "ND3 uncorrected ECC (HBM) x1", "app bert (pid 12) stopped"."""
    subject: str = ""
    """What it is about, for grouping a flood: "ND3 HBM", the app's label, the group."""
    count: int = 1
    """Events it stands for (ECC counts)."""


class Facts:
    """What markers compare between two reports, taken from a snapshot once (a scan keeps the last report's)."""

    __slots__ = ("apps", "ecc", "groups")

    def __init__(self, snap: Snapshot) -> None:
        self.ecc = snap.ecc
        self.apps: dict[int, tuple[str, float | None, int]] = {}
        """pid -> (label, busiest core's utilization or None, failed executions in the period)."""
        for a in snap.apps:
            self.apps[a.pid] = (a.label, _busy(a), _errors(a))
        self.groups = snap.group_statuses


def markers_between(prev: Snapshot | Facts | None, cur: Snapshot | Facts, index: int) -> list[Marker]:
    """What happened at report ``index`` compared with the report before it (``prev``, None at the start)."""
    was = prev if isinstance(prev, Facts) or prev is None else Facts(prev)
    now = cur if isinstance(cur, Facts) else Facts(cur)
    out: list[Marker] = []
    for e in now.ecc:  # ECC counts are the events of this report's period
        for count, where, kind in ((e.mem_uncorrected, "HBM", "ecc-uncorrected"),
                                   (e.sram_uncorrected, "SRAM", "ecc-uncorrected"),
                                   (e.mem_corrected, "HBM", "ecc-corrected"),
                                   (e.sram_corrected, "SRAM", "ecc-corrected")):
            if count:
                out.append(Marker(index, kind, f"ND{e.device} {LABELS[kind]} ({where}) x{count}",
                                  f"ND{e.device} {where}", count))
    new = now.apps
    if was is not None:
        old = was.apps
        for pid in sorted(old.keys() - new.keys()):
            out.append(Marker(index, "app-", f"app {old[pid][0]} (pid {pid}) stopped", old[pid][0]))
        for pid in sorted(new.keys() - old.keys()):
            out.append(Marker(index, "app+", f"app {new[pid][0]} (pid {pid}) started", new[pid][0]))
        for pid in sorted(new.keys() & old.keys()):
            before, after = old[pid][1], new[pid][1]
            if before is not None and before >= STALL_FROM and after is not None and after == 0.0:
                label = new[pid][0]
                out.append(Marker(index, "stall", f"app {label}: utilization fell to 0% (from {before:.0f}%)",
                                  label))
    seen = {g.where for g in was.groups} if was is not None else set()
    failing = [g for g in now.groups if g.where not in seen]
    if failing:  # groups start failing (or the recording starts with some failing): one marker for the report
        g = failing[0]
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        out.append(Marker(index, "group-error", f"{g.where}: {g.error}{more}", g.where, len(failing)))
    for pid, (label, _, bad) in new.items():
        if bad and not (was is not None and pid in was.apps and was.apps[pid][2]):
            out.append(Marker(index, "error", f"app {label}: {bad} execution error{'s' if bad != 1 else ''}",
                              label, bad))
    return out


def hole_marker(hole: Hole) -> Marker:
    """A hole as a marker on the report after it."""
    return Marker(hole.after + 1, "gap", hole.text, "", 1)


def _errors(app: AppView) -> int:
    """Failed executions in one report's period (neuron-monitor's counts are per period, not totals). Counts as
    ``AppView.exec_summary``/``error_summary`` do (non-negative integers), without building their dicts."""
    ex = app.execution
    n = 0
    for v in (ex.error_summary or {}).values():
        if isinstance(v, int) and v > 0:
            n += v
    outcomes = ex.execution_summary or {}
    for k in _BAD_EXEC:
        v = outcomes.get(k)
        if isinstance(v, int) and v > 0:
            n += v
    return n


def _busy(app: AppView) -> float | None:
    best: float | None = None
    for c in app.cores.values():
        u = c.neuroncore_utilization
        if u is not None and -math.inf < u < math.inf and (best is None or u > best):
            best = float(u)
    return best


# --- the brief view ---------------------------------------------------------------------------------------------
# Field names and defaults as in neuron_top.schema; only what Snapshot reads for markers (and its constructor
# touches) is declared, the rest of a report is skipped unbuilt.

class _B(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    pass


class _Grp(_B, frozen=True, kw_only=True):
    period: float | None = None
    error: str | None = None


class _Core(_B, frozen=True, kw_only=True):
    neuroncore_utilization: float | None = None
    flops: float | None = None
    effective_flops: float | None = None
    v3d: msgspec.Raw | None = None


class _Counters(_Grp, frozen=True, kw_only=True):
    neuroncores_in_use: dict[str, _Core | None] | None = None


class _Exec(_Grp, frozen=True, kw_only=True):
    error_summary: dict[str, int | None] | None = None
    execution_summary: dict[str, int | None] | None = None


class _Memory(_Grp, frozen=True, kw_only=True):
    loaded_models: msgspec.Raw = msgspec.Raw()


class _RuntimeReport(_B, frozen=True, kw_only=True):
    neuroncore_counters: _Counters | None = None
    execution_stats: _Exec | None = None
    memory_used: _Memory | None = None
    neuron_runtime_vcpu_usage: _Grp | None = None


class _Runtime(_B, frozen=True, kw_only=True):
    pid: int | None = None
    neuron_runtime_tag: str | None = None
    error: str | None = None
    report: _RuntimeReport | None = None


class _Hw(_Grp, frozen=True, kw_only=True):
    neuron_devices: list[schema.DeviceCounters | None] | None = None


class _System(_B, frozen=True, kw_only=True):
    neuron_hw_counters: _Hw | None = None
    vcpu_usage: _Grp | None = None
    memory_info: _Grp | None = None


class _Info(_B, frozen=True, kw_only=True):
    error: str | None = None


class _Report(_B, frozen=True, kw_only=True):
    neuron_runtime_data: list[_Runtime | None] | None = None
    system_data: _System | None = None
    instance_info: _Info | None = None
    neuron_hardware_info: _Info | None = None
    neuron_k8s_info: _Grp | None = None


_BRIEF = msgspec.json.Decoder(_Report, strict=False)


def brief_snapshot(data: bytes, seq: int = 0) -> Snapshot:
    """A Snapshot good for ``markers_between`` (not for drawing: most groups are left out), four times cheaper
    than a full one. Raises ``DecodeError`` when ``data`` is not a report."""
    try:
        report: Any = _BRIEF.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return snapshot_from(data, 0.0, seq)  # a group of the wrong shape: the tolerant decoder keeps the rest
    except Exception as exc:  # pragma: no cover - msgspec raises only the above
        raise DecodeError(str(exc)) from None
    return Snapshot(cast(schema.Report, report), 0.0, seq)

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
objects, and takes the facts markers compare (``Facts``) straight from it, applying ``Snapshot``'s rules (labels,
which groups, which counts): 0.06 ms a report on inf2.48xlarge where a Snapshot and its markers cost 0.14 ms. A
test holds the two ways equal. A report the brief decoder refuses (a group of the wrong shape) is decoded fully,
as replay does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import msgspec

from neuron_top import schema
from neuron_top.derived import EXEC_TYPES, NO_EXECUTIONS, add_executions, unclean_count
from neuron_top.fmt import plural
from neuron_top.recording.pacing import Hole
from neuron_top.snapshot import (
    AppView,
    DeviceEcc,
    GroupStatus,
    Snapshot,
    _counts,
    _int_keyed,
    device_ecc,
    snapshot_from,
)
from neuron_top.textsafe import clean

__all__ = ["KIND", "KINDS", "LABELS", "MARKER_KINDS", "Facts", "Marker", "MarkerKind", "brief_facts", "hole_marker",
           "kinds_named", "markers_between", "severity"]

@dataclass(frozen=True, slots=True)
class MarkerKind:
    """Everything about one kind of marker, in one place: the scrubber, the help, ``--summary`` and the examples
    read it from here."""

    name: str
    """As in ``Marker.kind``: "ecc-uncorrected", "app+", ..."""
    rank: int
    """Severity: 0 is the most severe; a scrubber cell holding several shows the lowest."""
    label: str
    """Its name in words, for the help screen and the next-marker line."""
    short: str
    """The scrubber legend's word."""
    glyph: str
    """Its one-cell mark on the scrubber."""
    style: str
    """How serious it looks: "bad", "warn" or "note" (the scrubber maps these to theme colours)."""
    family: str
    """What a ``--kind`` filter may call it with its siblings: "ecc" for both ECC kinds, "app" for start and stop."""
    jump: str
    """Kinds with the same ``jump`` are one step of the replay's ``k`` (next kind) and ``n``/``N`` (jump)."""
    serious: bool = False
    """It makes ``replay --summary`` exit 1."""
    grouped: bool = False
    """``--summary`` groups it per subject and hour (it comes in floods)."""


MARKER_KINDS = (
    MarkerKind("ecc-uncorrected", 0, "uncorrected ECC", "uncorr", "E", "bad", "ecc", "ecc-uncorrected", serious=True),
    MarkerKind("error", 1, "execution errors", "err", "x", "bad", "error", "error", serious=True),
    MarkerKind("app-", 2, "app stopped", "stop", "-", "warn", "app", "app"),
    MarkerKind("app+", 2, "app started", "start", "+", "note", "app", "app"),
    MarkerKind("stall", 3, "utilization collapse", "stall", "z", "warn", "stall", "stall"),
    MarkerKind("group-error", 4, "metric-group error", "group", "!", "warn", "group-error", "group-error"),
    MarkerKind("gap", 5, "gap without data", "gap", "┊", "note", "gap", "gap"),
    MarkerKind("ecc-corrected", 6, "corrected ECC", "corr", "e", "note", "ecc", "ecc-corrected", grouped=True),
    MarkerKind("host-down", 2, "host down", "down", "v", "bad", "host", "host-down", serious=True),
)
"""Every marker kind, most severe first; but a fleet recording's host going stale or down, last (its own step of
``k``, after every kind a report recording has)."""
KIND = {k.name: k for k in MARKER_KINDS}
KINDS = tuple(k.name for k in MARKER_KINDS)
"""Marker kinds, most severe first."""
LABELS = {k.name: k.label for k in MARKER_KINDS}


def kinds_named(word: str) -> tuple[str, ...]:
    """The kinds a filter word means: a kind's name ("ecc-uncorrected") or a family ("ecc": both ECC kinds)."""
    return tuple(k.name for k in MARKER_KINDS if word in (k.name, k.family))


STALL_FROM = 5.0
"""Percent: an app busier than this whose cores all fall to 0% (while it still runs) is a collapse."""
_DEVICE = attrgetter("device")


def severity(kind: str) -> int:
    """0 for the most severe kind; larger is milder."""
    k = KIND.get(kind)
    return k.rank if k is not None else len(MARKER_KINDS)


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
    """What markers compare between two reports, taken once per report (a scan keeps the last report's).

    From a ``Snapshot`` (the rules' definition: labels, which groups, which counts) or, in a scan, straight from
    the brief view (``brief_facts``), which applies the same rules without building a Snapshot (the Snapshot
    cost twice the decode). A test holds the two equal on every demo instance and the fixtures."""

    __slots__ = ("apps", "ecc", "executions", "groups", "outcomes")

    def __init__(self, snap: Snapshot | None = None) -> None:
        self.ecc: tuple[DeviceEcc, ...] = ()
        self.apps: dict[tuple[int, str], tuple[str, float | None, int, int]] = {}
        """(pid, tag) -> (label, busiest core's utilization or None, executions that did not complete cleanly (``bad/s``'s
        ``derived.unclean_count``), errors of every type (``err/s``)) in the period. Keyed by pid and tag: two runtimes
        can report one pid (seen in a real report), and a label changes when another runtime takes the same tag.
        Runtimes with the same pid and tag add up (``_add_app``), so the apps' counts sum to the totals."""
        self.groups: Sequence[GroupStatus] = ()
        self.executions: tuple[int | None, ...] = NO_EXECUTIONS
        """Executions by ``derived.EXEC_TYPES`` outcome in the period, summed over apps (``AppRates.outcomes`` of
        the "all" view; None: no app reported that outcome): what the counts since start add up."""
        self.outcomes: dict[tuple[int, str], tuple[int | None, ...]] = {}
        """Per app (keyed as ``apps``), its executions by outcome, for the apps that reported any: what the counts
        since start of the apps a tag filter selects add up (``RunningTotals.apps_at``)."""
        if snap is not None:
            self.ecc = snap.ecc
            self.executions = snap.all.rates.outcomes
            for a in snap.apps:
                _add_app(self.apps, (a.pid, a.tag), a.label, _busy(a), *_errors(a))
                if (outs := a.rates.outcomes) != NO_EXECUTIONS:
                    self.outcomes[a.pid, a.tag] = add_executions(self.outcomes.get((a.pid, a.tag), NO_EXECUTIONS),
                                                                 outs)
            self.groups = snap.group_statuses

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Facts) and self.ecc == other.ecc and self.apps == other.apps
                and tuple(self.groups) == tuple(other.groups) and self.executions == other.executions
                and self.outcomes == other.outcomes)

    __hash__ = None  # type: ignore[assignment]


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
            out.append(Marker(index, "app-", f"app {old[pid][0]} (pid {pid[0]}) stopped", old[pid][0]))
        for pid in sorted(new.keys() - old.keys()):
            out.append(Marker(index, "app+", f"app {new[pid][0]} (pid {pid[0]}) started", new[pid][0]))
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
    for key, (label, _, bad, errs) in new.items():
        had = was.apps.get(key) if was is not None else None
        if (bad or errs) and not (had is not None and (had[2] or had[3])):
            what = [plural(n, word) for n, word in ((errs, "execution error"), (bad, "bad execution")) if n]
            out.append(Marker(index, "error", f"app {label}: {', '.join(what)}", label, errs or bad))
    return out


def hole_marker(hole: Hole) -> Marker:
    """A hole as a marker on the report after it."""
    return Marker(hole.after + 1, "gap", hole.text, "", 1)


def _add_app(apps: dict[tuple[int, str], tuple[str, float | None, int, int]], key: tuple[int, str], label: str,
             busy: float | None, failed: int, errors: int) -> None:
    """One runtime's facts into ``Facts.apps``. Two runtimes can report the same pid and tag (one key): their
    counts add up, as the "all" figures add them (each app's counts then sum to the totals), and the busiest core
    is the busier one's."""
    had = apps.get(key)
    if had is not None:
        busy = max((b for b in (busy, had[1]) if b is not None), default=None)
        failed += had[2]
        errors += had[3]
    apps[key] = (label, busy, failed, errors)


def _errors(app: AppView) -> tuple[int, int]:
    """(executions that did not complete cleanly, errors of every type) in one report's period (neuron-monitor's
    counts are per period, not totals)."""
    if app.failure("execution_stats"):
        return (0, 0)  # a failed group's counts are not a reading (AppView.exec_summary)
    ex = app.execution
    return _failed(ex.error_summary, ex.execution_summary)


def _failed(errors: Mapping[str, int | None] | None, outcomes: Mapping[str, int | None] | None) -> tuple[int, int]:
    """Counts as ``AppView.exec_summary``/``error_summary`` do (non-negative integers), without building them:
    (``derived.unclean_count`` of the outcomes, the sum of the error summary)."""
    n = 0
    if errors:
        vals: Any = errors.values()  # ints as neuron-monitor writes them, or a null: the fast path finds out
        try:  # all counts plain non-negative ints: one C-level pass
            total = sum(vals)
            fast = type(total) is int and min(vals) >= 0
        except TypeError:  # a null among them
            fast = False
        if fast:
            n = total
        else:
            for v in vals:
                if isinstance(v, int) and v > 0:
                    n += v
    return (unclean_count(outcomes) or 0, n)


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


class _Counters(_Grp, frozen=True, kw_only=True):
    neuroncores_in_use: dict[str, _Core | None] | None = None


class _Exec(_Grp, frozen=True, kw_only=True):
    error_summary: dict[str, int | None] | None = None
    execution_summary: dict[str, int | None] | None = None


class _RuntimeReport(_B, frozen=True, kw_only=True):
    neuroncore_counters: _Counters | None = None
    execution_stats: _Exec | None = None
    memory_used: _Grp | None = None
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


def brief_facts(data: bytes, seq: int = 0) -> Facts:
    """``Facts(snapshot_from(data))`` at a fraction of the cost: the brief view, and Snapshot's rules applied to
    it directly. Raises ``DecodeError`` when ``data`` is not a report."""
    try:
        r = _BRIEF.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Facts(snapshot_from(data, 0.0, seq))  # the tolerant decoder keeps the groups that fit
    f = Facts()
    f.ecc = device_ecc(r.system_data.neuron_hw_counters if r.system_data is not None else None)  # Snapshot.ecc's
    # apps, as Snapshot's: labels (the tag, with the pid when tags repeat), in pid order (unknown pids last)
    runtimes = [(rt, clean(rt.neuron_runtime_tag or "", 64)) for rt in (r.neuron_runtime_data or ()) if rt is not None]
    tags: dict[str, int] = {}
    for _, tag in runtimes:
        tags[tag] = tags.get(tag, 0) + 1
    apps = []
    for rt, tag in runtimes:
        pid = rt.pid if isinstance(rt.pid, int) else -1
        label = f"{tag}:{pid}" if tag and tags[tag] > 1 else tag or str(pid)
        apps.append((pid, label, tag, rt))
    apps.sort(key=lambda a: (a[0] < 0, a[0]))
    groups: list[GroupStatus] = []
    for where, g in (("instance_info", r.instance_info), ("neuron_hardware_info", r.neuron_hardware_info)):
        if g is not None and g.error:
            groups.append(GroupStatus(where, clean(g.error)))
    system = r.system_data
    for name in schema.SYSTEM_GROUPS:
        sg = getattr(system, name) if system is not None else None
        if sg is not None and sg.error:
            groups.append(GroupStatus(f"system_data.{name}", clean(sg.error)))
    if r.neuron_k8s_info is not None and r.neuron_k8s_info.error:
        groups.append(GroupStatus("neuron_k8s_info", clean(r.neuron_k8s_info.error)))
    for pid, label, tag, rt in apps:
        rep = rt.report
        nc = rep.neuroncore_counters if rep is not None else None
        cores = _int_keyed(nc.neuroncores_in_use) if nc is not None and nc.neuroncores_in_use else {}
        best: float | None = None
        for c in cores.values():
            u = c.neuroncore_utilization
            if u is not None and -math.inf < u < math.inf and (best is None or u > best):
                best = float(u)
        ex = rep.execution_stats if rep is not None else None
        # as AppView.failure: a failed group (or runtime) says nothing
        said = ex is not None and not ex.error and not rt.error
        counts = _failed(ex.error_summary, ex.execution_summary) if said and ex is not None else (0, 0)
        _add_app(f.apps, (pid, tag), label, best, *counts)
        if said and ex is not None and ex.execution_summary:  # AppView.exec_summary's counts
            outs = _counts(ex.execution_summary)
            mine = tuple(outs.get(k) for k in EXEC_TYPES)
            f.executions = add_executions(f.executions, mine)
            if mine != NO_EXECUTIONS:
                f.outcomes[pid, tag] = add_executions(f.outcomes.get((pid, tag), NO_EXECUTIONS), mine)
        err = clean(rt.error or "")
        if err:
            groups.append(GroupStatus(label, err))
        for name in schema.RUNTIME_GROUPS:
            rg = getattr(rep, name) if rep is not None else None
            if rg is not None and rg.error:
                groups.append(GroupStatus(f"{label}.{name}", clean(rg.error)))
    f.groups = groups
    return f

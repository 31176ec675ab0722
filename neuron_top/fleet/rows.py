"""One row per host: what the fleet table shows, from Prometheus answers or from a host's own snapshots.

A figure that is missing is None (shown blank), never 0: a host whose exporter has no latency series has no p99,
not a p99 of zero. The same rules make a row from either source (``from_answers`` for Prometheus, ``from_snapshot``
for a host streamed over ssh), so the two modes show the same numbers for the same host.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from neuron_top.derived import per_second
from neuron_top.fleet.queries import BUSY, PART, FleetQuery, QuerySet
from neuron_top.snapshot import Snapshot
from neuron_top.textsafe import clean

__all__ = ["FleetRow", "QueryFailure", "Thresholds", "from_answers", "from_snapshot", "status_for"]

UP, STALE, DOWN = "up", "stale", "down"
SCRAPE_FAILS = "scrape fails: "
"""How the note of a host whose every scrape target fails (``up == 0``) begins: down now, whatever its age."""
STATES = (UP, STALE, DOWN, "starting")


class FleetRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """One host. Raw label values are kept as they came (``clean`` them to show them); numbers are floats in
    display units (percent, bytes, per second, seconds) or None when the data has none."""

    key: str
    """The ``--by`` label's value (instance_id by default), or the host name in ssh mode."""
    name: str = ""
    instance_id: str = ""
    instance_type: str = ""
    zone: str = ""
    region: str = ""
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    """Extra labels (``--label``), for the filter and grouping."""
    devices: int | None = None
    cores: int | None = None
    util: float | None = None
    """Percent: per core the runtimes' summed share (``derived.core_utilization``), then the average over cores."""
    util_max: float | None = None
    """Percent: the busiest core."""
    busy: int | None = None
    """Cores above 1%."""
    idle: int | None = None
    """Cores with a model loaded and at most 1% busy (allocated but idle). From Prometheus: the allocated cores
    less the busy ones (one read of the core series fewer; a busy core without a model would count once less)."""
    apps: int | None = None
    mem_used: float | None = None
    """Device memory used by the runtimes, bytes."""
    mem_total: float | None = None
    vcpu: float | None = None
    """Percent of the host's vCPUs busy."""
    vcpus: int | None = None
    exec_rate: float | None = None
    """Executions per second (every outcome)."""
    err_rate: float | None = None
    """Executions per second that did not complete cleanly."""
    p99: float | None = None
    """Seconds: the worst runtime's p99 total latency."""
    ecc_corrected: float | None = None
    """Corrected ECC events (DRAM + SRAM): the counters' value (since the exporter started; since the stream
    started over ssh), kept (their last value) for the ECC window after they went away (the exporter stopped)."""
    ecc_uncorrected: float | None = None
    status: str = "up"
    """"up", "stale", "down" or "starting"."""
    age: float | None = None
    """Seconds since the host's newest data (the exporter's last report when it says, else its newest sample)."""
    scraped: float | None = None
    """Seconds since Prometheus last had a sample of the host (what "down" is judged by); None over ssh."""
    note: str = ""
    """Why the row looks the way it does: the ssh error, labels that collide, a second scrape target."""
    targets: int = 1
    """How many scrape targets report this host (more than one is a duplicate, de-duplicated in the figures)."""

    @property
    def title(self) -> str:
        """What the table's first column says (raw; clean it to show)."""
        return self.key or "(no label)"


@dataclass(frozen=True, slots=True)
class QueryFailure:
    name: str
    query: str
    message: str


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a host's data is stale and when it is down (seconds since its newest sample)."""

    stale_after: float = 60.0
    down_after: float = 180.0


def status_for(age: float | None, present: bool, th: Thresholds) -> str:
    """Two different questions. A host whose series went away (``present`` False: its scrapes fail) is stale at
    once and down after ``down_after`` seconds. A host still being scraped is never down; it is stale when its
    data is older than ``stale_after`` (a hung neuron-monitor behind a live exporter, a slow remote write)."""
    if age is None:
        return DOWN if not present else STALE
    if not present:
        return DOWN if age > th.down_after else STALE
    return STALE if age > th.stale_after else UP


# --- from Prometheus -----------------------------------------------------------------------------------------


def _num(x: str | float | None) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _int(x: str | float | None) -> int | None:
    v = _num(x)
    return int(v) if v is not None and 0 <= v < 1e9 else None


def _pct(x: float | None) -> float | None:
    return None if x is None else x * 100.0


class _Acc:
    """Everything known about one host while the answers are read."""

    __slots__ = ("fields", "gone_age", "notes", "present", "report_age", "scrape_down", "seen_age", "source_up",
                 "targets")

    def __init__(self) -> None:
        self.fields: dict[str, object] = {}
        self.notes: list[str] = []
        self.present = False
        self.seen_age: float | None = None
        self.gone_age: float | None = None
        self.report_age: float | None = None
        """From ``neuron-top export``: seconds since its source's last report (its data's real age)."""
        self.source_up: float | None = None
        self.scrape_down: list[tuple[str, str]] = []
        """(instance, job) of its targets whose scrape fails (``up == 0``)."""
        self.targets: set[tuple[str, str]] = set()
        """(instance, job) of its targets seen, when "now" says (with the rules: as of their last evaluation)."""


def from_answers(qs: QuerySet, queries: Sequence[FleetQuery], answers: Mapping[str, object],
                 th: Thresholds) -> list[FleetRow]:
    """The rows for one refresh. ``answers`` maps a query's name to its samples (``PromClient.query``) or to the
    exception it raised; the fields a failed query fills stay None.

    Labels that collide (two ``instance_info`` series with different instance types under one key, a key label
    that some series lack) are noted on the row; the first answer's values are shown.
    """
    hosts: dict[str, _Acc] = {}
    by = qs.by

    def acc(sample: object) -> _Acc:
        key = sample.metric.get(by, "")  # type: ignore[attr-defined]
        a = hosts.get(key)
        if a is None:
            a = hosts[key] = _Acc()
        return a

    def samples(name: str) -> list:
        got = answers.get(name)
        return got if isinstance(got, list) else []

    for s in samples("seen"):
        a = acc(s)
        age = s.number
        part = s.metric.get(PART)
        if part == "now":  # raw: one a host; with the rules, one a target (the newest counts)
            a.present = True
            if age is not None and (a.seen_age is None or age < a.seen_age):
                a.seen_age = age
            if "instance" in s.metric:
                a.targets.add((s.metric["instance"], s.metric.get("job", "")))
        elif part == "report":
            a.report_age = age
        elif part == "source_up":
            a.source_up = age
        elif part == "scrape_down":
            a.scrape_down.append((s.metric.get("instance", ""), s.metric.get("job", "")))
    for s in samples("gone"):
        acc(s).gone_age = s.number
    for name, (field, scale) in _PLAIN.items():
        for s in samples(name):
            v = s.number
            if v is not None:
                acc(s).fields[field] = v * scale
    _info(samples("info"), acc, qs)
    _hardware(samples("hardware"), acc)
    for name, spec in _PARTS.items():
        for s in samples(name):
            part, factor = spec.get(s.metric.get(PART, ""), ("", 1.0))
            v = s.number
            if part and v is not None:
                acc(s).fields[part] = v * factor
    for s in samples("executions"):  # per outcome: all of them, and all but "completed"
        v = s.number
        if v is not None:
            _add(acc(s).fields, "exec_rate", v)
            _add(acc(s).fields, "err_rate", v if s.metric.get("status_type") != "completed" else 0.0)
    for s in samples("ecc"):  # per event type: corrected and uncorrected, DRAM and SRAM (and newer kinds)
        v = s.number
        kind = s.metric.get("event_type", "")
        if v is not None and kind.endswith(("_corrected", "_uncorrected")):
            _add(acc(s).fields, "ecc_uncorrected" if kind.endswith("_uncorrected") else "ecc_corrected", v)
    seen_ok = isinstance(answers.get("seen"), list)
    rows = []
    for key, a in hosts.items():
        f = a.fields
        copies = int(f.get("targets", 1) or 1)  # type: ignore[call-overload]
        if copies > 1:  # every series of the host came that many times: its sums and counts did too
            for name in _SUMS:
                if f.get(name) is not None:
                    f[name] = float(f[name]) / copies  # type: ignore[arg-type]
        runtimes = f.pop("runtimes", None)
        if runtimes is not None:  # neuron-top export counts the runtimes of its report, as the dashboard does:
            # runtimes that share a tag are one series of AWS's families (the last one's), and none has no series
            f["apps"] = runtimes
            if runtimes == 0:  # no runtime: nothing used, no core busy or allocated (as ``from_snapshot``)
                for k in ("mem_used", "busy", "idle"):
                    f[k] = f.get(k) or 0
        allocated = f.pop("allocated", None)
        if allocated is not None:  # cores with a model loaded that are not busy
            f["idle"] = max(0, int(allocated) - int(f.get("busy") or 0))  # type: ignore[call-overload]
        for k in ("busy", "idle", "apps", "vcpus", "cores"):
            if f.get(k) is not None:
                f[k] = int(f[k])  # type: ignore[call-overload]
        if not key:
            a.notes.insert(0, f"series without the {by} label (check --by)")
        if a.present and a.targets and a.targets <= set(a.scrape_down):
            # seen as of the rules' last evaluation, but every target of it fails its scrape now: gone now, as the
            # raw presence series would say
            a.present, a.seen_age = False, None
        scraped = a.seen_age if a.present else a.gone_age
        age = scraped
        if a.present and a.report_age is not None:  # our exporter says how old its data really is
            age = max(age or 0.0, a.report_age)
        if a.present and a.source_up == 0:
            a.notes.append("the exporter answers but its source is down (neurontop_source_up 0): "
                           "neuron-monitor stopped?")
        if seen_ok and scraped is None and not a.scrape_down:
            # in other answers but not in "seen": its presence series are missing or younger than the
            # subquery's step; not down (it has data), not known to be up. A host whose scrape fails (up == 0)
            # is down with why even when "gone" (slow, or failed this refresh) has no age for it
            status = STALE
            a.notes.append("no instance_info, neuron_hardware_info or system_vcpu_count sample seen")
        elif seen_ok:
            status = status_for(age if a.present else scraped, a.present, th)
            if status == UP and a.source_up == 0:
                status = STALE
            if a.scrape_down:
                errors = answers.get("scrape_errors")
                why = [f"{clean(inst, 60)} ({clean(job, 40)}): "
                       + (errors.get((inst, job)) or "up == 0" if isinstance(errors, dict) else "up == 0")
                       for inst, job in a.scrape_down]
                a.notes.insert(0, SCRAPE_FAILS + "; ".join(why))
                if not a.present:  # every target of it fails: Prometheus knows it now, not in down_after
                    status = DOWN
        else:
            status, age = STALE, None
            a.notes.append("status unknown: the seen query failed")
        rows.append(FleetRow(key=key, status=status, age=age, scraped=scraped, note="; ".join(a.notes),
                             **f))  # type: ignore[arg-type]
    return rows


_PARTS: dict[str, dict[str, tuple[str, float]]] = {
    "host": {"mem_used": ("mem_used", 1.0), "apps": ("apps", 1.0), "runtimes": ("runtimes", 1.0),
             "vcpu": ("vcpu", 100.0),
             "vcpus": ("vcpus", 1.0), "p99": ("p99", 1.0)},
}
"""Tagged queries: which row field each part fills, and the factor (ratios become percent)."""
def _add(fields: dict[str, object], name: str, value: float) -> None:
    old = fields.get(name)
    fields[name] = (float(old) if isinstance(old, int | float) else 0.0) + value


_SUMS = ("mem_used", "apps", "vcpu", "exec_rate", "err_rate")
"""Figures that add up series of the host (divided by the number of scrape targets reporting it). Not the core
counts (busy, allocated: sums over the per-core ``max by``, which merged the copies already) nor ECC (a ``max by``
device and event): dividing those again halved a twice-scraped host's busy and idle cores."""
_PLAIN = {"util": ("util", 100.0), "busiest": ("util_max", 100.0), "busy": ("busy", 1.0),
          "allocated": ("allocated", 1.0)}
"""Queries of one figure: the field and the factor."""

_INFO = (("instance_id", "instance_id"), ("instance_name", "name"), ("instance_type", "instance_type"),
         ("availability_zone", "zone"), ("region", "region"))


def _info(answer: list[Any], acc: Callable[[Any], Any], qs: QuerySet) -> None:
    first: dict[int, object] = {}
    for s in sorted(answer, key=lambda s: -(s.number or 0)):  # the label set most targets agree on first
        a = acc(s)
        m = s.metric
        targets = int(s.number or 1)
        if id(a) in first:
            other = first[id(a)].metric  # type: ignore[attr-defined]
            diff = [f"{n} {clean(other.get(n, ''), 40)!r}/{clean(m.get(n, ''), 40)!r}"
                    for n in qs.info_labels if other.get(n, "") != m.get(n, "")]
            a.notes.append("labels collide: " + ", ".join(diff))
            a.fields["targets"] = int(a.fields.get("targets", 1)) + targets
            continue
        first[id(a)] = s
        for label, field in _INFO:
            if m.get(label):
                a.fields[field] = m[label]
        extra = {n: m[n] for n in qs.labels if m.get(n)}
        if extra:
            a.fields["labels"] = extra
        a.fields["targets"] = targets
    for s in first.values():
        t = int(acc(s).fields.get("targets", 1))
        if t > 1:
            acc(s).notes.append(f"{t} scrape targets report this host (its sums divided by {t})")


def _hardware(answer: list[Any], acc: Callable[[Any], Any]) -> None:
    for s in answer:
        a = acc(s)
        if "devices" in a.fields:
            continue  # two hardware series for one host: the collision is noted by info already
        m = s.metric
        devices = _int(m.get("neuron_device_count"))
        per = _int(m.get("neuroncore_per_device_count"))
        size = _num(m.get("neuron_device_memory_size"))
        a.fields["devices"] = devices
        if devices is not None and per is not None:
            a.fields["cores"] = devices * per
        if devices is not None and size is not None and size > 0:
            a.fields["mem_total"] = devices * size


# --- from a host's own reports (ssh mode) ------------------------------------------------------------------


def from_snapshot(key: str, snap: Snapshot, *, status: str = UP, age: float | None = None, note: str = "",
                  ecc: tuple[float, float] | None = None) -> FleetRow:
    """The row of a host from its latest report. ``ecc``: (corrected, uncorrected) events since the stream
    started (``EccTotals``); else the report's own counts."""
    inst, hw = snap.instance, snap.hardware
    per_core = {i: u for i, u in snap.all.core_stats.util.items() if u is not None}  # derived.core_utilization
    utils = list(per_core.values())
    allocated = {i for a in snap.apps for i, cats in a.core_memory.items() if cats.get("model_code", 0) > 0}
    # which cores hold a model: known from the runtimes' per-core memory, or no runtime (none does); a report with
    # only the totals does not say, so IDLE is blank, as the Prometheus row is without neuroncore_memory_usage_*
    allocation_known = not snap.apps or any(a.core_memory for a in snap.apps)
    busy_floor = BUSY * 100.0
    has_neuron = snap.has_neuron
    devices = snap.device_count if has_neuron else None
    size = hw.neuron_device_memory_size
    vcpu = snap.cpu.busy
    rates = snap.all.rates
    exec_rate = per_second(rates.ran, rates.period)
    err_rate = rates.bad_per_second  # bad/s: executions that did not complete cleanly (derived.unclean_count)
    p99s = [lat["p99"] for a in snap.apps if (lat := a.latency("total")) and "p99" in lat]
    if ecc is None:
        ecc = (float(sum(e.corrected for e in snap.ecc)), float(sum(e.uncorrected for e in snap.ecc)))
    return FleetRow(
        key=key,
        name=inst.instance_name or "",
        instance_id=inst.instance_id or "",
        instance_type=inst.instance_type or "",
        zone=inst.instance_availability_zone or "",
        region=inst.instance_region or "",
        devices=devices,
        cores=snap.core_count if has_neuron else None,
        util=sum(utils) / len(utils) if utils else None,
        util_max=max(utils) if utils else None,
        busy=sum(1 for u in utils if u > busy_floor) if utils else (0 if has_neuron else None),
        idle=sum(1 for i in allocated if per_core.get(i, 0.0) <= busy_floor) if has_neuron and allocation_known
        else None,
        apps=len(snap.apps) if has_neuron else None,
        # no runtime: nothing used; runtimes whose memory is not known: blank, not 0 (Snapshot's memory_reported)
        mem_used=(float(snap.all.used_bytes[1]) if snap.all.memory_reported else None) if has_neuron else None,
        mem_total=float(devices * size) if devices and size else None,
        vcpu=vcpu,
        vcpus=len(snap.vcpus) or None,
        exec_rate=exec_rate,
        err_rate=err_rate,
        p99=max(p99s) if p99s else None,
        ecc_corrected=ecc[0] if snap.ecc else None,
        ecc_uncorrected=ecc[1] if snap.ecc else None,
        status=status,
        age=age,
        note=note,
    )


class EccTotals:
    """ECC events of one host's reports since its stream started (neuron-monitor reports the events of each
    period): the counter ``hardware_ecc_events_total`` would hold, which the Prometheus mode and the alert read.
    An uncorrected event stays on the row for as long as the host is watched, as it stays in the counter."""

    def __init__(self) -> None:
        self.corrected = 0
        self.uncorrected = 0

    def add(self, snap: Snapshot) -> tuple[float, float]:
        self.corrected += sum(e.corrected for e in snap.ecc)
        self.uncorrected += sum(e.uncorrected for e in snap.ecc)
        return (float(self.corrected), float(self.uncorrected))


def with_status(rows: Iterable[FleetRow], th: Thresholds, elapsed: float) -> list[FleetRow]:
    """Rows carried over while no fresh answer came (Prometheus down): ``elapsed`` seconds older, their status
    re-judged as if their series had gone."""
    out = []
    for r in rows:
        age = None if r.age is None else r.age + elapsed
        scraped = None if r.scraped is None else r.scraped + elapsed
        out.append(msgspec.structs.replace(r, age=age, scraped=scraped,
                                           status=status_for(scraped if scraped is not None else age, False, th)))
    return out

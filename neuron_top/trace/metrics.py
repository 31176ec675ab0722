"""A neuron-monitor recording beside a trace, on the trace's time axis (what no other tool shows).

The recording's reports become counter tracks: each NeuronCore's utilization (cores that were ever busy),
device memory used, and the host vCPUs' busy share. Times: neuron-top stamps each recorded report with Unix
time; a trace on a wall clock (Kineto's epoch or ``baseTimeNanoseconds``, neuron-explorer) maps Unix time onto
its axis exactly. When either clock is not a wall clock, or the two do not overlap, the clocks cannot be
matched: the metrics are placed with the recording's start at the trace's start and ``note`` says so; a manual
offset (``shift``) moves them.

Only the reports in the trace's time range (plus a report either side) are decoded, so a long recording beside a
short trace costs little.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from math import isfinite
from typing import Any

from neuron_top.decode import DecodeError
from neuron_top.recording.index import Index
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.trace.columns import format_duration
from neuron_top.trace.store import CounterTrack, TraceStore, mip_levels

__all__ = [
    "GROUP", "Index", "Metrics", "attach", "build_metrics", "open_index", "parse_offset", "shift",
]

GROUP = "metrics"
_MAX_REPORTS = 20_000
"""At most this many reports are decoded for one trace (a long trace beside a 1 Hz recording: 5.5 hours)."""


@dataclass
class Metrics:
    """The counter tracks made from a recording and how they were placed on the trace's axis."""

    counters: list[CounterTrack] = field(default_factory=list)
    matched: bool = False
    """True when both clocks are wall clocks and overlap: ``offset`` maps Unix time exactly."""
    offset: int = 0
    """Trace time = Unix nanoseconds + offset (the manual ``shift`` included)."""
    note: str = ""
    """One line for the screen: how the clocks were matched, or why they could not be."""
    reports: int = 0

    def trace_time(self, unix_s: float) -> int:
        return round(unix_s * 1e9) + self.offset

    def unix_time(self, t_ns: int) -> float:
        return (t_ns - self.offset) / 1e9


def open_index(target: str | os.PathLike[str] | Index) -> tuple[Index, bool]:
    """A recording index for a path (indexed here, waited for), or the one given; and whether we own it."""
    if not isinstance(target, (str, os.PathLike)):
        return target, False
    from neuron_top.recording.index import open_recording

    index = open_recording(target)
    index.wait()
    return index, True


def _values(snap: Snapshot) -> tuple[dict[int, float], float | None, float | None]:
    """(per-core utilization %, device memory used bytes, average vCPU busy %) of one report."""
    cores: dict[int, float] = {}
    for k, c in snap.all.cores.items():
        u = c.neuroncore_utilization
        if u is not None and isfinite(u):
            cores[k] = float(u)
    _host, device = snap.all.used_bytes
    busy = [100.0 - v.idle for _, v in snap.vcpus if v.idle is not None and isfinite(v.idle)]
    return cores, float(device) if snap.apps or device else None, (sum(busy) / len(busy) if busy else None)


def build_metrics(store: TraceStore, target: str | os.PathLike[str] | Index, name: str = "") -> Metrics:
    """Counter tracks for ``store`` from a recording (path or index). Raises OSError if the file cannot be read."""
    index, owned = open_index(target)
    try:
        return _build(store, index, name or str(index.name or target))
    finally:
        if owned:
            index.close()


def _build(store: TraceStore, index: Index, name: str) -> Metrics:
    n = len(index)
    m = Metrics()
    if n == 0:
        m.note = f"metrics: no reports in {name}"
        return m
    rec0, rec1 = index.timestamp(0), index.timestamp(n - 1)
    wall = store.wall_offset
    lo = hi = 0
    if wall is not None and index.wallclock:
        m.offset = -wall
        t0, t1 = (store.t_min - m.offset) / 1e9, (store.t_max - m.offset) / 1e9
        if rec1 >= t0 and rec0 <= t1:
            m.matched = True
            lo = max(index.find_time(t0) - 1, 0)
            hi = min(index.find_time(t1) + 1, n)
            m.note = f"metrics from {name} on the trace's wall clock"
        else:
            m.note = (
                f"metrics: {name} ({_when(rec0)} to {_when(rec1)}) does not overlap the trace "
                f"({_when(t0)} to {_when(t1)}); placed at the trace start: O sets an offset"
            )
    else:
        why = "the trace's clock is not a wall clock" if wall is None else "the recording has no wall-clock times"
        m.note = f"metrics: clocks cannot be matched ({why}); {name} placed at the trace start: O sets an offset"
    if not m.matched:  # the recording's start at the trace's start, as long a stretch of it as the trace
        m.offset = store.t_min - round(rec0 * 1e9)
        lo, hi = 0, min(index.find_time(rec0 + store.span / 1e9) + 1, n)
    hi = min(hi, lo + _MAX_REPORTS)
    m.counters = _counters(index, lo, hi, m)
    m.reports = hi - lo
    return m


def _when(unix_s: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(unix_s))


def _counters(index: Index, lo: int, hi: int, m: Metrics) -> list[CounterTrack]:
    ts = array("q")
    cores: dict[int, array] = {}
    mem = array("d")
    cpu = array("d")
    bad = 0
    for i in range(lo, hi):
        try:
            snap = snapshot_from(index.get(i), index.timestamp(i), i)
        except (DecodeError, ValueError, OSError):
            bad += 1
            continue
        k = len(ts)
        ts.append(m.trace_time(snap.ts))
        per_core, device, busy = _values(snap)
        for c, u in per_core.items():
            cores.setdefault(c, array("d", [0.0] * k)).append(u)
        for col in cores.values():
            if len(col) == k:  # a core this report did not have
                col.append(0.0)
        mem.append(device if device is not None else float("nan"))
        cpu.append(busy if busy is not None else float("nan"))
    if bad:
        m.note += f" ({bad} reports could not be decoded)"
    out: list[CounterTrack] = []

    def track(key: Any, label: str, vals: array, unit: str) -> None:
        keep = [(t, v) for t, v in zip(ts, vals, strict=True) if v == v]  # NaN: the report did not have it
        if not keep:
            return
        c = CounterTrack(len(out), ("metrics", key), label, unit=unit, group=GROUP)
        c.ts = array("q", [t for t, _ in keep])
        c.val = array("d", [v for _, v in keep])
        c.mips = mip_levels(c.val)
        out.append(c)

    for core in sorted(cores):
        if max(cores[core], default=0.0) > 0:  # cores that were never busy would be a wall of empty lines
            track(("nc", core), f"NC {core} utilization", cores[core], "%")
    track("mem", "device memory used", mem, "B")
    track("vcpu", "vCPU busy (average)", cpu, "%")
    return out


def attach(store: TraceStore, m: Metrics) -> None:
    """Add the metrics' counter tracks to the store (after its own counters); the trace's span stays its own."""
    base = len(store.counters)
    for k, c in enumerate(m.counters):
        c.id = base + k
        store.counters.append(c)


def shift(store: TraceStore, m: Metrics, delta_ns: int) -> None:
    """Move the metrics by ``delta_ns`` on the trace's axis (the manual offset when clocks cannot be matched)."""
    m.offset += delta_ns
    for c in store.counters:
        if c.group == GROUP:
            c.ts = array("q", [t + delta_ns for t in c.ts])
    m.note = m.note.split(" · offset")[0] + f" · offset {'+' if m.offset >= 0 else ''}{format_duration(delta_ns)}"


def parse_offset(text: str) -> int:
    """``+2.5s``, ``-300ms``, ``1500us``, ``250ns`` (a bare number is seconds) -> nanoseconds; ValueError."""
    s = text.strip().replace(" ", "")
    if not s:
        raise ValueError("empty offset")
    num, scale = s, 1_000_000_000
    for unit, per in (("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
                      ("m", 60_000_000_000), ("h", 3_600_000_000_000)):
        if s.endswith(unit):
            num, scale = s[: -len(unit)], per
            break
    from neuron_top.trace.timeparse import decimal_ns

    return decimal_ns(num) * scale // 1000

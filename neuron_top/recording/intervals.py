"""``replay FILE --summary --every 10m``: a table per interval of a recording, as ``atopsar`` gives a post-mortem
(no UI imports).

Each row is one interval of wall-clock time (aligned to its length: 10 m rows start at :00, :10 ...): reports in it,
utilization (the mean over the interval of each report's mean over its cores, and the busiest core), device
memory used (the most), executions and errors per second (the mean of each report's rates), the worst p99 total
latency, and ECC events (corrected / uncorrected). A value no report of the interval had is ``-``, not 0. Every
figure is the core's (``Snapshot``/``AppView`` and ``derived``); this module only averages them over time.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import msgspec

from neuron_top import fmt
from neuron_top.decode import DecodeError
from neuron_top.recording.index import Index
from neuron_top.recording.pacing import zone
from neuron_top.snapshot import Snapshot, snapshot_from

__all__ = ["Row", "format_table", "interval_rows", "table_json"]


@dataclass(slots=True)
class Row:
    start: float
    """The interval's start (aligned), recorded time."""
    seconds: float
    reports: int = 0
    util_avg: float | None = None
    util_max: float | None = None
    device_memory: int | None = None
    """Bytes, the most any report of the interval had."""
    exec_per_s: float | None = None
    err_per_s: float | None = None
    p99: float | None = None
    """Seconds, the worst of any app in the interval."""
    ecc_corrected: int = 0
    ecc_uncorrected: int = 0
    _util: list[float] = field(default_factory=list, repr=False)
    _exec: list[float] = field(default_factory=list, repr=False)
    _err: list[float] = field(default_factory=list, repr=False)

    def add(self, snap: Snapshot) -> None:
        self.reports += 1
        everything = snap.all
        stats = everything.core_stats
        if stats.util_avg is not None:
            self._util.append(stats.util_avg)
        peak = max((u for u in stats.util.values() if u is not None), default=None)
        if peak is not None and (self.util_max is None or peak > self.util_max):
            self.util_max = peak
        if snap.apps:
            _, device = everything.used_bytes
            self.device_memory = max(self.device_memory or 0, device)
        rates = everything.rates
        counts = [v for v in rates.executions.values() if v is not None]
        if counts and rates.period:
            self._exec.append(sum(counts) / rates.period)
        err = rates.errors_per_second
        if err is not None and rates.errors:
            self._err.append(err)
        for app in snap.apps:
            lat = app.latency("total")
            p99 = lat.get("p99") if lat else None
            if p99 is not None and math.isfinite(p99) and (self.p99 is None or p99 > self.p99):
                self.p99 = p99
        for e in snap.ecc:
            self.ecc_corrected += e.corrected
            self.ecc_uncorrected += e.uncorrected

    def close(self) -> None:
        self.util_avg = sum(self._util) / len(self._util) if self._util else None
        self.exec_per_s = sum(self._exec) / len(self._exec) if self._exec else None
        self.err_per_s = sum(self._err) / len(self._err) if self._err else None


def interval_rows(index: Index, every: float, lo: int = 0, hi: int | None = None) -> list[Row]:
    """One ``Row`` per interval of ``every`` seconds that holds a report of ``[lo, hi)``, in time order."""
    hi = len(index) if hi is None else hi
    rows: dict[float, Row] = {}
    for i in range(lo, hi):
        ts = index.timestamp(i)
        try:
            snap = snapshot_from(index.get(i), ts, i + 1)
        except (DecodeError, IndexError, OSError):
            continue
        start = math.floor(ts / every) * every
        row = rows.get(start)
        if row is None:
            row = rows[start] = Row(start, every)
        row.add(snap)
    out = [rows[k] for k in sorted(rows)]
    for r in out:
        r.close()
    return out


def _when(ts: float, wallclock: bool, first: float) -> str:
    if wallclock:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    return "+" + fmt.duration(ts - first)


def format_table(rows: list[Row], wallclock: bool) -> str:
    """The table as text: one line per interval, ``-`` where no report had the value."""
    first = rows[0].start if rows else 0.0
    z = f" ({zone(first)})" if wallclock and rows else ""
    head = (f"{'interval' + z:<24} {'reports':>7} {'util avg':>8} {'util max':>8} {'dev mem':>9} "
            f"{'exec/s':>9} {'err/s':>8} {'p99':>8} {'ECC c/u':>9}")
    out = [head]
    for r in rows:
        out.append(f"{_when(r.start, wallclock, first):<24} {r.reports:>7} {fmt.pct(r.util_avg):>8} "
                   f"{fmt.pct(r.util_max):>8} {fmt.human_bytes(r.device_memory):>9} {fmt.rate(r.exec_per_s):>9} "
                   f"{fmt.rate(r.err_per_s):>8} {fmt.latency(r.p99) if r.p99 is not None else '-':>8} "
                   f"{f'{r.ecc_corrected}/{r.ecc_uncorrected}':>9}")
    return "\n".join(out) + "\n"


def table_json(rows: list[Row], every: float, wallclock: bool) -> bytes:
    """The table as one JSON document: ``{"every": s, "zone": ..., "intervals": [...]}``."""
    items = []
    for r in rows:
        d = asdict(r)
        for k in ("_util", "_exec", "_err"):
            d.pop(k)
        items.append(d)
    return msgspec.json.encode({"every": every, "wallclock": wallclock,
                                "zone": zone(rows[0].start) if rows and wallclock else None, "intervals": items})

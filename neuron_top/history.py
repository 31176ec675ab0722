"""Bounded history of everything drawn over time.

Every series is aligned with one timestamp ring: each ``push`` appends exactly one value (None when the report
did not have it) to every series known so far, and a series first seen later is padded with None. None is the
explicit "no data" sentinel: widgets draw a gap, never a zero. Owned by the UI thread; replay rebuilds it from a
window of snapshots after a seek.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import islice

from .snapshot import DeviceEcc, Snapshot, finite

Key = tuple[object, ...]


class History:
    def __init__(self, maxlen: int = 600) -> None:
        self.maxlen = maxlen
        self.ts: deque[float] = deque(maxlen=maxlen)
        self._series: dict[Key, deque[float | None]] = {}
        self._last: Snapshot | None = None
        self.first: Snapshot | None = None
        """The first snapshot pushed since the last clear."""
        self.pushed = 0
        """Snapshots pushed since this History was made, never reset (``clear`` does not): widgets that draw
        over several reports align on it, and it tells them the data changed."""
        self.ecc_totals: dict[int, DeviceEcc] = {}
        """ECC events per device summed over every report pushed since the last clear. neuron-monitor reports
        the events of each period (its Prometheus exporter adds them to counters), so totals are sums."""
        self.clears = 0
        """How many times ``clear`` ran: with ``pushed``, it tells a widget that keeps something drawn from the
        history whether the history only moved on since (replay rebuilds it after a seek)."""

    def __len__(self) -> int:
        return len(self.ts)

    def clear(self) -> None:
        self.clears += 1
        self.ts.clear()
        self._series.clear()
        self._last = None
        self.first = None
        self.ecc_totals = {}

    def series(self, key: Key) -> deque[float | None]:
        """The values of one series, oldest first (empty if never seen)."""
        return self._series.get(key) or deque()

    def last(self, key: Key, n: int) -> list[float | None]:
        """The newest ``n`` values of a series, padded on the left with None to length ``n``."""
        s = self._series.get(key)
        if not s:
            return [None] * n
        vals = list(islice(reversed(s), n))
        vals.reverse()
        return [None] * (n - len(vals)) + vals

    def keys(self) -> Iterable[Key]:
        return self._series.keys()

    def extend(self, snapshots: Iterable[Snapshot]) -> None:
        for s in snapshots:
            self.push(s)

    def push(self, snap: Snapshot) -> None:
        values = self._values(snap, self._last)
        for e in snap.ecc:
            t = self.ecc_totals.get(e.device)
            self.ecc_totals[e.device] = e if t is None else DeviceEcc(
                e.device, t.mem_corrected + e.mem_corrected, t.mem_uncorrected + e.mem_uncorrected,
                t.sram_corrected + e.sram_corrected, t.sram_uncorrected + e.sram_uncorrected)
        self._last = snap
        self.pushed += 1
        if self.first is None:
            self.first = snap
        n = len(self.ts)
        self.ts.append(snap.ts)
        for key, series in self._series.items():
            series.append(values.pop(key, None))
        for key, v in values.items():  # first seen now: pad to align
            s: deque[float | None] = deque([None] * min(n, self.maxlen - 1), maxlen=self.maxlen)
            s.append(v)
            self._series[key] = s

    @staticmethod
    def _values(snap: Snapshot, prev: Snapshot | None) -> dict[Key, float | None]:
        out: dict[Key, float | None] = {}
        for i, c in snap.all.cores.items():
            out["core", i] = finite(c.neuroncore_utilization)
            f = c.effective_flops if c.effective_flops is not None else c.flops
            out["flops", i] = finite(f)
        for i, t in snap.vcpus:
            idle = finite(t.idle)
            out["vcpu", i] = None if idle is None else 100.0 - idle if idle < 100.0 else 0.0  # per vCPU: no max()
        g = snap.vcpu
        if g is not None and g.average_usage is not None:
            idle = finite(g.average_usage.idle)
            out["vcpu", "avg"] = None if idle is None else max(0.0, 100.0 - idle)
            if g.context_switch_count is not None and g.period:
                out["ctxsw"] = g.context_switch_count / g.period
        mem = snap.host_memory
        if mem is not None and mem.memory_used_bytes is not None:
            out["host_mem"] = float(mem.memory_used_bytes)
        for a in (*snap.apps, snap.all):
            pid = "all" if a.is_all else a.pid
            for kind in ("total", "device"):
                lat = a.latency(kind)
                if lat is not None:
                    out["lat", pid, kind, "p50"] = lat.get("p50")
                    out["lat", pid, kind, "p99"] = lat.get("p99")
            if a.period:
                done = a.exec_summary.get("completed")
                if done is not None:
                    out["exec", pid] = done / a.period
                errs = sum(a.error_summary.values())
                out["errors", pid] = errs / a.period
            h, d = a.used_bytes
            out["dev_mem", pid] = float(d)
            out["app_host_mem", pid] = float(h)
        return out

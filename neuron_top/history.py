"""Bounded history of everything drawn over time.

Every series is aligned with one timestamp ring: each ``push`` appends exactly one value (None when the report
did not have it) to every series known so far, and a series first seen later is padded with None. None is the
explicit "no data" sentinel: widgets draw a gap, never a zero. Owned by the UI thread; replay rebuilds it from a
window of snapshots after a seek.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice, pairwise, repeat
from operator import itemgetter

from neuron_top.snapshot import AppFilter, DeviceEcc, Snapshot

__all__ = ["ExecTotals", "History", "Key"]

Key = tuple[object, ...] | str
_PRUNE_EVERY = 64
"""Pushes between looks for series of things gone (an exited app's)."""
_BUSY = itemgetter(1)


@dataclass(frozen=True, slots=True)
class ExecTotals:
    """Executions and errors since the start of a recording, up to the shown report (replay keeps them from the
    recording's index, ``recording.totals``): of every app, or of the apps a tag filter selects (``filter``)."""

    executions: tuple[int | None, ...]
    """Per ``derived.EXEC_TYPES`` outcome; None: no report so far gave it."""
    errors: int
    """Errors of every type."""
    filter: str | None = None
    """The tag filter whose apps these count; None: every app."""
    narrow: Callable[[str], ExecTotals] | None = field(default=None, compare=False)
    """These counts for the apps a filter (its text) selects, in every report up to the shown one
    (``ReplayController.since_start``); None: not known, only every app's."""

    def of(self, app_filter: AppFilter | None) -> ExecTotals:
        """The counts that go with a snapshot narrowed by ``app_filter`` (None: not filtered): the filtered
        apps' when they are known, else these (every app's: ``filter`` says so)."""
        if app_filter is None or self.narrow is None or self.filter == app_filter.text:
            return self
        return self.narrow(app_filter.text)


def _columns(snap: Snapshot) -> list[float | None]:
    """Each core's utilization, then each core's FLOPS (``derived.best_flops``), then each vCPU's busy share, in
    the report's order; None where missing, NaN or infinite. The snapshot's derived values, computed once: the
    panels read the same ones."""
    stats = snap.all.core_stats
    return [*stats.util.values(), *stats.flops.values(), *map(_BUSY, snap.cpu.per_cpu)]


class History:
    """Bounded per-metric series for the sparklines: one value per report, the last ``maxlen`` kept.

    Owned by one thread (the UI's): ``push`` adds a ``Snapshot``, ``last(key, n)`` reads a series' newest values.

    Args:
        maxlen: reports kept per series.
    """

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
        self.exec_totals: ExecTotals | None = None
        """Executions since the start of the recording up to the shown report, when known: replay sets them from
        the whole recording (the history holds only a window of it); None in a live view (not kept)."""
        self.clears = 0
        """How many times ``clear`` ran: with ``pushed``, it tells a widget that keeps something drawn from the
        history whether the history only moved on since (replay rebuilds it after a seek)."""
        self._seen: dict[Key, int] = {}
        """For each series other than the cores' and vCPUs': the last push that had it (see ``_prune``)."""
        self._shape: tuple[object, ...] | None = None
        self._own: list[deque[float | None]] = []
        self._rest: dict[Key, deque[float | None]] = {}
        """The last report's cores and vCPUs (``_shape``), their series in the order ``_columns`` gives their
        values (``_own``: ("core", i) for each core, then ("flops", i), then ("vcpu", i)), and every other series
        (the same deques as ``_series``).

        Why: a trn2 report holds ~460 series, 320 of them cores and vCPUs. Matching every value to its series
        by a tuple key was most of a push; while the cores and vCPUs stay the same (every report but the first, on
        a real machine), their values go straight to their series in order."""

    def __len__(self) -> int:
        return len(self.ts)

    def interval(self, last: int = 8) -> float | None:
        """Seconds between the reports this history holds: the median of its ``last`` newest intervals (what a
        sparkline's cell spans, whatever the reports' periods say: the first report's covers only the source's
        start-up). None before two reports, or when the clock went back."""
        n = len(self.ts)
        if n < 2:
            return None
        mid = statistics.median(b - a for a, b in pairwise(islice(self.ts, max(n - last - 1, 0), n)))
        return mid if mid > 0 else None

    def clear(self) -> None:
        self.clears += 1
        self.ts.clear()
        self._series.clear()
        self._last = None
        self.first = None
        self.ecc_totals = {}
        self.exec_totals = None
        self._seen = {}
        self._shape, self._own, self._rest = None, [], {}

    def frozen_copy(self) -> History:
        """A copy of the history as it is now, for a paused screen (``p``): what it draws from must not move
        while reports keep coming into this one. Read it only; pushing into it is not supported."""
        out = History(self.maxlen)
        out.ts = deque(self.ts, maxlen=self.maxlen)
        out._series = {k: deque(v, maxlen=self.maxlen) for k, v in self._series.items()}
        out.first = self.first
        out.pushed, out.clears = self.pushed, self.clears
        out.ecc_totals = dict(self.ecc_totals)
        out.exec_totals = self.exec_totals
        return out

    def series(self, key: Key) -> deque[float | None]:
        """The values of one series, oldest first (empty if never seen)."""
        return self._series.get(key) or deque()

    def columns(self, keys: Iterable[Key]) -> list[Sequence[float | None]]:
        """The series of each of ``keys`` (empty where never seen), in one C loop: for readers of many series at
        once (the vCPU strip's 192). Read them only."""
        return list(map(self._series.get, keys, repeat(())))

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
        totals = self.ecc_totals
        for e in snap.ecc:
            t = totals.get(e.device)
            if t is None:
                totals[e.device] = e
            elif e.has_events:
                totals[e.device] = t.plus(e)  # a period without events (nearly every one) adds nothing
        self._last = snap
        self.pushed += 1
        if self.first is None:
            self.first = snap
        n = len(self.ts)
        self.ts.append(snap.ts)
        cores, vcpus = snap.all.cores, snap.vcpus
        shape = (*cores, None, *[i for i, _ in vcpus])
        columns = _columns(snap)
        values = self._other_values(snap)
        self._seen.update(dict.fromkeys(values, self.pushed))  # C loops: ~140 keys a trn2 report
        if self.pushed % _PRUNE_EVERY == 0:
            self._prune()
        if shape == self._shape:
            deque(map(deque.append, self._own, columns), maxlen=0)  # each value to its series, the loop in C
            for key, series in self._rest.items():
                series.append(values.pop(key, None))
            if values:
                self._add(values, n)
                self._rest.update((key, self._series[key]) for key in values)
            return
        # A new shape (the first report, a core or vCPU that came or went): every series by key, then the
        # families follow it.
        own = [*(("core", i) for i in cores), *(("flops", i) for i in cores), *(("vcpu", i) for i, _ in vcpus)]
        values.update(zip(own, columns, strict=True))
        for key, series in self._series.items():
            series.append(values.pop(key, None))
        self._add(values, n)
        every = self._series
        # vCPU numbers written two ways ("1" and "01") are one series: such a report keeps this path
        mine = set(own)
        self._shape = shape if len(mine) == len(own) else None
        self._own = [every[key] for key in own]
        self._rest = {key: series for key, series in every.items() if key not in mine}

    def _prune(self) -> None:
        """Forget the series of things gone for a whole history (an app that exited): they hold nothing but None,
        and kept, every pid an app ever had would cost a series per metric for as long as the dashboard runs
        (a day's replay of a demo whose batch job restarts every few minutes grew by 55 MB)."""
        cutoff = self.pushed - self.maxlen
        gone = [key for key, last in self._seen.items() if last <= cutoff]
        for key in gone:
            del self._seen[key]
            self._series.pop(key, None)
            self._rest.pop(key, None)

    def _add(self, values: dict[Key, float | None], n: int) -> None:
        """Series first seen now, padded to align with the ``n`` reports before."""
        for key, v in values.items():
            s: deque[float | None] = deque([None] * min(n, self.maxlen - 1), maxlen=self.maxlen)
            s.append(v)
            self._series[key] = s

    @staticmethod
    def _other_values(snap: Snapshot) -> dict[Key, float | None]:
        """Every value of a report but the cores' and the vCPUs' (``push`` takes those itself)."""
        out: dict[Key, float | None] = {}
        cpu = snap.cpu
        if cpu.kinds:
            out["vcpu", "avg"] = cpu.busy
            if cpu.ctxsw is not None:
                out["ctxsw"] = cpu.ctxsw
        # NeuronCore utilization over time, per device and for all (the core history panel; the grid title's avg)
        stats = snap.all.core_stats
        if stats.util:
            out["dev_util", "all"] = stats.util_avg
            for d, u in snap.device_utils.items():
                out["dev_util", d] = u
        mem = snap.host_memory
        if mem is not None and mem.memory_used_bytes is not None:
            out["host_mem"] = float(mem.memory_used_bytes)
        for a in (*snap.apps, snap.all):
            pid = "all" if a.is_all else a.key  # the app, not the process: two runtimes may share one
            for kind in ("total", "device"):
                lat = a.latency(kind)
                if lat is not None:
                    out["lat", pid, kind, "p50"] = lat.get("p50")
                    out["lat", pid, kind, "p99"] = lat.get("p99")
            rates = a.rates
            if rates.period:
                done = rates.rate("completed")
                if done is not None:
                    out["exec", pid] = done
                out["errors", pid] = rates.errors_per_second
            h, d = a.used_bytes
            out["dev_mem", pid] = float(d)
            out["app_host_mem", pid] = float(h)
        return out

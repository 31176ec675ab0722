"""What each cell of the dashboard says, as text: the core grid's values and title, an app's row (no UI imports).

The panels draw these strings and ``--once`` prints them, so the two agree by construction (a test compares
them). The values themselves come from the snapshot's derived values (``neuron_top.derived``).
"""

from __future__ import annotations

from functools import cached_property

from neuron_top import fmt
from neuron_top.derived import Latency, device_memory, latency_state, sane_util
from neuron_top.snapshot import AllApps, AppView, Snapshot
from neuron_top.textsafe import clean

__all__ = ["APP_COLUMNS", "APP_SORTS", "FAILED", "HIDDEN", "CoreCells", "app_cells", "core_cells", "latency_cell",
           "latency_row", "memory_values", "physical_columns", "runtime_vcpu", "sorted_apps"]

HIDDEN = "·"
"""A core's value when only apps not shown use it (left out by the tag filter, or other than the app selected):
not "-", since those apps report it."""

APP_COLUMNS = (("cores", "NCs"), ("util", "util"), ("done", "done/s"), ("p50", "p50"), ("p99", "p99"),
               ("errors", "err/s"), ("bad", "bad/s"))
"""An app's row: (key, column head), in order. ``err/s``: errors by type (the error summary); ``bad/s``:
executions that did not complete cleanly (``derived.unclean_count``)."""
FAILED = "err"
"""What a cell says when the report carries an error for its group or runtime (the reason is in ``E``)."""
DEVICE_MARK = "*"
"""After a latency that is device latency, shown because the report has no total latency."""


def latency_cell(lat: Latency, percentile: str) -> str:
    """One percentile of ``AppView.latency_shown`` as every output writes it: the value ("1.2ms"), device latency
    marked ("1.2ms*"), "idle", "-" (not reported, also for a percentile the report lacks) or "err".

    >>> from neuron_top.derived import latency_state
    >>> [latency_cell(latency_state(t, d, ran), "p99") for t, d, ran in
    ...  (({"p99": 0.0081}, None, 5), (None, {"p99": 0.0012}, 5), (None, None, 0), (None, None, 5))]
    ['8.10ms', '1.20ms*', 'idle', '-']
    """
    if lat.state in ("total", "device"):
        v = lat.get(percentile)
        if v is None:
            return "-"
        return fmt.latency(v) + (DEVICE_MARK if lat.state == "device" else "")
    return FAILED if lat.state == "err" else lat.state


def runtime_vcpu(a: AppView) -> tuple[str, str]:
    """The runtime vCPU's (user, system) texts: "12.5%", "-" (not reported) or "err" (every runtime's
    ``neuron_runtime_vcpu_usage`` failed, or this one's: a failed group's zeros are not a reading)."""
    if a.failure("neuron_runtime_vcpu_usage"):
        return (FAILED, FAILED)
    ru, rs = a.vcpu
    return (fmt.pct(ru), fmt.pct(rs))


def memory_values(a: AppView, known: tuple[str, ...], breakdown: dict[str, int], total: int
                  ) -> list[tuple[str, int | None]]:
    """("Total", bytes), then each category's bytes: the known categories in their documented order, then any
    new ones the runtime added. None (shown "-") where the report gives no value: no used memory at all (the
    group missing or failed), or no breakdown (older runtimes, trimmed output), never a row of zeros."""
    names = [*known, *sorted(k for k in breakdown if k not in known)]
    if not a.memory_reported:
        return [("Total", None), *((n, None) for n in names)]
    # no runtime at all: nothing used, 0 in each category as in the total (it read "Total: 0B  Tensors: -")
    nothing = isinstance(a, AllApps) and not a.apps
    return [("Total", total), *((n, breakdown.get(n, 0) if breakdown or nothing else None) for n in names)]


def latency_row(a: AppView, kind: str, percentiles: tuple[str, ...]) -> list[str]:
    """One "total" or "device" row of the latency panel and ``--once``: each percentile's text; a single word
    ("idle", "-", "err") when the row has no values (``derived.latency_state`` for that kind alone)."""
    lat = latency_state(a.latency(kind), None, a.rates.ran, a.failure("execution_stats"))
    if lat.state == "total":
        return [latency_cell(lat, p) for p in percentiles]
    return [latency_cell(lat, percentiles[0])]


def physical_columns(snap: Snapshot) -> int:
    """How many v3d physical cores stand behind each logical core (0 when the report has none)."""
    for c in snap.all.cores.values():
        if c.v3d:
            return len(c.v3d)
    return 0


class CoreCells:
    """The core grid of one view: its title, the width of every value, and each core's value text.

    ``flops`` shows FLOPS in one unit for the whole grid (``fmt.FlopsScale``) when the report has any; ``physical``
    shows trn2's physical cores (their utilization: FLOPS are not reported per physical core)."""

    def __init__(self, snap: Snapshot, app: AppView, flops: bool = False, physical: bool = False,
                 digits: int = 0) -> None:
        self.snap, self.app = snap, app
        self.digits = digits
        """Decimals of the utilization cells (0: whole percents; 2: AWS neuron-top's "56.81%")."""
        self.phys = physical_columns(snap) if physical else 0
        stats = self._stats = app.core_stats
        """(``core`` reads these for every core: looked up once per grid)"""
        hidden = snap.filter.hidden_cores if snap.filter is not None else None
        if not app.is_all:
            # One app shown: a core only other apps use is reported (by them), so not "-": the mark the / filter
            # gives a core only filtered-out apps use
            hidden = frozenset((snap.all.core_stats.util.keys() - stats.util.keys()).union(hidden or ()))
        self._hidden = hidden
        reported = any(f is not None for f in stats.flops.values())
        self.scale = fmt.FlopsScale(stats.flops_peak) if flops and not self.phys and reported else None
        self.value_width = fmt.pct_width(digits)
        if self.scale is not None:
            self.value_width = max(fmt.FLOPS_CELL, len(self.scale(stats.flops_peak)))
        self.failed = app.failure("neuroncore_counters")
        """The reason this app's core counters are unknown ("" when reported): its cells then say "err"."""
        self.titles = self._titles(flops)
        """What the cells show, named: the title, then shorter ones for narrow panels (``title_for``)."""

    @property
    def title(self) -> str:
        return self.titles[0]

    @property
    def filter_note(self) -> str:
        """What the tag filter left out, for the grid's title ("" without a filter)."""
        f = self.snap.filter
        if f is None:
            return ""
        dimmed = f", {HIDDEN} other apps' cores" if f.hidden_cores else ""
        return f"{f.describe()}{dimmed}"

    def title_for(self, width: int) -> str:
        """The longest title that fits ``width`` cells (the shortest, cut, when none does)."""
        return next((t for t in self.titles if len(t) <= width), self.titles[-1])

    def _titles(self, flops: bool) -> tuple[str, ...]:
        """``_what`` with the filter said after it: whole, else only that there is one, else nothing."""
        what = self._what(flops)
        note = self.filter_note
        if not note:
            return what
        f = self.snap.filter
        assert f is not None
        short = f"filter: {f.shown}/{f.total} apps"
        return (*(f"{t} · {note}" for t in what), *(f"{t} · {short}" for t in what), *what)

    def _what(self, flops: bool) -> tuple[str, ...]:
        """Utilization in %, FLOPS in which unit, physical cores; and when FLOPS were asked for and are not
        what the cells show, that they are not reported."""
        snap, stats = self.snap, self.app.core_stats
        ver = clean(snap.hardware.neuroncore_version or "", 8)
        head = f"NeuronCore {ver}" if ver else "NeuronCore"
        if self.phys:
            avg = fmt.pct(self.app.physical_stats.avg)
            if flops:
                return (f"{head} physical cores: utilization % (avg {avg}) · FLOPS are not reported per physical "
                        "core", f"{ver or 'NeuronCore'} physical cores: utilization % (avg {avg}) · no FLOPS per physical core",
                        f"physical cores: util % (avg {avg}) · no FLOPS per physical core")
            return (f"{head} physical cores: utilization % (avg {avg})",)
        if self.scale is not None:
            unit = f"{'effective ' if stats.effective else ''}{self.scale.unit}LOPS"
            total = f"total {self.scale.total(stats.flops_total)}LOPS"
            mean = snap.app_flops_avg(self.app)
            if mean is None:
                return (f"{head} {unit} per core ({total})",)
            return (f"{head} {unit} per core (avg {self.scale.total(mean)}LOPS, {total})",
                    f"{head} {unit} per core ({total})")
        avg = fmt.pct(snap.app_util(self.app))  # an app's own cores, not the zeros it reports for others
        if flops:
            return (f"{head} utilization % (avg {avg}) · FLOPS are not reported on this machine",
                    f"{head} utilization % (avg {avg}) · no FLOPS reported")
        return (f"{head} utilization % (avg {avg})",)

    @cached_property
    def _memory(self) -> dict[int, int]:
        app = self.app
        return device_memory(app.core_memory, self.snap.cores_per_device, self.snap.device_count,
                             app.used_bytes[1] if app.memory_reported else None)

    def memory(self, dev: int) -> tuple[str, float | None]:
        """Device ``dev``'s memory used by the app (every app for "all") of the device's memory
        (``fmt.used_of``: ``58.7/96G``), and the percent used (None without a size): nvitop's MEM beside UTIL."""
        return self._memories[dev] if dev in self._memories else self._memory_of(dev)

    def _memory_of(self, dev: int) -> tuple[str, float | None]:
        used = self._memory.get(dev)
        size = self.snap.hardware.neuron_device_memory_size
        size = size if isinstance(size, int) and size > 0 else None
        return fmt.used_of(used, size), (used / size * 100 if used is not None and size else None)

    @cached_property
    def _memories(self) -> dict[int, tuple[str, float | None]]:
        """``memory`` of every device, made once: the grid measures them all (``memory_width``), then draws each."""
        return {d: self._memory_of(d) for d in range(self.snap.device_count)}

    @cached_property
    def memory_width(self) -> int:
        """Characters of the widest device memory text; 0 when no device's memory is reported."""
        if not self._memory:
            return 0
        return max(len(text) for text, _ in self._memories.values())

    @property
    def cells_per_device(self) -> int:
        return self.snap.cores_per_device * (self.phys or 1)

    def plain_util(self) -> dict[int, float | None] | None:
        """Each reported core's utilization when every cell is ``core``'s plain case (a percent, or "-" for a core
        not in it): no failure, no physical or FLOPS view, no core dimmed by the filter. None otherwise. For the
        grid's per-core loop, which then need not ask ``core`` for each core (it runs for 64-128 cores a report)."""
        if self.failed or self.phys or self.scale is not None or self._hidden:
            return None
        return self._stats.util

    def core(self, index: int) -> list[tuple[str, float | None, float | None]]:
        """The cells of one (logical) core: (value text, bar percent, load percent) for each, one per physical
        core in the physical view. A core the app does not report: "-" and no bar; every core of an app whose
        core counters failed: "err"."""
        if self.failed:
            return [(FAILED.rjust(self.value_width), None, None)] * max(self.phys, 1)
        stats = self._stats
        narrowed = self._hidden
        if narrowed is not None and index in narrowed:
            return [(HIDDEN.rjust(self.value_width), None, None)] * (self.phys or 1)
        if self.phys:
            subs = self.app.physical_stats.util.get(index, ())
            out = []
            for p in range(self.phys):
                u = subs[p] if p < len(subs) else None
                ok = sane_util(u)
                out.append((fmt.pct_cell(u, self.digits), u if ok else None, u if ok else None))
            return out
        if index not in stats.util:
            return [("-".rjust(self.value_width), None, None)]
        u = stats.util[index]
        if self.scale is not None:
            f = stats.flops.get(index)
            peak = stats.flops_peak or 1.0
            return [(self.scale(f), None if f is None else f / peak * 100, u)]
        ok = sane_util(u)  # an absurd value: flagged, no bar
        return [(fmt.pct_cell(u, self.digits), u if ok else None, u if ok else None)]


def core_cells(snap: Snapshot, app: AppView, flops: bool = False, physical: bool = False,
               digits: int = 0) -> CoreCells:
    """The core grid's title and cells as the dashboard draws them, for the ``--once`` text (``CoreCells``)."""
    return CoreCells(snap, app, flops, physical, digits)


def app_cells(snap: Snapshot, a: AppView) -> dict[str, str]:
    """What an app's row says, column by column (``APP_COLUMNS``)."""
    rates = a.rates
    lat = a.latency_shown
    util = snap.app_util(a)
    exec_failed = bool(a.failure("execution_stats"))
    return {
        "cores": str(len(snap.cores_of(a))),
        "util": FAILED if a.failure("neuroncore_counters") else fmt.pct(util, digits=0),
        "done": FAILED if exec_failed else fmt.per_period(rates.executions.get("completed"), rates.period),
        "p50": latency_cell(lat, "p50"),
        "p99": latency_cell(lat, "p99"),
        "errors": FAILED if exec_failed else fmt.per_period(rates.error_count if rates.errors else None,
                                                            rates.period),
        "bad": FAILED if exec_failed else fmt.per_period(rates.bad_count, rates.period),
    }


APP_SORTS = ("pid", "app", *(k for k, _ in APP_COLUMNS))
"""What the apps table can be sorted by: the report's order (pid), the name, then each column."""


def _sort_value(snap: Snapshot, a: AppView, key: str) -> float | str | None:
    rates = a.rates
    if key == "app":
        return a.label.lower()
    if key == "cores":
        return len(snap.cores_of(a))
    if key == "util":
        return snap.app_util(a)
    if key == "done":
        return rates.rate("completed")
    if key in ("p50", "p99"):
        return a.latency_shown.get(key)  # as the cell shows it (device latency when there is no total)
    if key == "errors":
        return rates.errors_per_second if rates.errors else None
    if key == "bad":
        return rates.bad_per_second
    return a.pid


def sorted_apps(snap: Snapshot, apps: tuple[AppView, ...], key: str, descending: bool) -> tuple[AppView, ...]:
    """``apps`` ordered by ``key`` (``APP_SORTS``), the way the apps table shows them: "not reported" and idle
    (None) always last whatever the direction, ties in pid order. Names go A-Z and numbers largest first unless
    ``descending`` says otherwise."""
    if key == "pid":
        return tuple(sorted(apps, key=lambda a: a.pid, reverse=descending))
    known = [(v, a) for a in apps if (v := _sort_value(snap, a, key)) is not None]
    unknown = [a for a in apps if _sort_value(snap, a, key) is None]
    known.sort(key=lambda va: va[1].pid)
    known.sort(key=lambda va: va[0], reverse=descending)
    return (*(a for _, a in known), *unknown)

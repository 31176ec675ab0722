"""The rules every output shares, computed once per snapshot (no UI imports).

What a number on screen means is decided here and nowhere else: which FLOPS count (effective when reported),
what an average is taken over, how a per-period counter becomes a rate, which cores an app uses, which error
types there are. ``AppView`` and ``Snapshot`` expose these as cached properties (``app.core_stats``,
``app.rates``, ``snap.cpu``, ``snap.cores_of(app)``), so the dashboard's panels, the drill-down screens and the
``--once`` text read the same values and only format them: they agree by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from math import isfinite
from typing import Protocol

from neuron_top import schema


class _Subgraph(Protocol):
    def global_core(self, cores_per_device: int) -> int | None: ...


class _Model(Protocol):
    @property
    def subgraphs(self) -> Iterable[_Subgraph]: ...

__all__ = [
    "BUSY_PERCENT",
    "COUNTED",
    "CPU_KINDS",
    "ERROR_TYPES",
    "EXEC_TYPES",
    "NO_EXECUTIONS",
    "RATED",
    "UNCLEAN",
    "AppRates",
    "CoreStats",
    "CpuSummary",
    "Latency",
    "PhysicalStats",
    "add_executions",
    "app_rates",
    "best_flops",
    "core_stats",
    "core_utilization",
    "cpu_summary",
    "device_memory",
    "device_utils",
    "error_types",
    "joined_core_stats",
    "latency_state",
    "mean_util",
    "owned_cores",
    "per_second",
    "physical_stats",
    "sane_util",
    "unclean_count",
]

BUSY_PERCENT = 1.0
"""A core above this utilization (percent) is busy; at most this, allocated to a pod or holding a model, it is
idle: the pods screen, ``--once`` and the fleet's queries (``fleet.queries.BUSY``, as a ratio) say the same."""

ERROR_TYPES = ("generic", "numerical", "transient", "model", "runtime", "hardware")
"""The error types neuron-monitor documents, in its order; newer runtimes may add more (``error_types``)."""
EXEC_TYPES = ("completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input",
              "failed_to_queue")
RATED = ("completed", "completed_with_err", "completed_with_num_err")
"""Execution outcomes shown per second: they come by the hundred."""
COUNTED = ("timed_out", "incorrect_input", "failed_to_queue")
"""Execution outcomes shown as counts in the report's period: rare, and each one matters (0.2/s would hide
"one request timed out")."""
UNCLEAN = ("completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input", "failed_to_queue")
"""Execution outcomes that are not a clean completion: what ``bad/s`` counts (``unclean_count``). Not the same as
the error summary (``err/s``): that counts errors by type, and one execution can raise several, or none."""
NO_EXECUTIONS: tuple[int | None, ...] = (None,) * len(EXEC_TYPES)
"""Counts per ``EXEC_TYPES`` outcome when none was reported (``AppRates.outcomes``, ``add_executions``)."""
CPU_KINDS = ("user", "nice", "system", "io_wait", "irq", "soft_irq")
"""``CpuTimes`` fields that make up a busy vCPU, in the order htop stacks them."""


def _finite(x: float | int | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if isfinite(x) else None


UTIL_MAX = 110.0
"""Utilization above this (or below 0) is not a measurement but bad data: flagged, left out of averages. Real
reports reach a little over 100 (a sample window that ran long), never far."""


def sane_util(u: float | None) -> bool:
    """Whether a utilization percent is a plausible measurement (None: not reported, which is not "bad")."""
    return u is None or 0.0 <= u <= UTIL_MAX


def best_flops(c: schema.CoreCounters) -> float | None:
    """The FLOPS of a core as shown everywhere: effective FLOPS when the runtime reports them (they count what
    the model needed, not what the hardware did), else FLOPS; None when missing, NaN or infinite."""
    return _finite(c.effective_flops if c.effective_flops is not None else c.flops)


def core_utilization(shares: Iterable[float | None]) -> float | None:
    """The utilization of one NeuronCore from what each runtime reports for it: the **summed share**, the sum of
    the runtimes' values, clipped to 100; None when no runtime reports a number.

    Why a sum: neuron-monitor reports ``neuroncore_utilization`` per runtime (``neuroncores_in_use`` of each
    runtime's ``neuroncore_counters``), as the share of the period that runtime kept the core busy; a runtime
    reports 0 for a core it does not use (seen in real reports). A NeuronCore runs one runtime's work at a time
    (the runtime takes its cores for itself; two runtimes on one core in one period means one after the other,
    time-sliced), so the shares of one period add up to the core's busy time. A max would hide the second
    runtime's share; an average would halve a busy core for every idle runtime listing it. Clipped because two
    runtimes' periods do not line up exactly. Every output (dashboard, ``--once``, ``--json``, the exporter's
    ``neurontop_neuroncore_utilization_ratio``, the fleet) uses this rule.

    >>> core_utilization([30.0, 50.0])  # two runtimes on one core in one period
    80.0
    >>> core_utilization([70.0, 0.0, 60.0])  # runtimes' periods overlap a little: never above 100
    100.0
    >>> core_utilization([None, float("nan")]) is None  # not reported is not 0
    True
    """
    total: float | None = None
    for u in shares:
        u = _finite(u)
        if u is not None:
            total = u if total is None else total + u
    return None if total is None else min(max(total, 0.0), 100.0)


def unclean_count(outcomes: Mapping[str, int | None] | None) -> int | None:
    """Executions that did not complete cleanly (``UNCLEAN``: completed with an error, timed out, bad input,
    rejected by a full queue): what ``bad/s``, the fleet's bad/s, ``health`` and the replay's error markers
    count. None when the report gives no execution outcome at all (not reported, not zero).

    >>> unclean_count({"completed": 90, "completed_with_err": 2, "timed_out": 1, "failed_to_queue": None})
    3
    >>> unclean_count({}) is None, unclean_count({"completed": None}) is None
    (True, True)
    """
    if not outcomes or not any(isinstance(v, int) for v in outcomes.values()):
        return None
    n = 0
    for k in UNCLEAN:
        v = outcomes.get(k)
        if isinstance(v, int) and v > 0:
            n += v
    return n


def add_executions(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """Two counts per ``EXEC_TYPES`` outcome (``AppRates.outcomes``) added: an outcome stays None (not reported)
    only when neither reports it; a count since start is the sum of the periods' counts.

    >>> add_executions((5, None, None, 0, None, None), (7, 1, None, None, None, None))
    (12, 1, None, 0, None, None)
    """
    return tuple(y if x is None else x if y is None else x + y for x, y in zip(a, b, strict=True))


def per_second(n: int | None, period: float | None) -> float | None:
    """A counter of one report's period as a rate; None when there is no count or no period."""
    if n is None or not period:
        return None
    return n / period


@dataclass(frozen=True, slots=True)
class CoreStats:
    """Utilization and FLOPS of a set of cores (an app's, or every core for "all")."""

    util: dict[int, float | None]
    """Core index -> utilization percent (None: not reported or not a number)."""
    flops: dict[int, float | None]
    """Core index -> ``best_flops``."""
    util_avg: float | None
    """Mean utilization over the cores that report one."""
    flops_total: float
    flops_peak: float
    """The busiest core's FLOPS (0.0 when none): the scale of the FLOPS bars and the unit of the grid."""
    effective: bool
    """Some core reports effective FLOPS (the title then says "effective FLOPS")."""

    @property
    def flops_kind(self) -> str:
        return "effective FLOPS" if self.effective else "FLOPS"


def core_stats(cores: Mapping[int, schema.CoreCounters]) -> CoreStats:
    """Per core: utilization and best FLOPS; the mean utilization, the FLOPS sum and peak, whether effective FLOPS were reported."""
    util = {i: _finite(c.neuroncore_utilization) for i, c in cores.items()}
    flops = {i: best_flops(c) for i, c in cores.items()}
    return _core_stats(util, flops, any(c.effective_flops is not None for c in cores.values()))


def joined_core_stats(parts: Iterable[CoreStats]) -> CoreStats:
    """``core_stats`` of the cores of ``parts`` together, where no core is in two of them: each core's figures as
    its part has them, then the mean, sum and peak over them all. The "all" of a report whose runtimes share no
    core (the usual case) is its apps' cores side by side: made so, each core's figures are worked out once a
    report, for its app, not again for "all".

    >>> a = core_stats({0: schema.CoreCounters(neuroncore_utilization=50.0, flops=2.0)})
    >>> b = core_stats({1: schema.CoreCounters(neuroncore_utilization=70.0, effective_flops=1.0)})
    >>> joined_core_stats([a, b]) == core_stats({**{0: schema.CoreCounters(neuroncore_utilization=50.0, flops=2.0)},
    ...     1: schema.CoreCounters(neuroncore_utilization=70.0, effective_flops=1.0)})
    True
    """
    util: dict[int, float | None] = {}
    flops: dict[int, float | None] = {}
    effective = False
    for p in parts:
        util.update(p.util)
        flops.update(p.flops)
        effective = effective or p.effective
    return _core_stats(util, flops, effective)


def _core_stats(util: dict[int, float | None], flops: dict[int, float | None], effective: bool) -> CoreStats:
    us = [u for u in util.values() if u is not None and 0.0 <= u <= UTIL_MAX]  # absurd values are not averaged
    fs = [f for f in flops.values() if f is not None]
    return CoreStats(util, flops, sum(us) / len(us) if us else None, sum(fs), max(fs, default=0.0), effective)


@dataclass(frozen=True, slots=True)
class PhysicalStats:
    """trn2 with LNC=2: the utilization of the physical cores behind each logical core."""

    util: dict[int, tuple[float | None, ...]]
    """Logical core index -> each physical core's utilization, in the report's order."""
    avg: float | None
    """Mean over every physical core that reports one."""


def physical_stats(cores: Mapping[int, schema.CoreCounters]) -> PhysicalStats:
    """trn2 LNC=2: each logical core's physical cores' utilization, and their mean."""
    util = {i: tuple(_finite(p.neuroncore_utilization) if p is not None else None for p in (c.v3d or {}).values())
            for i, c in cores.items()}
    vals = [u for us in util.values() for u in us if u is not None]
    return PhysicalStats(util, sum(vals) / len(vals) if vals else None)


def mean_util(stats: CoreStats, cores: Iterable[int]) -> float | None:
    """The mean utilization of ``cores`` (an app's own: the zeros it reports for other cores left out)."""
    vals = [u for i in cores if (u := stats.util.get(i)) is not None and 0.0 <= u <= UTIL_MAX]
    return sum(vals) / len(vals) if vals else None


def error_types(summaries: Iterable[Mapping[str, int]]) -> tuple[str, ...]:
    """The documented error types, then any other key some app's error summary has, sorted: an unknown error is
    still an error, and every output lists the same columns."""
    extra = sorted({k for s in summaries for k in s if k not in ERROR_TYPES})
    return (*ERROR_TYPES, *extra)


@dataclass(frozen=True, slots=True)
class AppRates:
    """An app's executions and errors in one report, as every output shows them."""

    period: float | None
    """Seconds the counters cover (None: the report did not say; then counts are shown as they are)."""
    executions: dict[str, int | None]
    """Every ``EXEC_TYPES`` outcome's count in the period (None: not reported)."""
    errors: dict[str, int]
    """Error type -> count in the period, for the types the app reports."""

    def rate(self, key: str) -> float | None:
        """An execution outcome per second."""
        return per_second(self.executions.get(key), self.period)

    def error_rate(self, kind: str) -> float | None:
        """An error type per second (None: the app does not report it)."""
        return per_second(self.errors.get(kind), self.period)

    @property
    def error_count(self) -> int:
        """Errors of every type in the period."""
        return sum(self.errors.values())

    @property
    def failed_count(self) -> int:
        """Executions that never completed in the period: timed out, bad input, rejected by a full queue."""
        return sum(self.executions.get(k) or 0 for k in COUNTED)

    @property
    def errors_per_second(self) -> float | None:
        """Errors of every type per second, ``err/s`` (None without a period or without an error summary)."""
        return per_second(self.error_count, self.period) if self.errors else None

    @property
    def bad_count(self) -> int | None:
        """Executions that did not complete cleanly in the period (``unclean_count``); None: not reported."""
        return unclean_count(self.executions)

    @property
    def bad_per_second(self) -> float | None:
        """``bad/s``: executions that did not complete cleanly, per second (None without a period or counts)."""
        return per_second(self.bad_count, self.period)

    @property
    def outcomes(self) -> tuple[int | None, ...]:
        """The count of each ``EXEC_TYPES`` outcome in the period, in that order (None: not reported)."""
        return tuple(self.executions.get(k) for k in EXEC_TYPES)

    @property
    def ran(self) -> int | None:
        """Executions of every outcome in the period; None when the report gives no outcome."""
        vals = [v for v in self.executions.values() if v is not None]
        return sum(vals) if vals else None


def app_rates(exec_summary: Mapping[str, int], error_summary: Mapping[str, int],
              period: float | None) -> AppRates:
    """An app's executions by outcome and errors by type in one report's period, with the period (``AppRates``)."""
    return AppRates(period, {k: exec_summary.get(k) for k in EXEC_TYPES}, dict(error_summary))


@dataclass(frozen=True, slots=True)
class Latency:
    """An app's latency as every output shows it, in one of five states (``state``):

    * ``"total"``: the report gives total latency (``values``);
    * ``"device"``: no total latency, but device latency (``values``; shown marked, e.g. ``1.2ms*``);
    * ``"idle"``: the app ran nothing in the period (its execution counts are all zero);
    * ``"-"``: not reported (no latency, and the app did run, or gave no counts);
    * ``"err"``: the runtime or its ``execution_stats`` group reported an error (``reason``).
    """

    state: str
    values: Mapping[str, float]
    reason: str = ""

    def get(self, percentile: str) -> float | None:
        """The percentile in seconds, when ``state`` is "total" or "device" and the report has it."""
        return self.values.get(percentile)


def latency_state(total: Mapping[str, float] | None, device: Mapping[str, float] | None, ran: int | None,
                  failure: str = "") -> Latency:
    """Which of ``Latency``'s states an app's latency is in: failed first, then total, device, idle, not reported.
    ``ran``: its executions in the period (``AppRates.ran``); idle only when that is 0.

    >>> latency_state(None, {"p50": 0.0011}, ran=816).state  # a real inf2 report: only device latency
    'device'
    >>> latency_state(None, None, ran=0).state, latency_state(None, None, ran=12).state
    ('idle', '-')
    >>> latency_state({"p50": 0.002}, None, ran=5, failure="execution_stats: timed out").state
    'err'
    """
    if failure:
        return Latency("err", {}, failure)
    if total:
        return Latency("total", total)
    if device:
        return Latency("device", device)
    if ran == 0:
        return Latency("idle", {})
    return Latency("-", {})


@dataclass(frozen=True, slots=True)
class CpuSummary:
    """The machine's vCPUs in one report."""

    count: int
    busy: float | None
    """Percent busy on average (100 - idle)."""
    kinds: tuple[tuple[str, float], ...]
    """(``CPU_KINDS`` field, percent) of the average, in stacking order."""
    ctxsw: float | None
    """Context switches per second."""
    per_cpu: tuple[tuple[int, float | None], ...]
    """(vCPU number, percent busy) for each vCPU, in number order."""


def _busy(idle: float | None) -> float | None:
    if idle is None:  # _finite inline: called for each of a trn2's 192 vCPUs a report
        return None
    idle = float(idle)
    if not isfinite(idle):
        return None
    return 100.0 - idle if idle < 100.0 else 0.0


def cpu_summary(g: schema.VcpuUsage | None, cpus: tuple[tuple[int, schema.CpuTimes], ...]) -> CpuSummary:
    """The machine's vCPUs in one report: how many, the average busy share, by kind, context switches per second, each vCPU's."""
    avg = g.average_usage if g is not None else None
    kinds = tuple((k, _finite(getattr(avg, k)) or 0.0) for k in CPU_KINDS) if avg is not None else ()
    ctx = per_second(g.context_switch_count, _finite(g.period)) if g is not None else None
    return CpuSummary(len(cpus), _busy(avg.idle) if avg is not None else None, kinds, ctx,
                      tuple([(i, _busy(c.idle)) for i, c in cpus]))  # a list: no generator resumed per vCPU


def device_utils(stats: CoreStats, cores_per_device: int) -> dict[int, float]:
    """Device index -> the mean utilization of its cores that report a plausible one (``mean_util``'s rule:
    absurd values left out); a device none of whose cores reports one is absent. The core utilization history's
    per-device lines (``History``: ``("dev_util", d)``).

    >>> device_utils(CoreStats({0: 50.0, 1: 70.0, 2: None, 3: 1e9, 4: 0.0}, {}, None, 0.0, 0.0, False), 2)
    {0: 60.0, 2: 0.0}
    """
    sums: dict[int, list[float]] = {}
    per = max(cores_per_device, 1)
    for i, u in stats.util.items():
        if u is not None and 0.0 <= u <= UTIL_MAX:
            acc = sums.get(i // per)
            if acc is None:
                sums[i // per] = [u, 1.0]
            else:
                acc[0] += u
                acc[1] += 1.0
    return {d: total / n for d, (total, n) in sums.items()}


def device_memory(core_memory: Mapping[int, Mapping[str, int]], cores_per_device: int, devices: int = 0,
                  total: int | None = None) -> dict[int, int]:
    """Device index -> device memory used (bytes), the sum of every category of the cores on it (neuron-monitor
    reports device memory per NeuronCore, ``memory_used``); a device none of whose cores is reported is absent
    (not reported, not zero). Output without the per-core breakdown gives only the runtimes' ``total``: on a
    machine of one device (``devices``) that is the device's. What the core grid's memory column and the device
    view show.

    >>> device_memory({0: {"tensors": 5, "code": 1}, 1: {"tensors": 2}, 5: {}}, 2)
    {0: 8, 2: 0}
    >>> device_memory({}, 2, devices=1, total=141649980), device_memory({}, 2, devices=2, total=5)
    ({0: 141649980}, {})
    """
    if not core_memory:
        return {0: total} if devices == 1 and total is not None else {}
    out: dict[int, int] = {}
    per = max(cores_per_device, 1)
    for i, cats in core_memory.items():
        d = i // per
        out[d] = out.get(d, 0) + sum(cats.values())
    return out


def owned_cores(core_memory: Mapping[int, Mapping[str, int]], models: Callable[[], Iterable[_Model]],
                stats: CoreStats, cores_per_device: int) -> tuple[int, ...]:
    """The cores an app uses: with memory or load on them; else those its models sit on; else the cores it
    reports. Apps also report zeros for cores they do not own (seen in real output), so "reported" alone would
    list every core of the machine. ``models`` is called only when memory and load say nothing: decoding an
    app's models on every report for this would cost more than the rest of the row."""
    owned = {i for i, cats in core_memory.items() if any(cats.values())}
    owned |= {i for i, u in stats.util.items() if (u or 0) > 0}
    if not owned:
        owned = {c for m in models() for s in m.subgraphs if (c := s.global_core(cores_per_device)) is not None}
    return tuple(sorted(owned or stats.util))

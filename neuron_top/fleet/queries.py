"""The fleet's PromQL: a fixed set of server-side aggregated queries, one answer series per host and figure.

Why aggregated on the server: a trn2 host exports ~600 series (every runtime's every core, five memory categories
each); 256 hosts are ~150,000. Each query here is ``... by (instance_id)`` (or the ``--by`` label), so its answer
has at most a few series per host, and the number of queries does not depend on the number of hosts.

The names and labels are those of AWS's ``neuron-monitor-prometheus.py`` (and of ``neuron-top export``).
Rules the queries follow:

* Every runtime reports every core (0.0 on the cores it does not use), so a core's utilization is combined over
  runtimes first, by the rule every view uses (``derived.core_utilization``, the summed share: the runtimes'
  shares of the period added up, at most 1), each runtime's series taken once (``max by`` its runtime_tag and
  core: a host scraped by two jobs must not add up twice); the host's figure is the average of those (AWS's
  dashboard averages the raw series, which dilutes it by the number of runtimes) and its busiest core the max.
* A host scraped twice (two jobs scraping one exporter) must not count twice: the ``info`` query counts the
  copies (scrape targets) and the row divides its plain sums by that. (Merging the copies in PromQL, a
  ``max by`` each series' identity before the sum, costs Prometheus ~20 us a series: five times the read.)
  Figures that already merge the copies (the core counts, made from the per-core ``max by``; ECC, a ``max by``
  device and event) are not divided again.
* A figure that is absent is absent: counts that can legitimately be zero get an explicit ``or ... * 0`` so
  "no busy core" is 0 while "no utilization series at all" stays blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neuron_top.derived import BUSY_PERCENT
from neuron_top.textsafe import escape_label_value

__all__ = ["DEFAULT_LABELS", "PART", "RULES", "SLOW_EVERY", "FleetQuery", "MatchError", "QuerySet", "check_label",
           "host_family", "host_queries", "host_runtimes", "label", "matcher", "parse_match", "runtime_tag"]

LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
"""A classic label name, written bare; any other (OpenTelemetry's ``@resource.k8s.pod.name`` in CloudWatch's and
Prometheus 3's UTF-8 names) is written quoted (``label``)."""
DEFAULT_LABELS = ("instance_id", "instance_name", "instance_type", "availability_zone", "region")
"""The instance labels AWS's exporter puts on every series (``instance_info``)."""
PRESENCE = ("instance_info", "neuron_hardware_info", "system_vcpu_count")
"""Families whose samples say "this host is being scraped" (any one is enough)."""
ON_DEVICE = 'memory_location="neuron_device"'
P99 = 'percentile="p99"'
PART = "neuron_top"
"""The label that tells apart the parts of a query made of several (``_tagged``)."""
SLOW_EVERY = 5
"""A slow query is asked once in this many refreshes (every 10 s at the default 2 s refresh)."""
BUSY = BUSY_PERCENT / 100.0
"""A core above 1% utilization is busy; a core with a model loaded and at most this is idle-but-allocated (the
ratio of ``derived.BUSY_PERCENT``, the one rule)."""


RULES = {
    "util": "instance_id:neuroncore_utilization_ratio:avg_sum",
    "busiest": "instance_id:neuroncore_utilization_ratio:max_sum",
    "busy": "instance_id:neuroncore_utilization_ratio:count_busy",
    "allocated": "instance_id:neuroncore_memory_usage_model_code:count_loaded",
    "executions": "instance_id:execution_status:rate1m",
    "p99": "instance_id:execution_latency_seconds:max_active1m",
    "mem_used": "instance_id:neuron_runtime_memory_used_bytes:sum",
    "apps": "instance_id:neuron_runtime_memory_used_bytes:count",
    "ecc": "instance_id:hardware_ecc_events:sum_last15m",
    "presence": "instance_id:neuron_presence:max_timestamp",
}
"""The series of ``deploy/prometheus/neuron-top.recording.yml`` each query reads instead of the raw ones. Each
keeps every label of its source but the runtime and the core (``without``), so ``--match``, ``--by`` and a shard's
matchers select them as they select the raw series."""
RULE_RATE_WINDOW = "1m"
"""The window the rules' rates were recorded with: another ``--rate-window`` reads the raw series."""
RULE_ECC_WINDOW = "15m"
"""The window in which the rules keep a vanished ECC counter's last value: another ``--ecc-window`` reads the raw
series."""


@dataclass(frozen=True, slots=True)
class FleetQuery:
    name: str
    """Short name shown with errors: "cores", "ecc" ..."""
    expr: str
    fills: tuple[str, ...]
    """The row fields its answer fills (blank when it fails)."""
    slow: bool = False
    """What changes slowly (labels, hardware, models loaded, a 15 minute ECC window, hosts long gone) is asked
    once every ``SLOW_EVERY`` refreshes, in turns in the order of ``QuerySet.queries`` (the dearest first, so no
    two dear ones share a turn), and when a new host shows up; the rest every refresh."""


class MatchError(ValueError):
    """A ``--match`` selector that is not a list of label matchers."""


_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*|"(?:[^"\\]|\\.)+")\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|\Z)')


def core_utilization(selector: str, by: str, summed: str = "") -> str:
    """PromQL for each NeuronCore's utilization (a ratio) by the rule every view uses, ``derived.core_utilization``:
    the runtimes' shares added up, at most 1. ``by`` names the labels that identify a core (``instance_id,
    neuroncore`` and any grouping label); each runtime's series is taken once first (``max by`` its tag), so a
    host scraped by two jobs is not added up twice.

    ``summed``: neuron-top export's own figure of it (``neurontop_neuroncore_utilization_ratio``, the rule applied
    to each report), read first where a host has it. AWS's family keeps one series per runtime tag, so runtimes
    that share a tag (all four tagged "1" on a real inf1 node) leave only the last one's share in it."""
    aws = f"clamp_max(sum by ({by}) (max by ({by}, runtime_tag) ({selector})), 1)"
    return f"(max by ({by}) ({summed}) or {aws})" if summed else aws


NO_TAG = "None"
"""The ``runtime_tag`` AWS's exporter writes for a runtime without a tag (Python's ``str(None)``), and so does
``neuron-top export``, which keeps its label values."""


def runtime_tag(value: str) -> str:
    """A series' ``runtime_tag`` as neuron-monitor reported it: "" for a runtime without one (``NO_TAG``), which
    the hosts' own reports show as "(no tag)" or by pid, not as a tag "None"."""
    return "" if value == NO_TAG else value


def label(name: str) -> str:
    """``name`` as PromQL writes it: bare when it is a classic name, else quoted (Prometheus 3 and CloudWatch's
    UTF-8 label names, e.g. ``"@resource.k8s.pod.name"``)."""
    if LABEL_NAME.match(name):
        return name
    return '"' + escape_label_value(name) + '"'


def matcher(name: str, value: str) -> str:
    r"""``name="value"``, both escaped with the exporter's one escaper (``textsafe.escape_label_value``).

    >>> print(matcher("@resource.k8s.pod.name", 'a "b"\n'))
    "@resource.k8s.pod.name"="a \"b\"\n"
    """
    return f'{label(name)}="{escape_label_value(value)}"'


def parse_match(text: str | None) -> str:
    """``--match`` as the inside of a selector's braces: ``job="neuron",instance_type=~"trn2.*"``.

    Accepts ``{...}`` or the bare matchers; a metric name (``up{job="x"}``) is refused, since the selector is
    added to every family. Raises ``MatchError`` with what is wrong.
    """
    s = (text or "").strip()
    if not s:
        return ""
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1].strip()
    elif "{" in s:
        raise MatchError(f"--match takes label matchers only, like 'job=\"neuron\"', not a metric: {s!r}")
    out = []
    pos = 0
    while pos < len(s):
        m = _MATCHER.match(s, pos)
        if m is None:
            raise MatchError(f"--match: cannot read a label matcher at {s[pos:pos + 30]!r} "
                             "(expected name=\"value\", name!=\"value\", name=~\"regex\" or name!~\"regex\")")
        name, op, value = m.groups()
        if name.startswith('"'):
            name = _unquote(name)
        if name == "__name__":
            raise MatchError("--match cannot select metric names (every family is queried)")
        out.append(f'{label(name)}{op}"{value}"')
        pos = m.end()
    return ",".join(out)


def _unquote(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


def check_label(name: str, option: str = "--by") -> str:
    """``name`` if it is a label name (not a reserved ``__`` one): a classic one, or any UTF-8 name (OpenTelemetry's
    ``@resource.k8s.pod.name``, queried quoted), given bare or in double quotes; else ``MatchError``."""
    if len(name) > 1 and name.startswith('"') and name.endswith('"'):
        name = _unquote(name)
    if not name or name.startswith("__") or not name.isprintable():
        raise MatchError(f"{option} {name!r} is not a label name")
    return name


@dataclass(frozen=True)
class QuerySet:
    """The queries of one fleet view: who the hosts are (``by``), which series (``match``), the windows."""

    by: str = "instance_id"
    match: str = ""
    """Label matchers (``parse_match``'s output) added to every selector."""
    labels: tuple[str, ...] = ()
    """Extra labels to show, filter and group on (``--label cluster``), taken from ``instance_info``."""
    rate_window: str = "1m"
    """The range of ``rate()`` for executions and errors: at least two scrape intervals."""
    ecc_window: str = "15m"
    """An ECC counter that went away (its exporter stopped) keeps counting, its last value, for this long."""
    seen_window: str = "15m"
    """A host that vanished is still listed (as down) when it was seen within this long."""
    shard: str = ""
    """Matchers of one part of a fleet too big for one answer (``availability_zone="us-east-2a"``: CloudWatch
    answers at most 500 series), added to every selector of a family that carries the instance labels."""
    rules: bool = False
    """Read the per-host series of ``deploy/prometheus/neuron-top.recording.yml`` (``RULES``) where they serve."""

    def sel(self, family: str, *extra: str, shard: bool = True) -> str:
        """``family{extra...,match,shard}``."""
        inside = ",".join(x for x in (*extra, self.match, self.shard if shard else "") if x)
        return f"{family}{{{inside}}}" if inside else family

    def by_(self, *more: str) -> str:
        names = [self.by]
        for n in more:
            if n not in names:
                names.append(n)
        return ", ".join(label(n) for n in names)

    def rules_probe(self) -> str:
        """Whether the recording rules have series for this fleet: the first and the presence rule (tagged
        ``neuron_top="rules"``), and the newest, the ECC rule (tagged ``"ecc"``). Rules without the ECC rule are an
        older rules file, or a fleet with no ECC counter at all: ``ecc_probe`` tells which, asked only then (it
        reads every raw ECC counter when there are some: ~1 s of Prometheus's time at 1,000 trn2 hosts)."""
        # the ECC rule is the newest (renamed when its meaning changed)
        return _tagged([("rules", f"count({self.sel(RULES['util'])}) and on () count({self.sel(RULES['presence'])})"),
                        ("ecc", f"count({self.sel(RULES['ecc'])})")])

    def ecc_probe(self) -> str:
        """One series when the fleet has no raw ECC counter (rules without the ECC rule are then this file's)."""
        return f"absent({self.sel('hardware_ecc_events_total')})"

    @property
    def info_labels(self) -> tuple[str, ...]:
        out: list[str] = []
        for n in (self.by, *DEFAULT_LABELS, *self.labels):
            if n not in out:
                out.append(n)
        return tuple(out)

    @property
    def _labelled(self) -> str:
        """A series a scrape target that carries the host's labels: ``instance_info``, or with the rules their
        presence series (one a target, a few labels fewer: at 1,000 hosts a join through it costs a fifth)."""
        return self.sel(RULES["presence"] if self.rules else "instance_info")

    def _per_target(self, series: str, within: str = "") -> str:
        """``series`` (an expression of one series per scrape target, no instance labels) with the host's ``by``
        label, taken from that target's ``_labelled`` series (``within``: its last value within this range, for
        targets whose series went away)."""
        labelled = f"last_over_time({self._labelled}[{within}])" if within else self._labelled
        # "+ 0 *": the labelled series' value is 1 (instance_info) or a time (the rules' presence)
        return (f"{series} + on (instance, job) group_left ({label(self.by)}) 0 * "
                f"max by (instance, job, {label(self.by)}) ({labelled})")

    def queries(self) -> tuple[FleetQuery, ...]:
        """The fixed set (its length does not depend on the fleet): 3 asked every refresh (status, the
        NeuronCores' average and busiest), 8 more in turns, each every ``SLOW_EVERY`` refreshes."""
        k = label(self.by)
        util = core_utilization(self.sel("neuroncore_utilization_ratio"), self.by_("neuroncore"),
                                self.sel("neurontop_neuroncore_utilization_ratio"))
        rates = self.rules and self.rate_window == RULE_RATE_WINDOW
        ecc = f"max by ({self.by_('event_type')}) ({self.sel(RULES['ecc'])})" \
            if self.rules and self.ecc_window == RULE_ECC_WINDOW else \
            (f"sum by ({self.by_('event_type')}) (max by ({self.by_('event_type', 'neuron_device_index')}) "
             f"(last_over_time({self.sel('hardware_ecc_events_total')}[{self.ecc_window}])))")
        p99 = f"max by ({k}) ({self.sel(RULES['p99'])})" if rates else \
            (f"max by ({k}) ({self.sel('execution_latency_seconds', P99)} and on (instance, job, "
             f"runtime_tag) increase({self.sel('execution_status_total')}[{self.rate_window}]) > 0)")
        code = f"max by ({self.by_('neuroncore')}) ({self.sel('neuroncore_memory_usage_model_code')})"
        per_runtime = self.sel("neuron_runtime_memory_used_bytes", ON_DEVICE)
        # timestamp() drops the metric name: one family's series at a time, joined with "or" (a regex over
        # __name__ would give two series with the same labels, which Prometheus refuses)
        presence = " or ".join(f"timestamp({self.sel(f)})" for f in PRESENCE)
        # with the rules: the last value of the host's recorded last-scrape time within the window (a series a
        # target); without, a subquery over every presence series of the window at 10 s steps
        gone = f"time() - max by ({k}) (last_over_time({self.sel(RULES['presence'])}[{self.seen_window}]))" \
            if self.rules else f"time() - max by ({k}) (max_over_time(({presence})[{self.seen_window}:10s]))"
        # when each host was last scraped. Raw: the newest sample of the presence families (~3 series a host, and
        # at 1,000 hosts ~0.5 s of the server's time every refresh, more than all the rest of a steady refresh).
        # With the rules: their presence series, one a target (~5 ms), by target: it is known as of the rules'
        # last evaluation (up to one evaluation interval older than the raw one), and a host whose every target
        # fails its scrape now (up == 0, below, raw) is gone at once, as without them (``rows.from_answers``)
        now = f"time() - max by ({k}, instance, job) ({self.sel(RULES['presence'])})" if self.rules \
            else f"time() - max by ({k}) ({presence})"
        report = self._per_target(self.sel("neurontop_last_report_age_seconds", shard=False))
        source_up = self._per_target(self.sel("neurontop_source_up", shard=False))
        runtimes = self._per_target(self.sel("neurontop_runtimes", shard=False))
        return (
            FleetQuery("seen", _tagged([
                ("now", now),
                # neuron-top export's own health (no instance labels: joined through the scrape target)
                ("report", f"max by ({k}) ({report})"),
                ("source_up", f"min by ({k}) ({source_up})"),
                # targets whose scrape fails now (up == 0), named by the host they served within the seen window:
                # its series went stale at once, and Prometheus knows why (the fleet asks /api/v1/targets then)
                ("scrape_down", f"max by ({k}, instance, job) ("
                                + self._per_target("(up == 0)", self.seen_window) + ")"),
            ]), ("status", "age")),
            # Prometheus's cost is per series read (~16,000 core series at 256 trn2 hosts, a few microseconds
            # each), and one query is answered on one core: the three reads of the core series are three queries,
            # which a Prometheus with cores to spare answers side by side. U, the per-core summed share, is
            # not shared between parts, so each part reads once: counts are sums of "bool" comparisons (0 when
            # none: no "or ... * 0" fallback reading them again); idle cores are the allocated ones (a model
            # loaded: slow to change) less the busy ones
            # with the recording rules: their per-host series, one a host (a target) instead of 128 a host
            FleetQuery("util", f"avg by ({k}) ({self.sel(RULES['util'])})" if self.rules
                       else f"avg by ({k}) ({util})", ("util",)),
            FleetQuery("busiest", f"max by ({k}) ({self.sel(RULES['busiest'])})" if self.rules
                       else f"max by ({k}) ({util})", ("util_max",)),
            # per outcome, one pass; the row adds them up (all) and leaves "completed" out (errors). A rate over a
            # minute moves little in two seconds, and rate() is the dearest read per series (~12,000 at 256 hosts):
            # asked with the slow ones
            FleetQuery("executions", f"sum by ({self.by_('status_type')}) ({self.sel(RULES['executions'])})" if rates
                       else f"sum by ({self.by_('status_type')}) "
                            f"(rate({self.sel('execution_status_total')}[{self.rate_window}]))",
                       ("exec_rate", "err_rate"), slow=True),
            # per device and event, the counter's value (events since the exporter started: what the alert fires
            # on, and an event older than the counter's first scrape still counts), kept for a counter that went
            # away within the ECC window (its exporter stopped): last_over_time, one read of each series (the
            # counter "or" its increase in the window read them twice and matched every label set: at 1,000 trn2
            # hosts the rule took 6.2 s of a 15 s evaluation); a max over copies: two scrape jobs count once.
            # Whole numbers (rounded: a counter's value is one already on every engine).
            # With the rules: the same per device, summed over devices by the rule, the max over copies
            FleetQuery("ecc", f"round({ecc})",
                       ("ecc_corrected", "ecc_uncorrected"), slow=True),
            FleetQuery("allocated", f"max by ({k}) ({self.sel(RULES['allocated'])})" if self.rules
                       else f"sum by ({k}) ({code} > bool 0)", ("idle",), slow=True),
            FleetQuery("busy", f"max by ({k}) ({self.sel(RULES['busy'])})" if self.rules
                       else f"sum by ({k}) ({util} > bool {BUSY})", ("busy", "idle"), slow=True),
            # the host's own figures, each cheap (a series per runtime or per host), in one round trip; memory,
            # runtimes, vCPU and a p99 that is itself a figure over time: asked with the slow ones
            FleetQuery("host", _tagged([
                # with the rules: their per-host sum and count over runtimes (a sum over copies, as the raw one)
                ("mem_used", f"sum by ({k}) ({self.sel(RULES['mem_used'])})" if self.rules
                 else f"sum by ({k}) ({per_runtime})"),
                ("apps", f"sum by ({k}) ({self.sel(RULES['apps'])})" if self.rules
                 else f"count by ({k}) ({per_runtime})"),  # one series per runtime: cheaper than the cores'
                # neuron-top export's count of runtimes (AWS's exporter has none): 0 tells a host that runs
                # nothing (AWS's families then have no per-runtime series) from one whose figures are not known
                ("runtimes", f"max by ({k}) ({runtimes})"),
                ("vcpu", f"sum by ({k}) ({self.sel('system_vcpu_usage_ratio')})"),
                ("vcpus", f"max by ({k}) ({self.sel('system_vcpu_count')})"),
                # only runtimes that executed within the rate window: AWS's exporter keeps a stopped runtime's
                # last p99 for ever (neuron-monitor's latency turns null), which is not today's latency
                ("p99", p99),
            ]), ("mem_used", "apps", "vcpu", "vcpus", "p99"), slow=True),
            # hosts whose series went away: the last sample of each, within the seen window (a subquery at 10 s
            # steps; between two asks the fleet ages what it knows itself)
            FleetQuery("gone", gone,
                       ("status", "age"), slow=True),
            FleetQuery("info", f"count by ({', '.join(map(label, self.info_labels))}) ({self.sel('instance_info')})",
                       ("name", "instance_id", "instance_type", "zone", "region", "labels", "targets"), slow=True),
            FleetQuery("hardware", f"max by ({self.by_('neuron_device_count', 'neuroncore_per_device_count', 'neuron_device_memory_size')}) ({self.sel('neuron_hardware_info')})",
                       ("devices", "cores", "mem_total"), slow=True),
        )


def _tagged(parts: list[tuple[str, str]]) -> str:
    """Several per-host expressions in one query, each answer series tagged ``neuron_top="name"`` (``PART``): one
    round trip for figures of the same families."""
    return " or ".join(f'label_replace({expr}, "{PART}", "{name}", "", "")' for name, expr in parts)


CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
"""neuron-monitor's categories of a NeuronCore's memory (``neuroncore_memory_usage_<category>``)."""
HOST_GAUGES = ("neuroncore_utilization_ratio", *(f"neuroncore_memory_usage_{c}" for c in CORE_MEMORY),
               "neuron_runtime_memory_used_bytes", "neuron_runtime_vcpu_usage_ratio", "execution_latency_seconds",
               "neurontop_execution_device_latency_seconds", "system_vcpu_count", "system_vcpu_usage_ratio", "system_memory_total_bytes", "system_memory_used_bytes",
               "system_swap_total_bytes", "system_swap_used_bytes", "instance_info", "neuron_hardware_info")
"""The gauge families a host's dashboard is made of."""


def host_family(qs: QuerySet, key: str, family: str) -> str:
    """One gauge family of one host, tagged as ``host_queries`` tags it: what a host's dashboard asks family by
    family when the whole answer is more than the server's cap (CloudWatch: 500 series; a trn1.32xlarge with
    several runtimes has more)."""
    return _tagged([(family, qs.sel(family, matcher(qs.by, key)))])


def host_runtimes(qs: QuerySet, key: str) -> str:
    """How many runtimes one host's ``neuron-top export`` counts in its report (``neurontop_runtimes``, one series
    a target, no instance labels: joined through the target's ``instance_info``); no answer from AWS's exporter."""
    return (f"max({qs.sel('neurontop_runtimes', shard=False)} + on (instance, job) group_left () 0 * "
            f"max by (instance, job) ({qs.sel('instance_info', matcher(qs.by, key))}))")


def host_queries(qs: QuerySet, key: str) -> tuple[str, str]:
    """The two queries behind one host's dashboard: every gauge of the host as it is (a few hundred series), and
    the counters: executions and errors as their increase over the rate window (neuron-monitor reports per-period
    counts, not totals), ECC as the fleet's ``ecc`` query counts it (``PromHostSource`` turns it into counts per
    refresh, so the dashboard's "since start" is that figure)."""
    me = matcher(qs.by, key)
    # each family by name (CloudWatch refuses a selector without one, such as {__name__=~"..."}), tagged so that
    # "or" keeps them all (it matches label sets without the metric name: instance_info would hide system_vcpu_count)
    gauges = _tagged([(family, qs.sel(family, me)) for family in HOST_GAUGES])
    ecc = qs.sel("hardware_ecc_events_total", me)
    counters = _tagged([*((family, f"increase({qs.sel(family, me)}[{qs.rate_window}])")
                          for family in ("execution_status_total", "execution_errors_total")),
                        # the ECC counter's value, as the fleet row and the alert read it (not the increase over
                        # the last minute, which is 0 for an event older than that)
                        ("hardware_ecc_events_total", f"max by (neuron_device_index, event_type) "
                                                      f"(last_over_time({ecc}[{qs.ecc_window}]))")])
    return gauges, counters

"""The fleet's PromQL: a fixed set of server-side aggregated queries, one answer series per host and figure.

Why aggregated on the server: a trn2 host exports ~600 series (every runtime's every core, five memory categories
each); 256 hosts are ~150,000. Each query here is ``... by (instance_id)`` (or the ``--by`` label), so its answer
has at most a few series per host, and the number of queries does not depend on the number of hosts.

The names and labels are those of AWS's ``neuron-monitor-prometheus.py`` (and of ``neuron-top export``).
Rules the queries follow:

* Every runtime reports every core (0.0 on the cores it does not use), so a core's utilization is the max over
  runtimes first; the host's figure is the average of those (AWS's dashboard averages the raw series, which
  dilutes it by the number of runtimes) and its busiest core the max.
* A host scraped twice (two jobs, two exporters) must not count twice: sums are taken over a ``max by`` the
  series' own identity (runtime, core, device), which merges the copies; the ``info`` query counts the copies so
  the row can say so.
* A figure that is absent is absent: counts that can legitimately be zero get an explicit ``or ... * 0`` so
  "no busy core" is 0 while "no utilization series at all" stays blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_LABELS", "PART", "FleetQuery", "MatchError", "QuerySet", "check_label", "host_queries", "parse_match"]

LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
DEFAULT_LABELS = ("instance_id", "instance_name", "instance_type", "availability_zone", "region")
"""The instance labels AWS's exporter puts on every series (``instance_info``)."""
PRESENCE = ("instance_info", "neuron_hardware_info", "system_vcpu_count")
"""Families whose samples say "this host is being scraped" (any one is enough)."""
ON_DEVICE = 'memory_location="neuron_device"'
NOT_COMPLETED = 'status_type!="completed"'
P99 = 'percentile="p99"'
PART = "neuron_top"
"""The label that tells apart the parts of a query made of several (``_tagged``)."""
BUSY = 0.01
"""A core above 1% utilization is busy; a core with a model loaded and at most this is idle-but-allocated."""


@dataclass(frozen=True, slots=True)
class FleetQuery:
    name: str
    """Short name shown with errors: "cores", "ecc" ..."""
    expr: str
    fills: tuple[str, ...]
    """The row fields its answer fills (blank when it fails)."""


class MatchError(ValueError):
    """A ``--match`` selector that is not a list of label matchers."""


_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|\Z)')


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
        if name == "__name__":
            raise MatchError("--match cannot select metric names (every family is queried)")
        out.append(f'{name}{op}"{value}"')
        pos = m.end()
    return ",".join(out)


def check_label(name: str, option: str = "--by") -> str:
    if not LABEL_NAME.match(name) or name.startswith("__"):
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
    """ECC events count when they happened within this long (``increase()``)."""
    seen_window: str = "15m"
    """A host that vanished is still listed (as down) when it was seen within this long."""

    def sel(self, family: str, *extra: str) -> str:
        """``family{extra...,match}``."""
        inside = ",".join(x for x in (*extra, self.match) if x)
        return f"{family}{{{inside}}}" if inside else family

    def by_(self, *more: str) -> str:
        names = [self.by]
        for n in more:
            if n not in names:
                names.append(n)
        return ", ".join(names)

    @property
    def info_labels(self) -> tuple[str, ...]:
        out: list[str] = []
        for n in (self.by, *DEFAULT_LABELS, *self.labels):
            if n not in out:
                out.append(n)
        return tuple(out)

    def _per_target(self, family: str) -> str:
        """``family`` (one series per scrape target, no instance labels) with the host's ``by`` label, taken from
        that target's ``instance_info``."""
        return (f"{family} * on (instance, job) group_left ({self.by}) "
                f"max by (instance, job, {self.by}) ({self.sel('instance_info')})")

    def queries(self) -> tuple[FleetQuery, ...]:
        """The fixed set; its length does not depend on the fleet."""
        k = self.by
        util = f"max by ({self.by_('neuroncore')}) ({self.sel('neuroncore_utilization_ratio')})"
        code = f"max by ({self.by_('neuroncore')}) ({self.sel('neuroncore_memory_usage_model_code')})"
        # timestamp() drops the metric name: one family's series at a time, joined with "or" (a regex over
        # __name__ would give two series with the same labels, which Prometheus refuses)
        presence = " or ".join(f"timestamp({self.sel(f)})" for f in PRESENCE)
        return (
            FleetQuery("seen", _tagged([
                ("now", f"time() - max by ({k}) ({presence})"),
                ("gone", f"time() - max by ({k}) (max_over_time(({presence})[{self.seen_window}:10s]))"),
                # neuron-top export's own health (no instance labels: joined through the scrape target)
                ("report", f"max by ({k}) ({self._per_target('neurontop_last_report_age_seconds')})"),
                ("source_up", f"min by ({k}) ({self._per_target('neurontop_source_up')})"),
            ]), ("status", "age")),
            FleetQuery("info", f"count by ({', '.join(self.info_labels)}) ({self.sel('instance_info')})",
                       ("name", "instance_id", "instance_type", "zone", "region", "labels", "targets")),
            FleetQuery("hardware", f"max by ({self.by_('neuron_device_count', 'neuroncore_per_device_count', 'neuron_device_memory_size')}) ({self.sel('neuron_hardware_info')})",
                       ("devices", "cores", "mem_total")),
            FleetQuery("cores", _tagged([
                ("avg", f"avg by ({k}) ({util})"),
                ("max", f"max by ({k}) ({util})"),
                ("n", f"count by ({k}) ({util})"),
                ("busy", f"count by ({k}) ({util} > {BUSY}) or count by ({k}) ({util}) * 0"),
                ("idle", f"count by ({k}) (({code} > 0) unless on ({self.by_('neuroncore')}) ({util} > {BUSY}))"
                         f" or count by ({k}) ({code}) * 0"),
                ("apps", f"count by ({k}) (count by ({self.by_('runtime_tag')}) "
                         f"({self.sel('neuroncore_utilization_ratio')}))"),
            ]), ("util", "util_max", "busy", "idle", "apps")),
            FleetQuery("memory", f"sum by ({k}) (max by ({self.by_('runtime_tag')}) "
                                 f"({self.sel('neuron_runtime_memory_used_bytes', ON_DEVICE)}))",
                       ("mem_used",)),
            FleetQuery("vcpu", _tagged([
                ("used", f"sum by ({k}) (max by ({self.by_('usage_type')}) ({self.sel('system_vcpu_usage_ratio')}))"),
                ("count", f"max by ({k}) ({self.sel('system_vcpu_count')})"),
            ]), ("vcpu", "vcpus")),
            FleetQuery("executions", _tagged([
                ("all", f"sum by ({k}) (max by ({self.by_('runtime_tag', 'status_type')}) "
                        f"(rate({self.sel('execution_status_total')}[{self.rate_window}])))"),
                ("bad", f"sum by ({k}) (max by ({self.by_('runtime_tag', 'status_type')}) "
                        f"(rate({self.sel('execution_status_total', NOT_COMPLETED)}[{self.rate_window}])))"),
            ]), ("exec_rate", "err_rate")),
            FleetQuery("latency", f"max by ({k}) ({self.sel('execution_latency_seconds', P99)})",
                       ("p99",)),
            FleetQuery("ecc", _tagged([
                (kind, f"sum by ({k}) (max by ({self.by_('neuron_device_index', 'event_type')}) "
                       f"(increase({self.sel('hardware_ecc_events_total', ecc_kind(kind))}[{self.ecc_window}])))")
                for kind in ("corrected", "uncorrected")
            ]), ("ecc_corrected", "ecc_uncorrected")),
        )


def ecc_kind(kind: str) -> str:
    """The matcher for "corrected" or "uncorrected" ECC events, DRAM and SRAM (and newer "repairable" kinds)."""
    return f'event_type=~".+_{kind}"'


def _tagged(parts: list[tuple[str, str]]) -> str:
    """Several per-host expressions in one query, each answer series tagged ``neuron_top="name"`` (``PART``): one
    round trip for figures of the same families."""
    return " or ".join(f'label_replace({expr}, "{PART}", "{name}", "", "")' for name, expr in parts)


def host_queries(qs: QuerySet, key: str) -> tuple[str, str]:
    """The two queries behind one host's dashboard: every gauge of the host as it is (a few hundred series), and
    the counters' increase over the rate window (neuron-monitor reports per-period counts, not totals)."""
    value = key.replace("\\", "\\\\").replace('"', '\\"')
    me = f'{qs.by}="{value}"'
    gauges = qs.sel("", '__name__=~"neuroncore_utilization_ratio|neuroncore_memory_usage_.+|'
                        'neuron_runtime_memory_used_bytes|neuron_runtime_vcpu_usage_ratio|execution_latency_seconds|'
                        'system_.+|instance_info|neuron_hardware_info"', me)
    counters = _tagged([(family, f"increase({qs.sel(family, me)}[{qs.rate_window}])")
                        for family in ("execution_status_total", "execution_errors_total", "hardware_ecc_events_total")])
    return gauges, counters

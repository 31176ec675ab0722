"""The fleet by Kubernetes pod or namespace (``neuron-top fleet --prometheus URL --by pod|namespace``): NeuronCores,
utilization and allocated-but-idle cores per group, aggregated on the server as the rest of the fleet is.

It reads ``neurontop_neuroncore_pod_info`` (which ``neuron-top export`` serves on every Kubernetes node, see
``export/exposition.py``) joined to AWS's ``neuroncore_utilization_ratio``. Four queries, each answering one series
per group, whatever the number of hosts and cores:

* the cores held, and the hosts they are on (the info family, first made unique per core: two scrape jobs of one
  exporter must not count twice);
* the mean utilization of the held cores (a core's utilization is the runtimes' summed share first, the rule of
  every view: ``queries.core_utilization``);
* the held cores above 1% (busy); idle = held - busy, so a held core no runtime reports counts as idle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neuron_top.fleet.promql import PromClient, PromError, Sample
from neuron_top.fleet.queries import BUSY, QuerySet, core_utilization

__all__ = ["GROUPS", "PodGroup", "PodQueries", "pod_groups", "pod_table"]

GROUPS = ("pod", "namespace")
"""What ``--by`` may group by in this view (any other value names a host label)."""
INFO = "neurontop_neuroncore_pod_info"


@dataclass(frozen=True, slots=True)
class PodGroup:
    """One pod (or namespace) across the fleet."""

    namespace: str
    pod: str
    """"" when grouped by namespace."""
    hosts: int
    cores: int
    util: float | None
    """Mean utilization of its cores, percent; None when none of them is reported."""
    idle: int
    """Its cores at most 1% busy, or not reported by any runtime."""

    @property
    def name(self) -> str:
        return f"{self.namespace}/{self.pod}" if self.pod else self.namespace


@dataclass(frozen=True)
class PodQueries:
    """The PromQL of the pod view, for one grouping and one ``--match``."""

    group: str = "pod"
    qs: QuerySet = field(default_factory=QuerySet)
    """Only its ``match`` (``--match``) is used."""

    @property
    def keys(self) -> str:
        return "namespace, pod" if self.group == "pod" else "namespace"

    def _held(self) -> str:
        """One series per held core (instance_id, neuroncore, namespace, pod), duplicates of a scrape merged."""
        return f"max by (instance_id, neuroncore, namespace, pod) ({self.qs.sel(INFO)})"

    def _util(self) -> str:
        """Each held core's utilization (the runtimes' summed share, as every view), with its pod's labels."""
        util = core_utilization(self.qs.sel("neuroncore_utilization_ratio"), "instance_id, neuroncore",
                                self.qs.sel("neurontop_neuroncore_utilization_ratio"))
        return (f"{util} "
                f"* on (instance_id, neuroncore) group_left (namespace, pod) {self._held()}")

    def queries(self) -> dict[str, str]:
        k = self.keys
        return {
            "cores": f"count by ({k}) ({self._held()})",
            "hosts": f"count by ({k}) (count by ({k}, instance_id) ({self._held()}))",
            "util": f"avg by ({k}) ({self._util()})",
            "busy": f"count by ({k}) (({self._util()}) > {BUSY})",
        }


def _by_key(samples: list[Sample], group: str) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for s in samples:
        v = s.number
        if v is not None:
            out[(s.metric.get("namespace", ""), s.metric.get("pod", "") if group == "pod" else "")] = v
    return out


def pod_groups(client: PromClient, queries: PodQueries) -> tuple[list[PodGroup], list[str]]:
    """Every pod (or namespace) holding NeuronCores, sorted by name, and the problems met (one line each).

    Args:
        client: the Prometheus to ask.
        queries: the grouping and the ``--match``.

    Returns:
        (groups, problems): a query that fails leaves its column blank and says why.
    """
    answers: dict[str, dict[tuple[str, str], float]] = {}
    problems: list[str] = []
    for name, expr in queries.queries().items():
        try:
            answers[name] = _by_key(client.query(expr), queries.group)
        except PromError as exc:
            answers[name] = {}
            problems.append(f"{name}: {exc}")
    out = []
    for key in sorted(answers["cores"]):
        cores = int(answers["cores"][key])
        util = answers["util"].get(key)
        busy = int(answers["busy"].get(key, 0))
        out.append(PodGroup(key[0], key[1], int(answers["hosts"].get(key, 0)), cores,
                            util * 100.0 if util is not None else None, max(cores - busy, 0)))
    return out, problems


def pod_table(groups: list[PodGroup], group: str) -> list[str]:
    """The groups as text lines (``--once``): name, hosts, cores, utilization, idle cores; then the totals."""
    from neuron_top.fmt import pct
    from neuron_top.textsafe import clean

    head = "namespace/pod" if group == "pod" else "namespace"
    names = [clean(g.name, 120) for g in groups]
    w = max([len(head), *map(len, names)])
    out = [f"{head:<{w}}  {'hosts':>5}  {'NCs':>5}  {'util':>6}  {'idle':>5}"]
    for name, g in zip(names, groups, strict=True):
        out.append(f"{name:<{w}}  {g.hosts:>5}  {g.cores:>5}  {pct(g.util):>6}  {g.idle:>5}")
    total = sum(g.cores for g in groups)
    idle = sum(g.idle for g in groups)
    out.append(f"{len(groups)} {group}s · {total} NeuronCores held · {idle} allocated but idle")
    return out

"""The fleet's apps view: one row per runtime tag across hosts (no UI imports).

"Where does app X run and how busy is it" (all-smi's Users tab, nvitop-exporter's per-process series): the
fleet's host rows count runtimes per host only. An ``AppRow`` gathers every runtime with one ``runtime_tag``
(neuron-monitor's ``neuron_runtime_tag``: the tag the job set, else its pid) over the fleet: the hosts it runs
on, the NeuronCores it holds, their utilization, its executions and bad executions (not completed cleanly) a
second, and its worst p99.

The rules are the host rows' (``rows.py``), per tag instead of per host:

* a runtime's cores are those where it has model code loaded or is busier than ``BUSY`` (runtimes report every
  core of the machine, 0 on the ones they do not use); its utilization is the average over those cores;
* bad executions a second are those that did not complete cleanly, as the host rows' BAD/s;
* p99 only of runtimes that executed within the rate window (AWS's exporter keeps a stopped runtime's last p99).

From Prometheus the whole view is ONE query of tagged parts, aggregated on the server ``by (runtime_tag)``
(the host list ``by (runtime_tag, <by>)``), so its cost does not grow with the number of queries per host; a
host scraped by two jobs counts once (a ``max by`` the copies before every sum). Over ssh it is made from each
host's latest report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from neuron_top import fmt
from neuron_top.derived import per_second
from neuron_top.fleet.queries import BUSY, P99, PART, QuerySet, _tagged, runtime_tag
from neuron_top.fleet.rows import _num
from neuron_top.snapshot import Snapshot, finite
from neuron_top.textsafe import clean

__all__ = ["APP_COLUMNS", "AppRow", "app_cells", "apps_from_answer", "apps_from_snapshots", "apps_query", "apps_table",
           "host_filter"]


class AppRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """One runtime tag across the fleet. Figures are None when the data has none (shown ``-``)."""

    tag: str
    """The runtime tag as reported (raw: ``clean`` it to show it)."""
    hosts: list[str] = msgspec.field(default_factory=list)
    """The fleet keys of the hosts it runs on, sorted."""
    cores: int | None = None
    """NeuronCores it holds (model code loaded, or busier than 1%), over every host."""
    util: float | None = None
    """Percent: the average utilization of those cores."""
    exec_rate: float | None = None
    """Executions a second, every outcome, over every host."""
    err_rate: float | None = None
    """Executions a second that did not complete cleanly (bad/s, as ``FleetRow.err_rate``)."""
    p99: float | None = None
    """Seconds: the worst p99 latency of its runtimes that executed."""


# --- over ssh: from each host's latest report ----------------------------------------------------------------


def apps_from_snapshots(snaps: Mapping[str, Snapshot | None]) -> list[AppRow]:
    """The apps of the hosts' latest reports (``host key -> snapshot``), most cores first."""
    acc: dict[str, dict] = {}
    busy = BUSY * 100.0
    for host, snap in snaps.items():
        if snap is None:
            continue
        for app in snap.apps:
            if app.error:
                continue
            a = acc.setdefault(app.tag, {"hosts": set(), "utils": [], "exec": None, "err": None, "p99": None})
            a["hosts"].add(host)
            loaded = {i for i, cats in app.core_memory.items() if cats.get("model_code", 0) > 0}
            for i, c in app.cores.items():
                u = finite(c.neuroncore_utilization)
                if u is not None and (i in loaded or u > busy):
                    a["utils"].append(u)
            a["utils"].extend(0.0 for i in loaded if i not in app.cores)
            rates = app.rates  # the rules every output shares: executions, and bad/s (derived.unclean_count)
            ran = per_second(rates.ran, rates.period)
            if ran is not None:
                a["exec"] = (a["exec"] or 0.0) + ran
            if rates.bad_per_second is not None:
                a["err"] = (a["err"] or 0.0) + rates.bad_per_second
            lat = app.latency("total")
            if lat and "p99" in lat and (rates.ran or 0) > 0:
                a["p99"] = max(a["p99"] or 0.0, lat["p99"])
    return _sorted(AppRow(tag=tag, hosts=sorted(a["hosts"]), cores=len(a["utils"]),
                          util=sum(a["utils"]) / len(a["utils"]) if a["utils"] else None,
                          exec_rate=a["exec"], err_rate=a["err"], p99=a["p99"]) for tag, a in acc.items())


# --- from Prometheus: one query ---------------------------------------------------------------------------------


def apps_query(qs: QuerySet) -> str:
    """The apps view's one query: its parts tagged ``neuron_top="hosts|cores|util|exec|p99"``."""
    k = qs.by
    per_core = f"runtime_tag, {qs.by_('neuroncore')}"
    util = f"max by ({per_core}) ({qs.sel('neuroncore_utilization_ratio')})"
    used = (f"(max by ({per_core}) ({qs.sel('neuroncore_memory_usage_model_code')}) > 0) or "
            f"({util} > {BUSY})")
    return _tagged([
        ("hosts", f"count by (runtime_tag, {k}) ({qs.sel('neuron_runtime_memory_used_bytes')})"),
        ("cores", f"count by (runtime_tag) ({used})"),
        ("util", f"avg by (runtime_tag) ({util} and on ({per_core}) ({used}))"),
        ("exec", f"sum by (runtime_tag, status_type) (max by (runtime_tag, {qs.by_('status_type')}) "
                 f"(rate({qs.sel('execution_status_total')}[{qs.rate_window}])))"),
        ("p99", f"max by (runtime_tag) ({qs.sel('execution_latency_seconds', P99)} and on (instance, job, "
                f"runtime_tag) increase({qs.sel('execution_status_total')}[{qs.rate_window}]) > 0)"),
    ])


def apps_from_answer(qs: QuerySet, samples: Iterable[object]) -> list[AppRow]:
    """The apps from ``apps_query``'s answer (``Sample`` values), most cores first."""
    acc: dict[str, dict] = {}
    for s in samples:
        m = s.metric  # type: ignore[attr-defined]
        raw = m.get("runtime_tag")
        v = _num(s.value[1])  # type: ignore[attr-defined]
        if raw is None or v is None:
            continue
        tag = runtime_tag(raw)
        a = acc.setdefault(tag, {"hosts": set()})
        part = m.get(PART)
        if part == "hosts":
            a["hosts"].add(m.get(qs.by, ""))
        elif part == "cores":
            a["cores"] = int(v)
        elif part == "util":
            a["util"] = v * 100.0
        elif part == "p99":
            a["p99"] = v
        elif part == "exec":
            a["exec_rate"] = a.get("exec_rate", 0.0) + v
            a["err_rate"] = a.get("err_rate", 0.0) + (v if m.get("status_type") != "completed" else 0.0)
    return _sorted(AppRow(tag=tag, hosts=sorted(a.pop("hosts")), **a) for tag, a in acc.items())


def _sorted(apps: Iterable[AppRow]) -> list[AppRow]:
    return sorted(apps, key=lambda a: (-(a.cores or 0), -len(a.hosts), a.tag))


# --- shown ------------------------------------------------------------------------------------------------------

APP_COLUMNS: tuple[tuple[str, int], ...] = (("APP", 24), ("HOSTS", 6), ("CORES", 6), ("UTIL", 6), ("EXEC/s", 8),
                                             ("BAD/s", 7), ("P99", 8))
"""The apps table's columns and widths (text and screen)."""


def app_cells(a: AppRow) -> tuple[str, ...]:
    """One app's cells as text, ``-`` where not reported (the tag cleaned of control characters, cut to its column
    with "…": cut silently, "llama-3-70b-finetune-run" of "llama-3-70b-finetune-run-2" read as another tag)."""
    return (fmt.cut(clean(a.tag, 60) or "(no tag)", APP_COLUMNS[0][1]), str(len(a.hosts)),
            "-" if a.cores is None else str(a.cores),
            "-" if a.util is None else f"{a.util:.1f}%", _rate(a.exec_rate), _rate(a.err_rate),
            "-" if a.p99 is None else fmt.latency(a.p99))


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def apps_table(apps: Sequence[AppRow]) -> list[str]:
    """The apps view as plain text lines (``fleet --apps --once``)."""
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, (_, w)) in enumerate(zip(cells, APP_COLUMNS, strict=True))).rstrip()

    out = [line([t for t, _ in APP_COLUMNS])]
    out += [line(app_cells(a)) + f"  {', '.join(clean(h, 40) for h in a.hosts[:4])}"
            + (f" +{len(a.hosts) - 4}" if len(a.hosts) > 4 else "") for a in apps]
    return out if apps else [*out, "  (no runtimes reported)"]


def host_filter(app: AppRow) -> str:
    """The fleet filter that lists ``app``'s hosts (Enter on an app): their keys, escaped, anchored to the key
    (the first line of what the filter searches, ``table.haystack``)."""
    import re

    return r"(?m)\A(?:" + "|".join(re.escape(h) for h in app.hosts) + ")$" if app.hosts else r"\A\Z"

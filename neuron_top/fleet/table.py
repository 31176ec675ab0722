"""The fleet table's rules, shared by the screen and ``--once``: columns and their text, sort, filter, group,
trouble and the summary line (no UI imports; colours are the UI's business).

Every string from the data goes through ``textsafe.clean`` before it is part of a cell.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from neuron_top import fmt
from neuron_top.fleet.rows import DOWN, STALE, UP, FleetRow
from neuron_top.textsafe import clean

__all__ = ["COLUMNS", "Column", "Group", "Summary", "arrange", "cell_text", "column", "summarize", "trouble"]


def _count(x: float | int | None) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}%"


def _rate(x: float | None) -> str:
    if x is None:
        return ""
    return "0" if x == 0 else fmt.rate(x).removesuffix("/s") if x >= 0.1 else f"{x:.2f}"


def _mem(r: FleetRow) -> str:
    if r.mem_used is None and r.mem_total is None:
        return ""
    used = fmt.human_bytes(r.mem_used) if r.mem_used is not None else "?"
    return used if r.mem_total is None else f"{used}/{fmt.human_bytes(r.mem_total)}"


def _cores(r: FleetRow) -> str:
    if r.devices is None and r.cores is None:
        return ""
    return f"{_count(r.devices) or '?'}/{_count(r.cores) or '?'}"


def events(x: float | None, tenths: bool = True) -> str:
    """A count of events from a counter (or ``increase()``, which extrapolates: 1 event may read 1.23): whole
    numbers, at least 1 when there was any, in at most 4 characters (``999``, ``1.6k``, ``12k``, ``3.4M``; without
    ``tenths``, ``2k``): a host's corrected ECC count since its exporter started runs into thousands.

    >>> [events(x) for x in (None, 0, 0.4, 1.23, 999, 1568, 9949, 9950, 123_456, 999_499, 2_500_000, 4e10)]
    ['?', '0', '1', '1', '999', '1.6k', '9.9k', '10k', '123k', '999k', '2.5M', '40G']
    >>> events(1568, tenths=False)
    '2k'
    """
    if x is None:
        return "?"
    if x <= 0:
        return "0"
    n = max(1, round(x))
    if n < 1000:
        return str(n)
    for unit, scale in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        v = n / scale
        if v < 9.95 and tenths:
            return f"{v:.1f}{unit}"
        if v < 999.5 or unit == "G":
            return f"{round(v)}{unit}"
    raise AssertionError  # the loop returns at "G"


def _ecc(r: FleetRow) -> str:
    """corrected/uncorrected, whole in the column's 8 cells up to 100k of each ("1568/15…" hid the uncorrected
    count, the one that matters)."""
    if r.ecc_corrected is None and r.ecc_uncorrected is None:
        return ""
    text = f"{events(r.ecc_corrected)}/{events(r.ecc_uncorrected)}"
    return text if len(text) <= 8 else f"{events(r.ecc_corrected, False)}/{events(r.ecc_uncorrected, False)}"


def _status(r: FleetRow) -> str:
    if r.age is None or r.status == "starting":
        return r.status
    return f"{r.status} {fmt.duration(r.age)}"


def _vcpu(r: FleetRow) -> str:
    if r.vcpu is None:
        return ""
    return f"{r.vcpu:.0f}%" + (f"/{r.vcpus}" if r.vcpus is not None else "")


_STATE_ORDER: dict[str, int] = {DOWN: 0, STALE: 1, "starting": 2, UP: 3}


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int
    """Cells wide (the host column grows into spare room)."""
    text: Callable[[FleetRow], str]
    value: Callable[[FleetRow], object]
    """What it sorts by (None sorts last either way)."""
    priority: int
    """Narrow terminals keep the columns with the lowest numbers first; one too wide for the room left is left out
    and a narrower one after it may still fit (``fit_columns``)."""
    numeric: bool = True
    """Right-aligned, and sorted highest first."""
    heat: bool = False
    """Offered as a heat-map colour."""
    help: str = ""


COLUMNS: tuple[Column, ...] = (
    Column("host", "HOST", 19, lambda r: clean(r.title, 80), lambda r: r.key, 0, numeric=False,
           help="the --by label's value (instance_id), or the ssh host"),
    Column("name", "NAME", 14, lambda r: clean(r.name, 60), lambda r: r.name or None, 11, numeric=False,
           help="instance_name"),
    Column("type", "TYPE", 14, lambda r: clean(r.instance_type, 40), lambda r: r.instance_type or None, 5,
           numeric=False, help="instance type"),
    Column("zone", "AZ", 11, lambda r: clean(r.zone, 30), lambda r: r.zone or None, 9, numeric=False,
           help="availability zone"),
    Column("cores", "DEV/NC", 7, _cores, lambda r: r.cores, 10, help="devices / NeuronCores"),
    Column("util", "UTIL", 6, lambda r: _pct(r.util), lambda r: r.util, 1, heat=True,
           help="NeuronCore utilization: per core the runtimes' shares added up (at most 100%), averaged over cores"),
    Column("util_max", "MAX", 6, lambda r: _pct(r.util_max), lambda r: r.util_max, 6, heat=True,
           help="the busiest core"),
    Column("busy", "BUSY", 5, lambda r: _count(r.busy), lambda r: r.busy, 7, help="cores above 1%"),
    Column("idle", "IDLE", 5, lambda r: _count(r.idle), lambda r: r.idle, 8, heat=True,
           help="cores with a model loaded but at most 1% busy"),
    Column("mem", "DEV MEM", 15, _mem, lambda r: r.mem_used, 4, heat=True, help="device memory used / total"),
    Column("vcpu", "vCPU", 8, _vcpu, lambda r: r.vcpu, 12, heat=True, help="host vCPU busy / vCPU count"),
    Column("exec", "EXEC/s", 7, lambda r: _rate(r.exec_rate), lambda r: r.exec_rate, 13, heat=True,
           help="executions per second"),
    Column("err", "BAD/s", 6, lambda r: _rate(r.err_rate), lambda r: r.err_rate, 3, heat=True,
           help="executions per second that did not complete cleanly (bad/s on the host's dashboard)"),
    Column("p99", "P99", 7, lambda r: "" if r.p99 is None else fmt.latency(r.p99), lambda r: r.p99, 14,
           heat=True, help="worst runtime's p99 latency"),
    Column("ecc", "ECC c/u", 8, _ecc, lambda r: (r.ecc_uncorrected or 0, r.ecc_corrected or 0)
           if r.ecc_corrected is not None or r.ecc_uncorrected is not None else None, 2, heat=True,
           help="ECC events corrected / uncorrected: the counters (since the exporter started)"),
    Column("apps", "APPS", 5, lambda r: _count(r.apps), lambda r: r.apps, 15, help="runtimes (applications)"),
    Column("status", "STATUS", 11, _status, lambda r: (_STATE_ORDER.get(r.status, 9), r.age or 0.0), 0,
           numeric=False, help="up, stale or down, and the age of the newest data"),
)
_BY_KEY = {c.key: c for c in COLUMNS}


def column(key: str) -> Column:
    """The table column named ``key``."""
    return _BY_KEY[key]


def cell_text(col: Column, row: FleetRow) -> str:
    """What ``col`` shows for ``row``."""
    return col.text(row)


# --- trouble ---------------------------------------------------------------------------------------------


def trouble(r: FleetRow) -> tuple[str, ...]:
    """Why a host needs a look, worst first: uncorrected ECC, down, errors, stale, idle allocated cores."""
    out = []
    if r.ecc_uncorrected:
        out.append("uncorrected ECC")
    if r.status == DOWN:
        out.append("down")
    if r.err_rate:
        out.append("bad executions")
    if r.status == STALE:
        out.append("stale")
    if r.idle:
        out.append("idle cores")
    return tuple(out)


_WEIGHT = {"uncorrected ECC": 16, "down": 8, "bad executions": 4, "stale": 2, "idle cores": 1}


def trouble_score(r: FleetRow) -> int:
    return sum(_WEIGHT[t] for t in trouble(r))


# --- sort, filter, group ---------------------------------------------------------------------------------

GROUPS: dict[str, Callable[[FleetRow], str]] = {
    "type": lambda r: r.instance_type,
    "zone": lambda r: r.zone,
    "region": lambda r: r.region,
    "status": lambda r: r.status,
}
"""Built-in groupings; ``label:NAME`` groups by an extra label (``--label``)."""


def group_key(name: str) -> Callable[[FleetRow], str]:
    if name.startswith("label:"):
        label = name[6:]
        return lambda r: r.labels.get(label, "")
    return GROUPS[name]


def haystack(r: FleetRow) -> str:
    """What the filter regex searches: names and every label, as ``name=value`` too."""
    parts = [r.key, r.name, r.instance_id, r.instance_type, r.zone, r.region, r.status, r.note]
    parts += [f"{k}={v}" for k, v in r.labels.items()]
    return "\n".join(p for p in parts if p)


def compile_filter(text: str) -> re.Pattern[str] | None:
    """The filter as a case-insensitive regex; raises ``re.error`` for a bad one; None for no filter."""
    return re.compile(text, re.IGNORECASE) if text else None


@dataclass(frozen=True, slots=True)
class Group:
    """A group heading: the label's value and how many hosts it has."""

    name: str
    value: str
    hosts: int
    util: float | None
    troubled: int


Line = FleetRow | Group


def sort_rows(rows: Iterable[FleetRow], key: str, reverse: bool = False, trouble_first: bool = False
              ) -> list[FleetRow]:
    """Sorted by a column (numbers highest first, text A-Z; ``reverse`` flips it). Missing values go last either
    way; ties keep host order. ``trouble_first`` puts troubled hosts on top, worst first."""
    col = _BY_KEY[key]
    present: list[FleetRow] = []
    missing: list[FleetRow] = []
    for r in rows:
        (missing if col.value(r) is None else present).append(r)
    present.sort(key=lambda r: r.key)
    present.sort(key=col.value, reverse=col.numeric != reverse)  # type: ignore[arg-type]
    missing.sort(key=lambda r: r.key)
    out = present + missing
    if trouble_first:
        out.sort(key=trouble_score, reverse=True)  # stable: the column order stays within a score
    return out


def arrange(rows: Sequence[FleetRow], *, sort: str = "host", reverse: bool = False,
            pattern: re.Pattern[str] | None = None, group: str | None = None,
            trouble_first: bool = False) -> list[Line]:
    """The table's lines: filtered, sorted, and under group headings when grouped."""
    shown = [r for r in rows if pattern is None or pattern.search(haystack(r))]
    ordered = sort_rows(shown, sort, reverse, trouble_first)
    if group is None:
        return list(ordered)
    get = group_key(group)
    buckets: dict[str, list[FleetRow]] = {}
    for r in ordered:
        buckets.setdefault(get(r), []).append(r)
    names = sorted(buckets, key=lambda v: (v == "", v))
    if trouble_first:
        names.sort(key=lambda v: -max(trouble_score(r) for r in buckets[v]))
    out: list[Line] = []
    for v in names:
        members = buckets[v]
        utils = [r.util for r in members if r.util is not None]
        out.append(Group(group, v, len(members), sum(utils) / len(utils) if utils else None,
                         sum(1 for r in members if trouble(r))))
        out.extend(members)
    return out


# --- summary ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    hosts: int
    up: int
    stale: int
    down: int
    util: float | None
    """Average host utilization (percent), over hosts with a figure."""
    util_p10: float | None
    """The 10th percentile of host utilization: how idle the idlest tenth is."""
    exec_rate: float | None
    err_rate: float | None
    ecc_hosts: int
    """Hosts with uncorrected ECC events."""
    idle_cores: int
    troubled: int

    def text(self, width: int | None = None) -> str:
        """The summary line; within ``width`` cells when given, by whole parts (``fmt.cut_parts``)."""
        parts = [f"{fmt.plural(self.hosts, 'host')}: {self.up} up, {self.stale} stale, {self.down} down",
                 f"util avg {_pct(self.util) or '-'} p10 {_pct(self.util_p10) or '-'}",
                 f"bad {_rate(self.err_rate) or '-'}/s", f"exec {_rate(self.exec_rate) or '-'}/s"]
        # bad executions before executions: at 80 columns only the parts up to the errors fit, and trouble matters more
        if self.ecc_hosts:
            parts.append(f"uncorrected ECC on {self.ecc_hosts}")
        if self.idle_cores:
            parts.append(f"{self.idle_cores} idle allocated cores")
        if self.troubled:
            parts.append(f"{self.troubled} need a look")
        return " · ".join(parts) if width is None else fmt.cut_parts(parts, width)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def _sum(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) if got else None


def summarize(rows: Sequence[FleetRow]) -> Summary:
    """The fleet's totals: hosts up, stale and down, utilization (mean, p10), rates, ECC hosts and idle cores."""
    utils = [r.util for r in rows if r.util is not None and r.status != DOWN]
    return Summary(
        hosts=len(rows),
        up=sum(1 for r in rows if r.status == UP),
        stale=sum(1 for r in rows if r.status == STALE),
        down=sum(1 for r in rows if r.status == DOWN),
        util=sum(utils) / len(utils) if utils else None,
        util_p10=percentile(utils, 0.10),
        exec_rate=_sum(r.exec_rate for r in rows),
        err_rate=_sum(r.err_rate for r in rows),
        ecc_hosts=sum(1 for r in rows if r.ecc_uncorrected),
        idle_cores=sum(r.idle or 0 for r in rows),
        troubled=sum(1 for r in rows if trouble(r)),
    )


# --- plain text (--once) ---------------------------------------------------------------------------------


def fit_columns(width: int, columns: Sequence[Column] = COLUMNS) -> list[Column]:
    """The columns that fit in ``width`` cells, taken by priority (one too wide for what is left is skipped, not
    the end of the choice), in table order."""
    chosen: list[Column] = []
    used = 0
    for col in sorted(columns, key=lambda c: c.priority):
        if used + col.width + 1 <= width or not chosen:
            chosen.append(col)
            used += col.width + 1
    order = {c.key: i for i, c in enumerate(columns)}
    return sorted(chosen, key=lambda c: order[c.key])


def pad(text: str, width: int, right: bool) -> str:
    """``text`` in exactly ``width`` cells: cut with "…" (``fmt.cut``), or padded on the left when ``right``."""
    text = fmt.cut(text, width)
    room = " " * max(width - fmt.cells(text), 0)
    return room + text if right else text + room


def text_table(lines: Sequence[Line], width: int = 200) -> list[str]:
    """The table as plain text lines (``--once``); troubled hosts are marked with ``!``."""
    cols = fit_columns(width - 2)
    out = ["  " + " ".join(pad(c.title, c.width, c.numeric) for c in cols).rstrip()]
    for line in lines:
        if isinstance(line, Group):
            out.append(f"[{line.name} {clean(line.value, 60) or '(none)'}: {fmt.plural(line.hosts, 'host')}, util "
                       f"{_pct(line.util) or '-'}" + (f", {line.troubled} need a look" if line.troubled else "") + "]")
            continue
        mark = "! " if trouble(line) else "  "
        cells = " ".join(pad(c.text(line), c.width, c.numeric) for c in cols).rstrip()
        note = f"  ({clean(line.note, 200)})" if line.note else ""
        out.append(mark + cells + note)
    return out

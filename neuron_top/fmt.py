"""Number formatting shared by the text output and the widgets (no UI imports)."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache

from neuron_top.derived import sane_util

__all__ = ["cells", "core_ranges", "count", "cut", "cut_parts", "duration", "human_bytes", "latency", "moment", "pct", "rate", "tflops", "used_of", "wrap_parts"]

_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def human_bytes(n: float | int | None) -> str:
    """1536 -> "1.5KB", like AWS neuron-top (powers of 1024)."""
    if n is None:
        return "-"
    x = float(n)
    for unit in _UNITS:
        if abs(x) < 1024 or unit == _UNITS[-1]:
            return f"{x:.0f}{unit}" if unit == "B" else f"{x:.1f}{unit}"
        x /= 1024
    return f"{x:.1f}PB"  # pragma: no cover


def used_of(used: int | None, total: int | None) -> str:
    """Memory used of a total, short, in the total's unit (powers of 1024, as ``human_bytes``): ``58.7/96G``;
    ``58.7G`` without a total; ``-`` when not reported. At most 10 characters below 1000 of the unit.

    >>> used_of(63 * 2**30, 96 * 2**30), used_of(512 * 2**20, 32 * 2**30), used_of(3 * 2**29, None), used_of(None, 8)
    ('63.0/96G', '0.5/32G', '1.5G', '-')
    """
    if used is None:
        return "-"
    x, k = float(total or used), 0
    while abs(x) >= 1024 and k < len(_UNITS) - 1:
        x /= 1024
        k += 1
    unit = 1024 ** k
    letter = _UNITS[k][0]
    u = used / unit
    head = f"{u:.1f}" if u < 100 else f"{u:.0f}"
    if not total:
        return head + letter
    t = total / unit
    return f"{head}/{t:.0f}{letter}" if t >= 10 or t == int(t) else f"{head}/{t:.1f}{letter}"


def pct(x: float | None, width: int = 0, digits: int = 1) -> str:
    """A percentage as the panels show it (``12.5%``), or ``-`` for no value, right-aligned in ``width``."""
    if x is None:
        return "-".rjust(width)
    return f"{x:.{digits}f}%".rjust(width)


def tflops(x: float | None) -> str:
    """FLOPS as teraFLOPS (``12.34TF``), or ``-`` for no value."""
    if x is None:
        return "-"
    return f"{x / 1e12:.2f}TF"


def latency(seconds: float | None) -> str:
    """Seconds -> "11.0ms" / "850us" / "1.20s", or ``-`` for no value (whether an app with no latency is idle is
    ``derived.latency_state``'s to say, not the formatter's).

    >>> [latency(s) for s in (0.0081, 0.00085, 1.2, None)]
    ['8.10ms', '850us', '1.20s', '-']
    """
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f}s"
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f}ms"
    if ms >= 10:
        return f"{ms:.1f}ms"
    if ms >= 1:
        return f"{ms:.2f}ms"
    return f"{seconds * 1e6:.0f}us"


def rate(x: float | None) -> str:
    """A count per second, short (``12.0/s``, ``12.3k/s``, ``1.2M/s``), or ``-`` for no value."""
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.1f}M/s"
    if x >= 1e4:
        return f"{x / 1e3:.1f}k/s"
    return f"{x:.1f}/s"


def duration(seconds: float, spaced: bool = False) -> str:
    """A span of time as every output says it, rounded to the nearest second, two units at most: "3s", "4m05s",
    "2h03m", "3d04h"; ``spaced`` for a sentence ("4 m 05 s", as ``replay --summary`` and the replay's holes say).

    >>> duration(2.6), duration(245), duration(7380), duration(3 * 86400 + 4 * 3600), duration(245, spaced=True)
    ('3s', '4m05s', '2h03m', '3d04h', '4 m 05 s')
    """
    s = int(max(seconds, 0.0) + 0.5) if seconds == seconds else 0  # NaN: 0
    if s < 60:
        parts: tuple[tuple[int, str], ...] = ((s, "s"),)
    elif s < 3600:
        parts = ((s // 60, "m"), (s % 60, "s"))
    elif s < 86400:
        parts = ((s // 3600, "h"), (s % 3600 // 60, "m"))
    else:
        parts = ((s // 86400, "d"), (s % 86400 // 3600, "h"))
    sep = " " if spaced else ""
    return sep.join(f"{n if i == 0 else f'{n:02d}'}{sep}{unit}" for i, (n, unit) in enumerate(parts))


def period(seconds: float) -> str:
    """A report period as the problems screen says it: ``latency``'s units below a second ("62.4ms", the
    period a fast neuron-monitor config gives), ``duration``'s from one up ("5s"). Printed as it was measured it
    read "every 0.0623866s".

    >>> period(0.0623866), period(0.99915), period(5.0), period(120)
    ('62.4ms', '999ms', '5s', '2m00s')
    """
    return latency(seconds) if seconds < 1 else duration(seconds)


def moment(ts: float, wall: bool, start: float = 0.0) -> str:
    """A point in a recording as every output says it: local wall-clock time ("2026-01-01 03:00:05") when the
    recording has it, else the time since ``start`` ("+1:02:03"), rounded to the nearest second.

    >>> moment(3723.4, False), moment(100.0, False, start=99.6)
    ('+1:02:03', '+0:00:00')
    """
    if wall:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    k = int(max(ts - start, 0.0) + 0.5)
    return f"+{k // 3600:d}:{k % 3600 // 60:02d}:{k % 60:02d}"


def core_ranges(values: Iterable[int]) -> str:
    """Sorted indexes as runs: ``0-3,8,10-11``; "" for none."""
    vs = sorted(set(values))
    out: list[str] = []
    i = 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        out.append(str(vs[i]) if i == j else f"{vs[i]}-{vs[j]}")
        i = j + 1
    return ",".join(out)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 error``, ``2 errors``, ``1,234 lines`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def count(n: int | None) -> str:
    """A count that grows without bound (since start), in at most 7 characters: ``999,999``, then ``1.23M``,
    ``4.56G``; ``-`` when not reported."""
    if n is None:
        return "-"
    if n < 1_000_000:
        return f"{n:,}"
    if n < 1_000_000_000:
        return f"{n / 1e6:.2f}M"
    return f"{n / 1e9:.2f}G"


def per_period(n: int | None, period: float | None) -> str:
    """A counter of one report's period as a rate ("12.0/s"); the bare count when the report gave no period;
    "-" when not reported."""
    if n is None:
        return "-"
    if not period:
        return str(n)
    return rate(n / period)


PCT_CELL = 4
"""Characters of a whole-percent core cell: "100%"."""


BAD_CELL = "bad!"
"""A grid cell whose value is absurd (``derived.sane_util``): flagged, not printed as a clipped number."""


def pct_cell(x: float | None, digits: int = 0) -> str:
    """A core's utilization in a grid cell: whole percents, always ``PCT_CELL`` wide ("  7%", "100%", "   -"); with
    ``digits``, AWS neuron-top's precision, ``pct_width(digits)`` wide (" 56.81%"). An absurd value (below 0, far
    above 100) is ``BAD_CELL``, never a clipped "  0%" or "999%"."""
    width = pct_width(digits)
    if x is None:
        return "-".rjust(width)
    if not sane_util(x):
        return BAD_CELL.rjust(width)
    return f"{x:.{digits}f}%".rjust(width)


def pct_width(digits: int = 0) -> int:
    """The width of a ``pct_cell`` with ``digits`` decimals: "100%" or "100.00%"."""
    return PCT_CELL + (digits + 1 if digits else 0)


FLOPS_CELL = 5
"""Characters of a FLOPS core cell's number: "56.13", "999.9"."""
_FLOPS_UNITS = ((1e15, "PF"), (1e12, "TF"), (1e9, "GF"))


class FlopsScale:
    """One unit and precision for every FLOPS cell of a grid, chosen from its busiest core, so that every cell has
    the same width (``FLOPS_CELL``) and the numbers line up: 0-99.99 with two decimals, 100-999.9 with one."""

    __slots__ = ("decimals", "div", "unit")

    def __init__(self, peak: float) -> None:
        self.unit, self.div = "GF", 1e9
        for div, unit in _FLOPS_UNITS:
            if peak >= div:
                self.unit, self.div = unit, div
                break
        top = peak / self.div
        self.decimals = 2 if round(top, 2) < 100 else 1 if round(top, 1) < 1000 else 0

    def __call__(self, x: float | None) -> str:
        """``x`` FLOPS in this scale's unit, ``FLOPS_CELL`` characters (more only beyond 99999 of the unit)."""
        if x is None:
            return "-".rjust(FLOPS_CELL)
        return f"{max(x, 0.0) / self.div:.{self.decimals}f}".rjust(FLOPS_CELL)

    def total(self, x: float) -> str:
        """A sum of cells (the grid's total) in the same unit, with as many decimals as fit naturally."""
        v = x / self.div
        return f"{v:.{2 if v < 100 else 1 if v < 10000 else 0}f} {self.unit}"


@lru_cache(maxsize=8192)
def _char_cells(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cc"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes (wide East Asian characters and emoji 2, combining marks 0), for
    outputs without a terminal library (the fleet's text table, ``--once``). The TUI measures with Rich's
    ``cell_len`` and cuts with the same ``cut``.

    >>> cells("abc"), cells("日本"), cells("e\u0301")
    (3, 4, 1)
    """
    if text.isascii():
        return len(text)
    return sum(_char_cells(ch) for ch in text)


def cut(text: str, width: int, measure: Callable[[str], int] = cells) -> str:
    """``text`` in at most ``width`` terminal cells: as it is when it fits, else cut with "…" as its last cell. A
    wide character that would straddle the edge goes, and the "…" follows what is left. Measured by cells, never
    by ``len``: "日本語" is six cells. The one rule for every cut with "…" (the panels, the header, the fleet).

    >>> cut("neuron-top", 6), cut("日本語のタグ", 6), cut("short", 9), cut("x", 0)
    ('neuro…', '日本…', 'short', '')
    """
    if width <= 0:
        return ""
    if measure(text) <= width:
        return text
    if width == 1:
        return "…"
    room = width - 1
    if text.isascii():
        return text[:room] + "…"
    out, used = [], 0
    for ch in text:
        w = measure(ch)
        if used + w > room:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def cut_parts(parts: Sequence[str], width: int, sep: str = " · ", measure: Callable[[str], int] = cells,
              words: Collection[int] = (), min_cut: int = 12) -> str:
    """``parts`` joined by ``sep`` in at most ``width`` cells: the whole parts that fit, most important first,
    then "…" for those left out. Never a part cut in the middle: a line of numbers cut inside one ("exec 12" for
    "exec 1,297/s") reads as another number. A first part wider than ``width`` is ``cut``. ``words``: the indices
    of parts that are text, not figures (a server's URL): the first part left out, if it is one of them, is cut
    with its "…" to the room left instead, when at least ``min_cut`` cells of it show.

    >>> cut_parts(["3 hosts: 3 up", "bad 7.0/s", "exec 1,297/s"], 30), cut_parts(["a", "b"], 9)
    ('3 hosts: 3 up · bad 7.0/s · …', 'a · b')
    >>> cut_parts(["up", "prometheus http://prom.example:9090", "9 queries"], 30, words={1}, min_cut=10)
    'up · prometheus http://prom.e…'
    """
    text = sep.join(parts)
    if measure(text) <= width:
        return text
    more = f"{sep}…"
    for n in range(len(parts) - 1, 0, -1):
        head = sep.join(parts[:n])
        if measure(head) + measure(more) <= width:
            room = width - measure(head) - measure(sep)
            if n in words and room >= min_cut:
                return head + sep + cut(parts[n], room, measure)
            return head + more
    return cut(parts[0] if parts else "", width, measure)


def wrap_parts(parts: Sequence[str], width: int, sep: str = " · ", measure: Callable[[str], int] = cells) -> list[str]:
    """``parts`` joined by ``sep`` into lines of at most ``width`` cells, broken only between whole parts: wrapped
    by words, "cat cpu_op" became "cat" at one line's end and "cpu_op" under it. A part wider than ``width`` gets a
    line of its own (to be wrapped or cut by whoever draws it).

    >>> wrap_parts(["start +5 ms", "phase X", "cat cpu_op"], 22)
    ['start +5 ms · phase X', 'cat cpu_op']
    """
    lines: list[str] = []
    line = ""
    for part in parts:
        if line and measure(line) + measure(sep) + measure(part) > width:
            lines.append(line)
            line = part
        else:
            line = f"{line}{sep}{part}" if line else part
    if line or not lines:
        lines.append(line)
    return lines

"""Number formatting shared by the text output and the widgets (no UI imports)."""

from __future__ import annotations

from neuron_top.derived import sane_util

__all__ = ["duration", "human_bytes", "latency", "pct", "rate", "tflops"]

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
    """Seconds -> "11.0ms" / "850us" / "1.20s"."""
    if seconds is None:
        return "idle"
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


def duration(seconds: float) -> str:
    """Seconds -> "3s", "4m05s", "2h03m"."""
    s = int(max(seconds, 0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 error``, ``2 errors``, ``1,234 lines`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


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


def pct_cell(x: float | None) -> str:
    """A core's utilization in a grid cell: whole percents, always ``PCT_CELL`` wide ("  7%", "100%", "   -"); an
    absurd value (below 0, far above 100) is ``BAD_CELL``, never a clipped "  0%" or "999%"."""
    if x is None:
        return "-".rjust(PCT_CELL)
    if not sane_util(x):
        return BAD_CELL
    return f"{x:.0f}%".rjust(PCT_CELL)


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

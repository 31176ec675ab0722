"""Number formatting shared by the text output and the widgets (no UI imports)."""

from __future__ import annotations

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
    if x is None:
        return "-".rjust(width)
    return f"{x:.{digits}f}%".rjust(width)


def tflops(x: float | None) -> str:
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

"""Sparkline cells as Segments (not widgets): a panel draws hundreds of them in one pass."""

from __future__ import annotations

from collections.abc import Sequence

SPARK = "▁▂▃▄▅▆▇█"


def spark_text(values: Sequence[float | None], width: int, top: float | None = 100.0) -> str:
    """The newest ``width`` values as block characters; None is a gap (space), never a zero."""
    vals = list(values)[-width:]
    vals = [None] * (width - len(vals)) + vals
    hi = top
    if hi is None:
        nums = [v for v in vals if v is not None]
        hi = max(nums) if nums else 1.0
    hi = hi or 1.0
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        else:
            out.append(SPARK[max(0, min(int(v / hi * 7.999), 7))])
    return "".join(out)

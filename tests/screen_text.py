"""The text of a screen, read back from a Textual SVG screenshot (what the snapshot tests store).

Each ``<text>`` run of the SVG sits on a line (its ``clip-path``) at an x position in pixels; runs are placed at
their column (x / the cell width), so the lines come back as the terminal showed them, spaces included.
"""

from __future__ import annotations

import html
import re

_RUN = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="([\d.]+)" '
                  r'clip-path="url\(#[\w-]*?line-(\d+)\)">([^<]*)</text>')


def svg_lines(svg: str) -> list[str]:
    """The lines of the screen an SVG screenshot shows."""
    runs = [(float(x), float(w), int(line), html.unescape(t).replace("\xa0", " "))
            for x, w, line, t in _RUN.findall(svg)]
    widths = [w / len(t) for _, w, _, t in runs if t]
    cell = min(widths) if widths else 12.2
    rows: dict[int, list[str]] = {}
    for x, _, line, t in runs:
        row = rows.setdefault(line, [])
        col = round(x / cell)
        if len(row) < col:
            row.extend(" " * (col - len(row)))
        row[col:col + len(t)] = list(t)
    return ["".join(rows.get(i, [])).rstrip() for i in range(max(rows, default=-1) + 1)]

"""Every stored dashboard snapshot, read back as text: no core cell is cut or runs into its neighbour.

A core cell is a bar and a value in brackets, ``████──[ 92%]``; a row of the grid starts with its device,
``ND3``. A cut number leaves a ``[`` without its ``]``, and a value that runs into the next panel makes the row's
cells of different widths. Reads the SVGs only (no app is started): it costs milliseconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.screen_text import svg_lines

STORED = Path(__file__).parent / "__snapshots__"
SVGS = sorted((STORED / "test_dashboard_snapshots").glob("*.svg"))
GRID_ROW = re.compile(r"^ND\d+ ")
CELL = re.compile(r"\[([^\[\]]*)\]")
VALUE = re.compile(r" *(\d+(\.\d+)?%?|-)")


def test_the_snapshots_are_there() -> None:
    assert len(SVGS) >= 32, "every demo machine at four sizes in two views"


@pytest.mark.parametrize("svg", SVGS, ids=lambda p: p.stem)
def test_no_core_cell_is_cut(svg: Path) -> None:
    lines = svg_lines(svg.read_text(encoding="utf-8"))
    if any("neuron-top keys" in line for line in lines):
        return  # the help screen covers the grid
    rows = [line for line in lines if GRID_ROW.match(line) and "[" in line]
    assert rows, "a core grid on screen"
    width = max(len(line) for line in lines)
    cells: set[int] = set()
    for row in rows:
        assert row.count("[") == row.count("]"), row
        values = CELL.findall(row)
        assert values and all(VALUE.fullmatch(v) for v in values), row
        cells |= {len(v) for v in values}
        assert len(row) <= width
    assert len(cells) == 1, f"cells of different widths: {sorted(cells)}"

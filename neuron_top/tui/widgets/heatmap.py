"""The fleet heat map: one cell per host, shaded and coloured by a chosen column, so 256 hosts fit on 80x24.

A cell's glyph says its band (``░▒▓█``: under 25%, 50%, 75% of the scale, and above) so it reads in 16 colours
and without colour; down hosts are ``×``, stale ones ``?``, and a troubled host's cell is drawn on the error
colour. Percent columns are on 0-100%; the others are relative to the largest value in the fleet. The line under
the map names the host under the cursor, its value and its trouble.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click
from textual.strip import Strip

from neuron_top.fleet.rows import DOWN, STALE, FleetRow
from neuron_top.fleet.table import Group, Line, column, trouble
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.fleet_table import FleetTable, StyleCache

GLYPHS = "░▒▓█"
HEAT_COLUMNS = ("util", "util_max", "mem", "idle", "err", "p99", "ecc", "vcpu", "exec")
"""The columns ``c`` cycles through."""
_PERCENT = {"util", "util_max", "vcpu"}


def heat_value(key: str, r: FleetRow) -> float | None:
    """The number a cell is coloured by (percent columns in percent; memory as used/total percent)."""
    if key == "mem":
        if r.mem_used is None or not r.mem_total:
            return None
        return 100.0 * r.mem_used / r.mem_total
    if key == "ecc":
        if r.ecc_uncorrected is None and r.ecc_corrected is None:
            return None
        return (r.ecc_uncorrected or 0) * 1000 + (r.ecc_corrected or 0)
    v = column(key).value(r)
    return float(v) if isinstance(v, int | float) else None


def band(key: str, value: float | None, top: float) -> int | None:
    """0-3, or None for no data. Percent columns on 0-100, others on 0..``top`` (the fleet's largest)."""
    if value is None:
        return None
    scale = 100.0 if key in _PERCENT or key == "mem" else top
    if scale <= 0:
        return 0
    return min(3, max(0, int(value / scale * 4)))


class HeatMap(FleetTable):
    """Arrows move between cells; Enter opens the host. Shares the table's messages and cursor rules."""

    BINDINGS = [
        Binding("left", "move(-1)", "left", show=False),
        Binding("right", "move(1)", "right", show=False),
        Binding("up", "row(-1)", "up", show=False),
        Binding("down", "row(1)", "down", show=False),
        Binding("home", "edge(-1)", "first", show=False),
        Binding("end", "edge(1)", "last", show=False),
        Binding("enter", "open", "open host", priority=True),  # the keys typed after it go to the host
    ]
    COMPONENT_CLASSES = {"heatmap--0", "heatmap--1", "heatmap--2", "heatmap--3", "heatmap--none",
                         "heatmap--down", "heatmap--stale", "heatmap--trouble", "heatmap--cursor",
                         "heatmap--title", "heatmap--info", "heatmap--dim"}
    DEFAULT_CSS = """
    HeatMap { height: 1fr; background: $surface; }
    HeatMap > .heatmap--0 { color: $primary-darken-2; }
    HeatMap > .heatmap--1 { color: $primary; }
    HeatMap > .heatmap--2 { color: $accent; }
    HeatMap > .heatmap--3 { color: $warning; }
    HeatMap > .heatmap--none { color: $text-disabled; }
    HeatMap > .heatmap--down { color: $error; text-style: bold; }
    HeatMap > .heatmap--stale { color: $warning; text-style: bold; }
    HeatMap > .heatmap--trouble { background: $error-muted; }
    HeatMap > .heatmap--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    HeatMap > .heatmap--title { color: $primary; text-style: bold; }
    HeatMap > .heatmap--info { background: $panel; color: $text; }
    HeatMap > .heatmap--dim { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.heat = "util"
        self._heat_style = StyleCache(self, "heatmap")
        self._grid: list[list[int]] = []
        """Each drawn line: the ``lines`` indices of its cells (empty for a group title)."""
        self._titles: dict[int, Group] = {}
        self._cell = 3
        self._top_value = 0.0

    def show(self, lines: list[Line], sort: str, reverse: bool, cursor_key: str | None) -> None:
        # the scale of the relative columns comes from current hosts only: a stale host's old value is not news
        values = [heat_value(self.heat, ln) for ln in lines if isinstance(ln, FleetRow) and ln.status not in
                  (DOWN, STALE)]
        self._top_value = max((v for v in values if v is not None), default=0.0)
        self._layout_grid(lines)
        super().show(lines, sort, reverse, cursor_key)

    def set_heat(self, key: str) -> None:
        self.heat = key
        self.show(self.lines, self.sort, self.reverse, self.current.key if self.current else None)

    # --- layout: cells in rows, a title line per group ---
    def _layout_grid(self, lines: Sequence[Line]) -> None:
        width = max(self.size.width - 1, 1)
        rows_needed = sum(1 for ln in lines if isinstance(ln, FleetRow))
        body = max(self._map_height(), 1)
        groups = sum(1 for ln in lines if isinstance(ln, Group))
        self._cell = 3 if -(-rows_needed // max(width // 3, 1)) + groups <= body else 1
        per_line = max(width // self._cell, 1)
        grid: list[list[int]] = []
        titles: dict[int, Group] = {}
        current: list[int] = []
        for i, ln in enumerate(lines):
            if isinstance(ln, Group):
                if current:
                    grid.append(current)
                    current = []
                titles[len(grid)] = ln
                grid.append([])
                continue
            current.append(i)
            if len(current) == per_line:
                grid.append(current)
                current = []
        if current:
            grid.append(current)
        self._grid, self._titles = grid, titles

    def _map_height(self) -> int:
        return self.size.height - 2  # the info line and the legend

    def resized(self) -> None:
        self._layout_grid(self.lines)
        super().resized()

    def _where(self, index: int) -> tuple[int, int] | None:
        for y, cells in enumerate(self._grid):
            if index in cells:
                return y, cells.index(index)
        return None

    def _scroll_to_cursor(self) -> None:
        h = max(self._map_height(), 1)
        at = self._where(self.cursor)
        if at is None:
            self.top = 0
            return
        y = at[0]
        if y < self.top:
            self.top = y
        elif y >= self.top + h:
            self.top = y - h + 1
        self.top = max(0, min(self.top, max(0, len(self._grid) - h)))

    # --- drawing ---
    def draw_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._style("base")
        h = self._map_height()
        if y == h:
            return self._info(width)
        if y == h + 1:
            return self._legend(width)
        gy = self.top + y
        if gy >= len(self._grid):
            if not self.lines and y == 0:
                return Strip([Segment(f"  {self.empty}", self._heat_style("dim"))]).crop_extend(0, width, base)
            return Strip.blank(width, base)
        if gy in self._titles:
            g = self._titles[gy]
            text = f"▾ {g.name} {clean(g.value, 60) or '(none)'} · {g.hosts} hosts"
            return Strip([Segment(text, self._heat_style("title"))]).crop_extend(0, width, base)
        segs = []
        for i in self._grid[gy]:
            segs.append(self._cell_segment(i))
            if self._cell == 3:
                segs.append(Segment(" "))
        return Strip(segs).crop_extend(0, width, base)

    def _cell_segment(self, i: int) -> Segment:
        r = self.lines[i]
        assert isinstance(r, FleetRow)
        w = 2 if self._cell == 3 else 1
        s = self._heat_style
        if r.status == DOWN:
            text, style = "×" * w, s("down")
        elif r.status == STALE:  # its figures are old: not drawn as if current (the line below still names them)
            text, style = "?" * w, s("stale")
        else:
            b = band(self.heat, heat_value(self.heat, r), self._top_value)
            text = (GLYPHS[b] if b is not None else "·") * w
            style = s(str(b) if b is not None else "none")
        if trouble(r):
            style = style + s("trouble")
        if i == self.cursor:
            style = style + s("cursor")
        return Segment(text, style)

    def _info(self, width: int) -> Strip:
        r = self.current
        style = self._heat_style("info")
        if r is None:
            return Strip([Segment(" no host", style)]).crop_extend(0, width, style)
        col = column(self.heat)
        why = trouble(r)
        util = "" if self.heat == "util" else f"util {column('util').text(r) or '-'} · "
        text = (f" {clean(r.title, 60)} {clean(r.instance_type, 30)} · {col.title.lower()} {col.text(r) or '-'} · "
                f"{util}{column('status').text(r)}"
                + (f" · {', '.join(why)}" if why else "") + (f" · {clean(r.note, 120)}" if r.note else ""))
        return Strip([Segment(text, style)]).crop_extend(0, width, style)

    def _legend(self, width: int) -> Strip:
        s = self._heat_style
        col = column(self.heat)
        scale = "0-100%" if self.heat in _PERCENT or self.heat == "mem" else f"0-{self._top_value:.3g}"
        segs = [Segment(f" {col.title.lower()} {scale}: ", s("dim"))]
        for b, g in enumerate(GLYPHS):
            segs.append(Segment(g * 2, s(str(b))))
            segs.append(Segment(" "))
        segs += [Segment("·· no data  ", s("dim")), Segment("××", s("down")), Segment(" down  ", s("dim")),
                 Segment("??", s("stale")), Segment(" stale  ", s("dim")), Segment("  ", s("trouble")),
                 Segment(" needs a look", s("dim"))]
        return Strip(segs).crop_extend(0, width, self._style("base"))

    # --- moving ---
    def action_row(self, step: int) -> None:
        at = self._where(self.cursor)
        if at is None:
            return
        y, x = at
        y += step
        while 0 <= y < len(self._grid) and not self._grid[y]:
            y += step
        if 0 <= y < len(self._grid):
            cells = self._grid[y]
            self._move_to(cells[min(x, len(cells) - 1)])

    def action_page(self, step: int) -> None:
        for _ in range(max(self._map_height(), 1)):
            self.action_row(step)

    def clicked(self, event: Click) -> None:
        gy = self.top + event.y
        if event.y >= self._map_height() or gy >= len(self._grid):
            return
        x = event.x // self._cell
        cells = self._grid[gy]
        if 0 <= x < len(cells):
            self._move_to(cells[x])
            if event.chain >= 2:
                self.open_clicked()


__all__ = ["HEAT_COLUMNS", "HeatMap", "band", "heat_value"]

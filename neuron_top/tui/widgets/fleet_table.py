"""The fleet table: one line per host, a cursor, a sortable header, troubled hosts marked.

Drawn line by line (``LineDiff``): a refresh of 256 hosts repaints only the cells that changed in the visible
lines. Every string from the data reaches the terminal as a Segment's plain text, cleaned by ``textsafe.clean``
in the column's text function: a label like ``[red]x`` or one holding an escape shows literally.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click, MouseScrollDown, MouseScrollUp
from textual.message import Message
from textual.strip import Strip

from neuron_top.fleet.rows import DOWN, STALE, UP, FleetRow
from neuron_top.fleet.table import COLUMNS, Column, Group, Line, column, fit_columns, pad, trouble
from neuron_top.textsafe import clean
from neuron_top.tui.render.spans import LineDiff

HOST_GROWTH = 8
"""Spare width the host column may take before the rest goes to the note."""
NOTE_MIN = 12
NOTE_WIDE = 120
"""From this width on the note column is kept (at least ``NOTE_ROOM`` cells), other columns making room."""
NOTE_ROOM = 28


class StyleCache:
    """A widget's component styles by name, looked up once per theme (drawing 60 lines asks hundreds of times)."""

    def __init__(self, widget: LineDiff, prefix: str) -> None:
        self.widget = widget
        self.prefix = prefix
        self._styles: dict[str, Style] = {}
        self._theme = ""

    def __call__(self, name: str) -> Style:
        theme = self.widget.app.theme
        if theme != self._theme:
            self._styles, self._theme = {}, theme
        got = self._styles.get(name)
        if got is None:
            got = self._styles[name] = (self.widget.rich_style if name == "base" else
                                        self.widget.get_component_rich_style(f"{self.prefix}--{name}", partial=True))
        return got


def column_text(key: str, row: FleetRow) -> str:
    return column(key).text(row)


def first_row(lines: Sequence[Line], start: int, step: int) -> int | None:
    """The index of the first host row from ``start`` going ``step`` (+1/-1), skipping group headings."""
    i = start
    while 0 <= i < len(lines):
        if isinstance(lines[i], FleetRow):
            return i
        i += step
    return None


class FleetTable(LineDiff, can_focus=True):
    """Up/Down/PgUp/PgDn/Home/End move the cursor; Enter opens the host; a click on a title sorts by it."""

    BINDINGS = [
        Binding("up", "move(-1)", "up", show=False),
        Binding("down", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "edge(-1)", "first", show=False),
        Binding("end", "edge(1)", "last", show=False),
        Binding("enter", "open", "open host"),  # the keys typed after it go to the host (keys.in_order)
    ]
    COMPONENT_CLASSES = {"fleet-table--header", "fleet-table--sorted", "fleet-table--cursor", "fleet-table--group",
                         "fleet-table--up", "fleet-table--stale", "fleet-table--down", "fleet-table--dim",
                         "fleet-table--bad", "fleet-table--warn", "fleet-table--mark", "fleet-table--info"}
    DEFAULT_CSS = """
    FleetTable { height: 1fr; background: $surface; }
    FleetTable > .fleet-table--header { background: $panel; color: $text; text-style: bold; }
    FleetTable > .fleet-table--sorted { background: $primary-muted; color: $text; text-style: bold; }
    FleetTable > .fleet-table--cursor { background: $surface-lighten-1; }
    FleetTable:focus > .fleet-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    FleetTable > .fleet-table--group { background: $boost; color: $primary; text-style: bold; }
    FleetTable > .fleet-table--up { color: $success; }
    FleetTable > .fleet-table--stale { color: $warning; text-style: bold; }
    FleetTable > .fleet-table--down { color: $error; text-style: bold; }
    FleetTable > .fleet-table--dim { color: $text-muted; }
    FleetTable > .fleet-table--bad { color: $error; text-style: bold; }
    FleetTable > .fleet-table--warn { color: $warning; }
    FleetTable > .fleet-table--mark { color: $error; text-style: bold; }
    FleetTable > .fleet-table--info { background: $panel; color: $text; }
    """

    class Open(Message):
        """A double click on a host (Enter opens it through the screen's ``open_host`` action)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class Moved(Message):
        """The cursor is on another host."""

        def __init__(self, key: str | None, table: FleetTable | None = None) -> None:
            super().__init__()
            self.key = key
            self.table = table

        @property
        def control(self) -> FleetTable | None:
            return self.table

    class SortBy(Message):
        """A click on a column title."""

        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Line] = []
        self.cursor = 0
        """Index into ``lines`` (always a host row while there is one)."""
        self.top = 0
        """Index of the first line shown under the title line."""
        self.sort = "host"
        self.reverse = False
        self._style = StyleCache(self, "fleet-table")
        self._layout: tuple[int, list[tuple[Column, int]], int] | None = None
        self.empty = "no hosts yet"
        """What the first line says when no host is shown (the screen says why: none yet, or the filter)."""
        self.moved_to: str | None = None
        """The host the user moved the cursor to, until a ``show`` or the screen's handling of ``Moved`` (a message
        that can come after a refresh's ``show``): until then it is this, not the key the screen passes, that the
        cursor stays on (a refresh between End and Enter put the cursor back and opened another host)."""

    # --- data in ---
    def show(self, lines: list[Line], sort: str, reverse: bool, cursor_key: str | None) -> None:
        """New lines (already arranged); the cursor stays on ``cursor_key`` when it is still shown."""
        self.lines = lines
        self.sort, self.reverse = sort, reverse
        if self.moved_to is not None:
            cursor_key, self.moved_to = self.moved_to, None
        at = None
        if cursor_key is not None:
            at = next((i for i, ln in enumerate(lines) if isinstance(ln, FleetRow) and ln.key == cursor_key), None)
        if at is None:
            at = first_row(lines, min(self.cursor, max(len(lines) - 1, 0)), -1)
            if at is None:
                at = first_row(lines, 0, 1)
        self.cursor = at if at is not None else 0
        self._scroll_to_cursor()
        self.repaint_changed()

    @property
    def current(self) -> FleetRow | None:
        if 0 <= self.cursor < len(self.lines):
            line = self.lines[self.cursor]
            return line if isinstance(line, FleetRow) else None
        return None

    # --- layout ---
    def columns(self, width: int) -> tuple[list[tuple[Column, int]], int]:
        """The columns that fit with their widths, and the note column's width (0: none)."""
        if self._layout is not None and self._layout[0] == width:
            return self._layout[1], self._layout[2]
        cols = fit_columns(width - 2 - (NOTE_ROOM if width >= NOTE_WIDE else 0))
        used = 2 + sum(c.width + 1 for c in cols)
        spare = max(0, width - used)
        grow = min(spare, HOST_GROWTH)
        out = [(c, c.width + (grow if c.key == "host" else 0)) for c in cols]
        note = spare - grow if spare - grow >= NOTE_MIN else 0
        self._layout = (width, out, note)
        return out, note

    def _body_height(self) -> int:
        return max(1, self.size.height - 2)  # the title line and the cursor host's line

    def _scroll_to_cursor(self) -> None:
        h = self._body_height()
        if self.cursor < self.top:
            self.top = self.cursor
            if self.top > 0 and isinstance(self.lines[self.top - 1], Group):
                self.top -= 1  # show the heading of the cursor's group too
        elif self.cursor >= self.top + h:
            self.top = self.cursor - h + 1
        self.top = max(0, min(self.top, max(0, len(self.lines) - h)))

    def on_resize(self) -> None:
        self.resized()

    def resized(self) -> None:
        """The size changed: lay out again (Textual runs every class's ``on_resize``; subclasses extend this)."""
        self._layout = None
        self._scroll_to_cursor()
        self.refresh()

    # --- drawing ---
    def draw_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._style("base")
        if y == 0:
            return self._title(width).crop_extend(0, width, base)
        if y == self.size.height - 1:
            return self._detail(width)
        i = self.top + y - 1
        if i >= len(self.lines):
            if not self.lines and y == 1:
                return Strip([Segment(f"  {self.empty}", self._style("dim"))]).crop_extend(0, width, base)
            return Strip.blank(width, base)
        line = self.lines[i]
        if isinstance(line, Group):
            return self._group(line, width)
        return self._row(line, width, i == self.cursor).crop_extend(0, width, base)

    def _title(self, width: int) -> Strip:
        cols, note = self.columns(width)
        head, sorted_ = self._style("header"), self._style("sorted")
        segs = [Segment("  ", head)]
        for c, w in cols:
            title = c.title + ((" ▲" if self.reverse else " ▼") if c.key == self.sort else "")
            segs.append(Segment(pad(title, w, c.numeric and c.key != self.sort), sorted_ if c.key == self.sort
                                else head))
            segs.append(Segment(" ", head))
        if note:
            segs.append(Segment(pad("NOTE", note, False), head))
        return Strip(segs)

    def _detail(self, width: int) -> Strip:
        """The cursor host in full: its names, trouble and note (the note column is cut or absent when narrow)."""
        style = self._style("info")
        r = self.current
        if r is None:
            return Strip([Segment(" no host", style)]).crop_extend(0, width, style)
        names = " ".join(clean(x, 60) for x in (r.title, r.name, r.instance_type, r.zone) if x)
        labels = " ".join(f"{clean(k, 30)}={clean(v, 40)}" for k, v in r.labels.items())
        why = trouble(r)
        parts = [names + (f" {labels}" if labels else ""), column_text("status", r)]
        if why:
            parts.append(", ".join(why))
        if r.targets > 1 or r.note:
            parts.append(clean(r.note, 300))
        return Strip([Segment(" " + " · ".join(p for p in parts if p), style)]).crop_extend(0, width, style)

    def _group(self, g: Group, width: int) -> Strip:
        util = f" · util {g.util:.1f}%" if g.util is not None else ""
        bad = f" · {g.troubled} need a look" if g.troubled else ""
        text = f" ▾ {g.name} {clean(g.value, 60) or '(none)'} · {g.hosts} hosts{util}{bad}"
        style = self._style("group")
        return Strip([Segment(pad(text, width, False), style)])

    def _row(self, r: FleetRow, width: int, is_cursor: bool) -> Strip:
        cols, note = self.columns(width)
        why = trouble(r)
        segs = [Segment("! " if why else "  ", self._style("mark") if why else None)]
        for c, w in cols:
            segs.append(Segment(pad(c.text(r), w, c.numeric), self._cell_style(c, r)))
            segs.append(Segment(" "))
        if note:
            text = clean(r.note, 300) or (", ".join(why) if why else "")
            segs.append(Segment(pad(text, note, False), self._style("dim")))
        strip = Strip(segs)
        if is_cursor:
            strip = strip.apply_style(self._style("cursor"))
        return strip

    def _cell_style(self, c: Column, r: FleetRow) -> Style | None:
        key = c.key
        if key == "status":
            return self._style({UP: "up", STALE: "stale", DOWN: "down"}.get(r.status, "dim"))
        if key == "ecc" and r.ecc_uncorrected:
            return self._style("bad")
        if key == "err" and r.err_rate:
            return self._style("bad")
        if key == "idle" and r.idle:
            return self._style("warn")
        if key == "host" and r.status == DOWN:
            return self._style("down")
        return None

    # --- moving ---
    def _move_to(self, i: int | None) -> None:
        if i is None or i == self.cursor:
            return
        self.cursor = i
        old_top = self.top
        self._scroll_to_cursor()
        if old_top != self.top:
            self.refresh()
        else:
            self.repaint_changed()
        self.moved_to = self.current.key if self.current else None
        self.post_message(self.Moved(self.moved_to, self))

    def action_move(self, step: int) -> None:
        self._move_to(first_row(self.lines, self.cursor + step, step))

    def action_page(self, step: int) -> None:
        target = max(0, min(len(self.lines) - 1, self.cursor + step * self._body_height()))
        self._move_to(first_row(self.lines, target, step) or first_row(self.lines, target, -step))

    def action_edge(self, step: int) -> None:
        self._move_to(first_row(self.lines, 0, 1) if step < 0 else first_row(self.lines, len(self.lines) - 1, -1))

    async def action_open(self) -> None:
        """Enter: the host's dashboard, open before the next key is routed (the screen's ``open_host``, awaited):
        with ``Open`` posted, ``/bert`` typed right after Enter reached the fleet's filter, not the host's."""
        row = self.current
        if row is not None:
            await self.run_action(f"screen.open_host({row.key!r})")

    def open_clicked(self) -> None:
        """A double click: the host under the cursor (``Open``)."""
        row = self.current
        if row is not None:
            self.post_message(self.Open(row.key))

    def on_click(self, event: Click) -> None:
        self.clicked(event)

    def clicked(self, event: Click) -> None:
        """A click: on a title, sort by it; on a host, put the cursor there (twice: open it)."""
        if event.y == 0:
            x = 2
            cols, _ = self.columns(self.size.width)
            for c, w in cols:
                if x <= event.x < x + w + 1:
                    self.post_message(self.SortBy(c.key))
                    return
                x += w + 1
            return
        i = self.top + event.y - 1
        if 0 <= i < len(self.lines) and isinstance(self.lines[i], FleetRow):
            self._move_to(i)
            if event.chain >= 2:
                self.open_clicked()

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self._move_to(first_row(self.lines, min(self.cursor + 3, len(self.lines) - 1), 1))

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self._move_to(first_row(self.lines, max(self.cursor - 3, 0), -1))


__all__ = ["COLUMNS", "FleetTable", "StyleCache", "first_row"]

"""Memory panels: the summary by category (host and device) and the device -> core -> model -> category tree.

Both follow AWS neuron-top's "Memory Usage Summary" and "Memory Usage Details"; the summary adds the machine's
RAM and swap, and the tree adds each row's share of a device's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple, overload

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from neuron_top import fmt
from neuron_top.memtree import Key, ModelCache, Node, build_tree, category_label, expandable, walk
from neuron_top.output.cells import memory_values
from neuron_top.snapshot import DEVICE_CATEGORIES, HOST_CATEGORIES, Snapshot
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import app_title, cell, common_ends, fit, fit_distinct, num
from neuron_top.tui.widgets.panel import Panel, bar_fill, load_band
from neuron_top.view import View

_SHORT = {
    "tensors": "Tensors", "constants": "Const", "model_code": "Code", "runtime_memory": "Runtime",
    "model_shared_scratchpad": "Scratch", "dma_buffers": "DMA", "application_memory": "App",
}
NARROW = 100
"""Below this many columns labels are abbreviated and the categories flow (two lines per kind, not a grid)."""
GAUGE_BAR, GAUGE_BAR_MAX = 4, 40
"""A gauge's bar: at least this long (32 eighths), and no longer than that."""
Gauge = tuple[str, str, int, "tuple[int, int, int] | None", int]
"""A memory gauge as drawn: label, text, bar width, bar fill (``bar_fill`` and ``load_band``; None: no data),
label width."""


def device_memory_size(snap: Snapshot) -> int | None:
    """Bytes of memory on one Neuron device, when the report says (and says something sane)."""
    n = snap.hardware.neuron_device_memory_size
    return n if isinstance(n, int) and n > 0 else None


def _flow(items: list[tuple[str, int | None]], width: int) -> list[tuple[tuple[str, int | None], ...]]:
    """``items`` ("Name: value", two spaces after each) in lines of at most ``width`` cells."""
    lines: list[tuple[tuple[str, int | None], ...]] = []
    line: list[tuple[str, int | None]] = []
    used = 0
    for name, value in items:
        n = cell_len(name) + 2 + len(fmt.human_bytes(value)) + 2
        if line and used + n > width:
            lines.append(tuple(line))
            line, used = [], 0
        line.append((name, value))
        used += n
    if line:
        lines.append(tuple(line))
    return lines


class SummaryContent(NamedTuple):
    """All the memory summary draws (``MemorySummary.content``)."""

    title: str
    host: int
    device: int
    host_breakdown: dict[str, int]
    device_breakdown: dict[str, int]
    looks: tuple[tuple[Gauge, ...], ...]
    reported: bool


TreeContent = tuple[tuple[Node, ...], int, str, "int | None", str]
"""All the memory tree draws besides the cursor (``MemoryTree.content``): tree, expansion, title, device size,
what it says with no app."""


def _no_app(view: View) -> str:
    """What the tree says when "all" has no app (none running, or none the filter shows), else ""."""
    snap = view.snapshot
    return snap.no_apps if view.app.is_all and not snap.apps else ""


class MemorySummary(Panel[SummaryContent]):
    """Host and device bytes by category for the selected app, and the machine's RAM and swap as bars."""

    TITLE = "Memory Usage Summary"

    def content(self, view: View, width: int) -> SummaryContent:
        """All the summary shows, as drawn (``build`` draws from this alone): the categories change when a model
        loads or unloads, the gauges when their text or bar moves (RAM used moves every report, its gauge
        rarely)."""
        snap, app = view.snapshot, view.app
        host, device = app.used_bytes
        gauges: list[tuple[str, int | None, int | None]] = []
        m = snap.host_memory
        if m is not None:
            gauges.append(("RAM", m.memory_used_bytes, m.memory_total_bytes))
            gauges.append(("Swap", m.swap_used_bytes, m.swap_total_bytes))
        size = device_memory_size(snap)
        if size:
            devs = snap.device_count if app.is_all else len({i // snap.cores_per_device for i in app.core_memory})
            if devs:
                gauges.append(("Dev" if width < NARROW else "Device", device, size * devs))
        looks = _pack(gauges, width)
        return SummaryContent(app_title(app), host, device, app.host_breakdown, app.device_breakdown, looks,
                              app.memory_reported)

    def build(self, view: View, width: int) -> list[Strip]:
        content = self._content if self._content is not None else self.content(view, width)
        title, host, device, host_breakdown, device_breakdown, looks, _ = content
        narrow = width < NARROW
        lines = [self.title_strip(self.TITLE, width, title)]
        rows = [
            (" Host" if narrow else " Host Used Memory", host, HOST_CATEGORIES, host_breakdown),
            (" Device" if narrow else " Device Used Memory", device, DEVICE_CATEGORIES, device_breakdown),
        ]
        cells: list[list[tuple[str, int | None]]] = []
        for _, total, known, values in rows:
            # as --once: "-" where the report gives no value (output.cells.memory_values), never a row of zeros
            shown = memory_values(view.app, known, values, total)
            cells.append([shown[0]] + [((_SHORT.get(n) if narrow else None) or category_label(n), v)
                                       for n, v in shown[1:]])
        label_w = max(len(r[0]) for r in rows) + 2
        if narrow:  # "Name: value" items flowing over as few lines as the width allows
            for (label, *_), row in zip(rows, cells, strict=True):
                for n, part in enumerate(_flow(row, width - label_w)):
                    head = label if n == 0 else ""
                    lines.append(self.memo(("flow", head, part, label_w), partial(self._row, head, part, label_w, 0)))
        else:
            cell_w = max(cell_len(name) + 2 + len(fmt.human_bytes(v)) for row in cells for name, v in row) + 2
            per_line = max((width - label_w) // cell_w, 1)
            for (label, *_), row in zip(rows, cells, strict=True):
                for start in range(0, len(row), per_line):
                    part = tuple(row[start:start + per_line])
                    head = label if start == 0 else ""
                    # most reports change a category or two: the other rows stay the same strips
                    lines.append(self.memo(("row", head, part, label_w, cell_w),
                                           partial(self._row, head, part, label_w, cell_w)))
        if not looks:
            lines.append(LightStrip([Segment(" host memory: no data", self.style("dim"))]))
            return lines
        for gauges in looks:
            lines.append(self.memo(("gauges", gauges), partial(self._gauges, gauges)))
        return lines

    def _gauges(self, gauges: tuple[Gauge, ...]) -> Strip:
        return LightStrip([seg for look in gauges for seg in self._gauge(*look)])

    def _row(self, head: str, part: tuple[tuple[str, int | None], ...], label_w: int, cell_w: int) -> Strip:
        """A label, then "Name: value" items: in cells ``cell_w`` wide, or (0) two spaces apart."""
        segs = [cell(head, label_w, self.style("label"))]
        for name, value in part:
            text = f"{name}: "
            size = fmt.human_bytes(value)
            segs.append(Segment(text, self.style("label")))
            segs.append(cell(size, cell_w - cell_len(text) if cell_w else len(size) + 2,
                             self.style("value" if value else "dim")))
        return LightStrip(segs)

    def _gauge(self, label: str, text: str, bar_w: int, fill: tuple[int, int, int] | None,
               label_w: int) -> list[Segment]:
        segs = [cell(f" {label}", label_w, self.style("label"))]
        if bar_w:
            segs += self.filled_bar(fill, bar_w)
        return [*segs, Segment(text, self.style("dim" if fill is None else "value"))]


def _pack(gauges: list[tuple[str, int | None, int | None]], width: int) -> tuple[tuple[Gauge, ...], ...]:
    """The gauges as drawn, line by line: as many on a line as fit with their text whole and a bar of at least
    ``GAUGE_BAR`` cells (a gauge with no data has no bar: "Swap none"), the room left shared by the bars."""
    label_w = max((len(label) for label, _, _ in gauges), default=0) + 2
    items = []
    for label, used, total in gauges:
        if isinstance(used, int) and isinstance(total, int) and total > 0 and used >= 0:
            pct: float | None = min(used / total * 100, 100.0)
            text = f" {pct:3.0f}% {fmt.human_bytes(used)}/{fmt.human_bytes(total)} "
        else:
            pct, text = None, " none " if total == 0 else " no data "
        items.append((label, pct, text, label_w + len(text) + (GAUGE_BAR if pct is not None else 0)))
    lines: list[list[tuple[str, float | None, str, int]]] = []
    for item in items:
        if lines and sum(i[3] for i in lines[-1]) + item[3] <= width:
            lines[-1].append(item)
        else:
            lines.append([item])
    # one bar length for every gauge, so that the bars line up: what the fullest line leaves each of its bars
    shares = [max(width - sum(i[3] for i in line), 0) // n for line in lines
              if (n := sum(1 for i in line if i[1] is not None))]
    bar_w = min(GAUGE_BAR + min(shares, default=0), GAUGE_BAR_MAX)
    out = []
    for line in lines:
        looks: list[Gauge] = []
        for label, pct, text, _ in line:
            fill = None if pct is None else (*bar_fill(pct, bar_w), load_band(pct))
            looks.append((label, text, bar_w if pct is not None else 0, fill, label_w))
        out.append(tuple(looks))
    return tuple(out)


class LazyStrips(Sequence[Strip]):
    """Header strips, then rows made on first use: a frame draws the rows on screen, not all of a tree that
    is thousands of rows tall (``Panel`` only takes ``len`` and indexes)."""

    def __init__(self, head: list[Strip], count: int, make: Callable[[int], Strip]) -> None:
        self._head = head
        self._count = count
        self._make = make
        self._made: dict[int, Strip] = {}

    def __len__(self) -> int:
        return len(self._head) + self._count

    @overload
    def __getitem__(self, i: int) -> Strip: ...
    @overload
    def __getitem__(self, i: slice) -> list[Strip]: ...
    def __getitem__(self, i: int | slice) -> Strip | list[Strip]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < len(self._head):
            return self._head[i]
        strip = self._made.get(i)
        if strip is None:
            strip = self._made[i] = self._make(i - len(self._head))
        return strip


class MemoryTree(Panel[TreeContent]):
    """Memory by device, core, model and category; parents show the sum of their children.

    Expansion and the cursor are keyed by each node's stable key, so they survive new reports. The widget draws
    every visible row (height auto) and scrolls the containers around it to keep the cursor in view.
    """

    TITLE = "Memory Usage Details"
    BINDINGS = [
        Binding("up", "cursor(-1)", "up", show=False),
        Binding("down", "cursor(1)", "down", show=False),
        Binding("pageup", "cursor(-10)", "page up", show=False),
        Binding("pagedown", "cursor(10)", "page down", show=False),
        Binding("home", "cursor(-1000000)", "first row", show=False),
        Binding("end", "cursor(1000000)", "last row", show=False),
        Binding("enter", "toggle_node", "expand/collapse"),
        Binding("right", "expand", "expand", show=False),
        Binding("left", "collapse", "collapse", show=False),
        Binding("x", "toggle_all", "expand/collapse all"),
    ]
    HEADER_ROWS = 2
    """The title and the column heads; tree rows start below them."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._expanded: dict[Key, bool] = {}
        """Nodes the user opened or closed; the rest follow ``_all``, else the defaults of ``is_expanded``."""
        self._all: bool | None = None
        """Set by expand/collapse all: every node not in ``_expanded`` is open (True) or closed (False)."""
        self._cursor_key: Key | None = None
        self._cursor_index = 0
        self._state = 0
        """Bumped on every change of expansion or cursor, so the cached strips are rebuilt."""
        self._expansion = 0
        """Bumped on every change of expansion: the visible rows are recomputed only then (or on a new tree)."""
        self._tree_key: tuple[object, ...] | None = None
        self._tree: tuple[Node, ...] = ()
        self._models = ModelCache()
        """Each app's models as of its last change: a rebuild decodes only the apps whose models changed."""
        self._expandable: list[Node] = []
        """``expandable(self._tree)``, found once per tree (every build asks, for the "x" hint)."""
        self._few_cores = True
        self._rows_key: tuple[object, ...] | None = None
        self._rows: list[tuple[Node, int]] = []
        self._tree_content: object = None
        self._row_strips: dict[tuple[object, ...], Strip] = {}
        """One strip per drawn row, keyed by everything the row shows: a cursor move or a report that changed
        a few numbers rebuilds only those rows (a fully open tree on a 32-core machine has thousands)."""
        self._row_context: tuple[object, ...] | None = None

    # --- state ---
    def nodes(self) -> tuple[Node, ...]:
        """The tree's top nodes, built again only when the memory it shows changed (not ``tree``: Textual's
        DOMNode has one, the widget tree as Rich draws it)."""
        view = self.view
        if view is None:
            return ()
        # Rebuild only when what the tree shows changed (memory is steady between model loads, and a
        # rebuild was a fifth of an update's CPU on a trn2): compare the memory groups themselves.
        snap = view.snapshot
        apps = snap.apps if view.app.is_all else (view.app,)
        content = (view.pid, snap.cores_per_device, snap.hardware.neuron_device_memory_size,
                   [(a.key, a.memory.neuron_runtime_used_bytes, a.memory.loaded_models) for a in apps])
        if content != self._tree_content or self._tree_key is None:
            self._tree = build_tree(snap, view.app, self._models)
            self._expandable = expandable(self._tree)
            self._tree_content = content
            self._tree_key = (view.tick, view.pid, id(snap))
            self._few_cores = sum(len(d.children) for d in self._tree) <= 4
        return self._tree

    def is_expanded(self, node: Node) -> bool:
        if node.key in self._expanded:
            return self._expanded[node.key]
        if self._all is not None:
            return self._all
        if node.kind == "dev":  # like AWS neuron-top: the first device open, the rest closed when there are many
            return len(self._tree) <= 2 or node is self._tree[0]
        if node.kind == "core":  # open cores only when there are few of them, as on a small instance
            return self._few_cores
        return False

    def rows(self) -> list[tuple[Node, int]]:
        """The visible rows, (node, depth), in drawing order."""
        tree = self.nodes()
        key = (self._tree_key, self._expansion)
        if key != self._rows_key:
            self._rows = walk(tree, self.is_expanded)
            self._rows_key = key
        return self._rows

    def cursor_row(self) -> int:
        """The index of the cursor among ``rows()`` (re-found by key after every report)."""
        rows = self.rows()
        if not rows:
            return 0
        if self._cursor_index < len(rows) and rows[self._cursor_index][0].key == self._cursor_key:
            return self._cursor_index
        for i, (n, _) in enumerate(rows):
            if n.key == self._cursor_key:
                self._cursor_index = i
                return i
        self._cursor_index = max(0, min(self._cursor_index, len(rows) - 1))
        self._cursor_key = rows[self._cursor_index][0].key
        return self._cursor_index

    def cache_extra(self) -> tuple[object, ...]:
        return (self._state,)

    def content(self, view: View, width: int) -> TreeContent:
        """The tree (the same object while the memory it shows is the same), the expansion, the title and the
        device size: between model loads a report draws nothing new here; with no app, what it says of that."""
        return (self.nodes(), self._expansion, app_title(view.app), device_memory_size(view.snapshot),
                _no_app(view))

    def _changed(self, scroll: bool = True, expansion: bool = False) -> None:
        self._state += 1
        if expansion:
            self._expansion += 1
        self.refresh(layout=True)
        if scroll:
            self.call_after_refresh(self._scroll_to_cursor)

    def _scroll_to_cursor(self) -> None:
        """Scroll every scrolling ancestor so that the cursor line is visible (the tree itself does not scroll)."""
        vr = self.virtual_region
        if not vr.size:
            return
        region = Region(vr.x, vr.y + self.HEADER_ROWS + self.cursor_row(), vr.width, 1)
        widget: Widget = self
        while isinstance(widget.parent, Widget):
            container = widget.parent
            delta = container.scroll_to_region(region, animate=False, immediate=True)
            region = (region.translate(-delta)
                      .translate(container.styles.margin.top_left)
                      .translate(container.styles.border.spacing.top_left)
                      .translate(container.virtual_region_with_margin.offset))
            widget = container

    # --- actions ---
    def action_cursor(self, step: int) -> None:
        rows = self.rows()
        if not rows:
            return
        i = max(0, min(self.cursor_row() + step, len(rows) - 1))
        self._cursor_index, self._cursor_key = i, rows[i][0].key
        self._changed()

    def _set(self, node: Node, open_: bool) -> None:
        if node.has_children and self.is_expanded(node) != open_:
            self._expanded[node.key] = open_
            self._expansion += 1

    def action_toggle_node(self) -> None:
        rows = self.rows()
        if rows:
            node = rows[self.cursor_row()][0]
            self._set(node, not self.is_expanded(node))
            self._changed()

    def action_expand(self) -> None:
        rows = self.rows()
        if rows:
            self._set(rows[self.cursor_row()][0], True)
            self._changed()

    def action_collapse(self) -> None:
        """Close the cursor's node; on a closed node or a leaf, go to its parent instead (as file trees do)."""
        rows = self.rows()
        if not rows:
            return
        i = self.cursor_row()
        node, depth = rows[i]
        if node.has_children and self.is_expanded(node):
            self._set(node, False)
        else:
            for j in range(i - 1, -1, -1):
                if rows[j][1] < depth:
                    self._cursor_index, self._cursor_key = j, rows[j][0].key
                    break
        self._changed()

    def action_toggle_all(self, scroll: bool = True) -> None:
        """Expand every node, or collapse every node when all are already open (the `x` key). ``scroll``: bring
        the cursor row into view (the dashboard brings the whole tree's top into view instead)."""
        self.nodes()
        nodes = self._expandable
        self._all = not all(self.is_expanded(n) for n in nodes) if nodes else self._all is not True
        self._expanded.clear()
        self._changed(scroll=scroll, expansion=True)

    def on_click(self, event: Click) -> None:
        i = event.y - self.HEADER_ROWS
        rows = self.rows()
        if 0 <= i < len(rows):
            node = rows[i][0]
            self._cursor_index, self._cursor_key = i, node.key
            self._set(node, not self.is_expanded(node))
            self._changed(scroll=False)

    # --- drawing ---
    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        narrow = width < NARROW
        size = device_memory_size(snap)
        rows = self.rows()
        nodes = self._expandable
        hint = "x: collapse all" if nodes and all(self.is_expanded(n) for n in nodes) else "x: expand all"
        lines = [self.title_strip(self.TITLE, width, f"{app_title(app)}  {hint}" if width >= 60 else "")]
        id_w = 9
        mem_w = 10 if narrow else 14
        pct_w = 7 if size else 0
        name_w = max(width - id_w - 2 * mem_w - pct_w, 10)
        label = self.style("label")
        lines.append(LightStrip([cell(" Name", name_w, label), cell("Model ID", id_w, label),
                            num("Device" if narrow else "Device Memory", mem_w, label),
                            num("% dev", pct_w, label),
                            num("Host" if narrow else "Host Memory", mem_w, label)]))
        if not rows:  # no app (none running, or none the filter shows) is not memory unreported
            lines.append(LightStrip([Segment(f" {_no_app(view) or 'no device memory reported'}", self.style("dim"))]))
            return lines
        cur = self.cursor_row() if self.has_focus else -1
        styles = {n: self.style(n) for n in ("cursor", "label", "dim", "value")}
        ends = common_ends([n.label for n, _ in rows if n.kind == "model"])
        context = (width, size, self.app.theme, ends)
        if context != self._row_context or len(self._row_strips) > 4 * len(rows) + 64:
            self._row_strips.clear()
            self._row_context = context
        cache = self._row_strips
        widths = (name_w, id_w, mem_w, pct_w, width)

        def row(i: int) -> Strip:
            node, depth = rows[i]
            mark = ("[-] " if self.is_expanded(node) else "[+] ") if node.has_children else "    "
            key = (node.key, node.label, node.model_id, node.device, node.host, depth, mark, i == cur)
            strip = cache.get(key)
            if strip is None:
                strip = cache[key] = self._row(node, depth, mark, i == cur, styles, widths, size, ends)
            return strip

        return LazyStrips(lines, len(rows), row)  # type: ignore[return-value]  # a Sequence, as Panel uses it

    def _row(self, node: Node, depth: int, mark: str, sel: bool, styles: dict[str, Style],
             widths: tuple[int, int, int, int, int], size: int | None, ends: tuple[str, str] = ("", "")) -> Strip:
        name_w, id_w, mem_w, pct_w, width = widths
        cursor = styles["cursor"]
        base = styles["label" if node.kind == "cat" else "value"]
        indent = " " + "  " * depth + mark
        name = fit_distinct(node.label, name_w - len(indent) - 1, ends) if node.kind == "model" else node.label
        pct = f"{node.device / size * 100:.1f}%" if size and node.kind != "cat" else ""

        def mem(n: int) -> Style:
            return cursor if sel else styles["value" if n else "dim"]

        segs = [Segment(fit(indent + name, name_w - 1) + " ", cursor if sel else base),
                cell(node.model_id, id_w, cursor if sel else styles["dim"]),
                num(fmt.human_bytes(node.device), mem_w, mem(node.device)),
                num(pct, pct_w, cursor if sel else styles["dim"]),
                num(fmt.human_bytes(node.host), mem_w, mem(node.host))]
        if sel:
            segs.append(Segment(" " * max(width - name_w - id_w - 2 * mem_w - pct_w, 0), cursor))
        return LightStrip(segs)


"""The NeuronCore grid: a bar and a value per core, devices side by side when a device has few cores.

Every cell of a grid has one width: its bar, then its value in brackets, ``[ 92%]`` or ``[56.13]`` (the FLOPS unit
is chosen once per grid and named in the title), so columns line up, a value never runs into the next cell and a
line never runs into the neighbouring panel. ``grid_shape`` decides how many devices stand in a row and how long
the bars are, from the width and the rows the screen can spare.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import cast

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top.derived import UTIL_MAX
from neuron_top.fmt import BAD_CELL, PCT_CELL
from neuron_top.k8s.model import PodRef
from neuron_top.output.cells import core_cells, physical_columns
from neuron_top.tui.keys import handle_now
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import fit
from neuron_top.tui.widgets.panel import Panel, bar_fill, load_band
from neuron_top.view import View

MIN_BAR = 4
"""Bars shorter than this (32 eighths) are hard to read: more devices stand in a row only while bars keep it."""
MAX_BAR = 30
"""Bars longer than this say nothing more: the width goes to devices side by side instead."""
GAP = 2
"""Spaces between two devices in a row."""
K8S_W = 24
POD_COLOURS = 6
"""Distinct pod colours (``cores--pod0`` ... ); more pods than this share them, the legend says which."""


@dataclass(frozen=True, slots=True)
class GridShape:
    """How a grid is laid out: ``per_row`` devices side by side, each a label then ``cells`` cells of a bar
    ``bar`` long and a value ``value`` characters long in brackets, then ``extra`` columns (the device's memory,
    its space before it included; 0: none)."""

    devices: int
    cells: int
    value: int
    per_row: int
    bar: int
    label: int
    extra: int = 0

    @property
    def cell(self) -> int:
        """Columns of one cell, its separating space included."""
        return self.bar + self.value + 3

    @property
    def block(self) -> int:
        """Columns of one device: its label, its cells (no space after the last) and its memory."""
        return self.label + self.cells * self.cell - 1 + self.extra

    @property
    def rows(self) -> int:
        return -(-self.devices // self.per_row)

    @property
    def width(self) -> int:
        return self.per_row * self.block + (self.per_row - 1) * GAP


def label_width(devices: int) -> int:
    """"ND15 ": the device label column, a space included."""
    return 2 + len(str(max(devices - 1, 0))) + 1


def grid_shape(devices: int, cells: int, value: int, width: int, budget: int | None, extra: int = 0) -> GridShape:
    """The layout of a grid of ``devices`` x ``cells`` values ``value`` characters long in ``width`` columns
    (``extra`` more columns after each device's cells).

    The rule, in order: the fewest rows beyond ``budget`` (the rows the screen can spare; None: any), bars at
    least ``MIN_BAR`` long, bars at most ``MAX_BAR`` long, then the fewest devices per row (longer bars). Rows of
    equal length (a divisor of the device count) come first among equals. When not even one device fits with
    bare values, one device per row, cut at the panel's edge (below ~60 columns)."""
    label = label_width(devices)
    best: tuple[tuple[int, ...], GridShape] | None = None
    for k in range(1, max(devices, 1) + 1):
        free = width - (k - 1) * GAP - k * (label + cells * (value + 3) - 1 + extra)
        bar = free // (k * cells)
        if bar < 0:
            break
        shape = GridShape(devices, cells, value, k, bar, label, extra)
        rows = shape.rows
        score = (max(0, rows - budget) if budget is not None else 0, max(0, MIN_BAR - bar),
                 int(bar > MAX_BAR), int(devices % k != 0), k)
        if best is None or score < best[0]:
            best = (score, shape)
    return best[1] if best is not None else GridShape(devices, cells, value, 1, 0, label, extra)


def with_memory(devices: int, cells: int, value: int, width: int, budget: int | None, memory: int) -> GridShape:
    """``grid_shape`` with each device's memory (``memory`` characters and a space) after its cells: the same
    devices in a row, shorter bars, when they stay at least ``MIN_BAR`` long; else without it (an 80-column trn2
    grid: the bars are one cell already)."""
    bare = grid_shape(devices, cells, value, width, budget)
    if not memory or not bare.cells:
        return bare
    k, extra = bare.per_row, memory + 1
    bar = (width - (k - 1) * GAP - k * (bare.label + cells * (value + 3) - 1 + extra)) // (k * cells)
    return GridShape(devices, cells, value, k, bar, bare.label, extra) if bar >= MIN_BAR else bare


def _pod_colour(colours: dict[tuple[str, str], int] | None, ref: PodRef | None) -> int | None:
    """In the grid by pod, a core's pod colour number (-1: no pod holds it); None when not by pod."""
    if colours is None:
        return None
    return colours.get(ref.key, -1) if ref is not None else -1


class CoreGrid(Panel[None]):
    """Cursor keys move between cores (and across devices in a row); Enter opens the core, or the device on its
    label."""

    BINDINGS = [
        Binding("up", "move(0, -1)", "up", show=False),
        Binding("down", "move(0, 1)", "down", show=False),
        Binding("left", "move(-1, 0)", "left", show=False),
        Binding("right", "move(1, 0)", "right", show=False),
        Binding("enter", "open", "open core"),  # in turn with the keys typed with it: keys.in_order, keys.handle_now
    ]

    COMPONENT_CLASSES = {f"cores--pod{i}" for i in range(POD_COLOURS)}
    DEFAULT_CSS = """
    CoreGrid > .cores--pod0 { color: $primary; text-style: bold; }
    CoreGrid > .cores--pod1 { color: $secondary; text-style: bold; }
    CoreGrid > .cores--pod2 { color: $accent; text-style: bold; }
    CoreGrid > .cores--pod3 { color: $success; text-style: bold; }
    CoreGrid > .cores--pod4 { color: $warning; text-style: bold; }
    CoreGrid > .cores--pod5 { color: $error; text-style: bold; }
    """

    cursor: reactive[tuple[int, int]] = reactive((0, 0), repaint=False)
    """(device, core within device); core -1 is the device's label."""

    class OpenCore(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class OpenDevice(Message):
        def __init__(self, device: int) -> None:
            super().__init__()
            self.device = device

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.budget: int | None = None
        """Device rows the screen can spare for the grid (None: as many as it takes); set by the screen."""
        self._shape = GridShape(1, 1, PCT_CELL, 1, 0, 4)
        self._placed_for: int | None = None
        """The app the cursor was last placed for (see ``_place_cursor``)."""

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor, self.budget)

    def set_budget(self, rows: int | None) -> None:
        if rows != self.budget:
            self.budget = rows
            if self.is_mounted and self.view is not None:
                self._view_changed()

    def watch_cursor(self) -> None:
        self.refresh()
        self.scroll_to_region(self._cursor_region(), animate=False)

    def _cursor_region(self) -> Region:
        return Region(0, self.cursor[0] // max(self._shape.per_row, 1) + 2, self.size.width, 1)

    def on_focus(self) -> None:
        self._place_cursor()
        super().on_focus()

    def _view_changed(self) -> None:
        if self.has_focus:
            self._place_cursor()
        super()._view_changed()

    def _place_cursor(self) -> None:
        """With an app selected, the cursor starts on the first core that app uses (not on core 0, which it may
        not use: a cursor there shows nothing of it), when the app changed since the cursor was last placed; it
        is left alone when it already stands on one of the app's cores."""
        view = self.view
        if view is None or view.pid == self._placed_for:
            return
        self._placed_for = view.pid
        if view.pid is None:
            return
        snap = view.snapshot
        cores = snap.cores_of(view.app)
        dev, core = self.cursor
        if cores and dev * snap.cores_per_device + core not in cores:
            self.cursor = snap.core_location(cores[0])

    def action_move(self, dx: int, dy: int) -> None:
        view = self.view
        if view is None:
            return
        snap = view.snapshot
        per_row = max(self._shape.per_row, 1)
        dev, core = self.cursor
        last = max(snap.device_count - 1, 0)
        if dy and 0 <= dev + dy * per_row <= last:
            dev += dy * per_row
        if dx:  # along the row: a device's label, its cores, the next device's label ...
            core += dx
            if core >= snap.cores_per_device:
                if (dev + 1) % per_row and dev < last:
                    dev, core = dev + 1, -1
                else:
                    core = snap.cores_per_device - 1
            elif core < -1:
                if dev % per_row:
                    dev, core = dev - 1, snap.cores_per_device - 1
                else:
                    core = -1
        self.cursor = (dev, core)

    def action_open(self) -> None:
        if self.view is None or not self.view.snapshot.has_neuron:
            return
        dev, core = self.cursor
        if core < 0:
            handle_now(self, self.OpenDevice(dev))
        else:
            handle_now(self, self.OpenCore(dev * self.view.snapshot.cores_per_device + core))

    def on_click(self, event: Click) -> None:
        view = self.view
        if view is None or event.y < 2:
            return
        shape = self._shape
        step = shape.block + GAP
        col, x = divmod(event.x, step)
        dev = (event.y - 2) * shape.per_row + col
        if col >= shape.per_row or x >= shape.block or dev >= view.snapshot.device_count:
            return
        phys = physical_columns(view.snapshot) if view.physical else 0
        in_cells = shape.label <= x < shape.block - shape.extra  # the label and the memory open the device
        core = min((x - shape.label) // (shape.cell * (phys or 1)), view.snapshot.cores_per_device - 1) \
            if in_cells else -1
        self.cursor = (dev, core)
        self.action_open()

    # --- drawing ---
    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        if not snap.has_neuron:
            # wrapped, not cut: at 80 columns the line ended "... Showing host", the half that says what is shown
            said = textwrap.wrap(f"{snap.no_devices}. Showing host metrics only.", max(width - 2, 20))
            return [self.title_strip("NeuronCores", width),
                    *(LightStrip([Segment(f" {part}", self.style("dim"))]) for part in said)]
        cells = core_cells(snap, app, view.flops, view.physical, 2 if view.precise else 0)
        phys = cells.phys
        cpd, devices = snap.cores_per_device, snap.device_count
        pods = snap.pods
        colours = pods.colours() if view.by_pod else None
        shape = with_memory(devices, cells.cells_per_device, cells.value_width, width, self.budget,
                            cells.memory_width)
        k8s_w = 0
        # the pod beside each device, when the bars can give up the room (the pods by device found only then)
        k8s = pods.by_device(cpd) if shape.per_row == 1 and pods.cores else {}
        if k8s:
            with_k8s = grid_shape(devices, cells.cells_per_device, cells.value_width, width - K8S_W, self.budget,
                                  shape.extra)
            if with_k8s.per_row == 1 and with_k8s.bar >= MIN_BAR:
                shape, k8s_w = with_k8s, K8S_W
        self._shape = shape
        right = ""
        if self.has_focus:
            d, c = self.cursor
            idx = d * cpd + c
            right = f"ND{d}" if c < 0 else f"core {idx} (ND{d} NC{c})"
            ref = pods.cores.get(idx) if c >= 0 else None
            if ref is not None:
                right += f" {ref.name}" + (f" [{ref.container}]" if ref.container else "")
        lines = [self.title_strip(cells.title_for(width - (len(right) + 3 if right else 2)), width, right)]
        lines.append(self.memo(("head", shape, phys), lambda: self._heads(shape, cpd, phys)))
        cur_dev, cur_core = self.cursor if self.has_focus else (-1, -9)
        bar_w, label_w = shape.bar, shape.label
        gap = Segment(" " * GAP, self.ground)
        plain = cells.plain_util() if colours is None else None
        for first in range(0, devices, shape.per_row):
            segs: list[Segment] = []
            for dev in range(first, min(first + shape.per_row, devices)):
                if dev > first:
                    segs.append(gap)
                segs.append(self._label(dev, label_w, dev == cur_dev and cur_core < 0))
                if plain is not None:
                    segs += self._plain_cells(plain, dev * cpd, cpd, bar_w, cur_core if dev == cur_dev else -9,
                                              cells.value_width, cells.digits)
                for c in range(0 if plain is None else cpd, cpd):
                    selected = dev == cur_dev and c == cur_core
                    values = cells.core(dev * cpd + c)
                    pod = None if colours is None else _pod_colour(colours, pods.cores.get(dev * cpd + c))
                    for n, (text, pct, load) in enumerate(values):
                        segs += self._cell(pct, text, bar_w, selected, load, c == cpd - 1 and n == len(values) - 1,
                                           pod)
                if shape.extra:
                    text, used = cells.memory(dev)
                    segs.append(self.part(("mem", text, shape.extra, None if used is None else load_band(used)),
                                          Segment, " " + text.rjust(shape.extra - 1), self.load_style(used)))
            if k8s_w:
                refs = k8s.get(first, ())
                label = (refs[0].name + (f" +{len(refs) - 1}" if len(refs) > 1 else "")) if refs else ""
                style = self._pod_style(_pod_colour(colours, refs[0] if refs else None)) if colours else self.style(
                    "dim")
                segs.append(Segment(" " + fit(label, k8s_w - 1), style))
            lines.append(self.padded(segs, width))
        if colours is not None:
            lines.extend(self._legend(view, width, colours))
        return lines

    def _pod_style(self, pod: int | None) -> Style:
        """The colour of pod number ``pod`` in the grid by pod; dim for a core no pod holds (-1)."""
        if pod is None or pod < 0:
            return self.style("dim")
        return self.component(f"cores--pod{pod % POD_COLOURS}")

    def _legend(self, view: View, width: int, colours: dict[tuple[str, str], int]) -> list[Strip]:
        """Below the grid by pod: each pod in its colour, with its idle cores; what it says when no pod is known."""
        snap = view.snapshot
        if not colours:
            note = snap.pods.status() or "pods: none known (b: back to load colours)"
            return [LightStrip([Segment(" " + fit(note, width - 1), self.style("dim"))])]
        out: list[Strip] = []
        segs: list[Segment] = [Segment(" pods:", self.style("label"))]
        x = 6
        for u in snap.pod_usage:
            i = colours.get(u.ref.key)
            if i is None:
                continue
            idle = f" ({len(u.idle)} idle)" if u.idle else ""
            text = f" ■ {u.ref.name}{idle}"
            if x + len(text) > width and len(segs) > 1:
                out.append(LightStrip(segs))
                segs, x = [Segment("      ")], 6
            segs.append(Segment(text if len(text) <= width - x else fit(text, width - x), self._pod_style(i)))
            x += len(text)
        out.append(LightStrip(segs))
        return out

    def _heads(self, shape: GridShape, cpd: int, phys: int) -> Strip:
        label = self.style("label")
        names = [f"NC{c}.{p}" if phys else f"NC{c}" for c in range(cpd) for p in range(phys or 1)]
        block = " " * shape.label + " ".join(n.center(shape.cell - 1)[: shape.cell - 1] for n in names)
        if shape.extra:
            block += " " + "MEM".rjust(shape.extra - 1)
        row = (" " * GAP).join([block] * min(shape.per_row, shape.devices))
        return LightStrip([Segment(row, label)])

    def _label(self, dev: int, width: int, on_cursor: bool) -> Segment:
        style = self.style("cursor") if on_cursor else self.style("label")
        return self.part(("label", dev, width, on_cursor), Segment, f"ND{dev}".ljust(width), style)

    def _cell(self, pct: float | None, value: str, bar_w: int, selected: bool, colour: float | None,
              last: bool, pod: int | None = None) -> list[Segment]:
        # 64-128 cells a report, but only so many distinct ones: a bar is its whole and eighth cells and its load
        # colour, the value its text and colour. Made once each, then looked up.
        fill = None if pct is None else (*bar_fill(pct, bar_w), load_band(pct))
        key = (fill, value, bar_w, -1 if selected else None if colour is None else load_band(colour), last, pod)
        return self.part(key, self._make_cell, pct, value, bar_w, selected, colour, last, pod)

    def _plain_cells(self, util: dict[int, float | None], first: int, cpd: int, bar_w: int, cursor: int,
                     value_width: int, digits: int) -> list[Segment]:
        """The segments of cores ``first`` to ``first + cpd - 1`` when each is ``CoreCells.core``'s plain case
        (``plain_util``): what ``_cell`` gives for each, its key worked out inline. Why: 64-128 cells a report,
        each one was a ``core`` call (a list, ``pct_cell``), a ``_cell`` call (``bar_fill``, ``load_band``
        twice) and a ``part`` call, ~40% of the grid's build."""
        parts = self._parts
        out: list[Segment] = []
        last_c = cpd - 1
        dash = "-".rjust(value_width)
        for c in range(cpd):
            u = util.get(first + c)  # a core not in the map is drawn as one reported as null: "-"
            if u is None:
                text, pct = dash, None
                key: tuple[object, ...] = (None, dash, bar_w, -1 if c == cursor else None, c == last_c, None)
            elif 0.0 <= u <= UTIL_MAX:  # derived.sane_util
                text, pct = f"{u:.{digits}f}%".rjust(value_width), u
                frac = (u if u <= 100.0 else 100.0) / 100.0 * bar_w  # panel.bar_fill, load_band
                full = int(frac)
                band = 0 if u < 50 else 1 if u < 80 else 2
                key = ((full, int((frac - full) * 8), band), text, bar_w, -1 if c == cursor else band, c == last_c,
                       None)
            else:  # an absurd value: flagged, no bar
                text, pct = BAD_CELL.rjust(value_width), None
                key = (None, text, bar_w, -1 if c == cursor else None, c == last_c, None)
            made = cast("list[Segment] | None", parts.get(key))
            if made is None:
                made = self.part(key, self._make_cell, pct, text, bar_w, c == cursor, pct, c == last_c, None)
            out += made
        return out

    def _make_cell(self, pct: float | None, value: str, bar_w: int, selected: bool,
                   colour: float | None, last: bool, pod: int | None = None) -> list[Segment]:
        vstyle = (self.style("cursor") if selected else self._pod_style(pod) if pod is not None
                  else self.load_style(colour))
        segs = [*self.bar(pct, bar_w), Segment(f"[{value}]", vstyle)]
        if not last:
            segs.append(Segment(" ", self.ground))
        return segs


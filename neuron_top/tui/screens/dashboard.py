"""The main screen: header, app tabs, the core grid across the top, then the other panels in two columns.

Layout rules (80x24 to 250x80): the core grid stands across the whole width, its devices side by side as far as
the width allows and the rows it may take (``CORE_SHARE`` of the body) need; below it, two columns of panels from
``NARROW`` columns on, one column under that; a column with no panel shown gives its width to the other. Which
panels are shown is the layout in force (``neuron_top.layouts``): a preset, or what the panel keys made of it.
Everything that does not fit scrolls; Tab walks the panels and brings each into view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input

from neuron_top.layouts import LayoutState
from neuron_top.tui.session_host import SessionHost
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.core_history import CoreHistory
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.ecc import EccPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.panel import Panel, settle_size
from neuron_top.tui.widgets.tabs import AppTabs
from neuron_top.tui.widgets.textbox import TextBox
from neuron_top.tui.widgets.vcpu import VcpuGrid, VcpuPanel
from neuron_top.view import View

P = TypeVar("P", bound=Panel)
NARROW = 100
"""Below this many columns the panels under the core grid stand in one column."""
CORE_SHARE = {"cores": 0.75}
"""Layout -> the share of the body's rows the core grid may take before it puts more devices side by side (with
shorter bars); the others give it a quarter (``DEFAULT_SHARE``): at 120x40 a trn2's 16 devices take 8 rows."""
DEFAULT_SHARE = 0.25
LEFT = ("vcpu", "vcpu-grid", "memory", "ecc", "core-history", "executions")
RIGHT = ("apps", "latency", "memory-tree")
"""Which column each panel stands in (in this order); one column below ``NARROW``: left, then right."""


class Columns(Container):
    """A container of panels that does not lay the screen out a second time when it grows (``settle_size``)."""

    def _size_updated(self, *args: Any, **kwargs: Any) -> bool:
        return settle_size(self, super(), args, kwargs)


class Body(VerticalScroll, can_focus=False):
    """The scrolling body: as ``Columns`` (its scrollbar still asks for a layout when it must appear or go).

    The scrollbar's room is kept while it is hidden (``scrollbar-gutter: stable``): when the panels outgrow the
    body (the first data, an app starting), no panel changes width. Without it, on trn2 at 200x60 the core grid
    lost two columns and with them its k8s column, and was drawn again 40 ms after the first data frame.

    Not focusable: the first Tab goes to the first panel, which shows where it is (a cursor, a lit title); a
    focused body showed nothing. The mouse wheel still scrolls it, and a focused panel is scrolled into view."""

    def __init__(self, on_height: Callable[[int], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_height = on_height

    def on_resize(self, event: Resize) -> None:
        self._on_height(event.size.height)

    def _size_updated(self, *args: Any, **kwargs: Any) -> bool:
        return settle_size(self, super(), args, kwargs)


class DashboardScreen(Screen):
    DEFAULT_CSS = """
    DashboardScreen #body { height: 1fr; scrollbar-gutter: stable; }
    DashboardScreen #top { height: auto; }
    DashboardScreen #columns { layout: horizontal; height: auto; }
    DashboardScreen.-narrow #columns { layout: vertical; }
    DashboardScreen .column { height: auto; width: 1fr; }
    DashboardScreen #left { margin-right: 1; }
    DashboardScreen.-narrow #left, DashboardScreen #left.-alone { margin-right: 0; }
    DashboardScreen .-hidden { display: none; }
    DashboardScreen Panel { margin-bottom: 1; }
    DashboardScreen #filter { height: 1; border: none; padding: 0 1; display: none; }
    DashboardScreen #filter.-visible { display: block; }
    DashboardScreen #filter.-error { color: $error; }
    """

    def __init__(self, *args: Any, layout: LayoutState | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._view: View | None = None
        self._panels: list[Panel] = []
        self.layout_state = layout or LayoutState()
        self._extras: frozenset[str] = frozenset()
        """The layout's extra panels that fit now (``_fill``)."""
        self._body_height = 0
        self._shape: tuple[object, ...] | None = None
        """What the extras were last fitted for (apps, vCPUs, devices, devices with ECC errors): a new shape fits
        them again."""

    @property
    def view(self) -> View | None:
        """The view every panel draws. Setting it hands it to each panel directly (a plain property: see
        ``Panel.view``)."""
        return self._view

    @view.setter
    def view(self, view: View | None) -> None:
        self._view = view
        shown = self.shown_panels
        for panel in self._panels:
            if panel.id in shown:  # a hidden panel is not built at all; it gets the view when shown
                panel.view = view
        if view is not None and self.layout_state.extras:
            snap = view.snapshot
            # what changes the panels' heights: the apps, the vCPUs, the devices, and the devices the ECC panel
            # lists (a row each once they had an error), else a screen filled to the last row would scroll
            ecc = sum(1 for e in view.history.ecc_totals.values() if e.has_events)
            shape = (len(snap.apps), snap.cpu.count, snap.device_count, ecc)
            if shape != self._shape:
                self._shape = shape
                self.call_after_refresh(self._fill)

    @property
    def shown_panels(self) -> frozenset[str]:
        """The panels shown: the layout's, and its extras that fit (not ``visible``: Textual's DOMNode has one,
        whether the screen is visible, which this shadowed)."""
        return self.layout_state.panels | self._extras

    @property
    def focus_chain(self) -> list[Widget]:
        """Panels first, the tab bar last: the first Tab lands on the core grid, whose cursor shows (the tab bar
        is driven by 1-9, a and d anyway)."""
        chain = super().focus_chain
        return [w for w in chain if not isinstance(w, AppTabs)] + [w for w in chain if isinstance(w, AppTabs)]

    def compose(self) -> ComposeResult:
        self._panels = []
        yield HeaderBar()
        yield AppTabs(id="tabs")
        yield from self.compose_top()
        with Body(self._body_resized, id="body"):
            with Columns(id="top"):
                yield self._panel(CoreGrid(id="cores"))
            with Columns(id="columns"):
                with Columns(id="left", classes="column"):
                    yield self._panel(VcpuPanel(id="vcpu"))
                    yield self._panel(VcpuGrid(id="vcpu-grid"))
                    yield self._panel(MemorySummary(id="memory"))
                    yield self._panel(EccPanel(id="ecc"))
                    yield self._panel(CoreHistory(id="core-history"))
                    yield self._panel(ExecPanel(id="executions"))
                with Columns(id="right", classes="column"):
                    yield self._panel(AppsPanel(id="apps"))
                    yield self._panel(LatencyPanel(id="latency"))
                    yield self._panel(MemoryTree(id="memory-tree"))
        # In the layout above the footer, not docked to the bottom edge: there the footer covered it
        yield TextBox(placeholder="filter apps by tag regex (Enter keeps, Esc clears)", id="filter")
        yield from self.compose_bottom()
        yield Footer()

    def _panel(self, panel: P) -> P:
        """``panel``, given the current view and every later one while it is shown."""
        self._panels.append(panel)
        if panel.id in self.shown_panels:
            panel.view = self._view
        return panel

    def compose_top(self) -> ComposeResult:
        """Extra widgets under the tab bar (the replay scrubber)."""
        yield from ()

    def compose_bottom(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.apply_layout(self.layout_state)

    # --- layout ---
    def apply_layout(self, state: LayoutState) -> None:
        """Show the panels of ``state`` (and those of its extras that fit: ``_fill``) and hide the others."""
        if state != self.layout_state:
            self._extras = frozenset()
            for panel in self._panels:
                panel.room = None  # a layout's own panels take what they need
        self.layout_state = state
        self._show()
        self.call_after_refresh(self._fill)

    def _show(self) -> None:
        visible = self.shown_panels
        for panel in self._panels:
            shown = panel.id in visible
            panel.set_class(not shown, "-hidden")
            if shown:
                panel.view = self._view
        self.query_one("#top").set_class("cores" not in visible, "-hidden")
        for column, ids in (("#left", LEFT), ("#right", RIGHT)):
            self.query_one(column).set_class(not any(i in visible for i in ids), "-hidden")
        self._size_columns()
        self.query_one(VcpuPanel).set_strip("vcpu-grid" not in visible)
        self._set_core_budget()

    def _size_columns(self) -> None:
        """Two columns of whole cells (the left one the narrower by one when the width is odd), one column of the
        whole width when narrow or alone. Set in cells, not as fractions: Textual measured the right column's
        panels one cell narrower than it then drew them, so each layout built them twice."""
        left, right = self.query_one("#left"), self.query_one("#right")
        both = not (left.has_class("-hidden") or right.has_class("-hidden"))
        left.set_class(not both, "-alone")
        width = self.size.width - self.query_one(Body).styles.scrollbar_size_vertical
        if self.has_class("-narrow") or not both or width <= 0:
            left.styles.width = right.styles.width = "1fr" if not self.has_class("-narrow") else "100%"
            return
        half = (width - 1) // 2
        left.styles.width, right.styles.width = half, width - 1 - half

    def _fill(self) -> None:
        """Add the layout's extras, in order, to the column they stand in while the column's panels, the core grid
        above and the extra's rows (``Panel.rows_needed``, an upper bound for the apps reported) fit in the body:
        what a big terminal has room for is shown, without scrolling. One column (narrow): none."""
        view, state = self._view, self.layout_state
        if view is None or not self._body_height or not state.extras or not self.is_mounted:
            return
        extras: set[str] = set()
        if not self.has_class("-narrow"):
            panels = {p.id: p for p in self._panels}
            vcpu = self.query_one(VcpuPanel)
            grid = panels["cores"]
            if "cores" in state.panels and not grid.size.width:
                return  # not laid out yet: the next resize fits them
            top = len(grid._lines(grid.size.width)) + 1 if "cores" in state.panels else 0
            for column, ids in (("#left", LEFT), ("#right", RIGHT)):
                col = self.query_one(column)
                width = col.size.width
                if col.has_class("-hidden") or not width:
                    continue
                free = self._body_height - top - sum(len(panels[i]._lines(width)) + 1 for i in ids
                                                     if i in state.panels)
                # The vCPU summary's heat strip gives way to the vCPU grid: counted as drawn whether or not it is
                # now, and given back to the grid (else the grid fitted only when it was already shown: 200x60
                # showed it after 250x80, not from the start).
                strip = vcpu.strip_rows(view, width) if column == "#left" and "vcpu" in state.panels \
                    and "vcpu-grid" not in state.panels else 0
                free -= strip if not vcpu.strip else 0
                for extra in state.extras:
                    if extra in ids:
                        room = free + (strip if extra == "vcpu-grid" else 0)
                        need = panels[extra].rows_within(view, width, room)
                        if need is not None:
                            panels[extra].room = room
                            extras.add(extra)
                            free = room - need - 1
        if frozenset(extras) != self._extras:
            self._extras = frozenset(extras)
            self._show()

    def _body_resized(self, height: int) -> None:
        self._body_height = height
        self._set_core_budget()
        self.call_after_refresh(self._fill)

    def _set_core_budget(self) -> None:
        if self._body_height:
            share = CORE_SHARE.get(self.layout_state.name, DEFAULT_SHARE)
            self.query_one(CoreGrid).set_budget(max(int(self._body_height * share), 2))

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")
        self._size_columns()

    def toggle_panel(self, panel: str) -> LayoutState:
        """Hide ``panel`` if it is shown, else show it; the panels seen become the layout's."""
        self.apply_layout(self.layout_state.toggle(panel, self.shown_panels))
        return self.layout_state

    def show_tree(self) -> MemoryTree:
        """The memory tree, shown if the layout hid it (``x`` acts on what is seen)."""
        if "memory-tree" not in self.shown_panels:
            cast(SessionHost, self.app).layout_changed(self.toggle_panel("memory-tree"))
        return self.query_one(MemoryTree)

    def expand_tree(self) -> None:
        """``x``: expand (or collapse) the whole tree and bring its top into view: the cursor row and the rows
        under it, not a page jump that leaves them below the fold."""
        tree = self.show_tree()
        tree.action_toggle_all(scroll=False)
        self.call_after_refresh(lambda: self.query_one(Body).scroll_to_widget(tree, animate=False, top=True))

    # --- drill-down ---
    def on_core_grid_open_core(self, message: CoreGrid.OpenCore) -> None:
        from neuron_top.tui.screens.detail import CoreScreen

        cast(SessionHost, self.app).open_screen(CoreScreen(message.index, self._label()))

    def on_core_grid_open_device(self, message: CoreGrid.OpenDevice) -> None:
        from neuron_top.tui.screens.detail import DeviceScreen

        cast(SessionHost, self.app).open_screen(DeviceScreen(message.device, self._label()))

    def on_apps_panel_open_app(self, message: AppsPanel.OpenApp) -> None:
        cast(SessionHost, self.app).open_app(message.pid)

    def _label(self) -> str:
        return "all apps" if self.view is None or self.view.pid is None else self.view.app.label

    # --- the filter ---
    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        error = cast(SessionHost, self.app).set_filter(event.value)
        event.input.set_class(error is not None, "-error")
        event.input.border_title = f"invalid regex: {error}" if error else None

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.input.remove_class("-visible")
        self.focus_next()

    def key_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_class("-visible"):
            box.value = ""
            box.remove_class("-visible")
            self.focus_next()

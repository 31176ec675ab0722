"""The main screen: header, app tabs and every panel, in two columns when wide and one when narrow."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, VerticalScroll
from textual.events import Resize
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Footer, Input

from neuron_top.tui.host import SessionHost
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.ecc import EccPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.panel import Panel, settle_size
from neuron_top.tui.widgets.tabs import AppTabs
from neuron_top.tui.widgets.vcpu import VcpuPanel
from neuron_top.view import View

P = TypeVar("P", bound=Panel)
WIDE = 150
"""At this many columns and more the panels stand in two columns."""


class Columns(Container):
    """A container of panels that does not lay the screen out a second time when it grows (``settle_size``)."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return settle_size(super(), size, virtual_size, container_size)


class Body(VerticalScroll):
    """The scrolling body: as ``Columns`` (its scrollbar still asks for a layout when it must appear or go).

    The scrollbar's room is kept while it is hidden (``scrollbar-gutter: stable``): when the panels outgrow the
    body (the first data, an app starting), no panel changes width. Without it, on trn2 at 200x60 the core grid
    lost two columns and with them its k8s column, and was drawn again 40 ms after the first data frame."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return settle_size(super(), size, virtual_size, container_size)


class DashboardScreen(Screen):
    DEFAULT_CSS = """
    DashboardScreen #body { height: 1fr; scrollbar-gutter: stable; }
    DashboardScreen #columns { layout: horizontal; height: auto; }
    DashboardScreen.-narrow #columns { layout: vertical; }
    DashboardScreen .column { height: auto; width: 1fr; }
    DashboardScreen #left { width: 3fr; }
    DashboardScreen #right { width: 2fr; }
    DashboardScreen.-narrow #left, DashboardScreen.-narrow #right { width: 100%; }
    DashboardScreen Panel { margin-bottom: 1; }
    DashboardScreen #filter { dock: bottom; height: 1; border: none; padding: 0 1; display: none; }
    DashboardScreen #filter.-visible { display: block; }
    DashboardScreen #filter.-error { color: $error; }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._view: View | None = None
        self._panels: list[Panel] = []

    @property
    def view(self) -> View | None:
        """The view every panel draws. Setting it hands it to each panel directly (a plain property: see
        ``Panel.view``)."""
        return self._view

    @view.setter
    def view(self, view: View | None) -> None:
        self._view = view
        for panel in self._panels:
            panel.view = view

    def compose(self) -> ComposeResult:
        self._panels = []
        yield HeaderBar()
        yield AppTabs(id="tabs")
        yield from self.compose_top()
        with Body(id="body"), Columns(id="columns"):
            with Columns(id="left", classes="column"):
                yield self._panel(CoreGrid(id="cores"))
                yield self._panel(VcpuPanel(id="vcpu"))
                yield self._panel(ExecPanel(id="executions"))
            with Columns(id="right", classes="column"):
                yield self._panel(MemorySummary(id="memory"))
                yield self._panel(EccPanel(id="ecc"))
                yield self._panel(LatencyPanel(id="latency"))
                yield self._panel(MemoryTree(id="memory-tree"))
        yield Input(placeholder="filter apps by tag regex (Enter keeps, Esc clears)", id="filter")
        yield from self.compose_bottom()
        yield Footer()

    def _panel(self, panel: P) -> P:
        """``panel``, given the current view and every later one."""
        self._panels.append(panel)
        panel.view = self._view
        return panel

    def compose_top(self) -> ComposeResult:
        """Extra widgets under the tab bar (the replay scrubber)."""
        yield from ()

    def compose_bottom(self) -> ComposeResult:
        yield from ()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < WIDE, "-narrow")

    def on_core_grid_open_core(self, message: CoreGrid.OpenCore) -> None:
        from neuron_top.tui.screens.detail import CoreScreen

        cast(SessionHost, self.app).open_screen(CoreScreen(message.index, self._label()))

    def on_core_grid_open_device(self, message: CoreGrid.OpenDevice) -> None:
        from neuron_top.tui.screens.detail import DeviceScreen

        cast(SessionHost, self.app).open_screen(DeviceScreen(message.device, self._label()))

    def _label(self) -> str:
        return "all apps" if self.view is None or self.view.pid is None else self.view.app.label

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

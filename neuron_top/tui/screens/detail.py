"""Drill-down screens for one core or one device: a breadcrumb, the header, one detail panel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from neuron_top.tui.widgets.core_detail import CoreDetail
from neuron_top.tui.widgets.device_detail import DeviceDetail
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


class DetailScreen(Screen):
    DEFAULT_CSS = """
    DetailScreen #crumb { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "back", "back")]

    def __init__(self, crumb: str, panel: Panel) -> None:
        super().__init__()
        self.crumb = crumb
        self.panel = panel

    @property
    def view(self) -> View | None:
        """The view the panel draws, handed to it directly (see ``Panel.view``)."""
        return self.panel.view

    @view.setter
    def view(self, view: View | None) -> None:
        self.panel.view = view

    def compose(self) -> ComposeResult:
        yield HeaderBar()
        yield Static(self.crumb, id="crumb", markup=False)
        with VerticalScroll():
            yield self.panel
        yield Footer()

    def on_mount(self) -> None:
        self.panel.focus()

    def action_back(self) -> None:
        self.app.pop_screen()


class CoreScreen(DetailScreen):
    def __init__(self, index: int, app_label: str = "all apps") -> None:
        super().__init__(f"neuron-top › {app_label} › core {index}", CoreDetail(index))


class DeviceScreen(DetailScreen):
    def __init__(self, device: int, app_label: str = "all apps") -> None:
        super().__init__(f"neuron-top › {app_label} › device ND{device}", DeviceDetail(device))

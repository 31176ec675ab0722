"""Drill-down screens: one base (header, breadcrumb, body, footer) and the core and device screens.

Every drill-down screen shows the header (the source's state is never out of sight), the same breadcrumb (a click
on a step above goes back to it), and owns its keys: the dashboard's view keys (``f``, ``v``, ``x``, ``/``,
``a``/``d``, ``1``-``9``) act only while the dashboard is on top (``NeuronTopApp.check_action``); a screen that
means something by one binds it itself, visibly, in its footer.
"""

from __future__ import annotations

from typing import cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer

from neuron_top.tui.session_host import SessionHost
from neuron_top.tui.widgets.core_detail import CoreDetail
from neuron_top.tui.widgets.crumb import Breadcrumb
from neuron_top.tui.widgets.device_detail import DeviceDetail
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.pods import PodsPanel
from neuron_top.view import View

ROOT = "dashboard"
"""The first step of every breadcrumb."""


class DrillScreen(Screen):
    """A screen below the dashboard. Subclasses give ``compose_body``; ``trail`` is the breadcrumb above it."""

    BINDINGS = [Binding("escape", "back", "back")]
    DEFAULT_CSS = """
    DrillScreen .drill-body { height: 1fr; }
    DrillScreen Panel { margin-bottom: 1; }
    """

    def __init__(self, trail: tuple[str, ...], here: str) -> None:
        super().__init__()
        self.trail = trail
        self.crumb = Breadcrumb(trail, here)

    @property
    def here(self) -> str:
        return self.crumb.here

    def compose(self) -> ComposeResult:
        yield HeaderBar()
        yield self.crumb
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def below(self) -> tuple[str, ...]:
        """The trail of a screen opened from this one."""
        return (*self.trail, self.here)

    def action_back(self) -> None:
        self.app.pop_screen()

    def on_breadcrumb_back(self, message: Breadcrumb.Back) -> None:
        for _ in range(min(message.screens, len(self.app.screen_stack) - 1)):
            self.app.pop_screen()


class DetailScreen(DrillScreen):
    """One detail panel that follows the dashboard's view."""

    def __init__(self, trail: tuple[str, ...], here: str, panel: Panel) -> None:
        super().__init__(trail, here)
        self.panel = panel

    @property
    def view(self) -> View | None:
        """The view the panel draws, handed to it directly (see ``Panel.view``)."""
        return self.panel.view

    @view.setter
    def view(self, view: View | None) -> None:
        self.panel.view = view

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="drill-body"):
            yield self.panel

    def on_mount(self) -> None:
        self.panel.focus()


def _trail(app_label: str, trail: tuple[str, ...] | None) -> tuple[str, ...]:
    if trail is not None:
        return trail
    return (ROOT,) if app_label in ("", "all apps") else (f"{ROOT} ({app_label})",)


class CoreScreen(DetailScreen):
    """One NeuronCore. ``app_label`` names the app the dashboard had selected (the core's screen shows every app
    on the core); from another drill-down screen ``trail`` is that screen's ``below()``."""

    def __init__(self, index: int, app_label: str = "all apps", *, trail: tuple[str, ...] | None = None) -> None:
        super().__init__(_trail(app_label, trail), f"core {index}", CoreDetail(index))
        self.index = index


class DeviceScreen(DetailScreen):
    """One Neuron device: Enter (or a click) on one of its cores opens that core."""

    def __init__(self, device: int, app_label: str = "all apps", *, trail: tuple[str, ...] | None = None) -> None:
        super().__init__(_trail(app_label, trail), f"device ND{device}", DeviceDetail(device))
        self.device = device

    def on_device_detail_open_core(self, message: DeviceDetail.OpenCore) -> None:
        cast(SessionHost, self.app).open_screen(CoreScreen(message.index, trail=self.below()))


class PodsScreen(DetailScreen):
    """The Kubernetes pods holding NeuronCores (``P``): Enter on one opens its app."""

    def __init__(self, trail: tuple[str, ...] = (ROOT,)) -> None:
        super().__init__(trail, "pods", PodsPanel())

    def on_pods_panel_open_app(self, message: PodsPanel.OpenApp) -> None:
        cast(SessionHost, self.app).open_app(message.pid)

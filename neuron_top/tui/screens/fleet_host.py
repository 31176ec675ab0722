"""One host of the fleet in the ordinary dashboard: every panel, on the session the fleet screen chose.

Esc goes back to the fleet (after closing the filter box, if it is open); ``l`` switches to the host's live
stream over ssh (a Prometheus fleet started with ``--ssh-template``).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.binding import Binding
from textual.widgets import Input

from neuron_top.layouts import LayoutState
from neuron_top.tui.screens.dashboard import DashboardScreen


class FleetHostScreen(DashboardScreen):
    BINDINGS = [
        Binding("escape", "back", "back to the fleet"),
        Binding("l", "live", "live over ssh"),
    ]

    def __init__(self, title: str, *, on_close: Callable[[], object], live: Callable[[], object] | None = None,
                 layout: LayoutState | None = None) -> None:
        super().__init__(layout=layout)
        self.host_title = title
        self._on_close = on_close
        self._live = live
        self._leaving = False

    def on_mount(self) -> None:
        self.sub_title = self.host_title

    def _close(self) -> None:
        if self._leaving:
            return
        self._leaving = True
        self.app.pop_screen()
        self.app.call_later(self._on_close)  # once the fleet screen is back on top

    def key_escape(self) -> None:
        """Esc is the "back" binding (which closes the filter box first); not the dashboard's own Esc too."""

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_class("-visible"):
            DashboardScreen.key_escape(self)
            return
        self._close()

    def action_live(self) -> None:
        if self._live is None:
            self.notify("this host is already live", timeout=3)
            return
        live = self._live
        self._close()
        self.app.call_later(live)

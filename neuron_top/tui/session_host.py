"""What screens may ask of the app that shows a session: typed, so screens need not import the app (which
imports them) nor poke at its attributes."""

from __future__ import annotations

from typing import Any, Protocol

from neuron_top.layouts import LayoutState
from neuron_top.session import Session, Update


class SessionHost(Protocol):
    """The app, as a screen that drives its session (replay) sees it."""

    session: Session
    layout_state: LayoutState
    """The dashboard's layout in force (the same on the live and the replay dashboard)."""

    def publish(self) -> None:
        """Hand the session's latest view to every screen and the header."""
        ...

    def react(self, update: Update, publish: bool = True) -> None:
        """Show what a session change did (alerts, notices, header, panels)."""
        ...

    def set_position(self, text: str) -> None:
        """Replay: where in the recording the session is, for the header."""
        ...

    def open_screen(self, screen: Any) -> None:
        """Push a drill-down screen and give it the current view."""
        ...

    def open_app(self, pid: int) -> None:
        """Push the drill-down screen of one app."""
        ...

    def layout_changed(self, state: LayoutState) -> None:
        """A screen changed the layout (``x`` showed the memory tree): remember it."""
        ...

    def set_filter(self, text: str) -> str | None:
        """Filter apps by a tag regex; returns the error for an invalid one."""
        ...

    def refresh_status(self) -> None:
        """The session's status changed outside a feed event (an acknowledgement): redraw what shows it."""
        ...

    def toggle_flops(self) -> None:
        """Utilization <-> FLOPS in every core view (the dashboard's grid, a drill-down's cells)."""
        ...

    def select_pid(self, pid: int | None) -> None:
        """Select one app (None: all) on the dashboard, as a tab click does."""
        ...


class FleetHost(SessionHost, Protocol):
    """The app, as the fleet screen sees it: it can show one host's session in the dashboard."""

    layout_state: LayoutState
    """The dashboard's layout, which a host's dashboard uses too."""

    def show_session(self, session: Session) -> Session:
        """Show ``session`` in the dashboard screens from now on; returns the session shown before."""
        ...

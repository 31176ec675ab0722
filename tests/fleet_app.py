"""A fleet screen on fixed data, for Pilot and snapshot tests: one frame, a fixed clock, and dashboards for the
eight real demo hosts (no Prometheus, no threads)."""

from __future__ import annotations

from neuron_top.fleet.frame import FleetFrame
from neuron_top.session import Session
from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.screens.fleet import FleetScreen
from tests.fleet_support import FLEET_T0
from tests.helpers import demo_snapshots


class StaticFleet(FleetScreen):
    """A fleet screen fed one frame; its eight real demo hosts ("i-0de…") have dashboards of demo snapshots."""

    def __init__(self, frame: FleetFrame, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(clock=lambda: FLEET_T0 + 1, **kwargs)
        self.first = frame
        self.opened: list[str] = []
        self.left: list[str] = []

    def start(self) -> None:
        self.apply_frame(self.first)

    def host_session(self, key: str) -> Session | None:
        if key.startswith("i-0") and not key.startswith("i-00"):
            session = Session(f"test {key}", state="live", clock=lambda: 1000.0)
            for snap in demo_snapshots("inf2.48xlarge", 3, 5):
                session.accept(snap)
            self.opened.append(key)
            return session
        return None

    def leave_host(self, key: str) -> None:
        self.left.append(key)
        super().leave_host(key)


def fleet_app(screen: FleetScreen, theme: str | None = None) -> NeuronTopApp:
    return NeuronTopApp(None, clock=lambda: 1000.0, first_screen=lambda: screen, theme=theme)

"""The dashboard's panels and layout presets, as data (no UI imports: the command line checks ``--layout``).

As in btop: a key per panel hides or shows it, and ``l`` cycles a few presets; what the user chose is remembered
(``settings``). The screen decides where each panel stands (``tui/screens/dashboard.py``); this module only says
which are shown.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LAYOUT", "PANELS", "PRESETS", "LayoutState", "PanelInfo"]


@dataclass(frozen=True, slots=True)
class PanelInfo:
    id: str
    key: str
    """The key that hides and shows it (upper case: the lower-case letters are taken by other keys; E is the
    problems screen, so ECC is K)."""
    name: str


PANELS = (
    PanelInfo("cores", "C", "NeuronCores"),
    PanelInfo("vcpu", "V", "vCPU summary"),
    PanelInfo("vcpu-grid", "H", "vCPU history (a sparkline per vCPU)"),
    PanelInfo("memory", "M", "memory summary"),
    PanelInfo("ecc", "K", "ECC"),
    PanelInfo("core-history", "U", "NeuronCore utilization history (all cores and each device)"),
    PanelInfo("apps", "A", "apps: throughput, latency, errors"),
    PanelInfo("latency", "L", "latency percentiles and history"),
    PanelInfo("executions", "X", "executions and every error type"),
    PanelInfo("memory-tree", "D", "memory details (the tree)"),
)
PANEL_IDS = tuple(p.id for p in PANELS)

PRESETS: dict[str, tuple[str, ...]] = {
    "overview": ("cores", "vcpu", "memory", "ecc", "apps"),
    "full": PANEL_IDS,
    "cores": ("cores", "core-history", "ecc", "apps"),
    "apps": ("apps", "latency", "executions", "ecc"),
    "memory": ("memory", "memory-tree", "ecc"),
}
"""Layout name -> the panels it shows. ``overview`` has everything that matters on one 120x40 screen; ``full`` is
every panel (the screen scrolls); the others give one subject the room."""
EXTRAS: dict[str, tuple[str, ...]] = {
    "overview": ("core-history", "latency", "vcpu-grid", "executions"),
}
"""Layout name -> panels it adds, in this order, while they fit on the screen without scrolling (as nvitop's
"auto" mode: a 200x60 terminal shows the latency percentiles too, a 250x80 one every vCPU's history); one that
does not fit is skipped and the next tried."""
DEFAULT_LAYOUT = "overview"


@dataclass(frozen=True, slots=True)
class LayoutState:
    """The layout in force: its name and the panels shown (the preset's, or what the keys made of them)."""

    name: str = DEFAULT_LAYOUT
    panels: frozenset[str] = frozenset(PRESETS[DEFAULT_LAYOUT])
    custom: bool = False
    """The panel keys changed the preset's panels: exactly ``panels`` are shown (no ``EXTRAS``)."""

    @classmethod
    def preset(cls, name: str) -> LayoutState:
        return cls(name, frozenset(PRESETS[name]))

    @property
    def extras(self) -> tuple[str, ...]:
        """The panels the layout adds while they fit (none once the keys changed it)."""
        return () if self.custom else tuple(p for p in EXTRAS.get(self.name, ()) if p not in self.panels)

    def toggle(self, panel: str, visible: frozenset[str] | None = None) -> LayoutState:
        """Hide ``panel`` if it is ``visible`` (default: in ``panels``), else show it; what was visible becomes
        the layout's panels (a panel added because it fitted stays, as seen)."""
        seen = self.panels if visible is None else visible
        return LayoutState(self.name, seen ^ {panel}, custom=True)

    def next(self) -> LayoutState:
        """The next preset, with its own panels (as btop's ``p``)."""
        names = list(PRESETS)
        i = names.index(self.name) if self.name in names else -1
        return LayoutState.preset(names[(i + 1) % len(names)])

    def shown(self, panel: str) -> bool:
        return panel in self.panels

"""The drill-down for one app: its cores, models and subgraphs, memory, latency history and errors.

The app sets ``screen.view`` on every report, as it does for the dashboard; the screen pins the view to its pid
and hands it to each panel. When the app goes away the last view in which it existed stays on screen, marked
"ended", so what it was doing can still be read.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from neuron_top.textsafe import clean
from neuron_top.tui.widgets.app_cores import AppCoresPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.models import ModelsPanel
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


class AppScreen(Screen):
    """Everything about one Neuron application (runtime), addressed by pid."""

    BINDINGS = [
        Binding("escape", "back", "Back to all apps"),
        Binding("x", "toggle_tree", "Expand/collapse memory tree"),
        Binding("m", "focus_tree", "Memory tree"),
    ]
    DEFAULT_CSS = """
    AppScreen #crumb { height: 1; padding: 0 1; background: $panel; color: $text; }
    AppScreen #crumb.-ended { background: $warning-muted; }
    AppScreen #app-body { height: 1fr; }
    AppScreen Panel { margin-bottom: 1; }
    """

    view: reactive[View | None] = reactive(None, always_update=True)
    """The app's latest view (any pid): this screen pins it to its own."""

    def __init__(self, pid: int, view: View | None = None, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.pid = pid
        self.ended = False
        """True once a report no longer lists this app; the panels keep its last data."""
        self._shown: View | None = None
        self.set_reactive(AppScreen.view, view)

    def compose(self) -> ComposeResult:
        yield Static(id="crumb")
        with VerticalScroll(id="app-body"):
            yield AppCoresPanel(id="app-cores")
            yield ModelsPanel(id="app-models")
            yield MemorySummary(id="app-memory")
            yield MemoryTree(id="app-memory-tree")
            yield LatencyPanel(id="app-latency")
            yield ExecPanel(id="app-executions")
        yield Footer()

    def on_mount(self) -> None:
        self._apply(self.view)
        self.query_one(MemoryTree).focus(scroll_visible=False)  # keyboard on the tree, the page at its top

    def watch_view(self, view: View | None) -> None:
        if self.is_mounted:
            self._apply(view)

    def _apply(self, view: View | None) -> None:
        if view is None:
            return
        present = any(a.pid == self.pid for a in view.snapshot.apps)
        self.ended = not present and self._shown is not None
        if present or self._shown is None:
            self._shown = view.with_(pid=self.pid)
            for panel in self.query(Panel):
                panel.view = self._shown
        self._update_crumb()

    def _update_crumb(self) -> None:
        shown = self._shown
        label = clean(shown.app.label, 64) if shown is not None and not shown.app.is_all else "?"
        crumb = self.query_one("#crumb", Static)
        text = Text.assemble(("all apps", Style(dim=True)), " > ", (label, Style(bold=True)), f" (pid {self.pid})")
        if self.ended:
            text.append("  ended: showing its last report", Style(bold=True))
        elif shown is not None and shown.app.is_all:
            text.append("  not in the current report")
        crumb.update(text)
        crumb.set_class(self.ended, "-ended")

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_tree(self) -> None:
        self.query_one(MemoryTree).action_toggle_all()

    def action_focus_tree(self) -> None:
        self.query_one(MemoryTree).focus()

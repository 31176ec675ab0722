"""The drill-down for one app: its cores, models and subgraphs, memory, latency history and errors.

The app sets ``screen.view`` on every report, as it does for the dashboard; the screen pins the view to its pid
and hands it to each panel. When the app goes away the last view in which it existed stays on screen, marked
"ended", so what it was doing can still be read. Its cores open with Enter or a click (app -> core -> back).
"""

from __future__ import annotations

from typing import cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from neuron_top.procinfo import process_info
from neuron_top.tui.screens.detail import ROOT, CoreScreen, DrillScreen
from neuron_top.tui.session_host import SessionHost
from neuron_top.tui.widgets.app_cores import AppCoresPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.models import ModelsPanel
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


class AppScreen(DrillScreen):
    """Everything about one Neuron application (runtime), addressed by pid."""

    BINDINGS = [
        Binding("escape", "back", "back"),
        Binding("f", "flops", "FLOPS"),
        Binding("x", "toggle_tree", "expand tree"),
        Binding("m", "focus_tree", "memory tree"),
        Binding("c", "focus_cores", "cores"),
    ]

    view: reactive[View | None] = reactive(None, always_update=True)
    """The app's latest view (any pid): this screen pins it to its own."""

    def __init__(self, pid: int, view: View | None = None, *, trail: tuple[str, ...] = (ROOT,)) -> None:
        super().__init__(trail, f"app (pid {pid})")
        self.pid = pid
        self.ended = False
        """True once a report no longer lists this app; the panels keep its last data."""
        self._shown: View | None = None
        self.set_reactive(AppScreen.view, view)

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="drill-body"):
            yield Static(id="app-process", markup=False)
            yield AppCoresPanel(id="app-cores")
            yield ModelsPanel(id="app-models")
            yield MemorySummary(id="app-memory")
            yield MemoryTree(id="app-memory-tree")
            yield LatencyPanel(id="app-latency")
            yield ExecPanel(id="app-executions")

    def on_mount(self) -> None:
        self._apply(self.view)
        self.query_one(AppCoresPanel).focus(scroll_visible=False)  # keyboard on its cores, the page at its top

    def watch_view(self, view: View | None) -> None:
        if self.is_mounted:
            self._apply(view)

    def _apply(self, view: View | None) -> None:
        if view is None:
            return
        present = any(a.key == self.pid for a in view.snapshot.apps)
        self.ended = not present and self._shown is not None
        if present or self._shown is None:
            self._shown = view.with_(pid=self.pid)
            for panel in self.query(Panel):
                panel.view = self._shown
        self._update_crumb()
        self._update_process(present)

    def _update_process(self, present: bool) -> None:
        """The runtime's process (``procinfo``) when its pid is on this machine: command line, user, start time,
        RSS, as nvitop shows them; nothing for a remote source, a replay or a pid not visible here."""
        line = self.query_one("#app-process", Static)
        info = process_info(self._process_pid) if present and getattr(self.app, "local_pids", False) else None
        line.display = info is not None
        if info is not None:
            line.update(" process: " + info.describe())

    @property
    def _process_pid(self) -> int:
        """The runtime's process: ``self.pid`` is the app's key (``AppView.key``), its pid unless two runtimes share
        one."""
        shown = self._shown
        return shown.app.pid if shown is not None and not shown.app.is_all else self.pid

    def _update_crumb(self) -> None:
        shown = self._shown
        label = shown.app.label if shown is not None and not shown.app.is_all else "?"
        pod = shown.snapshot.app_pod(shown.app) if shown is not None else None
        self.crumb.here = f"app {label} (pid {self._process_pid})"
        if self.ended:
            self.crumb.note = "ended: showing its last report"
        elif shown is not None and shown.app.is_all:
            self.crumb.note = "not in the current report"
        else:
            self.crumb.note = f"pod {pod.describe()}" if pod is not None else ""
        self.crumb.set_class(self.ended, "-ended")

    def action_flops(self) -> None:
        """FLOPS in this screen's core cells (the dashboard's grid follows: one setting)."""
        cast(SessionHost, self.app).toggle_flops()

    def action_toggle_tree(self) -> None:
        self.query_one(MemoryTree).action_toggle_all()

    def action_focus_tree(self) -> None:
        self.query_one(MemoryTree).focus()

    def action_focus_cores(self) -> None:
        self.query_one(AppCoresPanel).focus()

    def on_app_cores_panel_open_core(self, message: AppCoresPanel.OpenCore) -> None:
        cast(SessionHost, self.app).open_screen(CoreScreen(message.index, trail=self.below()))

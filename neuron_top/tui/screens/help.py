"""The help screen: every key, collected from the bindings themselves so it cannot drift from them."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

EXTRA = [
    ("Keys everywhere", [("Tab / Shift+Tab", "move between panels"), ("Ctrl+P", "command palette (themes, keys)"),
                         ("Esc", "back / close"), ("mouse", "click a core, device, tab or tree row to open it")]),
]


def binding_rows(bindings: list[Binding | tuple[str, ...]]) -> list[tuple[str, str]]:
    rows = []
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        if not b.description:
            continue
        keys = ", ".join(_key_name(k) for k in b.key.split(","))
        rows.append((keys, b.description))
    return rows


def _key_name(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "left_square_bracket": "[", "right_square_bracket": "]",
            "left_curly_bracket": "{", "right_curly_bracket": "}", "comma": ",", "full_stop": ".",
            "minus": "-", "plus": "+", "colon": ":", "space": "space", "escape": "Esc", "enter": "Enter",
            "home": "Home", "end": "End"}.get(key.strip(), key.strip())


def help_sections(app_bindings: list[Binding | tuple[str, ...]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every section of the help; ``app_bindings`` are the running app's own (passed in: this module is imported
    by the app)."""
    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.screens.detail import DetailScreen
    from neuron_top.tui.screens.replay import ReplayScreen
    from neuron_top.tui.screens.timeline import TimelineScreen
    from neuron_top.tui.widgets.cores import CoreGrid
    from neuron_top.tui.widgets.memory import MemoryTree
    from neuron_top.tui.widgets.tabs import AppTabs

    return [
        ("Dashboard", binding_rows(app_bindings)),
        ("App tabs", binding_rows(AppTabs.BINDINGS)),
        ("NeuronCore grid", binding_rows(CoreGrid.BINDINGS)),
        ("Memory tree", binding_rows(MemoryTree.BINDINGS)),
        ("App screen", binding_rows(AppScreen.BINDINGS)),
        ("Core / device screens", binding_rows(DetailScreen.BINDINGS)),
        ("Replay (neuron-top replay FILE)", binding_rows(ReplayScreen.BINDINGS)),
        ("Timeline (T, or neuron-top trace FILE)", binding_rows(TimelineScreen.BINDINGS)),
        *EXTRA,
    ]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: 90%; border: round $primary;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for title, rows in help_sections(list(type(self.app).BINDINGS)):
            table.add_row(Text(title, style="bold underline"), "")
            for keys, desc in rows:
                table.add_row(Text(keys), Text(desc))
            table.add_row("", "")
        with VerticalScroll():
            yield Static(Text("neuron-top keys  (Esc closes)", style="bold"))
            yield Static(table)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.app.pop_screen()

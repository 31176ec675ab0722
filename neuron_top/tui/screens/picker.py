"""The app picker (``o``): every app in a list with a filter box, for machines with more apps than tabs fit.

Type to narrow the list (a case-insensitive match on the label, tag or pid), arrows to move, Enter to select the
app on the dashboard, Esc to leave unchanged. With 300 runtimes the tab bar shows a few; this reaches any.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from neuron_top.fmt import plural
from neuron_top.snapshot import AppView
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.textbox import TextBox

ALL = "all"
"""The option id of the "all apps" entry."""


def matches(app: AppView, text: str) -> bool:
    """Whether the picker's filter ``text`` keeps ``app``."""
    needle = text.strip().lower()
    return not needle or needle in app.label.lower() or needle in app.tag.lower() or needle in str(app.pid)


class AppPicker(ModalScreen[int | None | str]):
    """Dismissed with the chosen pid, ``ALL`` for all apps, or None when cancelled."""

    DEFAULT_CSS = """
    AppPicker { align: center middle; }
    AppPicker > Vertical { width: 70; max-width: 100%; height: 80%; border: round $primary; background: $surface; }
    AppPicker #picker-title { height: 1; padding: 0 1; text-style: bold; }
    AppPicker #picker-filter { height: 3; }
    AppPicker OptionList { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        Binding("down", "move(1)", "down", show=False),
        Binding("up", "move(-1)", "up", show=False),
        Binding("pagedown", "move(10)", "page down", show=False),
        Binding("pageup", "move(-10)", "page up", show=False),
    ]

    def __init__(self, apps: tuple[AppView, ...], selected: int | None) -> None:
        super().__init__()
        self.apps = apps
        self.selected = selected

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Pick an app ({plural(len(self.apps), 'app')}; Enter selects, Esc cancels)",
                         id="picker-title", markup=False)
            yield TextBox(placeholder="filter by name, tag or pid", id="picker-filter")
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, text: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        shown = [Option("all apps", id=ALL)] if not text.strip() else []
        shown += [Option(f"{clean(a.label, 60)}  (pid {a.pid})", id=str(a.key)) for a in self.apps if matches(a, text)]
        options.add_options(shown)
        ids = [o.id for o in shown]
        want = ALL if self.selected is None else str(self.selected)
        options.highlighted = ids.index(want) if want in ids else (0 if ids else None)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self._choose(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, option_id: str | None) -> None:
        if option_id is None:
            return
        self.dismiss(ALL if option_id == ALL else int(option_id))

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            at = options.highlighted if options.highlighted is not None else 0
            options.highlighted = max(0, min(at + step, options.option_count - 1))

    def action_cancel(self) -> None:
        self.dismiss(None)

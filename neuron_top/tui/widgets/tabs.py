"""The app tab bar: "all" plus one tab per Neuron application, like AWS neuron-top's bottom bar."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top.snapshot import AppView
from neuron_top.tui.render.spans import LineDiff


class AppTabs(LineDiff, can_focus=True):
    BINDINGS = [
        Binding("left", "move(-1)", "previous app", show=False),
        Binding("right", "move(1)", "next app", show=False),
        Binding("enter", "open", "open app"),
    ]

    COMPONENT_CLASSES = {"tabs--label", "tabs--tab", "tabs--selected", "tabs--error"}
    DEFAULT_CSS = """
    AppTabs { height: 1; background: $panel; }
    AppTabs > .tabs--label { color: $primary; text-style: bold; }
    AppTabs > .tabs--tab { color: $text-muted; }
    AppTabs > .tabs--selected { color: $text; background: $primary-muted; text-style: bold; }
    AppTabs:focus > .tabs--selected { background: $primary; }
    AppTabs > .tabs--error { color: $error; }
    """

    apps: reactive[tuple[AppView, ...]] = reactive(tuple, repaint=False)
    """The apps shown (already filtered)."""
    selected: reactive[int | None] = reactive(None)
    """The selected pid, None for "all"."""
    filter_text: reactive[str] = reactive("")

    def watch_apps(self, apps: tuple[AppView, ...]) -> None:
        """A new tuple arrives with every report and nearly always shows the same tabs: nothing to do then
        (drawing the bar and finding no change had cost as much as a panel). Otherwise repaint what differs."""
        shown = _tabs(apps)
        if shown != self._shown:
            self._shown = shown
            self.repaint_changed()

    class Selected(Message):
        def __init__(self, pid: int | None, open_detail: bool = False) -> None:
            super().__init__()
            self.pid = pid
            self.open_detail = open_detail

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, int | None]] = []
        self._shown: tuple[tuple[str, int, bool], ...] | None = None
        """What the tabs showed of ``apps`` when last drawn for a new tuple."""

    def _style(self, name: str):
        return self.get_component_rich_style(f"tabs--{name}", partial=True)

    def draw_line(self, y: int) -> Strip:
        segs = [Segment(" Apps ", self._style("label"))]
        x = 6
        self._spans = []
        for n, (label, pid, err) in enumerate((("all", None, False), *_tabs(self.apps)), start=1):
            key = f"{n}" if n <= 9 else "·"
            sel = pid == self.selected
            text = f" [{key}]{'>' if sel else ' '}{label}{'<' if sel else ' '}"
            style = self._style("selected" if sel else "error" if err else "tab")
            segs.append(Segment(text, style))
            self._spans.append((x, x + len(text), pid))
            x += len(text)
        if self.filter_text:
            segs.append(Segment(f"  filter /{self.filter_text}/", self._style("label")))
        return Strip(segs).crop_extend(0, self.size.width, self.rich_style)

    def _pids(self) -> list[int | None]:
        return [None, *(a.pid for a in self.apps)]

    def action_move(self, step: int) -> None:
        pids = self._pids()
        i = pids.index(self.selected) if self.selected in pids else 0
        self.post_message(self.Selected(pids[(i + step) % len(pids)]))

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self.selected, open_detail=True))

    def on_click(self, event: Click) -> None:
        for start, end, pid in self._spans:
            if start <= event.x < end:
                self.post_message(self.Selected(pid, open_detail=pid == self.selected and pid is not None))
                return


def _tabs(apps: tuple[AppView, ...]) -> tuple[tuple[str, int, bool], ...]:
    """What the bar shows of each app: its label, its pid (the selection) and whether it has an error."""
    return tuple((a.label, a.pid, bool(a.error)) for a in apps)

"""The breadcrumb every drill-down screen shows: where you are, and a click on any step above goes back to it.

``dashboard › app bert-base-inf (pid 4242) › core 5 (ND1 NC1)``: one style on every screen (the app, core, device
and problems screens), the steps above the current one muted and clickable, the current one bold, a note after
it (``ended: showing its last report``). Labels come from data (app tags): drawn as plain text, never markup.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.fmt import cut
from neuron_top.textsafe import clean

SEPARATOR = " › "


class Breadcrumb(Widget):
    """``trail`` is the steps above this screen (the first is the dashboard); ``here`` this screen."""

    COMPONENT_CLASSES = {"crumb--up", "crumb--here", "crumb--note", "crumb--sep"}
    DEFAULT_CSS = """
    Breadcrumb { height: 1; background: $panel; }
    Breadcrumb > .crumb--up { color: $text-muted; text-style: underline; }
    Breadcrumb > .crumb--sep { color: $text-muted; }
    Breadcrumb > .crumb--here { color: $text; text-style: bold; }
    Breadcrumb > .crumb--note { color: $text-warning; text-style: bold; }
    Breadcrumb.-ended { background: $warning-muted; }
    """

    note: reactive[str] = reactive("")
    """Said after the current step (an app that ended, "not in the current report")."""
    here: reactive[str] = reactive("")

    class Back(Message):
        """A step above was clicked: go back ``screens`` screens."""

        def __init__(self, screens: int) -> None:
            super().__init__()
            self.screens = screens

    def __init__(self, trail: tuple[str, ...], here: str, *, id: str | None = None) -> None:
        super().__init__(id=id or "crumb")
        self.trail = trail
        self.set_reactive(Breadcrumb.here, here)
        self._spans: list[tuple[int, int, int]] = []

    def text(self) -> str:
        """The line as plain text (tests, the screen's title)."""
        return "".join(t for t, _, _ in self._pieces())

    def _pieces(self) -> list[tuple[str, str, int]]:
        """(text, component, screens to go back when clicked: 0 for none)."""
        out: list[tuple[str, str, int]] = [(" ", "sep", 0)]
        n = len(self.trail)
        for i, step in enumerate(self.trail):
            out.append((clean(step, 80), "up", n - i))
            out.append((SEPARATOR, "sep", 0))
        out.append((clean(self.here, 100), "here", 0))
        if self.note:
            out.append(("  " + clean(self.note, 100), "note", 0))
        return out

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y:
            return Strip.blank(width, self.rich_style)
        segs = []
        x = 0
        self._spans = []
        for text, part, back in self._pieces():
            n = cell_len(text)
            if x + n > width:  # the piece at the edge ends in "…": a pod or tag cut silently read as another
                text = cut(text, width - x, cell_len)
                n = cell_len(text)
            if not text:
                break
            segs.append(Segment(text, self.get_component_rich_style(f"crumb--{part}")))
            if back:
                self._spans.append((x, x + n, back))
            x += n
            if x >= width:
                break
        return Strip(segs).crop_extend(0, width, self.rich_style)

    def on_click(self, event: Click) -> None:
        for start, end, back in self._spans:
            if start <= event.x < end:
                event.stop()
                self.post_message(self.Back(back))
                return

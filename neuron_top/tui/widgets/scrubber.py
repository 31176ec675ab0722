"""The replay scrubber: the whole recording as one bar, where you are, and markers where something happened."""

from __future__ import annotations

import time

from rich.segment import Segment
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.recording.player import Marker

GLYPH = {"ecc": "E", "error": "x", "app+": "+", "app-": "-", "stall": "z", "group-error": "!"}
PRIORITY = ("ecc", "error", "stall", "group-error", "app-", "app+")


class Scrubber(Widget):
    COMPONENT_CLASSES = {"scrubber--track", "scrubber--played", "scrubber--head", "scrubber--bad",
                         "scrubber--note", "scrubber--info", "scrubber--mark"}
    DEFAULT_CSS = """
    Scrubber { height: 2; background: $panel; }
    Scrubber > .scrubber--track { color: $surface-lighten-2; }
    Scrubber > .scrubber--played { color: $primary; }
    Scrubber > .scrubber--head { color: $text; background: $primary; text-style: bold; }
    Scrubber > .scrubber--bad { color: $error; text-style: bold; }
    Scrubber > .scrubber--note { color: $warning; }
    Scrubber > .scrubber--info { color: $text-muted; }
    Scrubber > .scrubber--mark { background: $accent-muted; }
    """

    position: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    markers_seen: reactive[int] = reactive(0)
    """How many markers are known (they arrive while the background scan runs)."""
    info: reactive[str] = reactive("")
    mark_in: reactive[int | None] = reactive(None)

    class Seek(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, markers: list[Marker], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.markers = markers

    def _style(self, name: str):
        return self.get_component_rich_style(f"scrubber--{name}", partial=True)

    def _cells(self, width: int) -> list[str | None]:
        """The strongest marker kind in each cell."""
        cells: list[str | None] = [None] * width
        n = max(self.total, 1)
        for m in self.markers[: self.markers_seen or len(self.markers)]:
            c = cell_of(m.index, width, n)
            cur = cells[c]
            if cur is None or PRIORITY.index(m.kind) < PRIORITY.index(cur):
                cells[c] = m.kind
        return cells

    def render_line(self, y: int) -> Strip:
        w = self.size.width
        if y == 1:
            return Strip([Segment(" " + self.info, self._style("info"))]).crop_extend(0, w, self.rich_style)
        bar_w = max(w - 2, 1)
        n = max(self.total, 1)
        head = cell_of(self.position, bar_w, n)
        lo = hi = -1
        if self.mark_in is not None:
            a, b = sorted((self.mark_in, self.position))
            lo, hi = cell_of(a, bar_w, n), cell_of(b, bar_w, n)
        segs = [Segment(" ")]
        for c, kind in enumerate(self._cells(bar_w)):
            if c == head:
                segs.append(Segment("┃", self._style("head")))
                continue
            if kind is not None:
                style = self._style("bad" if kind in ("ecc", "error", "stall", "group-error") else "note")
                ch = GLYPH[kind]
            else:
                style = self._style("played" if c < head else "track")
                ch = "━" if c < head else "─"
            if lo <= c <= hi:
                style = style + self._style("mark")
            segs.append(Segment(ch, style))
        return Strip(segs).crop_extend(0, w, self.rich_style)

    def on_click(self, event: Click) -> None:
        if event.y != 0 or self.total <= 0:
            return
        bar_w = max(self.size.width - 2, 1)
        x = min(max(event.x - 1, 0), bar_w - 1)
        self.post_message(self.Seek(report_at(x, bar_w, self.total)))


def cell_of(index: int, width: int, total: int) -> int:
    """The bar cell report ``index`` is drawn in."""
    return min(index * width // max(total, 1), width - 1)


def report_at(x: int, width: int, total: int) -> int:
    """The first report drawn in cell ``x`` (or the next one right of it): the inverse of ``cell_of``, so
    clicking where a marker or the head is drawn lands on that report."""
    return max(0, min(-(-x * total // width), total - 1))


def clock_text(ts: float, wallclock: bool) -> str:
    if wallclock:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    from neuron_top import fmt

    return "+" + fmt.duration(ts)

"""The fleet screen's header: where the data comes from and how fresh it is, the view's settings, the summary
line, and what went wrong (a query that failed, with its text; the server unreachable, with the next try)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.fleet.frame import FleetFrame
from neuron_top.fleet.table import Summary
from neuron_top.textsafe import clean
from neuron_top.tui.render.spans import LineDiff
from neuron_top.tui.widgets.fleet_table import StyleCache


@dataclass(frozen=True)
class ViewState:
    """What the header says about how the table is arranged."""

    sort: str = "host"
    reverse: bool = False
    filter: str = ""
    group: str | None = None
    trouble_first: bool = False
    heat: str | None = None
    paused: bool = False
    position: str = ""
    """Replay: where in the recording."""


class FleetHeader(LineDiff):
    COMPONENT_CLASSES = {"fleet-header--title", "fleet-header--ok", "fleet-header--warn", "fleet-header--bad",
                         "fleet-header--dim", "fleet-header--error"}
    DEFAULT_CSS = """
    FleetHeader { height: auto; min-height: 2; background: $panel; color: $text; }
    FleetHeader > .fleet-header--title { color: $text; background: $primary; text-style: bold; }
    FleetHeader > .fleet-header--ok { color: $text; background: $success; text-style: bold; }
    FleetHeader > .fleet-header--warn { color: $text; background: $warning; text-style: bold; }
    FleetHeader > .fleet-header--bad { color: $text; background: $error; text-style: bold; }
    FleetHeader > .fleet-header--dim { color: $text-muted; }
    FleetHeader > .fleet-header--error { color: $error; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.frame: FleetFrame | None = None
        self.summary: Summary | None = None
        self.view = ViewState()
        self.now = 0.0
        self.source = ""
        self._style = StyleCache(self, "fleet-header")
        self._height = 2

    def show(self, frame: FleetFrame | None, summary: Summary | None, view: ViewState, now: float,
             source: str = "") -> None:
        self.frame, self.summary, self.view, self.now = frame, summary, view, now
        self.source = source or (frame.source if frame is not None else "")
        height = 2 + min(len(frame.problems), 3) if frame is not None else 2
        if height != self._height:
            self._height = height
            self.styles.height = height
            self.refresh(layout=True)
        self.repaint_changed()

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[no-untyped-def]
        return self._height

    def _state(self) -> tuple[str, str]:
        f = self.frame
        if self.view.position:
            return "REPLAY", "ok"
        if f is None:
            return "STARTING", "warn"
        if f.state == "unreachable":
            return "UNREACHABLE", "bad"
        if f.state == "partial":
            return "PARTIAL", "warn"
        return "LIVE", "ok"

    def draw_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._style("base")
        f = self.frame
        if y == 0:
            state, kind = self._state()
            state += " · PAUSED" if self.view.paused else ""
            segs = [Segment(" neuron-top fleet ", self._style("title")), Segment(f" {state} ", self._style(kind))]
            # most important first, by whole parts: a narrow terminal leaves out the last ones ("1 qu" of "1 query
            # in 103 ms", "prometheu" of the URL read as other words)
            if self.view.position:
                parts = [self.view.position]
            elif f is not None:
                parts = [f"refreshed {fmt.duration(max(self.now - f.ts, 0.0))} ago"]
                if f.retry_in is not None:
                    parts.append(f"retry in {f.retry_in:g} s")
            else:
                parts = ["waiting for the first refresh"]
            v = self.view
            arranged = [f"sort {v.sort} {'▲' if v.reverse else '▼'}"]
            if v.filter:
                arranged.append(f"filter /{clean(v.filter, 30)}/")
            if v.group:
                arranged.append(f"group {v.group}")
            if v.trouble_first:
                arranged.append("trouble first")
            if v.heat:
                arranged.append(f"heat {v.heat}")
            parts.append(", ".join(arranged))
            parts += [clean(n, 80) for n in f.notes] if f is not None else []
            source = len(parts)
            parts.append(clean(self.source, 80))
            if f is not None and f.queries and not self.view.position:
                parts.append(f.cost)
            room = max(width - sum(cell_len(seg.text) for seg in segs) - 1, 0)
            # the source is words, not a number: cut with its "…" ("prometheus http://prometheus.ex…") rather
            # than left out when most of it fits
            text = " " + fmt.cut_parts(parts, room, measure=cell_len, words={source}, min_cut=20)
            segs.append(Segment(text))
            return Strip(segs).crop_extend(0, width, base)
        if y == 1:
            # whole parts only: a number cut in the middle ("exec 12" of "exec 1,297/s") reads as another
            text = " " + (self.summary.text(max(width - 1, 0)) if self.summary is not None
                          else "waiting for the first answer…")
            return Strip([Segment(text, self._style("dim"))]).crop_extend(0, width, base)
        i = y - 2
        if f is not None and i < len(f.problems):
            p = f.problems[i]
            more = f" (+{len(f.problems) - 3} more)" if i == 2 and len(f.problems) > 3 else ""
            text = (f" query {p.name!r} {'warned' if p.warning else 'failed'}: {clean(p.message, 200)} · query: "
                    f"{clean(p.query, 400)}" if p.name else f" {clean(p.message, 300)}") + more
            return Strip([Segment(text, self._style("error"))]).crop_extend(0, width, base)
        return Strip.blank(width, base)


__all__ = ["FleetHeader", "ViewState"]

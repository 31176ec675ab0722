"""The timeline: every track of a system trace as lines of coloured spans under a time axis.

One widget draws all lines with ``render_line``: no widget per slice or per track. A line's spans come from
``summarise_row`` (bounded cost per screen column, whatever the number of events in view) and are cached until
the window, the size or the model changes; selection, cursor and playhead changes only re-style cached spans.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.textsafe import clean
from neuron_top.trace.columns import (
    Span,
    Window,
    axis_ticks,
    counter_full_scale,
    counter_sample_at,
    format_duration,
    overlay,
    summarise_counter,
    summarise_row,
)
from neuron_top.trace.model import PALETTE, Line, TimelineModel, name_slot
from neuron_top.trace.store import ERROR, FLOW, FLOW_IN, FLOW_OUT, INSTANT, UNFINISHED
from neuron_top.tui.widgets.fixedwidth import common_ends, fit, fit_distinct

SPARK = "▁▂▃▄▅▆▇█"
MIN_SPAN_NS = 10
"""The deepest zoom: 10 ns across the whole width."""
MIN_CELLS = 3
REVEAL_CELLS = 12
"""How many cells an event brought into view covers when it covered fewer than ``MIN_CELLS`` (its name shows)."""
FLOW_MARK = "→"
"""Drawn at a slice's first cell when a flow arrives at it and at its last cell when one leaves it."""


fit_cells = fit
"""``text`` cut (with "…", ``fmt.cut``) or padded to exactly ``width`` terminal cells."""


@dataclass(frozen=True)
class ViewState:
    """What the status line shows; posted up whenever the view changes."""

    t0: int
    t1: int
    line: int
    lines: int


def _keep_what_differs(label: str, width: int, ends: tuple[str, str]) -> str:
    """``label`` in ``width`` cells, keeping its start and, after "…", the words from the first one in which it
    differs from labels that share its start (``ends[0]``); ``fit_distinct`` when that does not fit, or when
    the label has wide characters (cut here by code points, one cell each)."""
    prefix = ends[0]
    cut_at = prefix.rfind(" ") + 1 if " " in prefix else 0
    tail = label[cut_at:]
    head = width - len(tail) - 2  # "…" and the space before the tail
    if cell_len(label) != len(label) or head < 4:
        return fit_distinct(label, width, ends)
    return fit(f"{label[:head].rstrip(' ·')}… {tail}", width)


class Timeline(Widget, can_focus=True):
    """Tracks as lines; ``t0``/``t1`` is the visible window in trace nanoseconds."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--axis",
        "timeline--label",
        "timeline--group",
        "timeline--cursor",
        "timeline--empty",
        "timeline--error",
        "timeline--hang",
        "timeline--selected",
        "timeline--counter",
        "timeline--playhead",
        "timeline--match",
        "timeline--area",
        *(f"timeline--c{k}" for k in range(PALETTE)),
    }
    DEFAULT_CSS = """
    Timeline { width: 1fr; height: 1fr; background: $surface; }
    Timeline > .timeline--axis { color: $text-muted; background: $panel; }
    Timeline > .timeline--label { color: $text; background: $panel; }
    Timeline > .timeline--group { color: $text; background: $panel; text-style: bold; }
    Timeline > .timeline--cursor { color: $text; background: $accent; text-style: bold; }
    Timeline > .timeline--empty { background: $surface; }
    Timeline > .timeline--error { color: $text; background: $error; text-style: bold; }
    Timeline > .timeline--hang { color: $text; background: $warning; text-style: italic; }
    Timeline > .timeline--selected { color: $text; background: $foreground-darken-3; text-style: bold reverse; }
    Timeline > .timeline--counter { color: $success; background: $surface; }
    Timeline > .timeline--playhead { color: $accent; text-style: bold; }
    Timeline > .timeline--match { text-style: underline; }
    Timeline > .timeline--area { color: $warning; text-style: bold; }
    Timeline > .timeline--c0 { color: $text; background: $primary-darken-2; }
    Timeline > .timeline--c1 { color: $text; background: $secondary-darken-2; }
    Timeline > .timeline--c2 { color: $text; background: $success-darken-2; }
    Timeline > .timeline--c3 { color: $text; background: $accent-darken-3; }
    Timeline > .timeline--c4 { color: $text; background: $primary-darken-3; }
    Timeline > .timeline--c5 { color: $text; background: $secondary-darken-3; }
    Timeline > .timeline--c6 { color: $text; background: $success-darken-3; }
    Timeline > .timeline--c7 { color: $text; background: $secondary-lighten-1; }
    """

    class Selected(Message):
        """The selected event changed (None: nothing selected); ``counter``/``sample`` for counter lines."""

        def __init__(self, event: int | None, counter: int | None = None, sample: int | None = None) -> None:
            super().__init__()
            self.event = event
            self.counter = counter
            self.sample = sample

    class AreaSelected(Message):
        """A drag marked an area (``Timeline.area``, ``Timeline.area_tracks`` hold it)."""

    class Changed(Message):
        """The window or the cursor moved (for the status line)."""

        def __init__(self, state: ViewState) -> None:
            super().__init__()
            self.state = state

    def __init__(self, model: TimelineModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        st = model.store
        self.t0 = st.t_min
        self.t1 = st.t_min + st.span
        self.top = 0
        """First line shown below the axis."""
        self.cursor = 0
        """The cursor line (keyboard selection works on it)."""
        self.selected: int | None = None
        self.playhead: int | None = None
        self.matches: frozenset[int] = frozenset()
        self.absolute = False
        """Axis labels on the trace's own clock (time of day for a wall clock) instead of from the trace start."""
        self.area: tuple[int, int] | None = None
        """The marked time range (area selection), drawn as two edges and a band on the axis."""
        self.mark: int | None = None
        """The first edge of an area being marked (``m`` sets it, a second ``m`` closes the area)."""
        self.area_tracks: frozenset[int] = frozenset()
        """Tracks marked for the area (none marked: every track)."""
        self._spans: dict[int, list[Span] | list[float | None]] = {}
        self._span_key: tuple[int, ...] = ()
        self._strips: dict[int, Strip] = {}
        self._width, self._height = 80, 24
        self._bounds: list[int] = []
        self._styles: dict[tuple[int, int, bool, bool], Style] = {}
        self._cstyles: dict[str, Style] = {}
        self._slots: dict[int, int] = {}
        self._counter_max: dict[int, float] = {}
        self._distinct: tuple[int, dict[str, str]] = (-1, {})
        """(label width, row labels that read alike when cut -> each one cut where they differ)."""

    # -- geometry -----------------------------------------------------------------------------------------------
    @property
    def label_w(self) -> int:
        return min(30, max(10, self._width // 5))

    @property
    def area_w(self) -> int:
        return max(self._width - self.label_w - 1, 1)

    @property
    def window(self) -> Window:
        return Window(self.t0, self.t1, self.area_w)

    @property
    def body_h(self) -> int:
        return max(self._height - 1, 1)

    # -- state changes ------------------------------------------------------------------------------------------
    def _changed(self, spans: bool = True) -> None:
        if spans:
            self._spans.clear()
        self._strips.clear()
        self.refresh()
        self.post_message(self.Changed(ViewState(self.t0, self.t1, self.cursor, len(self.model.lines))))

    def model_changed(self) -> None:
        """Grouping, filters or counters changed: lines are different now."""
        self._counter_max.clear()
        self._distinct = (-1, {})
        self.cursor = min(self.cursor, max(len(self.model.lines) - 1, 0))
        self.top = min(self.top, self.cursor)
        self._changed()

    def set_window(self, t0: int, t1: int) -> None:
        st = self.model.store
        span = max(t1 - t0, MIN_SPAN_NS)
        full = st.span
        margin = max(full // 20, 1)
        lo, hi = st.t_min - margin, st.t_min + full + margin
        span = min(span, hi - lo)
        t0 = min(max(t0, lo), hi - span)
        self.t0, self.t1 = t0, t0 + span
        self._changed()

    def zoom(self, factor: float, anchor: int | None = None) -> None:
        """Zoom by ``factor`` (> 1 zooms in) keeping ``anchor`` (default: the window centre) in place."""
        a = (self.t0 + self.t1) // 2 if anchor is None else anchor
        span = self.t1 - self.t0
        new = max(int(span / factor), MIN_SPAN_NS)
        frac = (a - self.t0) / span if span else 0.5
        t0 = a - int(new * frac)
        self.set_window(t0, t0 + new)

    def key_anchor(self) -> int | None:
        """Where ``+`` and ``-`` zoom around: the playhead, else the selected event while it is in view (its middle,
        within the window), else the centre (None). Around the centre, a selection off the middle left the window
        after two or three presses, as a slice under the mouse would not in Perfetto."""
        if self.playhead is not None:
            return self.playhead
        ev = self.selected
        if ev is None:
            return None
        st = self.model.store
        a, b = st.start[ev], st.end[ev]
        if b < self.t0 or a > self.t1:
            return None
        return min(max((a + b) // 2, self.t0), self.t1)

    def pan(self, fraction: float) -> None:
        span = self.t1 - self.t0
        d = int(span * fraction) or (1 if fraction > 0 else -1)
        self.set_window(self.t0 + d, self.t1 + d)

    def fit(self) -> None:
        st = self.model.store
        self.set_window(st.t_min, st.t_min + st.span)

    def go_start(self) -> None:
        span = self.t1 - self.t0
        st = self.model.store
        self.set_window(st.t_min, st.t_min + span)

    def go_end(self) -> None:
        span = self.t1 - self.t0
        st = self.model.store
        self.set_window(st.t_max - span, st.t_max)

    def edge_event(self, last: bool) -> int | None:
        return self.model.edge_event(last)

    def show_end(self, events: int = 200) -> None:
        """``--at end``: the last ``events`` events (by start) fill the window, close enough to tell them apart."""
        tail = self.model.tail(events)
        if tail is None:
            return
        t, end = tail
        span = max(end - t, MIN_SPAN_NS)
        self.set_window(t - span // 20, end + span // 20)

    def fit_event(self, event: int) -> None:
        """``F``: the window fits the event, with a tenth of its length either side (an instant: a hundredth of
        the trace around it, where its neighbours show)."""
        st = self.model.store
        s, e = st.start[event], st.end[event]
        pad = max((e - s) // 10, MIN_SPAN_NS) if e > s else max(st.span // 200, MIN_SPAN_NS)
        self.set_window(s - pad, e + pad)

    def set_absolute(self, absolute: bool) -> None:
        self.absolute = absolute
        self._changed(spans=False)

    def set_area(self, area: tuple[int, int] | None, mark: int | None = None) -> None:
        self.area, self.mark = area, mark
        self._changed(spans=False)

    def toggle_area_track(self) -> int | None:
        """Mark (or unmark) the cursor line's track for the area; returns the track id (None on other lines)."""
        if not self.model.lines:
            return None
        ln = self.model.lines[self.cursor]
        if ln.kind != "row":
            return None
        self.area_tracks = self.area_tracks ^ {ln.track}
        self._changed(spans=False)
        return ln.track

    def move_cursor(self, delta: int) -> None:
        n = len(self.model.lines)
        if not n:
            return
        self.cursor = min(max(self.cursor + delta, 0), n - 1)
        self._scroll_to_cursor()
        self._changed(spans=False)

    def _scroll_to_cursor(self) -> None:
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + self.body_h:
            self.top = self.cursor - self.body_h + 1

    def select(self, event: int | None, center: bool = True) -> None:
        """Select an event; with ``center`` the view moves so it is visible (and the cursor goes to its line)."""
        self.selected = event
        if event is not None and center:
            line = self.model.line_of_event(event)
            if line is not None:
                self.cursor = line
                self._scroll_to_cursor()
            self.reveal(event)
        self._changed(spans=False)
        self.post_message(self.Selected(event))

    def reveal(self, event: int) -> None:
        """Move so the event is on screen with some context: zoomed out when it is wider than the window, zoomed
        in when it would cover fewer than ``MIN_CELLS`` cells (under a cell it hides in a shaded cell, and a cell
        or two show no name) until it covers ``REVEAL_CELLS``, centred when it is outside the window."""
        st = self.model.store
        s, e = st.start[event], st.end[event]
        span = self.t1 - self.t0
        d = e - s
        if d > span * 0.9:
            pad = max(d // 10, MIN_SPAN_NS)
            self.set_window(s - pad, e + pad)
        elif d > 0 and d * self.area_w < span * MIN_CELLS:
            new = max(d * self.area_w // min(REVEAL_CELLS, self.area_w), MIN_SPAN_NS)
            mid = (s + e) // 2
            self.set_window(mid - new // 2, mid - new // 2 + new)
        elif s < self.t0 or e > self.t1:
            mid = (s + e) // 2
            self.set_window(mid - span // 2, mid - span // 2 + span)

    def set_playhead(self, t: int | None) -> None:
        self.playhead = t
        if t is not None and not (self.t0 <= t < self.t1):
            span = self.t1 - self.t0
            self.set_window(t - span // 10, t - span // 10 + span)
            return
        self._changed(spans=False)

    def set_matches(self, matches: list[int]) -> None:
        self.matches = frozenset(matches)
        self._changed(spans=False)

    def on_resize(self, event: events.Resize) -> None:
        # size is read once here: Widget.size walks the DOM, too slow to ask per drawn line
        self._width, self._height = event.size.width, event.size.height
        self._scroll_to_cursor()
        self._changed()

    # -- hit testing --------------------------------------------------------------------------------------------
    def line_at(self, y: int) -> int | None:
        if y < 1:
            return None
        i = self.top + y - 1
        return i if i < len(self.model.lines) else None

    def event_at(self, line: int, t: int, tolerance: int = 0) -> int | None:
        ln = self.model.lines[line]
        if ln.kind != "row":
            return None
        return self.model.row_index(ln.track, ln.row).nearest(t, tolerance)

    def cursor_time(self) -> int:
        return (self.t0 + self.t1) // 2 if self.playhead is None else self.playhead

    def select_at_cursor(self) -> None:
        """Enter: the event on the cursor line nearest the window centre (or the playhead)."""
        if not self.model.lines:
            return
        ln = self.model.lines[self.cursor]
        t = self.cursor_time()
        if ln.kind == "counter":
            c = self.model.store.counters[ln.counter]
            self.post_message(self.Selected(None, ln.counter, counter_sample_at(c, t)))
            return
        ev = self.event_at(self.cursor, t, tolerance=(self.t1 - self.t0) // 2)
        if ev is not None:
            self.select(ev, center=False)

    def step_on_line(self, forward: bool) -> None:
        """The next / previous event on the cursor line (from the selection, else from the window centre)."""
        ln = self.model.lines[self.cursor] if self.model.lines else None
        if ln is None or ln.kind != "row":
            return
        ri = self.model.row_index(ln.track, ln.row)
        st = self.model.store
        if self.selected is not None and st.track_of(self.selected).id == ln.track:
            t = st.start[self.selected]
        else:
            t = self.cursor_time()
        k = bisect_right(ri.start, t, ri.lo, ri.hi) if forward else bisect_left(ri.start, t, ri.lo, ri.hi) - 1
        if ri.lo <= k < ri.hi:
            self.select(ri.event(k))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        col = event.x - self.label_w - 1
        self._drag = (col, event.y) if col >= 0 and event.button == 1 else None
        self._dragged = False

    def on_mouse_up(self, event: events.MouseUp) -> None:
        start = getattr(self, "_drag", None)
        self._drag = None
        col = event.x - self.label_w - 1
        if start is None or abs(col - start[0]) < 2:
            return
        self._dragged = True  # the click that follows must not select
        win = self.window
        a, b = sorted((win.time_of(max(start[0], 0)), win.time_of(min(max(col, 0), self.area_w) + 1)))
        la, lb = sorted((self.line_at(start[1]), self.line_at(event.y)), key=lambda v: -1 if v is None else v)
        tracks: frozenset[int] = frozenset()
        if la is not None and lb is not None and la != lb:  # dragged across lines: those tracks only
            tracks = frozenset(ln.track for ln in self.model.lines[la : lb + 1] if ln.kind == "row")
        self.area_tracks = tracks
        self.set_area((a, b))
        self.post_message(self.AreaSelected())

    def on_click(self, event: events.Click) -> None:
        if getattr(self, "_dragged", False):
            self._dragged = False
            return
        line = self.line_at(event.y)
        x = event.x - self.label_w - 1
        if line is None:
            return
        self.cursor = line
        if x < 0:
            self._changed(spans=False)
            return
        win = self.window
        t = win.time_of(x) + (win.time_of(x + 1) - win.time_of(x)) // 2
        ln = self.model.lines[line]
        if ln.kind == "counter":
            c = self.model.store.counters[ln.counter]
            self._changed(spans=False)
            self.post_message(self.Selected(None, ln.counter, counter_sample_at(c, t)))
            return
        ev = self.event_at(line, t, tolerance=max(win.time_of(x + 1) - win.time_of(x), 1))
        self.select(ev, center=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        if event.shift:
            self.move_cursor(-3)
        else:
            self.zoom(1.25, self._mouse_time(event.x))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        if event.shift:
            self.move_cursor(3)
        else:
            self.zoom(0.8, self._mouse_time(event.x))

    def _mouse_time(self, x: int) -> int | None:
        col = x - self.label_w - 1
        return self.window.time_of(col) if col >= 0 else None

    # -- rendering ----------------------------------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        """Component styles, cached until the theme or CSS changes (looking one up costs more than drawing)."""
        got = self._cstyles.get(name)
        if got is None:
            got = self._cstyles[name] = self.get_component_rich_style(f"timeline--{name}", partial=True)
        return got

    def _slot(self, name_id: int) -> int:
        slots = self._slots
        got = slots.get(name_id)
        if got is None:
            got = slots[name_id] = name_slot(self.model.store.strings[name_id])
        return got

    def _slice_style(self, slot: int, flags: int, selected: bool, dense: bool) -> Style:
        key = (slot, flags & (ERROR | UNFINISHED), selected, dense)
        s = self._styles.get(key)
        if s is None:
            base = self.rich_style
            if flags & ERROR:
                s = self._style("error")
            elif flags & UNFINISHED:
                s = self._style("hang")
            else:
                s = self._style(f"c{slot}")
            if dense:  # several events share these columns: a shaded block in the colour, on the background
                s = Style(color=s.bgcolor, bgcolor=self._style("empty").bgcolor or base.bgcolor)
            if selected:
                s = s + self._style("selected")
            self._styles[key] = s
        return s

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cstyles.clear()
        self._strips.clear()

    def _line_spans(self, idx: int, ln: Line) -> list[Span] | list[float | None]:
        key = (self.t0, self.t1, self.area_w, id(self.model.lines))
        if key != self._span_key:
            self._spans.clear()
            self._span_key = key
            self._bounds = self.window.bounds()
        got = self._spans.get(idx)
        if got is None:
            bounds = self._bounds
            m = self.model
            if ln.kind == "row":
                ri = m.row_index(ln.track, ln.row)
                got = summarise_row(ri, bounds, m.colour_keys)
                if ri.ids is None:
                    got = overlay(got, self._error_marks(ri.lo, ri.hi, bounds), len(bounds) - 1)
            elif ln.kind == "counter":
                got = summarise_counter(m.store.counters[ln.counter], bounds)
            else:
                got = []  # a group header is a label and a rule
            self._spans[idx] = got
        return got

    def _error_marks(self, lo: int, hi: int, bounds: list[int]) -> list[tuple[int, int]]:
        """Columns of the errors of a row in view, so a dense cell never hides one (at most one per column)."""
        st = self.model.store
        errs = st.errors
        a, b = bisect_left(errs, lo), bisect_left(errs, hi)
        if a == b:
            return []
        t0, t1 = bounds[0], bounds[-1]
        start, end = st.start, st.end
        # the row's errors are in start order: skip to the ones in view
        k = a
        while k < b and end[errs[k]] < t0:
            k += 1
        marks: list[tuple[int, int]] = []
        width = len(bounds) - 1
        while k < b and start[errs[k]] < t1 and len(marks) < width:
            e = errs[k]
            marks.append((max(bisect_right(bounds, start[e]) - 1, 0), e))
            k += 1
        return marks

    def render_line(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is None:
            strip = self._draw_line(y)
            self._strips[y] = strip
        return strip

    def _draw_line(self, y: int) -> Strip:
        w = self._width
        if y == 0:
            return self._axis(w)
        idx = self.top + y - 1
        lines = self.model.lines
        if idx >= len(lines):
            return Strip.blank(w, self._style("empty"))
        ln = lines[idx]
        label_style = self._style("group" if ln.kind == "group" else "label")
        if idx == self.cursor:
            label_style = self._style("cursor")
        label = ln.label
        if not label and ln.title and idx == self.top:  # scrolled into a tall track: keep its name in sight
            label = f"{ln.title} ⋮"
        if label and ln.kind == "row" and ln.track in self.area_tracks:  # marked for the area selection
            label = f"▸{label}"
        label = clean(label, 200)
        lw = self.label_w
        text = label[: lw - 1] + "…" if len(label) > lw else label.ljust(lw)
        if not label.isascii():  # maybe wide characters: cut by cells, not code points
            text = fit_cells(label, lw)
        text = self._alike(lw).get(label, text)
        segs = [Segment(text, label_style), Segment(" ", self._style("empty"))]
        spans = self._line_spans(idx, ln)
        if ln.kind == "counter":
            segs.extend(self._counter_segments(ln, spans))  # type: ignore[arg-type]
        elif ln.kind == "group":
            segs.append(Segment("─" * self.area_w, self._style("axis")))
        else:
            segs.extend(self._span_segments(spans))  # type: ignore[arg-type]
        # every piece above has a known width (label_w + 1 + area_w == w): telling Strip saves measuring
        # each segment's cells again, a third of a dense frame
        strip = (
            Strip(segs, w) if w == lw + 1 + self.area_w else Strip(segs).crop_extend(0, w, self.rich_style)
        )
        strip = self._edges(strip, "┃")
        if self.playhead is not None:
            col = self.window.col_of(self.playhead)
            if 0 <= col < self.area_w:
                strip = self._overlay(strip, lw + 1 + col, "│", self._style("playhead"))
        return strip

    def _alike(self, lw: int) -> dict[str, str]:
        """Row labels that the cut to ``lw`` cells makes read alike ("CrRendererMain · Render…" for the threads of
        two Chrome renderers, "Renderer 18811" and "Renderer 18931"), each cut so that what tells it from the
        others stays ("CrRendererMain · … 18811")."""
        if self._distinct[0] != lw:
            groups: dict[str, set[str]] = {}
            for ln in self.model.lines:
                if ln.kind == "row" and ln.label:
                    label = clean(ln.label, 200)
                    if len(label) > lw:
                        groups.setdefault(fit(label, lw), set()).add(label)
            out: dict[str, str] = {}
            for alike in groups.values():
                if len(alike) > 1:
                    out.update((label, _keep_what_differs(label, lw, common_ends(list(alike)))) for label in alike)
            self._distinct = (lw, out)
        return self._distinct[1]

    def _edges(self, strip: Strip, ch: str) -> Strip:
        """The marked area's edges (and a pending mark) over a line."""
        edges = [] if self.area is None else list(self.area)
        if self.mark is not None:
            edges.append(self.mark)
        for t in edges:
            col = self.window.col_of(t)
            if 0 <= col < self.area_w:
                strip = self._overlay(strip, self.label_w + 1 + col, ch, self._style("area"))
        return strip

    def _span_segments(self, spans: list[Span]) -> list[Segment]:
        """Segments for a row's spans; neighbours with the same style share one Segment."""
        st = self.model.store
        empty = self._style("empty")
        match = self._style("match")
        selected, matches = self.selected, self.matches
        names, flags, orig, strings, durs = st.name, st.flags, st.orig, st.strings, st.dur
        slots, styles = self._slots, self._styles
        out: list[Segment] = []
        run_style: Style | None = None
        run: list[str] = []
        col = 0
        for c0, c1, ev, dense in spans:
            if c0 > col:
                if run:
                    out.append(Segment("".join(run), run_style))
                    run = []
                out.append(Segment(" " * (c0 - col), empty))
                run_style = None
            width = c1 - c0
            o = orig[ev]
            f = flags[o]
            nid = names[o]
            slot = slots.get(nid)
            if slot is None:
                slot = self._slot(nid)
            sel = ev == selected
            style = styles.get((slot, f & 3, sel, dense))
            if style is None:
                style = self._slice_style(slot, f, sel, dense)
            if matches and ev in matches:
                style = style + match
            if dense:
                text = "▒" * width
            elif f & INSTANT and width == 1 and durs[ev] == 0:
                text = "◆"
            else:
                label = clean(strings[nid], 120)
                pre = post = ""
                if f & FLOW:  # arrows in and out: flows are found by eye, then walked with L / H / D
                    pre = FLOW_MARK if f & FLOW_IN else ""
                    post = FLOW_MARK if f & FLOW_OUT and width > len(pre) else ""
                inner = width - len(pre) - len(post)
                text = (
                    label[: inner - 1] + "…" if len(label) > inner and inner > 1 else label[: max(inner, 0)]
                ).ljust(max(inner, 0))
                if not label.isascii():
                    text = fit_cells(label, max(inner, 0))
                if pre or post:
                    text = pre + text + post
            if style is not run_style:
                if run:
                    out.append(Segment("".join(run), run_style))
                run = [text]
                run_style = style
            else:
                run.append(text)
            col = c1
        if run:
            out.append(Segment("".join(run), run_style))
        if col < self.area_w:
            out.append(Segment(" " * (self.area_w - col), empty))
        return out

    def _counter_segments(self, ln: Line, values: list[float | None]) -> list[Segment]:
        top = self._counter_max.get(ln.counter)
        if top is None:
            top = self._counter_max[ln.counter] = counter_full_scale(self.model.store.counters[ln.counter])
        chars = []
        for v in values:
            if v is None:
                chars.append(" ")
            else:
                chars.append(SPARK[max(0, min(int(v / top * 7.999), 7))] if v > 0 else " ")
        return [Segment("".join(chars), self._style("counter"))]

    def _axis(self, w: int) -> Strip:
        st = self.model.store
        win = self.window
        lw = self.label_w
        base, ticks = axis_ticks(win, st.t_min, absolute=self.absolute)
        head = base or f"{format_duration(win.t1 - win.t0)} shown"
        if not base and len(head) > lw:  # the span without its word: cut from the left, "17.9 s" read "…9 s shown"
            head = format_duration(win.t1 - win.t0)
        if len(head) > lw and head[:4].isdigit() and head[4:5] == "-":  # a wall-clock base: the time of day
            head = head.split(" ", 1)[1]  # matters more than the date
        if len(head) > lw:  # the last digits tell neighbouring windows apart
            head = "…" + head[-(lw - 1) :]
        cells = [" "] * win.width
        if self.area is not None:
            a, b = sorted(win.col_of(t) for t in self.area)
            for c in range(max(a, 0), min(b + 1, win.width)):
                cells[c] = "▔"
        for col, label in ticks:
            cells[col] = "┆"
            for k, ch in enumerate(f" {label}"):
                if col + 1 + k < win.width:
                    cells[col + 1 + k] = ch
        segs = [Segment(head[:lw].ljust(lw), self._style("axis")), Segment(" ", self._style("axis"))]
        segs.append(Segment("".join(cells), self._style("axis")))
        strip = Strip(segs).crop_extend(0, w, self._style("axis"))
        strip = self._edges(strip, "┃")
        if self.playhead is not None:
            col = win.col_of(self.playhead)
            if 0 <= col < win.width:
                strip = self._overlay(strip, lw + 1 + col, "▼", self._style("playhead") + self._style("axis"))
        return strip

    @staticmethod
    def _overlay(strip: Strip, x: int, ch: str, style: Style) -> Strip:
        """Put one character over column ``x``, keeping the background that was there."""
        parts = strip.divide([x, x + 1, strip.cell_length])
        if len(parts) < 3:
            return strip
        left, mid, right = parts
        under = next((seg.style for seg in mid if seg.style is not None), None)
        return Strip.join([left, Strip([Segment(ch, style if under is None else under + style)]), right])

    def counter_label(self, counter: int, sample: int | None) -> str:
        c = self.model.store.counters[counter]
        if sample is None:
            return f"{c.name}: no sample"
        return f"{c.name}: {c.val[sample]:g} {c.unit}".rstrip()

"""Every Neuron application on one line: its cores, load, throughput, p50/p99 latency and errors.

The overview's answer to "is every app healthy?", as nvitop's process list is for GPUs: one row per app, always
(an idle app says "idle", it does not disappear, so rows never move under the reader). The full percentiles,
every error type and their history are in the Latency and Executions panels and the app screen (Enter).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top.fmt import plural
from neuron_top.output.cells import APP_COLUMNS, FAILED, app_cells, sorted_apps
from neuron_top.snapshot import AppView
from neuron_top.textsafe import clean
from neuron_top.tui.keys import handle_now
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import cell, fit, label_width, num
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.sparkline import StepCells, peak
from neuron_top.view import View


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    head: str
    width: int
    drop: int
    """Columns with a higher number go first when the panel is narrow (0: never)."""


_SIZE = {"cores": (5, 3), "util": (6, 2), "done": (9, 0), "p50": (8, 0), "p99": (8, 0), "errors": (8, 0),
         "bad": (8, 4)}
COLUMNS = tuple(Column(key, head, *_SIZE[key]) for key, head in APP_COLUMNS)
LABEL_MIN, LABEL_MAX = 16, 28
SPARK_MIN = 8
POD_MIN, POD_MAX = 10, 40
"""The pod column (when some app runs in a pod) takes this much of the room the sparkline would have."""


def columns_for(width: int) -> tuple[Column, ...]:
    """The columns that fit beside a label of at least ``LABEL_MIN`` cells, the least needed first to go."""
    cols = list(COLUMNS)
    while sum(c.width for c in cols) + LABEL_MIN > width and any(c.drop for c in cols):
        cols.remove(max(cols, key=lambda c: c.drop))
    return tuple(cols)


class AppsPanel(Panel[None]):
    """Up and Down pick an app, Enter (or a click) opens it."""

    STEADY = True
    TITLE = "Apps"
    BINDINGS = [
        Binding("up", "cursor(-1)", "up", show=False),
        Binding("down", "cursor(1)", "down", show=False),
        Binding("enter", "open", "open app"),  # in turn with the keys typed with it: keys.in_order, keys.handle_now
    ]
    COMPONENT_CLASSES = {"apps--spark"}
    DEFAULT_CSS = """
    AppsPanel > .apps--spark { color: $warning; }
    """

    cursor: reactive[int] = reactive(0, repaint=False)
    """The row (app index) under the cursor, shown while the panel has focus."""

    class OpenApp(Message):
        def __init__(self, pid: int) -> None:
            super().__init__()
            self.pid = pid

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cells = StepCells(max)  # the worst of each step: a latency spike must not be averaged away

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor,)

    def watch_cursor(self) -> None:
        self.refresh()
        self.scroll_to_region(Region(0, self.cursor + 2, self.size.width, 1), animate=False)

    def _apps(self) -> tuple[AppView, ...]:
        """The apps in the order shown (``s``/``S`` sort them)."""
        view = self.view
        return sorted_apps(view.snapshot, view.snapshot.apps, *view.sort) if view is not None else ()

    def on_focus(self) -> None:
        view = self.view
        if view is not None and view.pid is not None:  # start on the selected app
            for i, a in enumerate(self._apps()):
                if a.key == view.pid:
                    self.cursor = i
        super().on_focus()

    def action_cursor(self, step: int) -> None:
        n = len(self._apps())
        if n:
            self.cursor = max(0, min(self.cursor + step, n - 1))

    def action_open(self) -> None:
        apps = self._apps()
        if 0 <= self.cursor < len(apps):
            handle_now(self, self.OpenApp(apps[self.cursor].key))

    def on_click(self, event: Click) -> None:
        apps = self._apps()
        if 0 <= event.y - 2 < len(apps):
            self.cursor = event.y - 2
            self.action_open()

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        apps = self._apps()
        errors = sum(a.rates.error_count for a in apps)
        bad = sum(a.rates.bad_count or 0 for a in apps)
        right = f"{plural(len(apps), 'app')} · {plural(errors, 'error')} · {bad} bad" if apps else ""
        title = "Apps: throughput, latency, errors" if width >= 90 else "Apps"
        lines = [self.title_strip(title, width, right)]
        cols = columns_for(width)
        label_w = max(LABEL_MIN, min(label_width(apps, LABEL_MIN, LABEL_MAX), width - sum(c.width for c in cols)))
        room = width - label_w - sum(c.width for c in cols)
        pods = snap.pods.apps
        pod_w = 0
        if pods:  # the pod first, and a short p99 history beside it when both fit
            both = room - 1 - (SPARK_MIN + 1)
            pod_w = min(POD_MAX, both if both >= POD_MIN else room - 1)
            pod_w = pod_w if pod_w >= POD_MIN else 0
        room -= pod_w + 1 if pod_w else 0
        spark_w = room - 1 if room - 1 >= SPARK_MIN else 0
        # (``cols`` is not in the memo keys: it follows from the width, which starts the memo afresh, and each of
        # its columns hashed in Python, ~100 times a report)
        lines.append(self.memo(("head", label_w, spark_w, pod_w, view.sort),
                               lambda: self._head(label_w, cols, spark_w, pod_w, view.sort)))
        if not apps:
            lines.append(LightStrip([Segment(f" {view.snapshot.no_apps}", self.style("dim"))]))
            return lines
        cur = self.cursor if self.has_focus else -1
        for i, a in enumerate(apps):
            values = app_cells(snap, a)
            selected = a.key == view.pid
            segs = self.memo(("row", a.key, tuple(values.items()), label_w, i == cur, selected),
                             partial(self._row, a, values, label_w, cols, i == cur, selected))
            if pod_w:
                ref = pods.get(a.pid)
                segs = [*segs, Segment(" " + fit(ref.name if ref is not None else "-", pod_w),
                                       self.style("value" if ref is not None else "dim"))]
            if spark_w:
                kind = "device" if a.latency_shown.state == "device" else "total"  # what the p99 cell shows
                segs = [*segs, *self.per_step(view.history, ("p99", a.key, kind, spark_w),
                                              partial(self._spark, view, a.key, kind, spark_w))]
            lines.append(LightStrip(segs))
        return lines

    def _head(self, label_w: int, cols: tuple[Column, ...], spark_w: int, pod_w: int = 0,
              sort: tuple[str, bool] = ("pid", False)) -> Strip:
        label = self.style("label")
        key, descending = sort
        mark = "▼" if descending else "▲"
        segs = [cell(" App" + (mark if key == "app" else ""), label_w, label),
                *(num(c.head + (mark if c.key == key else ""), c.width, label) for c in cols)]
        if pod_w:
            segs += [Segment(" "), cell("pod", pod_w, label)]
        if spark_w:
            segs += [Segment(" "), cell("p99 history", spark_w, self.component("apps--spark"))]
        return LightStrip(segs)

    def _row(self, a: AppView, values: dict[str, str], label_w: int, cols: tuple[Column, ...], on_cursor: bool,
             selected: bool) -> list[Segment]:
        name = clean(a.label, 40)
        style = self.style("cursor") if on_cursor else self.style("value")
        segs = [Segment(fit((">" if selected else " ") + name, label_w), style)]
        for c in cols:
            segs.append(self.num(values[c.key], c.width, style if on_cursor else self._style(c.key, values[c.key])))
        return segs

    def _style(self, key: str, text: str) -> Style:
        if text in ("-", "idle"):
            return self.style("dim")
        if text == FAILED:
            return self.style("high")
        if key in ("errors", "bad"):
            return self.style("high") if text.strip("0./s") else self.style("dim")
        return self.style("value")

    def _spark(self, view: View, pid: int, kind: str, spark_w: int) -> list[Segment]:
        key = ("lat", pid, kind, "p99")
        values = self._cells.values(view.history, key, spark_w)
        return [Segment(" ", self.ground),
                Segment(self._cells.text(key, spark_w, peak(values)), self.component("apps--spark"))]

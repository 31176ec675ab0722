"""The cores one app uses, as small utilization (or FLOPS) bars: the first thing the app drill-down shows.
Arrow keys pick a core, Enter or a click opens it."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.fixedwidth import app_title, cell, fit, num
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View

CELL = 30
"""Columns per core cell: label, bar and value."""


class AppCoresPanel(Panel[None]):
    """One cell per core of the selected app: "ND0 NC1 ███──── 55.5%"."""

    TITLE = "NeuronCores"
    BINDINGS = [
        Binding("left", "move(-1, 0)", "previous core", show=False),
        Binding("right", "move(1, 0)", "next core", show=False),
        Binding("up", "move(0, -1)", "core above", show=False),
        Binding("down", "move(0, 1)", "core below", show=False),
        Binding("enter", "open", "open core"),
    ]

    cursor: reactive[int] = reactive(0, repaint=False)
    """Which of the app's cores (in ``Snapshot.cores_of`` order) the cursor is on."""

    class OpenCore(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cells: dict[tuple[int, int], int] = {}
        """(line, column of the cell) -> global core index, for clicks."""
        self._grid = (1, CELL, 0)
        """(cells per line, cell width, first line of cells) as last drawn."""

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor,)

    def watch_cursor(self) -> None:
        self.refresh()

    def _cores(self) -> tuple[int, ...]:
        view = self.view
        return () if view is None else view.snapshot.cores_of(view.app)

    def action_move(self, dx: int, dy: int) -> None:
        cores = self._cores()
        if cores:
            self.cursor = max(0, min(self.cursor + dx + dy * self._grid[0], len(cores) - 1))

    def action_open(self) -> None:
        cores = self._cores()
        if cores:
            self.post_message(self.OpenCore(cores[min(self.cursor, len(cores) - 1)]))

    def on_click(self, event: Click) -> None:
        per_line, cw, first = self._grid
        cores = self._cores()
        k = (event.y - first) * per_line + event.x // max(cw, 1)
        if event.y >= first and event.x < per_line * cw and 0 <= k < len(cores):
            self.cursor = k
            self.action_open()

    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        cpd = snap.cores_per_device
        cores = snap.cores_of(app)
        stats = app.core_stats
        lines = [self.title_strip(f"{self.TITLE} ({len(cores)})", width, app_title(app))]
        user, system = app.vcpu
        if user is not None or system is not None:
            lines.append(Strip([Segment(fit(f" runtime vCPU: user {fmt.pct(user)}  system {fmt.pct(system)}", width),
                                        self.style("label"))]))
        for st in app.group_statuses()[:5]:  # what neuron-monitor could not collect for this app
            lines.append(Strip([Segment(fit(f" {clean(st.where, 60)}: {clean(st.error, 200)}", width),
                                        self.style("high"))]))
        if not cores:
            lines.append(Strip([Segment(" no NeuronCores reported by this app", self.style("dim"))]))
            return lines
        per_line = max(width // CELL, 1)
        cw = width // per_line
        self._grid = (per_line, cw, len(lines))
        cursor = min(self.cursor, len(cores) - 1) if self.has_focus else -1
        peak = stats.flops_peak
        # " ND10 NC0" and a space: a label never runs into its bar, whatever the device numbers
        label_w = max(len(f" ND{i // cpd} NC{i % cpd}") for i in cores) + 1
        for start in range(0, len(cores), per_line):
            segs: list[Segment] = []
            for k, i in enumerate(cores[start:start + per_line], start):
                d, c = divmod(i, cpd)
                util = stats.util.get(i)
                if view.flops and i in app.cores:
                    f = stats.flops.get(i)
                    value, pct = fmt.tflops(f), (f / peak * 100 if f is not None and peak else None)
                else:
                    value, pct = fmt.pct(util), util
                label = f" ND{d} NC{c}"
                segs += [cell(label, label_w, self.style("cursor" if k == cursor else "label")),
                         *self.bar(pct, max(cw - label_w - 9, 3)),
                         num(value, 9, self.load_style(util))]
            lines.append(Strip(segs))
        return lines

"""Inference latency per app: total and device percentiles, and p50/p99 history as sparklines.

An app that ran nothing in the period reports null latency: that is drawn as "idle" (and a gap in the history),
never as zero, which would read as "infinitely fast". Null latency from an app that did run is "-" (not reported),
and a failed ``execution_stats`` is "err" (``output.cells.latency_row``, as ``--once`` says).
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from neuron_top.output.cells import FAILED, latency_row
from neuron_top.snapshot import PERCENTILES, AppView
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import app_title, cell, label_width, num, wrap_words
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.sparkline import StepCells, peak
from neuron_top.view import View

WIDE = 100
"""From this width on every percentile has a column; below it p0 p50 p99 p100."""
KINDS = (("total", "total", "tot"), ("device", "device", "dev"))


class LatencyPanel(Panel[None]):
    """Every app on the "all" tab, else the selected app; two rows (total, device) per app."""

    STEADY = True

    TITLE = "Latency"
    COMPONENT_CLASSES = {"latency--p50", "latency--p99"}
    DEFAULT_CSS = """
    LatencyPanel > .latency--p50 { color: $accent; }
    LatencyPanel > .latency--p99 { color: $warning; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cells = StepCells(max)  # the worst of each step: a latency spike must not be averaged away

    def rows_needed(self, view: View, width: int) -> int:
        """The title, the heads, two rows per app and a line of idle apps."""
        apps = len(view.snapshot.apps) if view.app.is_all else 1
        return 2 + 2 * max(apps, 1) + 1

    def build(self, view: View, width: int) -> list[Strip]:
        app = view.app
        apps: tuple[AppView, ...] = view.snapshot.apps if app.is_all else (app,)
        wide = width >= WIDE
        cols = PERCENTILES if wide else ("p0", "p50", "p99", "p100")
        label_w, kind_w, val_w = (16, 7, 8) if wide else (12, 4, 8)
        # labels take what the sparklines (at least 12 columns each) leave, up to 28; all that is left when the
        # sparklines do not fit at all
        room = width - kind_w - val_w * len(cols)
        label_w = label_width(apps, label_w, min(28, room - 2 - 2 * 12 if room - 2 - 2 * 12 >= 12 else room))
        spark_w = max((width - label_w - kind_w - val_w * len(cols) - 2) // 2, 0)
        if spark_w < 6:
            spark_w = 0
        lines = [self.title_strip(self.TITLE, width, app_title(app))]
        lines.append(self.memo(("head", label_w, kind_w, val_w, cols, spark_w),  # the same strip every report
                               lambda: self._head(cols, label_w, kind_w, val_w, spark_w)))
        if not apps:
            lines.append(LightStrip([Segment(f" {view.snapshot.no_apps}", self.style("dim"))]))
            return lines
        quiet: list[AppView] = []
        for a in apps:
            if app.is_all and len(apps) > 1 and self._quiet(view, a):
                quiet.append(a)
                continue
            for kind, long, short in KINDS:
                lines.append(self._row(view, a, kind, long if wide else short, cols,
                                       (label_w, kind_w, val_w, spark_w), first=kind == "total"))
        if quiet:
            lines.extend(self._idle_lines(quiet, width))
        return lines

    def _head(self, cols: tuple[str, ...], label_w: int, kind_w: int, val_w: int, spark_w: int) -> Strip:
        label = self.style("label")
        head = [cell(" App", label_w, label), cell("", kind_w), *(num(p, val_w, label) for p in cols)]
        if spark_w:
            head += [Segment(" "), cell("p50 history", spark_w, self.component("latency--p50")),
                     Segment(" "), cell("p99 history", spark_w, self.component("latency--p99"))]
        return LightStrip(head)

    @staticmethod
    def _quiet(view: View, a: AppView) -> bool:
        """Idle now and with no latency in the history kept: one word in a list says as much as two rows."""
        if a.latency_shown.state != "idle":
            return False
        h = view.history
        # each series counted in C: a generator over the whole history (up to 4 x 600 values) for every idle app
        # at every report cost up to ~0.25 ms
        return all((s := h.series(("lat", a.key, kind, p))).count(None) == len(s)
                   for kind, _, _ in KINDS for p in ("p50", "p99"))

    def _idle_lines(self, quiet: list[AppView], width: int) -> list[Strip]:
        style = self.style("dim")
        return [LightStrip([Segment(line, style)])
                for line in wrap_words(f" idle ({len(quiet)}): ", [clean(a.label, 40) for a in quiet], width)]

    def _row(self, view: View, a: AppView, kind: str, kind_label: str, cols: tuple[str, ...],
             widths: tuple[int, int, int, int], first: bool) -> Strip:
        label_w, kind_w, val_w, spark_w = widths
        texts = latency_row(a, kind, cols)
        segs = [cell(" " + clean(a.label, 40) if first else "", label_w - 1, self.style("value")),
                Segment(" ", self.ground),
                cell(kind_label, kind_w, self.style("label"))]
        if len(texts) < len(cols):  # one word for the row: idle, not reported, failed
            style = self.style("high") if texts[0] == FAILED else self.style("dim")
            segs += [self.num(texts[0], val_w, style), cell("", val_w * (len(cols) - 1))]
        else:
            segs += [self.num(t, val_w, self.style("dim" if t == "-" else "value")) for t in texts]
        if spark_w:
            pid: object = "all" if a.is_all else a.key
            segs += self.per_step(view.history, ("lat", pid, kind, spark_w),
                                  lambda: self._sparks(view, pid, kind, spark_w))
        return LightStrip(segs)

    def _sparks(self, view: View, pid: object, kind: str, spark_w: int) -> list[Segment]:
        """The p50 and p99 history of one row, on one scale."""
        cells = self._cells
        k50, k99 = ("lat", pid, kind, "p50"), ("lat", pid, kind, "p99")
        p50, p99 = cells.values(view.history, k50, spark_w), cells.values(view.history, k99, spark_w)
        top = peak(p50, p99)
        ground = self.ground
        return [Segment(" ", ground), Segment(cells.text(k50, spark_w, top), self.component("latency--p50")),
                Segment(" ", ground), Segment(cells.text(k99, spark_w, top), self.component("latency--p99"))]

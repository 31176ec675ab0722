"""Executions and errors per app: what completed, what failed and how, per second of the report's period.

The counters in a report cover one period, so rates are count / period. Error types the runtime adds later
(keys this version does not know) get a column too: an unknown error is still an error.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.derived import COUNTED, EXEC_TYPES, RATED
from neuron_top.output.cells import FAILED
from neuron_top.snapshot import AppView
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import app_title, cell, label_width, num, wrap_words
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.sparkline import StepCells, peak
from neuron_top.view import View

WIDE = 150
"""From this width on an app takes one line (executions and errors side by side); below it two."""
_HEADS = {"completed": ("done/s", "done/s"), "completed_with_err": ("w/ err/s", "werr/s"),
          "completed_with_num_err": ("num err/s", "nerr/s"), "timed_out": ("timed out", "timeout"),
          "incorrect_input": ("bad input", "bad in"), "failed_to_queue": ("no queue", "noqueue")}
"""Column heads of the execution outcomes: (wide, narrow)."""
RATES = tuple((k, *_HEADS[k]) for k in RATED)
"""Outcomes shown per second (``derived.RATED``)."""
COUNTS = tuple((k, *_HEADS[k]) for k in COUNTED)
"""Outcomes shown as counts in the report's period (``derived.COUNTED``)."""
_ERROR_SHORT = {"numerical": "numeric", "transient": "transnt", "hardware": "hw"}


class ExecPanel(Panel[None]):
    """Every app on the "all" tab, else the selected app, with a completed/s sparkline each."""

    STEADY = True

    TITLE = "Executions and errors"
    COMPONENT_CLASSES = {"exec--spark"}
    DEFAULT_CSS = """
    ExecPanel > .exec--spark { color: $success; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cells = StepCells()

    def _spark(self, view: View, pid: object, spark_w: int) -> str:
        """Completed/s history, scaled to its own busiest cell."""
        key = ("exec", pid)
        values = self._cells.values(view.history, key, spark_w)
        return self._cells.text(key, spark_w, peak(values))

    def rows_needed(self, view: View, width: int) -> int:
        """The title, the heads, a row per app (two below ``WIDE``) and a line of idle apps."""
        apps = max(len(view.snapshot.apps) if view.app.is_all else 1, 1)
        return (2 + apps if width >= WIDE else 3 + 2 * apps) + 1 + self._since_rows(view)

    @staticmethod
    def _since_rows(view: View) -> int:
        """The "since start" row: in replay (the history then holds the recording's totals), on the "all" tab."""
        return 1 if view.history.exec_totals is not None and view.app.is_all else 0

    def build(self, view: View, width: int) -> list[Strip]:
        app = view.app
        apps: tuple[AppView, ...] = view.snapshot.apps if app.is_all else (app,)
        wide = width >= WIDE
        types = list(view.snapshot.error_types)
        n_cols = len(RATES) + len(COUNTS) + (len(types) if wide else 0)
        label_w, val_w = (16, 10) if wide else (12, 9 if width >= 100 else 8)
        val_w = max(min(val_w, (width - 10) // max(n_cols, len(types))), 6)  # narrow: every column still fits
        values_w = val_w * n_cols
        room = width - values_w
        # the sparkline keeps 12 when it fits, else the label takes the room
        label_w = label_width(apps, min(label_w, room), min(28, room - 13 if room - 13 >= 12 else room))
        errs_total = sum(a.rates.error_count for a in apps)
        right = app_title(app)
        lines = [self.title_strip(self.TITLE if width >= 70 else "Executions", width,
                                  f"{right} · {fmt.plural(errs_total, 'error')}" if width >= 60 else right)]
        exec_heads = [h if wide else s for _, h, s in (*RATES, *COUNTS)]
        err_heads = [clean(t, 20) if wide else _ERROR_SHORT.get(t, clean(t, 20)) for t in types]
        n_exec = len(exec_heads)
        used = label_w + val_w * (n_exec + (len(types) if wide else 0))
        spark_w = width - used - 1
        if spark_w < 8:
            spark_w = 0
        # The column heads change only with the columns: the same strips every report (the diff skips them).
        lines += self.memo(("head", label_w, val_w, wide, spark_w, tuple(err_heads)),
                           lambda: self._heads(exec_heads, err_heads, label_w, val_w, wide, spark_w))
        if not apps:
            lines.append(LightStrip([Segment(f" {view.snapshot.no_apps}", self.style("dim"))]))
            return lines
        quiet: list[AppView] = []
        for a in apps:
            if app.is_all and len(apps) > 1 and self._quiet(view, a):
                quiet.append(a)
                continue
            rates = a.rates
            period = rates.period
            segs = [cell(" " + clean(a.label, 40), label_w - 1, self.style("value")), Segment(" ")]
            if a.failure("execution_stats"):  # the reason is in E
                segs.append(self.num(FAILED, val_w, self.style("high")))
                lines.append(LightStrip(segs))
                continue
            for key, _, _ in RATES:
                n = rates.executions[key]
                bad = key != "completed" and bool(n)
                segs.append(self.num(fmt.per_period(n, period), val_w, self._style(n, bad, key == "completed")))
            for key, _, _ in COUNTS:
                n = rates.executions[key]
                segs.append(self.num("-" if n is None else str(n), val_w, self._style(n, bool(n))))
            if wide:
                segs += self._errors(a, types, period, val_w)
            if spark_w:
                pid: object = "all" if a.is_all else a.key

                def spark(pid: object = pid) -> list[Segment]:
                    return [Segment(" "), Segment(self._spark(view, pid, spark_w), self.component("exec--spark"))]

                segs += self.per_step(view.history, ("exec", pid, spark_w), spark)
            lines.append(LightStrip(segs))
            if not wide:  # the error rates under the app: all zero on most reports
                shown = tuple((fmt.per_period(n := a.rates.errors.get(t), period), bool(n)) for t in types)

                def errors(a: AppView = a, period: float | None = period) -> Strip:
                    return LightStrip([cell("", label_w), *self._errors(a, types, period, val_w)])

                lines.append(self.memo(("errors", label_w, val_w, shown), errors))
        if self._since_rows(view):
            lines.append(self._since_start(view, label_w, val_w, width))
        if quiet:
            style = self.style("dim")
            lines += [LightStrip([Segment(line, style)]) for line in
                      wrap_words(f" idle, no errors ({len(quiet)}): ", [clean(a.label, 40) for a in quiet],
                                 width)]
        return lines

    def _since_start(self, view: View, label_w: int, val_w: int, width: int) -> Strip:
        """Every outcome's count since the start of the recording up to the shown report, under its column, and
        the errors: the recording's (``recording.totals``), exact after any seek, not the history window's.
        Under a tag filter, the counts of the apps it selects (``View.since_start``; the label says so)."""
        t = view.since_start
        assert t is not None
        label = " since start" if label_w > len(" since start") else " so far"  # 120x40's left column: 12
        segs = [cell(label, label_w, self.style("label"))]
        for key, _, _ in (*RATES, *COUNTS):
            n = t.executions[EXEC_TYPES.index(key)]
            segs.append(self.num(fmt.count(n), val_w, self._style(n, key != "completed" and bool(n))))
        used = label_w + val_w * (len(RATES) + len(COUNTS))
        words = f" {fmt.plural(t.errors, 'error')}" + (
            f" (filter {clean(t.filter, 24)!r})" if t.filter is not None
            else " (all apps)" if view.snapshot.filter is not None else "")
        if width - used >= len(words):
            segs.append(Segment(words, self.style("high" if t.errors else "dim")))
        return LightStrip(segs)

    def _heads(self, exec_heads: list[str], err_heads: list[str], label_w: int, val_w: int, wide: bool,
               spark_w: int) -> list[Strip]:
        label = self.style("label")
        head = [cell(" App", label_w, label), *(num(h, val_w, label) for h in exec_heads)]
        if wide:
            head += [num(h, val_w, label) for h in err_heads]
        if spark_w:
            head += [Segment(" "), cell("completed/s history" if spark_w >= 19 else "done/s hist", spark_w,
                                        self.component("exec--spark"))]
        if wide:
            return [LightStrip(head)]
        return [LightStrip(head), LightStrip([cell("  errors/s", label_w, label), *(num(h, val_w, label) for h in err_heads)])]

    def _errors(self, a: AppView, types: list[str], period: float | None, val_w: int) -> list[Segment]:
        """One cell per error type: its rate, red when not zero."""
        return [self.num(fmt.per_period(n := a.rates.errors.get(t), period), val_w, self._style(n, bool(n)))
                for t in types]

    @staticmethod
    def _quiet(view: View, a: AppView) -> bool:
        """No executions and no errors, now and in all kept history: listed by name on one line, not as rows of
        zeros (a 32-runtime machine that waits for work would otherwise fill the screen)."""
        if a.failure("execution_stats") or a.rates.ran != 0 or any(a.error_summary.values()):
            return False  # failed, running, or not reported: not "idle, no errors"
        h = view.history
        return not (any(h.series(("exec", a.pid))) or any(h.series(("errors", a.pid))))  # each series read in C

    def _style(self, n: int | None, bad: bool, good: bool = False) -> Style:
        if bad:
            return self.style("high")
        if good and n:
            return self.style("low")
        return self.style("value" if n else "dim")

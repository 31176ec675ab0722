"""vCPU: the system average split by kind, runtime vCPU, context switches, and every vCPU at a glance.

Two panels: ``VcpuPanel``, the summary with a heat strip (one cell per vCPU: 192 of them fit in two rows at
120 columns), and ``VcpuGrid``, a sparkline per vCPU (the full history, one key away). Both draw each vCPU as the
mean of two reports (``sparkline.STEP``), so they change every other report, as btop's default 2 s update.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.derived import CpuSummary
from neuron_top.output.cells import runtime_vcpu
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import fit
from neuron_top.tui.widgets.panel import LOAD_BANDS, Panel, load_band
from neuron_top.tui.widgets.sparkline import STEP, SteppedSparks, per_cell, spark_text
from neuron_top.view import View

# (label, CpuTimes field, style) in stacking order, as htop colours them.
KINDS = (("user", "user", "low"), ("nice", "nice", "value"), ("sys", "system", "high"),
         ("iowait", "io_wait", "mid"), ("irq", "irq", "mid"), ("softirq", "soft_irq", "mid"))
_SHORT = {"iowait": "io", "softirq": "si"}
SPARK_W = 6
LABEL_W = 9
"""" System  ", " Runtime ": the summary's label column."""
STRIP_LABEL = 5
"""" 128 ": the vCPU number before each row of the heat strip."""
BAR_MIN, BAR_MAX = 4, 40
"""The summary bars give way to the numbers down to BAR_MIN cells."""


def _keys(cpu: CpuSummary, kept: list[int], keys: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The history keys of the vCPUs reported, made again only when the vCPUs change."""
    numbers = [i for i, _ in cpu.per_cpu]
    if numbers != kept:
        kept[:] = numbers
        keys[:] = [("vcpu", i) for i in numbers]
    return keys


class VcpuPanel(Panel[None]):
    """The system's vCPUs by kind, the selected app's runtime vCPU, and a heat strip of every vCPU."""

    TITLE = "vCPU"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.strip = True
        """Draw the heat strip (the screen turns it off while the sparkline grid shows every vCPU)."""
        self._sparks = SteppedSparks(1)
        self._numbers: list[int] = []
        self._keys: list[tuple[str, int]] = []

    def cache_extra(self) -> tuple[object, ...]:
        return (self.strip,)

    def strip_rows(self, view: View, width: int) -> int:
        """The rows the heat strip takes at ``width``, drawn or not: the vCPU grid, when the screen shows it, takes
        their place (``DashboardScreen._fill`` counts them so, whichever is shown now)."""
        n = len(view.snapshot.cpu.per_cpu)
        return -(-n // max(width - STRIP_LABEL - 1, 1)) if n else 0

    def set_strip(self, on: bool) -> None:
        if on != self.strip:
            self.strip = on
            if self.is_mounted and self.view is not None:
                self._view_changed()

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        cpu = snap.cpu
        g = snap.vcpu
        parts = [f"{cpu.count} vCPUs" if cpu.count else "", f"{fmt.pct(cpu.busy)} busy" if cpu.busy is not None else "",
                 f"ctxsw {fmt.rate(cpu.ctxsw)}" if cpu.ctxsw is not None else ""]
        lines = [self.title_strip(self.TITLE, width, " · ".join(p for p in parts if p))]
        runtime = self._runtime_detail(view)
        if not cpu.kinds:
            why = f": {clean(g.error)}" if g is not None and g.error else ""
            lines.append(LightStrip([Segment(fit(f" no vcpu_usage data{why}", width), self.style("dim"))]))
            bar_w = min(max(width - LABEL_W - cell_len(runtime), BAR_MIN), BAR_MAX)
        else:
            detail = self._system_detail(cpu, width)
            bar_w = min(max(width - LABEL_W - max(cell_len(detail), cell_len(runtime)), BAR_MIN), BAR_MAX)
            lines.append(self._system(cpu, detail, bar_w, width))
        lines.append(self._runtime(view, runtime, bar_w, width))
        if self.strip and cpu.per_cpu:
            lines += self._strip(view, width)
        return lines

    @staticmethod
    def _system_detail(cpu: CpuSummary, width: int) -> str:
        """" user 21.7%  nice 0.0%  sys 5.1% ...": short names and the zero kinds left out when narrow."""
        vals = [(lab, v) for (lab, _, _), (_, v) in zip(KINDS, cpu.kinds, strict=True)]
        detail = " " + "  ".join(f"{lab} {fmt.pct(v)}" for lab, v in vals)
        if LABEL_W + BAR_MIN + cell_len(detail) > width:
            detail = " " + " ".join(f"{_SHORT.get(lab, lab)} {fmt.pct(v)}" for lab, v in vals
                                    if v or lab in ("user", "sys"))
        return detail

    @staticmethod
    def _runtime_detail(view: View) -> str:
        ru, rs = runtime_vcpu(view.app)
        return f" user {ru}  sys {rs}" + (" (all apps)" if view.app.is_all else "")

    def _system(self, cpu: CpuSummary, detail: str, bar_w: int, width: int) -> Strip:
        """`` System  ████──── user 21.7% sys 5.1% ...``: the bar gives way to the numbers, the numbers to "…"."""
        vals = [(lab, v, st) for (lab, _, st), (_, v) in zip(KINDS, cpu.kinds, strict=True)]
        segs = [Segment(" System".ljust(LABEL_W), self.style("label"))]
        used = 0
        for _lab, v, st in vals:
            n = min(round(v / 100 * bar_w), bar_w - used)
            if n > 0:
                segs.append(Segment("█" * n, self.style(st)))
                used += n
        segs.append(Segment("─" * (bar_w - used), self.style("track")))
        segs.append(Segment(fit(detail, max(width - LABEL_W - bar_w, 0)), self.style("value")))
        return LightStrip(segs)

    def _runtime(self, view: View, detail: str, bar_w: int, width: int) -> Strip:
        app = view.app
        ru, rs = app.vcpu
        label = "Runtime" if app.is_all else clean(app.label, LABEL_W - 2)
        segs = [Segment(fit(f" {label}", LABEL_W - 1) + " ", self.style("label"))]
        segs += self.bar((ru or 0) + (rs or 0) if ru is not None or rs is not None else None, bar_w)
        segs.append(Segment(fit(detail, max(width - LABEL_W - bar_w, 0)), self.style("value")))
        return LightStrip(segs)

    def _strip(self, view: View, width: int) -> list[Strip]:
        """Every vCPU as one cell (its mean over the last two reports, a gap when it had no data), rows of as
        many as fit, each row led by its first vCPU's number. Made once per history step (``per_step``): the
        same Strip objects until the next one."""
        cpu = view.snapshot.cpu
        key = ("strip", width, cpu.count, cpu.per_cpu[0][0], cpu.per_cpu[-1][0])
        return self.per_step(view.history, key, lambda: self._make_strip(view, width))

    def _make_strip(self, view: View, width: int) -> list[Strip]:
        cpu = view.snapshot.cpu
        history = view.history
        label, dim = self.style("label"), self.style("dim")
        keys = _keys(cpu, self._numbers, self._keys)
        drawn: list[tuple[object, str, float | None]]
        if len(history) < STEP:  # one report (--once, a replay's first): no pair to average yet, the report itself
            drawn = [(None, spark_text([u], 1), u) for _, u in cpu.per_cpu]
        else:
            drawn = list(self._sparks.many(history, keys))
        per_row = max(width - STRIP_LABEL - 1, 1)
        bands = [self.style(b) for b in LOAD_BANDS]
        rows: list[Strip] = []
        for start in range(0, len(keys), per_row):
            segs = [Segment(f"{cpu.per_cpu[start][0]:>{STRIP_LABEL - 1}} ", label)]
            run: list[str] = []
            run_style: Style | None = None
            for _, text, newest in drawn[start:start + per_row]:
                style = dim if newest is None else bands[load_band(newest)]
                if style is not run_style and run:
                    segs.append(Segment("".join(run), run_style))
                    run = []
                run_style = style
                run.append(text)
            if run:
                segs.append(Segment("".join(run), run_style))
            rows.append(LightStrip(segs))
        return rows


class VcpuGrid(Panel[None]):
    """A sparkline per vCPU, in a grid that fills the width: each vCPU's history."""

    TITLE = "vCPU history"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._labels: dict[int, Segment] = {}
        """vCPU number -> its label Segment, the same every update (made once per theme)."""
        self._labels_style: Style | None = None
        self._sparks = SteppedSparks(SPARK_W)
        self._numbers: list[int] = []
        self._keys: list[tuple[str, int]] = []

    def rows_needed(self, view: View, width: int) -> int:
        per_row = max((width - 1) // (SPARK_W + 5), 1)
        return 1 + max(-(-view.snapshot.cpu.count // per_row), 1)

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        cpu = snap.cpu
        every = per_cell(view.history)
        # no per-vCPU data (the fleet's drill-down over Prometheus: not exported) is "-", not "0 vCPUs"
        right = f"{cpu.count} vCPUs" + (f", {every} per cell" if every else "") if cpu.count else "vCPUs -"
        lines = [self.title_strip(self.TITLE, width, right)]
        if not cpu.per_cpu:
            lines.append(LightStrip([Segment(" no per-vCPU data", self.style("dim"))]))
            return lines
        return lines + self._grid(view, width)

    def _grid(self, view: View, width: int) -> list[Strip]:
        """The sparkline grid, made once per history step (``per_step``): between two steps it is handed out
        again, the same Strip objects, so finding the changed cells skips it at once."""
        cpu = view.snapshot.cpu
        key = ("grid", width, cpu.count, cpu.per_cpu[0][0], cpu.per_cpu[-1][0])
        return self.per_step(view.history, key, lambda: self._make_grid(view, width))

    def _make_grid(self, view: View, width: int) -> list[Strip]:
        cpu = view.snapshot.cpu
        history = view.history
        label = self.style("label")
        cell = SPARK_W + 5  # " 123▁▂▃▄▅▆"
        per_row = max((width - 1) // cell, 1)
        labels = self._labels
        if self._labels_style is not label:
            labels.clear()
            self._labels_style = label
        dim, bands = self.style("dim"), [self.style(band) for band in LOAD_BANDS]
        keys = _keys(cpu, self._numbers, self._keys)
        drawn = self._sparks.many(history, keys)
        rows: list[Strip] = []
        for start in range(0, len(keys), per_row):
            segs = []
            for i, (_, text, newest) in zip(self._numbers[start:start + per_row], drawn[start:start + per_row],
                                            strict=True):
                tag = labels.get(i)
                if tag is None:
                    tag = labels[i] = Segment(f" {i:>3} ", label)
                segs.append(tag)
                segs.append(Segment(text, dim if newest is None else bands[load_band(newest)]))  # load_style
            rows.append(self.padded(segs, width))
        return rows

"""vCPU: the system average split by kind, runtime vCPU, context switches, and a sparkline per vCPU."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.snapshot import finite
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.panel import LOAD_BANDS, Panel, load_band
from neuron_top.tui.widgets.sparkline import STEP, SteppedSparks
from neuron_top.view import View

# (label, CpuTimes field, style) in stacking order, as htop colours them.
KINDS = (("user", "user", "low"), ("nice", "nice", "value"), ("sys", "system", "high"),
         ("iowait", "io_wait", "mid"), ("irq", "irq", "mid"), ("softirq", "soft_irq", "mid"))
SPARK_W = 6


class VcpuPanel(Panel):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._labels: dict[int, Segment] = {}
        """vCPU number -> its label Segment, the same every update (made once per theme)."""
        self._labels_style: Style | None = None
        self._grid_key: tuple[object, ...] | None = None
        self._grid_rows: list[Strip] = []
        """The sparkline grid as last built: between two steps it is handed out again, the same Strip objects,
        so finding the changed cells skips it at once."""
        self._sparks = SteppedSparks(SPARK_W)
        self._numbers: list[int] = []
        self._keys: list[tuple[str, int]] = []
        """The history keys of the vCPUs ``_numbers``, in their order."""

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        g = snap.vcpu
        cpus = snap.vcpus
        every = ""
        if cpus and g is not None and g.period:
            cell_s = g.period * STEP
            every = f", {fmt.duration(round(cell_s)) if cell_s >= 1 else f'{cell_s * 1000:.0f}ms'} per cell"
        lines = [self.title_strip(f"vCPU Utilization ({len(cpus)} vCPUs{every})", width)]
        label_w = 16
        if g is None or g.average_usage is None:
            why = f": {clean(g.error)}" if g is not None and g.error else ""
            lines.append(LightStrip([Segment(f" no vcpu_usage data{why}", self.style("dim"))]))
        else:
            a = g.average_usage
            vals = [(lab, finite(getattr(a, f)) or 0.0, st) for lab, f, st in KINDS]
            bar_w = max(min(width - label_w - 2, 60), 10)
            segs = [Segment(" System".ljust(label_w), self.style("label"))]
            used = 0
            for _lab, v, st in vals:
                n = round(v / 100 * bar_w)
                n = min(n, bar_w - used)
                if n > 0:
                    segs.append(Segment("█" * n, self.style(st)))
                    used += n
            segs.append(Segment("─" * (bar_w - used), self.style("track")))
            lines.append(LightStrip(segs))
            detail = "  ".join(f"{lab} {fmt.pct(v)}" for lab, v, _ in vals)
            ctx = ""
            if g.context_switch_count is not None and g.period:
                ctx = f"  ctxsw {fmt.rate(g.context_switch_count / g.period)}"
            lines.append(LightStrip([Segment(" " * label_w + detail + ctx, self.style("value"))]))
        ru, rs = view.app.vcpu
        rt = [Segment(f" Runtime {clean(view.app.label, 7)}".ljust(label_w)[:label_w], self.style("label"))]
        bar_w = max(min(width - label_w - 30, 60), 10)
        rt += self.bar((ru or 0) + (rs or 0) if ru is not None or rs is not None else None, bar_w)
        rt.append(Segment(f" user {fmt.pct(ru)} sys {fmt.pct(rs)}", self.style("value")))
        lines.append(LightStrip(rt))
        # One small sparkline per vCPU, in a grid that fills the width.
        if cpus:
            lines += self._grid(view, width)
        return lines

    def _grid(self, view: View, width: int) -> list[Strip]:
        cpus = view.snapshot.vcpus
        history = view.history
        label = self.style("label")
        step = history.pushed // STEP
        key = (history, step, width, label, self.style("low"), len(cpus), cpus[0][0], cpus[-1][0])
        if key == self._grid_key:
            return self._grid_rows
        cell = SPARK_W + 5  # "123▁▂▃▄▅▆ "
        per_row = max((width - 1) // cell, 1)
        labels = self._labels
        if self._labels_style is not label:
            labels.clear()
            self._labels_style = label
        dim, bands = self.style("dim"), [self.style(band) for band in LOAD_BANDS]
        numbers = [i for i, _ in cpus]
        if numbers != self._numbers:  # the series keys, made again only when the vCPUs reported change
            self._numbers, self._keys = numbers, [("vcpu", i) for i in numbers]
        drawn = self._sparks.many(history, self._keys)
        rows = []
        for start in range(0, len(cpus), per_row):
            segs = []
            for (i, _), (_, text, newest) in zip(cpus[start:start + per_row], drawn[start:start + per_row],
                                                 strict=True):
                tag = labels.get(i)
                if tag is None:
                    tag = labels[i] = Segment(f" {i:>3} ", label)
                segs.append(tag)
                segs.append(Segment(text, dim if newest is None else bands[load_band(newest)]))  # load_style
            rows.append(LightStrip(segs))
        self._grid_key, self._grid_rows = key, rows
        return rows


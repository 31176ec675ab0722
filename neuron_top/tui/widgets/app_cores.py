"""The cores one app uses, as small utilization (or FLOPS) bars: the first thing the app drill-down shows."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.memtree import global_core
from neuron_top.snapshot import AppView, finite
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.cells import app_title, cell, fit, num
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View

CELL = 30
"""Columns per core cell: label, bar and value."""


def app_cores(app: AppView, cores_per_device: int) -> list[int]:
    """The cores ``app`` owns: with memory, a model or load on them. Apps also report zeros for cores they do
    not own (seen in real output), so "reported" alone would list every core of the machine."""
    owned = {i for i, cats in app.core_memory.items() if any(cats.values())}
    owned |= {c for m in app.models for s in m.subgraphs if (c := global_core(s, cores_per_device)) is not None}
    owned |= {i for i, c in app.cores.items() if (finite(c.neuroncore_utilization) or 0) > 0}
    return sorted(owned or app.cores)


class AppCoresPanel(Panel):
    """One cell per core of the selected app: "ND0 NC1 ███──── 55.5%"."""

    TITLE = "NeuronCores"

    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        cpd = snap.cores_per_device
        cores = app_cores(app, cpd)
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
        peak = max((finite(c.effective_flops if c.effective_flops is not None else c.flops) or 0.0)
                   for c in app.cores.values()) if view.flops and app.cores else 0.0
        for start in range(0, len(cores), per_line):
            segs: list[Segment] = []
            for i in cores[start:start + per_line]:
                d, c = divmod(i, cpd)
                cc = app.cores.get(i)
                util = finite(cc.neuroncore_utilization) if cc is not None else None
                if view.flops and cc is not None:
                    f = finite(cc.effective_flops if cc.effective_flops is not None else cc.flops)
                    value, pct = fmt.tflops(f), (f / peak * 100 if f is not None and peak else None)
                else:
                    value, pct = fmt.pct(util), util
                label = f" ND{d} NC{c}"
                segs += [cell(label, 9, self.style("label")), *self.bar(pct, max(cw - 9 - 9, 3)),
                         num(value, 9, self.load_style(util))]
            lines.append(Strip(segs))
        return lines

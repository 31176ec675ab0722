"""One NeuronCore in depth: utilization and FLOPS history, memory by category, models on it, who uses it."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.snapshot import DEVICE_CATEGORIES, finite
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.panel import Panel
from neuron_top.tui.widgets.sparkline import chart_rows
from neuron_top.view import View

CHART_H = 5


class CoreDetail(Panel[None]):
    def __init__(self, index: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = index

    def build(self, view: View, width: int) -> list[Strip]:
        snap, i = view.snapshot, self.index
        dev, nc = snap.core_location(i)
        c = snap.all.cores.get(i)
        u = snap.all.core_stats.util.get(i)  # the core's utilization by the one rule (summed share)
        f = snap.all.core_stats.flops.get(i)
        lines = [self.title_strip(f"NeuronCore {i} (ND{dev} NC{nc})", width,
                                  f"now {fmt.pct(u, digits=2)} · {fmt.tflops(f)}")]
        ref = snap.pods.cores.get(i)
        if ref is not None:
            lines.append(Strip([Segment(f" pod {ref.describe()}", self.style("label"))]))
        if c is not None and c.v3d:
            phys = "  ".join(f"{clean(k, 12)} {fmt.pct(finite(v.neuroncore_utilization) if v else None, digits=2)}"
                             for k, v in c.v3d.items())
            lines.append(Strip([Segment(f" physical cores: {phys}", self.style("value"))]))
        w = max(width - 8, 10)
        for label, key, top in (("util %", ("core", i), 100.0), ("FLOPS", ("flops", i), None)):
            series = view.history.last(key, w)
            nums = [v for v in series if v is not None]
            peak = max(nums) if nums else None
            right = fmt.pct(peak) if top else fmt.tflops(peak)
            lines.append(Strip([Segment(f" {label} history (peak {right})", self.style("label"))]))
            for row in chart_rows(series, w, CHART_H, top):
                lines.append(Strip([Segment("       "), Segment(row, self.load_style(u) if top else self.style("mid"))]))
        lines.append(Strip([Segment(" memory on this core", self.style("label"))]))
        users = []
        for a in snap.apps:
            mem = a.core_memory.get(i)
            cc = a.cores.get(i)
            au = finite(cc.neuroncore_utilization) if cc is not None else None
            if (mem and sum(mem.values())) or (au or 0) > 0:
                users.append((a, mem or {}, au))
        total = {k: sum(m.get(k, 0) for _, m, _ in users) for k in DEVICE_CATEGORIES}
        lines.append(Strip([Segment("   " + "  ".join(f"{k} {fmt.human_bytes(v)}" for k, v in total.items()),
                                    self.style("value"))]))
        lines.append(Strip([Segment(f" apps using it ({len(users)})", self.style("label"))]))
        for a, mem, au in users:
            lines.append(Strip([Segment(f"   {clean(a.label, 40)} (pid {a.pid})  util {fmt.pct(au, digits=2)}  "
                                        f"device memory {fmt.human_bytes(sum(mem.values()))}", self.style("value"))]))
        models = [(a, m) for a in snap.apps for m in a.models if i in m.cores(snap.cores_per_device)]
        lines.append(Strip([Segment(f" models on it ({len(models)})", self.style("label"))]))
        for a, m in models:
            lines.append(Strip([Segment(f"   {m.name[:60]}  id {m.model_id}  {clean(a.label, 20)}  "
                                        f"device {fmt.human_bytes(m.device_bytes)}  "
                                        f"{'running' if m.is_running else 'loaded'}", self.style("value"))]))
        return lines

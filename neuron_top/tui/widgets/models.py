"""The models an app has loaded, with their subgraphs: where each runs, what memory it holds, and the string
fields newer runtimes add to a subgraph (e.g. ``v2 = nc_v2.0``), shown as they are."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.memtree import global_core
from neuron_top.textsafe import clean
from neuron_top.tui.widgets.fixedwidth import app_title, cell, common_ends, fit, fit_distinct, num
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


class ModelsPanel(Panel[None]):
    """A row per model and an indented row per subgraph (unless a model's only subgraph adds nothing)."""

    TITLE = "Models"
    MAX_MODELS = 200
    """More than this is listed as a count: a runtime with thousands of models would otherwise stall a frame."""

    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        cpd = snap.cores_per_device
        models = app.models
        running = sum(1 for m in models if m.is_running)
        lines = [self.title_strip(f"{self.TITLE} ({len(models)}, {running} running)", width, app_title(app))]
        if not models:
            lines.append(Strip([Segment(" no models loaded", self.style("dim"))]))
            return lines
        narrow = width < 100
        id_w, run_w, cores_w, mem_w = 8, 5, 10 if narrow else 16, 10
        name_w = max(width - id_w - run_w - cores_w - 2 * mem_w, 12)
        label = self.style("label")
        lines.append(Strip([cell(" Name", name_w, label), num("ID", id_w, label), num("run", run_w, label),
                            cell(" ND:NC", cores_w, label), num("Device", mem_w, label), num("Host", mem_w, label)]))
        ends = common_ends([clean(m.name) for m in models])
        for m in models[:self.MAX_MODELS]:
            where = sorted({c for s in m.subgraphs if (c := global_core(s, cpd)) is not None})
            cores = ",".join(f"{c // cpd}:{c % cpd}" for c in where) or "-"
            run = "-" if m.is_running is None else "yes" if m.is_running else "no"
            lines.append(Strip([
                Segment(" " + fit_distinct(clean(m.name), name_w - 1, ends), self.style("value")),
                num("-" if m.model_id is None else str(m.model_id), id_w, self.style("dim")),
                num(run, run_w, self.style("low" if m.is_running else "dim")),
                cell(" " + cores, cores_w, self.style("label")),
                num(fmt.human_bytes(m.device_bytes), mem_w, self.style("value")),
                num(fmt.human_bytes(m.host_bytes), mem_w, self.style("value"))]))
            if len(m.subgraphs) == 1 and not m.subgraphs[0].extra:
                continue  # one plain subgraph says nothing the model's row does not
            for s in m.subgraphs:
                place = "" if s.core is None else f"ND{s.device if s.device is not None else '?'} NC{s.core}"
                extra = "  ".join(f"{clean(k)}={clean(v)}" for k, v in s.extra)
                text = (f"   └ {clean(s.name)}  {place}  device {fmt.human_bytes(s.device_bytes)}"
                        f"  host {fmt.human_bytes(s.host_bytes)}" + (f"  {extra}" if extra else ""))
                lines.append(Strip([Segment(fit(text, width), self.style("dim"))]))
        if len(models) > self.MAX_MODELS:
            lines.append(Strip([Segment(f" … {len(models) - self.MAX_MODELS} more models", self.style("dim"))]))
        return lines

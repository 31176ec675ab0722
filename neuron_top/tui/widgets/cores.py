"""The NeuronCore grid: devices as rows, cores as columns, a bar and a value per core."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.selection import app_cores
from neuron_top.snapshot import Snapshot, finite, k8s_label
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.panel import Panel, bar_fill, load_band
from neuron_top.view import View


def physical_columns(snap: Snapshot) -> int:
    """How many v3d physical cores stand behind each logical core (0 when the report has none)."""
    for c in snap.all.cores.values():
        if c.v3d:
            return len(c.v3d)
    return 0


class CoreGrid(Panel):
    """Cursor keys move between cores; Enter opens the core (or the device, on the ND column)."""

    BINDINGS = [
        Binding("up", "move(0, -1)", "up", show=False),
        Binding("down", "move(0, 1)", "down", show=False),
        Binding("left", "move(-1, 0)", "left", show=False),
        Binding("right", "move(1, 0)", "right", show=False),
        Binding("enter", "open", "open core"),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 0), repaint=False)
    """(device, core within device); core -1 is the device label column."""

    class OpenCore(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class OpenDevice(Message):
        def __init__(self, device: int) -> None:
            super().__init__()
            self.device = device

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor,)

    def on_focus(self) -> None:
        """With an app selected, the cursor starts on the first core that app uses (not on core 0, which it may
        not use); it is left alone when it already stands on one of its cores."""
        view = self.view
        if view is None or view.pid is None or view.pid == self._placed_for:
            return
        self._placed_for = view.pid
        cpd = view.snapshot.cores_per_device
        cores = app_cores(view.app, cpd) if cpd else []
        dev, core = self.cursor
        if cores and dev * cpd + core not in cores:
            self.cursor = divmod(cores[0], cpd)

    _placed_for: int | None = None
    """The app the cursor was last placed for (``on_focus``)."""

    def watch_cursor(self) -> None:
        self.refresh()
        self.scroll_to_region(self._cursor_region(), animate=False)

    def _cursor_region(self):
        from textual.geometry import Region

        return Region(0, self.cursor[0] + 2, self.size.width, 1)

    def action_move(self, dx: int, dy: int) -> None:
        view = self.view
        if view is None:
            return
        snap = view.snapshot
        dev, core = self.cursor
        dev = max(0, min(dev + dy, max(snap.device_count - 1, 0)))
        core = max(-1, min(core + dx, snap.cores_per_device - 1))
        self.cursor = (dev, core)

    def action_open(self) -> None:
        if self.view is None or not self.view.snapshot.has_neuron:
            return
        dev, core = self.cursor
        if core < 0:
            self.post_message(self.OpenDevice(dev))
        else:
            self.post_message(self.OpenCore(dev * self.view.snapshot.cores_per_device + core))

    def on_click(self, event: Click) -> None:
        hit = getattr(self, "_layout", None)
        if self.view is None or hit is None or event.y < 2:
            return
        label_w, cell_w, _ = hit
        dev = event.y - 2
        if dev >= self.view.snapshot.device_count:
            return
        core = -1 if event.x < label_w else min((event.x - label_w) // cell_w, self.view.snapshot.cores_per_device - 1)
        self.cursor = (dev, core)
        self.action_open()

    # --- drawing ---
    def build(self, view: View, width: int) -> list[Strip]:
        snap, app = view.snapshot, view.app
        if not snap.has_neuron:
            return [self.title_strip("NeuronCores", width),
                    LightStrip([Segment(" No Neuron devices reported: neuron-monitor / the Neuron driver was not found."
                                   " Showing host metrics only.", self.style("dim"))])]
        phys = physical_columns(snap) if view.physical else 0
        cpd = snap.cores_per_device
        cores = app.cores
        vals = [finite(c.neuroncore_utilization) for c in cores.values()]
        vals = [v for v in vals if v is not None]
        avg = sum(vals) / len(vals) if vals else None
        ver = clean(snap.hardware.neuroncore_version or "", 8)
        ver = f" {ver}" if ver else ""
        if view.flops:
            total = sum(finite(c.effective_flops if c.effective_flops is not None else c.flops) or 0.0
                        for c in cores.values())
            kind = "effective FLOPS" if any(c.effective_flops is not None for c in cores.values()) else "FLOPS"
            title = f"NeuronCore{ver} {kind} (total {fmt.tflops(total)})"
        else:
            title = f"NeuronCore{ver} {'physical ' if phys else ''}Utilization (avg {fmt.pct(avg)})"
        k8s = snap.k8s_devices
        k8s_w = 24 if k8s and width >= 120 else 0
        label_w = 6
        ncols = cpd * (phys or 1)
        cell_w = max((width - label_w - k8s_w) // max(ncols, 1), 8)
        self._layout = (label_w, cell_w * (phys or 1), ncols)
        right = ""
        if self.has_focus:
            d, c = self.cursor
            idx = d * cpd + c
            right = f"ND{d}" if c < 0 else f"core {idx} (ND{d} NC{c})"
            if c >= 0 and idx in snap.k8s_cores:
                right += " " + k8s_label(snap.k8s_cores[idx])
        lines = [self.title_strip(title, width, right)]
        # column heads
        head = [Segment(" " * label_w)]
        for c in range(cpd):
            if phys:
                for p in range(phys):
                    head.append(Segment(f"NC{c}.{p}".center(cell_w)[:cell_w], self.style("label")))
            else:
                head.append(Segment(f"NC{c}".center(cell_w)[:cell_w], self.style("label")))
        lines.append(LightStrip(head))
        cur_dev, cur_core = self.cursor if self.has_focus else (-1, -9)
        value_w = 8
        # Whole percents in the cells (the bar beside each has finer steps; the title's average and the core
        # screen keep a decimal): a tenth that flickers every report is 64 more changed cells a second on trn2.
        bar_w = max(cell_w - value_w - 1, 1)
        for dev in range(snap.device_count):
            lab_style = self.style("cursor") if (dev == cur_dev and cur_core < 0) else self.style("label")
            segs = [Segment(f"ND{dev:<3}".ljust(label_w)[:label_w], lab_style)]
            for c in range(cpd):
                idx = dev * cpd + c
                cc = cores.get(idx)
                selected = dev == cur_dev and c == cur_core
                if phys:
                    subs = list((cc.v3d or {}).values()) if cc is not None else []
                    for p in range(phys):
                        u = finite(subs[p].neuroncore_utilization) if p < len(subs) and subs[p] else None
                        segs += self._cell(u, fmt.pct(u, value_w - 2, 0), bar_w, selected)
                    continue
                if cc is None:
                    segs += self._cell(None, "-".rjust(value_w - 2), bar_w, selected)
                    continue
                u = finite(cc.neuroncore_utilization)
                if view.flops:
                    f = finite(cc.effective_flops if cc.effective_flops is not None else cc.flops)
                    # FLOPS bar: relative to the busiest core in view
                    peak = max((finite(x.effective_flops if x.effective_flops is not None else x.flops) or 0.0)
                               for x in cores.values()) or 1.0
                    segs += self._cell(None if f is None else f / peak * 100, fmt.tflops(f).rjust(value_w - 2),
                                       bar_w, selected, colour_pct=u)
                else:
                    segs += self._cell(u, fmt.pct(u, value_w - 2, 0), bar_w, selected)
            if k8s_w:
                e = k8s.get(dev)
                segs.append(Segment(" " + (k8s_label(e) if e else "")[: k8s_w - 1], self.style("dim")))
            lines.append(LightStrip(segs))
        return lines

    def _cell(self, pct: float | None, value: str, bar_w: int, selected: bool,
              colour_pct: float | None = None) -> list[Segment]:
        # 64-128 cells a report, but only so many distinct ones: a bar is its whole and eighth cells and its load
        # colour, the value its text and colour. Made once each, then looked up.
        fill = None if pct is None else (*bar_fill(pct, bar_w), load_band(pct))
        colour = colour_pct if colour_pct is not None else pct
        key = (fill, value, bar_w, -1 if selected else None if colour is None else load_band(colour))
        return self.part(key, self._make_cell, pct, value, bar_w, selected, colour)

    def _make_cell(self, pct: float | None, value: str, bar_w: int, selected: bool,
                   colour: float | None) -> list[Segment]:
        vstyle = self.style("cursor") if selected else self.load_style(colour)
        return [*self.bar(pct, bar_w), Segment(f"[{value}]", vstyle), Segment(" ")]

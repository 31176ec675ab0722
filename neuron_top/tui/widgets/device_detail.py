"""One Neuron device in depth: ECC, its cores, memory per core. Up/down pick a core, Enter or a click opens it."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.derived import device_memory
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


class DeviceDetail(Panel[None]):
    BINDINGS = [
        Binding("up", "move(-1)", "previous core", show=False),
        Binding("down", "move(1)", "next core", show=False),
        Binding("enter", "open", "open core"),
    ]

    cursor: reactive[int] = reactive(0, repaint=False)
    """The core row under the cursor (0 .. cores per device - 1)."""

    class OpenCore(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, device: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.device = device
        self._rows: dict[int, int] = {}
        """Line -> global core index, for clicks."""

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor,)

    def watch_cursor(self) -> None:
        self.refresh()

    def action_move(self, step: int) -> None:
        if self.view is not None:
            self.cursor = max(0, min(self.cursor + step, self.view.snapshot.cores_per_device - 1))

    def action_open(self) -> None:
        if self.view is not None and self.view.snapshot.cores_per_device:
            self.post_message(self.OpenCore(self.device * self.view.snapshot.cores_per_device + self.cursor))

    def on_click(self, event: Click) -> None:
        index = self._rows.get(event.y)
        if index is not None and self.view is not None:
            self.cursor = index - self.device * self.view.snapshot.cores_per_device
            self.post_message(self.OpenCore(index))

    def build(self, view: View, width: int) -> list[Strip]:
        snap, d = view.snapshot, self.device
        size = snap.hardware.neuron_device_memory_size
        lines = [self.title_strip(f"Neuron device ND{d}", width, f"{fmt.human_bytes(size)} device memory")]
        for ref in snap.pods.by_device(snap.cores_per_device).get(d, ()):
            lines.append(Strip([Segment(f" pod {ref.describe()}", self.style("label"))]))
        ecc = {e.device: e for e in snap.ecc}.get(d)
        total = view.history.ecc_totals.get(d, ecc)
        lines.append(Strip([Segment(" ECC events (neuron-monitor reports each period's events)", self.style("label"))]))
        if ecc is None:
            lines.append(Strip([Segment("   no ECC data for this device", self.style("dim"))]))
        else:
            for name, attr in (("DRAM corrected", "mem_corrected"), ("DRAM uncorrected", "mem_uncorrected"),
                               ("SRAM corrected", "sram_corrected"), ("SRAM uncorrected", "sram_uncorrected")):
                v, t = getattr(ecc, attr), getattr(total, attr)
                st = self.style("bad") if "uncorrected" in attr and t else self.style("value")
                lines.append(Strip([Segment(f"   {name:<18} since start {t:>8}   in the last report {v:>6}", st)]))
        lines.append(Strip([Segment(" NeuronCores (Enter opens one)", self.style("label"))]))
        cpd = snap.cores_per_device
        used_total = device_memory(snap.all.core_memory, cpd, snap.device_count,  # the grid's MEM, the same rule
                                   snap.all.used_bytes[1] if snap.all.memory_reported else None).get(d, 0)
        self._rows = {}
        for nc in range(cpd):
            i = d * cpd + nc
            u = snap.all.core_stats.util.get(i)  # the core's utilization by the one rule (summed share)
            mem = snap.all.core_memory.get(i, {})
            used = sum(mem.values())
            pct_mem = f" ({used / size * 100:.1f}% of device)" if size else ""
            here = nc == self.cursor and self.has_focus
            self._rows[len(lines)] = i
            segs = [Segment(f" {'>' if here else ' '} NC{nc} (core {i}) ",
                            self.style("cursor" if here else "label")), *self.bar(u, 20),
                    Segment(f" {fmt.pct(u, 6)}  memory {fmt.human_bytes(used)}{pct_mem}", self.style("value"))]
            lines.append(Strip(segs))
        if size:
            lines.append(Strip([Segment(f" device memory used {fmt.human_bytes(used_total)} of "
                                        f"{fmt.human_bytes(size)} ({used_total / size * 100:.1f}%)",
                                        self.style("value"))]))
        return lines

"""ECC counters per Neuron device: DRAM and SRAM, corrected/uncorrected, and how much they grew.

A device with an uncorrected error is drawn in the ``bad`` style: that memory returned wrong data. Corrected
counts are normal in small numbers and only tinted. Devices stand side by side when the panel is wide.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top.snapshot import DeviceEcc
from neuron_top.textsafe import clean
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import cell, fit
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View

WIDE = 100
"""From this width on, columns get full names."""


def _pair(c: int, u: int) -> str:
    return f"{c}/{u}"


class EccPanel(Panel[None]):
    """ECC for every device: events since the session started (summed in History) and in the last report.

    neuron-monitor reports the events of each period, so the totals are sums over the reports seen."""

    TITLE = "ECC"

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        totals = view.history.ecc_totals
        ecc = tuple(totals.get(e.device, e) for e in snap.ecc)
        g = snap.system.neuron_hw_counters
        # ECC counters rarely move: the same strips while the counts (and the reason for no data) are the same
        return self.memo((snap.ecc, ecc, g.error if g is not None and not ecc else None),
                         lambda: self._build(view, width, ecc))

    def _build(self, view: View, width: int, ecc: tuple[DeviceEcc, ...]) -> list[Strip]:
        snap = view.snapshot
        last = {e.device: e for e in snap.ecc}
        corrected = sum(e.corrected for e in ecc)
        uncorrected = sum(e.uncorrected for e in ecc)
        if not ecc:
            g = snap.system.neuron_hw_counters
            why = f": {clean(g.error, 200)}" if g is not None and g.error else ""
            return [self.title_strip("ECC", width),
                    LightStrip([Segment(fit(f" no ECC data{why}", width), self.style("dim"))])]
        names = f"ND{ecc[0].device}" + (f"-ND{ecc[-1].device}" if len(ecc) > 1 else "")
        if not corrected and not uncorrected:  # the usual case: the title line says it all
            return [self.title_strip("ECC", width, f"no errors on {names} (DRAM and SRAM) since start")]
        title = "ECC errors (corrected/uncorrected)" if width >= WIDE else "ECC (corr/uncorr)"
        # what matters most first: what does not fit is cut from the end
        lines = [self.title_strip(title, width, f"{uncorrected} uncorrected · {corrected} corrected · {len(ecc)} dev")]
        wide = width >= WIDE
        cols = (6, 12, 12, 13) if wide else (5, 6, 6, 7)
        heads = ("Dev", "DRAM total", "SRAM total", "last report") if wide else ("Dev", "DRAM", "SRAM", "last")
        cell_w = sum(cols) + 1
        per_row = max(width // cell_w, 1)
        label = self.style("label")
        head: list[Segment] = []
        shown = [e for e in ecc if e.has_events]
        for _ in range(min(per_row, len(shown))):
            head += [cell(" " + h, w, label) for h, w in zip(heads, cols, strict=True)] + [Segment(" ")]
        lines.append(LightStrip(head))
        # only the devices that had errors (``shown``): 16 rows of zeros would push the panels below off the screen
        for start in range(0, len(shown), per_row):
            segs: list[Segment] = []
            for e in shown[start:start + per_row]:
                now = last[e.device]
                segs += self._cell(e, cols, f"+{now.corrected}/+{now.uncorrected}")
                segs.append(Segment(" "))
            lines.append(LightStrip(segs))
        clean_devs = len(ecc) - len(shown)
        if clean_devs:
            lines.append(LightStrip([Segment(fit(f" no errors on the other {clean_devs} device"
                                                 f"{'s' if clean_devs > 1 else ''}", width), self.style("dim"))]))
        return lines

    def _cell(self, e: DeviceEcc, cols: tuple[int, ...], last: str) -> list[Segment]:
        bad = self.style("bad") if e.uncorrected else None  # any uncorrected event since start

        def style(c: int, u: int) -> Style:
            if bad is not None:
                return bad
            return self.style("high" if u else "mid" if c else "dim")

        grew = last != "+0/+0"
        texts = [(f" ND{e.device}", bad or self.style("label")),
                 (" " + _pair(e.mem_corrected, e.mem_uncorrected), style(e.mem_corrected, e.mem_uncorrected)),
                 (" " + _pair(e.sram_corrected, e.sram_uncorrected), style(e.sram_corrected, e.sram_uncorrected)),
                 (" " + last, bad or self.style("high" if grew else "dim"))]
        return [cell(t, w, s) for (t, s), w in zip(texts, cols, strict=True)]

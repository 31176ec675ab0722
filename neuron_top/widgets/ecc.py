"""ECC counters per Neuron device: DRAM and SRAM, corrected/uncorrected, and how much they grew.

A device with an uncorrected error is drawn in the ``bad`` style: that memory returned wrong data. Corrected
counts are normal in small numbers and only tinted. Devices stand side by side when the panel is wide.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ..snapshot import DeviceEcc, Snapshot
from ..textsafe import clean
from ..view import View
from .cells import cell
from .panel import Panel

WIDE = 100
"""From this width on, columns get full names."""


def _pair(c: int, u: int) -> str:
    return f"{c}/{u}"


def _delta(cur: DeviceEcc, base: Snapshot | None, now: Snapshot) -> str:
    """"+corrected/+uncorrected" since ``base``; "-" when there is nothing to compare with."""
    if base is None or base is now:
        return "-"
    for b in base.ecc:
        if b.device == cur.device:
            return f"+{max(cur.corrected - b.corrected, 0)}/+{max(cur.uncorrected - b.uncorrected, 0)}"
    return "new"


class EccPanel(Panel):
    """ECC for every device: counts, growth since the session started and since the previous report."""

    TITLE = "ECC"

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        ecc = snap.ecc
        corrected = sum(e.corrected for e in ecc)
        uncorrected = sum(e.uncorrected for e in ecc)
        right = f"{len(ecc)} dev · {corrected} corrected · {uncorrected} uncorrected" if ecc else ""
        title = "ECC errors (corrected/uncorrected)" if width >= WIDE else "ECC (corr/uncorr)"
        lines = [self.title_strip(title, width, right if width >= 60 else f"{uncorrected} uncorr")]
        if not ecc:
            g = snap.system.neuron_hw_counters
            why = f": {clean(g.error, 200)}" if g is not None and g.error else ""
            lines.append(Strip([Segment(f" no ECC data{why}"[:width], self.style("dim"))]))
            return lines
        if not corrected and not uncorrected:  # the usual case: one line says it, not a table of zeros
            names = f"ND{ecc[0].device}" + (f"-ND{ecc[-1].device}" if len(ecc) > 1 else "")
            lines.append(Strip([Segment(f" no ECC errors on {names} (DRAM and SRAM)"[:width], self.style("low"))]))
            return lines
        wide = width >= WIDE
        cols = (6, 11, 11, 13, 12) if wide else (5, 8, 8, 9, 8)
        heads = ("Dev", "DRAM", "SRAM", "since start", "since last") if wide else ("Dev", "DRAM", "SRAM", "Δstart",
                                                                                  "Δlast")
        cell_w = sum(cols) + 1
        per_row = max(width // cell_w, 1)
        first = view.first if view.first is not None else view.history.first
        label = self.style("label")
        head: list[Segment] = []
        for _ in range(min(per_row, len(ecc))):
            head += [cell(" " + h, w, label) for h, w in zip(heads, cols, strict=True)] + [Segment(" ")]
        lines.append(Strip(head))
        for start in range(0, len(ecc), per_row):
            segs: list[Segment] = []
            for e in ecc[start:start + per_row]:
                segs += self._cell(e, cols, _delta(e, first, snap), _delta(e, view.prev, snap))
                segs.append(Segment(" "))
            lines.append(Strip(segs))
        return lines

    def _cell(self, e: DeviceEcc, cols: tuple[int, ...], since_start: str, since_last: str) -> list[Segment]:
        bad = self.style("bad") if e.uncorrected else None

        def style(c: int, u: int) -> Style:
            if bad is not None:
                return bad
            return self.style("high" if u else "mid" if c else "dim")

        grew = since_last not in ("-", "+0/+0")
        texts = [(f" ND{e.device}", bad or self.style("label")),
                 (" " + _pair(e.mem_corrected, e.mem_uncorrected), style(e.mem_corrected, e.mem_uncorrected)),
                 (" " + _pair(e.sram_corrected, e.sram_uncorrected), style(e.sram_corrected, e.sram_uncorrected)),
                 (" " + since_start, bad or self.style("value" if since_start not in ("-", "+0/+0") else "dim")),
                 (" " + since_last, bad or self.style("high" if grew else "dim"))]
        return [cell(t, w, s) for (t, s), w in zip(texts, cols, strict=True)]

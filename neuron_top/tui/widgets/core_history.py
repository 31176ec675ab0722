"""NeuronCore utilization over the session's history on the main screen (btop's and nvitop's history beside the
bars): the mean of every core on one line, then a sparkline per device.

The series are kept by ``History`` (``("dev_util", "all")`` and ``("dev_util", d)``, ``derived.device_utils``);
each cell is the mean of two reports (``sparkline.STEP``), so the panel changes every other report, and between two
steps it hands out the same strips (``per_step``): its cost is one sparkline cell per device per step.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.panel import LOAD_BANDS, Panel, load_band
from neuron_top.tui.widgets.sparkline import SteppedSparks, per_cell
from neuron_top.view import View

DEVICE_ROWS = 4
"""Rows of device sparklines: the devices share them (a trn2's 16 are four a row), so the panel is six rows tall
and fits under the left column's panels at 120x40."""
LABEL_W = 6
"""" ND15 ": a device's label, a space either side."""
VALUE_W = 5
"""" 100%": the newest cell's value."""
MIN_SPARK = 3
"""Cells of a device sparkline below which devices take more rows (the "all" line has the long history)."""


def layout(devices: int, width: int) -> tuple[int, int]:
    """(devices a row, cells of each device's sparkline) in ``width`` columns: ``DEVICE_ROWS`` rows while the
    sparklines keep ``MIN_SPARK`` cells, else more rows."""
    per = max(-(-devices // DEVICE_ROWS), 1)
    spark = (width - 1) // per - LABEL_W - VALUE_W
    if spark < MIN_SPARK:
        per = max((width - 1) // (LABEL_W + VALUE_W + MIN_SPARK), 1)
        spark = max((width - 1) // per - LABEL_W - VALUE_W, 1)
    return per, spark


class CoreHistory(Panel[None]):
    """The mean utilization of every core (the grid title's average) and of each device's cores, over time."""

    TITLE = "NeuronCore utilization history"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._devices: SteppedSparks | None = None
        self._all: SteppedSparks | None = None
        """The sparklines of the devices and of the "all" line, as wide as the panel allows (made again when the
        width changes)."""
        self._keys: list[tuple[str, object]] = []

    def rows_needed(self, view: View, width: int) -> int:
        devices = view.snapshot.device_count
        return 2 + (-(-devices // layout(devices, width)[0]) if devices > 1 else 0)

    def rows_within(self, view: View, width: int, free: int) -> int | None:
        """Every device where they fit; else the "all" line alone (a trn2's 16 devices at 120x40)."""
        need = self.rows_needed(view, width)
        return need if need + 1 <= free else 2 if free >= 3 else None

    def cache_extra(self) -> tuple[object, ...]:
        return (self._devices_shown(),)

    def _devices_shown(self) -> bool:
        """Whether the device lines are drawn: always but where the screen found room for less (``room``)."""
        view, room = self.view, self.room
        return room is None or view is None or self.rows_needed(view, self.size.width or 80) + 1 <= room

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        every = per_cell(view.history)
        right = f"avg {fmt.pct(snap.app_util(snap.all))}" + (f", {every} per cell" if every else "")
        lines = [self.title_strip(self.TITLE if width >= 50 else "NeuronCore history", width, right)]
        if not snap.has_neuron:
            return [*lines, LightStrip([Segment(" no NeuronCores", self.style("dim"))])]
        key = ("rows", width, snap.device_count, self._devices_shown())
        return lines + self.per_step(view.history, key, lambda: self._rows(view, width))

    def _rows(self, view: View, width: int) -> list[Strip]:
        history, devices = view.history, view.snapshot.device_count
        label, dim = self.style("label"), self.style("dim")
        bands = [self.style(band) for band in LOAD_BANDS]
        spark_w = max(width - 1 - LABEL_W - VALUE_W, 1)
        if self._all is None or self._all.cells != spark_w:
            self._all = SteppedSparks(spark_w)

        stats = view.snapshot.all.core_stats
        now = view.snapshot.device_utils

        def line(name: str, drawn: tuple[object, str, float | None], current: float | None) -> list[Segment]:
            _, text, newest = drawn
            if newest is None:  # no whole cell yet (a single report): the report's own value, not "-"
                newest = current
            style = dim if newest is None else bands[load_band(newest)]
            value = "-" if newest is None else f"{newest:.0f}%"
            return [Segment(f" {name:<{LABEL_W - 2}} ", label), Segment(text, style),
                    Segment(f"{value:>{VALUE_W}}", style)]

        # rows padded to the edge as built (Panel.padded): drawn as the strips the diff read, not copies
        rows: list[Strip] = [self.padded(line("all", self._all.many(history, [("dev_util", "all")])[0],
                                              stats.util_avg), width)]
        if devices <= 1 or not self._devices_shown():  # one device: its line is the "all" line
            return rows
        k, cells = layout(devices, width)
        if self._devices is None or self._devices.cells != cells:
            self._devices = SteppedSparks(cells)
        if len(self._keys) != devices:
            self._keys = [("dev_util", d) for d in range(devices)]
        drawn = self._devices.many(history, self._keys)
        for first in range(0, devices, k):
            segs: list[Segment] = []
            for d in range(first, min(first + k, devices)):
                segs += line(f"ND{d}", drawn[d], now.get(d))
            rows.append(self.padded(segs, width))
        return rows

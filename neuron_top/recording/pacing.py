"""Recorded time in replay: when each report is due, and which gaps are holes (no UI imports).

A replay holds each report for its recorded gap divided by the speed, so a recording made at a 60 s period plays
a report a minute at 1x and one every 15 s at 4x; slower is never faster. The one exception is a *hole*: a gap
much longer than the recording's usual period (more than ``HOLE_PERIODS`` periods and at least ``HOLE_MIN``
seconds), such as the two hours neuron-monitor was down. Nobody wants to watch it, so it is held at most
``HOLE_HOLD`` seconds of wall time (less at a speed where the gap itself is shorter) and announced.

The usual period is the median of the ``USUAL_WINDOW`` gaps before the hole (after it, at the very start), so a
recording whose period changes half-way (a restart with another config) is judged by its own neighbourhood, and
one other hole nearby does not move the median.

Report times come from the index: ``neuron_top.ts`` where the recording has it, else the sum of the reports'
``period`` fields (``recording.index``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from neuron_top import fmt

__all__ = ["HOLE_HOLD", "HOLE_MIN", "HOLE_PERIODS", "Hole", "Pacer", "gap_text", "hole_after", "report_time",
           "usual_period", "zone"]

HOLE_MIN = 60.0
"""Recorded seconds: a shorter gap is never a hole, whatever the period."""
HOLE_PERIODS = 10.0
"""A hole is a gap longer than this many usual periods (and at least ``HOLE_MIN``)."""
HOLE_HOLD = 1.5
"""Wall seconds a hole is held at most (the acceptance limit is about 2 s)."""
USUAL_WINDOW = 16
"""Gaps whose median is the usual period."""


class Times(Protocol):
    """What pacing needs of a recording index: how many reports, and each one's time."""

    def __len__(self) -> int: ...
    def timestamp(self, i: int) -> float: ...


@dataclass(frozen=True, slots=True)
class Hole:
    """A gap without data between report ``after`` and report ``after + 1``."""

    after: int
    seconds: float
    """Recorded seconds skipped; negative where the recorded clock went back (rotated files concatenated out of
    order, a clock stepped back): the reports stay in file order with their own times."""

    @property
    def back(self) -> bool:
        return self.seconds < 0

    @property
    def text(self) -> str:
        if self.seconds < 0:
            return f"the recorded clock went back {gap_text(-self.seconds)}"
        return f"skipped {gap_text(self.seconds)} without data"


def usual_period(times: Times, i: int) -> float:
    """The recording's usual gap around gap ``i`` (between reports ``i`` and ``i + 1``): the median of the gaps
    before it, or after it when there are too few before; 0.0 with no other gap at all."""
    n = len(times)
    lo = max(0, i - USUAL_WINDOW)
    idx = list(range(lo, i))
    if len(idx) < USUAL_WINDOW // 2:
        idx += list(range(i + 1, min(n - 1, i + 1 + USUAL_WINDOW - len(idx))))
    if not idx:
        return 0.0
    ts = times.timestamp
    return statistics.median([ts(k + 1) - ts(k) for k in idx])


def hole_after(times: Times, i: int) -> Hole | None:
    """The hole between report ``i`` and the next one, if that gap is one (or the clock went back there)."""
    if i + 1 >= len(times) or i < 0:
        return None
    gap = times.timestamp(i + 1) - times.timestamp(i)
    if gap < 0:
        return Hole(i, gap)
    if gap <= HOLE_MIN:  # the common case, decided without looking further
        return None
    if gap <= HOLE_PERIODS * usual_period(times, i):
        return None
    return Hole(i, gap)


class Pacer:
    """When the next report is due, in wall time, from an anchor: the wall time at which one report was due.

    A report ``j`` after the anchor ``a`` is due ``(ts[j] - ts[a]) / speed`` after it: one subtraction from one
    origin, so rounding never accumulates into drift. Crossing a hole re-anchors at the report after it.
    """

    def __init__(self, times: Times, clock: Callable[[], float]) -> None:
        self.times = times
        self.clock = clock
        self.anchor: tuple[float, int] | None = None
        """(wall time, report) pacing counts from; None until the first report is shown."""

    def reset(self) -> None:
        """Start over at the next report shown (a seek, a pause, a new speed)."""
        self.anchor = None

    def start(self, i: int, at: float | None = None) -> None:
        """Report ``i`` is shown now (or at ``at``): later ones are due from here."""
        self.anchor = (self.clock() if at is None else at, i)

    def due(self, j: int, speed: float) -> tuple[float, Hole | None]:
        """The wall time report ``j`` (after the anchor) is due, and the hole just before it, if any."""
        assert self.anchor is not None
        wall, a = self.anchor
        ts = self.times.timestamp
        hole = hole_after(self.times, j - 1) if j - 1 >= a else None
        if hole is None:
            return wall + (ts(j) - ts(a)) / speed, None
        before = wall + (ts(j - 1) - ts(a)) / speed
        if hole.back:  # the clock went back: the next report a usual period later, then count from it
            return before + min(max(usual_period(self.times, j - 1), 0.0) / speed, HOLE_HOLD), hole
        return before + min(hole.seconds / speed, HOLE_HOLD), hole


def gap_text(seconds: float) -> str:
    """A span as people say it in a sentence: "45 s", "4 m 05 s", "2 h 03 m", "3 d 04 h" (``fmt.duration``)."""
    return fmt.duration(seconds, spaced=True)


def zone(ts: float) -> str:
    """The local time zone's name at ``ts`` ("UTC", "JST", "CET"), or its offset when it has none: shown with
    every recorded time, so the same recording read in Tokyo and in UTC cannot be misread."""
    lt = time.localtime(ts)
    return lt.tm_zone or time.strftime("%z", lt)


def report_time(ts: float, wallclock: bool) -> str:
    """A report's time as the header, ``--once`` and the go-to prompt show it: ``fmt.moment`` (the local date
    and time, whole seconds; or the time since the start) with the zone."""
    return fmt.moment(ts, wallclock) + (" " + zone(ts) if wallclock else "")

"""When the header looks again at how old the last report is ("updated Ns ago").

Why not a clock that ticks every second: at one report a second it woke the UI thread a second time each second
only to find "0s ago" unchanged, a measurable share of the dashboard's CPU (``bench_ab.py`` against a tree
without it). Here the next look is ``AGE_GRACE`` seconds after each report, then every ``AGE_TICK`` seconds until
the next one: while reports come on time the UI thread is not woken for it at all, and a late report shows its age
as it grows, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

AGE_GRACE = 1.5
"""Seconds after a report before its age is looked at."""
AGE_TICK = 1.0
"""Seconds between two looks while no report comes."""


class AgeClock:
    """Calls ``look`` when the last report's age is due to be shown again. A bare asyncio timer, cancelled and
    made again on every report for the price of a heap push (a Textual timer is a task of its own)."""

    def __init__(self, look: Callable[[], object]) -> None:
        self._look = look
        self._timer: asyncio.TimerHandle | None = None

    def report_came(self) -> None:
        """A report just came: look ``AGE_GRACE`` seconds from now, unless another comes first."""
        self._arm(AGE_GRACE)

    def again(self) -> None:
        """Look once more in ``AGE_TICK`` seconds (after a look, or at the end of a pause)."""
        self._arm(AGE_TICK)

    def _arm(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not running yet (or any more): the next report arms it
            return
        self._timer = loop.call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        self._look()

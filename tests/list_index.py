"""A recording index over a list of report bytes and their times: the whole ``recording.index.Index`` protocol,
without a file or a thread, for controller and screen tests."""

from __future__ import annotations

import bisect

from neuron_top.sources.base import Skipped


class ListIndex:
    """``Index`` over ``reports`` and ``times`` (non-decreasing). ``done`` False: a recording still being indexed."""

    def __init__(self, reports: list[bytes], times: list[float], done: bool = True, name: str = "list") -> None:
        self.reports = reports
        self.times = times
        self._done = done
        self.name = name
        self.follow = not done
        self.generation = 0
        self.skipped = 0
        self.wallclock = True
        self.error: str | None = None
        self.progress_value = 1.0

    @property
    def done(self) -> bool:
        return self._done

    @done.setter
    def done(self, value: bool) -> None:
        self._done = value

    @property
    def finished(self) -> bool:
        return self._done

    @property
    def progress(self) -> float:
        return 1.0 if self._done else self.progress_value

    @property
    def spooled(self) -> bool:
        return False

    def __len__(self) -> int:
        return len(self.reports)

    def get(self, i: int) -> bytes:
        return self.reports[i]

    def span(self, i: int) -> tuple[int, int]:
        return i, i + 1

    def timestamp(self, i: int) -> float:
        return self.times[i]

    def find_time(self, t: float) -> int:
        return min(bisect.bisect_left(self.times, t, 0, len(self)), len(self) - 1)

    def find_at_or_before(self, t: float) -> int:
        return max(bisect.bisect_right(self.times, t, 0, len(self)) - 1, 0)

    def skips(self, start: int = 0) -> list[tuple[int, Skipped]]:
        return []

    def take_notices(self) -> list[str]:
        return []

    def refresh(self) -> int:
        return len(self)

    def wait(self, timeout: float | None = None) -> bool:
        return self._done

    def wait_for(self, i: int, timeout: float | None = None) -> bool:
        return i < len(self)

    def close(self) -> None:
        pass

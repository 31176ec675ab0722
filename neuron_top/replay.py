"""Time travel through a recording: position, pacing, markers and history windows (no UI imports).

The UI owns one ``ReplayController``. It never plays by sleeping: the UI asks ``due(now)`` which reports are due
and schedules its next wake-up with ``next_delay(now)``, so a paused replay costs nothing. Seeking rebuilds the
history from the reports before the new position, so sparklines are never empty after a jump.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .decode import DecodeError, decode_report
from .snapshot import Snapshot, finite

SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0)
MAX_FRAME_REPORTS = 200
"""At high speed several reports are due per frame; they all go into history, one frame is drawn."""


class Index(Protocol):
    """What the controller needs of a recording index (``sources.recording.RecordingIndex``)."""

    def __len__(self) -> int: ...
    def get(self, i: int) -> bytes: ...
    def timestamp(self, i: int) -> float: ...
    def find_time(self, t: float) -> int: ...

    @property
    def done(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Marker:
    index: int
    kind: str
    """"ecc", "error", "app+", "app-", "stall", "group-error"."""
    text: str


MARKER_KINDS = ("ecc", "error", "app+", "app-", "stall", "group-error")


def markers_between(prev: Snapshot | None, cur: Snapshot, index: int) -> list[Marker]:
    """What happened at report ``index`` compared with the report before it."""
    out: list[Marker] = []
    for e in cur.ecc:  # ECC counts are the events of this report's period
        if e.uncorrected:
            out.append(Marker(index, "ecc", f"{e.uncorrected} uncorrected ECC on ND{e.device}"))
        elif e.corrected:
            out.append(Marker(index, "ecc", f"{e.corrected} corrected ECC on ND{e.device}"))
    if prev is not None:
        old = {a.pid: a for a in prev.apps}
        new = {a.pid: a for a in cur.apps}
        for pid in new.keys() - old.keys():
            out.append(Marker(index, "app+", f"app {new[pid].label} (pid {pid}) started"))
        for pid in old.keys() - new.keys():
            out.append(Marker(index, "app-", f"app {old[pid].label} (pid {pid}) stopped"))
        for pid in new.keys() & old.keys():
            was, now = _busy(old[pid]), _busy(new[pid])
            if was is not None and was >= 5.0 and now is not None and now == 0.0:
                out.append(Marker(index, "stall", f"app {new[pid].label}: utilization fell to 0%"))
        if {g.where for g in cur.group_statuses} - {g.where for g in prev.group_statuses}:
            g = next(g for g in cur.group_statuses if g.where not in {x.where for x in prev.group_statuses})
            out.append(Marker(index, "group-error", f"{g.where}: {g.error}"))
    for a in cur.apps:
        ex, errs = a.exec_summary, sum(a.error_summary.values())
        bad = errs + sum(ex.get(k, 0) for k in ("completed_with_err", "completed_with_num_err", "timed_out",
                                                  "failed_to_queue", "incorrect_input"))
        if bad:
            out.append(Marker(index, "error", f"app {a.label}: {bad} execution errors"))
            break
    return out


def _busy(app) -> float | None:
    vals = [finite(c.neuroncore_utilization) for c in app.cores.values()]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


class ReplayController:
    def __init__(self, index: Index, *, speed: float = 1.0, start: int = 0, cache: int = 256,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.index = index
        self.speed = speed
        self.position = max(0, start)
        self.playing = True
        self.clock = clock
        self.bad = 0
        """Reports that were indexed but did not decode (counted once each)."""
        self._bad_seen: set[int] = set()
        self._cache: OrderedDict[int, Snapshot | None] = OrderedDict()
        self._cache_size = cache
        self._origin: tuple[float, float] | None = None  # (clock, report time) playback started from
        self.markers: list[Marker] = []
        self.scanned = 0
        """Reports scanned for markers so far (the scan runs in a background thread)."""
        self._scan_stop = threading.Event()
        self.mark_in: int | None = None

    # --- reading ---
    def __len__(self) -> int:
        return len(self.index)

    def snapshot(self, i: int) -> Snapshot | None:
        """Report ``i`` decoded (cached); None when it does not decode."""
        if i in self._cache:
            self._cache.move_to_end(i)
            return self._cache[i]
        try:
            report, problems = decode_report(self.index.get(i))
            snap: Snapshot | None = Snapshot(report, self._ts(i, report), i + 1, problems)
        except (DecodeError, IndexError):
            snap = None
            if i not in self._bad_seen:
                self._bad_seen.add(i)
                self.bad += 1
        self._cache[i] = snap
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return snap

    def _ts(self, i: int, report) -> float:
        if report.neuron_top is not None and report.neuron_top.ts is not None:
            return report.neuron_top.ts
        return self.index.timestamp(i)

    def window(self, end: int, n: int) -> list[Snapshot]:
        """Up to ``n`` decodable snapshots ending at report ``end`` (inclusive), oldest first."""
        out = [self.snapshot(i) for i in range(max(0, end - n + 1), end + 1)]
        return [s for s in out if s is not None]

    def current(self) -> Snapshot | None:
        if len(self.index) == 0:
            return None
        return self.snapshot(min(self.position, len(self.index) - 1))

    # --- moving ---
    def seek(self, i: int) -> int:
        n = len(self.index)
        self.position = max(0, min(i, n - 1)) if n else 0
        self._origin = None
        return self.position

    def step(self, delta: int) -> int:
        return self.seek(self.position + delta)

    def seek_time(self, t: float) -> int:
        return self.seek(self.index.find_time(t))

    def step_seconds(self, seconds: float) -> int:
        if len(self.index) == 0:
            return 0
        return self.seek_time(self.index.timestamp(self.position) + seconds)

    def set_speed(self, direction: int) -> float:
        """Next or previous speed from SPEEDS (0.25x to 100x)."""
        cur = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.speed))
        self.speed = SPEEDS[max(0, min(cur + direction, len(SPEEDS) - 1))]
        self._origin = None
        return self.speed

    def toggle(self) -> bool:
        self.playing = not self.playing
        self._origin = None
        return self.playing

    def at_end(self) -> bool:
        return self.position >= len(self.index) - 1

    # --- playing ---
    def due(self) -> list[int]:
        """Advance to the report due now; return the reports passed over (in order, at most MAX_FRAME_REPORTS)."""
        n = len(self.index)
        if not self.playing or n == 0 or self.position >= n - 1:
            return []
        now = self.clock()
        if self._origin is None:
            self._origin = (now, self.index.timestamp(self.position))
        target_t = self._origin[1] + (now - self._origin[0]) * self.speed
        passed = []
        i = self.position
        while i + 1 < n and self.index.timestamp(i + 1) <= target_t and len(passed) < MAX_FRAME_REPORTS:
            i += 1
            passed.append(i)
        if passed:
            self.position = i
            if len(passed) >= MAX_FRAME_REPORTS:  # falling behind: restart pacing from here
                self._origin = None
        elif i + 1 < n and self.index.timestamp(i + 1) - target_t > 10.0 * self.speed:
            # a long gap in the recording: skip the dead time
            self.position = i + 1
            self._origin = None
            passed.append(i + 1)
        return passed

    def next_delay(self) -> float | None:
        """Seconds until the next report is due, or None when paused or at the end."""
        n = len(self.index)
        if not self.playing or self.position >= n - 1:
            return None
        if self._origin is None:
            return 0.0
        now = self.clock()
        target = self._origin[0] + (self.index.timestamp(self.position + 1) - self._origin[1]) / self.speed
        return max(0.0, min(target - now, 10.0))

    # --- markers ---
    def scan_markers(self, progress: Callable[[], None] | None = None, every: int = 500) -> None:
        """Decode the whole recording once (in a background thread) and collect markers."""
        prev: Snapshot | None = None
        i = 0
        while not self._scan_stop.is_set():
            if i >= len(self.index):
                if getattr(self.index, "done", True):
                    break
                self._scan_stop.wait(0.2)
                continue
            try:
                report, problems = decode_report(self.index.get(i))
                snap = Snapshot(report, 0.0, i + 1, problems)
            except (DecodeError, IndexError):
                i += 1
                continue
            self.markers.extend(markers_between(prev, snap, i))
            prev = snap
            i += 1
            self.scanned = i
            if progress is not None and i % every == 0:
                progress()
        if progress is not None:
            progress()

    def stop_scan(self) -> None:
        self._scan_stop.set()

    def next_marker(self, direction: int) -> Marker | None:
        ms = self.markers
        if direction > 0:
            return next((m for m in ms if m.index > self.position), None)
        return next((m for m in reversed(ms) if m.index < self.position), None)

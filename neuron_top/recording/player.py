"""Time travel through a recording: position, pacing, markers and history windows (no UI imports).

The UI owns one ``ReplayController``. It never plays by sleeping: the UI asks ``due(now)`` which reports are due
and schedules its next wake-up with ``next_delay(now)``, so a paused replay costs nothing. Seeking rebuilds the
history from the reports before the new position, so sparklines are never empty after a jump.
"""

from __future__ import annotations

import bisect
import contextlib
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from operator import attrgetter

from neuron_top import fmt
from neuron_top.decode import DecodeError
from neuron_top.derived import NO_EXECUTIONS, add_executions
from neuron_top.history import ExecTotals
from neuron_top.recording.index import Index
from neuron_top.recording.markers import Facts, Marker, brief_facts, hole_marker, markers_between
from neuron_top.recording.pacing import Hole, Pacer, hole_after, usual_period, zone
from neuron_top.recording.totals import AppKey, AppTotals, RunningTotals, Totals
from neuron_top.selection import matches
from neuron_top.snapshot import Snapshot, snapshot_from

__all__ = [
    "GOTO_HINT", "MAX_FRAME_REPORTS", "SPEEDS", "GotoError", "Index", "Marker", "ReplayController", "clamp_speed",
    "goto", "markers_between", "parse_goto", "resolve_goto", "speed_note",
]

SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0)
_AT = attrgetter("index")
MAX_FRAME_REPORTS = 200
"""At high speed several reports are due per frame; they all go into history, one frame is drawn."""


def markers_at(index: Index, i: int, prev: Facts | None) -> tuple[list[Marker], Facts | None]:
    """The markers of report ``i`` (a hole before it, then what changed since ``prev``, the facts of the last
    report that decoded) and its own facts (None when it does not decode)."""
    found: list[Marker] = []
    hole = hole_after(index, i - 1) if i else None
    if hole is not None:
        found.append(hole_marker(hole))
    try:
        facts = brief_facts(index.get(i), i + 1)
    except (DecodeError, IndexError, OSError):
        return found, None
    found.extend(markers_between(prev, facts, i))
    return found, facts


def scan_range(index: Index, start: int, stop: int,
               each: Callable[[int, Facts | None], None] | None = None) -> tuple[list[Marker], int]:
    """Markers of reports ``[start, stop)`` and how many did not decode, as a whole scan finds them: the facts
    of the last report before ``start`` that decodes are taken first (what a report is compared with).
    ``each(i, facts)`` is called for every report (facts None when it did not decode): ``--summary`` reads
    its counts there."""
    prev: Facts | None = None
    k = start - 1
    while k >= 0 and prev is None:
        with contextlib.suppress(DecodeError, IndexError, OSError):
            prev = brief_facts(index.get(k), k + 1)
        k -= 1
    out: list[Marker] = []
    bad = 0
    for i in range(start, stop):
        found, facts = markers_at(index, i, prev)
        out.extend(found)
        if each is not None:
            each(i, facts)
        if facts is None:
            bad += 1
        else:
            prev = facts
    return out, bad


def clamp_speed(speed: float) -> float:
    """Speeds outside 0.25x..100x (or not a number) are brought to the nearest end."""
    if speed != speed:  # NaN
        return 1.0
    return min(max(speed, SPEEDS[0]), SPEEDS[-1])


def speed_note(asked: float, got: float) -> str:
    """Why the speed is not what was asked (``--speed 1000``: "the fastest is 100x")."""
    if asked != asked:
        return f"speed {asked} is not a number: playing at {got:g}x"
    return f"speed {asked:g}x is out of range: playing at {got:g}x, the " + \
        ("fastest" if asked > got else "slowest")


class ReplayController:
    """Where a replay is and what is due; shared by the UI thread and one marker-scan thread.

    Moves (seek, step, due) happen on the UI thread only. The decoded-snapshot cache is the one thing both
    threads touch (the scan never uses it; a history rebuild in a worker does), so it is guarded by a lock.

    Args:
        index: an index from ``open_recording`` (anything with ``Index``'s methods).
        speed: playback speed, clamped to 0.25-100.
        start: the first report shown (0-based).
        cache: decoded snapshots kept for moving back and forth.
        clock: monotonic time (injected by tests).
    """

    def __init__(self, index: Index, *, speed: float = 1.0, start: int = 0, cache: int = 64,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.index = index
        self.speed = clamp_speed(speed)
        self.notes: list[str] = []
        """What the screen says once when it opens (a speed that was brought into range)."""
        if self.speed != speed:
            self.notes.append(speed_note(speed, self.speed))
        self.position = max(0, start)
        """Report shown now; may point past the reports indexed so far until ``settle`` clamps it."""
        self.playing = True
        self.clock = clock
        self.bad = 0
        """Reports that were indexed but did not decode (counted once each)."""
        self._bad_seen: set[int] = set()
        self._cache: OrderedDict[int, Snapshot | None] = OrderedDict()
        self._cache_size = cache
        self._lock = threading.Lock()
        self._pacer = Pacer(index, clock)
        self._holes: list[Hole] = []
        self.markers: list[Marker] = []
        """Found so far, in report order (appended by the scan thread; readers only iterate)."""
        self._scan_gen = 0
        self.scanned = 0
        """Reports scanned for markers so far (the scan runs in a background thread)."""
        self.scan_bad = 0
        """Reports the scan could not decode."""
        self._scan_prev: Facts | None = None
        self._scan_stop = threading.Event()
        self._totals = RunningTotals(self._facts)
        self._selected: dict[tuple[re.Pattern[str], AppKey, int], bool] = {}
        """``_selects``'s answers."""
        self.unit = "report"
        """What one line of the recording is, for notes ("refresh" in a fleet recording)."""
        self.mark_in: int | None = None
        """Start of a range marked with ``m`` (for writing it out), or None."""

    # --- reading ---
    def __len__(self) -> int:
        return len(self.index)

    def snapshot(self, i: int) -> Snapshot | None:
        """Report ``i`` decoded (cached); None when it does not decode or is not indexed (yet)."""
        if not 0 <= i < len(self.index):
            return None  # not an error: it may be indexed later, so neither counted nor cached
        with self._lock:
            if i in self._cache:
                self._cache.move_to_end(i)
                return self._cache[i]
        try:
            snap: Snapshot | None = snapshot_from(self.index.get(i), self.index.timestamp(i), i + 1)
        except (DecodeError, IndexError, OSError):
            snap = None
        with self._lock:
            if snap is None and i not in self._bad_seen:
                self._bad_seen.add(i)
                self.bad += 1
            self._cache[i] = snap
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return snap


    def _facts(self, i: int) -> Facts | None:
        try:
            return brief_facts(self.index.get(i), i + 1)
        except (DecodeError, IndexError, OSError):
            return None

    def totals_at(self, i: int) -> Totals | None:
        """Counts since the start of the recording up to report ``i`` (ECC per device, failed executions): exact
        at any position, whatever the history window holds; None until the marker scan has passed report ``i``."""
        return self._totals.at(i)

    def since_start(self, i: int) -> ExecTotals | None:
        """Executions since the start of the recording up to report ``i``, of every app, and (``narrow``) of the
        apps a tag filter selects: in each report, those it selects there (``selection.matches``, the filter's one
        rule, on the app as it was in the last report it was in up to ``i``, since its pod may be what matches).
        None until the marker scan has passed report ``i``."""
        t = self._totals.at(i)
        if t is None:
            return None
        kept: dict[str, ExecTotals] = {}

        def narrow(text: str) -> ExecTotals:
            if text not in kept:
                apps = self._totals.apps_at(i) or {}
                pattern = re.compile(text)
                executions, errors = NO_EXECUTIONS, 0
                for key, a in apps.items():
                    if self._selects(pattern, key, a):
                        executions, errors = add_executions(executions, a.executions), errors + a.errors
                kept[text] = ExecTotals(executions, errors, text)
            return kept[text]

        return ExecTotals(t.executions, t.errors, None, narrow)

    def _selects(self, pattern: re.Pattern[str], key: AppKey, a: AppTotals) -> bool:
        """Whether ``pattern`` selects the app ``key`` as it was in report ``a.last`` (kept: its tag and pid do
        not change, nor its pod while it runs; ``restart`` forgets them)."""
        k = (pattern, key, a.last)
        if (got := self._selected.get(k)) is None:
            snap = self.snapshot(a.last)
            app = next((x for x in snap.apps if (x.pid, x.tag) == key), None) if snap is not None else None
            got = (matches(pattern, snap, app) if snap is not None and app is not None
                   else bool(pattern.search(key[1]) or pattern.search(str(key[0]))))
            if len(self._selected) > 4096:
                self._selected.clear()
            self._selected[k] = got
        return got

    def window(self, end: int, n: int, budget: float | None = None) -> list[Snapshot]:
        """Up to ``n`` decodable snapshots ending at report ``end`` (inclusive), oldest first: the history
        a seek rebuilds, so sparklines show the time around the new position, never nothing.

        ``budget`` (seconds of real time): stop early, keeping the newest reports, once it is spent (the report
        at ``end`` is always decoded). A seek stays quick on big reports; the rest is filled in later."""
        deadline = None if budget is None else time.perf_counter() + budget
        out: list[Snapshot] = []
        for i in range(end, max(0, end - n + 1) - 1, -1):
            snap = self.snapshot(i)
            if snap is not None:
                out.append(snap)
            if deadline is not None and time.perf_counter() > deadline:
                break
        out.reverse()
        return out

    def current(self) -> Snapshot | None:
        if len(self.index) == 0:
            return None
        return self.snapshot(min(self.position, len(self.index) - 1))

    def settle(self) -> None:
        """Clamp a position past the end (``--start N`` before N was indexed) once the index has finished."""
        n = len(self.index)
        if n and self.position > n - 1 and self.index.done:
            self.seek(n - 1)

    # --- moving ---
    def seek(self, i: int) -> int:
        """Show report ``i`` now: later reports are due from this moment (pacing anchored here at once, not at
        the next wake-up: following a live recording at its end, the report that arrives a period later is due
        when it arrives, not a period after that)."""
        n = len(self.index)
        self.position = max(0, min(i, n - 1)) if n else 0
        self._anchor_here()
        return self.position

    def _anchor_here(self) -> None:
        if self.playing and len(self.index):
            self._pacer.start(self.position)
        else:
            self._pacer.reset()

    def step(self, delta: int) -> int:
        return self.seek(self.position + delta)

    def tolerance(self) -> float:
        """Seconds a time target may be short of a report and still land on it: real reports come a few ms late or
        early (jitter, a period of 2.0003 s), so "+60 s" from one report must reach the report a period later,
        not stop one short. A quarter of the usual period here, at most half a second."""
        n = len(self.index)
        if n < 2:
            return 0.0
        return min(0.5, max(usual_period(self.index, min(self.position, n - 2)), 0.0) / 4)

    def at_or_before(self, t: float) -> int:
        """The last report at or before time ``t`` (within ``tolerance``), the first one if all are after it: where
        every move to a time lands (as in dolphie), so going there and back returns to the same report."""
        return self.index.find_at_or_before(t + self.tolerance())

    def seek_time(self, t: float) -> int:
        """The first report at or after time ``t`` (the last one if ``t`` is past the end)."""
        if len(self.index) == 0:
            return self.seek(0)
        return self.seek(self.index.find_time(t))

    def step_seconds(self, seconds: float) -> int:
        """Move by recorded time, to the last report at or before the time (``at_or_before``): a jump back over a
        gap lands before the gap; forward, when no report is that close, the next report (a move never stays
        put while there is one)."""
        n = len(self.index)
        if n == 0:
            return 0
        pos = min(self.position, n - 1)
        j = self.at_or_before(self.index.timestamp(pos) + seconds)
        if seconds > 0 and j <= pos:
            j = min(pos + 1, n - 1)
        return self.seek(j)

    def set_speed(self, direction: int) -> float:
        """Next or previous speed from SPEEDS (0.25x to 100x)."""
        cur = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.speed))
        self.speed = SPEEDS[max(0, min(cur + direction, len(SPEEDS) - 1))]
        self._anchor_here()
        return self.speed

    def toggle(self) -> bool:
        self.playing = not self.playing
        self._anchor_here()
        return self.playing

    def at_end(self) -> bool:
        return self.position >= len(self.index) - 1

    # --- playing ---
    def due(self) -> list[int]:
        """Advance to the report due now; return the reports passed over (in order, at most MAX_FRAME_REPORTS).

        Each report is held for its recorded gap divided by the speed; a hole is held at most ``HOLE_HOLD``
        seconds and noted for ``take_holes``."""
        n = len(self.index)
        if not self.playing or n == 0 or self.position >= n - 1:
            return []
        now = self.clock()
        pacer = self._pacer
        if pacer.anchor is None:
            pacer.start(self.position, now)
            return []
        passed: list[int] = []
        i = self.position
        while i + 1 < n and len(passed) < MAX_FRAME_REPORTS:
            at, hole = pacer.due(i + 1, self.speed)
            if at > now:
                break
            i += 1
            passed.append(i)
            if hole is not None:
                self._holes.append(hole)
                pacer.start(i, at)  # the hole is over: count on from the report after it
        if passed:
            self.position = i
            if len(passed) >= MAX_FRAME_REPORTS:  # falling behind: restart pacing from here
                pacer.start(i, now)
        return passed

    def next_delay(self) -> float | None:
        """Seconds until the next report is due, or None when paused or at the end (nothing to wake for)."""
        n = len(self.index)
        if not self.playing or self.position >= n - 1:
            return None
        if self._pacer.anchor is None:
            return 0.0
        at, _ = self._pacer.due(self.position + 1, self.speed)
        return max(0.0, at - self.clock())

    def hole_ahead(self) -> Hole | None:
        """The hole right after the report shown, if playback is holding before one."""
        return hole_after(self.index, self.position) if len(self.index) else None

    def take_holes(self) -> list[Hole]:
        """Holes crossed while playing since the last call (to announce each once)."""
        holes, self._holes = self._holes, []
        return holes

    # --- markers ---
    def scan_markers(self, progress: Callable[[], None] | None = None, every: int = 500) -> None:
        """Decode the recording once (in a background thread) and collect markers, holes included.

        Resumable: a second call carries on from ``scanned`` (a followed recording that grew). A scan started
        before ``restart`` (the file was replaced) stops without adding anything. ``stop_scan`` is final: a stop
        that comes before the scan starts (the screen closed at once) is kept, so the scan never runs."""
        gen = self._scan_gen
        prev = self._scan_prev
        i = self.scanned
        index = self.index
        while not self._scan_stop.is_set() and gen == self._scan_gen:
            if i >= len(index):
                if index.done:
                    break
                index.wait_for(i, 0.2)  # wakes as soon as the report is indexed
                continue
            found, facts = markers_at(index, i, prev)
            if facts is None:
                self.scan_bad += 1
            else:
                prev = facts
            if gen != self._scan_gen:
                return
            if found:
                self.markers.extend(found)
            self._totals.add(facts)
            self._scan_prev = prev
            i += 1
            self.scanned = i
            if progress is not None and i % every == 0:
                progress()
        if progress is not None:
            progress()

    def stop_scan(self) -> None:
        """Stop the scan for good (the replay is closing), also one not started yet."""
        self._scan_stop.set()

    @property
    def scan_stop(self) -> threading.Event:
        """Set by ``stop_scan``: a scan of another kind of recording (fleet frames) waits on it too."""
        return self._scan_stop

    @property
    def scan_generation(self) -> int:
        """Changes when the recording is replaced (``restart``): a scan takes it when it starts."""
        return self._scan_gen

    def scan_cancelled(self, generation: int) -> bool:
        """Whether a scan started at ``generation`` should stop: ``stop_scan`` ran (before or after it started),
        or the recording was replaced since."""
        return self._scan_stop.is_set() or generation != self._scan_gen

    def restart(self) -> None:
        """The recording was replaced under us (a followed file rotated or truncated): forget its markers and
        decoded reports, and stand at its last report (following) or its first."""
        following = self.at_end()
        self._scan_gen += 1  # the running scan sees it and stops; a new one may start
        self.markers = []
        self.scanned = 0
        self.scan_bad = 0
        self._scan_prev = None
        self._totals = RunningTotals(self._facts)
        self._selected = {}
        self.mark_in = None
        with self._lock:
            self._cache.clear()
        self._bad_seen.clear()
        self.bad = 0
        self._holes = []
        self.seek(len(self.index) - 1 if following else 0)

    def next_marker(self, direction: int, kinds: Collection[str] | None = None) -> Marker | None:
        """The next marker after (``direction`` > 0) or before the position, of one of ``kinds`` (any if None).

        Markers are in report order (a scan appends them in order), so the position is found by bisection."""
        ms = self.markers
        n = len(ms)  # a scan thread may append meanwhile: look at what is there now
        if direction > 0:
            k = bisect.bisect_right(ms, self.position, 0, n, key=_AT)
            rng: Iterable[int] = range(k, n)
        else:
            k = bisect.bisect_left(ms, self.position, 0, n, key=_AT)
            rng = range(k - 1, -1, -1)
        return next((ms[j] for j in rng if kinds is None or ms[j].kind in kinds), None)


GOTO_HINT = "number · HH:MM[:SS] · 2026-01-01 03:00:00 · +90s/-2m · 50% · Esc leaves"
"""What the go-to prompt accepts, shown under it."""


class GotoError(ValueError):
    """Why a go-to entry was not understood or is not in the recording (one line for the prompt)."""


_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?")
_ZONE = re.compile(r"\s+([A-Za-z][A-Za-z0-9+-]{0,9})\Z")
"""The zone the header prints after a time ("2026-01-01 03:00:00 UTC"), pasted back into the prompt."""


def resolve_goto(text: str, c: ReplayController) -> int:
    """The report a go-to entry means; raises ``GotoError`` saying why not (``goto``, without its note)."""
    return goto(text, c)[0]


def goto(text: str, c: ReplayController) -> tuple[int, str]:
    """The report a go-to entry means and a note when it was brought into the recording ("report 1802 is past
    the end: the last one, 1801"); raises ``GotoError`` saying why not. A time lands on the last report at or
    before it (``ReplayController.at_or_before``).

    * ``123``: report 123 (1-based, as the header counts; a number past the end is the last report);
    * ``50%``: that far into the recording;
    * ``+90s``, ``-2m``, ``+1h30m``: recorded time from the current report;
    * ``03:00`` or ``03:00:00``: the next time the clock showed it, at or after the current report, within the
      recording; else its first one (a 22:00 -> 06:20 recording has 03:00 on the second day, not the first);
      in a recording without wall-clock times (raw neuron-monitor output), time since its start;
    * ``2026-01-01 03:00:00`` (the header's own format; ``T`` or a space between, seconds optional): that moment.
    """
    from neuron_top.config import ConfigError, parse_period

    s = text.strip()
    n = len(c)
    if n == 0:
        raise GotoError("no reports yet")
    if not s:
        raise GotoError("type a report number, a time or a percentage")
    index = c.index
    if s.isascii() and s.isdigit():  # not "²", which isdigit() but int() refuses
        k = int(s)
        if k > n:  # past the end: the last one, as in less, and said
            return n - 1, f"{c.unit} {k:,} is past the end: the last one, {n:,}"
        if k < 1:
            return 0, f"{c.unit}s count from 1: the first one"
        return k - 1, ""
    if s.endswith("%"):
        try:
            pct = float(s[:-1])
        except ValueError:
            raise GotoError(f"not a percentage: {s}") from None
        if not 0.0 <= pct <= 100.0:  # NaN too
            raise GotoError("a percentage from 0% to 100%")
        return max(0, min(int(pct / 100 * (n - 1)), n - 1)), ""
    cur = index.timestamp(min(c.position, n - 1))
    first, last = index.timestamp(0), index.timestamp(n - 1)
    if s[0] in "+-":
        try:
            secs = parse_period(s[1:])
        except ConfigError:
            raise GotoError(f"not a time span like +90s or -2m: {s}") from None
        t = cur + secs if s[0] == "+" else cur - secs
        j = c.at_or_before(t)
        if s[0] == "+" and j <= c.position < n - 1 and secs > 0:
            j = c.position + 1  # no report that close: the next one
        if t > last + c.tolerance():
            return n - 1, f"{s} is past the end: the last {c.unit}"
        if t < first - c.tolerance():
            return 0, f"{s} is before the start: the first {c.unit}"
        return j, ""
    first_s = math.floor(first)  # the header prints whole seconds: its first time is in the recording
    wall = index.wallclock
    z = _ZONE.search(s)
    if z is not None and wall:  # the header's time with its zone: the zone must be the one times are shown in
        if z[1] not in (zone(first), zone(last)):
            raise GotoError(f"times here are in {zone(cur)} (the TZ environment variable changes it), not {z[1]}")
        s = s[: z.start()]
    m = _DATETIME.fullmatch(s)
    if m:
        if not wall:
            raise GotoError("this recording has no wall-clock times (raw neuron-monitor output): use HH:MM:SS "
                            "since its start")
        y, mo, d, h, mi, se = (int(g or 0) for g in m.groups())
        at = _local(y, mo, d, h, mi, se)
        if at is None or not first_s <= at <= last:
            raise GotoError(f"{s} is not in the recording ({_span(first, last)})")
        return c.at_or_before(at), ""
    m = _TIME.fullmatch(s)
    if m:
        h, mi, se = int(m[1]), int(m[2]), int(m[3] or 0)
        if h > 23 or mi > 59 or se > 59:
            raise GotoError(f"not a time of day: {s}")
        if not wall:
            t = float(h * 3600 + mi * 60 + se)
            if t > last:  # H:MM[:SS] from the start, as the header's +0:01:10: "2:00" is 2 hours, not 2 minutes
                raise GotoError(f"{s} is {fmt.duration(t, spaced=True)} from its start (H:MM[:SS]); the recording "
                                f"is {fmt.duration(last - first, spaced=True)} long")
            return c.at_or_before(t), ""
        when = _next_clock(math.floor(cur), last, h, mi, se)
        if when is None:
            when = _next_clock(first_s, last, h, mi, se)
        if when is None:
            raise GotoError(f"{s} is not in the recording ({_span(first, last)})")
        return c.at_or_before(when), ""
    raise GotoError(f"not a report number, time or percentage: {s}")


def parse_goto(text: str, c: ReplayController) -> int | None:
    """``resolve_goto``, None instead of the reason."""
    try:
        return resolve_goto(text, c)
    except GotoError:
        return None


def _local(y: int, mo: int, d: int, h: int, mi: int, se: int) -> float | None:
    """Unix time of a local date and time (as the header shows them), or None if there is no such date."""
    try:
        time.strptime(f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{se:02d}", "%Y-%m-%d %H:%M:%S")
        return time.mktime((y, mo, d, h, mi, se, 0, 0, -1))
    except (ValueError, OverflowError):
        return None


def _next_clock(start: float, last: float, h: int, mi: int, se: int) -> float | None:
    """The first moment at or after ``start`` and not after ``last`` that the local clock reads h:mi:se."""
    day = time.localtime(start)
    for k in range(int((last - start) // 86400) + 2):
        lt = time.localtime(time.mktime((day.tm_year, day.tm_mon, day.tm_mday + k, 12, 0, 0, 0, 0, -1)))
        t = _local(lt.tm_year, lt.tm_mon, lt.tm_mday, h, mi, se)
        if t is not None and start <= t <= last:
            return t
        if t is not None and t > last:
            return None
    return None


def _span(first: float, last: float) -> str:
    return f"{fmt.moment(first, True)} to {fmt.moment(last, True)}"

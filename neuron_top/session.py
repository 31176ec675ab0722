"""One source's state, fed the same way live and in replay (no UI imports).

A ``Session`` is what a screen shows about one host: its history, the latest and previous snapshots, where the data
comes from and in what state (``SourceStatus``), how much input was skipped, and for a replay where in the
recording it is. Live, its feed (``neuron_top.feed``) applies events to it; in replay, the player hands it the
reports it reaches and rebuilds its history after a seek. The dashboard shows one session; the fleet view holds
many, each fed on its own.

Owned by one thread (the UI's): feed threads hand over immutable events, never touch a session.
"""

from __future__ import annotations

import signal
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from neuron_top.alerts import new_uncorrected
from neuron_top.feed import FeedEvent, RecordingError, Report, SkippedInput, SourceTally, StatusChanged
from neuron_top.history import History
from neuron_top.snapshot import Snapshot

__all__ = ["Pace", "Session", "SourceStatus", "Update"]


STALE_PERIODS = 3
"""A live source with no report for this many report periods is STALE."""
MIN_STALE_SECONDS = 3.0
"""Never STALE sooner than this (reports piped in a burst have next to no period)."""
DEFAULT_PERIOD = 5.0
"""neuron-monitor's default period: what is expected before the reports say otherwise."""
LEARN = 8
"""Arrival intervals kept to learn a source's pace (their median, so one late report does not move it)."""
WATCHED = ("live", "demo")
"""States in which reports are expected to keep coming (and can therefore be late)."""


class Pace:
    """When the next report is due: the one staleness rule of the dashboard, ``--once`` and the exporter.

    The expected period is the report's own (its metric groups' period), whatever the observed cadence (reports
    that say "period 1.0" and come every 30 s are late each time, not a slow source); the median of the last
    arrival intervals only for reports that give no period; neuron-monitor's default before either is known. The
    first report's period is not a pace: neuron-monitor's first covers only its start-up (milliseconds), so it
    waits at least the default. A source is stale ``STALE_PERIODS`` periods after its last report (never sooner
    than ``MIN_STALE_SECONDS``).

    >>> p = Pace()
    >>> for t in (0.0, 1.0, 2.0):
    ...     p.arrived(t, period=1.0)
    >>> p.expected(), p.stale(4.9), p.stale(5.1)
    (1.0, False, True)
    """

    def __init__(self) -> None:
        self.reports = 0
        self.period: float | None = None
        """The latest report's own period, if it gave one."""
        self.last: float | None = None
        """Clock time of the last report."""
        self._arrivals: deque[float] = deque(maxlen=LEARN + 1)

    def arrived(self, now: float, period: float | None) -> None:
        """A report came at ``now`` (any clock, the same every call) saying ``period``."""
        self.reports += 1
        self.period = period
        self.last = now
        self._arrivals.append(now)

    def expected(self) -> float:
        """Seconds between reports the source is expected to keep to."""
        own = self.period
        if own is not None and own > 0:
            return max(own, DEFAULT_PERIOD) if self.reports <= 1 else own
        learned = self._learned()
        return learned if learned is not None and learned > 0 else DEFAULT_PERIOD

    def _learned(self) -> float | None:
        a = self._arrivals
        if len(a) < 2:
            return None
        return statistics.median(b - x for x, b in zip(a, list(a)[1:], strict=False))

    def stale_after(self) -> float:
        """Seconds without a report after which a live source is STALE."""
        return max(STALE_PERIODS * self.expected(), MIN_STALE_SECONDS)

    def stale(self, now: float) -> bool:
        """No report for longer than ``stale_after`` at ``now`` (False before the first report)."""
        return self.last is not None and now - self.last > self.stale_after()


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """Where data comes from and how it is doing: what the header's source part says.

    ``Session.shown(now)`` gives the status as it stands at ``now`` (``state`` "stale" or "no data" when the
    reports say so); the header only formats it."""

    name: str = ""
    """e.g. "neuron-monitor", "stdin", "demo trn2.48xlarge", "run.jsonl"."""
    state: str = "starting"
    """"starting", "live", "replay", "demo", "ended", "restarting", "failed"; from ``Session.shown`` also
    "stale" (a live source late by ``STALE_PERIODS`` periods) and "no data" (input came, none of it a report)."""
    message: str = ""
    detail: str = ""
    """Extra text such as the last lines of neuron-monitor's stderr."""
    skipped: int = 0
    """Input items skipped so far (not reports)."""
    paused: bool = False
    position: str = ""
    """Replay: "report 120/10000 · 12:03:04 · 2x"."""
    last_report: float | None = None
    """Monotonic time of the last report, for its age."""
    exit_status: int | None = None
    """The exit status of the command or neuron-monitor that ended, restarted or failed (negative: the signal
    that killed it); None while it runs or when there is none."""
    uncorrected: tuple[int, ...] = ()
    """Devices with an uncorrected ECC error since the user last acknowledged: sticky, so one report's event is
    not lost once its toast is gone."""
    source_filter: str = ""
    """A filter applied by the source itself (neuron-monitor's ``tag_filter`` from ``-c``): runtimes it leaves
    out never reach us, unlike the screen's ``/`` filter; the header says so."""
    recording: str = ""
    """What is being recorded and how it goes (issue 23's indicator), shown as its own header field."""
    expected: float | None = None
    """From ``Session.shown``: the seconds between reports the source is expected to keep to."""
    reports: int = 0
    """From ``Session.shown``: reports received so far."""
    command: str = ""
    """The whole command line of a ``--command`` source (``name`` is cut to fit a header): the problems screen
    shows it in full."""
    last_end: str = ""
    """How the source's process last ended ("... exited with status 3 after 4 reports; restarting in 2 s"): kept
    once it runs again, so the problems screen still says why it restarted."""
    last_end_at: float | None = None
    """The session clock's time of ``last_end``."""
    restarts: int = 0
    """Times the source was started again (neuron-monitor, a ``--command``): ``SourceTally``'s count."""

    @property
    def exit_text(self) -> str:
        """``exit 3``, ``SIGKILL``; empty when no process ended."""
        code = self.exit_status
        if code is None:
            return ""
        if code >= 0:
            return f"exit {code}"
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"


@dataclass(frozen=True, slots=True)
class Update:
    """What applying one feed event changed, for the screen to act on."""

    snapshot: bool = False
    """A new snapshot arrived (draw it unless paused)."""
    status: bool = False
    """The source status changed (redraw the header)."""
    uncorrected: tuple[int, ...] = ()
    """Devices with uncorrected ECC errors in the new snapshot (alert the user)."""
    notice: str = ""
    """A line to show the user once (the source ended or failed, recording stopped ...)."""
    severity: str = "information"
    """"information", "warning" or "error" for ``notice``."""
    title: str = ""
    """A title for ``notice`` (the state it is about)."""


class Session:
    """The state of one source.

    Args:
        name: the source's name for the header.
        state: the initial state ("starting" live, "replay", "demo").
        history: how many reports the history keeps (sparklines).
        clock: monotonic seconds, injected so tests control "updated Ns ago".
    """

    def __init__(self, name: str = "", state: str = "starting", history: int = 600,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.history = History(history)
        self.latest: Snapshot | None = None
        self.prev: Snapshot | None = None
        self.status = SourceStatus(name=name, state=state)
        self.clock = clock
        self.demo = state == "demo"
        self.replaying = state == "replay"
        self.reports = 0
        """Snapshots accepted since the session began (a replay counts what it showed)."""
        self.skip_reasons: dict[str, tuple[int, str]] = {}
        """Skipped input by reason: how many items and the latest sample (the problems screen lists them)."""
        self.pace = Pace()
        """When the next report is due (live only: a replay is never late)."""
        self.tally = SourceTally()
        """The source's state, skipped input and restarts, counted as the exporter and ``health`` count them."""

    # --- fed ---
    def apply(self, event: FeedEvent) -> Update:
        """Apply one event of a live feed.

        Returns:
            What changed (``Update``).
        """
        if isinstance(event, Report):
            return self.accept(event.snapshot)
        self.tally.apply(event)
        if isinstance(event, SkippedInput):
            item = event.skipped
            seen, _ = self.skip_reasons.get(item.reason, (0, ""))
            self.skip_reasons[item.reason] = (seen + item.count, item.sample)
            self.set_status(skipped=self.tally.skipped)
            return Update(status=True)
        if isinstance(event, StatusChanged):
            st = event.status
            value = st.state.value
            state = "demo" if self.demo and value == "demo" else value
            ended = value in ("ended", "restarting", "failed")
            kept = {"last_end": st.message, "last_end_at": self.clock()} if ended else {}
            self.set_status(state=state, message=st.message, detail=st.detail,
                            exit_status=st.exit_status, restarts=self.tally.restarts, **kept)
            if ended:
                text = st.message + (f"\n{st.detail}" if st.detail else "")
                return Update(status=True, notice=text, severity="error" if value == "failed" else "warning",
                              title=value)
            return Update(status=True)
        if isinstance(event, RecordingError):
            return Update(notice=f"recording stopped: {event.reason}", severity="error")
        return Update()

    def accept(self, snap: Snapshot) -> Update:
        """One snapshot, live or replayed: into the history, then latest; ECC alerts found."""
        self.history.push(snap)
        self.prev, self.latest = self.latest, snap
        self.reports += 1
        if not self.replaying:
            now = self.clock()
            self.pace.arrived(now, snap.period())
            self.set_status(last_report=now)
        devices = tuple(new_uncorrected(snap))
        if devices:
            self.set_status(uncorrected=tuple(sorted({*self.status.uncorrected, *devices})))
        return Update(snapshot=True, uncorrected=devices, status=bool(devices))

    def rebuild(self, window: Iterable[Snapshot]) -> None:
        """After a seek: the history becomes ``window`` (oldest first); latest is its last snapshot."""
        self.history.clear()
        self.latest = self.prev = None
        for snap in window:
            self.history.push(snap)
            self.prev, self.latest = self.latest, snap
        devices = new_uncorrected(self.latest) if self.latest is not None else []
        if devices:  # the report landed on has uncorrected ECC: the header's sticky mark, as when played
            self.set_status(uncorrected=tuple(sorted({*self.status.uncorrected, *devices})))

    def adopt(self, history: History) -> None:
        """A history rebuilt elsewhere (a worker decoding a seek's window) replaces this one."""
        self.history = history

    def acknowledge(self) -> tuple[int, ...]:
        """The user saw the uncorrected ECC errors: the sticky mark goes (until the next one). Returns the devices
        it named."""
        devices = self.status.uncorrected
        if devices:
            self.set_status(uncorrected=())
        return devices

    # --- read ---
    def expected_period(self) -> float:
        """Seconds between reports this source is expected to keep to (``Pace.expected``)."""
        if self.replaying:  # not paced by arrivals: the shown report's own period
            own = self.latest.period() if self.latest is not None else None
            return own if own is not None and own > 0 else DEFAULT_PERIOD
        return self.pace.expected()

    def stale_after(self) -> float:
        """Seconds without a report after which a live source is STALE (``Pace.stale_after``)."""
        return self.pace.stale_after()

    def shown(self, now: float | None = None) -> SourceStatus:
        """The status as the header should say it at ``now`` (the session's clock by default).

        A live (or demo) source whose last report is older than ``stale_after`` is "stale": the data on screen
        is old, whatever the process says. A source that has sent input but not one report is "no data" (the
        header then says how many lines it skipped), not "starting". Everything else is the status as set."""
        st = self.status
        state = st.state
        if state in WATCHED and st.last_report is not None and not self.replaying:
            if self.pace.stale(self.clock() if now is None else now):
                state = "stale"
        elif state == "starting" and self.reports == 0 and st.skipped:
            state = "no data"
        return replace(st, state=state, expected=self.expected_period(), reports=self.reports)

    def set_status(self, **changes: object) -> SourceStatus:
        """Change some fields of the status (a new immutable value); returns it."""
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]
        return self.status

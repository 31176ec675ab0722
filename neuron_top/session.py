"""One source's state, fed the same way live and in replay (no UI imports).

A ``Session`` is what a screen shows about one host: its history, the latest and previous snapshots, where the data
comes from and in what state (``SourceStatus``), how much input was skipped, and for a replay where in the
recording it is. Live, its feed (``neuron_top.feed``) applies events to it; in replay, the player hands it the
reports it reaches and rebuilds its history after a seek. The dashboard shows one session; the fleet view holds
many, each fed on its own.

Owned by one thread (the UI's): feed threads hand over immutable events, never touch a session.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from neuron_top.alerts import new_uncorrected
from neuron_top.feed import FeedEvent, RecordingError, Report, SkippedInput, StatusChanged
from neuron_top.history import History
from neuron_top.snapshot import Snapshot

__all__ = ["Session", "SourceStatus", "Update"]


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """Where data comes from and how it is doing: what the header's source part says."""

    name: str = ""
    """e.g. "neuron-monitor", "stdin", "demo trn2.48xlarge", "run.jsonl"."""
    state: str = "starting"
    """"starting", "live", "replay", "demo", "ended", "restarting", "failed"."""
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

    # --- fed ---
    def apply(self, event: FeedEvent) -> Update:
        """Apply one event of a live feed.

        Returns:
            What changed (``Update``).
        """
        if isinstance(event, Report):
            return self.accept(event.snapshot)
        if isinstance(event, SkippedInput):
            self.set_status(skipped=event.total)
            return Update(status=True)
        if isinstance(event, StatusChanged):
            st = event.status
            value = st.state.value
            state = "demo" if self.demo and value == "demo" else value
            self.set_status(state=state, message=st.message, detail=st.detail)
            if value in ("ended", "restarting", "failed"):
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
            self.set_status(last_report=self.clock())
        return Update(snapshot=True, uncorrected=tuple(new_uncorrected(snap)))

    def rebuild(self, window: Iterable[Snapshot]) -> None:
        """After a seek: the history becomes ``window`` (oldest first); latest is its last snapshot."""
        self.history.clear()
        self.latest = self.prev = None
        for snap in window:
            self.history.push(snap)
            self.prev, self.latest = self.latest, snap

    def adopt(self, history: History) -> None:
        """A history rebuilt elsewhere (a worker decoding a seek's window) replaces this one."""
        self.history = history

    def set_status(self, **changes: object) -> SourceStatus:
        """Change some fields of the status (a new immutable value); returns it."""
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]
        return self.status

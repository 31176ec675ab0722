"""Many sessions, one per host (ssh mode): fed on the UI thread, read as fleet rows (no UI imports).

Each host's feed runs on its own worker thread and hands over immutable events; the UI thread applies them here
(``apply``), exactly as the single-host dashboard applies its feed's events to its one session. A host's row is
made from its session: the latest snapshot's figures, its status (up, stale, down, starting) and, when the
stream is not live, why (the source's own message: "ssh exited with status 255 ...: Permission denied").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from neuron_top.feed import FeedEvent, Report, StatusChanged
from neuron_top.fleet.apps import apps_from_snapshots
from neuron_top.fleet.frame import FleetFrame
from neuron_top.fleet.rows import DOWN, STALE, UP, EccTotals, FleetRow, from_snapshot
from neuron_top.fmt import plural
from neuron_top.session import Session, Update
from neuron_top.sources.base import State
from neuron_top.textsafe import clean

__all__ = ["FIRST_REPORT_WITHIN", "SessionFleet"]

FIRST_REPORT_WITHIN = 30.0
"""Seconds a host's command may run without sending a report before its row is down (ssh connecting, and
neuron-monitor's first report, take a few seconds; 30 is well past both)."""


class SessionFleet:
    """The hosts' sessions and the rows made from them. Owned by the UI thread.

    Args:
        hosts: host names, in the order given.
        source: the name shown for the whole fleet ("ssh 4 hosts").
        clock: monotonic seconds (the sessions' clock: report ages).
        wall: Unix seconds (frame times).
    """

    def __init__(self, hosts: Sequence[str], *, source: str = "", history: int = 600,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 first_report_within: float = FIRST_REPORT_WITHIN) -> None:
        self.hosts = list(hosts)
        self.source = source or f"ssh {plural(len(self.hosts), 'host')}"
        self.clock = clock
        self.wall = wall
        self.first_report_within = first_report_within
        self.sessions = {h: Session(h, history=history, clock=clock) for h in self.hosts}
        self._ecc = {h: EccTotals() for h in self.hosts}
        self._ecc_now: dict[str, tuple[float, float]] = {}
        start = clock()
        self._waiting_since: dict[str, float | None] = dict.fromkeys(self.hosts, start)
        """Per host, since when it has been waited for without a report (None once one came)."""

    def apply(self, host: str, event: FeedEvent) -> Update:
        """One event of ``host``'s feed into its session."""
        if isinstance(event, Report):
            self._ecc_now[host] = self._ecc[host].add(event.snapshot)
            self._waiting_since[host] = None
        elif isinstance(event, StatusChanged) and event.status.state is State.RESTARTING:
            self._waiting_since[host] = None  # down, and says why; the next start is waited for afresh
        elif isinstance(event, StatusChanged) and self._waiting_since.get(host) is None \
                and event.status.state in (State.STARTING, State.LIVE):
            self._waiting_since[host] = self.clock()  # (re)connecting: its first report is waited for again
        return self.sessions[host].apply(event)

    def row(self, host: str, now: float | None = None) -> FleetRow:
        s = self.sessions[host]
        now = self.clock() if now is None else now
        st = s.shown(now)  # the session's own judgement of stale (three of its periods without a report)
        age = None if st.last_report is None else max(0.0, now - st.last_report)
        state = st.state
        note = ""
        if state in ("live", "demo") and s.latest is None:
            status, note = "starting", "connected; waiting for the first report"
        elif state in ("live", "demo"):
            status = UP
        elif state == "stale":
            status, note = STALE, f"no report for {age:.0f} s (expected every {round(st.expected or 0, 1):g} s)" if age else ""
        elif state in ("starting", "no data"):
            status, note = "starting", st.message
        else:  # restarting, ended, failed: the stream is not flowing; the message says why
            status, note = DOWN, st.message
        waiting = self._waiting_since.get(host)
        if status == "starting" and waiting is not None and now - waiting > self.first_report_within:
            # a command that hangs, or prints only what is not a report (a banner, the wrong program): down
            # after a deadline, counted and shown as such, not "starting" for ever
            status = DOWN
            why = "not one report" if not st.skipped else "only input that is not a report"
            note = f"{why} within {self.first_report_within:g} s" + (f": {note}" if note else "")
        if st.skipped:
            note = (note + "; " if note else "") + f"{st.skipped} bad input skipped"
        note = clean(note, 300)
        if s.latest is None:
            return FleetRow(key=host, status=status, age=age, note=note)
        return from_snapshot(host, s.latest, status=status, age=age, note=note, ecc=self._ecc_now.get(host))

    def frame(self) -> FleetFrame:
        now = self.clock()
        return FleetFrame(ts=self.wall(), source=self.source, rows=[self.row(h, now) for h in self.hosts],
                          apps=apps_from_snapshots({h: s.latest for h, s in self.sessions.items()}))

"""The dashboard in replay mode: the same panels, a scrubber, and transport keys (``ReplayTransport``).

A seek rebuilds the history from the reports before the new position.
"""

from __future__ import annotations

from typing import cast

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.worker import get_current_worker

from neuron_top.history import History
from neuron_top.recording.player import ReplayController
from neuron_top.tui.messages import WallTime
from neuron_top.tui.screens.dashboard import DashboardScreen
from neuron_top.tui.screens.transport import MarkersFound, ReplayTransport, WindowWritten
from neuron_top.tui.session_host import SessionHost
from neuron_top.tui.widgets.scrubber import Scrubber

HISTORY_WINDOW = 120
"""Reports decoded to rebuild sparklines after a seek (the widest sparkline shows about this many)."""
SEEK_BUDGET = 0.015
"""Seconds a seek may spend decoding history on the UI thread; a worker decodes the rest of the window."""
FRAME_BUDGET = 0.1
"""Seconds one playback frame may spend decoding the reports it passed (100x on big reports, a busy machine)."""

__all__ = ["HISTORY_WINDOW", "MarkersFound", "ReplayScreen", "WindowWritten"]


class HistoryRebuilt(Message):
    """A worker decoded the whole history window for a seek (a fresh ``History``, never shared while built)."""

    def __init__(self, generation: int, end: int, history: History) -> None:
        super().__init__()
        self.generation = generation
        self.end = end
        self.history = history


class ReplayScreen(DashboardScreen, ReplayTransport):
    def __init__(self, controller: ReplayController, name: str = "") -> None:
        super().__init__()
        self.init_transport(controller, name)
        self._generation = 0
        """Counts history rebuilds, so a worker's late result for an older seek is dropped."""
        self._following = False
        """A move that came from the timeline's playhead (not told back to it)."""
        self._totals_pending = False
        """The position's counts since start are not known yet (the scan is behind it)."""
        self._totals_jump = False
        """... and the header's ECC mark is to be set from them when they are (the position came by a jump)."""

    def compose_top(self) -> ComposeResult:
        yield Scrubber(self.controller.markers, id="scrubber")

    def compose_bottom(self) -> ComposeResult:
        yield self.goto_input()

    # --- background marker scan ---
    @work(thread=True, exclusive=True, exit_on_error=False, group="markers", description="scanning for markers")
    def scan_markers(self) -> None:
        def found() -> None:
            self.post_message(MarkersFound())

        self.controller.scan_markers(progress=found)

    @property
    def host(self) -> SessionHost:
        """The app, as this screen drives it: its session, publishing, the header's position."""
        return cast(SessionHost, self.app)

    def set_position_text(self, text: str) -> None:
        self.host.set_position(text)

    def key_escape(self) -> None:
        ReplayTransport.key_escape(self)

    def escape(self) -> None:
        DashboardScreen.key_escape(self)

    # --- showing ---
    def show_position(self, rebuild: bool = False, passed: list[int] | None = None) -> None:
        """Draw the report at the position. ``rebuild``: after a jump, history is the window before it;
        ``passed``: reports played since the last frame, all pushed into history, one frame drawn."""
        c = self.controller
        host = self.host
        session = host.session
        if rebuild and len(c):
            self._generation += 1
            window = c.window(c.position, HISTORY_WINDOW, budget=SEEK_BUDGET)
            if window:
                session.rebuild(window)
            if len(window) < min(HISTORY_WINDOW, c.position + 1) and window:
                self.rebuild_history(self._generation, c.position, session.history.maxlen)
        elif passed:
            # Every report played goes into history, unless the machine cannot decode them all in time: then
            # the newest that fit in the frame budget do (playback keeps pace; the history thins out).
            for snap in c.window(passed[-1], len(passed), budget=FRAME_BUDGET if len(passed) > 1 else None):
                host.react(session.accept(snap), publish=False)
        self._apply_totals(jumped=rebuild)
        if session.latest is not None:
            self._shown = True
        host.set_position(self._position_text())
        host.publish()
        self._update_scrubber()
        self._tell_wall_time()

    # --- counts since start: the recording's, not the history window's ---
    def _apply_totals(self, jumped: bool) -> None:
        """The history's ECC sums (and its executions since start, which a live history does not keep) become the recording's from its start to the position (the window after a
        seek holds only the last reports). After a jump the header's ``ECC!`` names the devices with uncorrected
        events up to the position, so the two never disagree. Until the scan reaches the position the window's
        sums stand and this runs again when it does (``on_markers_found``)."""
        c = self.controller
        n = len(c)
        t = c.totals_at(min(c.position, n - 1)) if n else None
        self._totals_pending = n > 0 and t is None
        self._totals_jump = self._totals_jump or (jumped and t is None)
        session = self.host.session
        if t is None:
            if jumped:  # until the scan gets here the panel sums the window: the header says what the panel says
                window = session.history.ecc_totals
                session.set_status(uncorrected=tuple(d for d, e in sorted(window.items()) if e.uncorrected))
            return
        session.history.ecc_totals = dict(t.ecc)
        session.history.exec_totals = c.since_start(min(c.position, n - 1))
        if jumped or self._totals_jump:
            self._totals_jump = False
            session.set_status(uncorrected=t.uncorrected_devices)

    def position_note(self) -> str:
        """While the scan is behind the position, the ECC counts are the window's: the header says so."""
        return " · ECC since start: counting" if self._totals_pending else ""

    def on_markers_found(self, _: MarkersFound) -> None:
        """(Textual calls ``ReplayTransport``'s handler too, for the scrubber.)"""
        if self._totals_pending:
            self._apply_totals(jumped=False)
            if not self._totals_pending:
                self.host.set_position(self._position_text())
                self.host.publish()

    # --- the timeline's playhead follows the replay, and the other way round (one wall clock) ---
    def _tell_wall_time(self) -> None:
        idx = self.controller.index
        if len(idx) and idx.wallclock and not self._following:
            self.post_message(WallTime(idx.timestamp(min(self.controller.position, len(idx) - 1)), self))

    def follow_wall_time(self, unix: float) -> None:
        """The timeline's playhead moved: show the report in effect at that moment (the last one before it)."""
        idx = self.controller.index
        if not len(idx):
            return
        j = idx.find_time(unix)
        if j > 0 and idx.timestamp(j) > unix + 1e-6:
            j -= 1
        self._following = True
        try:
            self.controller.seek(j)
            self.show_position(rebuild=True)
        finally:
            self._following = False

    @work(thread=True, exclusive=True, exit_on_error=False, group="history", description="rebuilding history")
    def rebuild_history(self, generation: int, end: int, maxlen: int) -> None:
        worker = get_current_worker()
        history = History(maxlen)
        c = self.controller
        for i in range(max(0, end - HISTORY_WINDOW + 1), end + 1):
            if worker.is_cancelled:  # a newer seek superseded this one (exclusive): stop decoding for nothing
                return
            snap = c.snapshot(i)
            if snap is not None:
                history.push(snap)
        self.post_message(HistoryRebuilt(generation, end, history))

    def on_history_rebuilt(self, message: HistoryRebuilt) -> None:
        c = self.controller
        if message.generation != self._generation or c.position < message.end:
            return  # the user moved on; that seek started its own rebuild
        for i in range(message.end + 1, c.position + 1):  # reports played while the worker ran
            snap = c.snapshot(i)
            if snap is not None:
                message.history.push(snap)
        self.host.session.adopt(message.history)
        self._apply_totals(jumped=False)
        self.host.publish()

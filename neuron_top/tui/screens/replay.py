"""The dashboard in replay mode: the same panels, a scrubber, and transport keys.

Nothing here sleeps or polls while paused: the next wake-up is a one-shot timer set from the controller's
``next_delay``. A seek rebuilds the history from the reports before the new position.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import Worker, get_current_worker

from neuron_top.history import History
from neuron_top.recording.player import ReplayController, parse_goto
from neuron_top.textsafe import clean
from neuron_top.tui.host import SessionHost
from neuron_top.tui.messages import WallTime
from neuron_top.tui.screens.dashboard import DashboardScreen
from neuron_top.tui.widgets.scrubber import Scrubber, clock_text

HISTORY_WINDOW = 120
"""Reports decoded to rebuild sparklines after a seek (the widest sparkline shows about this many)."""
SEEK_BUDGET = 0.015
"""Seconds a seek may spend decoding history on the UI thread; a worker decodes the rest of the window."""
FRAME_BUDGET = 0.1
"""Seconds one playback frame may spend decoding the reports it passed (100x on big reports, a busy machine)."""
WAIT_POLL = 0.05
"""Seconds between looks at the index while it has no report yet (the first frame must come at once)."""
FOLLOW_POLL = 1.0
"""Seconds between looks for reports appended to a followed recording (tail -f), and for indexing progress."""


class MarkersFound(Message):
    """The background scan found more markers (posted from the scan thread)."""


class HistoryRebuilt(Message):
    """A worker decoded the whole history window for a seek (a fresh ``History``, never shared while built)."""

    def __init__(self, generation: int, end: int, history: History) -> None:
        super().__init__()
        self.generation = generation
        self.end = end
        self.history = history


class WindowWritten(Message):
    """``w`` finished writing (or failed): the text to show."""

    def __init__(self, text: str, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error


class ReplayScreen(DashboardScreen):
    BINDINGS = [
        Binding("space,p", "play_pause", "play/pause"),
        Binding("left_square_bracket", "step(-1)", "back 1"),
        Binding("right_square_bracket", "step(1)", "fwd 1"),
        Binding("comma", "step(-10)", "back 10", show=False),
        Binding("full_stop", "step(10)", "fwd 10", show=False),
        Binding("left_curly_bracket", "minute(-60)", "back 1 min", show=False),
        Binding("right_curly_bracket", "minute(60)", "fwd 1 min", show=False),
        Binding("g,home", "go_start", "start", show=False),
        Binding("G,end", "go_end", "end", show=False),
        Binding("minus", "speed(-1)", "slower"),
        Binding("plus,equals_sign", "speed(1)", "faster"),
        Binding("colon", "goto", "go to"),
        Binding("n", "marker(1)", "next marker"),
        Binding("N", "marker(-1)", "prev marker", show=False),
        Binding("m", "mark", "mark range", show=False),
        Binding("w", "write", "write window", show=False),
    ]
    DEFAULT_CSS = """
    ReplayScreen #goto { dock: bottom; height: 1; border: none; padding: 0 1; display: none; }
    ReplayScreen #goto.-visible { display: block; }
    """

    def __init__(self, controller: ReplayController, name: str = "") -> None:
        super().__init__()
        self.controller = controller
        self.recording_name = name
        self._timer: Timer | None = None
        self._poll_timer: Timer | None = None
        self._generation = 0
        """Counts history rebuilds, so a worker's late result for an older seek is dropped."""
        self._shown = False
        """Whether a report has been drawn (until then the index is watched closely for the first one)."""
        self._scanner: Worker[None] | None = None
        self._seen: tuple[int, bool, int] = (0, False, 0)
        """(reports, done, skipped) at the last look at the index."""

    def compose_top(self) -> ComposeResult:
        yield Scrubber(self.controller.markers, id="scrubber")

    def compose_bottom(self) -> ComposeResult:
        yield Input(placeholder="go to: report number, HH:MM:SS, +90s / -2m, or 50%  (Esc cancels)", id="goto")

    def on_mount(self) -> None:
        self.controller.settle()
        self.show_position(rebuild=True)
        self._schedule()
        self._poll()
        # The scan decodes every report while holding the GIL for each one: start it once the first frame is out.
        self.call_after_refresh(self._start_scan)

    def _start_scan(self) -> None:
        if self._scanner is None:
            self._scanner = self.scan_markers()

    # --- background marker scan ---
    @work(thread=True, exclusive=True, exit_on_error=False, group="markers", description="scanning for markers")
    def scan_markers(self) -> None:
        self.controller.scan_markers(progress=lambda: self.post_message(MarkersFound()))

    def on_markers_found(self, _: MarkersFound) -> None:
        self._update_scrubber()

    def on_unmount(self) -> None:
        self.controller.stop_scan()

    @property
    def host(self) -> SessionHost:
        """The app, as this screen drives it: its session, publishing, the header's position."""
        return cast(SessionHost, self.app)

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
        if session.latest is not None:
            self._shown = True
        host.set_position(self._position_text())
        host.publish()
        self._update_scrubber()
        self._tell_wall_time()

    # --- the timeline's playhead follows the replay, and the other way round (one wall clock) ---
    def _tell_wall_time(self) -> None:
        idx = self.controller.index
        if len(idx) and getattr(idx, "wallclock", True) and not getattr(self, "_following", False):
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
        self.host.publish()

    def _position_text(self) -> str:
        c = self.controller
        n = len(c)
        idx = c.index
        if not getattr(idx, "done", True):
            reading = (f"reading {clean(getattr(idx, 'name', ''), 40) or 'input'}" if hasattr(idx, "bytes_read")
                       else f"indexing {getattr(idx, 'progress', 0) * 100:.0f}%")
        else:
            reading = ""
        skipped = c.bad + getattr(idx, "skipped", 0)
        tail = (f" · {reading}" if reading else "") + (f" · skipped {skipped}" if skipped else "")
        if n == 0:
            return "no reports yet" + tail
        wall = getattr(idx, "wallclock", True)
        pos = min(c.position, n - 1)
        t = clock_text(idx.timestamp(pos), wall)
        state = "⏸" if not c.playing else "end" if c.at_end() else "▶"
        return f"{state} report {pos + 1}/{n} · {t} · {c.speed:g}x{tail}"

    def _update_scrubber(self) -> None:
        c = self.controller
        s = self.query_one(Scrubber)
        s.total = len(c)
        s.position = c.position
        s.markers_seen = len(c.markers)
        s.mark_in = c.mark_in
        near = c.next_marker(1)
        scan = "" if c.scanned >= len(c) else f"scanning {c.scanned}/{len(c)} · "
        s.info = (f"{scan}{len(c.markers)} markers" + (f" · next: {near.text} (#{near.index + 1})" if near else "")
                  + (f" · range from #{c.mark_in + 1}" if c.mark_in is not None else ""))
        s.refresh()

    # --- playing ---
    def _schedule(self) -> None:
        """One one-shot timer for the next due report; none while paused or at the end."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        delay = self.controller.next_delay()
        if delay is not None:
            self._timer = self.set_timer(max(delay, 0.02), self._advance)

    def _advance(self) -> None:
        self._timer = None
        passed = self.controller.due()
        if passed:
            self.show_position(passed=passed)
        self._schedule()

    def _poll(self) -> None:
        """Watch the index: the first report (closely), indexing progress, and a followed file growing."""
        if self._poll_timer is not None:  # called early (tests, a key): keep a single chain of looks
            self._poll_timer.stop()
        self._poll_timer = None
        c = self.controller
        idx = c.index
        if getattr(idx, "done", True) and hasattr(idx, "refresh"):
            idx.refresh()  # tail -f: pick up what was appended
        # Compared with the last look, not with before refresh: the indexing thread adds reports on its own.
        seen = (len(idx), getattr(idx, "done", True), getattr(idx, "skipped", 0))
        changed, grew = seen != self._seen, seen[0] != self._seen[0]
        self._seen = seen
        c.settle()
        if not self._shown and len(idx):
            self.show_position(rebuild=True)
        elif changed or not getattr(idx, "done", True):
            self.host.set_position(self._position_text())
            self._update_scrubber()
        if grew and self._scanner is not None and self._scanner.is_finished:
            self._scanner = self.scan_markers()  # carries on from where it stopped
        if self._timer is None:
            self._schedule()
        if getattr(idx, "finished", False):
            return  # nothing more can ever arrive: no more polling
        self._poll_timer = self.set_timer(WAIT_POLL if not self._shown else FOLLOW_POLL, self._poll)

    def _moved(self) -> None:
        self.show_position(rebuild=True)
        self._schedule()

    # --- actions ---
    def action_play_pause(self) -> None:
        self.controller.toggle()
        self.host.set_position(self._position_text())
        self._schedule()

    def action_step(self, n: int) -> None:
        c = self.controller
        before = c.position
        c.step(n)
        if n == 1 and c.position == before + 1:
            self.show_position(passed=[c.position])  # one step forward keeps the history
            self._schedule()
        else:
            self._moved()

    def action_minute(self, seconds: int) -> None:
        self.controller.step_seconds(seconds)
        self._moved()

    def action_go_start(self) -> None:
        self.controller.seek(0)
        self._moved()

    def action_go_end(self) -> None:
        self.controller.seek(len(self.controller) - 1)
        self._moved()

    def action_speed(self, direction: int) -> None:
        self.controller.set_speed(direction)
        self.host.set_position(self._position_text())
        self._schedule()

    def action_marker(self, direction: int) -> None:
        m = self.controller.next_marker(direction)
        if m is None:
            self.notify("no more markers" if self.controller.markers else "no markers (yet)", timeout=2)
            return
        self.controller.seek(m.index)
        self.notify(m.text, title=f"marker #{m.index + 1}", timeout=4, markup=False)
        self._moved()

    def action_mark(self) -> None:
        c = self.controller
        c.mark_in = None if c.mark_in is not None else c.position
        self._update_scrubber()

    def write_target(self) -> tuple[int, int, Path]:
        """Reports ``[start, stop]`` that ``w`` writes and the file name (in the current directory)."""
        c = self.controller
        if c.mark_in is not None:
            start, stop = sorted((c.mark_in, c.position))
        else:
            start, stop = max(0, c.position - HISTORY_WINDOW + 1), c.position
        stem = re.sub(r"[^\w.-]+", "_", Path(self.recording_name or "replay").name.split(".")[0]) or "replay"
        return start, stop, Path.cwd() / f"{stem}-{start + 1}-{stop + 1}.jsonl"

    def action_write(self) -> None:
        if len(self.controller) == 0:
            self.notify("nothing to write yet", timeout=2)
            return
        self.write_window(*self.write_target())

    @work(thread=True, exclusive=False, exit_on_error=False, group="write", description="writing reports")
    def write_window(self, start: int, stop: int, out: Path) -> None:
        """In a worker: a marked range can be a gigabyte."""
        from neuron_top.recording.writer import write_range

        try:
            n = write_range(self.controller.index, start, stop + 1, out)
        except OSError as exc:
            self.post_message(WindowWritten(f"cannot write {out}: {exc.strerror or exc}", error=True))
            return
        self.post_message(WindowWritten(f"wrote {n} reports ({start + 1}-{stop + 1}) to {out}"))

    def on_window_written(self, message: WindowWritten) -> None:
        self.notify(message.text, title="window written" if not message.error else "write failed",
                    severity="error" if message.error else "information", markup=False)

    def action_goto(self) -> None:
        box = self.query_one("#goto", Input)
        box.add_class("-visible")
        box.value = ""
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "goto":
            return
        event.stop()
        target = parse_goto(event.value, self.controller)
        event.input.remove_class("-visible")
        self.focus_next()
        if target is None:
            self.notify(f"not a report number or time: {event.value!r}", severity="warning", markup=False)
            return
        self.controller.seek(target)
        self._moved()

    def key_escape(self) -> None:
        box = self.query_one("#goto", Input)
        if box.has_class("-visible"):
            box.remove_class("-visible")
            self.focus_next()
            return
        super().key_escape()

    def on_scrubber_seek(self, message: Scrubber.Seek) -> None:
        self.controller.seek(message.index)
        self._moved()


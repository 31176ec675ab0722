"""The dashboard in replay mode: the same panels, a scrubber, and transport keys.

Nothing here sleeps or polls while paused: the next wake-up is a one-shot timer set from the controller's
``next_delay``. A seek rebuilds the history from the reports before the new position.
"""

from __future__ import annotations

import re
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input

from ..replay import ReplayController
from ..widgets.scrubber import Scrubber, clock_text
from .dashboard import DashboardScreen

HISTORY_WINDOW = 120
"""Reports decoded to rebuild sparklines after a seek (the widest sparkline shows about this many)."""


class MarkersFound(Message):
    """The background scan found more markers (posted from the scan thread)."""


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
        self._follow_timer: Timer | None = None

    def compose_top(self) -> ComposeResult:
        yield Scrubber(self.controller.markers, id="scrubber")

    def compose_bottom(self) -> ComposeResult:
        yield Input(placeholder="go to: report number, HH:MM:SS, +90s / -2m, or 50%  (Esc cancels)", id="goto")

    def on_mount(self) -> None:
        self.scan_markers()
        self.show_position(rebuild=True)
        self._schedule()
        self._follow_timer = self.set_interval(1.0, self._follow, pause=False)

    # --- background marker scan ---
    @work(thread=True, exclusive=True, exit_on_error=False, group="markers", description="scanning for markers")
    def scan_markers(self) -> None:
        self.controller.scan_markers(progress=lambda: self.post_message(MarkersFound()))

    def on_markers_found(self, _: MarkersFound) -> None:
        self._update_scrubber()

    def on_unmount(self) -> None:
        self.controller.stop_scan()

    # --- showing ---
    def show_position(self, rebuild: bool = False, passed: list[int] | None = None) -> None:
        c = self.controller
        app = self.app
        if rebuild:
            app.history.clear()  # type: ignore[attr-defined]
            window = c.window(c.position, HISTORY_WINDOW)
            for snap in window:
                app.accept_snapshot(snap, publish=False)  # type: ignore[attr-defined]
        else:
            for i in passed or ():
                snap = c.snapshot(i)
                if snap is not None:
                    app.accept_snapshot(snap, publish=False)  # type: ignore[attr-defined]
        app.set_position(self._position_text())  # type: ignore[attr-defined]
        app.publish()  # type: ignore[attr-defined]
        self._update_scrubber()

    def _position_text(self) -> str:
        c = self.controller
        n = len(c)
        if n == 0:
            return "no reports yet"
        wall = getattr(c.index, "wallclock", True)
        t = clock_text(c.index.timestamp(c.position), wall)
        state = "▶" if c.playing and not c.at_end() else "⏸" if not c.playing else "end"
        idx = "" if getattr(c.index, "done", True) else f" · indexing {getattr(c.index, 'progress', 0) * 100:.0f}%"
        bad = f" · {c.bad} bad" if c.bad else ""
        return f"{state} report {c.position + 1}/{n} · {t} · {c.speed:g}x{idx}{bad}"

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

    def _follow(self) -> None:
        """A recording still being written grows on screen (tail -f) when we are at its end."""
        idx = self.controller.index
        if getattr(idx, "done", True) and hasattr(idx, "refresh"):
            before = len(idx)
            idx.refresh()
            if len(idx) != before:
                self._update_scrubber()
                if self._timer is None:
                    self._schedule()
        elif not getattr(idx, "done", True):
            self.app.set_position(self._position_text())  # type: ignore[attr-defined]
            self._update_scrubber()
            if self._timer is None:
                self._schedule()

    def _moved(self) -> None:
        self.show_position(rebuild=True)
        self._schedule()

    # --- actions ---
    def action_play_pause(self) -> None:
        self.controller.toggle()
        self.app.set_position(self._position_text())  # type: ignore[attr-defined]
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
        self.app.set_position(self._position_text())  # type: ignore[attr-defined]
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

    def action_write(self) -> None:
        from ..recording import write_range

        c = self.controller
        if c.mark_in is not None:
            start, stop = sorted((c.mark_in, c.position))
        else:
            start, stop = max(0, c.position - HISTORY_WINDOW + 1), c.position
        stem = re.sub(r"[^\w.-]+", "_", Path(self.recording_name or "replay").name.split(".")[0]) or "replay"
        out = Path.cwd() / f"{stem}-{start + 1}-{stop + 1}.jsonl"
        try:
            write_range(c.index, start, stop + 1, out)
        except OSError as exc:
            self.notify(f"cannot write {out}: {exc}", severity="error", markup=False)
            return
        self.notify(f"wrote reports {start + 1}-{stop + 1} to {out}", title="window written", markup=False)

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


def parse_goto(text: str, c: ReplayController) -> int | None:
    """"123" (report number), "50%", "+90s"/"-2m" (relative) or "HH:MM[:SS]" (time of day) -> report index."""
    from ..config import ConfigError, parse_period

    s = text.strip()
    n = len(c)
    if not s or n == 0:
        return None
    if s.isdigit():
        return max(0, min(int(s) - 1, n - 1))
    if s.endswith("%"):
        try:
            return max(0, min(int(float(s[:-1]) / 100 * (n - 1)), n - 1))
        except ValueError:
            return None
    if s[0] in "+-":
        try:
            secs = parse_period(s[1:])
        except ConfigError:
            return None
        cur = c.index.timestamp(c.position)
        return c.index.find_time(cur + secs if s[0] == "+" else cur - secs)
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", s)
    if m:
        import time as _t

        cur = c.index.timestamp(c.position)
        lt = _t.localtime(cur)
        h, mi, se = int(m[1]), int(m[2]), int(m[3] or 0)
        day0 = cur - (lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec)
        if not getattr(c.index, "wallclock", True):
            return c.index.find_time(h * 3600 + mi * 60 + se)
        return c.index.find_time(day0 + h * 3600 + mi * 60 + se)
    return None


"""The replay transport, shared by every screen that plays a recording: the keys, the pacing, the scrubber,
markers, go-to, writing a window, and watching the recording grow.

A screen mixes it in and says how to show a position (``show_position``), what its header says
(``set_position_text``) and how markers are found (``scan_markers``, a thread worker). Nothing here sleeps or
polls while paused: the next wake-up is a one-shot timer set from the controller's ``next_delay``.
"""

from __future__ import annotations

import re
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker

from neuron_top.fmt import plural
from neuron_top.recording.markers import KINDS
from neuron_top.recording.pacing import gap_text
from neuron_top.recording.player import GOTO_HINT, GotoError, ReplayController, goto
from neuron_top.textsafe import clean
from neuron_top.tui.keys import focus_now, typing
from neuron_top.tui.widgets.scrubber import JUMP_KINDS, Scrubber, clock_text, kind_names
from neuron_top.tui.widgets.textbox import TextBox

WINDOW = 120
"""Reports ``w`` writes around the position when no range is marked."""
WAIT_POLL = 0.05
"""Seconds between looks at the index while it has no report yet (the first frame must come at once)."""
FOLLOW_POLL = 1.0
"""Seconds between looks for reports appended to a followed recording (tail -f), and for indexing progress."""


class MarkersFound(Message):
    """The background scan found more markers (posted from the scan thread)."""


class WindowWritten(Message):
    """``w`` finished writing (or failed): the text to show."""

    def __init__(self, text: str, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error


class GotoBar(Vertical):
    """The ``:`` prompt: above the footer, in the layout (a prompt docked to the bottom edge was drawn under the
    footer, invisible at every size, while it held the keyboard). Its second line says what it accepts, or why an
    entry was refused; the entry stays for correcting."""

    DEFAULT_CSS = """
    GotoBar { height: auto; display: none; background: $panel; }
    GotoBar.-open { display: block; }
    GotoBar #goto-row { height: 1; }
    GotoBar #goto-label { width: auto; padding: 0 0 0 1; text-style: bold; }
    GotoBar #goto { width: 1fr; height: 1; border: none; padding: 0 1; }
    GotoBar #goto-hint { height: 1; padding: 0 1; color: $text-muted; }
    GotoBar.-error #goto-hint { color: $error; text-style: bold; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(id="goto-row"):
            yield Static("go to:", id="goto-label")
            yield TextBox(id="goto")
        yield Static(GOTO_HINT, id="goto-hint", markup=False)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        self.add_class("-open")
        self.remove_class("-error")
        self.query_one("#goto-hint", Static).update(GOTO_HINT)
        box = self.query_one("#goto", Input)
        box.value = ""
        focus_now(box)

    def fail(self, why: str) -> None:
        self.add_class("-error")
        self.query_one("#goto-hint", Static).update(why)

    def close(self) -> None:
        self.remove_class("-open")
        self.remove_class("-error")


class ReplayTransport(Screen):
    """Transport keys and pacing for a screen showing ``controller``'s position.

    Mix it in *after* the screen's own base (``class ReplayScreen(DashboardScreen, ReplayTransport)``): Textual
    takes a screen's CSS from its first base only, and runs every ``on_mount`` along the MRO (the base's first,
    then this one's). Call ``init_transport`` from ``__init__``; define ``key_escape`` as
    ``ReplayTransport.key_escape`` (the go-to box first) and ``escape`` as the base's Esc.
    """

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
        Binding("colon", "goto", "go to", priority=True),  # the box focused before the keys typed after it
        Binding("n", "marker(1)", "next marker"),
        Binding("N", "marker(-1)", "prev marker", show=False),
        Binding("k", "jump_kind", "what n/N jump to: every marker, or one kind", show=False),
        Binding("e", "corrected_ecc", "hide / show corrected ECC", show=False),
        Binding("m", "mark", "mark the start of a range for w (again: no range)", show=False),
        Binding("w", "write", "write window to a new file", show=False),
    ]
    controller: ReplayController
    UNIT, UNITS = "report", "reports"
    """What one line of the recording is, for the header ("report 12/340", "refresh 12/340")."""

    def init_transport(self, controller: ReplayController, name: str = "") -> None:
        self.controller = controller
        controller.unit = self.UNIT
        self.recording_name = name
        self._timer: Timer | None = None
        self._poll_timer: Timer | None = None
        self._shown = False
        """Whether a report has been drawn (until then the index is watched closely for the first one)."""
        self._scanner: Worker[None] | None = None
        self._seen: tuple[int, bool, int] = (0, False, 0)
        """(reports, done, skipped) at the last look at the index."""
        self._hidden: frozenset[str] = frozenset()
        """Marker kinds not drawn (``e`` hides corrected ECC)."""
        self._jump: tuple[str, ...] | None = None
        """The marker kinds ``n``/``N`` jump to (``k`` chooses); None: every kind shown."""
        self._index_gen = controller.index.generation
        """The index's generation last seen (it changes when a followed file is rotated or truncated)."""

    # --- what the screen provides ---
    def show_position(self, rebuild: bool = False, passed: list[int] | None = None) -> None:
        """Draw the report at the position. ``rebuild``: after a jump; ``passed``: reports played since the last
        frame."""
        raise NotImplementedError

    def set_position_text(self, text: str) -> None:
        """Where we are, for the header."""
        raise NotImplementedError

    def position_note(self) -> str:
        """Something the header says about the position (" · ECC since start: counting"), or nothing."""
        return ""

    def scan_markers(self) -> Worker[None]:
        """Start the background scan for markers (a thread worker posting ``MarkersFound``)."""
        raise NotImplementedError

    def goto_input(self) -> GotoBar:
        """The go-to prompt, for the screen's ``compose_bottom`` (in the layout, above the footer)."""
        return GotoBar(id="goto-bar")

    # --- start, stop ---
    def on_mount(self) -> None:
        for note in self.controller.notes:  # --speed 1000: says it plays at 100x, the fastest
            self.notify(note, title="speed", severity="warning", timeout=6, markup=False)
        self.controller.notes = []
        self.controller.settle()
        self.show_position(rebuild=True)
        self._schedule()
        self._poll()
        # The scan decodes every report while holding the GIL for each one: start it once the first frame is out.
        self.call_after_refresh(self._start_scan)

    def _start_scan(self) -> None:
        if self._scanner is None:
            self._scanner = self.scan_markers()

    def on_markers_found(self, _: MarkersFound) -> None:
        self._update_scrubber()

    def on_unmount(self) -> None:
        self.controller.stop_scan()

    def _position_text(self) -> str:
        c = self.controller
        n = len(c)
        idx = c.index
        if not idx.done:
            reading = (f"reading {clean(idx.name, 40) or 'input'}" if idx.spooled
                       else f"indexing {idx.progress * 100:.0f}%")
        else:
            reading = ""
        skipped = c.bad + idx.skipped
        tail = (f" · {reading}" if reading else "") + (f" · skipped {skipped}" if skipped else "")
        if n == 0:
            return f"no {self.UNITS} yet" + tail
        wall = idx.wallclock
        pos = min(c.position, n - 1)
        t = clock_text(idx.timestamp(pos), wall)
        state = "⏸" if not c.playing else "end" if c.at_end() else "▶"
        hole = c.hole_ahead() if c.playing else None
        ahead = f" · next: {gap_text(hole.seconds)} without data" if hole is not None else ""
        return f"{state} {self.UNIT} {pos + 1}/{n} · {t} · {c.speed:g}x{ahead}{self.position_note()}{tail}"

    def _jump_kinds(self) -> tuple[str, ...]:
        """The kinds ``n``/``N`` stop at: the chosen ones, else every kind not hidden."""
        return self._jump if self._jump is not None else tuple(k for k in KINDS if k not in self._hidden)

    def _update_scrubber(self) -> None:
        c = self.controller
        found = self.query(Scrubber)
        if not found:  # a move told while the screen is being taken down (the timeline's playhead at exit)
            return
        s = found.first()
        s.markers = c.markers  # a new list after the file was replaced
        s.total = len(c)
        s.position = c.position
        s.markers_seen = len(c.markers)
        s.mark_in = c.mark_in
        s.hidden = self._hidden
        s.jump = self._jump
        near = c.next_marker(1, self._jump_kinds())
        scan = [] if c.scanned >= len(c) else [f"scanning {c.scanned}/{len(c)}"]
        s.info = (*scan, plural(len(c.markers), "marker"),
                  *([f"next: {near.text} (#{near.index + 1})"] if near else []),
                  *([f"range from #{c.mark_in + 1}"] if c.mark_in is not None else []))
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
        for hole in self.controller.take_holes():  # cut short: say so, once
            self.notify(hole.text, title=f"gap after {self.UNIT} {hole.after + 1}", timeout=6, markup=False)
        self._schedule()

    def _poll(self) -> None:
        """Watch the index: the first report (closely), indexing progress, and a followed file growing."""
        if self._poll_timer is not None:  # called early (tests, a key): keep a single chain of looks
            self._poll_timer.stop()
        self._poll_timer = None
        c = self.controller
        idx = c.index
        if idx.done:
            idx.refresh()  # tail -F: pick up what was appended, or a new file at the path
        for note in idx.take_notices():
            self.notify(note, title="following", severity="warning", timeout=10, markup=False)
        if idx.generation != self._index_gen:
            self._replaced()
        # Compared with the last look, not with before refresh: the indexing thread adds reports on its own.
        seen = (len(idx), idx.done, idx.skipped)
        changed, grew = seen != self._seen, seen[0] != self._seen[0]
        self._seen = seen
        c.settle()
        if not self._shown and len(idx):
            self.show_position(rebuild=True)
        elif changed or not idx.done:
            self.set_position_text(self._position_text())
            self._update_scrubber()
        if grew and self._scanner is not None and self._scanner.is_finished:
            self._scanner = self.scan_markers()  # carries on from where it stopped
        if self._timer is None:
            self._schedule()
        if idx.finished:
            return  # nothing more can ever arrive: no more polling
        self._poll_timer = self.set_timer(WAIT_POLL if not self._shown else FOLLOW_POLL, self._poll)

    def _replaced(self) -> None:
        """The followed file was rotated or truncated and the index started over: so do markers and position."""
        c = self.controller
        self._index_gen = c.index.generation
        c.restart()
        self._seen = (0, False, 0)
        self._shown = False
        self._scanner = self.scan_markers()  # the old scan sees the restart and stops
        self._moved()

    def _moved(self) -> None:
        self.show_position(rebuild=True)
        self._schedule()

    # --- actions ---
    def action_play_pause(self) -> None:
        self.controller.toggle()
        self.set_position_text(self._position_text())
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
        self.set_position_text(self._position_text())
        self._schedule()

    def action_marker(self, direction: int) -> None:
        m = self.controller.next_marker(direction, self._jump_kinds())
        if m is None:
            what = "markers" if self._jump is None else kind_names(self._jump)
            self.notify(f"no more {what}" if self.controller.markers else "no markers (yet)", timeout=2,
                        markup=False)
            return
        self.controller.seek(m.index)
        self.notify(m.text, title=f"marker #{m.index + 1}", timeout=4, markup=False)
        self._moved()

    def action_jump_kind(self) -> None:
        """``k``: choose what ``n``/``N`` jump to: every marker, then each kind in turn, most severe first."""
        at = JUMP_KINDS.index(self._jump) if self._jump in JUMP_KINDS else 0
        self._jump = JUMP_KINDS[(at + 1) % len(JUMP_KINDS)]
        self.notify(f"n/N jump to: {kind_names(self._jump)}", timeout=2, markup=False)
        self._update_scrubber()

    def action_corrected_ecc(self) -> None:
        """``e``: hide (or show again) corrected ECC, which a busy recording has in nearly every report."""
        self._hidden = self._hidden ^ {"ecc-corrected"}
        shown = "ecc-corrected" not in self._hidden
        self.notify(f"corrected ECC {'shown' if shown else 'hidden'}", timeout=2)
        self._update_scrubber()

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
            start, stop = max(0, c.position - WINDOW + 1), c.position
        stem = re.sub(r"[^\w.-]+", "_", Path(self.recording_name or "replay").name.split(".")[0]) or "replay"
        return start, stop, Path.cwd() / f"{stem}-{start + 1}-{stop + 1}.jsonl"

    def action_write(self) -> None:
        if len(self.controller) == 0:
            self.notify("nothing to write yet", timeout=2)
            return
        self.write_window(*self.write_target())

    @work(thread=True, exclusive=False, exit_on_error=False, group="write", description="writing reports")
    def write_window(self, start: int, stop: int, out: Path) -> None:
        """In a worker: a marked range can be a gigabyte. Never over an existing file: the first free name
        (``-2``, ``-3`` ...), also when one appears while writing."""
        from neuron_top.recording.writer import free_name, write_range

        for _ in range(100):
            target = free_name(out)
            try:
                n = write_range(self.controller.index, start, stop + 1, target)
            except FileExistsError:
                continue  # taken while we wrote: the next name
            except OSError as exc:
                self.post_message(WindowWritten(f"cannot write {target}: {exc.strerror or exc}", error=True))
                return
            self.post_message(WindowWritten(f"wrote {plural(n, self.UNIT, self.UNITS)} ({start + 1}-{stop + 1}) "
                                            f"to {target}"))
            return
        self.post_message(WindowWritten(f"cannot write {out}: no free name", error=True))

    def on_window_written(self, message: WindowWritten) -> None:
        self.notify(message.text, title="window written" if not message.error else "write failed",
                    severity="error" if message.error else "information", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``:`` in a text box (the go-to box itself, the filter) is a character (``typing``)."""
        return not (action == "goto" and typing(self.focused))

    def action_goto(self) -> None:
        self.query_one(GotoBar).open()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "goto":
            return
        event.stop()
        bar = self.query_one(GotoBar)
        try:
            target, note = goto(event.value, self.controller)
        except GotoError as exc:
            bar.fail(str(exc))  # the prompt stays, with the entry and why
            return
        bar.close()
        self.focus_next()
        self.controller.seek(target)
        if note:  # brought into the recording: say so (":1802" in 1,801 reports)
            self.notify(note, title="go to", timeout=4, markup=False)
        self._moved()

    def key_escape(self) -> None:
        bar = self.query_one(GotoBar)
        if bar.is_open:
            bar.close()
            self.focus_next()
            return
        self.escape()

    def escape(self) -> None:
        """Esc when the go-to box is not open: the screen's own Esc."""

    def on_scrubber_seek(self, message: Scrubber.Seek) -> None:
        self.controller.seek(message.index)
        self._moved()

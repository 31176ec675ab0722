"""A fleet recording replayed: the fleet table at each recorded refresh, with the replay's transport keys and
scrubber (markers where a host's uncorrected ECC or errors began, where a host went down, where the source
became unreachable)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

import msgspec
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding

from neuron_top.fleet.frame import FleetFrame
from neuron_top.fleet.record import decode_frame, fleet_markers
from neuron_top.recording.player import ReplayController
from neuron_top.tui.screens.fleet import FleetScreen
from neuron_top.tui.screens.transport import MarkersFound, ReplayTransport
from neuron_top.tui.widgets.fleet_header import ViewState
from neuron_top.tui.widgets.scrubber import Scrubber

CACHE = 32
"""Decoded frames kept (stepping back and forth re-reads the same few)."""


class FleetReplayScreen(FleetScreen, ReplayTransport):
    BINDINGS = [Binding("space,p", "play_pause", "play/pause")]  # p pauses the live fleet; here it plays
    UNIT, UNITS = "refresh", "refreshes"

    def __init__(self, controller: ReplayController, name: str = "") -> None:
        super().__init__()
        self.init_transport(controller, name)
        self.position_text = ""
        self.bad = 0
        """Recorded lines that were not fleet frames."""
        self._frames: OrderedDict[int, FleetFrame | None] = OrderedDict()

    def compose_top(self) -> ComposeResult:
        yield Scrubber(self.controller.markers, id="scrubber")

    def compose_bottom(self) -> ComposeResult:
        yield self.goto_input()

    def open_refused(self, key: str) -> str:
        return "a fleet recording keeps each host's row, not its reports: its dashboard needs the live fleet"

    # --- frames ---
    def frame_at(self, i: int) -> FleetFrame | None:
        """Recorded refresh ``i``, decoded (None when the line is not a fleet frame: counted once)."""
        if i in self._frames:
            self._frames.move_to_end(i)
            return self._frames[i]
        try:
            frame: FleetFrame | None = decode_frame(self.controller.index.get(i))
        except (msgspec.DecodeError, msgspec.ValidationError, IndexError, OSError):
            frame = None
            self.bad += 1
        self._frames[i] = frame
        if len(self._frames) > CACHE:
            self._frames.popitem(last=False)
        return frame

    def show_position(self, rebuild: bool = False, passed: list[int] | None = None) -> None:
        c = self.controller
        n = len(c)
        if n:
            i = min(c.position, n - 1)
            frame = self.frame_at(i)
            while frame is None and i > 0:  # a bad line: show the refresh before it
                i -= 1
                frame = self.frame_at(i)
            if frame is not None:
                self._shown = True
                self.apply_frame(frame, record=False)
        self.set_position_text(self._position_text())
        self._update_scrubber()

    def set_position_text(self, text: str) -> None:
        self.position_text = text + (f" · {self.bad} bad lines" if self.bad else "")
        self._header()

    def view_state(self) -> ViewState:
        v = super().view_state()
        return ViewState(v.sort, v.reverse, v.filter, v.group, v.trouble_first, v.heat, False, self.position_text)

    def key_escape(self) -> None:
        ReplayTransport.key_escape(self)

    def escape(self) -> None:
        FleetScreen.key_escape(self)

    # --- markers ---
    @work(thread=True, exclusive=True, exit_on_error=False, group="markers", description="scanning for markers")
    def scan_markers(self) -> None:
        c = self.controller
        generation = c.scan_generation

        def cancelled() -> bool:
            return c.scan_cancelled(generation)

        def frames() -> Iterator[tuple[int, FleetFrame | None]]:
            i = c.scanned
            while not cancelled():
                if i >= len(c.index):
                    if c.index.done:
                        return
                    c.index.wait_for(i, 0.2)
                    continue
                try:
                    yield i, decode_frame(c.index.get(i))
                except (msgspec.DecodeError, msgspec.ValidationError, IndexError, OSError):
                    yield i, None
                i += 1
                c.scanned = i
                if i % 200 == 0:
                    self.post_message(MarkersFound())

        for marker in fleet_markers(frames(), cancelled):
            c.markers.append(marker)
        self.post_message(MarkersFound())

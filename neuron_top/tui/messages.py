"""Messages the collector worker posts to the app. Small, immutable; the worker never touches widgets."""

from __future__ import annotations

from textual.message import Message

from neuron_top.feed import FeedEvent
from neuron_top.fleet.frame import FleetFrame
from neuron_top.snapshot import Snapshot
from neuron_top.sources.base import Skipped, Status


class ReportArrived(Message):
    """A decoded report, ready to draw."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class InputSkipped(Message):
    """Input that was not a report. Several in a row coalesce (the count adds up in the collector)."""

    def __init__(self, skipped: Skipped, total: int) -> None:
        super().__init__()
        self.skipped = skipped
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, InputSkipped)


class SourceChanged(Message):
    """The source changed state (live, ended, restarting ...)."""

    def __init__(self, status: Status) -> None:
        super().__init__()
        self.status = status


class RecordingFailed(Message):
    """Writing the --record file failed (disk full, permissions); live data keeps flowing."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class WallTime(Message):
    """A screen moved to a moment of wall-clock time (Unix seconds): the replay's position, or the timeline's
    playhead. The app hands it to the other screens that follow it (``follow_wall_time``); ``origin`` is the
    screen that posted it, so it is never handed back."""

    def __init__(self, unix: float, origin: object) -> None:
        super().__init__()
        self.unix = unix
        self.origin = origin

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, WallTime) and message.origin is self.origin


class FleetRefreshed(Message):
    """The fleet poller's new frame (rows of every host). Frames coalesce: only the newest matters."""

    def __init__(self, frame: FleetFrame) -> None:
        super().__init__()
        self.frame = frame

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FleetRefreshed)


class HostEvent(Message):
    """One feed event of one host of the fleet (its ssh stream, or its Prometheus drill-down)."""

    def __init__(self, host: str, event: FeedEvent) -> None:
        super().__init__()
        self.host = host
        self.event = event

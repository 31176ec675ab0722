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
    """Input that was not a report. Several waiting in a row coalesce into the newest, which carries the ones it
    replaced (``earlier``): ``total`` is the feed's count so far, and every reason is still counted.

    Before, the newest one replaced the others outright: the header's count (the total) was right, but the problems
    screen lost their reasons (a stream of truncated and malformed reports: "Skipped input (6 items)" above one
    line, "malformed JSON: 3")."""

    def __init__(self, skipped: Skipped, total: int) -> None:
        super().__init__()
        self.skipped = skipped
        self.total = total
        self.earlier: list[Skipped] = []

    def can_replace(self, message: Message) -> bool:
        """Textual asks the message it would handle (this one) whether ``message``, queued behind it, may be
        handled instead: yes, if it takes this one's items along."""
        if not isinstance(message, InputSkipped):
            return False
        earlier = self.earlier  # one list handed on (a flood coalesces thousands), a reason's run kept as one item
        last = earlier[-1] if earlier else None
        if last is not None and last.reason == self.skipped.reason:
            earlier[-1] = Skipped(last.reason, self.skipped.sample, last.count + self.skipped.count)
        else:
            earlier.append(self.skipped)
        earlier.extend(message.earlier)
        message.earlier = earlier
        return True

    @property
    def items(self) -> list[Skipped]:
        """Every skipped item this message stands for, oldest first."""
        return [*self.earlier, self.skipped]


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

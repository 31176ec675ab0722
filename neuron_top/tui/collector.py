"""The one background worker: runs the core's feed loop (``neuron_top.feed``) and posts its events as messages.

It owns no UI state and never touches widgets: decoding and snapshot building happen in the feed, on this
thread, so the UI thread only draws.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Protocol

from textual.message import Message

from neuron_top.feed import (
    Feed,
    FeedEvent,
    PodSource,
    Recorder,
    RecordingError,
    Report,
    SkippedInput,
    StatusChanged,
)
from neuron_top.sources.base import Source
from neuron_top.tui.messages import InputSkipped, RecordingFailed, ReportArrived, SourceChanged


def message_for(event: FeedEvent) -> Message:
    """The Textual message that carries one feed event to the app."""
    if isinstance(event, Report):
        return ReportArrived(event.snapshot)
    if isinstance(event, SkippedInput):
        return InputSkipped(event.skipped, event.total)
    if isinstance(event, StatusChanged):
        return SourceChanged(event.status)
    if isinstance(event, RecordingError):
        return RecordingFailed(event.reason)
    raise TypeError(f"not a feed event: {event!r}")


class FeedSink(Protocol):
    """Something else fed every event on this thread: the Prometheus exporter of ``--export``."""

    def apply(self, event: FeedEvent) -> None: ...


class Collector:
    """Drains ``source`` into ``post`` (and ``sink``). ``run`` blocks; call it from a thread worker."""

    def __init__(self, source: Source, post: Callable[[Message], object], recorder: Recorder | None = None,
                 clock: Callable[[], float] = time.time, sink: FeedSink | None = None,
                 pods: PodSource | None = None) -> None:
        self.feed = Feed(source, recorder, clock=clock, pods=pods)
        self.source = source
        self.post = post
        self.sink = sink

    @property
    def recorder(self) -> Recorder | None:
        """Where raw reports are teed (None once a write failed)."""
        return self.feed.recorder

    @property
    def skipped(self) -> int:
        return self.feed.skipped

    @property
    def reports(self) -> int:
        return self.feed.reports

    def run(self) -> None:
        post, sink = self.post, self.sink
        for event in self.feed.events():
            if sink is not None:
                # an exporter bug must not stop the dashboard; its report age then grows in every scrape
                with contextlib.suppress(Exception):
                    sink.apply(event)
            post(message_for(event))

    def close(self) -> None:
        self.feed.close()

"""The one background worker: reads a source, decodes, builds snapshots, tees to a recording, posts messages.

It owns no UI state. Decoding and snapshot building happen here so the UI thread only draws.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from textual.message import Message

from neuron_top.decode import DecodeError
from neuron_top.snapshot import snapshot_from
from neuron_top.sources.base import RawReport, Skipped, Source, Status
from neuron_top.sources.framing import split_concatenated
from neuron_top.textsafe import clean
from neuron_top.tui.messages import InputSkipped, ReportArrived, SourceChanged


class Collector:
    """Drains ``source`` into ``post``. ``run`` blocks; call it from a thread worker."""

    def __init__(self, source: Source, post: Callable[[Message], object], recorder: object | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.post = post
        self.recorder = recorder
        """Anything with ``write(data: bytes, ts: float)``; every raw report is teed to it before decoding."""
        self.clock = clock
        self.skipped = 0
        self.reports = 0
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            for item in self.source.items(self.stop):
                if self.stop.is_set():
                    break
                if isinstance(item, RawReport):
                    self._report(item)
                elif isinstance(item, Skipped):
                    self._skip(item)
                elif isinstance(item, Status):
                    self.post(SourceChanged(item))
        except Exception as exc:  # a source must never take the app down
            from neuron_top.sources.base import State

            self.post(SourceChanged(Status(State.FAILED, f"source failed: {clean(repr(exc), 200)}")))

    def _report(self, item: RawReport) -> None:
        ts = item.ts if item.ts is not None else self.clock()
        if self.recorder is not None and item.index is None:
            try:
                self.recorder.write(item.data, ts)  # type: ignore[attr-defined]
            except OSError as exc:
                from neuron_top.tui.messages import RecordingFailed

                self.post(RecordingFailed(clean(str(exc))))
                self.recorder = None
        self._decode(item.data, ts, split=True)

    def _decode(self, data: bytes, ts: float, split: bool = False) -> None:
        try:
            snap = snapshot_from(data, ts, self.reports + 1)
        except DecodeError as exc:
            parts = split_concatenated(data) if split else [data]
            if len(parts) > 1:
                # Several reports run together on one line (``cat`` of files without a final newline): each is
                # shown (the recorder, which saw the line first, wrote each on its own line).
                for part in parts:
                    self._decode(part, ts)
                return
            self._skip(Skipped(str(exc), clean(data[:80].decode("utf-8", "replace"))))
            return
        except Exception as exc:  # a decoder bug must cost this report, not the whole source
            self._skip(Skipped(f"could not read this report: {clean(repr(exc), 120)}",
                               clean(data[:80].decode("utf-8", "replace"))))
            return
        self.reports += 1
        self.post(ReportArrived(snap))

    def _skip(self, item: Skipped) -> None:
        self.skipped += item.count
        self.post(InputSkipped(item, self.skipped))

    def close(self) -> None:
        self.stop.set()
        self.source.close()
        if self.recorder is not None:
            with contextlib.suppress(OSError):
                self.recorder.close()  # type: ignore[attr-defined]

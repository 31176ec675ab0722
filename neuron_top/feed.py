"""The one feed loop: any source in, decoded snapshots, skipped input and status changes out (no UI imports).

Every consumer reads reports the same way: the dashboard's worker thread, ``record``, ``--once``/``--json`` and the
Prometheus exporter. Framing rules live here once: a line holding several reports run together (``cat`` of
files without a final newline) becomes one snapshot each; what cannot be decoded becomes a ``SkippedInput`` with
a reason and a running total; a source that raises becomes a FAILED status, never a crash.

A recorder, when given, sees every raw line first, exactly as the source gave it, before decoding can fail: a
recording keeps what arrived, whatever the decoder thinks of it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from neuron_top.decode import DecodeError
from neuron_top.k8s.model import Attribution, attribution_record
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.sources.base import RawReport, Skipped, Source, State, Status
from neuron_top.sources.framing import split_concatenated
from neuron_top.sources.stream import StopEvent
from neuron_top.textsafe import clean

__all__ = [
    "Feed",
    "FeedEvent",
    "PodSource",
    "Recorder",
    "RecordingError",
    "Report",
    "SkippedInput",
    "SourceTally",
    "StatusChanged",
]


class Recorder(Protocol):
    """Where raw reports are teed (``neuron_top.recording.writer.RecordingWriter``)."""

    def write(self, data: bytes, ts: float | None = None, pods: bytes = b"") -> object: ...
    def close(self) -> None: ...


class PodSource(Protocol):
    """Who holds each core (``neuron_top.k8s.PodWatcher``, or the demo's simulated pods)."""

    def current(self) -> Attribution: ...
    def want_pids(self, pids: Iterable[int]) -> None: ...
    def settle(self, ask: bool = True) -> Attribution:
        """An answer now, waiting for it (``--once``: one report, no later refresh). ``ask`` False: the node was
        asked already for this report (``--once --record`` asks before it comes, for the recording); its answer
        stands, and only what needs the report's pids is looked up (the runtimes' cgroups, when the node did not
        answer)."""
        ...
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Report:
    """One decoded report."""

    snapshot: Snapshot
    raw: bytes
    """The report's JSON document, as decoded."""


@dataclass(frozen=True, slots=True)
class SkippedInput:
    """Input that was not a report; ``total`` counts every skipped item of this feed so far."""

    skipped: Skipped
    total: int


@dataclass(frozen=True, slots=True)
class StatusChanged:
    """The source changed state (live, ended, restarting, failed ...)."""

    status: Status


@dataclass(frozen=True, slots=True)
class RecordingError:
    """Writing the recording failed (disk full, permissions); the feed goes on without it."""

    reason: str


FeedEvent = Report | SkippedInput | StatusChanged | RecordingError


@dataclass(slots=True)
class SourceTally:
    """What a feed's events say about its source, counted one way for every reader (the ``Session`` behind the
    dashboard and ``--once``, the exporter's ``neurontop_*`` families, ``health``): its ``State``, its last
    message, the input skipped, the restarts and the recording failures.

    >>> from neuron_top.sources.base import State, Status
    >>> t = SourceTally()
    >>> for st in (State.LIVE, State.RESTARTING, State.RESTARTING, State.LIVE, State.RESTARTING):
    ...     _ = t.apply(StatusChanged(Status(st, st.value)))
    >>> t.state, t.restarts, t.message
    (<State.RESTARTING: 'restarting'>, 2, 'restarting')
    """

    state: State = State.STARTING
    message: str = ""
    """The last non-empty status message (why it ended, what it waits for)."""
    cause: str = ""
    """That message without what the source does next ("; restarting in 2 s"), when it said so (``Status.cause``)."""
    last_words: str = ""
    """The last line the source's process wrote on stderr before it ended (``Status.last_words``), or ""."""
    skipped: int = 0
    """Input items skipped so far (``SkippedInput.total``)."""
    restarts: int = 0
    """Times the source went into RESTARTING from another state."""
    recording_errors: int = 0

    def apply(self, event: FeedEvent) -> bool:
        """Count one event; True when it said something about the source (not a report)."""
        if isinstance(event, SkippedInput):
            self.skipped = max(self.skipped, event.total)
        elif isinstance(event, StatusChanged):
            st = event.status
            if st.state is State.RESTARTING and self.state is not State.RESTARTING:
                self.restarts += 1
            self.state = st.state
            if st.message:
                self.message, self.cause = st.message, st.cause or st.message
                self.last_words = st.last_words
        elif isinstance(event, RecordingError):
            self.recording_errors += 1
        else:
            return False
        return True


class Feed:
    """Turns one ``Source`` into ``FeedEvent`` values. ``events`` blocks; run it in one thread.

    Args:
        source: where reports come from (``neuron_top.sources``).
        recorder: optional; every raw report of a live source is written to it before decoding.
        clock: Unix time for reports whose source gives none.
        decode: False yields ``Report`` events for nothing; only skips, status and recording errors come out
            (``record`` needs no snapshots). The reports are still counted in ``reports``.
        pods: where pod attribution comes from; each snapshot gets its latest answer (never waiting for it), and
            it learns the runtimes' pids.
    """

    def __init__(self, source: Source, recorder: Recorder | None = None, *,
                 clock: Callable[[], float] = time.time, decode: bool = True, pods: PodSource | None = None) -> None:
        self.source = source
        self.pods = pods
        self._pods_kept: tuple[Attribution, bytes] | None = None
        self.recorder = recorder
        self.clock = clock
        self.decode = decode
        self.reports = 0
        """Reports decoded (or, with ``decode=False``, received) so far."""
        self.skipped = 0
        """Skipped items so far (lines, documents; a ``Skipped`` may count several)."""
        self.skip_reasons: dict[str, int] = {}
        """Skipped items by reason, for a summary."""
        self.stop = StopEvent()
        """Set by ``close``; it wakes the source's read at once (``sources.stream.StopEvent``)."""

    def events(self, stop: threading.Event | None = None) -> Iterator[FeedEvent]:
        """Every event of the source until it ends, ``stop`` is set or ``close`` is called.

        Returns:
            An iterator of ``Report``, ``SkippedInput``, ``StatusChanged`` and ``RecordingError``.
        """
        stop = stop or self.stop
        try:
            for item in self.source.items(stop):
                if stop.is_set() or self.stop.is_set():
                    break
                if isinstance(item, RawReport):
                    yield from self._report(item)
                elif isinstance(item, Skipped):
                    yield self._skip(item)
                elif isinstance(item, Status):
                    yield StatusChanged(item)
        except Exception as exc:  # a source must never take its reader down
            yield StatusChanged(Status(State.FAILED, f"source failed: {clean(repr(exc), 200)}"))

    def run(self, emit: Callable[[FeedEvent], object], stop: threading.Event | None = None) -> None:
        """``events`` handed one by one to ``emit`` (a thread worker's body)."""
        for event in self.events(stop):
            emit(event)

    def close(self) -> None:
        """Stop the loop, release the source and close the recorder; safe from another thread."""
        self.stop.set()
        self.source.close()
        if self.pods is not None:
            self.pods.close()
        if self.recorder is not None:
            with contextlib.suppress(OSError):
                self.recorder.close()

    # --- inside ---
    def _report(self, item: RawReport) -> Iterator[FeedEvent]:
        ts = item.ts if item.ts is not None else self.clock()
        if self.recorder is not None and item.index is None:
            try:
                written = self.recorder.write(item.data, ts, self._pods_record())
            except OSError as exc:
                self.recorder = None
                yield RecordingError(clean(exc.strerror or str(exc)))
            else:
                if written is False and not self.decode:  # not a JSON object: the decoder would refuse it too
                    yield self._skip(Skipped("not a report", clean(item.data[:80].decode("utf-8", "replace"))))
                    return
        if not self.decode:
            self.reports += 1
            return
        yield from self._decode(item.data, ts, split=True)

    def _pods_record(self) -> bytes:
        """What the node says about pods now, to record beside the report (empty without attribution): replay
        then shows who held each core as the live screen did. Encoded once per answer of the watcher."""
        if self.pods is None:
            return b""
        att = self.pods.current()
        if not att.source:
            return b""
        kept = self._pods_kept
        if kept is None or kept[0] is not att:
            kept = self._pods_kept = (att, attribution_record(att))
        return kept[1]

    def _decode(self, data: bytes, ts: float, split: bool = False) -> Iterator[FeedEvent]:
        try:
            snap = snapshot_from(data, ts, self.reports + 1)
        except DecodeError as exc:
            parts = split_concatenated(data) if split else [data]
            if len(parts) > 1:
                for part in parts:
                    yield from self._decode(part, ts)
                return
            yield self._skip(Skipped(str(exc), clean(data[:80].decode("utf-8", "replace"))))
            return
        except Exception as exc:  # a decoder bug costs this report, not the source
            yield self._skip(Skipped(f"could not read this report: {clean(repr(exc), 120)}",
                                     clean(data[:80].decode("utf-8", "replace"))))
            return
        self.reports += 1
        if self.pods is not None:
            snap.attribution = self.pods.current()
            self.pods.want_pids(a.pid for a in snap.apps)
        yield Report(snap, data)

    def _skip(self, item: Skipped) -> SkippedInput:
        self.skipped += item.count
        self.skip_reasons[item.reason] = self.skip_reasons.get(item.reason, 0) + item.count
        return SkippedInput(item, self.skipped)

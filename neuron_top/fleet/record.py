"""Fleet recordings: one JSON line per refresh, replayed by ``neuron-top replay`` (no UI imports).

Each line is a ``FleetFrame`` with ``"neuron_top_fleet": 1`` as its first key (how ``replay`` tells a fleet
recording from a neuron-monitor one) and ``"neuron_top": {"ts": ...}`` as its last, written by the same
``RecordingWriter`` as report recordings: one write per line (a killed process leaves whole lines), ``.gz``/
``.zst`` by the name, and the same index reads it back for seeking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from neuron_top.fleet.frame import FleetFrame
from neuron_top.fleet.rows import DOWN, STALE, UP
from neuron_top.recording.index import FLEET_MAGIC
from neuron_top.recording.pacing import Times, hole_after
from neuron_top.recording.player import Marker
from neuron_top.textsafe import clean

if TYPE_CHECKING:
    from neuron_top.recording.incident import ExecEstimate, Incident, Summary
    from neuron_top.recording.index import Index

__all__ = ["ESTIMATE_HOW", "ExecutionsEstimate", "FleetRecorder", "decode_frame", "fleet_incidents", "fleet_markers",
           "fleet_summary", "is_fleet_line"]

MAGIC = FLEET_MAGIC


class _Line(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    neuron_top_fleet: int = 1
    frame: FleetFrame


_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(_Line)


def encode_frame(frame: FleetFrame) -> bytes:
    return _ENCODE(_Line(frame=frame))


def decode_frame(data: bytes) -> FleetFrame:
    """Raises ``msgspec.DecodeError``/``ValidationError`` for a line that is not a fleet frame."""
    return _DECODE.decode(data).frame


def is_fleet_line(data: bytes) -> bool:
    """Whether a recording's line is a fleet frame (starts with the fleet's magic), not a report."""
    return data.lstrip(b"\xef\xbb\xbf \t").startswith(MAGIC)


class FleetRecorder:
    """``--record FILE`` for the fleet: every refresh's frame, as one line. Raises ``OSError`` like the report
    recorder (the screen says so and the fleet goes on without recording)."""

    def __init__(self, path: str | Path) -> None:
        from neuron_top.recording.writer import RecordingWriter

        self.path = Path(path)
        self._writer = RecordingWriter(path)

    @property
    def written(self) -> int:
        return self._writer.written

    def write(self, frame: FleetFrame) -> None:
        self._writer.write(encode_frame(frame), frame.ts)

    def close(self) -> None:
        self._writer.close()


def fleet_markers(frames: Iterator[tuple[int, FleetFrame | None]], stop: Callable[[], bool] = lambda: False
                  ) -> Iterator[Marker]:
    """What happened between consecutive frames, for the replay scrubber: a host's first uncorrected ECC events,
    its errors starting, a host going stale or down, the source becoming unreachable."""
    prev: dict[str, tuple[bool, bool, str]] = {}
    was_unreachable = False
    for i, frame in frames:
        if stop():
            return
        if frame is None:
            continue
        if frame.state == "unreachable" and not was_unreachable:
            yield Marker(i, "stall", "source unreachable: " + (clean(frame.problems[0].message, 120) if frame.problems else ""))
        was_unreachable = frame.state == "unreachable"
        now: dict[str, tuple[bool, bool, str]] = {}
        for r in frame.rows:
            state = (bool(r.ecc_uncorrected), bool(r.err_rate), r.status)
            now[r.key] = state
            before = prev.get(r.key, (False, False, UP))
            if state[0] and not before[0]:
                yield Marker(i, "ecc-uncorrected", f"{clean(r.key, 60)}: uncorrected ECC ({r.ecc_uncorrected:g})")
            if state[1] and not before[1]:
                yield Marker(i, "error", f"{clean(r.key, 60)}: errors {r.err_rate:.2f}/s")
            if state[2] in (STALE, DOWN) and state[2] != before[2]:
                yield Marker(i, "host-down", f"{clean(r.key, 60)}: {state[2]}"
                             + (f" ({clean(r.note, 120)})" if r.note else ""))
        prev = now


def fleet_incidents(frames: Iterable[tuple[int, FleetFrame | None]], ts: Callable[[int], float]) -> list[Incident]:
    """A fleet recording's incidents over its hosts, as ``replay --summary`` lists a host's: runs of refreshes in
    which a host was down or stale, had uncorrected ECC in its window, had errors (with the peak rate), and the
    source being unreachable."""
    from neuron_top.recording.incident import Incidents

    inc = Incidents(ts)
    for i, frame in frames:
        if frame is None:
            continue
        if frame.state == "unreachable":
            inc.run("unreachable", "source", i,
                    detail=clean(frame.problems[0].message, 120) if frame.problems else "")
        for r in frame.rows:
            host = clean(r.key, 60)
            if r.status in (STALE, DOWN):
                why = ", ".join(x for x in ("stale" if r.status == STALE else "", clean(r.note, 100)) if x)
                inc.run("host-down", host, i, detail=why)
            if r.ecc_uncorrected:
                inc.run("ecc-uncorrected", host, i)
            if r.err_rate:
                inc.run("error", host, i, rate=r.err_rate)
    return inc.finish()


ESTIMATE_HOW = "estimated: each up host's exec/s and bad/s times the time since the refresh before"
"""How ``ExecutionsEstimate`` counts, said beside its figures."""


class ExecutionsEstimate:
    """A fleet recording's executions over its refreshes, fed one refresh at a time (``add``): a fleet frame
    keeps each host's rates (``FleetRow.exec_rate``, every outcome, and ``err_rate``, bad/s), not counts, so
    each rate counts for the time since the refresh before (a rate is over the time before it: the last report's
    period over ssh, the rate window from Prometheus). Not counted: the first refresh (no time before it), the
    time across a hole (``pacing.hole_after``: the fleet was not running, or the clock went back), a host that
    is not up (its figures are the last known, aging), an unreachable source's refresh, and a row without both
    rates."""

    def __init__(self, times: Times) -> None:
        self._times = times
        self.completed = 0.0
        self.bad = 0.0
        self.counted = False
        """Whether any refresh gave a rate (else the figure is not reported, not zero)."""

    def add(self, i: int, frame: FleetFrame | None) -> None:
        """Refresh ``i`` (None: a line that is not a fleet frame, counted as nothing)."""
        if frame is None or i == 0 or frame.state == "unreachable" or hole_after(self._times, i - 1) is not None:
            return
        dt = self._times.timestamp(i) - self._times.timestamp(i - 1)
        for r in frame.rows:
            if r.status == UP and r.exec_rate is not None and r.err_rate is not None:
                self.counted = True
                self.completed += max(r.exec_rate - r.err_rate, 0.0) * dt
                self.bad += r.err_rate * dt

    def result(self) -> ExecEstimate | None:
        from neuron_top.recording.incident import ExecEstimate

        return ExecEstimate(self.completed, self.bad, ESTIMATE_HOW) if self.counted else None


def fleet_summary(index: Index) -> Summary:
    """``replay --summary`` of a fleet recording: the same summary, over hosts (a line per refresh that is not a
    fleet frame is counted as skipped)."""
    from neuron_top.recording.incident import Summary

    n = len(index)
    bad = 0

    executions = ExecutionsEstimate(index)

    def frames() -> Iterator[tuple[int, FleetFrame | None]]:
        nonlocal bad
        for i in range(n):
            try:
                frame: FleetFrame | None = decode_frame(index.get(i))
            except (msgspec.DecodeError, msgspec.ValidationError, IndexError, OSError):
                bad += 1
                frame = None
            executions.add(i, frame)
            yield i, frame

    s = Summary(clean(index.name, 120), n, index.timestamp(0) if n else None,
                index.timestamp(n - 1) if n else None, index.wallclock, unit="refresh", units="refreshes")
    s.incidents = fleet_incidents(frames(), index.timestamp)
    s.estimate = executions.result()
    for _, item in index.skips():
        s.skipped[item.reason] = s.skipped.get(item.reason, 0) + item.count
    if bad:
        s.skipped["not a fleet refresh"] = bad
    return s

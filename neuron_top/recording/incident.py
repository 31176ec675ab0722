"""``neuron-top replay FILE --summary``: the incident report of a recording, for scripts and tickets (no UI imports).

What ``trace --check`` is for traces: the time span, the number of reports, what was skipped, the holes, and one
line per event in time order, each as the replay scrubber shows it::

    2026-01-01 02:13:05 ND3 uncorrected ECC (HBM) x1

A flood of corrected ECC (a busy machine has some in nearly every report) becomes one line per device, memory and
hour. The exit status is 1 when the recording holds uncorrected ECC errors or execution errors, so a script can
``neuron-top replay night.jsonl.zst --summary || page-someone``.

The events are the replay screen's markers, found by the same scan (``player.scan_range``), spread over worker
processes for a long recording.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Protocol

import msgspec

from neuron_top import fmt
from neuron_top.fmt import plural
from neuron_top.recording.markers import LABELS, MARKER_KINDS, Marker
from neuron_top.recording.pacing import gap_text
from neuron_top.textsafe import clean

__all__ = ["SERIOUS", "Event", "Summary", "format_summary", "scan_all", "summarize", "summary_json"]

SERIOUS = tuple(k.name for k in MARKER_KINDS if k.serious)
"""Kinds that make ``--summary`` exit 1."""
_FOUND = {"ecc-uncorrected": ("uncorrected ECC event", "uncorrected ECC events"),
          "error": ("app with execution errors starting", "times an app's execution errors started")}
GROUPED = tuple(k.name for k in MARKER_KINDS if k.grouped)
"""Kinds grouped per subject (device and memory) and hour."""


class _Index(Protocol):
    name: str
    skipped: int
    wallclock: bool

    def __len__(self) -> int: ...
    def timestamp(self, i: int) -> float: ...
    def skips(self, start: int = 0) -> list: ...


@dataclass(slots=True)
class Event:
    """One line of the summary: a marker, or a group of markers of one kind and subject within an hour."""

    ts: float
    kind: str
    text: str
    count: int = 1
    """Events it stands for (ECC counts summed over a group)."""
    reports: int = 1
    """Reports it spans."""
    until: float | None = None
    """For a group: the time of its last report."""
    seconds: float = 0.0
    """For a hole: how long it is."""


@dataclass(slots=True)
class Summary:
    name: str
    reports: int
    start: float | None
    end: float | None
    wallclock: bool
    skipped: dict[str, int] = field(default_factory=dict)
    """Skipped input by reason (garbage lines, damaged compressed data) and reports that did not decode."""
    events: list[Event] = field(default_factory=list)
    holes: list[Event] = field(default_factory=list)

    @property
    def serious(self) -> dict[str, int]:
        """Events of the kinds that make the exit status 1, counted per kind."""
        out: dict[str, int] = {}
        for e in self.events:
            if e.kind in SERIOUS:
                out[e.kind] = out.get(e.kind, 0) + 1
        return out


PARALLEL_MIN = 4000
"""Reports below which the scan runs in this process (starting workers costs more than it saves)."""
MAX_WORKERS = 8

_SHARED: object = None
"""The index the scan's worker processes read (inherited through fork, never pickled)."""


def scan_all(index: object, workers: int | None = None) -> tuple[list[Marker], int]:
    """Every marker of an indexed recording and how many reports did not decode: the replay screen's scan, split
    over worker processes when the recording is long and there are cores for them.

    Decoding is the whole cost of a summary (a 24-hour inf2.48xlarge recording is 86,400 reports of 50 KB); it
    holds the GIL, so threads would not help, but the reports are independent but for the one before each, which
    every chunk decodes first. Workers are forked: they share the parent's index and its open files."""
    from neuron_top.recording.player import scan_range

    n = len(index)  # type: ignore[arg-type]
    if workers is None:
        try:
            workers = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            workers = os.cpu_count() or 1
    workers = max(1, min(workers, MAX_WORKERS))
    if workers == 1 or n < PARALLEL_MIN or "fork" not in multiprocessing.get_all_start_methods():
        return scan_range(index, 0, n)  # type: ignore[arg-type]
    parts = workers * 4  # smaller pieces even out a busy core
    bounds = [n * k // parts for k in range(parts + 1)]
    global _SHARED
    _SHARED = index
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_signals)
    try:
        results = pool.starmap(_scan_part, pairwise(bounds))
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _SHARED = None
    markers: list[Marker] = []
    bad = 0
    for found, b in results:
        markers.extend(found)
        bad += b
    return markers, bad


def _worker_signals() -> None:
    """Workers take the default actions: the parent's handlers (``cli.signals``) are for the parent."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group: the parent decides


def _scan_part(start: int, stop: int) -> tuple[list[Marker], int]:
    from neuron_top.recording.player import scan_range

    return scan_range(_SHARED, start, stop)  # type: ignore[arg-type]


def summarize(index: _Index, markers: list[Marker], bad: int = 0) -> Summary:
    """The summary of a scanned recording: ``markers`` in report order (holes included), ``bad`` reports that
    did not decode."""
    n = len(index)
    s = Summary(clean(index.name, 120), n, index.timestamp(0) if n else None, index.timestamp(n - 1) if n else None,
                bool(getattr(index, "wallclock", True)))
    for _, item in index.skips():
        s.skipped[item.reason] = s.skipped.get(item.reason, 0) + item.count
    if bad:
        s.skipped["report did not decode"] = bad
    groups: dict[tuple[str, str, int, int, int], Event] = {}
    for m in markers:
        ts = index.timestamp(m.index)
        if m.kind == "gap":  # said at the time the data stopped, with when it came back
            before = index.timestamp(m.index - 1) if m.index else ts
            s.holes.append(Event(before, m.kind, m.text, until=ts, seconds=ts - before))
            s.events.append(s.holes[-1])
            continue
        if m.kind in GROUPED:
            lt = time.localtime(ts)  # the hours the lines print (a zone may be off by half an hour)
            key = (m.kind, m.subject, lt.tm_year, lt.tm_yday, lt.tm_hour)
            g = groups.get(key)
            if g is not None:
                g.count += m.count
                g.reports += 1
                g.until = ts
                continue
            g = groups[key] = Event(ts, m.kind, "", m.count, 1, ts)
            g.text = m.subject  # the group's line is written when it is complete (format_summary)
            s.events.append(g)
            continue
        s.events.append(Event(ts, m.kind, m.text, m.count))
    return s


def _when(ts: float, s: Summary) -> str:
    return fmt.moment(ts, s.wallclock, s.start or 0.0)


def _line(e: Event, s: Summary) -> str:
    if e.kind == "gap" and e.until is not None:
        return f"{_when(e.ts, s)} {e.text}, until {_when(e.until, s)}"
    if e.kind in GROUPED:
        subject = e.text  # "ND3 HBM"
        dev, _, where = subject.partition(" ")
        span = (f" in {e.reports} reports, last {_when(e.until, s).split(' ')[-1]}"
                if e.reports > 1 and e.until is not None else "")
        return f"{_when(e.ts, s)} {dev} {LABELS[e.kind]} ({where}) x{e.count}{span}"
    return f"{_when(e.ts, s)} {e.text}"


def format_summary(s: Summary) -> str:
    """The summary as text, one event a line, ending with what was found."""
    out = [f"{s.name}: {plural(s.reports, 'report')}"]
    if s.start is not None and s.end is not None:
        out[0] += f", {_when(s.start, s)} to {_when(s.end, s)} ({gap_text(s.end - s.start)})"
        if not s.wallclock:
            out[0] += " (no wall-clock times: times since the first report)"
    skipped = sum(s.skipped.values())
    if skipped:
        out.append(f"skipped: {skipped} (" + ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items())) + ")")
    if s.holes:
        lost = sum(h.seconds for h in s.holes)
        out.append(f"holes: {len(s.holes)}, {gap_text(lost)} without data in all")
    out.extend(_line(e, s) for e in s.events)
    serious = s.serious
    if serious:
        found = ", ".join(f"{serious[k]} {_FOUND[k][serious[k] != 1]}" for k in SERIOUS if k in serious)
        out.append(f"found: {found}")
    else:
        out.append("found: no uncorrected ECC errors, no execution errors")
    return "\n".join(out) + "\n"


def summary_json(s: Summary) -> bytes:
    """The summary as one JSON document (``--summary --json``)."""
    doc = {
        "file": s.name, "reports": s.reports, "start": s.start, "end": s.end, "wallclock": s.wallclock,
        "skipped": s.skipped, "holes": [{"ts": h.ts, "seconds": h.seconds, "text": h.text} for h in s.holes],
        "events": [{"ts": e.ts, "kind": e.kind, "text": _line(e, s).split(" ", 2 if s.wallclock else 1)[-1],
                    "count": e.count, "reports": e.reports} for e in s.events],
        "serious": s.serious,
    }
    return msgspec.json.encode(doc)



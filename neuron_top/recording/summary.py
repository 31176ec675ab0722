"""``neuron-top replay FILE --summary``: the incident report of a recording, for scripts and tickets (no UI imports).

What ``trace --check`` is for traces: the time span, the number of reports, what was skipped, the holes, and one
line per event in time order, each as the replay scrubber shows it::

    2026-01-01 02:13:05 ND3 uncorrected ECC (HBM) x1

A flood of corrected ECC (a busy machine has some in nearly every report) becomes one line per device, memory and
hour. The exit status is 1 when the recording holds uncorrected ECC errors or execution errors, so a script can
``neuron-top replay night.jsonl.zst --summary || page-someone``.

The events are the replay screen's markers, found by the same scan (``ReplayController.scan_markers``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from neuron_top.recording.markers import LABELS, Marker
from neuron_top.recording.pacing import gap_text
from neuron_top.textsafe import clean

__all__ = ["SERIOUS", "Event", "Summary", "format_summary", "summarize", "summary_json"]

SERIOUS = ("ecc-uncorrected", "error")
"""Kinds that make ``--summary`` exit 1."""
_FOUND = {"ecc-uncorrected": ("uncorrected ECC event", "uncorrected ECC events"),
          "error": ("app with execution errors starting", "times an app's execution errors started")}
GROUPED = ("ecc-corrected",)
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
    if s.wallclock:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    k = int(ts - (s.start or 0.0))
    return f"+{k // 3600:d}:{k % 3600 // 60:02d}:{k % 60:02d}"


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
    out = [f"{s.name}: {s.reports} reports"]
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



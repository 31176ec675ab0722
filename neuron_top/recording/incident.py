"""``neuron-top replay FILE --summary``: the incident report of a recording, for scripts and tickets (no UI imports).

What ``trace --check`` is for traces, for the post-mortem: the span, what was skipped, and each incident as an
*interval* (start, end, duration, total count, peak rate), serious ones first, the zone on every time::

    night.jsonl: 8,641 reports, 2026-01-01 00:00:00 to 2026-01-02 00:00:00 UTC (1 d 00 h)
    executions: completed 864,100, completed_with_err 180 (others 0 or not reported); errors 180
    serious:
      2026-01-01 03:40:00 to 03:49:50 UTC (10 m 00 s)  app bert: 180 execution errors in 60 reports, peak 0.30/s
      2026-01-01 05:00:20 UTC  ND5 uncorrected ECC (HBM) x1
    other:
      2026-01-01 06:00:00 to 06:04:50 UTC (5 m 00 s)  system_data.memory_info failing: ... (30 reports)
    corrected ECC (one line per device and memory, the whole recording):
      ND0 HBM x9 in 9 reports, 2026-01-01 00:10:00 to 23:10:00 UTC
    found: 1 uncorrected ECC event, 1 execution error burst (180 errors)

An error burst is a run of consecutive reports in which an app had failed executions (its count per report is
the core's rule, ``recording.markers.Facts``); a failing metric group, an uncorrected ECC and a host down are
runs too. Corrected ECC, which a busy machine has in nearly every report, is folded to one line per device and
memory for the whole recording. The exit status is 1 when the recording holds uncorrected ECC errors or
execution errors (for a fleet recording, also a host down), so a script can ``... --summary || page-someone``.

The counts come from the replay screen's scan (``player.scan_range``), spread over worker processes for a long
recording. A fleet recording (``neuron-top fleet --record``) gets the same summary over its hosts
(``fleet.record.fleet_incidents``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

import msgspec

from neuron_top import fmt
from neuron_top.derived import EXEC_TYPES
from neuron_top.fmt import plural
from neuron_top.recording.index import Index
from neuron_top.recording.markers import LABELS, MARKER_KINDS, Facts, Marker
from neuron_top.recording.pacing import gap_text, zone
from neuron_top.recording.totals import Totals
from neuron_top.sources.framing import NOT_A_REPORT
from neuron_top.textsafe import clean

__all__ = ["SERIOUS", "Incident", "Incidents", "Summary", "format_summary", "scan_all", "scan_incidents",
           "summarize", "summary_json"]

SERIOUS = tuple(k.name for k in MARKER_KINDS if k.serious)
"""Kinds that make ``--summary`` exit 1, listed first (``MarkerKind.serious``)."""
FOLDED = tuple(k.name for k in MARKER_KINDS if k.grouped)
"""Kinds folded to one line per subject for the whole recording, listed last (``MarkerKind.grouped``)."""
_FOUND = {"ecc-uncorrected": ("uncorrected ECC event", "uncorrected ECC events"),
          "error": ("execution error burst", "execution error bursts"),
          "host-down": ("host down", "hosts down")}
_RUN_KINDS = ("error", "group-error", "ecc-uncorrected", "host-down", "unreachable")
"""Kinds kept as runs of consecutive reports (an interval each)."""


@dataclass(slots=True)
class Incident:
    """One line of the summary: something that lasted from report ``first`` to report ``last``."""

    kind: str
    """A marker kind (``recording.markers.KINDS``), or "clock-back", "unreachable"."""
    subject: str
    """What it is about: "app bert", "ND3 HBM", "system_data.memory_info", a host."""
    first: int
    last: int
    start: float
    end: float
    count: int = 0
    """Events it stands for (errors by type, ECC events); 0 where there is nothing to count (a host down)."""
    bad: int = 0
    """An error burst's executions that did not complete cleanly (``bad/s``'s count), beside its errors."""
    reports: int = 1
    peak: float | None = None
    """The highest rate in one report of the run, per second (None: no period to divide by)."""
    seconds: float = 0.0
    """How long it lasted: from the first report's period to the last report (a hole: the gap)."""
    detail: str = ""
    """The error text of a failing group, why a host is down, the marker's own line for a point event."""

    @property
    def serious(self) -> bool:
        return self.kind in SERIOUS


class Incidents:
    """Incidents built from per-report observations fed in report order (reports, or a fleet's refreshes).

    Args:
        ts: the recorded time of report ``i``.
    """

    def __init__(self, ts: Callable[[int], float]) -> None:
        self.ts = ts
        self.done: list[Incident] = []
        self._open: dict[tuple[str, str], Incident] = {}
        self._folded: dict[tuple[str, str], Incident] = {}

    def _gap(self, i: int) -> float | None:
        """The period report ``i`` covers: the time since the report before it (None at the start or when the
        clock stepped back)."""
        if i <= 0:
            return None
        g = self.ts(i) - self.ts(i - 1)
        return g if g > 0 else None

    def run(self, kind: str, subject: str, i: int, count: int = 0, rate: float | None = None,
            detail: str = "", bad: int = 0) -> None:
        """Report ``i`` shows ``kind`` for ``subject``: it extends the run that ended at report ``i - 1``, or starts
        one. ``rate``: the per-second rate in this report, when it is known (else the count, or ``bad``, over the
        gap)."""
        gap = self._gap(i)
        n = count or bad
        r = rate if rate is not None else (n / gap if gap and n else None)
        key = (kind, subject)
        cur = self._open.get(key)
        if cur is not None and cur.last == i - 1:
            cur.last, cur.end = i, self.ts(i)
            cur.count += count
            cur.bad += bad
            cur.reports += 1
            if r is not None and (cur.peak is None or r > cur.peak):
                cur.peak = r
            return
        if cur is not None:
            self.done.append(cur)
        t = self.ts(i)
        self._open[key] = Incident(kind, subject, i, i, t, t, count, bad, 1, r, 0.0, detail)

    def fold(self, kind: str, subject: str, i: int, count: int) -> None:
        """One more report with ``count`` events of a folded kind (corrected ECC)."""
        key = (kind, subject)
        cur = self._folded.get(key)
        t = self.ts(i)
        if cur is None:
            self._folded[key] = Incident(kind, subject, i, i, t, t, count)
            return
        cur.last, cur.end = i, t
        cur.count += count
        cur.reports += 1

    def point(self, kind: str, subject: str, i: int, detail: str, count: int = 1, start: float | None = None,
              seconds: float = 0.0) -> None:
        """Something that happened at report ``i`` (an app stopped), or a gap ending there (``start``)."""
        t = self.ts(i)
        self.done.append(Incident(kind, subject, i, i, t if start is None else start, t, count, 0, 1, None,
                                  seconds, detail))

    def finish(self) -> list[Incident]:
        """Every incident: serious first, then the others, each in time order; folded kinds last, by subject."""
        out = self.done + list(self._open.values())
        for inc in out:
            if inc.kind in _RUN_KINDS:
                gap = self._gap(inc.first)
                if gap is None and inc.last > inc.first:
                    gap = (inc.end - inc.start) / (inc.last - inc.first)
                inc.seconds = inc.end - inc.start + (gap or 0.0)
        out.sort(key=lambda e: (not e.serious, e.start, e.first))
        folded = sorted(self._folded.values(), key=lambda e: _subject_order(e.subject))
        if len(folded) > FOLD_ACROSS:  # DRAM and SRAM on every device of a big machine: one line per memory
            folded = _across_devices(folded)
        return out + folded


FOLD_ACROSS = 16
"""More folded lines than this (both memories of 16 devices: 32) become one line per memory across devices."""


def _across_devices(folded: list[Incident]) -> list[Incident]:
    """Folded lines of one kind and memory merged across devices: "HBM on 16 devices (ND0-ND15) x1,440"."""
    merged: dict[tuple[str, str], Incident] = {}
    devices: dict[tuple[str, str], list[str]] = {}
    for e in folded:
        dev, _, where = e.subject.partition(" ")
        key = (e.kind, where)
        m = merged.get(key)
        devices.setdefault(key, []).append(dev)
        if m is None:
            merged[key] = Incident(e.kind, where, e.first, e.last, e.start, e.end, e.count, 0, e.reports,
                                   detail="across devices")
            continue
        m.count += e.count
        m.reports += e.reports
        if e.start < m.start:
            m.start, m.first = e.start, e.first
        if e.end > m.end:
            m.end, m.last = e.end, e.last
    for key, m in merged.items():
        names = devices[key]
        m.subject = f"{len(names)} devices ({names[0]}-{names[-1]}) {m.subject}" if len(names) > 1 else \
            f"{names[0]} {m.subject}"
    return list(merged.values())


def _subject_order(subject: str) -> tuple[int, str]:
    head, _, rest = subject.partition(" ")
    return (int(head[2:]) if head.startswith("ND") and head[2:].isdigit() else 1 << 30, rest)


@dataclass(frozen=True, slots=True)
class ExecEstimate:
    """Executions over a recording that keeps rates, not counts (a fleet recording): each refresh's rate times
    the time since the refresh before, summed; an estimate, and said to be one."""

    completed: float
    """Executions that completed cleanly (every outcome's rate less ``bad``'s)."""
    bad: float
    """Executions that did not complete cleanly (``bad/s``, ``derived.UNCLEAN``)."""
    how: str
    """How it was estimated, in words, for the line and the JSON."""


@dataclass(slots=True)
class Summary:
    name: str
    reports: int
    start: float | None
    end: float | None
    wallclock: bool
    unit: str = "report"
    """What one line of the recording is ("report", or "refresh" in a fleet recording)."""
    units: str = "reports"
    window: tuple[int, int] | None = None
    """Reports ``[lo, hi)`` summarized, when not the whole recording (``--start``/``--end``)."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Skipped input by reason (garbage lines, damaged compressed data) and reports that did not decode."""
    incidents: list[Incident] = field(default_factory=list)
    totals: Totals | None = None
    """Executions by outcome and errors over the reports summarized (None: not counted, a fleet recording)."""
    estimate: ExecEstimate | None = None
    """A fleet recording's executions, estimated from its rates (None: a report recording, or no host gave
    a rate)."""

    @property
    def holes(self) -> list[Incident]:
        return [e for e in self.incidents if e.kind == "gap"]

    @property
    def serious(self) -> dict[str, int]:
        """Incidents of the kinds that make the exit status 1, counted per kind."""
        out: dict[str, int] = {}
        for e in self.incidents:
            if e.serious:
                out[e.kind] = out.get(e.kind, 0) + 1
        return out

    @property
    def lost(self) -> dict[str, int]:
        """What was skipped that may have held a report (a truncated or undecodable one, damaged compressed
        data), by reason: the summary may miss what they held. A line that is not a report at all (a log line
        in the file) is not counted."""
        return {k: n for k, n in self.skipped.items() if k != NOT_A_REPORT}

    @property
    def exit_status(self) -> int:
        """``--summary``'s exit status: 2 when some of the recording could not be read (as ``trace --check``
        says of a trace: the summary is incomplete, whatever it found), else 1 for serious incidents, else 0."""
        if self.lost:
            return 2
        return 1 if self.serious else 0


PARALLEL_MIN = 4000
"""Reports below which the scan runs in this process (starting workers costs more than it saves)."""
MAX_WORKERS = 8

_PART: Callable[[int, int], tuple] | None = None
"""What the scan's worker processes run, with the index it reads (inherited through fork, never pickled)."""

Row = tuple[int, tuple[tuple[str, int, int], ...], tuple[tuple[int, int, int, int, int], ...],
            tuple[tuple[str, str], ...]]
"""What ``--summary`` keeps of a report with anything to say: (report, (app, errors, bad executions), ECC counts per
device (device, DRAM corrected, DRAM uncorrected, SRAM corrected, SRAM uncorrected), failing groups)."""


def _row(i: int, f: Facts) -> Row | None:
    # what an "error" marker counts (``markers_between``): errors of every type, and unclean executions
    errors = tuple((label, errs, bad) for label, _, bad, errs in f.apps.values() if errs or bad)
    ecc = tuple((e.device, e.mem_corrected, e.mem_uncorrected, e.sram_corrected, e.sram_uncorrected)
                for e in f.ecc if e.corrected or e.uncorrected)
    groups = tuple((g.where, g.error) for g in f.groups)
    return (i, errors, ecc, groups) if errors or ecc or groups else None


def _scan_rows(index: Index, start: int, stop: int) -> tuple[list[Marker], int, list[Row], Totals]:
    from neuron_top.recording.player import scan_range

    rows: list[Row] = []
    totals = [Totals()]

    def each(i: int, f: Facts | None) -> None:
        totals[0] = totals[0].plus(f)  # the replay screen's counts since start, over this part
        if f is not None and (r := _row(i, f)) is not None:
            rows.append(r)

    markers, bad = scan_range(index, start, stop, each)
    return markers, bad, rows, totals[0]


def _parallel(index: Index, part: Callable[[int, int], tuple], workers: int | None, lo: int = 0,
              hi: int | None = None) -> list[tuple]:
    """``part`` over the recording, split over forked worker processes when it is long and there are cores.

    Decoding is the whole cost of a summary (a 24-hour inf2.48xlarge recording is 86,400 reports of 50 KB); it
    holds the GIL, so threads would not help, but the reports are independent but for the one before each, which
    every chunk decodes first. Workers are forked: they share the parent's index and its open files."""
    hi = len(index) if hi is None else hi
    n = hi - lo
    if workers is None:
        try:
            workers = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            workers = os.cpu_count() or 1
    workers = max(1, min(workers, MAX_WORKERS))
    if workers == 1 or n < PARALLEL_MIN or "fork" not in multiprocessing.get_all_start_methods():
        return [part(lo, hi)]
    parts = workers * 4  # smaller pieces even out a busy core
    bounds = [lo + n * k // parts for k in range(parts + 1)]
    global _PART
    _PART = part
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_signals)
    try:
        results = pool.starmap(_run_part, pairwise(bounds))
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _PART = None
    return results


def _run_part(start: int, stop: int) -> tuple:
    assert _PART is not None
    return _PART(start, stop)


def scan_all(index: Index, workers: int | None = None) -> tuple[list[Marker], int]:
    """Every marker of an indexed recording and how many reports did not decode: the replay screen's scan, split
    over worker processes when the recording is long and there are cores for them."""
    from neuron_top.recording.player import scan_range

    results = _parallel(index, lambda a, b: scan_range(index, a, b), workers)
    markers: list[Marker] = []
    bad = 0
    for found, b in results:
        markers.extend(found)
        bad += b
    return markers, bad


def scan_incidents(index: Index, workers: int | None = None, lo: int = 0,
                   hi: int | None = None) -> tuple[list[Marker], int, list[Row], Totals]:
    """Markers, undecodable reports, the rows ``summarize`` reads and the counts over the reports (``Totals``: ECC,
    executions by outcome, errors), of reports ``[lo, hi)`` (default: all), as ``scan_all`` (in parallel when
    long)."""
    results = _parallel(index, lambda a, b: _scan_rows(index, a, b), workers, lo, hi)
    markers: list[Marker] = []
    rows: list[Row] = []
    bad = 0
    totals = Totals()
    for found, b, r, t in results:
        markers.extend(found)
        rows.extend(r)
        bad += b
        totals = totals.joined(t)
    return markers, bad, rows, totals


def _worker_signals() -> None:
    """Workers take the default actions: the parent's handlers (``cli.signals``) are for the parent."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group: the parent decides


_POINT_KINDS = ("app-", "app+", "stall")


def incidents_from(index: Index, markers: Iterable[Marker], rows: Iterable[Row], lo: int = 0,
                   hi: int | None = None) -> list[Incident]:
    """The incidents of a scanned recording: runs from the rows, points and holes from the markers, and every
    place the recorded clock went back."""
    inc = Incidents(index.timestamp)
    for i, errors, ecc, groups in rows:
        for label, errs, bad in errors:
            inc.run("error", f"app {label}", i, errs, bad=bad)
        for dev, mc, mu, sc, su in ecc:
            if mu:
                inc.run("ecc-uncorrected", f"ND{dev} HBM", i, mu)
            if su:
                inc.run("ecc-uncorrected", f"ND{dev} SRAM", i, su)
            if mc:
                inc.fold("ecc-corrected", f"ND{dev} HBM", i, mc)
            if sc:
                inc.fold("ecc-corrected", f"ND{dev} SRAM", i, sc)
        for where, error in groups:
            inc.run("group-error", where, i, detail=error)
    for m in markers:
        if m.index == lo and lo > 0 and m.kind == "gap":
            continue  # the gap before a window's first report is not in the window
        if m.kind in _POINT_KINDS:
            inc.point(m.kind, m.subject, m.index, m.text)
        elif m.kind == "gap" and index.timestamp(m.index) >= index.timestamp(m.index - 1):  # (back: below)
            before = index.timestamp(m.index - 1)
            inc.point("gap", "", m.index, m.text, 0, before, index.timestamp(m.index) - before)
    ts = index.timestamp
    for i in range(lo + 1, len(index) if hi is None else hi):
        back = ts(i - 1) - ts(i)
        if back > 0:
            inc.point("clock-back", "", i, f"the recorded clock went back {gap_text(back)}", 0, ts(i - 1), -back)
    return inc.finish()


def summarize(index: Index, markers: list[Marker], bad: int = 0, rows: Iterable[Row] = (), lo: int = 0,
              hi: int | None = None, totals: Totals | None = None) -> Summary:
    """The summary of a scanned recording (or of its reports ``[lo, hi)``, a ``--start``/``--end`` window):
    ``markers`` in report order (holes included), ``bad`` reports that did not decode, ``rows`` and ``totals``
    from ``scan_incidents``. The span is from the earliest to the latest time (the clock may have gone back)."""
    hi = len(index) if hi is None else hi
    n = hi - lo
    times = [index.timestamp(i) for i in range(lo, hi)]
    s = Summary(clean(index.name, 120), n, min(times) if n else None, max(times) if n else None,
                bool(index.wallclock))
    s.window = (lo, hi) if (lo, hi) != (0, len(index)) else None
    for at, item in index.skips():
        if lo <= at < hi or s.window is None:
            s.skipped[item.reason] = s.skipped.get(item.reason, 0) + item.count
    if bad:
        s.skipped["report did not decode"] = bad
    s.incidents = incidents_from(index, markers, rows, lo, hi)
    s.totals = totals
    return s


def when(ts: float, s: Summary, *, zoned: bool = True) -> str:
    """A time as the summary prints it (``fmt.moment``: local date and time, or the time since the first
    report), with the zone."""
    text = fmt.moment(ts, s.wallclock, s.start or 0.0)
    return text + (f" {zone(ts)}" if zoned and s.wallclock else "")


def _span(a: float, b: float, s: Summary) -> str:
    """``2026-01-01 03:40:00 to 03:49:50 UTC``: the end's date only when it differs."""
    if not s.wallclock:
        return f"{when(a, s)} to {when(b, s)}"
    start, end = when(a, s, zoned=False), when(b, s)
    if end[:10] == start[:10] and zone(a) == zone(b):
        end = end[11:]
    return f"{start} to {end}"


def _what(e: Incident, s: Summary) -> str:
    """The incident's words, without its times."""
    def unit(n: int) -> str:
        return plural(n, s.unit, s.units)

    peak = f", peak {e.peak:.2f}/s" if e.peak is not None else ""
    if e.kind == "error":
        # the words an "error" marker uses (errors by type, bad executions), then the run and its peak
        what = [plural(k, w) for k, w in ((e.count, "execution error"), (e.bad, "bad execution")) if k]
        run = f" in {unit(e.reports)}{peak}" if e.reports > 1 else ""
        return f"{e.subject}: {', '.join(what) or 'errors'}{run}"
    if e.kind == "ecc-uncorrected":
        dev, _, where = e.subject.partition(" ")
        return f"{dev} {LABELS[e.kind]}" + (f" ({where})" if where else "") + (f" x{e.count}" if e.count else "") + \
            (f" in {unit(e.reports)}" if e.reports > 1 else "")
    if e.kind == "group-error":
        return f"{e.subject} failing: {clean(e.detail, 160)} ({unit(e.reports)})"
    if e.kind == "host-down":
        return f"{e.subject} down" + (f": {clean(e.detail, 120)}" if e.detail else "") + \
            f" ({unit(e.reports)})"
    if e.kind == "unreachable":
        return "source unreachable" + (f": {clean(e.detail, 120)}" if e.detail else "") + \
            f" ({unit(e.reports)})"
    if e.kind == "gap":
        return "no data"
    return e.detail


def line(e: Incident, s: Summary) -> str:
    """One incident as one line: its time (a span for a run or a hole, with the duration), then what."""
    if e.kind in FOLDED:
        if e.detail == "across devices":  # reports of several devices: not one count of reports
            return f"{e.subject} x{e.count:,}, {_span(e.start, e.end, s)}"
        return f"{e.subject} x{e.count:,} in {plural(e.reports, s.unit, s.units)}, {_span(e.start, e.end, s)}"
    if e.kind == "clock-back":
        return f"{when(e.end, s)}  {e.detail} (to {when(e.end, s, zoned=False)[-8:]} from " \
               f"{when(e.start, s, zoned=False)[-8:]}, {s.unit} {e.first + 1})"
    if e.kind == "gap" or (e.kind in _RUN_KINDS and e.last > e.first):
        return f"{_span(e.start, e.end, s)} ({gap_text(e.seconds)})  {_what(e, s)}"
    return f"{when(e.start, s)}  {_what(e, s)}"


def format_summary(s: Summary) -> str:
    """The summary as text: the span, what was skipped, then serious incidents, the others, folded ECC."""
    out = [f"{s.name}: {plural(s.reports, s.unit, s.units)}"]
    if s.window is not None:
        out[0] += f" ({s.unit}s {s.window[0] + 1:,} to {s.window[1]:,})"
    if s.start is not None and s.end is not None:
        out[0] += f", {_span(s.start, s.end, s)} ({gap_text(s.end - s.start)})"
        if not s.wallclock:
            out[0] += " (no wall-clock times: times since the first report)"
    skipped = sum(s.skipped.values())
    if skipped:
        out.append(f"skipped: {skipped} (" + ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items())) + ")")
    holes = s.holes
    if holes:
        out.append(f"holes: {len(holes)}, {gap_text(sum(h.seconds for h in holes))} without data in all")
    if s.totals is not None:
        out.append(_executions_line(s.totals))
    if s.estimate is not None:
        e = s.estimate
        out.append(f"executions: completed ~{e.completed:,.0f}, bad ~{e.bad:,.0f} ({e.how})")
    serious = [e for e in s.incidents if e.serious]
    folded = [e for e in s.incidents if e.kind in FOLDED]
    other = [e for e in s.incidents if not e.serious and e.kind not in FOLDED]
    for title, group in (("serious:", serious), ("other:", other),
                         ("corrected ECC (one line per device and memory, the whole recording):", folded)):
        if group:
            out.append(title)
            out.extend("  " + line(e, s) for e in group)
    found = s.serious
    if found:
        words = []
        for k in SERIOUS:
            if k in found:
                words.append(f"{found[k]} {_FOUND[k][found[k] != 1]}")
                if k == "error":  # a burst is errors, bad executions or both: the two counts said apart
                    bursts = [e for e in serious if e.kind == "error"]
                    counts = [plural(n, what) for n, what in ((sum(e.count for e in bursts), "error"),
                                                              (sum(e.bad for e in bursts), "bad execution")) if n]
                    if counts:
                        words[-1] += f" ({', '.join(counts)})"
        out.append("found: " + ", ".join(words))
    else:
        out.append("found: no uncorrected ECC errors, no execution errors")
    lost = sum(s.lost.values())
    if lost:
        out.append(f"incomplete: {plural(lost, s.unit, s.units)} could not be read; what {'it' if lost == 1 else 'they'}"
                   " held is not in this summary")
    return "\n".join(out) + "\n"


def _executions_line(t: Totals) -> str:
    """``executions: completed 12,000, timed_out 70 (others 0 or not reported); errors 180``: the outcomes that
    happened, as ``--once`` names them, summed over every app and report summarized (``--json`` has them all,
    null for not reported)."""
    pairs = list(zip(EXEC_TYPES, t.executions, strict=True))
    said = [f"{k} {'-' if n is None else format(n, ',')}" for k, n in pairs if n or k == "completed"]
    quiet = any(not n for k, n in pairs if k != "completed")
    return f"executions: {', '.join(said)}" + (" (others 0 or not reported)" if quiet else "") + \
        f"; errors {t.errors:,}"


def _executions_json(s: Summary) -> dict[str, int | None] | None:
    """The counts by outcome (a report recording), the estimate's completed and bad (a fleet recording), or None."""
    if s.totals is not None:
        return dict(zip(EXEC_TYPES, s.totals.executions, strict=True))
    if s.estimate is not None:
        return {"completed": round(s.estimate.completed), "bad": round(s.estimate.bad)}
    return None


def summary_json(s: Summary) -> bytes:
    """The summary as one JSON document (``--summary --json``)."""
    doc = {
        "file": s.name, "reports": s.reports, "window": [s.window[0] + 1, s.window[1]] if s.window else None,
        "start": s.start, "end": s.end, "wallclock": s.wallclock,
        "zone": zone(s.start) if s.start is not None and s.wallclock else None,
        "skipped": s.skipped,
        "lost": s.lost,
        "holes": [{"ts": h.start, "seconds": h.seconds, "text": h.detail} for h in s.holes],
        "events": [{"kind": e.kind, "subject": e.subject, "start": e.start, "end": e.end, "seconds": e.seconds,
                    "count": e.count, "bad": e.bad, "reports": e.reports, "peak_per_second": e.peak,
                    "serious": e.serious,
                    "first": e.first + 1, "last": e.last + 1,
                    "text": line(e, s).split("  ", 1)[-1] if e.kind not in FOLDED else line(e, s)}
                   for e in s.incidents],
        "serious": s.serious,
        "executions": _executions_json(s),
        "executions_estimated": s.estimate.how if s.estimate is not None else None,
        "errors": s.totals.errors if s.totals is not None else None,
    }
    return msgspec.json.encode(doc)

"""Headless checks for scripts and CI: ``neuron-top trace FILE --check`` / ``--summary``.

``--check`` prints what neuron-det printed: ``no errors detected``, or one line per error and per unfinished
(hang) event, ``name (phase) NC n @ start - end: {details}`` with times in microseconds. Exit status: 0 clean,
1 errors or unfinished events found, 2 unreadable: a file that cannot be read at all (one line on stderr), or
one with events that could not be read, which the first line of its report says (a hang among the lost events
would go unseen, so "clean" cannot be claimed).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from neuron_top.fmt import plural
from neuron_top.textsafe import clean
from neuron_top.trace.columns import format_duration, not_drawn, what_it_holds
from neuron_top.trace.loaders import TraceError, load_trace, trace_files
from neuron_top.trace.store import TraceStore

__all__ = [
    "EXIT_FOUND", "EXIT_OK", "EXIT_UNREADABLE", "check_lines", "run_check", "run_summary", "summary_lines",
]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_UNREADABLE = 2


def _us(ns: int) -> str:
    """Nanoseconds as microseconds with one decimal, exactly (epoch-ns values exceed a float's precision)."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}.{(ns % 1000) // 100}"


def check_lines(store: TraceStore) -> list[str]:
    """The ``--check`` report lines of one store, errors and unfinished events in time order."""
    events = sorted(set(store.errors) | set(store.unfinished), key=lambda e: (store.start[e], e))
    lines = []
    for ev in events:
        info = store.info(ev)
        nc = "?" if info.core is None else str(info.core)
        details = clean(repr(info.args), 400)
        lines.append(
            f"{clean(info.name, 200)} ({info.phase}) NC {nc} @ {_us(info.start)} - {_us(info.end)}: {details}"
        )
    return lines


def _load(path: str | Path, err: TextIO) -> TraceStore | None:
    try:
        return load_trace(path)
    except TraceError as e:
        print(clean(str(e), 400), file=err)
        return None


class _Lines:
    """Prints lines to ``out`` until its reader leaves (``--check | head -1``: EPIPE), then prints no more. The
    exit status is the verdict, so every file is still read and judged: under ``set -o pipefail`` a trace with
    errors fails the pipeline whether or not its reader read them all."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.gone = False

    def __call__(self, line: str) -> None:
        if self.gone:
            return
        try:
            print(line, file=self.out)
        except BrokenPipeError:
            self.gone = True


def run_check(paths: Sequence[str | Path], out: TextIO, err: TextIO | None = None) -> int:
    """Print the check report for each trace; 0 clean, 1 errors or unfinished events, 2 unreadable file."""
    err = sys.stderr if err is None else err
    say = _Lines(out)
    status = EXIT_OK
    paths = trace_files(list(paths))
    for path in paths:
        store = _load(path, err)
        if store is None:
            status = EXIT_UNREADABLE
            continue
        if len(paths) > 1:
            say(f"== {clean(str(path))} ==")
        if store.lost:
            say(lost_line(store))
        lines = check_lines(store)
        if not lines:
            say("no errors detected" + (" in the events that could be read" if store.lost else ""))
        for line in lines:
            say(line)
        if store.lost:
            status = EXIT_UNREADABLE
        elif lines and status == EXIT_OK:
            status = EXIT_FOUND
    return status


def lost_line(store: TraceStore) -> str:
    """``N events could not be read (why)``: said first by --check and --summary, and in the timeline header."""
    why = ", ".join(f"{clean(k, 80)}: {v}" for k, v in sorted(store.lost_reasons.items()))
    n = store.lost
    return f"unreadable: {n} event{'s' if n != 1 else ''} could not be read" + (f" ({why})" if why else "")


def flow_text(store: TraceStore) -> str:
    """The flow count, as Perfetto counts flows (one with both ends in one slice too), saying how many of those
    there are: they draw no arrow, and a reader comparing with a viewer that hides them should see why."""
    within = store.flows.within_one_slice
    return f"{store.flow_count}" + (f" ({within} with both ends in one slice)" if within else "")


def summary_lines(store: TraceStore) -> list[str]:
    """Event counts per track and per phase, and the problems found."""
    name = clean(store.shown_name)
    out = [lost_line(store)] if store.lost else []
    out += [
        f"{name}: {store.format_label}, {plural(len(store), 'event')} on {plural(store.drawn_tracks, 'track')}, "
        f"{plural(len(store.counters), 'counter track')}, span {format_duration(store.t_max - store.t_min)}",
        "phases: "
        + (", ".join(f"{clean(ph or '?', 8)} {n}" for ph, n in sorted(store.phase_counts.items())) or "none"),
        "tracks:",
    ]
    for tr in sorted(store.tracks, key=lambda t: (t.process, str(t.pid), str(t.tid), t.name, t.id)):
        if not tr.count:
            continue
        core = "" if tr.core is None else f" NC {tr.core}"
        where = " / ".join(clean(part, 80) for part in (tr.process, tr.label) if part)  # global instants: no process
        out.append(f"  {where}{core} [{tr.source}]: {plural(tr.count, 'event')}, {plural(len(tr.rows), 'row')}")
    for c in store.counters:
        out.append(
            f"  counter {clean(c.process or c.instance, 80)} / {clean(c.name, 80)}: {plural(len(c.ts), 'sample')}"
        )
    out.append(
        f"errors: {len(store.errors)}, unfinished (hang signal): {len(store.unfinished)}, flows: {flow_text(store)}"
    )
    holds = what_it_holds(store)
    if holds:
        out.append(holds)
    hidden = not_drawn(store)
    if hidden:
        out.append("not shown: " + ", ".join(f"{clean(k, 60)} ({v} entries)" for k, v in hidden))
    for note in store.unread:
        out.append(f"could not read: {clean(note, 120)}")
    if store.problems:
        out.append("problems:")
        out.extend(f"  {clean(k, 120)}: {v}" for k, v in sorted(store.problems.items()) if v)
    else:
        out.append("problems: none")
    return out


def run_summary(paths: Sequence[str | Path], out: TextIO, err: TextIO | None = None) -> int:
    """Print the summary of each trace; 0, or 2 when a file or some of its events could not be read, as
    ``--check`` (a summary of what could be read exited 0 after saying "1 event could not be read")."""
    err = sys.stderr if err is None else err
    say = _Lines(out)
    status = EXIT_OK
    for path in trace_files(list(paths)):
        store = _load(path, err)
        if store is None:
            status = EXIT_UNREADABLE
            continue
        if store.lost:
            status = EXIT_UNREADABLE
        for line in summary_lines(store):
            say(line)
    return status

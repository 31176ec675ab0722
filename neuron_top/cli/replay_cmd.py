"""``neuron-top replay FILE|-``: the TUI on a recording, ``--once``/``--json`` for its state at one report, or
``--summary`` for what happened in it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from neuron_top.decode import DecodeError
from neuron_top.output.text import SourceInfo, as_json, text
from neuron_top.recording.pacing import report_time
from neuron_top.selection import narrow_by_tag
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.textsafe import clean

if TYPE_CHECKING:
    from neuron_top.recording.index import Index, RecordingIndex, SpooledIndex

__all__ = ["START_WAIT", "replay_main"]

START_WAIT = 0.5
"""Seconds to wait for the starting report to be indexed before the screen comes up."""


def replay_main(ns: argparse.Namespace) -> int:
    """``neuron-top replay``: the dashboard on a recording, or ``--once``/``--json`` of one report."""
    from neuron_top.cli.common import UsageError, run_tui
    from neuron_top.recording.index import SpooledIndex, open_recording
    from neuron_top.recording.player import ReplayController

    if getattr(ns, "export", None):  # said before the file is read: a fleet recording's screen would ignore it
        raise UsageError("--export serves live reports (neuron-monitor, a pipe, --command or the demo), not a replay")
    if ns.summary and ns.tag:
        raise UsageError("--tag narrows the screen to some apps; --summary covers every app of the recording "
                         "(each line names its app: filter with grep, or --json and jq)")
    if ns.end is not None and not ns.summary:
        raise UsageError("--end sets the last report of a --summary window (the screen plays to the end)")
    every = None
    if ns.every is not None:
        from neuron_top.config import ConfigError, parse_period

        if not ns.summary:
            raise UsageError("--every adds a table per interval to --summary")
        try:
            every = parse_period(ns.every, "--every")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        if every <= 0:
            raise UsageError("--every: a period longer than 0, like 10m or 1h")
        ns.every = every
    headless = ns.once or ns.json or ns.summary
    if not headless:
        # Import the TUI before the indexing thread starts: both need the GIL, and importing Textual while
        # 1 GB is being indexed doubled the time to the first frame.
        from neuron_top.tui import app  # noqa: F401

    index: RecordingIndex | SpooledIndex
    try:
        if ns.file == "-":
            # Take the pipe off fd 0 first (the terminal gets fd 0 back for keys), then spool from it.
            from neuron_top.sources.stream import take_stdin_for_reports

            index = SpooledIndex(take_stdin_for_reports())
        else:
            # The screen follows the file as it grows (tail -f). --once/--json read it as it is now: its end is the
            # end of the last report, so one saved without a final newline (curl -o, an editor) is read.
            index = open_recording(ns.file, follow=not headless)  # a FIFO is spooled like stdin
    except OSError as exc:
        raise UsageError(f"cannot open {ns.file}: {exc.strerror or exc}") from None
    if ns.summary:
        try:
            return _print_summary(index, ns)
        finally:
            index.close()
    if ns.once or ns.json:
        try:
            index.wait()
            if ns.start is not None:
                ns.start = position(index, ns.start, "--start") + 1
            if _fleet(index):
                from neuron_top.cli.fleet_cmd import replay_once

                return replay_once(index, ns)
            return _print_once(index, ns)
        finally:
            index.close()
    if ns.start is None:
        start = 0
    elif ns.start.strip().isascii() and ns.start.strip().isdigit():
        start = max(0, int(ns.start) - 1)  # a number needs no index: the screen comes up while it is built
    else:
        index.wait()
        start = position(index, ns.start, "--start")
    # The first frame should show a report: indexing finds it in milliseconds (a pipe may take longer; the
    # screen then shows "no reports yet" and draws the first one the moment it arrives).
    index.wait_for(0, timeout=START_WAIT)
    index.wait_for(start, timeout=START_WAIT)
    controller = ReplayController(index, speed=ns.speed, start=start)
    name = _shown_name(ns.file)
    try:
        if _fleet(index):  # a fleet recording (neuron-top fleet --record): the fleet table, same transport
            from neuron_top.cli.fleet_cmd import replay_tui

            return replay_tui(controller, ns, name)
        return run_tui(None, ns, replay=controller, replay_name=name)
    finally:
        controller.stop_scan()
        index.close()


def _shown_name(file: str) -> str:
    """The recording as the header, ``--once`` and ``--json`` name it: ``-`` is stdin (as ``--summary`` says)."""
    return "stdin" if file == "-" else file


def position(index: Index, text: str, option: str, at: int = 0) -> int:
    """The report (0-based) a ``--start``/``--end`` value means, in the forms the go-to prompt takes: a report
    number, a time of day, a date and time, ``+90s`` from report ``at`` (the first; for ``--end``, the start),
    ``50%``. A clamp is said on stderr; a value not in the recording is a usage error."""
    from neuron_top.cli.common import UsageError
    from neuron_top.recording.player import GotoError, ReplayController, goto

    c = ReplayController(index, start=at)
    if _fleet(index):
        c.unit = "refresh"
    try:
        j, note = goto(text, c)
    except GotoError as exc:
        raise UsageError(f"{option} {clean(text, 60)}: {exc}") from None
    if note:
        print(f"neuron-top replay: {option}: {note}", file=sys.stderr)
    return j


def _fleet(index: Index) -> bool:
    """Whether the recording is a fleet's (its first line a fleet frame)."""
    from neuron_top.fleet.record import is_fleet_line

    try:
        return len(index) > 0 and is_fleet_line(index.get(0)[:64])
    except (OSError, IndexError):
        return False


def _no_reports(index: RecordingIndex | SpooledIndex, ns: argparse.Namespace) -> Exception:
    """The usage error for a recording without a report: why (an I/O error) and what was skipped."""
    from neuron_top.cli.common import UsageError
    from neuron_top.fmt import plural

    why = f": {clean(index.error)}" if index.error else ""
    skipped = f" ({plural(index.skipped, 'bad line')} skipped)" if index.skipped else ""
    return UsageError(f"no reports in {clean(ns.file)}{why}{skipped}")


def _print_once(index: RecordingIndex | SpooledIndex, ns: argparse.Namespace) -> int:
    """The state after the last complete report, or at --start N (1-based)."""
    from neuron_top.cli.common import UsageError

    index.wait()
    n = len(index)
    if n == 0:
        raise _no_reports(index, ns)
    want = n - 1 if ns.start is None else max(0, min(int(ns.start) - 1, n - 1))
    info = SourceInfo(name=_shown_name(ns.file), state="replay", skipped=index.skipped, reports=n)
    for _, sk in index.skips():
        info.skipped_reasons[sk.reason] = info.skipped_reasons.get(sk.reason, 0) + sk.count
    i = want
    snap = None
    while i >= 0 and snap is None:  # the wanted report may be bad: fall back to the one before it
        snap = _snap(index, i, info)
        i -= 1
    if snap is None:
        raise UsageError(f"no decodable report in {clean(ns.file)} ({info.skipped} skipped)")
    info.position = f"report {snap.seq}/{n} at {report_time(snap.ts, index.wallclock)}"
    snap = narrow_by_tag(snap, ns.tag)
    out = as_json(snap, info) + b"\n" if ns.json else text(snap, info, digits=2 if ns.precise else 0).encode()
    sys.stdout.flush()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    return 0


def _print_summary(index: RecordingIndex | SpooledIndex, ns: argparse.Namespace) -> int:
    """``--summary``: scan every report for events (as the replay screen's markers), print them; exit as
    ``Summary.exit_status`` says (1: uncorrected ECC or execution errors; 2: some of it could not be read)."""
    from neuron_top.cli.common import UsageError
    from neuron_top.recording.incident import format_summary, scan_incidents, summarize, summary_json

    # Index first, then scan: run side by side they fight over the GIL and take longer than one after the other.
    index.wait()
    if len(index) == 0:
        raise _no_reports(index, ns)
    lo, hi = 0, len(index)
    if _fleet(index):
        from neuron_top.fleet.record import fleet_summary

        s = fleet_summary(index)
    else:
        lo = position(index, ns.start, "--start") if ns.start is not None else 0
        hi = position(index, ns.end, "--end", lo) + 1 if ns.end is not None else len(index)
        if hi <= lo:
            raise UsageError(f"--end ({hi}) is before --start ({lo + 1})")
        markers, bad, rows, totals = scan_incidents(index, lo=lo, hi=hi)
        s = summarize(index, markers, bad, rows, lo, hi, totals)
    if ns.every and not _fleet(index):
        import msgspec

        from neuron_top.recording.intervals import format_table, interval_rows, table_json

        table = interval_rows(index, ns.every, lo, hi)
        if ns.json:
            doc = msgspec.json.decode(summary_json(s))
            doc["table"] = msgspec.json.decode(table_json(table, ns.every, s.wallclock))
            out = msgspec.json.encode(doc) + b"\n"
        else:
            out = (format_summary(s) + "\n" + format_table(table, s.wallclock)).encode()
    else:
        out = summary_json(s) + b"\n" if ns.json else format_summary(s).encode()
    sys.stdout.flush()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    return s.exit_status


def _snap(index: RecordingIndex | SpooledIndex, i: int, info: SourceInfo) -> Snapshot | None:
    try:
        return snapshot_from(index.get(i), index.timestamp(i), i + 1)
    except DecodeError as exc:
        info.skipped += 1
        info.skipped_reasons[str(exc)] = info.skipped_reasons.get(str(exc), 0) + 1
        return None

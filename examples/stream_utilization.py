"""Stream snapshots from any source and print each NeuronCore's utilization, one line per report.

    python examples/stream_utilization.py --demo trn2.48xlarge --count 3     # the built-in simulator
    python examples/stream_utilization.py --recording run.ndjson.zst          # a recording, as fast as it reads
    python examples/stream_utilization.py --command "ssh trn-host neuron-monitor" --count 10
    neuron-monitor | python examples/stream_utilization.py                    # reports on stdin
    python examples/stream_utilization.py                                     # what plain neuron-top reads

Only the headless library is used (``neuron_top``): no Textual, no terminal needed. Bad input is counted and
reported on stderr, as the dashboard does; the source's state changes (started, ended, failed) too.
"""

from __future__ import annotations

import argparse
import sys

from neuron_top import (
    CommandSource,
    DemoSource,
    Feed,
    RecordingSource,
    Report,
    SkippedInput,
    Snapshot,
    Source,
    StatusChanged,
    choose_live_source,
    fmt,
    open_recording,
)


def source_from(args: argparse.Namespace) -> Source:
    """The source the options name; with none, the one plain ``neuron-top`` would read."""
    if args.demo:
        # Simulated time: one report a second of it, handed out as fast as they are read (no sleeping).
        return DemoSource(args.demo, seed=args.seed, sleep=lambda _seconds: None)
    if args.recording:
        return RecordingSource(open_recording(args.recording))  # no speed: as fast as they are read
    if args.command:
        return CommandSource(args.command)
    choice = choose_live_source()  # a pipe on stdin, neuron-monitor, or the built-in collector
    for note in choice.notes:
        print(f"note: {note}", file=sys.stderr)
    return choice.source


def utilization_line(snap: Snapshot) -> str:
    """``report N: NC0 12.5% NC1 80.0% ... NC23 -``: every NeuronCore of the machine, as the apps together use it
    (the "all" view: each core's runtimes combined by the library's one rule, ``derived.core_utilization``); ``-``
    for a core no app reports on."""
    if not snap.core_count:
        return f"report {snap.seq}: no NeuronCores reported"
    util = snap.all.core_stats.util  # core index -> percent, None when not a number
    cells = [f"NC{index} {fmt.pct(util.get(index))}" for index in range(snap.core_count)]
    return f"report {snap.seq}: " + " ".join(cells)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--demo", metavar="INSTANCE", help="simulate an instance, e.g. trn2.48xlarge")
    p.add_argument("--seed", type=int, default=1, help="with --demo: the simulation's seed")
    p.add_argument("--recording", metavar="FILE", help="read a recording (.ndjson, .gz, .zst)")
    p.add_argument("--command", metavar="CMD", help="read the reports a command prints")
    p.add_argument("--count", type=int, default=None, help="stop after N reports")
    args = p.parse_args(argv)

    feed = Feed(source_from(args))
    shown = 0
    try:
        for event in feed.events():
            if isinstance(event, Report):
                print(utilization_line(event.snapshot), flush=True)
                shown += 1
                if args.count is not None and shown >= args.count:
                    break
            elif isinstance(event, SkippedInput):
                print(f"skipped: {event.skipped.reason} ({event.total} so far)", file=sys.stderr)
            elif isinstance(event, StatusChanged):
                print(f"source: {event.status.state.value}: {event.status.message}", file=sys.stderr)
    finally:
        feed.close()
    return 0 if shown else 1


if __name__ == "__main__":
    sys.exit(main())

"""The command line. Parses arguments, builds the source, then runs the TUI or a headless mode.

Headless modes (``--once``, ``--json``, ``demo --emit``, ``record``, ``trace --check``) never import Textual, so
they start fast and work where no terminal is.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from neuron_top import __version__
from neuron_top.cli.common import (
    UsageError,
    _check_tag,
    _load_config,
    _recorder,
    command_arg,
    count_arg,
    k8s_options,
    live_choice,
    live_source,
    pod_source,
    print_once,
    run_tui,
)
from neuron_top.cli.signals import SignalExit, Signals
from neuron_top.sources.stream import StopEvent
from neuron_top.textsafe import clean

__all__ = [
    "COMMANDS", "INSTANCES", "demo_parser", "main", "main_parser", "record_parser", "replay_parser",
    "run_demo", "run_live", "run_record", "run_replay", "run_trace", "trace_parser",
]

INSTANCES = ("inf1.xlarge", "inf2.xlarge", "inf2.48xlarge", "trn1.2xlarge", "trn1.32xlarge", "trn2.3xlarge",
             "trn2.48xlarge")
"""The demo's instance types (``sources.demo.PROFILES``' keys, which importing the simulator would cost the
command line ~60 ms; a test holds the two equal)."""
COMMANDS = ("demo", "replay", "trace", "record", "export", "health", "fleet")




def _common_ui(p: argparse.ArgumentParser) -> None:
    from neuron_top.layouts import PRESETS

    p.add_argument("--theme", metavar="NAME", help="colour theme for this run (see themes/; t cycles them at run "
                   "time, and the one picked is remembered)")
    p.add_argument("--layout", choices=list(PRESETS), metavar="NAME",
                   help=f"panels to start with: {', '.join(PRESETS)} (l cycles them at run time; the last one "
                   "used is remembered)")
    p.add_argument("--trace", metavar="FILE", action="append", help="also open a system trace in the timeline pane")
    p.add_argument("--history", type=count_arg, default=600, metavar="N", help="reports kept for sparklines (600)")
    p.add_argument("--export", metavar="[HOST:]PORT",
                   help="also serve the reports on http://HOST:PORT/metrics for Prometheus (as neuron-top export)")
    _render(p)


def _render(p: argparse.ArgumentParser) -> None:
    p.add_argument("--render", choices=("fast", "textual"), default=None,
                   help="fast: send only the cells that changed (default); textual: Textual's own drawing only, "
                   "if the screen looks wrong with a Textual release we have not tested (also NEURON_TOP_RENDER)")


def _once(p: argparse.ArgumentParser) -> None:
    p.add_argument("--once", action="store_true", help="print one snapshot as plain text and exit")
    p.add_argument("--json", action="store_true", help="with --once (implied): print the snapshot as JSON")
    p.add_argument("--precise", action="store_true",
                   help="with --once: core utilization with two decimals (56.81%%), as AWS neuron-top prints it")


def main_parser() -> argparse.ArgumentParser:
    """The options of plain ``neuron-top`` (live)."""
    p = argparse.ArgumentParser(
        prog="neuron-top",
        description="A terminal dashboard for AWS Neuron (Inferentia, Trainium). Reads neuron-monitor; without "
        "it, a built-in collector. Subcommands: demo, replay, trace, record, export, health, fleet (see neuron-top CMD "
        "--help).",
    )
    p.add_argument("-c", "--config", metavar="FILE", help="neuron-monitor config file (passed to neuron-monitor)")
    p.add_argument("--tag", metavar="REGEX", help="start the / filter with REGEX: show only apps whose tag matches "
                   "(/ changes or clears it; a tag_filter in -c filters at neuron-monitor instead)")
    p.add_argument("--command", type=command_arg, metavar="CMD", help='read reports from a command, e.g. "ssh trn-host neuron-monitor"')
    p.add_argument("--record", metavar="FILE", help="also record every report to FILE (.gz/.zst compress)")
    p.add_argument("--builtin", action="store_true", help="use the built-in collector even if neuron-monitor exists")
    _once(p)
    _common_ui(p)
    k8s_options(p)
    p.add_argument("--version", action="version", version=f"neuron-top {__version__}")
    return p


def demo_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top demo``."""
    p = argparse.ArgumentParser(prog="neuron-top demo", description="Simulated Neuron machine with tagged apps.")
    p.add_argument("--instance", choices=INSTANCES, default="trn2.48xlarge")
    p.add_argument("--seed", type=int, default=None, help="make the simulation deterministic")
    p.add_argument("--emit", action="store_true", help="print reports to stdout like neuron-monitor")
    p.add_argument("--count", type=count_arg, default=None, help="with --emit: stop after N reports")
    p.add_argument("--period", type=float, default=1.0, help="seconds between reports (1)")
    p.add_argument("-c", "--config", metavar="FILE", help="neuron-monitor config: periods and tag filter")
    p.add_argument("--tag", metavar="REGEX", help="start the / filter with REGEX")
    p.add_argument("--record", metavar="FILE")
    p.add_argument("--pods", action="store_true",
                   help="attach simulated Kubernetes pods, as the kubelet would report them (P: the pods screen)")
    _once(p)
    _common_ui(p)
    return p


def replay_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top replay``."""
    p = argparse.ArgumentParser(prog="neuron-top replay", description="Replay a recorded neuron-monitor stream.")
    p.add_argument("file", help="recording (one report per line; .gz/.zst), or - for stdin")
    p.add_argument("--speed", type=float, default=1.0, help="playback speed, 0.25 to 100 (1)")
    p.add_argument("--start", default=None, metavar="WHEN",
                   help="start at a report: its number (1-based), a time of day (03:12:40), a date and time "
                        "(2026-01-01 03:12:40), +90s from the first report, or 50%% (the forms ':' takes)")
    p.add_argument("--end", default=None, metavar="WHEN",
                   help="with --summary: the window's last report (the same forms as --start; +10m is from the start)")
    p.add_argument("--every", default=None, metavar="PERIOD",
                   help="with --summary: also a table per interval (10m, 1h): utilization avg/max, device memory, "
                        "executions/s, errors/s, p99, ECC, as atopsar gives")
    p.add_argument("--tag", metavar="REGEX")
    p.add_argument("--summary", action="store_true",
                   help="print the recording's incidents as intervals (error bursts, uncorrected ECC, metric groups "
                        "failing, holes, hosts down), serious ones first, corrected ECC one line per device; exit 1 "
                        "if it holds uncorrected ECC or execution errors, 2 if some of it could not be read (--json: as JSON)")
    _once(p)
    _common_ui(p)
    return p


def trace_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top trace``."""
    p = argparse.ArgumentParser(prog="neuron-top trace", description="Show system traces in the timeline pane "
                                "(several files, or a directory of them, on one time axis).")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--check", action="store_true",
                   help="print errors and unfinished events; exit 0 clean, 1 if any, 2 if events were unreadable")
    p.add_argument("--summary", action="store_true", help="print event counts per track and phase, and problems")
    p.add_argument("--at", choices=("start", "end"), default="start",
                   help="open on the whole trace (start) or close up on its last events (end)")
    p.add_argument("--metrics", metavar="REC",
                   help="a neuron-monitor recording to draw beside the trace, on its clock when it is a wall clock")
    p.add_argument("--theme", metavar="NAME")
    _render(p)
    return p


def record_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top record``."""
    p = argparse.ArgumentParser(prog="neuron-top record", description="Record reports headless (no screen).")
    p.add_argument("file")
    p.add_argument("-c", "--config", metavar="FILE")
    p.add_argument("--command", type=command_arg, metavar="CMD")
    p.add_argument("--builtin", action="store_true", help="use the built-in collector")
    k8s_options(p)  # each report is recorded with who held each core then: replay shows the pods
    return p


# --- entry point ----------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """The ``neuron-top`` command: parse ``argv``, run the command, return its exit status (never a traceback;
    128+signal after SIGTERM, SIGHUP or SIGINT, once what it started is stopped)."""
    args = list(sys.argv[1:] if argv is None else argv)
    signals = Signals().install()  # headless: a signal raises SignalExit; the TUI, record and export ask instead
    try:
        return _main(args)
    except SignalExit as exc:
        return exc.code
    finally:
        from neuron_top.sources.stream import stop_all_children

        stop_all_children()  # whatever happened, no child of ours outlives us
        signals.restore()


def _main(args: list[str]) -> int:
    try:
        if args and args[0] in COMMANDS:
            cmd, rest = args[0], args[1:]
            if cmd == "export":
                from neuron_top.cli.export_cmd import export_main, export_parser

                return export_main(export_parser().parse_args(rest))
            if cmd == "health":
                from neuron_top.cli.health_cmd import health_main, health_parser

                return health_main(health_parser().parse_args(rest))
            if cmd == "fleet":
                from neuron_top.cli.fleet_cmd import fleet_main, fleet_parser

                return fleet_main(fleet_parser().parse_args(rest))
            parser = {"demo": demo_parser, "replay": replay_parser, "trace": trace_parser,
                      "record": record_parser}[cmd]()
            ns = parser.parse_args(rest)
            return {"demo": run_demo, "replay": run_replay, "trace": run_trace, "record": run_record}[cmd](ns)
        return run_live(main_parser().parse_args(args))
    except UsageError as exc:
        print(f"neuron-top: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except Exception as exc:  # never a traceback at a user; NEURON_TOP_DEBUG=1 shows it
        if os.environ.get("NEURON_TOP_DEBUG"):
            raise
        print(f"neuron-top: internal error: {clean(repr(exc), 300)} (NEURON_TOP_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _check_export(ns: argparse.Namespace) -> None:
    if getattr(ns, "export", None) and (ns.once or ns.json or getattr(ns, "emit", False)):
        raise UsageError("--export serves metrics while the dashboard runs; for no screen use: neuron-top export")


def run_live(ns: argparse.Namespace) -> int:
    """Plain ``neuron-top``: the live source, then ``--once``/``--json`` or the dashboard."""
    _check_tag(ns.tag)
    _check_export(ns)
    choice = live_choice(ns)
    if ns.once or ns.json:
        return print_once(choice.source, ns.json, _recorder(ns.record), pods=pod_source(ns, start=False),
                          tag=ns.tag, digits=2 if ns.precise else 0)
    return run_tui(choice.source, ns, recorder=_recorder(ns.record), notes=choice.notes,
                   source_filter=choice.source_filter, pods=pod_source(ns))


def run_demo(ns: argparse.Namespace) -> int:
    """``neuron-top demo``: the simulator, emitted as reports or shown."""
    from neuron_top.sources.demo import DemoSource, emit_main

    _check_tag(ns.tag)
    _check_export(ns)
    cfg = _load_config(ns.config)
    source_filter = cfg.source_filter() if cfg is not None else None  # the simulator applies -c as neuron-monitor
    periods = cfg.group_periods() if cfg is not None else None
    period = cfg.base_period() if cfg is not None else ns.period
    seed = ns.seed if ns.seed is not None else int(time.time()) % 100000
    if ns.emit:
        return emit_main(ns.instance, seed, sys.stdout, count=ns.count, period=period, periods=periods)
    try:
        source = DemoSource(ns.instance, seed, period=period, periods=periods, tag_filter=source_filter)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    pods = None
    if ns.pods:
        from neuron_top.sources.demo.pods import DemoPods

        pods = DemoPods(source)
    if ns.once or ns.json:
        return print_once(source, ns.json, _recorder(ns.record), pods=pods,  # the first report comes at once
                          tag=ns.tag, digits=2 if ns.precise else 0)
    return run_tui(source, ns, recorder=_recorder(ns.record), demo=True, source_filter=source_filter, pods=pods)








def run_replay(ns: argparse.Namespace) -> int:
    """``neuron-top replay FILE``."""
    from neuron_top.cli.replay_cmd import replay_main

    _check_tag(ns.tag)
    return replay_main(ns)


def run_trace(ns: argparse.Namespace) -> int:
    """``neuron-top trace FILE...``: checks and summaries headless, else the timeline."""
    from neuron_top.trace.check import run_check, run_summary

    if ns.check or ns.summary:
        code = 0
        if ns.summary:
            code = max(code, run_summary(ns.files, sys.stdout))
        if ns.check:
            code = max(code, run_check(ns.files, sys.stdout))
        return code
    from neuron_top.trace.loaders import TraceError, sniff_format

    for f in ns.files:
        try:
            sniff_format(f)
        except TraceError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot read {f}: {exc.strerror or exc}") from None
    if ns.metrics is not None and not os.path.exists(ns.metrics):
        raise UsageError(f"metrics recording not found: {ns.metrics}")
    return run_tui(None, ns, traces=ns.files)


def run_record(ns: argparse.Namespace) -> int:
    """``neuron-top record FILE``: the live source written to a recording, no screen."""
    from neuron_top.recording.writer import record_main

    ns.tag = None
    source, notes = live_source(ns)
    for note in notes:
        print(f"neuron-top: {note}", file=sys.stderr)
    stop = StopEvent()  # the reader sleeps between reports; a signal's set() wakes it
    # The exit policy of every mode (cli/signals.py): the first signal stops the recording between two reports and
    # closes the file; a second one, or a close still running WATCHDOG seconds later, ends the process at once.
    signals = Signals(lambda _signum: stop.set()).install()
    pods = pod_source(ns)
    try:
        return record_main(source, ns.file, stop, handle_signals=False, signalled=lambda: signals.received,
                           pods=pods)
    finally:
        signals.restore()




if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

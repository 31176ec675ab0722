"""``neuron-top health``: a node-problem-detector custom plugin (exit 0 OK, 1 problem, 2 unknown; one line).

Reads reports for ``--for`` seconds from the usual source (a pipe on stdin, ``--command``, neuron-monitor, the
built-in collector), or a whole recording with ``--recording``, then prints the verdict of
``neuron_top.export.health``. Everything that goes wrong, a bad flag included, is still one line on stdout and
exit 2, because NPD shows that line as the node condition's message.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import TextIO

__all__ = ["health_main", "health_parser"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[no-untyped-def]
        print(f"UNKNOWN: neuron-top health: {message}")
        sys.exit(2)


def health_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top health``."""
    from neuron_top.cli.common import command_arg

    p = _Parser(prog="neuron-top health",
                description="Check this node's Neuron health for node-problem-detector: read reports for a while, "
                "print one line and exit 0 (OK), 1 (problem) or 2 (unknown).")
    p.add_argument("-c", "--config", metavar="FILE", help="neuron-monitor config file (passed to neuron-monitor)")
    p.add_argument("--command", type=command_arg, metavar="CMD", help="read reports from a command")
    p.add_argument("--builtin", action="store_true", help="use the built-in collector even if neuron-monitor exists")
    p.add_argument("--recording", metavar="FILE", help="judge a recording instead of live reports")
    p.add_argument("--rules", metavar="FILE", help="TOML file with a [health] table of rule settings")
    p.add_argument("--for", dest="seconds", type=float, default=12.0, metavar="SECONDS",
                   help="how long to read live reports (12; neuron-monitor reports every 5 s by default)")
    return p


def health_main(ns: argparse.Namespace, out: TextIO | None = None) -> int:
    """``neuron-top health``: read reports, print the verdict as one line, return 0, 1 or 2."""
    from neuron_top.cli.common import UsageError, live_source
    from neuron_top.export.health import UNKNOWN, HealthCheck, RulesError, load_rules
    from neuron_top.feed import Feed, StatusChanged
    from neuron_top.sources.base import Source, State
    from neuron_top.textsafe import clean

    out = out if out is not None else sys.stdout
    source: Source
    try:
        if not ns.recording and not ns.seconds > 0:  # NaN too: no time to read a report is no verdict
            raise UsageError(f"--for {ns.seconds:g}: give the seconds to read live reports, above 0 (12 by default)")
        rules = load_rules(ns.rules) if ns.rules else None
        if ns.recording:
            from neuron_top.fleet.record import is_fleet_line
            from neuron_top.recording.index import RecordingSource, open_recording

            try:
                index = open_recording(ns.recording)
                index.wait_for(0, timeout=5.0)  # the first line, found in milliseconds
                if len(index) > 0 and is_fleet_line(index.get(0)[:64]):  # its lines are no reports: "0 reports"
                    index.close()
                    raise UsageError(f"{ns.recording} is a fleet recording (neuron-top fleet --record): health "
                                     "judges one node's reports (neuron-top replay reads it)")
                source = RecordingSource(index, speed=None, follow=False)
            except OSError as exc:
                raise UsageError(f"cannot read {ns.recording}: {exc.strerror or exc}") from None
        else:
            ns.tag = None
            source, _ = live_source(ns)
    except (UsageError, RulesError) as exc:
        print(f"UNKNOWN: {clean(str(exc), 200)}", file=out)
        return UNKNOWN
    check = HealthCheck(rules, source=source.name)
    feed = Feed(source)
    done = threading.Event()

    def pump() -> None:
        try:
            for event in feed.events():
                check.apply(event)
                if isinstance(event, StatusChanged) and event.status.state in (State.ENDED, State.FAILED):
                    break
        finally:
            done.set()

    thread = threading.Thread(target=pump, name="health feed", daemon=True)
    thread.start()
    deadline = None if ns.recording else time.monotonic() + max(0.0, ns.seconds)
    try:
        while not done.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                break
    except KeyboardInterrupt:
        pass
    finally:
        feed.close()
        thread.join(timeout=3.0)
    code, line = check.verdict()
    print(line, file=out, flush=True)
    return code

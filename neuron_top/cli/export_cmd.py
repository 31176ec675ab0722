"""``neuron-top export``: the headless Prometheus exporter (a drop-in for AWS's ``neuron-monitor-prometheus.py``).

The source is chosen as for the dashboard (``--command``, a pipe on stdin, neuron-monitor, else the built-in
collector); the feed loop runs on a thread and hands each event to the ``Exporter``; the HTTP server answers
scrapes on threads of its own. When the source ends (a pipe closes) the server keeps answering, with
``neurontop_source_up 0`` and a growing ``neurontop_last_report_age_seconds``, as AWS's script keeps its last
values: a stopped neuron-monitor shows in Prometheus instead of vanishing. A ``--command`` that exits is started
again with back-off (1, 2, 4 ... 30 s), as neuron-monitor is: meanwhile the last values are served with
``neurontop_source_up 0``, ``neurontop_source_info{state="restarting"}`` and ``neurontop_source_restarts_total``
counting. SIGINT/SIGTERM/SIGHUP stop it (the
``--command`` child or neuron-monitor with it), with every mode's signal rules (``cli/signals.py``): exit status
128+signal, a second signal or a stop that hangs for 10 s ends it at once.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import TextIO

from neuron_top.cli.common import UsageError, _recorder, command_arg, k8s_options, live_source, pod_source
from neuron_top.cli.signals import Signals
from neuron_top.sources.stream import StopEvent
from neuron_top.textsafe import clean

__all__ = ["export_main", "export_parser"]


def export_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top export``."""
    p = argparse.ArgumentParser(
        prog="neuron-top export",
        description="Serve neuron-monitor's metrics for Prometheus on /metrics, with the names, types and labels "
        "of AWS's neuron-monitor-prometheus.py, plus neurontop_* families (device latency, per-device memory, "
        "source health). Reports come from a pipe on stdin, --command, neuron-monitor, else the built-in "
        "collector.",
    )
    p.add_argument("--listen", metavar="[HOST:]PORT", default=":8000",
                   help="address to serve on (default :8000, every interface, as AWS's script)")
    p.add_argument("-c", "--config", metavar="FILE", help="neuron-monitor config file (passed to neuron-monitor)")
    p.add_argument("--command", type=command_arg, metavar="CMD", help='read reports from a command, e.g. "ssh trn-host neuron-monitor" '
                   "(started again with back-off, 1 to 30 s, when it exits)")
    p.add_argument("--record", metavar="FILE", help="also record every report to FILE (.gz/.zst compress)")
    p.add_argument("--builtin", action="store_true", help="use the built-in collector even if neuron-monitor exists")
    p.add_argument("--used-cores-only", action="store_true",
                   help="drop the zero rows of cores a runtime does not use (changes avg(neuroncore_utilization_"
                   "ratio); off by default, as AWS)")
    p.add_argument("--no-process-metrics", action="store_true", help="leave out the process_* and python_* families")
    p.add_argument("--pod-labels", action="store_true",
                   help="add pod, namespace and container labels to the per-core and per-runtime families (as "
                   "dcgm-exporter; off by default: the output stays AWS's). neurontop_neuroncore_pod_info is "
                   "always served to join on")
    k8s_options(p)
    return p


def export_main(ns: argparse.Namespace, err: TextIO | None = None, stop: threading.Event | None = None) -> int:
    """Run the exporter until a signal (or ``stop``); returns the exit code."""
    from neuron_top.export import Exporter, ExportOptions
    from neuron_top.export.server import ListenError, serve
    from neuron_top.feed import Feed, RecordingError, Report, StatusChanged
    from neuron_top.sources.base import State

    err = err if err is not None else sys.stderr
    stop = stop if stop is not None else StopEvent()  # wakes the reader at once (no looks between reports)
    options = ExportOptions(used_cores_only=ns.used_cores_only, process_metrics=not ns.no_process_metrics,
                            pod_labels=ns.pod_labels)
    exporter = Exporter(options)
    try:
        server = serve(ns.listen, exporter)  # before the source: a busy port must not start neuron-monitor
    except ListenError as exc:
        raise UsageError(str(exc)) from None
    try:
        ns.tag = None
        ns.restart_command = True  # a daemon: a --command that exits is run again (with back-off), as neuron-monitor
        source, notes = live_source(ns)
        recorder = _recorder(ns.record)
        pods = pod_source(ns, first=True)
    except BaseException:
        server.stop()
        raise
    exporter.source = source.name
    for note in notes:
        print(f"neuron-top: {note}", file=err)
    print(f"neuron-top: serving {server.url} from {clean(source.name)}", file=err, flush=True)
    feed = Feed(source, recorder, pods=pods)

    def pump() -> None:
        said = ""
        for event in feed.events(stop):
            exporter.apply(event)
            if isinstance(event, Report) and pods is not None:
                # how pods are found (or why not), said when it changes: the exporter has no header
                now = event.snapshot.pods.status()
                if now != said:
                    said = now
                    print(f"neuron-top: {now or 'pods: none'}", file=err, flush=True)
            if isinstance(event, StatusChanged) and event.status.state in (State.ENDED, State.FAILED,
                                                                             State.RESTARTING):
                said = f" (its last output: {event.status.last_words})" if event.status.last_words else ""
                print(f"neuron-top: {clean(event.status.message)}{said}", file=err, flush=True)
            elif isinstance(event, RecordingError):
                print(f"neuron-top: recording stopped: {event.reason}", file=err, flush=True)

    signals = Signals(lambda _signum: stop.set()).install()
    thread = threading.Thread(target=pump, name="export feed", daemon=True)
    thread.start()
    try:
        while not stop.is_set():  # the signal handler sets stop on this thread: poll, never block on it
            time.sleep(0.5)
    finally:
        signals.restore()
        feed.close()
        thread.join(timeout=2.0)
        server.stop()
    return signals.code or 0

"""What every command shares: the usage error, the live source, the recorder, ``--once`` and starting the TUI.

Headless: the TUI is imported only inside ``run_tui``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_top.cli.signals import Signals
from neuron_top.fmt import plural
from neuron_top.textsafe import clean

if TYPE_CHECKING:
    from neuron_top.config import MonitorConfig
    from neuron_top.feed import PodSource
    from neuron_top.recording.player import ReplayController
    from neuron_top.recording.writer import RecordingWriter
    from neuron_top.sources.base import Source
    from neuron_top.sources.live import LiveChoice
    from neuron_top.tui.app import NeuronTopApp

__all__ = ["UsageError", "command_arg", "count_arg", "k8s_options", "live_source", "pod_source", "print_once", "run_app", "run_tui"]


def count_arg(text: str) -> int:
    """An argparse type: a whole number, 0 or more (``--history``). A negative one is the parser's usage error,
    not an internal error once the dashboard starts."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is below 0")
    return n


MIN_WIDTH = 40
"""The narrowest text table ``--width`` asks for: a fleet table's host, state and utilization columns."""


def width_arg(text: str) -> int:
    """An argparse type: a table's width in columns, at least ``MIN_WIDTH`` (``fleet --once --width``). A negative
    or tiny width printed a table of nothing but its ``HOST`` heading."""
    n = count_arg(text)
    if n < MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"{n} columns is too narrow for the table (at least {MIN_WIDTH})")
    return n


def command_arg(text: str) -> str:
    """An argparse type: a ``--command`` that can be run. An empty one, or one with an unclosed quote, started
    the dashboard on a source that failed at once ("cannot parse command : empty command")."""
    import shlex

    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot parse {clean(text)!r}: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("an empty command")
    return text


class UsageError(Exception):
    """A one-line message for the user; exit status 2."""


def _load_config(path: str | None) -> MonitorConfig | None:
    from neuron_top.config import ConfigError, load_config

    if path is None:
        return None
    try:
        cfg = load_config(path)
    except ConfigError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror}") from None
    return cfg


def _check_tag(tag: str | None) -> None:

    if tag:
        try:
            re.compile(tag)
        except re.error as exc:
            raise UsageError(f"--tag {tag!r} is not a valid regex: {exc}") from None


def live_source(ns: argparse.Namespace) -> tuple[Source, list[str]]:
    """The source for plain ``neuron-top``: --command, a pipe on stdin, neuron-monitor, or the built-in one
    (the rule and its tests live in ``sources.live``). Returns (source, notes)."""
    choice = live_choice(ns)
    return choice.source, choice.notes


def live_choice(ns: argparse.Namespace) -> LiveChoice:
    """``live_source`` with all the choice says (``sources.live.LiveChoice``: the source filter too)."""
    from neuron_top.config import ConfigError
    from neuron_top.sources.live import choose_live_source, find_neuron_monitor

    monitor: Callable[[], str | None] = (lambda: None) if getattr(ns, "builtin", False) else find_neuron_monitor
    try:
        return choose_live_source(config_path=ns.config, tag=getattr(ns, "tag", None), command=ns.command,
                                  monitor=monitor, restart_command=getattr(ns, "restart_command", False))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read config {ns.config}: {exc.strerror or exc}") from None


def k8s_options(p: argparse.ArgumentParser) -> None:
    """The pod attribution options (``neuron_top.k8s``), shared by the dashboard and ``export``."""
    g = p.add_argument_group("Kubernetes pods")
    g.add_argument("--kubelet-socket", metavar="PATH",
                   help="the kubelet's PodResources socket (/var/lib/kubelet/pod-resources/kubelet.sock)")
    g.add_argument("--host-root", metavar="DIR", help="where the host's / is mounted (in a container): /proc, "
                   "/var/log/pods and the kubelet socket are read under it")
    g.add_argument("--no-k8s", action="store_true", help="do not look for Kubernetes pods")


def pod_source(ns: argparse.Namespace, start: bool = True, first: bool = False) -> PodSource | None:
    """The pod attribution for a live source: the kubelet, else cgroups (``k8s.PodWatcher``), refreshed in the
    background when ``start``; with ``first``, asked once in this thread before (the exporter's first scrape
    then has the pods; bounded by the call's 5 s deadline); None with ``--no-k8s``."""
    if getattr(ns, "no_k8s", False):
        return None
    from neuron_top.k8s.watcher import PodWatcher, on_kubernetes, socket_path

    socket, root = getattr(ns, "kubelet_socket", None), getattr(ns, "host_root", None)
    if root is not None and not Path(root).is_dir():
        raise UsageError(f"--host-root: not a directory: {root}")
    watcher = PodWatcher(socket_path(socket, root), root or "/",
                         announce_absent=bool(socket or root) or on_kubernetes(root))
    if first:
        watcher.settle()
    return watcher.start() if start else watcher


def _recorder(path: str | None) -> RecordingWriter | None:
    if not path:
        return None
    from neuron_top.recording.writer import RecordingWriter

    try:
        writer = RecordingWriter(path, retry=True)  # a full disk pauses it; it goes on once there is room
    except OSError as exc:
        raise UsageError(f"cannot record to {path}: {exc.strerror or exc}") from None
    if writer.repaired:  # a cut .gz/.zst closed before appending: said where it stays visible
        print(f"neuron-top: {writer.repaired}", file=sys.stderr)
    return writer


def recording_failed(recorder: RecordingWriter | None) -> str:
    """Why ``--record`` stopped while the dashboard ran, or how many reports it lost while the disk was full, as
    the last line printed after the screen closes; empty when nothing was lost. The exit status is then 1: a
    recording with a hole (or that silently ended) is data lost."""
    if recorder is None:
        return ""
    st = recorder.state()
    lost = f", {plural(st.lost, 'report')} not recorded while the disk was full" if st.lost else ""
    if st.failed:
        return (f"neuron-top: --record {st.name} stopped: {st.failed} ({plural(st.written, 'report')} written "
                f"before it{lost})")
    if st.lost:  # paused on a full disk, maybe resumed: the file has a hole
        state = f"still paused: {st.paused}" if st.paused else "resumed"
        return f"neuron-top: --record {st.name}: {plural(st.written, 'report')} written{lost} ({state})"
    return ""


def print_once(source: Source, as_json: bool, recorder: RecordingWriter | None = None,
               pods: PodSource | None = None, tag: str | None = None, digits: int = 0) -> int:
    """Print the first report of a live source (neuron-monitor emits one at once) and exit; with ``recorder``
    (``--record FILE``), that report is recorded too (it was silently not); with ``pods``, with the pods asked
    once (not started: ``settle`` answers in this thread), before the report when it is recorded, so that the
    recording and the output have the one answer; with ``tag`` (``--tag``), only the apps it matches, as
    the dashboard's filter shows them; ``digits``: decimals of the core grid (``--precise``)."""
    from neuron_top.feed import Feed, Report, StatusChanged
    from neuron_top.output.text import SourceInfo, text
    from neuron_top.output.text import as_json as to_json
    from neuron_top.selection import narrow_by_tag
    from neuron_top.session import Session

    session = Session(source.name, "live", history=1)  # the source's state as the dashboard keeps it
    asked = False
    if pods is not None and recorder is not None:
        pods.settle()  # asked before the report comes, so that the recording keeps who held each core too
        asked = True
    feed = Feed(source, recorder, pods=pods if recorder is not None else None)  # closes the recorder when closed
    ended = None
    try:
        for event in feed.events():
            session.apply(event)
            if isinstance(event, StatusChanged) and session.status.state in ("ended", "failed", "restarting"):
                ended = event.status
                break  # --once waits for no restart
            if isinstance(event, Report):
                info = SourceInfo.of(session)
                snap = event.snapshot
                if pods is not None:
                    pods.want_pids(a.pid for a in snap.apps)
                    snap = snap.with_attribution(pods.settle(ask=not asked))  # one question per report
                snap = narrow_by_tag(snap, tag)
                _write(to_json(snap, info) + b"\n" if as_json else text(snap, info, digits=digits).encode())
                return 0
    finally:
        feed.close()
    skipped = session.status.skipped
    why = (ended.cause or ended.message) if ended is not None else session.status.message  # no "restarting in"
    said = f"; its last output: {ended.last_words}" if ended is not None and ended.last_words else ""
    raise UsageError(f"no report from {clean(source.name)}: {clean(why) or 'the stream ended'}" + said
                     + (f" ({skipped} bad input skipped)" if skipped else ""))


def _write(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def run_tui(source: Source | None, ns: argparse.Namespace, recorder: RecordingWriter | None = None,
            demo: bool = False, traces: Sequence[str] | None = None, replay: ReplayController | None = None,
            replay_name: str = "", notes: Sequence[str] = (), source_filter: str | None = None,
            pods: PodSource | None = None) -> int:
    """Start the dashboard (the only place the command line imports the TUI); returns the exit status."""
    from neuron_top.settings import SettingsStore
    from neuron_top.tui.app import NeuronTopApp

    traces = list(traces or getattr(ns, "trace", None) or [])
    for t in traces:
        if not Path(t).exists():
            raise UsageError(f"trace file not found: {t}")
    server = exporter = None
    if getattr(ns, "export", None) and source is None:
        raise UsageError("--export serves live reports (neuron-monitor, a pipe, --command or the demo), not a replay")
    if getattr(ns, "export", None) and source is not None:
        from neuron_top.export import Exporter
        from neuron_top.export.server import ListenError, serve

        exporter = Exporter(source=source.name)
        try:
            server = serve(ns.export, exporter)  # before the screen: a busy port is a one-line error
        except ListenError as exc:
            raise UsageError(str(exc).replace("--listen", "--export")) from None
    try:
        app = NeuronTopApp(source, theme=getattr(ns, "theme", None), tag=getattr(ns, "tag", None),
                           recorder=recorder, history=getattr(ns, "history", 600), demo=demo, traces=traces,
                           replay=replay, replay_name=replay_name,
                           notes=[*notes, *([recorder.repaired] if recorder is not None and recorder.repaired
                                            else [])], exporter=exporter,
                           source_filter=source_filter, trace_at=getattr(ns, "at", "start"),
                           trace_metrics=getattr(ns, "metrics", None), settings=SettingsStore.open(),
                           layout=getattr(ns, "layout", None), render=getattr(ns, "render", None), pods=pods)
    except BaseException:
        if server is not None:
            server.stop()
        raise

    def close() -> None:
        if app.collector is not None:  # normally closed on unmount; never leave a recording open
            app.collector.close()
        if server is not None:
            server.stop()

    code = run_app(app, close)
    failed = recording_failed(recorder)
    if failed:  # the screen is gone: said where it stays, and the status says data was lost
        print(failed, file=sys.stderr)
    return code or (1 if failed else 0)


def run_app(app: NeuronTopApp, cleanup: Callable[[], object] | None = None) -> int:
    """Run a TUI (the dashboard, replay, the timeline, the fleet) under the exit policy of ``cli/signals.py``, then
    ``cleanup``; returns the exit status (128+signal after SIGTERM, SIGHUP or SIGINT, else the app's).

    SIGTERM, SIGHUP, SIGINT: the same exit as q (terminal restored, recording closed, children stopped), forced
    ``WATCHDOG`` seconds later if it hangs, at once on a second signal. Without it the default action killed the
    process with the terminal still in the alternate screen, mouse reporting on, the cursor hidden, and a
    --command child (or a fleet's ssh streams) left to PID 1. The app installs no handler of its own for these:
    one would replace this one, watchdog and second signal included."""
    signals = Signals(lambda signum: app.request_exit(128 + signum), terminal=True).install()
    try:
        app.run()
    finally:
        try:
            if cleanup is not None:
                cleanup()
        finally:
            signals.restore()
    return signals.code or app.return_code or 0


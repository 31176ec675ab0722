"""``neuron-top fleet``: many hosts from a Prometheus server or over ssh; ``--once``/``--json`` for scripts.

Headless until the TUI starts: the parser, the checks and ``--once`` never import Textual.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuron_top.cli.common import UsageError, count_arg, run_app, width_arg
from neuron_top.fleet.frame import FleetFrame

if TYPE_CHECKING:
    from neuron_top.fleet.prom import PromFleet
from neuron_top.textsafe import clean

__all__ = [
    "GROUP_CHOICES", "fleet_main", "fleet_parser", "print_frame", "prom_fleet", "replay_once", "replay_tui",
    "run_fleet_tui", "run_pods", "ssh_command_for", "ssh_hosts", "ssh_once",
]

GROUP_CHOICES = ("type", "zone", "region", "status")


def fleet_parser() -> argparse.ArgumentParser:
    """The options of ``neuron-top fleet``."""
    p = argparse.ArgumentParser(
        prog="neuron-top fleet",
        description="Many Neuron hosts in one screen: read from the Prometheus your cluster already has "
        "(server-side aggregated, a few queries per refresh for any number of hosts), or one live stream "
        "per host over ssh. Enter opens a host's dashboard.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--prometheus", metavar="URL", help="a Prometheus-compatible server, e.g. http://prom:9090")
    src.add_argument("--ssh", metavar="HOST", nargs="+", help="hosts to stream from over ssh")
    src.add_argument("--hosts", metavar="FILE", help="a file of hosts (one per line, # comments) to stream from")
    prom = p.add_argument_group("Prometheus")
    prom.add_argument("--match", metavar="SELECTOR", help='label matchers added to every query, e.g. '
                      '\'job="neuron",instance_type=~"trn2.*"\'')
    prom.add_argument("--by", metavar="LABEL", default="instance_id",
                      help="the label that names a host (instance_id; node with Kubernetes relabelling; an OpenTelemetry "
                      "name such as @resource.k8s.node.name is queried quoted); pod or "
                      "namespace: one row per Kubernetes pod or namespace with its NeuronCores, utilization and "
                      "allocated-but-idle cores (from neuron-top export's neurontop_neuroncore_pod_info)")
    prom.add_argument("--label", metavar="LABEL", action="append", default=[],
                      help="an extra instance_info label to show, filter and group on (repeatable)")
    prom.add_argument("--bearer-token-file", metavar="FILE", help="send this file's token (re-read when it changes)")
    prom.add_argument("--user", metavar="USER", help="basic auth user (password from --password-file)")
    prom.add_argument("--password-file", metavar="FILE", help="basic auth password, read from a file")
    prom.add_argument("--ca-file", metavar="FILE", help="verify an https server against this PEM bundle")
    prom.add_argument("--sigv4", action="store_true",
                      help="sign every query with AWS SigV4 (Amazon Managed Prometheus, CloudWatch PromQL), with the "
                      "standard AWS credentials (environment, AWS_PROFILE, web identity token, instance role); "
                      "needs neuron-top[aws]")
    prom.add_argument("--region", metavar="REGION", help="with --sigv4: the endpoint's region (from the URL, else "
                      "AWS_REGION or the profile's)")
    prom.add_argument("--sigv4-service", metavar="NAME", help="with --sigv4: the service signed for (from the URL: aps "
                      "for aps-workspaces.*, monitoring for CloudWatch's monitoring.*)")
    prom.add_argument("--header", metavar="'NAME: VALUE'", action="append", default=[],
                      help="an extra header on every query, e.g. 'X-Scope-OrgID: team' for a Mimir/Cortex tenant "
                      "(repeatable)")
    prom.add_argument("--query-param", metavar="NAME=VALUE", action="append", default=[],
                      help="an extra parameter on every query (repeatable), e.g. max_source_resolution=0s")
    prom.add_argument("--thanos", action="store_true", help="a Thanos Querier: dedup=true, partial_response=true "
                      "(a store that does not answer is a warning in the header), raw resolution")
    prom.add_argument("--post", action="store_true", help="send queries as POST form bodies (implied by --sigv4)")
    prom.add_argument("--series-limit", type=int, metavar="N", default=None,
                      help="the server's cap on series per answer: a query reaching it is asked again split by "
                      "--shard-by labels and merged (500 for CloudWatch's URL, else none)")
    prom.add_argument("--shard-by", metavar="LABEL", action="append", default=[],
                      help="label(s) to split a capped answer by, in turn (availability_zone, then instance_type)")
    prom.add_argument("--raw", action="store_true",
                      help="read the raw series even where the recording rules (neuron-top.recording.yml) are loaded")
    prom.add_argument("--timeout", type=float, default=None, metavar="S",
                      help="seconds per query (5); with ssh and --once, for every host's first report (15)")
    prom.add_argument("--rate-window", default="1m", metavar="DUR", help="range of rate() for exec/errors (1m)")
    prom.add_argument("--ecc-window", default="15m", metavar="DUR", help="ECC columns: the counters' value, kept this long after a counter went away (15m)")
    prom.add_argument("--stale-after", type=float, default=60.0, metavar="S",
                      help="a host still scraped whose data is older is stale (60)")
    prom.add_argument("--down-after", type=float, default=180.0, metavar="S",
                      help="a host no longer scraped is stale at once and down after this long (180)")
    prom.add_argument("--ssh-template", metavar="CMD", help="command for a host's live stream (key l), e.g. "
                      "'ssh {instance_id} neuron-monitor'; names: {host}, {instance_id}, {instance_name}, "
                      "{instance_type}, {availability_zone}, {region}, --label ones")
    ssh = p.add_argument_group("ssh")
    ssh.add_argument("--command", metavar="CMD", help="per-host command with {host} "
                     "(default: 'ssh -o BatchMode=yes -o ConnectTimeout=10 {host} neuron-monitor')")
    view = p.add_argument_group("view")
    view.add_argument("--refresh", type=float, default=None, metavar="S",
                      help="seconds between refreshes (Prometheus 2, ssh 1)")
    view.add_argument("--sort", default="host", metavar="COLUMN", help="column to sort by (s cycles)")
    view.add_argument("--group", metavar="BY", help=f"group by {', '.join(GROUP_CHOICES)} or label:NAME (b cycles)")
    view.add_argument("--filter", metavar="REGEX", help="show hosts whose names or labels match (/ changes it)")
    view.add_argument("--trouble", action="store_true", help="troubled hosts first (! toggles)")
    view.add_argument("--heat", action="store_true", help="start in the heat map (h toggles)")
    view.add_argument("--apps", action="store_true",
                      help="the apps view: one row per runtime tag across hosts (a toggles; with --once, printed)")
    view.add_argument("--record", metavar="FILE", help="record the rows, one JSON line per refresh (.gz/.zst)")
    view.add_argument("--once", action="store_true", help="print the table once and exit")
    view.add_argument("--json", action="store_true", help="with --once (implied): print the refresh as JSON")
    view.add_argument("--width", type=width_arg, default=None, help="with --once: the table's width (the terminal's)")
    view.add_argument("--theme", metavar="NAME")
    view.add_argument("--render", choices=("fast", "textual"), default=None,
                      help="fast: send only the cells that changed (default); textual: Textual's own drawing only "
                      "(also NEURON_TOP_RENDER)")
    view.add_argument("--history", type=count_arg, default=600, metavar="N", help="reports kept per host (600)")
    return p


# --- building the pieces -------------------------------------------------------------------------------------


def _read_secret(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def prom_fleet(ns: argparse.Namespace) -> PromFleet:
    """The ``PromFleet`` the Prometheus options describe; a bad option is a ``UsageError``."""
    from neuron_top.fleet.prom import SHARD_BY, PromFleet
    from neuron_top.fleet.promql import Auth, BasicAuth, BearerTokenFile, PromClient
    from neuron_top.fleet.queries import MatchError, QuerySet, check_label, parse_match
    from neuron_top.fleet.rows import Thresholds

    try:
        match = parse_match(ns.match)
        by = check_label(ns.by)
        labels = tuple(check_label(n, "--label") for n in ns.label)
    except MatchError as exc:
        raise UsageError(str(exc)) from None
    for name, text in (("--rate-window", ns.rate_window), ("--ecc-window", ns.ecc_window)):
        _check_duration(name, text)
    auth: Auth | None = None
    if ns.bearer_token_file and ns.user:
        raise UsageError("give either --bearer-token-file or --user, not both")
    if ns.bearer_token_file:
        try:
            auth = BearerTokenFile(ns.bearer_token_file)
        except OSError as exc:
            raise UsageError(f"cannot read --bearer-token-file {ns.bearer_token_file}: "
                             f"{exc.strerror or exc}") from None
    elif ns.user:
        auth = BasicAuth(ns.user, _read_secret(ns.password_file, "--password-file") if ns.password_file else "")
    elif ns.password_file:
        raise UsageError("--password-file needs --user")
    if ns.sigv4:
        if auth is not None:
            raise UsageError("give --sigv4 or --bearer-token-file/--user, not both")
        auth = _sigv4(ns)
    elif ns.region or ns.sigv4_service:
        raise UsageError("--region and --sigv4-service go with --sigv4")
    if ns.timeout is None:
        ns.timeout = 5.0
    if ns.timeout <= 0 or ns.stale_after <= 0 or ns.down_after <= 0:
        raise UsageError("--timeout, --stale-after and --down-after must be above 0")
    headers = dict(_pair(h, ":", "--header", "'NAME: VALUE'") for h in ns.header)
    params = {"dedup": "true", "partial_response": "true", "max_source_resolution": "0s"} if ns.thanos else {}
    params.update(_pair(q, "=", "--query-param", "NAME=VALUE") for q in ns.query_param)
    try:
        shard_by = tuple(check_label(n, "--shard-by") for n in ns.shard_by) or SHARD_BY
    except MatchError as exc:
        raise UsageError(str(exc)) from None
    from neuron_top.fleet.sigv4 import guess_service

    limit = ns.series_limit if ns.series_limit is not None else (
        CLOUDWATCH_LIMIT if guess_service(ns.prometheus) == "monitoring" else None)
    if limit is not None and limit < 2:
        raise UsageError("--series-limit must be at least 2")
    try:
        client = PromClient(ns.prometheus, timeout=ns.timeout, auth=auth, ca_file=ns.ca_file,
                            post=ns.post or ns.sigv4, headers=headers, params=params)
    except (ValueError, OSError) as exc:  # ssl: a CA file that is missing or not PEM
        raise UsageError(f"--prometheus/--ca-file: {clean(getattr(exc, 'strerror', None) or exc)}") from None
    qs = QuerySet(by=by, match=match, labels=labels, rate_window=ns.rate_window, ecc_window=ns.ecc_window)
    fleet = PromFleet(client, qs, thresholds=Thresholds(ns.stale_after, ns.down_after),
                      rules="off" if ns.raw else "auto", limit=limit, shard_by=shard_by)
    if ns.sigv4:
        fleet.source += f" ({auth.describe})"  # type: ignore[union-attr]
    return fleet


CLOUDWATCH_LIMIT = 500
"""Series CloudWatch's PromQL endpoint answers at most."""


def _pair(text: str, sep: str, option: str, form: str) -> tuple[str, str]:
    name, found, value = text.partition(sep)
    if not found or not name.strip() or any(c in text for c in "\r\n"):
        raise UsageError(f"{option} {text!r}: give {form}")
    return name.strip(), value.strip()


def _sigv4(ns: argparse.Namespace) -> Any:
    """The SigV4 signer the options describe: service and region from the URL unless given."""
    from neuron_top.fleet.sigv4 import SigV4, guess_region, guess_service

    service = ns.sigv4_service or guess_service(ns.prometheus)
    if not service:
        raise UsageError("--sigv4: give --sigv4-service (aps for Amazon Managed Prometheus, monitoring for "
                         "CloudWatch): the URL does not say")
    try:
        return SigV4(ns.region or guess_region(ns.prometheus), service)
    except (ImportError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _check_duration(option: str, text: str) -> None:
    import re

    if not re.fullmatch(r"[1-9][0-9]*[smhd]", text):
        raise UsageError(f"{option} {text!r}: give a PromQL duration like 30s, 1m, 15m, 1h")


def ssh_hosts(ns: argparse.Namespace) -> list[str]:
    """The hosts of ``--hosts FILE``, else of ``--ssh`` (duplicates dropped); an unreadable or empty file is a ``UsageError``."""
    from neuron_top.fleet.ssh import read_hosts

    if ns.hosts:
        try:
            hosts = read_hosts(ns.hosts)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read --hosts {ns.hosts}: {getattr(exc, 'strerror', None) or exc}") from None
        if not hosts:
            raise UsageError(f"no hosts in {ns.hosts}")
        return hosts
    out: list[str] = []
    for h in ns.ssh:
        if h not in out:
            out.append(h)
    return out


def ssh_command_for(ns: argparse.Namespace) -> Callable[[str], list[str]]:
    """The per-host argv for ``--ssh`` (``--command`` with ``{host}``, or the default), checked once up front."""
    from neuron_top.fleet.ssh import DEFAULT_COMMAND, TemplateError, command_for

    template = ns.command or DEFAULT_COMMAND
    try:
        command_for(template, {"host": "example"})
    except TemplateError as exc:
        raise UsageError(f"--command: {exc}") from None
    if "{host}" not in template:
        raise UsageError("--command must name {host}, e.g. 'ssh {host} neuron-monitor'")
    return lambda host: command_for(template, {"host": host})


def _view_options(ns: argparse.Namespace, labels: tuple[str, ...] = ()) -> None:
    import re

    from neuron_top.fleet.table import COLUMNS

    keys = [c.key for c in COLUMNS]
    if ns.sort not in keys:
        raise UsageError(f"--sort {ns.sort!r}: one of {', '.join(keys)}")
    groups = [*GROUP_CHOICES, *(f"label:{n}" for n in labels)]
    if ns.group is not None and ns.group not in groups:
        name = ns.group.removeprefix("label:")
        if name != ns.group and name:  # label:NAME is in the help; its label must be one --label shows
            raise UsageError(f"--group {ns.group!r}: a label group needs --label {name} too"
                             + ("" if getattr(ns, "prometheus", None) else " (with --prometheus: instance_info's labels)"))
        raise UsageError(f"--group {ns.group!r}: one of {', '.join(groups)}")
    if ns.filter:
        try:
            re.compile(ns.filter)
        except re.error as exc:
            raise UsageError(f"--filter {ns.filter!r} is not a valid regex: {exc}") from None


# --- running ---------------------------------------------------------------------------------------------------


def fleet_main(ns: argparse.Namespace) -> int:
    """``neuron-top fleet``: many hosts from Prometheus or ssh, as a table or ``--once``/``--json``; returns the exit status."""
    ns.refresh = ns.refresh if ns.refresh is not None else (2.0 if ns.prometheus else 1.0)
    if ns.refresh <= 0:
        raise UsageError("--refresh must be above 0")
    if ns.timeout is not None and ns.timeout <= 0:  # Prometheus checks its own; over ssh it was an empty row
        raise UsageError("--timeout must be above 0")
    if ns.prometheus and ns.by in ("pod", "namespace"):
        return run_pods(ns)
    if ns.prometheus:
        fleet = prom_fleet(ns)
        fleet.apps = ns.apps
        _view_options(ns, fleet.qs.labels)
        if ns.once or ns.json:
            return print_once(ns, fleet.refresh, fleet.close)
        if ns.ssh_template:
            from neuron_top.fleet.ssh import TemplateError, command_for

            try:
                command_for(ns.ssh_template, {n: "x" for n in ("host", ns.by, "instance_id", "instance_name",
                                                                 "instance_type", "availability_zone", "region",
                                                                 *fleet.qs.labels)})
            except TemplateError as exc:
                fleet.close()
                raise UsageError(f"--ssh-template: {exc}") from None
        return run_fleet_tui(ns, lambda rec: _prom_screen(fleet, ns, rec), fleet.close)
    hosts = ssh_hosts(ns)
    command = ssh_command_for(ns)
    _view_options(ns)
    if ns.once or ns.json:
        return print_once(ns, lambda: ssh_once(hosts, command, ns.timeout if ns.timeout is not None else 15.0))
    return run_fleet_tui(ns, lambda rec: _ssh_screen(hosts, command, ns, rec), None)


def run_pods(ns: argparse.Namespace) -> int:
    """``--by pod|namespace``: one row per pod or namespace, aggregated by Prometheus: a table refreshed every
    ``--refresh`` seconds, or ``--once`` text / ``--json``. Exit status 1 when every query failed."""
    import json

    from neuron_top.fleet.pods import PodQueries, pod_groups, pod_table
    from neuron_top.fleet.queries import QuerySet

    group = ns.by
    if ns.record:
        raise UsageError(f"--record keeps the hosts' rows; with --by {group} there are none (use --json)")
    # the hosts' table's options would do nothing here: said, not ignored
    hosts_only = [flag for flag, given in (("--sort", ns.sort != "host"), ("--group", ns.group), ("--filter", ns.filter),
                                           ("--trouble", ns.trouble), ("--heat", ns.heat), ("--apps", ns.apps),
                                           ("--label", ns.label), ("--ssh-template", ns.ssh_template)) if given]
    if hosts_only:
        raise UsageError(f"{', '.join(hosts_only)}: for the hosts' table; with --by {group} the rows are "
                         f"{'pods' if group == 'pod' else 'namespaces'}, by the cores they hold")
    ns.by = "instance_id"  # the client's checks; the pod queries carry their own grouping
    fleet = prom_fleet(ns)
    if not (ns.once or ns.json):
        from neuron_top.tui.screens.fleet_pods import PodFleetScreen

        queries = PodQueries(group, QuerySet(match=fleet.qs.match))
        return run_fleet_tui(ns, lambda _rec: PodFleetScreen(fleet.client, queries, source=ns.prometheus,
                                                             interval=ns.refresh), fleet.close)
    try:
        groups, problems = pod_groups(fleet.client, PodQueries(group, QuerySet(match=fleet.qs.match)))
    finally:
        fleet.close()
    if ns.json:
        doc = {"source": ns.prometheus, "by": group, "problems": problems,
               "groups": [{"namespace": g.namespace, "pod": g.pod or None, "hosts": g.hosts, "cores": g.cores,
                           "utilization": g.util, "idle_cores": g.idle} for g in groups]}
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        lines = [f"neuron-top fleet · {clean(ns.prometheus, 100)} · by {group}"]
        lines += [f"error: {clean(p, 300)}" for p in problems]
        lines += pod_table(groups, group)
        sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return 1 if len(problems) == 4 else 0


def _prom_screen(fleet: Any, ns: argparse.Namespace, recorder: Any) -> Any:
    from neuron_top.tui.screens.fleet_sources import PromFleetScreen

    return _arranged(PromFleetScreen(fleet, interval=ns.refresh, ssh_template=ns.ssh_template, recorder=recorder),
                     ns)


def _ssh_screen(hosts: list[str], command: Callable[[str], list[str]], ns: argparse.Namespace, recorder: Any) -> Any:
    from neuron_top.tui.screens.fleet_sources import SshFleetScreen

    return _arranged(SshFleetScreen(hosts, command, interval=ns.refresh, recorder=recorder), ns)


def _arranged(screen: Any, ns: argparse.Namespace) -> Any:
    from neuron_top.fleet.table import compile_filter

    screen.sort = ns.sort
    screen.group = ns.group
    screen.trouble_first = ns.trouble
    if ns.filter:
        screen.filter_text, screen.pattern = ns.filter, compile_filter(ns.filter)
    if ns.heat:
        screen.heat = screen.heat_column
        screen.add_class("-heat")
    if getattr(ns, "apps", False):
        screen.show_apps = True
    return screen


def run_fleet_tui(ns: argparse.Namespace, make_screen: Callable[[Any], Any],
                  cleanup: Callable[[], object] | None) -> int:
    """The fleet table in the TUI (``make_screen`` builds its screen, given the recorder); returns the exit status."""
    from neuron_top.tui.app import NeuronTopApp

    recorder = _recorder(ns, cleanup)
    app = NeuronTopApp(None, theme=ns.theme, history=ns.history, first_screen=lambda: make_screen(recorder),
                       render=getattr(ns, "render", None))

    def close() -> None:
        try:
            if recorder is not None:
                recorder.close()
        finally:
            if cleanup is not None:
                cleanup()

    return run_app(app, close)


def _recorder(ns: argparse.Namespace, cleanup: Callable[[], object] | None) -> Any:
    """``--record FILE``'s recorder (None without it); a file that cannot be written is a usage error."""
    from neuron_top.fleet.record import FleetRecorder

    if not ns.record:
        return None
    try:
        return FleetRecorder(ns.record)
    except OSError as exc:
        if cleanup is not None:
            cleanup()
        raise UsageError(f"cannot record to {ns.record}: {exc.strerror or exc}") from None


def print_once(ns: argparse.Namespace, refresh: Callable[[], FleetFrame],
               cleanup: Callable[[], object] | None = None) -> int:
    """``--once``/``--json``: one refresh printed, and with ``--record`` recorded (its one line, as the table
    records each refresh; it was silently not written)."""
    recorder = _recorder(ns, cleanup)
    try:
        frame = refresh()
        if recorder is not None:
            recorder.write(frame)
    finally:
        if recorder is not None:
            recorder.close()
        if cleanup is not None:
            cleanup()
    return print_frame(frame, ns)


def ssh_once(hosts: list[str], command: Callable[[str], list[str]], timeout: float) -> FleetFrame:
    """Every host's first report (or why there is none), waiting at most ``timeout`` seconds."""
    from neuron_top.feed import Feed, Report, StatusChanged
    from neuron_top.fleet.sessions import SessionFleet
    from neuron_top.fleet.ssh import HostStream
    from neuron_top.sources.base import State

    fleet = SessionFleet(hosts, first_report_within=timeout)  # a host with nothing by the end is down, not starting
    lock = threading.Lock()
    done = {h: threading.Event() for h in hosts}
    feeds = {h: Feed(HostStream(h, command(h))) for h in hosts}

    def run(host: str) -> None:
        # Read on after the first report: while slower hosts are waited for, this one stays current (up, not stale).
        # Its stream ending after it (a command that prints one report and exits) is not why there is none: the
        # row stays the report's, not "down" or not as the race with the slowest host's report decides.
        reported = False
        for ev in feeds[host].events():
            if reported and isinstance(ev, StatusChanged):
                continue
            reported = reported or isinstance(ev, Report)
            with lock:
                fleet.apply(host, ev)
            if isinstance(ev, Report) or (isinstance(ev, StatusChanged) and ev.status.state in (
                    State.RESTARTING, State.FAILED, State.ENDED)):
                done[host].set()

    threads = [threading.Thread(target=run, args=(h,), daemon=True, name=f"once-{h}") for h in hosts]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    try:
        for h in hosts:
            done[h].wait(max(0.0, deadline - time.monotonic()))
        with lock:
            return fleet.frame()
    finally:
        for f in feeds.values():
            f.close()


def print_frame(frame: FleetFrame, ns: argparse.Namespace, position: str = "") -> int:
    """``--once``: the table as text, or ``--json``: the frame as one JSON line (a fleet recording's format).
    Exit status 1 when no host answered (``FleetFrame.none_answered``)."""
    import os
    import shutil

    from neuron_top.fleet.record import encode_frame
    from neuron_top.fleet.rows import FleetRow
    from neuron_top.fleet.table import arrange, compile_filter, summarize, text_table

    if ns.json:
        sys.stdout.buffer.write(encode_frame(frame) + b"\n")
    else:
        width = getattr(ns, "width", None) or (shutil.get_terminal_size((200, 24)).columns if os.isatty(1) else 200)
        flt = getattr(ns, "filter", None)
        lines = arrange(frame.rows, sort=getattr(ns, "sort", "host"), pattern=compile_filter(flt) if flt else None,
                        group=getattr(ns, "group", None), trouble_first=getattr(ns, "trouble", False))
        shown = [ln for ln in lines if isinstance(ln, FleetRow)]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(frame.ts))
        out = [f"neuron-top fleet · {clean(frame.source, 100)} · {frame.state} · {when}"
               + (f" · {position}" if position else "")
               + "".join(f" · {clean(n, 100)}" for n in frame.notes)
               + (f" · {frame.cost}" if frame.cost else ""),
               summarize(shown).text()]
        for p in frame.problems:
            out.append(f"{'warning' if p.warning else 'error'}: {p.name + ': ' if p.name else ''}{clean(p.message, 300)}"
                       + (f"\n  query: {clean(p.query, 2000)}" if p.query else ""))
        if getattr(ns, "apps", False):
            from neuron_top.fleet.apps import apps_table

            out += apps_table(frame.apps or [])
        else:
            out += text_table(lines, width)
        sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
    return 1 if frame.none_answered else 0


def replay_once(index: Any, ns: argparse.Namespace) -> int:
    """``neuron-top replay FLEET.jsonl --once``: the recorded refresh at --start N (1-based) or the last one."""
    import msgspec

    from neuron_top.fleet.record import decode_frame

    n = len(index)
    i = n - 1 if ns.start is None else max(0, min(ns.start - 1, n - 1))
    while i >= 0:
        try:
            return print_frame(decode_frame(index.get(i)), ns, position=f"refresh {i + 1}/{n}")
        except (msgspec.DecodeError, msgspec.ValidationError):
            i -= 1  # a bad line: the refresh before it
    raise UsageError(f"no fleet refresh in {clean(ns.file)} could be read")


def replay_tui(controller: Any, ns: argparse.Namespace, name: str) -> int:
    """``neuron-top replay FLEET.jsonl``: the fleet table at each recorded refresh, with the replay's keys."""
    from neuron_top.tui.app import NeuronTopApp
    from neuron_top.tui.screens.fleet_replay import FleetReplayScreen

    app = NeuronTopApp(None, theme=ns.theme, first_screen=lambda: FleetReplayScreen(controller, name),
                       render=getattr(ns, "render", None))
    return run_app(app)

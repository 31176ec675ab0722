"""Where a live fleet's rows come from: Prometheus (one poller) or ssh (one stream per host)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.binding import Binding

from neuron_top.feed import Feed
from neuron_top.fleet.host_source import PromHostSource
from neuron_top.fleet.prom import PromFleet
from neuron_top.fleet.rows import FleetRow
from neuron_top.fleet.sessions import SessionFleet
from neuron_top.fleet.ssh import HostStream, TemplateError, command_for
from neuron_top.session import Session
from neuron_top.sources.base import Source
from neuron_top.textsafe import clean
from neuron_top.tui.messages import FleetRefreshed, HostEvent
from neuron_top.tui.screens.fleet import FleetScreen


def template_values(row: FleetRow, by: str) -> dict[str, str]:
    """What ``--ssh-template`` may name: ``{host}`` (the row's key), the instance labels and ``--label`` ones."""
    values = {"host": row.key, by: row.key, "instance_id": row.instance_id, "instance_name": row.name,
              "instance_type": row.instance_type, "availability_zone": row.zone, "region": row.region}
    values.update(row.labels)
    return values


class PromFleetScreen(FleetScreen):
    """Rows from a Prometheus server, refreshed every ``interval`` seconds; Enter opens a host's dashboard made
    from its own series; ``l`` opens its live stream over ssh with ``--ssh-template``."""

    BINDINGS = [Binding("l", "live", "live over ssh")]

    def __init__(self, fleet: PromFleet, *, interval: float = 2.0, ssh_template: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(labels=fleet.qs.labels, **kwargs)
        self.fleet = fleet
        self.interval = interval
        self.ssh_template = ssh_template

    def start(self) -> None:
        post = self.post_message
        fleet, interval = self.fleet, self.interval
        self._run(lambda stop: fleet.run(lambda f: post(FleetRefreshed(f)), stop, interval), "fleet poller")

    def stop(self) -> None:
        super().stop()
        self.fleet.close()

    def want_apps(self, on: bool) -> None:
        self.fleet.apps = on  # one more query a refresh while the apps view is shown

    def host_session(self, key: str) -> Session | None:
        return self.feed_host(key, PromHostSource(self.fleet.client, self.fleet.qs, key, interval=self.interval,
                                                  limit=self.fleet.limit))

    def live_command(self, row: FleetRow) -> Source | None:
        if not self.ssh_template:
            return super().live_command(row)
        try:
            argv = command_for(self.ssh_template, template_values(row, self.fleet.qs.by))
        except TemplateError as exc:
            self.notify(f"--ssh-template: {exc}", severity="error", markup=False)
            return None
        return HostStream(row.key, argv)


class SshFleetScreen(FleetScreen):
    """One live stream per host (``--ssh HOST...``/``--hosts FILE``), each a session; the rows are made from the
    sessions once a second (and the hosts' dashboards are those sessions, live)."""

    def __init__(self, hosts: Sequence[str], command: Callable[[str], list[str]], *, interval: float = 1.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.interval = interval
        self.fleet = SessionFleet(hosts, source=f"ssh {len(hosts)} hosts")
        self._streams: list[tuple[Feed, Any]] = []
        """Each host's feed and the event that stops its worker."""

    def start(self) -> None:
        post = self.post_message
        for host in self.fleet.hosts:
            source = HostStream(host, self.command(host))
            feed = Feed(source)

            def body(stop, feed: Feed = feed, host: str = host) -> None:  # type: ignore[no-untyped-def]
                try:
                    feed.run(lambda ev: post(HostEvent(host, ev)), stop)
                finally:
                    feed.close()

            self._streams.append((feed, self._run(body, f"ssh {clean(host, 40)}")))
        self.set_interval(self.interval, self._refresh_rows)
        self._refresh_rows()

    def stop(self) -> None:
        super().stop()
        for feed, stop in self._streams:
            stop.set()
            feed.close()

    def apply_host_event(self, message: HostEvent) -> Session | None:
        if message.host not in self.fleet.sessions:
            return super().apply_host_event(message)
        update = self.fleet.apply(message.host, message.event)
        session = self.fleet.sessions[message.host]
        if self.host.session is session:
            self.host.react(update)
        if update.status or not self.frame:
            self._refresh_rows(record=False)  # a host going down or coming up shows at once
        return session

    def _refresh_rows(self, record: bool = True) -> None:
        """The rows from the sessions (recorded once per interval, not per event)."""
        self.apply_frame(self.fleet.frame(), record=record)

    def host_session(self, key: str) -> Session | None:
        return self.fleet.sessions.get(key)

    def leave_host(self, key: str) -> None:
        if key in self.fleet.sessions and key not in self._feeds:
            return  # its stream goes on: it is one of the fleet's
        super().leave_host(key)


def ssh_command(template: str) -> Callable[[str], list[str]]:
    """``--command`` as a function of the host (checked once, up front: raises ``TemplateError``)."""
    command_for(template, {"host": "example"})
    return lambda host: command_for(template, {"host": host})


__all__ = ["PromFleetScreen", "SshFleetScreen", "ssh_command", "template_values"]

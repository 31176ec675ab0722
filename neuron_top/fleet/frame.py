"""One refresh of the fleet: every host's row, what went wrong, and how the source is doing (no UI imports).

A frame is what the screen draws, what ``--record`` writes (one JSON line per refresh) and what a fleet replay
reads back. It is a msgspec Struct so it round-trips exactly.
"""

from __future__ import annotations

import msgspec

from neuron_top.fleet.apps import AppRow
from neuron_top.fleet.rows import FleetRow
from neuron_top.fmt import plural

__all__ = ["FleetFrame", "Problem"]


class Problem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """A query that failed (with its text, so the user can try it), or a source-wide trouble."""

    message: str
    name: str = ""
    query: str = ""
    warning: bool = False
    """The server answered but warned (Thanos: a store did not answer, the figures may miss hosts)."""


class FleetFrame(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """One refresh of the fleet: every host's row, where they came from, and what went wrong."""

    ts: float
    """Unix seconds of the refresh."""
    source: str
    """"prometheus http://host:9090" or "ssh 4 hosts"."""
    rows: list[FleetRow] = msgspec.field(default_factory=list)
    state: str = "ok"
    """"ok", "partial" (some queries failed), "unreachable" (none answered: rows are the last known, aging),
    "starting"."""
    problems: list[Problem] = msgspec.field(default_factory=list)
    queries: int = 0
    """Queries this refresh sent (the same for any number of hosts)."""
    elapsed: float = 0.0
    """Seconds the refresh took (all queries, in parallel)."""
    retry_in: float | None = None
    """After a failed refresh: seconds until the next try (the back-off)."""
    notes: list[str] = msgspec.field(default_factory=list)
    """How the figures were read, for the header: "recording rules" or "raw series", an answer split by a label
    because the server caps answers ("split by availability_zone: 3 parts")."""
    apps: list[AppRow] | None = None
    """The apps view: one row per runtime tag across the hosts (None: not asked for)."""

    @property
    def none_answered(self) -> bool:
        """No host answered this refresh: the source unreachable, or every host it knows down. ``--once`` then
        exits 1, over Prometheus and over ssh alike (ssh exited 0 with every host down)."""
        return self.state == "unreachable" or (bool(self.rows) and all(r.status == "down" for r in self.rows))

    @property
    def cost(self) -> str:
        """What the refresh cost, for the header and ``--once``: "11 queries in 42 ms", "1 query in 103 ms";
        "" when it sent none (ssh, a replay of one)."""
        return f"{plural(self.queries, 'query', 'queries')} in {self.elapsed * 1000:.0f} ms" if self.queries else ""

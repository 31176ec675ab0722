"""``neuron-top fleet --prometheus URL --by pod|namespace``: one row per Kubernetes pod (or namespace) holding
NeuronCores anywhere in the fleet, with its hosts, cores, utilization and allocated-but-idle cores; the groups
come from ``fleet.pods`` (four queries aggregated by Prometheus), asked by one thread every ``interval`` seconds.
Names from the data are drawn as ``Text``, never markup."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from neuron_top.fleet.pods import PodGroup, PodQueries, pod_groups
from neuron_top.fleet.promql import PromClient
from neuron_top.fmt import pct
from neuron_top.textsafe import clean

COLUMNS = ("hosts", "NCs", "util", "idle")


class PodsRefreshed(Message):
    def __init__(self, groups: list[PodGroup], problems: list[str], ts: float) -> None:
        super().__init__()
        self.groups = groups
        self.problems = problems
        self.ts = ts


class PodFleetScreen(Screen):
    """The pods (or namespaces) of the fleet; ``r`` asks again at once."""

    BINDINGS = [Binding("r", "refresh_now", "refresh"), Binding("q", "app.quit", "quit")]
    DEFAULT_CSS = """
    PodFleetScreen #pods-title { height: 1; background: $panel; color: $text; }
    PodFleetScreen #pods-problems { height: auto; color: $text-error; }
    PodFleetScreen DataTable { height: 1fr; }
    """

    def __init__(self, client: PromClient, queries: PodQueries, *, source: str = "", interval: float = 2.0,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.client = client
        self.queries = queries
        self.source = source
        self.interval = interval
        self.clock = clock
        self.groups: list[PodGroup] = []
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f" neuron-top fleet · {clean(self.source, 100)} · by {self.queries.group} · asking…"),
                     id="pods-title")
        yield Static(Text(""), id="pods-problems")
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("namespace/pod" if self.queries.group == "pod" else "namespace", key="name")
        for c in COLUMNS:
            table.add_column(c, key=c)
        self._thread = threading.Thread(target=self._poll, name="fleet pods", daemon=True)
        self._thread.start()

    def on_unmount(self) -> None:
        self._stop.set()
        self._wake.set()

    def _poll(self) -> None:
        """The one worker: asks, posts, waits; never touches widgets."""
        while not self._stop.is_set():
            try:
                groups, problems = pod_groups(self.client, self.queries)
            except Exception as exc:  # a bug costs this refresh, not the screen
                groups, problems = [], [f"failed: {clean(repr(exc), 200)}"]
            self.post_message(PodsRefreshed(groups, problems, self.clock()))
            self._wake.wait(self.interval)
            self._wake.clear()

    def action_refresh_now(self) -> None:
        self._wake.set()

    def on_pods_refreshed(self, message: PodsRefreshed) -> None:
        self.groups = message.groups
        table = self.query_one(DataTable)
        table.clear()
        for g in message.groups:
            table.add_row(Text(clean(g.name, 200)), Text(str(g.hosts), justify="right"),
                          Text(str(g.cores), justify="right"), Text(pct(g.util), justify="right"),
                          Text(str(g.idle), justify="right", style="bold" if g.idle else ""), key=g.name)
        held = sum(g.cores for g in message.groups)
        idle = sum(g.idle for g in message.groups)
        when = time.strftime("%H:%M:%S", time.localtime(message.ts))
        self.query_one("#pods-title", Static).update(Text(
            f" neuron-top fleet · {clean(self.source, 100)} · by {self.queries.group} · "
            f"{len(message.groups)} {self.queries.group}s · {held} NeuronCores held · {idle} allocated but idle"
            f" · {when}"))
        self.query_one("#pods-problems", Static).update(Text("\n".join(f" error: {clean(p, 300)}"
                                                                       for p in message.problems)))

"""The fleet by pod (``fleet --prometheus URL --by pod``): a table of pod groups from the server-side queries,
refreshed by one thread, names drawn as text."""

from __future__ import annotations

import threading

from textual.app import App
from textual.widgets import DataTable, Static

from neuron_top.fleet.pods import PodQueries
from neuron_top.fleet.promql import Sample
from neuron_top.tui.screens.fleet_pods import PodFleetScreen

HOSTILE = "[bold]x\x1b[2J"


class FakeClient:
    """Answers the four pod queries by their leading words (count of cores, hosts, avg, busy)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.calls = 0

    def query(self, expr: str) -> list[Sample]:
        self.calls += 1
        rows = {("ml", "train-0"): ("8", "2", "0.5", "6"), ("default", HOSTILE): ("2", "1", "0", None)}
        which = 0 if expr.startswith("count by (namespace, pod) (max") else 1 if "instance_id) (max" in expr \
            and expr.startswith("count by (namespace, pod) (count") else 2 if expr.startswith("avg") else 3
        out = [Sample({"namespace": ns, "pod": pod}, (0.0, v[which])) for (ns, pod), v in rows.items()
               if v[which] is not None]
        if which == 3:
            self.asked.set()
        return out


class Host(App):
    def __init__(self, client: FakeClient) -> None:
        super().__init__()
        self.client = client

    def on_mount(self) -> None:
        self.push_screen(PodFleetScreen(self.client, PodQueries("pod"), source="http://prom", interval=30))  # type: ignore[arg-type]


async def test_pod_groups_fill_the_table_and_r_asks_again() -> None:
    client = FakeClient()
    app = Host(client)
    async with app.run_test(size=(120, 20)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if app.screen.query_one(DataTable).row_count == 2:
                break
        table = app.screen.query_one(DataTable)
        assert table.row_count == 2
        cells = [[str(c) for c in table.get_row_at(i)] for i in range(2)]
        assert cells[1] == ["ml/train-0", "2", "8", "50.0%", "2"]  # 8 held, 6 busy: 2 idle
        assert cells[0][0] == "default/[bold]x\\x1b[2J" and cells[0][4] == "2"  # none busy: all idle
        title = str(app.screen.query_one("#pods-title", Static).render())
        assert "2 pods · 10 NeuronCores held · 4 allocated but idle" in title
        before = client.calls
        await pilot.press("r")
        for _ in range(100):
            await pilot.pause(0.05)
            if client.calls >= before + 4:
                break
        assert client.calls >= before + 4

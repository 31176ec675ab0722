"""``--once`` text and the dashboard's panels say the same: one set of derived values, one set of cell texts
(``neuron_top.output.cells``), formatted by both. Read back from what each draws, compared value by value."""

from __future__ import annotations

import re

import pytest

from neuron_top.output.cells import APP_COLUMNS
from neuron_top.output.text import SourceInfo, text
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.vcpu import VcpuPanel
from tests.helpers import demo_snapshots, feed, make_app

TOKEN = re.compile(r"ND(\d+)|\[([^\[\]]*)\]")


def cells_by_device(lines: list[str]) -> dict[int, list[str]]:
    """Device -> its cells' texts, in order, from grid rows (several devices a row on screen, one in the text)."""
    out: dict[int, list[str]] = {}
    device = None
    for line in lines:
        for m in TOKEN.finditer(line):
            if m.group(1) is not None:
                device = int(m.group(1))
                out[device] = []
            elif device is not None:
                out[device].append(m.group(2))
    return out


def section(out: str, head: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


@pytest.mark.parametrize(("instance", "keys", "flops"), [
    ("trn2.48xlarge", (), False), ("trn2.48xlarge", ("f",), True), ("trn1.32xlarge", ("f",), True),
    ("inf1.xlarge", ("f",), True), ("inf2.48xlarge", ("3",), False),
])
async def test_once_text_says_what_the_panels_show(instance: str, keys: tuple[str, ...], flops: bool) -> None:
    snaps = demo_snapshots(instance, 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=(250, 80)) as pilot:
        await feed(pilot)
        await pilot.press(*keys)
        await pilot.pause()
        snap = snaps[-1]
        out = text(snap, SourceInfo("demo", "demo"), pid=app.pid, flops=flops)
        grid = app.screen.query_one(CoreGrid)
        shown = [s.text for s in grid._strips]

        # the core grid: the same title, and every device's cells
        cores = section(out, "NeuronCores (")
        assert cores[0].split("): ", 1)[1] == shown[0].strip()
        assert cells_by_device(cores[1:]) == cells_by_device(shown[2:])
        # each device's memory (MEM beside the cells on screen, "mem" in the text): the same, in device order
        mem = re.compile(r"\]\s+(\d[\d.]*/[\d.]+[BKMGTP]|-)(?=\s+ND|\s*$)")
        assert [m for line in shown[2:] for m in mem.findall(line)] == \
            [line.split(" mem ")[1].strip() for line in cores[1:]]

        # the apps panel: each app's row, column by column
        panel = app.screen.query_one(AppsPanel)
        rows = {line.split()[0].lstrip(">"): line.split()[1:] for line in (s.text for s in panel._strips[2:])
                if line.strip()}
        table = section(out, "apps (")
        heads = table[1].split()[1:]
        assert heads == [h for _, h in APP_COLUMNS]
        for line in table[2:]:
            label, *values = line.split()
            assert rows[label][:len(values)] == values, label

        # the vCPU summary: busy share and context switches
        vcpu = next(line for line in out.splitlines() if line.startswith("vCPU ("))
        title = app.screen.query_one(VcpuPanel)._strips[0].text
        busy = re.search(r"[\d.]+% busy", title).group(0)
        ctxsw = re.search(r"ctxsw [\d.]+k?/s", title).group(0)
        assert busy in vcpu and ctxsw in vcpu

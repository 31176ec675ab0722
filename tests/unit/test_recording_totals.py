"""Counts since start at any report (``recording.totals``): equal to summing every report from the start."""

from __future__ import annotations

from neuron_top.recording.markers import brief_facts
from neuron_top.recording.player import ReplayController
from neuron_top.recording.totals import EVERY
from tests.list_index import ListIndex
from tests.recordings import Plan, lines


def test_totals_at_every_position_equal_a_sum_from_the_start() -> None:
    plan = Plan(seconds=300 * 10, period=10.0, corrected_every=70, bursts=[(500, 900, 3)],
                ecc=[(1234, 7, "sram_uncorrected", 2)])
    data = [x.rstrip(b"\n") for x in lines(plan)]
    c = ReplayController(ListIndex(data, [float(i) for i in range(len(data))]))
    assert c.totals_at(0) is None  # not scanned yet
    c.scan_markers()
    ecc: dict[int, list[int]] = {}
    failed = errors = 0
    for i, raw in enumerate(data):
        f = brief_facts(raw)
        for e in f.ecc:
            t = ecc.setdefault(e.device, [0, 0, 0, 0])
            for k, v in enumerate((e.mem_corrected, e.mem_uncorrected, e.sram_corrected, e.sram_uncorrected)):
                t[k] += v
        failed += sum(a[2] for a in f.apps.values())
        errors += sum(a[3] for a in f.apps.values())
        if i % 7 and i not in (EVERY - 1, EVERY, 2 * EVERY - 1, len(data) - 1):
            continue
        got = c.totals_at(i)
        assert got is not None and got.reports == i + 1
        assert got.failed == failed and got.errors == errors
        assert {d: [e.mem_corrected, e.mem_uncorrected, e.sram_corrected, e.sram_uncorrected]
                for d, e in got.ecc.items()} == ecc
    assert c.totals_at(len(data) - 1).errors == 40 * 3  # the burst plants errors by type
    assert c.totals_at(len(data) - 1).uncorrected_devices == (7,)

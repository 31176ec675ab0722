"""new_uncorrected: devices with uncorrected ECC events in a report (counts are per period)."""

from __future__ import annotations

from typing import Any

import msgspec

from neuron_top import schema
from neuron_top.alerts import new_uncorrected
from neuron_top.history import History
from neuron_top.snapshot import Snapshot


def snap(*devices: dict[str, Any] | None) -> Snapshot:
    report = msgspec.convert({"system_data": {"neuron_hw_counters": {"neuron_devices": list(devices)}}}, schema.Report)
    return Snapshot(report, 0.0)


def dev(i: int, mem_u: int = 0, sram_u: int = 0, mem_c: int = 0) -> dict[str, Any]:
    return {"neuron_device_index": i, "mem_ecc_uncorrected": mem_u, "sram_ecc_uncorrected": sram_u,
            "mem_ecc_corrected": mem_c, "sram_ecc_corrected": 0}


def test_uncorrected_events_in_dram_or_sram() -> None:
    assert new_uncorrected(snap(dev(0), dev(1, mem_u=1), dev(2, sram_u=2))) == [1, 2]


def test_corrected_only_is_not_an_alert() -> None:
    assert new_uncorrected(snap(dev(0, mem_c=10))) == []


def test_reports_without_ecc_and_bad_values() -> None:
    assert new_uncorrected(snap()) == []
    assert new_uncorrected(snap(None, {"neuron_device_index": 0, "mem_ecc_uncorrected": -4},
                                {"neuron_device_index": -1, "mem_ecc_uncorrected": 9})) == []


def test_history_sums_per_period_events() -> None:
    h = History()
    for s in (snap(dev(0, mem_c=2)), snap(dev(0)), snap(dev(0, mem_c=1, sram_u=1), dev(1, mem_u=1))):
        h.push(s)
    t0, t1 = h.ecc_totals[0], h.ecc_totals[1]
    assert (t0.mem_corrected, t0.sram_uncorrected, t1.mem_uncorrected) == (3, 1, 1)
    h.clear()
    assert h.ecc_totals == {}

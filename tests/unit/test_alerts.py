"""new_uncorrected: which devices' uncorrected ECC counts rose."""

from __future__ import annotations

from typing import Any

import msgspec

from neuron_top import schema
from neuron_top.alerts import new_uncorrected
from neuron_top.snapshot import Snapshot


def snap(*devices: dict[str, Any]) -> Snapshot:
    report = msgspec.convert({"system_data": {"neuron_hw_counters": {"neuron_devices": list(devices)}}}, schema.Report)
    return Snapshot(report, 0.0)


def dev(i: int, mem_u: int = 0, sram_u: int = 0, mem_c: int = 0) -> dict[str, Any]:
    return {"neuron_device_index": i, "mem_ecc_uncorrected": mem_u, "sram_ecc_uncorrected": sram_u,
            "mem_ecc_corrected": mem_c, "sram_ecc_corrected": 0}


def test_rise_in_dram_or_sram_is_reported() -> None:
    prev = snap(dev(0), dev(1), dev(2))
    cur = snap(dev(0), dev(1, mem_u=1), dev(2, sram_u=2))
    assert new_uncorrected(prev, cur) == [1, 2]


def test_unchanged_nonzero_count_is_not_reported_again() -> None:
    prev = snap(dev(0, mem_u=3))
    assert new_uncorrected(prev, snap(dev(0, mem_u=3))) == []
    assert new_uncorrected(prev, snap(dev(0, mem_u=4))) == [0]


def test_corrected_errors_are_not_alerts() -> None:
    assert new_uncorrected(snap(dev(0)), snap(dev(0, mem_c=10))) == []


def test_first_report_counts_from_zero() -> None:
    assert new_uncorrected(None, snap(dev(0), dev(5, sram_u=1))) == [5]


def test_device_new_in_this_report_counts_from_zero() -> None:
    assert new_uncorrected(snap(dev(0)), snap(dev(0), dev(1, mem_u=1))) == [1]


def test_counter_reset_is_not_an_event() -> None:
    assert new_uncorrected(snap(dev(0, mem_u=5)), snap(dev(0, mem_u=0))) == []


def test_reports_without_ecc() -> None:
    empty = Snapshot(schema.Report(), 0.0)
    assert new_uncorrected(empty, empty) == []
    assert new_uncorrected(None, empty) == []
    assert new_uncorrected(snap(dev(0, mem_u=1)), empty) == []


def test_bad_counts_are_ignored() -> None:
    report = msgspec.convert({"system_data": {"neuron_hw_counters": {"neuron_devices": [
        {"neuron_device_index": 0, "mem_ecc_uncorrected": -4}, None,
        {"neuron_device_index": -1, "mem_ecc_uncorrected": 9}]}}}, schema.Report)
    assert new_uncorrected(None, Snapshot(report, 0.0)) == []

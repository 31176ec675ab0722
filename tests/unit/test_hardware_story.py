"""The hardware layout comes from ``neuron_hardware_info``, else from the instance type, else it is "layout
unknown"; a report with no device is "not visible" (a container without /dev/neuron*), not "no driver"."""

from __future__ import annotations

import json

from neuron_top.decode import decode_report
from neuron_top.output.text import SourceInfo, header_lines
from neuron_top.snapshot import Snapshot
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "neuron-monitor"


def _snap(doc: dict) -> Snapshot:
    report, problems = decode_report(json.dumps(doc).encode())
    return Snapshot(report, 0.0, 1, problems)


def _inf1() -> dict:
    return json.loads((FIXTURES / "inf1_xlarge_4runtimes_vcpu_errors.json").read_text())


def _header(snap: Snapshot) -> str:
    return "\n".join(header_lines(snap, SourceInfo("test", "live")))


def test_layout_from_hardware_info() -> None:
    snap = _snap(_inf1())
    assert (snap.layout_source, snap.device_count, snap.cores_per_device) == ("neuron_hardware_info", 1, 4)
    assert "layout" not in _header(snap)


def test_without_hardware_info_the_instance_type_gives_the_layout() -> None:
    doc = _inf1()
    del doc["neuron_hardware_info"]
    snap = _snap(doc)
    assert (snap.layout_source, snap.device_count, snap.cores_per_device) == ("instance type", 1, 4)
    assert snap.layout_text() == "1x neuron · 4 NeuronCores (layout of inf1.xlarge)"
    assert "hardware: 1x neuron device, 4 NeuronCore per device (layout of inf1.xlarge)" in _header(snap)


def test_unknown_instance_type_is_layout_unknown() -> None:
    doc = _inf1()
    del doc["neuron_hardware_info"]
    doc["instance_info"]["instance_type"] = "x9.metal"
    snap = _snap(doc)
    assert snap.layout_source == ""
    assert snap.layout_text() == "layout unknown · 4 NeuronCores reported"
    assert "layout unknown" in _header(snap)


def test_zero_devices_is_not_visible_not_driver_missing() -> None:
    doc = json.loads((FIXTURES / "inf1_xlarge_idle_no_runtimes.json").read_text())
    doc["neuron_hardware_info"] = {"neuron_device_count": 0, "neuroncore_per_device_count": 4, "error": ""}
    doc["system_data"]["neuron_hw_counters"] = {"neuron_devices": None, "error": ""}
    snap = _snap(doc)
    assert not snap.has_neuron and snap.device_count == 0
    assert snap.no_devices == "no Neuron devices visible (container without /dev/neuron*?)"
    assert "hardware: no Neuron devices visible (container without /dev/neuron*?)" in _header(snap)
    assert "driver" not in _header(snap)
    del doc["neuron_hardware_info"]  # and without hardware info: the instance type does not invent a device
    snap = _snap(doc)
    assert snap.device_count == 0 and "visible" in snap.no_devices


def test_the_collector_s_own_reason_is_kept() -> None:
    snap = _snap({"neuron_hardware_info": {"error": "neuron driver not found (no /sys/devices/virtual/neuron_device)"},
                  "system_data": {}})
    assert snap.no_devices.startswith("neuron driver not found")

"""The decoder: every real report decodes; bad input gives a one-line message, never an exception."""

from __future__ import annotations

import contextlib
import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_top import schema
from neuron_top.decode import NOT_A_REPORT, DecodeError, decode_report, has_report_group
from tests.conftest import DATA, REPORTS

JSON_FIXTURES = [
    "wandb_trn1_2xlarge_0.json", "wandb_trn1_2xlarge_1.json", "wandb_trn1_2xlarge_2.json",
    "inf1_xlarge_single_runtime.json", "inf1_xlarge_idle_no_runtimes.json", "inf1_xlarge_4runtimes_vcpu_errors.json",
    "trn1n_32xlarge_cwagent_test_2024_line.json", "trn1n_32xlarge_32runtimes_cwagent_test.json",
    "trn1_2xlarge_first_record_no_runtime_allsmi.json", "inf2_xlarge_rt2.30.51_trimmed_pantheon.json",
]


@pytest.mark.parametrize("name", JSON_FIXTURES)
def test_every_real_report_decodes(name: str) -> None:
    data = (REPORTS / name).read_bytes()
    report, problems = decode_report(data)
    assert problems == ()
    assert isinstance(report, schema.Report)
    assert report.neuron_runtime_data is not None
    # round trip: what we decoded carries every runtime of the original
    assert len(report.neuron_runtime_data) == len(json.loads(data)["neuron_runtime_data"])


def test_stream_fixture_decodes_line_by_line() -> None:
    lines = (REPORTS / "wandb_trn1_2xlarge_stream.ndjson").read_bytes().splitlines()
    reports = [decode_report(line)[0] for line in lines if line.strip()]
    assert len(reports) == 3


def test_truncated_report_is_a_clear_message() -> None:
    text = (REPORTS / "issue633_inf1_container_no_devices_TRUNCATED.txt").read_bytes()
    body = next(line for line in text.splitlines() if line.startswith(b"{"))
    with pytest.raises(DecodeError, match="truncated report"):
        decode_report(body)


def test_null_devices_and_missing_groups() -> None:
    report, problems = decode_report(b'{"system_data":{"neuron_hw_counters":{"neuron_devices":null}}}')
    assert problems == ()
    assert report.system_data.neuron_hw_counters.neuron_devices is None
    assert report.instance_info is None


def test_newer_fields() -> None:
    report, _ = decode_report((DATA / "trn2_small.json").read_bytes())
    hw = report.neuron_hardware_info
    assert (hw.logical_neuroncore_config, hw.neuron_device_version, hw.neuroncore_version) == (2, "v4", "v3d")
    core0 = report.neuron_runtime_data[0].report.neuroncore_counters.neuroncores_in_use["0"]
    assert core0.effective_flops == 1.1e12
    assert core0.v3d["nc_v3.1"].neuroncore_utilization == 93.0
    assert report.neuron_k8s_info.neuroncores_k8s_info["0"].pod_name == "train-0"
    models, err = schema.decode_models(report.neuron_runtime_data[0].report.memory_used.loaded_models)
    sg = models[0].subgraphs["sg_00"]
    assert err is None
    assert sg["v2"] == "nc_v2.0"


def test_bad_models_cost_only_the_models() -> None:
    report, _problems = decode_report(b'{"neuron_runtime_data":[{"pid":1,"report":{"memory_used":{'
                                     b'"neuron_runtime_used_bytes":{"host":5},"loaded_models":[{"model_id":"x"}]}}}]}')
    from neuron_top.snapshot import Snapshot

    app = Snapshot(report, 0.0).apps[0]
    assert app.used_bytes == (5, 0) and app.models == ()
    assert any("loaded_models" in g.error for g in app.group_statuses())


def test_unknown_fields_are_ignored() -> None:
    report, problems = decode_report(b'{"future_group":{"x":1},"instance_info":{"instance_id":"i-1","new":[1]}}')
    assert report.instance_info.instance_id == "i-1"
    assert problems == ()


def test_wrong_shape_costs_only_that_group() -> None:
    data = b"""{"system_data": {"vcpu_usage": {"usage_data": [1, 2]},
                "memory_info": {"memory_total_bytes": 10, "memory_used_bytes": 5}},
               "neuron_runtime_data": [{"pid": "x"}, {"pid": 5, "report": {"neuroncore_counters": 7,
                  "memory_used": {"neuron_runtime_used_bytes": {"host": 1}}}}]}"""
    report, problems = decode_report(data)
    assert report.system_data.memory_info.memory_total_bytes == 10
    assert report.system_data.vcpu_usage.error.startswith("invalid data")
    assert [rt.pid for rt in report.neuron_runtime_data] == [5]
    rt = report.neuron_runtime_data[0].report
    assert rt.neuroncore_counters.error.startswith("invalid data")
    assert rt.memory_used.neuron_runtime_used_bytes.host == 1
    assert len(problems) == 3


@pytest.mark.parametrize("data", [b"", b"[]", b"42", b'"x"', b"{", b"not json", b"\xff\xfe", b"null"])
def test_not_a_report(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_report(data)


@pytest.mark.parametrize("data", [b'"\x80"', b'["ok", "\xff"]'])
def test_bytes_that_are_not_utf8_outside_an_object_are_not_a_report(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_report(data)


def test_bytes_that_are_not_utf8_in_a_tag_are_replaced_and_the_report_kept() -> None:
    """msgspec raises UnicodeDecodeError (not a DecodeError) for them, on both paths: that reached the collector
    as an unexpected exception and stopped the source. Now the report decodes with U+FFFD in their place."""
    data = (b'{"neuron_runtime_data": [{"pid": 3, "neuron_runtime_tag": "train\x80\xfe", "report": {}}],'
            b' "instance_info": {"instance_id": "i-\xc3"}}')
    report, problems = decode_report(data)
    assert report.neuron_runtime_data[0].neuron_runtime_tag == "train\ufffd\ufffd"
    assert report.instance_info.instance_id == "i-\ufffd"
    assert problems == ("bytes that are not UTF-8 were replaced",)


def test_absurd_numbers() -> None:
    report, _ = decode_report(b'{"system_data":{"memory_info":{"memory_total_bytes":1e400, "memory_used_bytes":'
                              b'99999999999999999999999999}}}')
    assert report.system_data is not None  # decoded or replaced by an error group, never raised


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_bytes_never_raise_anything_but_decode_error(data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode_report(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
group_names = st.sampled_from(["neuron_runtime_data", "system_data", "instance_info", "neuron_hardware_info",
                               "neuron_k8s_info", "report", "neuroncore_counters", "vcpu_usage", "usage_data",
                               "neuron_devices", "memory_used", "loaded_models", "subgraphs", "pid"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(group_names, json_values | st.dictionaries(group_names, json_values, max_size=4), max_size=5))
def test_fuzz_wrong_shapes_decode_or_fail_cleanly(doc: dict) -> None:
    from neuron_top.snapshot import Snapshot

    data = msgspec.json.encode(doc)
    try:
        report, _ = decode_report(data)
    except DecodeError as exc:  # only an object without any of neuron-monitor's groups is refused
        assert str(exc) == NOT_A_REPORT
        assert not has_report_group(data)
        return
    assert has_report_group(data)  # the recording index's cheap test agrees at the top level
    snap = Snapshot(report, 0.0)
    # everything the screen reads must be computable
    _ = (snap.device_count, snap.ecc, snap.vcpus, snap.group_statuses, snap.all.models, snap.all.core_memory)
    for a in snap.apps:
        _ = (a.models, a.latency("total"), a.exec_summary, a.used_bytes, a.host_breakdown)


def _k8s_doc(k8s: object, util: float = 1.0) -> bytes:
    doc: dict[str, object] = {"system_data": {"memory_info": {"memory_used_bytes": int(util)}}}
    if k8s is not ...:
        doc["neuron_k8s_info"] = k8s
    return msgspec.json.encode(doc)


def test_unchanged_k8s_info_is_reused_and_changed_k8s_info_is_not() -> None:
    pod = {"neurondevices_k8s_info": {"0": {"pod_name": "a", "namespace": "ml"}}}
    moved = {"neurondevices_k8s_info": {"0": {"pod_name": "b", "namespace": "ml"}}}
    first, _ = decode_report(_k8s_doc(pod, 1))
    again, _ = decode_report(_k8s_doc(pod, 2))
    assert again.neuron_k8s_info is first.neuron_k8s_info  # same bytes: decoded once
    assert again.system_data.memory_info.memory_used_bytes == 2  # the rest is this report's
    assert decode_report(_k8s_doc(moved))[0].neuron_k8s_info.neurondevices_k8s_info["0"].pod_name == "b"
    assert decode_report(_k8s_doc(...))[0].neuron_k8s_info is None
    assert decode_report(_k8s_doc(None))[0].neuron_k8s_info is None
    assert decode_report(_k8s_doc(pod))[0].neuron_k8s_info.neurondevices_k8s_info["0"].pod_name == "a"
    assert decode_report(_k8s_doc(pod).decode())[0].neuron_k8s_info.neurondevices_k8s_info["0"].pod_name == "a"


def test_bad_k8s_info_after_good_is_an_error_group_and_not_remembered() -> None:
    pod = {"neurondevices_k8s_info": {"0": {"pod_name": "a"}}}
    decode_report(_k8s_doc(pod))
    report, problems = decode_report(_k8s_doc({"neurondevices_k8s_info": 5}))
    assert report.neuron_k8s_info.error.startswith("invalid data") and problems
    report, problems = decode_report(_k8s_doc({"neurondevices_k8s_info": 5}))
    assert report.neuron_k8s_info.error.startswith("invalid data") and problems
    assert decode_report(_k8s_doc(pod))[0].neuron_k8s_info.neurondevices_k8s_info["0"].pod_name == "a"


def _memory_doc(apps: dict[int, object], period: float = 1.0) -> bytes:
    return msgspec.json.encode({"neuron_runtime_data": [
        {"pid": pid, "report": {"memory_used": {"period": period, "neuron_runtime_used_bytes": used,
                                                "loaded_models": [{"name": f"m{pid}"}]}}}
        for pid, used in apps.items()]})


def test_an_app_s_unchanged_memory_is_reused_and_changed_memory_is_not() -> None:
    """Each runtime's memory in use (most of a trn2 report) is decoded only when its bytes changed since the same
    pid's last report; the decode equals a plain one, whatever is reused."""
    plain = msgspec.json.Decoder(schema.Report, strict=False)
    cores = {"0": {"tensors": 5, "constants": 7}, "1": {"tensors": 2}}
    used = {"host": 10, "neuron_device": 14, "usage_breakdown": {"host": {"tensors": 10},
                                                                 "neuroncore_memory_usage": cores}}
    grown = {**used, "neuron_device": 20}

    def memory(report: schema.Report, i: int) -> schema.UsedBytes | None:
        return report.neuron_runtime_data[i].report.memory_used.neuron_runtime_used_bytes

    first, _ = decode_report(_memory_doc({7: used, 8: used}, 1.0))
    again, problems = decode_report(_memory_doc({7: used, 8: grown}, 2.0))
    assert not problems and again == plain.decode(_memory_doc({7: used, 8: grown}, 2.0))
    assert memory(again, 0) is memory(first, 0)  # same bytes for pid 7: decoded once
    assert memory(again, 1).neuron_device == 20 and memory(again, 1) is not memory(first, 1)
    assert again.neuron_runtime_data[0].report.memory_used.period == 2.0  # the rest is this report's
    moved, _ = decode_report(_memory_doc({8: used, 7: used}))  # the pids, not the places, are compared
    assert memory(moved, 0).neuron_device == 14 and memory(moved, 0) is not memory(first, 1)
    for apps in ({7: None}, {7: grown}, {9: used}):
        doc = _memory_doc(apps)
        assert decode_report(doc)[0] == plain.decode(doc)
        assert decode_report(doc.decode())[0] == plain.decode(doc)
    bad, problems = decode_report(_memory_doc({7: {"host": "lots"}}))  # the wrong shape costs that group only
    assert bad.neuron_runtime_data[0].report.memory_used.error.startswith("invalid data") and problems
    assert decode_report(_memory_doc({7: used}))[0] == plain.decode(_memory_doc({7: used}))

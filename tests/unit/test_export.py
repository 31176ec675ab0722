"""The exposition (neuron_top.export): AWS's families against AWS's real scrapes, AWS's rules, prometheus_client's
text byte for byte, bad input, consistency under concurrent scrapes, and our own neurontop_* families."""

from __future__ import annotations

import json
import math
import re
import threading

import msgspec
import pytest
from prometheus_client.openmetrics.exposition import generate_latest as om_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families

from neuron_top.export import Exporter, ExportOptions, exposition
from neuron_top.feed import Report, SkippedInput, StatusChanged
from neuron_top.snapshot import snapshot_from
from neuron_top.sources.base import Skipped, State, Status
from neuron_top.sources.demo import generate
from tests.conftest import FIXTURES, PROMETHEUS, REPORTS
from tests.export_reference import NaiveExporter

RECONSTRUCTED = FIXTURES / "prometheus-reports"


def scrape(name: str) -> str:
    return (PROMETHEUS / name).read_text()


def families(text: str) -> dict[str, tuple[str, str, dict[frozenset, float]]]:
    """name -> (type, help, {label set: value}) as prometheus_client's parser reads the 0.0.4 text."""
    out = {}
    for fam in text_string_to_metric_families(text):
        samples = {}
        for s in fam.samples:
            samples[frozenset({**s.labels, "__name__": s.name}.items())] = s.value
        out[fam.name] = (fam.type, fam.documentation, samples)
    return out


def report(name: str) -> bytes:
    return (RECONSTRUCTED / f"{name}.report.json").read_bytes()


def feed(exp: Exporter, *docs: bytes | dict, ts: float = 1000.0) -> None:
    for i, d in enumerate(docs, 1):
        data = d if isinstance(d, bytes) else json.dumps(d).encode()
        exp.apply_snapshot(snapshot_from(data, ts, i))


def clock() -> float:
    return 1_700_000_000.0


# --- AWS's real scrapes ---------------------------------------------------------------------------------------
INSTANCE = {"instance_name", "instance_id", "instance_type", "availability_zone", "region", "subnet_id"}
REFERENCE_TABLE = {
    # name (as prometheus_client's parser names the family): (type, extra label names), from the table of
    # /work/shared/reference/prometheus-metrics.md
    "neuroncore_utilization_ratio": ("gauge", {"runtime_tag", "neuroncore"}),
    "neuron_runtime_vcpu_usage_ratio": ("gauge", {"runtime_tag", "usage_type"}),
    "neuron_runtime_memory_used_bytes": ("gauge", {"runtime_tag", "memory_location"}),
    **{f"neuroncore_memory_usage_{c}": ("gauge", {"runtime_tag", "neuroncore", "memory_location"})
       for c in ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")},
    "execution_errors": ("counter", {"runtime_tag", "error_type"}),
    "execution_errors_created": ("gauge", {"runtime_tag", "error_type"}),
    "execution_status": ("counter", {"runtime_tag", "status_type"}),
    "execution_status_created": ("gauge", {"runtime_tag", "status_type"}),
    "execution_latency_seconds": ("gauge", {"runtime_tag", "percentile"}),
    "hardware_ecc_events": ("counter", {"event_type", "neuron_device_index"}),
    "hardware_ecc_events_created": ("gauge", {"event_type", "neuron_device_index"}),
    "system_vcpu_count": ("gauge", set()),
    "system_vcpu_usage_ratio": ("gauge", {"usage_type"}),
    **{f"system_{m}_bytes": ("gauge", set()) for m in ("memory_total", "memory_used", "swap_total", "swap_used")},
    "instance_info": ("gauge", set()),
    "neuron_hardware_info": ("gauge", {"neuron_device_count", "neuroncore_per_device_count",
                                       "neuron_device_memory_size"}),
}
REFERENCE_VALUES = {
    "error_type": {"generic", "numerical", "transient", "model", "runtime", "hardware"},
    "status_type": {"completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input",
                    "failed_to_queue"},
    "percentile": {"p0", "p1", "p25", "p50", "p75", "p99", "p100"},
    "event_type": {"mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected"},
    "usage_type": {"user", "system"},
    "memory_location": {"host", "neuron_device", "None"},
}


def test_the_real_scrape_holds_every_family_type_and_label_of_the_reference_table() -> None:
    """What makes the family-by-family comparison below complete: AWS's real inf1 scrape has every family of the
    reference table, with its type, its label names and every label value the table lists, so a family, label
    or value we got wrong cannot go unnoticed there."""
    theirs = families(scrape("inf1_xlarge_4runtimes_datadog.txt"))
    seen: dict[str, set[str]] = {}
    for name, (typ, labels) in REFERENCE_TABLE.items():
        assert name in theirs, name
        assert theirs[name][0] == typ, name
        for sample in theirs[name][2]:
            keys = dict(sample)
            assert set(keys) - {"__name__"} == INSTANCE | labels, name
            for k in labels & set(REFERENCE_VALUES):
                seen.setdefault(k, set()).add(keys[k])
    assert seen == REFERENCE_VALUES
    aws = {n for n in theirs if not n.startswith(("process_", "python_"))}
    assert aws == set(REFERENCE_TABLE)  # and nothing outside the table


def test_full_inf1_scrape_matches_family_by_family() -> None:
    """Every family of AWS's real inf1.xlarge scrape (4 runtimes, 33 families, 255 samples): same name, type,
    HELP, label sets and values; the only families we add are neurontop_*."""
    theirs = families(scrape("inf1_xlarge_4runtimes_datadog.txt"))
    exp = Exporter(ExportOptions(), clock=clock)
    feed(exp, report("inf1_xlarge_4runtimes_datadog"))
    ours = families(exp.render().decode())
    assert len(theirs) == 33
    for name, (typ, help, samples) in theirs.items():
        assert name in ours, name
        otyp, ohelp, osamples = ours[name]
        assert (otyp, ohelp) == (typ, help), name
        if name.startswith(("process_", "python_")):
            # this process's own numbers; the label names must agree (python_info's values are our Python's)
            assert {frozenset(k for k, _ in ls) for ls in osamples} == {frozenset(k for k, _ in ls) for ls in samples}
            continue
        assert set(osamples) == set(samples), name
        if name.endswith("_created"):
            continue  # when each series was first seen
        for labels, value in samples.items():
            assert math.isclose(osamples[labels], value, rel_tol=1e-12, abs_tol=1e-300), (name, dict(labels))
    extra = set(ours) - set(theirs)
    assert extra and all(n.startswith("neurontop_") for n in extra), extra


def test_trimmed_trn1n_scrape_is_contained() -> None:
    """The trn1n.32xlarge scrape its publisher cut to one sample per family: each sample is in ours, equal."""
    theirs = families(scrape("trn1n_32xlarge_trimmed_otel_awscontainerinsight.txt"))
    ours = families(exposition([report("trn1n_32xlarge_trimmed_otel_awscontainerinsight")],
                               options=ExportOptions(process_metrics=True), clock=clock))
    for name, (typ, help, samples) in theirs.items():
        assert ours[name][:2] == (typ, help), name
        if name.startswith(("process_", "python_")) or name.endswith("_created"):
            continue
        for labels, value in samples.items():
            assert math.isclose(ours[name][2][labels], value, rel_tol=1e-12), (name, dict(labels))


def test_python_info_only_scrape_parses_like_ours() -> None:
    """The smallest real scrape (python_info only): our python_info family has its type, HELP and label names."""
    theirs = families(scrape("python_info_only_datadog_rename_labels.txt"))
    ours = families(exposition([], options=ExportOptions(process_metrics=True)))
    t, h, s = theirs["python_info"]
    assert ours["python_info"][:2] == (t, h)
    assert {k for ls in ours["python_info"][2] for k, _ in ls} == {k for ls in s for k, _ in ls}


# --- prometheus_client's text, byte for byte ------------------------------------------------------------------
def _blocks(text: str) -> dict[str, str]:
    """Family blocks by name, without empty ones, _created values zeroed and the OpenMetrics EOF dropped."""
    text = re.sub(r"(_created(?:\{[^}]*\})?) \S+", r"\1 0", text).replace("# EOF\n", "")
    out: dict[str, str] = {}
    for block in re.split(r"(?m)^(?=# HELP )", text):
        if block and any(not line.startswith("#") for line in block.splitlines()):
            out[block.split()[2]] = block
    return out


def _aws_only(text: str) -> dict[str, str]:
    return {k: v for k, v in _blocks(text).items() if not k.startswith("neurontop_")}


@pytest.mark.parametrize("openmetrics", [False, True])
def test_text_is_what_prometheus_client_writes(openmetrics: bool) -> None:
    """Demo reports (7 runtimes, 16 devices) and a real 32-runtime trn1n report through ours and through the naive
    prometheus_client exporter: the same bytes, family by family, in both formats."""
    docs = [*generate("trn2.48xlarge", 3, 5), *generate("inf1.xlarge", 4, 3)[:1]]
    naive = NaiveExporter()
    exp = Exporter(ExportOptions(process_metrics=False), clock=clock)
    for i, d in enumerate(docs):
        snap = snapshot_from(d, 1000.0 + i, i)
        naive.apply(snap.report)
        exp.apply_snapshot(snap)
    theirs = (om_latest(naive.registry) if openmetrics else
              __import__("prometheus_client").generate_latest(naive.registry)).decode()
    ours = exp.render(openmetrics).decode()
    assert _aws_only(ours) == _blocks(theirs)
    if openmetrics:
        assert ours.endswith("# EOF\n") and ours.count("# EOF") == 1
        list(om_parse(ours))  # the OpenMetrics parser accepts the whole text, ours included


def test_real_32_runtime_report_matches_prometheus_client() -> None:
    snap = snapshot_from((REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json").read_bytes(), 1000.0, 1)
    naive = NaiveExporter()
    naive.apply(snap.report)
    exp = Exporter(ExportOptions(process_metrics=False), clock=clock)
    exp.apply_snapshot(snap)
    from prometheus_client import generate_latest

    assert _aws_only(exp.render().decode()) == _blocks(generate_latest(naive.registry).decode())
    assert exp.series() > 2000


# --- AWS's rules ----------------------------------------------------------------------------------------------
def _runtime(tag: str, util: float = 50.0, errors: int = 0, completed: int = 3, **groups: object) -> dict:
    rep = {
        "neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": util},
                                                       "1": {"neuroncore_utilization": 0.0}}, "error": ""},
        "execution_stats": {"error_summary": {"generic": errors}, "execution_summary": {"completed": completed},
                            "latency_stats": {"total_latency": {"p50": 0.01}, "device_latency": {"p50": 0.004}},
                            "error": ""},
        "memory_used": {"neuron_runtime_used_bytes": {"host": 10, "neuron_device": 20, "usage_breakdown": {
            "neuroncore_memory_usage": {"0": dict.fromkeys(("constants", "model_code", "model_shared_scratchpad",
                                                            "runtime_memory", "tensors"), 5),
                                        "1": dict.fromkeys(("constants", "model_code", "model_shared_scratchpad",
                                                            "runtime_memory", "tensors"), 0)}}}, "error": ""},
        "neuron_runtime_vcpu_usage": {"vcpu_usage": {"user": 10.0, "system": 5.0}, "error": ""},
    }
    rep.update(groups)  # type: ignore[arg-type]
    return {"pid": int(tag) if tag.isdigit() else 1, "neuron_runtime_tag": tag, "error": "", "report": rep}


def _report(*runtimes: dict, ecc: int = 0, **top: object) -> dict:
    r = {
        "neuron_runtime_data": list(runtimes),
        "system_data": {
            "neuron_hw_counters": {"neuron_devices": [{"neuron_device_index": 0, "mem_ecc_corrected": 0,
                                                       "mem_ecc_uncorrected": ecc, "sram_ecc_corrected": 0,
                                                       "sram_ecc_uncorrected": 0}], "error": ""},
            "memory_info": {"memory_total_bytes": 100, "memory_used_bytes": 50, "swap_total_bytes": 0,
                            "swap_used_bytes": 0, "error": ""},
            "vcpu_usage": {"average_usage": {"user": 60.0, "nice": 50.0, "system": 1.0, "io_wait": 1.0, "irq": 0.0,
                                             "soft_irq": 0.0, "idle": 0.0}, "usage_data": {"0": {}, "1": {}},
                           "error": ""},
        },
        "instance_info": {"instance_name": "n", "instance_id": "i-1", "instance_type": "trn1.2xlarge",
                          "instance_availability_zone": "az", "instance_region": "r", "subnet_id": "s", "error": ""},
        "neuron_hardware_info": {"neuron_device_count": 1, "neuroncore_per_device_count": 2,
                                 "neuron_device_memory_size": 1000, "error": ""},
    }
    r.update(top)
    return r


def value(exp: Exporter, name: str, **labels: str) -> float | None:
    for fam in text_string_to_metric_families(exp.render().decode()):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def names(exp: Exporter) -> set[str]:
    return {s.name for fam in text_string_to_metric_families(exp.render().decode()) for s in fam.samples}


def test_counters_grow_by_each_reports_counts_and_keep_created() -> None:
    exp = Exporter(ExportOptions(process_metrics=False), clock=clock)
    feed(exp, _report(_runtime("7", errors=2, completed=3), ecc=1))
    created = value(exp, "execution_status_created", runtime_tag="7", status_type="completed")
    feed(exp, _report(_runtime("7", errors=0, completed=4), ecc=2))
    assert value(exp, "execution_status_total", runtime_tag="7", status_type="completed") == 7.0
    assert value(exp, "execution_errors_total", runtime_tag="7", error_type="generic") == 2.0
    assert value(exp, "hardware_ecc_events_total", event_type="mem_ecc_uncorrected", neuron_device_index="0") == 3.0
    assert value(exp, "execution_status_created", runtime_tag="7", status_type="completed") == created == clock()


def test_group_with_an_error_has_no_sample_not_its_last_value() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7", util=40.0)))
    bad = _runtime("7", util=90.0, neuroncore_counters={"neuroncores_in_use": {"0": {"neuroncore_utilization": 90.0}},
                                                        "error": "ioctl failed"})
    feed(exp, _report(bad))
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="7", neuroncore="0") is None  # failed: no sample
    assert value(exp, "neurontop_neuroncore_utilization_ratio", neuroncore="0") is None
    assert value(exp, "neurontop_metric_group_errors", group="neuroncore_counters") == 1.0
    assert value(exp, "neurontop_metric_group_errors", group="memory_used") == 0.0


def test_runtime_with_an_error_is_skipped() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7"), {**_runtime("8"), "error": "connection refused"}))
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="8") is None
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="7", neuroncore="0") == 0.5
    assert value(exp, "neurontop_metric_group_errors", group="runtime") == 1.0


def test_system_group_with_an_error_is_skipped() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    rep = _report(_runtime("7"))
    rep["system_data"]["memory_info"] = {"memory_total_bytes": 1, "error": "no /proc/meminfo"}
    feed(exp, rep)
    assert "system_memory_total_bytes" not in names(exp)
    assert value(exp, "system_vcpu_count") == 2.0
    assert value(exp, "system_vcpu_usage_ratio", usage_type="user") == 1.0  # user + nice, capped at 100%
    assert value(exp, "system_vcpu_usage_ratio", usage_type="system") == 0.02


def test_empty_runtime_list_clears_runtime_series_but_not_ecc() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7"), ecc=1))
    for empty in ([], None):
        feed(exp, _report(neuron_runtime_data=empty))
        got = names(exp)
        assert not {n for n in got if n.startswith(("neuroncore_", "execution_", "neuron_runtime_"))}
        assert {"instance_info", "neuron_hardware_info", "system_vcpu_count"} <= got
    assert value(exp, "hardware_ecc_events_total", event_type="mem_ecc_uncorrected") == 1.0


def test_runtime_that_is_gone_is_dropped_and_a_new_one_starts_from_zero() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7"), _runtime("8")))
    feed(exp, _report(_runtime("8")))
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="7") is None
    assert value(exp, "execution_status_total", runtime_tag="7") is None
    assert value(exp, "execution_status_total", runtime_tag="8", status_type="completed") == 6.0
    feed(exp, _report(_runtime("7"), _runtime("8")))
    assert value(exp, "execution_status_total", runtime_tag="7", status_type="completed") == 3.0


def test_null_latency_has_no_sample_not_the_last_values() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7")))
    assert value(exp, "execution_latency_seconds", runtime_tag="7", percentile="p50") == 0.01
    idle = _runtime("7")
    idle["report"]["execution_stats"]["latency_stats"] = {"total_latency": None, "device_latency": {"p50": 0.003}}
    feed(exp, _report(idle))
    assert value(exp, "execution_latency_seconds", runtime_tag="7", percentile="p50") is None
    assert value(exp, "neurontop_execution_device_latency_seconds", runtime_tag="7", percentile="p50") == 0.003


def test_absurd_values_are_not_passed_through() -> None:
    """A broken report (negative or 1e15 utilization, petabytes, a day-long latency, 1e15 executions) must not
    reach every sum, average and alert downstream: those series are skipped, the sane ones kept."""
    rt = _runtime("7")
    rep = rt["report"]
    rep["neuroncore_counters"]["neuroncores_in_use"] = {"0": {"neuroncore_utilization": -5.0},
                                                        "1": {"neuroncore_utilization": 1e15},
                                                        "2": {"neuroncore_utilization": 42.0}}
    rep["memory_used"]["neuron_runtime_used_bytes"]["host"] = 1 << 60  # an exbibyte
    rep["execution_stats"]["execution_summary"] = {"completed": 1e15, "timed_out": 2}
    rep["execution_stats"]["latency_stats"]["total_latency"] = {"p50": -1.0, "p99": 1e15, "p100": 0.02}
    rep["neuron_runtime_vcpu_usage"]["vcpu_usage"] = {"user": -3.0, "system": 5.0}
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(rt))
    assert value(exp, "neuroncore_utilization_ratio", neuroncore="0") is None
    assert value(exp, "neuroncore_utilization_ratio", neuroncore="1") is None
    assert value(exp, "neuroncore_utilization_ratio", neuroncore="2") == 0.42
    assert value(exp, "neurontop_neuroncore_utilization_ratio", neuroncore="1") is None
    assert value(exp, "neuron_runtime_memory_used_bytes", memory_location="host") is None
    assert value(exp, "neuron_runtime_memory_used_bytes", memory_location="neuron_device") == 20.0
    assert value(exp, "execution_status_total", status_type="completed") is None
    assert value(exp, "execution_status_total", status_type="timed_out") == 2.0
    assert value(exp, "execution_latency_seconds", percentile="p50") is None
    assert value(exp, "execution_latency_seconds", percentile="p99") is None
    assert value(exp, "execution_latency_seconds", percentile="p100") == 0.02
    assert value(exp, "neuron_runtime_vcpu_usage_ratio", usage_type="user") is None
    assert value(exp, "neuron_runtime_vcpu_usage_ratio", usage_type="system") == 0.05


def test_containerised_monitor_vcpu_errors_are_not_metric_group_errors() -> None:
    """The real 4-runtime report: each runtime's vCPU group says ``open /proc/<pid>/stat: no such file or
    directory`` (a monitor without hostPID). Counted apart, so NeuronMetricGroupErrors does not fire for it."""
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, (REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").read_bytes())
    assert value(exp, "neurontop_metric_group_errors", group="neuron_runtime_vcpu_usage") == 0.0
    assert value(exp, "neurontop_runtimes_pid_not_visible") == 4.0


def test_instance_and_hardware_info_come_from_the_first_report() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7")))
    later = _report(_runtime("7"))
    later["instance_info"]["instance_id"] = "i-2"
    feed(exp, later)
    assert value(exp, "instance_info", instance_id="i-1") == 1.0
    assert value(exp, "neuron_hardware_info", neuron_device_count="1", neuron_device_memory_size="1000",
                 neuroncore_per_device_count="2") == 1.0
    assert value(exp, "instance_info", instance_id="i-2") is None


def test_missing_instance_fields_are_empty_labels() -> None:
    """The built-in collector's instance_info has no zone, region or subnet: empty values, not "None"."""
    rep = _report(_runtime("7"))
    rep["instance_info"] = {"instance_name": "host1", "error": ""}
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, rep)
    text = exp.render().decode()
    assert 'instance_info{availability_zone="",instance_id="",instance_name="host1",instance_type="",region="",' \
           'subnet_id=""} 1.0' in text
    assert '"None"' not in text.replace('memory_location="None"', "")


def test_ultraserver_id_joins_the_instance_labels() -> None:
    rep = _report(_runtime("7"))
    rep["instance_info"]["ultraserver_id"] = "us-1"
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, rep)
    assert value(exp, "neuroncore_utilization_ratio", ultraserver_id="us-1", neuroncore="0") == 0.5


# --- more truth ---------------------------------------------------------------------------------------------
def test_used_cores_only_drops_the_zero_rows() -> None:
    plain, used = Exporter(ExportOptions(process_metrics=False)), Exporter(ExportOptions(used_cores_only=True,
                                                                                          process_metrics=False))
    for exp in (plain, used):
        feed(exp, _report(_runtime("7")))
    assert value(plain, "neuroncore_utilization_ratio", neuroncore="1") == 0.0
    assert value(used, "neuroncore_utilization_ratio", neuroncore="1") is None
    assert value(used, "neuroncore_memory_usage_tensors", neuroncore="1") is None
    assert value(used, "neuroncore_utilization_ratio", neuroncore="0") == 0.5


def test_true_per_core_utilisation_and_device_memory() -> None:
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime("7", util=30.0), _runtime("8", util=50.0)))
    # the summed share (derived.core_utilization): two runtimes time-slice one core
    assert value(exp, "neurontop_neuroncore_utilization_ratio", neuroncore="0") == 0.8
    assert value(exp, "neurontop_device_memory_used_bytes", neuron_device_index="0") == 50.0  # 2 runtimes x 5 x 5
    assert value(exp, "neurontop_device_memory_total_bytes", neuron_device_index="0") == 1000.0
    assert value(exp, "neurontop_runtimes") == 2.0


def test_source_health_families() -> None:
    now = [5000.0]
    exp = Exporter(ExportOptions(process_metrics=False), clock=lambda: now[0], source="neuron-monitor")
    assert value(exp, "neurontop_source_up") == 0.0
    assert value(exp, "neurontop_last_report_age_seconds") is None
    exp.apply(StatusChanged(Status(State.LIVE, "started")))
    feed(exp, _report(_runtime("7")), ts=4990.0)
    assert value(exp, "neurontop_source_up") == 1.0
    assert value(exp, "neurontop_last_report_age_seconds") == 10.0
    now[0] = 5100.0
    assert value(exp, "neurontop_last_report_age_seconds") == 110.0
    exp.apply(SkippedInput(Skipped("malformed JSON"), 3))
    exp.apply(StatusChanged(Status(State.RESTARTING, "neuron-monitor exited")))
    exp.apply(StatusChanged(Status(State.RESTARTING, "still restarting")))
    assert value(exp, "neurontop_source_up") == 0.0
    assert value(exp, "neurontop_source_restarts_total") == 1.0
    assert value(exp, "neurontop_input_skipped_total") == 3.0
    assert value(exp, "neurontop_reports_total") == 1.0
    assert value(exp, "neurontop_source_info", source="neuron-monitor", state="restarting") == 1.0


def test_source_state_is_stale_by_the_dashboards_rule_and_the_same_word() -> None:
    """The exporter said ``state="live"`` for a neuron-monitor that had stopped reporting while the dashboard on the
    same feed said STALE: both now keep one ``Pace`` (three of the reports' own periods, at least 3 s)."""
    from neuron_top.session import Session

    now = [5000.0]
    exp = Exporter(ExportOptions(process_metrics=False), clock=lambda: now[0], source="neuron-monitor")
    session = Session("neuron-monitor", clock=lambda: now[0])
    for e in (StatusChanged(Status(State.LIVE, "started")),):
        exp.apply(e)
        session.apply(e)
    for i in range(4):  # one report a second, each saying period 1.0
        now[0] = 5000.0 + i
        rt = _runtime("7")
        rt["report"]["execution_stats"]["period"] = 1.0
        doc = json.dumps(_report(rt)).encode()
        snap = snapshot_from(doc, now[0], i + 1)
        exp.apply(Report(snap, doc))
        session.apply(Report(snap, doc))
    assert snap.period() == 1.0
    for at, word in ((5005.9, "live"), (5006.1, "stale")):
        now[0] = at
        assert session.shown(at).state == word
        assert value(exp, "neurontop_source_info", source="neuron-monitor", state=word) == 1.0, at


# --- bad input ------------------------------------------------------------------------------------------------
def test_wrong_types_and_nulls_update_what_they_can() -> None:
    rt = _runtime("7")
    rt["report"]["neuroncore_counters"]["neuroncores_in_use"] = {"0": {"neuroncore_utilization": None},
                                                                 "1": None, "x": {"neuroncore_utilization": 5},
                                                                 "2": {"neuroncore_utilization": 25.0}}
    rt["report"]["execution_stats"]["execution_summary"] = {"completed": -4, "timed_out": None, "failed_to_queue": 2}
    rt["report"]["memory_used"] = "not an object"
    rep = _report(rt, None, {"neuron_runtime_tag": "9", "report": None})
    rep["system_data"]["vcpu_usage"]["average_usage"] = {"user": "busy"}
    rep["system_data"]["neuron_hw_counters"]["neuron_devices"].append({"neuron_device_index": None})
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, rep)
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="7", neuroncore="2") == 0.25
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag="7", neuroncore="0") is None
    assert value(exp, "execution_status_total", status_type="failed_to_queue") == 2.0
    assert value(exp, "execution_status_total", status_type="completed") is None
    assert value(exp, "neurontop_metric_group_errors", group="memory_used") == 1.0  # the decoder's note
    assert value(exp, "system_memory_used_bytes") == 50.0


def test_labels_from_the_data_are_escaped() -> None:
    tag = 'a"b\\c\nd} x="1'
    exp = Exporter(ExportOptions(process_metrics=False))
    feed(exp, _report(_runtime(tag)))
    text = exp.render().decode()
    assert 'runtime_tag="a\\"b\\\\c\\nd} x=\\"1"' in text
    assert value(exp, "neuroncore_utilization_ratio", runtime_tag=tag, neuroncore="0") == 0.5
    list(om_parse(exp.render(openmetrics=True).decode()))


def test_a_scrape_during_updates_sees_whole_reports() -> None:
    """A writer alternates two reports whose every value differs (all 10s, all 90s); each concurrent scrape must
    show one of them entirely."""
    exp = Exporter(ExportOptions(process_metrics=False))
    docs = [json.dumps(_report(_runtime("7", util=u), _runtime("8", util=u))).encode() for u in (10.0, 90.0)]
    snaps = [snapshot_from(d, 1.0, 1) for d in docs]
    exp.apply_snapshot(snaps[0])
    stop = threading.Event()

    def write() -> None:
        i = 0
        while not stop.is_set():
            exp.apply_snapshot(snaps[i % 2])
            i += 1

    t = threading.Thread(target=write)
    t.start()
    try:
        for _ in range(200):
            utils = {float(line.rsplit(" ", 1)[1]) for line in exp.render().decode().splitlines()
                     if line.startswith("neuroncore_utilization_ratio{") and 'neuroncore="0"' in line}
            assert utils in ({0.1}, {0.9})
    finally:
        stop.set()
        t.join()


def test_exposition_library_function_for_many_hosts() -> None:
    """The fleet view's use: one exposition per host from recorded reports, hosts told apart by instance_id."""
    base = msgspec.json.decode(generate("trn2.48xlarge", 1, 1)[0])
    texts = []
    for host in range(3):
        base["instance_info"]["instance_id"] = f"i-{host:04d}"
        texts.append(exposition([msgspec.json.encode(base)], clock=clock))
    for host, text in enumerate(texts):
        fams = families(text)
        ids = {dict(ls)["instance_id"] for ls in fams["neuroncore_utilization_ratio"][2]}
        assert ids == {f"i-{host:04d}"}
    assert "process_cpu_seconds_total" not in texts[0]

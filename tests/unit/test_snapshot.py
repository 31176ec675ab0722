"""Snapshots: apps keyed by pid, cores located on devices, aggregates, untrusted strings made printable."""

from __future__ import annotations

import msgspec
import pytest

from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot
from neuron_top.textsafe import clean
from tests.conftest import DATA, REPORTS, load_snapshot


def small() -> Snapshot:
    return load_snapshot(DATA / "trn2_small.json", ts=100.0)


def test_apps_keyed_by_pid_with_printable_labels() -> None:
    s = small()
    assert [a.pid for a in s.apps] == [4242, 5151]
    assert s.apps[0].label == "[red]boom"  # literal; markup safety is the renderer's job
    assert s.app(5151).tag == "serve"
    assert s.app(999) is s.all and s.app(None) is s.all


def test_duplicate_tags_are_disambiguated_by_pid() -> None:
    s = load_snapshot(REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json")
    assert len(s.apps) == 4
    assert len({a.label for a in s.apps}) == 4
    assert all(a.label.startswith("1:") for a in s.apps)


def test_core_location_and_counts() -> None:
    s = small()
    assert (s.device_count, s.cores_per_device, s.core_count) == (2, 4, 8)
    assert s.core_location(4) == (1, 0)
    assert s.core_location(3) == (0, 3)


def test_all_apps_aggregate() -> None:
    s = small()
    assert set(s.all.cores) == {0, 1, 4}
    assert s.all.used_bytes == (1073741824 + 1048576, 3221225472 + 1048576)
    assert s.all.exec_summary["completed"] == 120
    assert s.all.error_summary["numerical"] == 2
    assert s.all.latency("total") is None  # percentiles do not add up


def test_idle_latency_is_none_not_zero() -> None:
    s = small()
    assert s.app(5151).latency("total") is None
    assert s.app(4242).latency("device")["p99"] == 0.018


def test_latency_is_made_once_per_kind() -> None:
    """History, the latency panel and its idle test all ask for it every report."""
    a = small().app(4242)
    assert a.latency("total") is a.latency("total")
    assert a.latency("device") is not a.latency("total") and a.latency("device")["p99"] == 0.018


def test_models_subgraphs_and_extra_fields() -> None:
    m = small().app(4242).models[0]
    assert m.model_id == 10001 and m.cores(4) == (0,)
    assert "\x1b" not in m.name and "\\x1b" in m.name
    assert ("v2", "nc_v2.0") in m.subgraphs[0].extra


def test_subgraph_core_is_local_to_its_device() -> None:
    s = load_snapshot(REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json")
    app = next(a for a in s.apps if a.tag == "541")  # its memory is on global core 3 = ND1 NC1
    assert {c for m in app.models for c in m.cores(s.cores_per_device)} == {3}
    assert set(k for k, v in app.core_memory.items() if sum(v.values())) == {3}


def test_ecc_and_group_errors() -> None:
    s = small()
    assert [e.uncorrected for e in s.ecc] == [0, 1]
    wheres = [g.where for g in s.group_statuses]
    assert "serve.neuron_runtime_vcpu_usage" in wheres


def test_k8s_maps() -> None:
    s = small()
    assert s.k8s_cores[0].pod_name == "train-0"
    assert 1 not in s.k8s_cores


def test_32_runtimes_merge_cores_without_double_counting() -> None:
    s = load_snapshot(REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json")
    assert len(s.apps) == 32
    assert s.device_count == 16 and s.core_count == 32
    for i, c in s.all.cores.items():
        assert 0 <= c.neuroncore_utilization <= 100, i
    assert len(s.vcpus) == 128


def test_no_neuron_hardware() -> None:
    report, _ = decode_report(b'{"neuron_runtime_data":[],"system_data":{"memory_info":{"memory_total_bytes":1}},'
                              b'"neuron_hardware_info":{"error":"neuron driver not found"}}')
    s = Snapshot(report, 0.0)
    assert not s.has_neuron
    assert s.device_count == 0


@pytest.mark.parametrize("raw, shown", [("\x1b[2Jx", "\\x1b[2Jx"), ("a\nb", "a\\x0ab"), ("ok", "ok"),
                                         ("\u202eevil", "\\u202eevil"), ("\x9b31m", "\\x9b31m")])
def test_clean(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_absurd_core_indices_are_dropped() -> None:
    report, _ = decode_report(b'{"neuron_runtime_data":[{"pid":1,"report":{"neuroncore_counters":{"neuroncores_in_use":'
                              b'{"99999999":{"neuroncore_utilization":5},"x":{"neuroncore_utilization":5},'
                              b'"1":{"neuroncore_utilization":1e308}}}}}]}')
    s = Snapshot(report, 0.0)
    assert set(s.all.cores) == {1}
    assert s.device_count < 10


def test_snapshot_from_prefers_the_recorded_time() -> None:
    from neuron_top.snapshot import snapshot_from

    assert snapshot_from(b'{"system_data": {}, "neuron_top": {"ts": 12.5}}', 99.0, 3).ts == 12.5
    assert snapshot_from(b'{"neuron_runtime_data": []}', 99.0, 3).ts == 99.0
    assert snapshot_from(b'{"system_data": {}, "neuron_top": {"ts": null}}', 99.0).ts == 99.0
    s = snapshot_from(b'{"system_data": {}, "neuron_top": {"ts": 1e400}}', 99.0, 7)  # out of range: dropped, not used
    assert (s.ts, s.seq) == (99.0, 7)



def _cpu(idle: float) -> dict[str, float]:
    return {"user": 1, "nice": 0, "system": 1, "idle": idle, "io_wait": 0, "irq": 0, "soft_irq": 0}


def _vcpu_snapshot(usage: dict[str, object]) -> Snapshot:
    report, problems = decode_report(msgspec.json.encode({"system_data": {"vcpu_usage": {"usage_data": usage}}}))
    assert problems == ()
    return Snapshot(report, 0.0)


def test_vcpus_in_neuron_monitor_order() -> None:
    s = _vcpu_snapshot({"0": _cpu(10), "1": None, "2": _cpu(30)})
    assert [(i, t.idle) for i, t in s.vcpus] == [(0, 10), (2, 30)]


def test_vcpus_with_odd_keys_are_sorted_and_filtered() -> None:
    # out of order, a leading zero, a non-ASCII digit (which int() rejects), a word, an absurd index
    s = _vcpu_snapshot({"2": _cpu(2), "01": _cpu(1), "\u00b2": _cpu(9), "x": _cpu(9), "123456": _cpu(9),
                        "0": _cpu(0)})
    assert [(i, t.idle) for i, t in s.vcpus] == [(0, 0), (1, 1), (2, 2)]


def _cores_snapshot(*apps: dict[str, float]) -> Snapshot:
    rts = [{"pid": n + 1, "report": {"neuroncore_counters": {"neuroncores_in_use": {
        k: {"neuroncore_utilization": v} for k, v in cores.items()}}}} for n, cores in enumerate(apps)]
    report, _ = decode_report(msgspec.json.encode({"neuron_runtime_data": rts}))
    return Snapshot(report, 0.0)


def test_all_cores_of_disjoint_apps_are_theirs() -> None:
    s = _cores_snapshot({"0": 10, "1": 20}, {"2": 30})
    assert {i: c.neuroncore_utilization for i, c in s.all.cores.items()} == {0: 10, 1: 20, 2: 30}
    assert s.all.cores[2] is s.apps[1].cores[2]


def test_all_cores_add_up_apps_on_the_same_core() -> None:
    s = _cores_snapshot({"0": 10, "1": 20}, {"1": 90, "2": 30}, {"2": 5})
    assert {i: c.neuroncore_utilization for i, c in s.all.cores.items()} == {0: 10, 1: 100, 2: 35}


def test_all_core_stats_joined_from_the_apps_are_what_the_cores_give() -> None:
    """"all"'s core stats are joined from its apps' when each core is one app's own (``AllApps.core_stats``):
    for disjoint apps, apps on the same core (summed shares), an app whose counters failed, a filter that hides
    cores, NaN and absurd values, effective FLOPS from one app only and cores out of order, they must be what
    ``derived.core_stats`` makes of "all"'s cores."""
    from neuron_top.derived import core_stats
    from neuron_top.snapshot import AllApps

    def snap(*apps: dict[str, dict[str, object]], error: str = "") -> Snapshot:
        rts = [{"pid": n + 1, "neuron_runtime_tag": f"app{n}", "report": {"neuroncore_counters": {
            "neuroncores_in_use": cores, **({"error": error} if error and n == 0 else {})}}}
            for n, cores in enumerate(apps)]
        report, _ = decode_report(msgspec.json.encode({"neuron_runtime_data": rts}))
        return Snapshot(report, 0.0)

    u = {"neuroncore_utilization": 40.0, "flops": 3.0}
    cases = {
        "disjoint": snap({"0": u, "1": {"neuroncore_utilization": 60.0}}, {"2": {**u, "effective_flops": 1.0}}),
        "same core": snap({"0": u, "1": u}, {"1": {"neuroncore_utilization": 30.0}}),
        "failed": snap({"0": u}, {"1": u}, error="counters failed"),
        "out of order": snap({"5": u, "3": {"neuroncore_utilization": float("nan")}}, {"4": u, "0": u}),
        "absurd": snap({"0": {"neuroncore_utilization": 1e9}}, {"1": {"neuroncore_utilization": -5.0, "flops": 1.0}}),
        "one app": snap({"0": u, "2": u}),
        "no cores": snap({}, {}),
    }
    filtered = cases["disjoint"].narrowed(lambda a: a.tag == "app1", "app1")
    apps = cases["disjoint"].apps
    mine = {i: c for a in apps for i, c in a.cores.items()}
    alls = {name: s.all for name, s in [*cases.items(), ("filtered", filtered)]}
    # "all" made with the apps' cores in another order, and with other counters for the same cores
    alls["reordered"] = AllApps(apps, dict(reversed(mine.items())))
    alls["other counters"] = AllApps(apps, {i: msgspec.structs.replace(c, neuroncore_utilization=1.0)
                                            for i, c in mine.items()})
    for name, everything in alls.items():
        got, want = everything.core_stats, core_stats(everything.cores)
        assert got == want and list(got.util) == list(want.util) and list(got.flops) == list(want.flops), name
    assert cases["disjoint"].all.core_stats.util == {0: 40.0, 1: 60.0, 2: 40.0}
    assert cases["same core"].all.core_stats.util == {0: 40.0, 1: 70.0}  # summed, not app 1's
    assert cases["failed"].all.core_stats.util == {1: 40.0}  # the failed app's core is not "all"'s


def test_memory_aggregates_are_reused_across_reports_only_while_their_data_is_equal() -> None:
    """Per-core memory and its totals are kept from the previous report of the same app when its memory
    data is equal (``across``), and made afresh when it changed: always what a fresh computation gives."""
    from neuron_top.snapshot import AllApps, AppView
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn2.48xlarge", 7, 80)
    reused = fresh = 0
    prev: dict[tuple[int, bool], dict] = {}
    for s in snaps:
        for a in (*s.apps, s.all):
            key = (a.pid, a.is_all)
            got = {name: getattr(a, name) for name in ("core_memory", "device_breakdown", "host_breakdown")}
            kind = AllApps if a.is_all else AppView
            made = {name: getattr(kind, name).func(a) for name in got}  # computed afresh
            assert got == made
            before = prev.get(key)
            if before is not None and before["raw"] == a._memory_raw():
                assert got["core_memory"] is before["core_memory"]
                reused += 1
            elif before is not None:
                fresh += 1
            prev[key] = {**got, "raw": a._memory_raw()}
    assert reused > 300 and fresh > 10  # most reports reuse; memory that moved is made anew


def test_vcpu_busy_is_100_minus_idle_and_none_when_idle_is_not_a_number() -> None:
    """Each vCPU's busy share (``derived.cpu_summary``): 100 - idle, never below 0, None (a gap, not 0 or 100) when
    idle is missing, NaN or infinite; the average's the same way."""
    from neuron_top import schema
    from neuron_top.derived import cpu_summary

    idles = [None, float("nan"), float("inf"), float("-inf"), 150.0, 40, -5.0, 100.0, 99.5]
    cpus = tuple((i, schema.CpuTimes(idle=x)) for i, x in enumerate(idles))
    got = cpu_summary(schema.VcpuUsage(average_usage=schema.CpuTimes(idle=float("nan"))), cpus)
    assert got.per_cpu == tuple(enumerate([None, None, None, None, 0.0, 60.0, 105.0, 0.0, 0.5]))
    assert got.busy is None and got.count == len(idles)
    assert cpu_summary(schema.VcpuUsage(average_usage=schema.CpuTimes(idle=25)), ()).busy == 75.0


def test_two_runtimes_of_one_pid_are_two_apps_report_after_report() -> None:
    """The trn1n CloudWatch agent fixture has two runtimes in pid 457402 (tags 367 and 123). Everything that
    goes by the app went by the pid: ``app(pid)`` gave the first for both, the cores found for one were the
    other's too, and the history kept one series for the two. Each now has its own key (the pid for the first
    tag, the same in every report) and its own figures; the pid stays what is shown."""
    from neuron_top.history import History

    doc = msgspec.json.decode((REPORTS / "trn1n_32xlarge_cwagent_test_2024_line.json").read_bytes())
    for rt in doc["neuron_runtime_data"]:  # tell their executions apart: 123 completes 50 a period
        if rt["neuron_runtime_tag"] == "123":
            rt["report"]["execution_stats"]["execution_summary"]["completed"] = 50
    data = msgspec.json.encode(doc)
    snaps = []
    for i in range(3):
        report, problems = decode_report(data)
        snaps.append(Snapshot(report, 1000.0 + i, i + 1, problems))
    first, second = snaps[0].apps
    assert (first.pid, second.pid) == (457402, 457402) and {first.tag, second.tag} == {"367", "123"}
    assert first.key != second.key and 457402 in (first.key, second.key)
    assert [(a.tag, a.key) for a in snaps[2].apps] == [(a.tag, a.key) for a in snaps[0].apps]  # stable
    for a in snaps[0].apps:
        assert snaps[0].app(a.key) is a
    util = {a.tag: a.core_stats.util for a in snaps[0].apps}
    assert util["367"] != util["123"]  # 41.4% on one core of 367 only
    history = History(maxlen=10)
    for s in snaps:
        history.push(s)
    done = {a.tag: a.rates.rate("completed") for a in snaps[0].apps}
    assert done["123"] != done["367"]
    for a in snaps[0].apps:  # one series each (the pid's held whichever app came last)
        assert list(history.series(("exec", a.key)))[-3:] == [done[a.tag]] * 3, a.tag
    assert snaps[0].app(None) is snaps[0].all

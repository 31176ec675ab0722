from __future__ import annotations

import json
from collections import deque

import pytest

from neuron_top.history import History
from tests.conftest import DATA, load_snapshot


def test_series_stay_aligned_and_bounded() -> None:
    h = History(maxlen=5)
    snaps = [load_snapshot(DATA / "trn2_small.json", ts=float(i)) for i in range(7)]
    h.extend(snaps)
    assert len(h) == 5
    assert list(h.ts) == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert list(h.series(("core", 0))) == [91.5] * 5
    assert h.series(("vcpu", 0))[-1] == 80.0
    assert h.first is snaps[0]


def test_idle_latency_is_a_gap_and_late_series_are_padded() -> None:
    h = History(maxlen=10)
    h.push(load_snapshot(DATA / "trn2_small.json", ts=0.0))
    assert list(h.series(("lat", 5151, "total", "p50"))) == []  # idle: never a zero
    assert h.last(("lat", 4242, "total", "p99"), 3) == [None, None, 0.020]
    assert h.last(("nope",), 2) == [None, None]


def test_clear() -> None:
    h = History()
    h.push(load_snapshot(DATA / "trn2_small.json", ts=0.0))
    h.clear()
    assert len(h) == 0 and h.first is None and not list(h.keys())


def _expected(snap) -> dict:
    """What a push must append for each series of ``snap``, worked out plainly (absent: None)."""
    from neuron_top.snapshot import finite

    out = History._other_values(snap)
    for i, c in snap.all.cores.items():
        out["core", i] = finite(c.neuroncore_utilization)
        out["flops", i] = finite(c.effective_flops if c.effective_flops is not None else c.flops)
    for i, t in snap.vcpus:
        out["vcpu", i] = None if finite(t.idle) is None else max(0.0, 100.0 - t.idle)
    return out


def test_every_series_gets_its_value_through_changes_of_shape() -> None:
    """Cores, vCPUs and apps that come and go (the fast path for a known shape, the full one for a new shape, and
    back): after every push each series holds the report's value or a gap, all aligned."""
    from tests.helpers import demo_snapshots

    trn2 = demo_snapshots("trn2.48xlarge", 7, 30)  # apps start and stop: other series appear mid-run
    inf2 = demo_snapshots("inf2.48xlarge", 3, 4)  # other cores and vCPUs
    small = load_snapshot(DATA / "trn2_small.json", ts=0.0)
    order = [*trn2[:12], inf2[0], inf2[1], *trn2[12:20], small, small, inf2[2], *trn2[20:], inf2[3]]
    h = History(maxlen=40)
    seen: dict = {}
    for k, snap in enumerate(order):
        h.push(snap)
        want = _expected(snap)
        for key in want:
            seen.setdefault(key, k)
        assert set(h.keys()) == set(seen)
        for key, first in seen.items():
            series = list(h.series(key))
            assert len(series) == len(h.ts) == k + 1
            assert series[-1] == want.get(key), (k, key)
            assert series[:first] == [None] * first  # padded before it was first seen


def test_a_vcpu_written_two_ways_is_one_series_pushed_once() -> None:
    import msgspec

    from neuron_top.decode import decode_report
    from neuron_top.snapshot import Snapshot

    cpu = {"user": 1.0, "system": 1.0, "idle": 90.0}
    data = msgspec.json.encode({"system_data": {"vcpu_usage": {"usage_data": {"0": cpu, "1": cpu, "01": cpu}}}})
    h = History()
    for ts in range(3):
        h.push(Snapshot(decode_report(data)[0], float(ts)))
    assert list(h.series(("vcpu", 1))) == [10.0] * 3 and list(h.series(("vcpu", 0))) == [10.0] * 3


def test_series_of_an_app_gone_for_a_whole_history_are_forgotten() -> None:
    """Every pid an app ever had kept its series: a day's replay of a demo whose batch job restarts every few
    minutes grew by 55 MB. A series absent for ``maxlen`` reports holds only None: it goes."""
    from neuron_top.decode import decode_report
    from neuron_top.snapshot import Snapshot

    def report(pid: int) -> Snapshot:
        doc = {"neuron_runtime_data": [{"pid": pid, "neuron_runtime_tag": "batch", "report": {
            "execution_stats": {"period": 1.0, "execution_summary": {"completed": 5}, "error_summary": {}}}}]}
        rep, problems = decode_report(json.dumps(doc).encode())
        return Snapshot(rep, 0.0, 1, problems)

    h = History(maxlen=100)
    for pid in range(1, 41):  # forty runs of the job, 30 reports each
        for _ in range(30):
            h.push(report(pid))
    exec_keys = [k for k in h.keys() if k[0] == "exec"]  # noqa: SIM118 - History.keys, not a dict
    assert 3 <= len(exec_keys) <= 6  # the last runs' (within 100 reports + a prune interval), not forty
    assert ("exec", 40) in exec_keys and ("exec", 1) not in exec_keys
    assert list(h.series(("exec", 40)))[-1] == 5.0
    assert h.series(("exec", 1)) == deque()  # read as never seen: drawn as no data, as before


def test_history_keeps_each_devices_mean_utilization_and_all_cores() -> None:
    """The core history panel's series: per report, the mean of each device's cores that report a sane value,
    and the grid title's average for all (issue 32 item 10)."""
    from neuron_top.history import History
    from tests.helpers import demo_snapshots

    snaps = demo_snapshots("trn2.48xlarge", 7, 6)
    h = History(10)
    for s in snaps:
        h.push(s)
    cpd = snaps[0].cores_per_device
    for d in (0, 13, 15):
        want = []
        for s in snaps:
            us = [u for i, u in s.all.core_stats.util.items() if i // cpd == d and u is not None and 0 <= u <= 110]
            want.append(sum(us) / len(us) if us else None)
        assert list(h.series(("dev_util", d))) == pytest.approx(want)
    assert list(h.series(("dev_util", "all"))) == pytest.approx([s.all.core_stats.util_avg for s in snaps])


def test_ecc_totals_add_every_kind_of_event_and_keep_the_total_through_quiet_periods() -> None:
    """``ecc_totals`` is the sum of every report's ECC counts: a period with no event keeps the total as it is
    (it is not added), and an event of any of the four kinds, in any report, is added."""
    import itertools

    import msgspec

    from neuron_top.decode import decode_report
    from neuron_top.snapshot import DeviceEcc, Snapshot

    kinds = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")

    def snap(i: int, counts: dict[str, int]) -> Snapshot:
        doc = {"system_data": {"neuron_hw_counters": {"neuron_devices": [
            {"neuron_device_index": 0, **counts}, {"neuron_device_index": 1}]}}}
        report, _ = decode_report(msgspec.json.encode(doc))
        return Snapshot(report, 1700000000.0 + i)

    reports = [{}, {}, *({k: n} for n, k in enumerate(kinds, start=1)), {}, {kinds[3]: 5}, {}]
    history = History(100)
    for i, counts in zip(itertools.count(), reports):
        history.push(snap(i, counts))
    assert history.ecc_totals[0] == DeviceEcc(0, 1, 2, 3, 4 + 5)
    assert history.ecc_totals[1] == DeviceEcc(1, 0, 0, 0, 0)


def test_interval_is_the_reports_spacing_not_their_period() -> None:
    """What a sparkline cell spans: the median spacing of the newest reports, None before two or when the clock
    went back (a rotated recording replayed out of order)."""
    h = History(maxlen=50)
    assert h.interval() is None
    for t in (0.0, 0.25, 5.25, 10.25, 15.25):  # a start-up report, then every 5 s
        h.push(load_snapshot(DATA / "trn2_small.json", ts=t))
    assert h.interval() == 5.0
    back = History(maxlen=5)
    for t in (100.0, 50.0):
        back.push(load_snapshot(DATA / "trn2_small.json", ts=t))
    assert back.interval() is None

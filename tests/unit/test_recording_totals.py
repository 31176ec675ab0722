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


def _brute_executions(data: list[bytes], upto: int) -> tuple[int | None, ...]:
    """Executions by outcome summed over the reports ``0..upto``, straight from the JSON (no core code)."""
    import json

    from neuron_top.derived import EXEC_TYPES

    sums: dict[str, int] = {}
    for raw in data[:upto + 1]:
        for rt in json.loads(raw)["neuron_runtime_data"]:
            for k, v in rt["report"]["execution_stats"]["execution_summary"].items():
                sums[k] = sums.get(k, 0) + v
    return tuple(sums.get(k) for k in EXEC_TYPES)


def test_executions_since_start_are_exact_after_seek_step_back_and_jump() -> None:
    """Issue 33, Deliver 2: executions since start (every outcome) at the position after any move equal a
    brute-force count over the reports up to it, not the history window's."""
    plan = Plan(seconds=60 * 400, period=60.0, completed=7,
                executions=[(3000, 9000, "completed_with_err", 2), (12000, 12600, "timed_out", 5),
                            (20000, 20060, "failed_to_queue", 11), (600, 24000, "completed", 3)])
    data = [x.rstrip(b"\n") for x in lines(plan)]
    c = ReplayController(ListIndex(data, [float(i) for i in range(len(data))]))
    c.scan_markers()
    moves = [lambda: c.seek(len(data) // 2), lambda: c.step(-1), lambda: c.seek(EVERY * 3 + 5),
             lambda: c.step(-1), lambda: c.seek(len(data) - 1), lambda: c.seek(0), lambda: c.seek(EVERY - 1)]
    for move in moves:
        move()
        got = c.totals_at(c.position)
        assert got is not None
        assert got.executions == _brute_executions(data, c.position), c.position
    end = c.totals_at(len(data) - 1)
    assert end is not None
    assert end.executions[1] == 2 * 100 and end.executions[3] == 5 * 10 and end.executions[5] == 11


def test_executions_not_reported_stay_not_reported() -> None:
    """An outcome no report gave is None since start, not 0 ("-" on screen)."""
    from neuron_top.derived import EXEC_TYPES
    from neuron_top.recording.markers import Facts
    from neuron_top.recording.totals import Totals

    f = Facts()
    f.executions = (5, None, None, None, None, None)
    t = Totals().plus(f).plus(None).plus(f)
    assert t.executions == (10, None, None, None, None, None) and len(t.executions) == len(EXEC_TYPES)


def test_executions_since_start_of_the_apps_a_filter_selects() -> None:
    """Under a tag filter the count since start is the filtered apps' (summed over every report, each report's
    apps as the filter selects them there), not every app's: also for an app that stopped before the position,
    and when only its pod matches (``inference`` is no app's tag here, only the namespace of some)."""
    import json
    import re

    from neuron_top.derived import EXEC_TYPES
    from neuron_top.selection import narrow
    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import generate

    docs = [json.loads(r) for r in generate("inf2.48xlarge", 7, 2 * EVERY + 9)]
    stop = EVERY - 20  # whisper-large-inf (an inference pod) stops here
    for d in docs[stop:]:
        d["neuron_runtime_data"] = [rt for rt in d["neuron_runtime_data"]
                                    if rt["neuron_runtime_tag"] != "whisper-large-inf"]
    data = [json.dumps(d).encode() for d in docs]
    c = ReplayController(ListIndex(data, [float(i) for i in range(len(data))]))
    c.scan_markers()
    pattern = re.compile("inference")
    want: dict[str, int] = {}
    errors = 0
    selected: set[str] = set()
    for i, raw in enumerate(data):
        tags = {a.tag for a in narrow(snapshot_from(raw, 0.0, i + 1), pattern, "inference").apps}
        selected |= tags
        for rt in json.loads(raw)["neuron_runtime_data"]:
            if rt["neuron_runtime_tag"] in tags:
                stats = rt["report"]["execution_stats"]
                for k, v in stats["execution_summary"].items():
                    want[k] = want.get(k, 0) + v
                errors += sum(stats["error_summary"].values())
        if i not in (stop - 1, stop, EVERY, len(data) - 1):
            continue
        t = c.since_start(i)
        assert t is not None and t.filter is None
        assert t.executions == c.totals_at(i).executions  # every app's
        got = t.narrow("inference") if t.narrow is not None else None
        assert got is not None and got.filter == "inference"
        assert {k: v for k, v in zip(EXEC_TYPES, got.executions, strict=True) if v is not None} == want and got.errors == errors, i
    assert "whisper-large-inf" in selected and not any("inference" in tag for tag in selected)
    assert c.since_start(len(data) - 1).executions != got.executions  # the filter left some apps out



def test_two_runtimes_with_one_pid_and_tag_add_up_in_their_apps_counts() -> None:
    """Two runtimes reporting the same pid and tag are one app key (``Facts.apps``): its errors and unclean
    executions were the last runtime's alone, so the apps' counts (``--summary``'s rows, a filter's counts since
    start) and the totals made from them fell short of the "all" figures, which add both."""
    import json

    from neuron_top.recording.markers import Facts
    from neuron_top.recording.totals import RunningTotals, Totals
    from neuron_top.snapshot import snapshot_from

    def rt(pid: int, tag: str, errors: int, bad: int, util: float) -> dict[str, object]:
        return {"pid": pid, "neuron_runtime_tag": tag, "error": "", "report": {
            "neuroncore_counters": {"period": 1.0, "neuroncores_in_use": {"0": {"neuroncore_utilization": util}}},
            "execution_stats": {"period": 1.0, "error_summary": {"generic": errors, "numerical": 1},
                                "execution_summary": {"completed": 10, "completed_with_err": bad, "timed_out": 1}}}}

    raw = json.dumps({"neuron_runtime_data": [rt(11, "serve", 2, 1, 30.0), rt(11, "serve", 3, 4, 70.0),
                                              rt(12, "batch", 1, 0, 5.0)]}).encode()
    snap = snapshot_from(raw, 0.0, 1)
    every = snap.all.rates
    assert (every.error_count, every.bad_count) == (2 + 1 + 3 + 1 + 1 + 1, 1 + 1 + 4 + 1 + 0 + 1)
    for f in (Facts(snap), brief_facts(raw)):
        assert f.apps[11, "serve"] == ("serve:11", 70.0, (1 + 1) + (4 + 1), (2 + 1) + (3 + 1))
        assert sum(a[3] for a in f.apps.values()) == every.error_count
        assert sum(a[2] for a in f.apps.values()) == every.bad_count
        t = Totals().plus(f)
        assert (t.errors, t.failed) == (every.error_count, every.bad_count)
        running = RunningTotals(lambda i, f=f: f)  # type: ignore[misc]
        running.add(f)
        apps = running.apps_at(0)
        assert apps is not None and sum(a.errors for a in apps.values()) == every.error_count
        assert apps[11, "serve"].executions == f.outcomes[11, "serve"] and f.outcomes[11, "serve"][0] == 20

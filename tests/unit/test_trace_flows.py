"""What issue 35 saw on real traces: flows lost to split threads and to slices that hold both ends.

1. schemaVersion-1 Kineto (torch-tb-profiler's ResNet50 sample) writes its X events with ``"tid": "5555"`` and its
   flow points with ``"tid": 5555``: one thread, as catapult's thread map keys them, so every flow binds;
2. a Chrome page load (Lighthouse's iframe fixture) has flows with both ends in one slice: kept and counted, as
   Perfetto counts them, and the points outside any slice named as a problem.
Each count is checked against an independent reading of the file with the standard library.
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Any

from neuron_top.trace import load_trace, run_summary
from neuron_top.trace.chrome import thread_ident
from tests.trace_helpers import real_trace, trace_events

RESNET = "kineto_resnet50_num_workers_4_worker0.pt.trace.json.gz"
IFRAME = "lighthouse_iframe_trace.json.gz"


def _slices(events: list[dict[str, Any]], key: Any) -> dict[Any, list[tuple[float, float, int]]]:
    out: dict[Any, list[tuple[float, float, int]]] = defaultdict(list)
    for k, e in enumerate(events):
        if e.get("ph") == "X" and "dur" in e:
            out[key(e)].append((e["ts"], e["ts"] + e["dur"], k))
    return out


def _enclosing(slices: list[tuple[float, float, int]], at: dict[float, list[int]], t: float) -> int | None:
    """The slice a flow point binds to: one starting exactly at it (``at``: start -> slices), else the innermost
    enclosing it."""
    if t in at:
        return at[t][-1]
    got = [s for s in slices if s[0] <= t <= s[1]]
    return max(got, key=lambda s: (s[0], -s[1]))[2] if got else None


def _independent_flows(events: list[dict[str, Any]], key: Any) -> tuple[int, int, int]:
    """(flows, flows with both ends in one slice, points outside any slice) for s/f flows: each f links from
    its id's first start."""
    slices = _slices(events, key)
    starts_at: dict[Any, dict[float, list[int]]] = defaultdict(dict)
    for k, ss in slices.items():
        for s in ss:
            starts_at[k].setdefault(s[0], []).append(s[2])
    points: dict[Any, list[tuple[float, bool, int | None]]] = defaultdict(list)
    for e in events:
        if e.get("ph") in ("s", "f"):
            fid = (e["id"], e.get("cat"), e.get("name"))
            points[fid].append((e["ts"], e["ph"] == "f", _enclosing(slices[key(e)], starts_at[key(e)], e["ts"])))
    flows = within = outside = 0
    for pts in points.values():
        pts.sort()
        outside += sum(p[2] is None for p in pts)
        starts = [p for p in pts if not p[1] and p[2] is not None]
        for p in pts:
            if p[1] and p[2] is not None and starts:
                flows += 1
                within += p[2] == starts[0][2]
    return flows, within, outside


def _summary(name: str) -> list[str]:
    out = io.StringIO()
    assert run_summary([real_trace(name)], out) == 0
    return out.getvalue().splitlines()


def test_thread_ident_is_catapults_object_key() -> None:
    assert thread_ident("5555") == 5555 and thread_ident("-3") == -3 and thread_ident(5555) == 5555
    for name in ("05555", "-0", "stream 7", "", "+5", "5.0", "٣"):  # not the text of an integer: a name
        assert thread_ident(name) == name


def test_old_kineto_binds_every_flow_on_unsplit_threads() -> None:
    path = real_trace(RESNET)
    events = trace_events(path)
    # the file as the issue describes it: X on "5555", flow starts on 5555
    assert {type(e["tid"]) for e in events if e["ph"] == "X" and e["pid"] == 5555} == {str}
    assert {type(e["tid"]) for e in events if e["ph"] == "s"} == {int}
    flows, within, outside = _independent_flows(events, lambda e: (e["pid"], str(e["tid"])))
    assert (flows, within, outside) == (9258, 0, 0)
    st = load_trace(path)
    assert st.flow_count == flows and not st.problems
    threads = [(str(t.pid), str(t.tid)) for t in st.tracks if t.kind == "thread"]
    assert len(threads) == len(set(threads))  # no thread split in two
    by_tid = {str(t.tid): t for t in st.tracks if t.kind == "thread"}
    assert by_tid["5555"].name == "thread 5555 (python)"  # its thread_name (an int tid) reaches the X events
    assert by_tid["stream 7"].source == "device"  # "Kernel", "Memcpy", "Memset": the GPU stream
    assert [t for t in st.tracks if t.tid == "5555"] == []
    lines = _summary(RESNET)
    assert "errors: 0, unfinished (hang signal): 0, flows: 9258" in lines and "problems: none" in lines
    assert any("stream 7 [device]" in line for line in lines)


def test_chrome_page_load_keeps_the_flows_within_one_slice() -> None:
    path = real_trace(IFRAME)
    events = trace_events(path)
    flows, within, outside = _independent_flows(events, lambda e: (e["pid"], e["tid"]))
    assert (flows, within, outside) == (73, 2, 1)
    st = load_trace(path)
    assert st.flow_count == flows and st.flows.within_one_slice == within
    assert st.problems["flow point outside any slice"] == outside  # the one not drawn is named
    self_linked = [a for a, b in zip(st.flows.a.tolist(), st.flows.b.tolist(), strict=True) if a == b]
    assert len(self_linked) == 2
    for ev in self_linked:  # listed once each way, not as a link and its reverse
        assert st.flows.outgoing(ev).count(ev) == 1 and st.flows.incoming(ev).count(ev) == 1
    lines = _summary(IFRAME)
    assert "errors: 0, unfinished (hang signal): 1, flows: 73 (2 with both ends in one slice)" in lines
    assert lines[lines.index("problems:") + 1 :] == ["  flow point outside any slice: 1"]


def _chain(tmp_path: Any) -> Any:
    """A chain with a fan-out: launch -> kernel (middle) -> copy_a and copy_b, on three threads."""
    from tests.trace_helpers import write_events, x

    events = [
        x("launch", 0, 10, tid=1), x("kernel", 20, 10, tid=2), x("copy_a", 40, 5, tid=3), x("copy_b", 60, 5, tid=3),
        {"ph": "s", "id": 1, "cat": "c", "name": "n", "ts": 0, "pid": 1, "tid": 1},
        {"ph": "f", "id": 1, "cat": "c", "name": "n", "ts": 20, "pid": 1, "tid": 2, "bp": "e"},
        {"ph": "s", "id": 2, "cat": "c", "name": "n", "ts": 25, "pid": 1, "tid": 2},
        {"ph": "f", "id": 2, "cat": "c", "name": "n", "ts": 60, "pid": 1, "tid": 3, "bp": "e"},
        {"ph": "f", "id": 2, "cat": "c", "name": "n", "ts": 40, "pid": 1, "tid": 3, "bp": "e"},
    ]
    return load_trace(write_events(tmp_path, events))


def test_walking_a_chain_from_its_middle_reaches_the_source_and_every_consumer(tmp_path: Any) -> None:
    from neuron_top.trace.model import TimelineModel

    st = _chain(tmp_path)
    m = TimelineModel(st)
    ev = {st.name_of(i): i for i in range(len(st))}
    mid = ev["kernel"]
    assert m.flow_ends(mid, downstream=False) == [ev["launch"]]
    assert m.flow_ends(mid, downstream=True) == [ev["copy_a"], ev["copy_b"]]  # by time, not by file order
    assert m.chain_source(ev["copy_b"]) == (ev["launch"], 2) and m.chain_source(ev["launch"]) == (ev["launch"], 0)
    walk = []
    for downstream, at in ((True, mid), (False, None), (True, None), (False, None), (True, None)):
        target, _k, n = m.follow_flow(walk[-1] if at is None else at, downstream)
        assert target is not None
        walk.append(target)
        if downstream:
            assert n == 2
    names = [st.name_of(e) for e in walk]
    assert names == ["copy_a", "kernel", "copy_b", "kernel", "copy_a"]  # L H L reaches both, then wraps
    assert m.follow_flow(ev["launch"], downstream=False) == (None, 0, 0)  # the source: nothing upstream


def test_groupings_offered_are_those_the_trace_has() -> None:
    from neuron_top.trace.model import TimelineModel, available_groupings
    from tests.trace_helpers import DATA

    st = load_trace(real_trace(RESNET))
    assert available_groupings(st) == ("cpu-device", "thread", "process")  # no NeuronCore, no instance
    m = TimelineModel(st)
    assert [m.cycle_grouping() for _ in range(3)] == ["thread", "process", "cpu-device"]
    neuron = load_trace(DATA / "trace_small.json")
    assert available_groupings(neuron) == ("cpu-device", "core", "thread", "process", "instance")


def test_summary_lists_sample_events_as_not_shown() -> None:
    lines = _summary("catapult_simple_trace.json")
    assert "not shown: P sample events (3 entries), stackFrames (3 entries)" in lines


def test_exact_times_without_trailing_zeros() -> None:
    from neuron_top.trace.columns import format_exact

    assert [format_exact(v) for v in (260_189_000, 1_500_000_000, 800, 0, -2_500, 12_345_678_901)] == [
        "260.189 ms", "1.5 s", "800 ns", "0 ns", "-2.5 µs", "12.345678901 s"
    ]


def test_the_chain_source_walk_is_bounded(tmp_path: Any) -> None:
    from neuron_top.trace.model import TimelineModel

    st = _chain(tmp_path)
    m = TimelineModel(st)
    copy_b = next(i for i in range(len(st)) if st.name_of(i) == "copy_b")
    assert st.name_of(m.chain_source(copy_b, limit=1)[0]) == "kernel"  # one flow up, then stopped

"""What issue 24 saw on real traces, each checked against the reference viewers' own tests (Perfetto's expected
outputs, catapult's importer tests) or against an independent reading with the standard library.

1. data after ``traceEvents`` (stackFrames, samples, systemTraceEvents): nothing lost, nothing mistaken for events;
2. Perfetto's flow v2 (bind_id, flow_in, flow_out) and v1 tests;
3. Kineto flow points exactly on their slices (no "1 ns outside");
4. epoch microseconds with nanosecond fractions kept exact (no false overlaps);
5. legacy async S/T/F matched by name + id across processes;
6. nestable async b/e matched by cat + id and name, an unmatched end closing nothing.
"""

from __future__ import annotations

import io
import json
from bisect import bisect_right
from collections import Counter, defaultdict
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest

from neuron_top.trace import jsonstream, load_trace, run_check, run_summary
from neuron_top.trace.store import UNFINISHED, TraceStore
from tests.trace_helpers import ns, read_json, real_trace, trace_events, write_events, x


def _check(path: Path) -> tuple[int, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = run_check([path], out, err)
    return code, out.getvalue().splitlines()


def _named(st: TraceStore, name: str) -> list[int]:
    return [i for i in range(len(st)) if st.name_of(i) == name]


def _flow_pairs(st: TraceStore) -> set[tuple[str, str]]:
    """Flows as (earlier slice, later slice) name pairs."""
    out = set()
    for a, bs in st.flows.items():
        for b in bs:
            if (st.start[a], a) < (st.start[b], b):
                out.add((st.name_of(a), st.name_of(b)))
    return out


# -- 1. no silent loss ----------------------------------------------------------------------------------------


def _unmatched_begins(events: list[dict[str, Any]]) -> int:
    """B without E per thread, and nestable b without e per (cat, id, name): an independent count."""
    threads: dict[Any, list[tuple[Any, int, str]]] = defaultdict(list)
    nest: dict[Any, list[tuple[Any, int, str, str]]] = defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") in ("B", "E"):
            threads[(e.get("pid"), e.get("tid"))].append((e["ts"], i, e["ph"]))
        elif e.get("ph") in ("b", "e"):
            nest[(e.get("cat"), e.get("id"))].append((e["ts"], i, e["ph"], e.get("name")))
    left = 0
    for evs in threads.values():
        depth = 0
        for _ts, _i, ph in sorted(evs, key=lambda r: (r[0], r[1])):
            depth = depth + 1 if ph == "B" else max(depth - 1, 0)
        left += depth
    for evs in nest.values():
        open_: Counter[str] = Counter()
        for _ts, _i, ph, name in sorted(evs, key=lambda r: (r[0], r[1])):
            if ph == "b":
                open_[name] += 1
            elif open_[name]:
                open_[name] -= 1
        left += sum(open_.values())
    return left


def test_fuchsia_reads_the_events_and_the_system_records_after_them() -> None:
    path = real_trace("catapult_fuchsia_trace.json.gz")
    data = read_json(path)
    st = load_trace(path)
    assert st.lost == 0 and not st.problems
    records = Counter(r["ph"] for r in data["systemTraceEvents"]["events"])
    assert {k[len("system ") :]: v for k, v in st.phase_counts.items() if k.startswith("system ")} == records
    cpus = [t for t in st.tracks if t.kind == "cpu"]
    assert sorted(t.name for t in cpus) == sorted(
        f"CPU {c}" for c in {r["cpu"] for r in data["systemTraceEvents"]["events"] if r["ph"] == "k"}
    )
    assert _unmatched_begins(data["traceEvents"]) == 0
    assert len(st.unfinished) == 0
    assert _check(path) == (0, ["no errors detected"])  # the old reader claimed 5 hangs and exited 1


def test_samples_and_stack_frames_after_the_events_are_counted_not_read_as_events() -> None:
    path = real_trace("catapult_perf_sampling_trace_with_trace_events.json.gz")
    data = read_json(path)
    st = load_trace(path)
    assert st.lost == 0
    assert st.not_shown == {"stackFrames": len(data["stackFrames"]), "samples": len(data["samples"])}
    events = data["traceEvents"]
    no_dur = sum(1 for e in events if e["ph"] == "X" and "dur" not in e)  # unfinished by the format's rule
    legacy: dict[Any, int] = Counter()
    for e in sorted((e for e in events if e["ph"] in ("S", "F")), key=lambda e: e["ts"]):
        legacy[(e["name"], str(e["id"]))] += 1 if e["ph"] == "S" else -1
    unfinished_s = sum(1 for v in legacy.values() if v > 0)
    assert (no_dur, unfinished_s, _unmatched_begins(events)) == (18, 8, 0)
    assert len(st.unfinished) == no_dur + unfinished_s
    out = io.StringIO()
    assert run_summary([path], out) == 0
    assert "not shown: samples (10441 entries), stackFrames (13408 entries)" in out.getvalue()


@pytest.mark.parametrize("frames", [45, 46, 2000])
@pytest.mark.parametrize("chunk", [64, 1 << 22])
def test_two_events_then_a_stack_frames_dict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frames: int, chunk: int
) -> None:
    """The issue's case: two X events and a 46-entry stackFrames dict exited 2 ("malformed JSON")."""
    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    doc = {
        "traceEvents": [x("a", 0, 5), x("b", 10, 5)],
        "stackFrames": {str(k): {"category": "c", "name": f"f{k}", "parent": str(k - 1)} for k in range(frames)},
        "samples": [{"ts": k, "sf": k, "tid": 1, "name": "cycles"} for k in range(50)],
        "metadata": {"cpu": "x86"},
    }
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    st = load_trace(p)
    assert sorted(st.name_of(i) for i in range(len(st))) == ["a", "b"]
    assert st.lost == 0 and not st.problems and not st.unread
    assert st.not_shown == {"stackFrames": frames, "samples": 50}
    assert _check(p) == (0, ["no errors detected"])


@pytest.mark.parametrize("gz", [False, True])
def test_megabytes_of_other_keys_before_the_events(tmp_path: Path, gz: bool) -> None:
    """A DevTools-style "metadata" and stackFrames first, "traceEvents" 2 MB into the file: the format sniff read
    only 64 KB and called it "not a trace file"."""
    import gzip

    doc = {
        "metadata": {f"k{k}": "v" * 50 for k in range(20_000)},
        "stackFrames": {str(k): {"name": f"f{k}", "category": "c"} for k in range(3000)},
        "traceEvents": [x("a", 0, 5), x("b", 10, 5)],
    }
    raw = json.dumps(doc).encode()
    assert raw.index(b'"traceEvents"') > 1 << 20
    p = tmp_path / ("t.json.gz" if gz else "t.json")
    p.write_bytes(gzip.compress(raw) if gz else raw)
    st = load_trace(p)
    assert sorted(st.name_of(i) for i in range(len(st))) == ["a", "b"] and st.lost == 0
    assert st.not_shown == {"metadata": 20_000, "stackFrames": 3000}  # too big to keep: counted
    assert _check(p) == (0, ["no errors detected"])


def test_events_after_megabytes_of_other_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long events array ending inside a read chunk that then runs into a samples list: all events kept."""
    monkeypatch.setattr(jsonstream, "CHUNK", 4096)
    events = [x(f"e{k}", k * 10, 5, tid=k % 3, nested={"l": [{"a": 1}, {"b": 2}]}) for k in range(3000)]
    doc = {"traceEvents": events, "samples": [{"a": [{"b": k}]} for k in range(5000)], "displayTimeUnit": "ns"}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc, indent=1))
    st = load_trace(p)
    assert len(st) == 3000 and st.lost == 0 and st.not_shown == {"samples": 5000}
    assert st.metadata["displayTimeUnit"] == "ns"


def test_unreadable_events_are_counted_and_check_exits_2(tmp_path: Path) -> None:
    good = [json.dumps(x(f"e{k}", k * 10, 5)) for k in range(10)]
    bad = ['{"ph":"X","name":"broken","ts":45,"dur":1,"args":{"a":[1,}', '{"ph":"B" garbage']
    lines = [*good[:4], *bad, *good[4:]]
    p = tmp_path / "t.json"
    p.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    st = load_trace(p)
    assert len(st) == 10 and st.lost == 2
    code, out = _check(p)
    assert code == 2
    assert out[0] == "unreadable: 2 events could not be read (malformed JSON: 2)"
    summary = io.StringIO()
    run_summary([p], summary)
    assert summary.getvalue().startswith("unreadable: 2 events could not be read")


def test_check_exit_codes_clean_problems_unreadable(tmp_path: Path) -> None:
    clean = write_events(tmp_path, [x("a", 0, 1)], "clean.json")
    hang = write_events(tmp_path, [x("a", 0, None)], "hang.json")
    cut = tmp_path / "cut.json"
    cut.write_text('[{"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":2,"du')
    assert [_check(p)[0] for p in (clean, hang, cut)] == [0, 1, 2]
    assert _check(cut)[1][0].startswith("unreadable: 1 event could not be read (cut off at the end of the file")


# -- 2. flows v2 and v1, as Perfetto's own diff tests expect them -----------------------------------------------


def test_perfetto_flow_v2() -> None:
    st = load_trace(real_trace("perfetto_flow_events_json_v2.json"))
    # test/trace_processor/diff_tests/parser/parsing/tests.py: test_flow_events_json_v2
    assert _flow_pairs(st) == {
        ("SenderB", "Blergh"),
        ("SenderA", "OtherSlice"),
        ("OtherSlice", "SomeSlice"),
        ("OtherSlice", "SomeOtherSlice"),
    }
    assert st.flow_count == 4


def test_perfetto_flow_v1_with_an_f_that_binds_to_the_next_slice() -> None:
    st = load_trace(real_trace("perfetto_flow_events_json_v1.json"))
    # test_flow_events_json_v1: the f at 1001 us binds to Blergh, which begins at 1002 us
    assert _flow_pairs(st) == {("SenderB", "Blergh"), ("SenderA", "OtherSlice"), ("OtherSlice", "SomeSlice")}


def test_catapult_flow_simple() -> None:
    st = load_trace(real_trace("catapult_flow_simple.json"))
    assert st.flow_count == 3 and not st.problems
    assert st.not_shown == {"stackFrames": 3}


# -- 3 and 4. exact time on Kineto traces ------------------------------------------------------------------------


def test_kineto_flow_points_land_on_their_slices() -> None:
    """nccl_data: float microseconds above 2**40; the old arithmetic put 558 of its flow points 1 ns outside."""
    path = real_trace("hta_nccl_parser_config_nccl_data.json.gz")
    events = trace_events(path, exact=True)
    slices: dict[Any, list[tuple[int, int]]] = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    # Inside some slice of its thread: the latest end among the slices that start at or before t reaches t (a
    # bisect on the starts and a running max of the ends, not a scan of every slice per point: 20 s of the suite).
    reach: dict[Any, tuple[list[int], list[int]]] = {}
    for key, spans in slices.items():
        spans.sort()
        ends = list(accumulate((b for _, b in spans), max))
        reach[key] = ([a for a, _ in spans], ends)

    def inside(key: Any, t: int) -> bool:
        firsts, ends = reach.get(key, ([], []))
        i = bisect_right(firsts, t) - 1
        return i >= 0 and ends[i] >= t

    starts: dict[Any, int] = {}
    links = outside = 0
    for e in sorted((e for e in events if e.get("ph") in ("s", "f")), key=lambda e: (ns(e["ts"]), e["ph"] == "f")):
        t = ns(e["ts"])
        if not inside((e["pid"], e["tid"]), t):
            outside += 1
            continue
        key = (e["id"], e["cat"], e["name"])
        if e["ph"] == "s":
            starts.setdefault(key, t)
        elif key in starts:
            links += 1
    st = load_trace(path)
    assert outside == 0 and links == 4317
    assert st.flow_count == links
    assert "flow point outside any slice" not in st.problems


def test_epoch_microseconds_with_nanoseconds_stay_exact() -> None:
    """ns_resolution: "ts": 1712195495519689.047; read as floats it made 766 false partial overlaps."""
    path = real_trace("hta_ns_resolution_rank-0.pt.trace.json.gz")
    events = [e for e in trace_events(path, exact=True) if e.get("ph") == "X"]
    want = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events)
    partial = 0
    by_thread: dict[Any, list[tuple[int, int]]] = defaultdict(list)
    for e in events:
        by_thread[(e["pid"], e["tid"])].append((ns(e["ts"]), -(ns(e["ts"]) + ns(e["dur"]))))
    for evs in by_thread.values():
        stack: list[int] = []
        for s, neg_end in sorted(evs):
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and -neg_end > stack[-1]:
                partial += 1
            else:
                stack.append(-neg_end)
    st = load_trace(path)
    xs = [i for i in range(len(st)) if chr(st.phase[st.orig[i]]) == "X"]
    assert sorted((st.start[i], st.end[i]) for i in xs) == want
    assert partial == 0
    assert "partially overlapping events (overflow lane)" not in st.problems
    assert st.start[st.orig.index(0)] == 1712195495519689047  # the first event, to the nanosecond


def test_catapult_nanoseconds() -> None:
    st = load_trace(real_trace("catapult_nanoseconds.json"))
    got = sorted((st.name_of(i), st.dur[i]) for i in range(len(st)))
    want = sorted(
        (b["name"], ns(e["ts"]) - ns(b["ts"]))
        for b, e in zip(*(
            [ev for ev in trace_events(real_trace("catapult_nanoseconds.json"), exact=True) if ev["ph"] == ph]
            for ph in ("B", "E")
        ), strict=True)
    )
    assert got == want


# -- 5. legacy async across processes ---------------------------------------------------------------------------


def test_legacy_async_is_matched_by_name_and_id_across_processes() -> None:
    st = load_trace(real_trace("catapult_async_begin_end.json"))
    (e1, e2) = sorted(_named(st, "E"), key=lambda i: st.start[i])
    assert (st.start[e1], st.end[e1]) == (500_000, 700_000)  # S in pid 2, F in pid 3
    assert (st.start[e2], st.end[e2]) == (600_000, 800_000)  # S in pid 2 (tid 3), F in pid 3 (tid 5)
    assert st.track_of(e1).pid == 2 and st.track_of(e1).kind == "async"
    # F "D" id bf1 has no S (a problem, nothing closed); S "D" bf2, S "S" us and b "b" ub never end
    assert st.problems == {"async F without S": 1}
    assert sorted(st.name_of(i) for i in st.unfinished) == ["D", "S", "b"]
    steps = sorted(st.name_of(i) for i in range(len(st)) if chr(st.phase[st.orig[i]]) == "T")
    assert steps == ["G", "H", "I", "T", "X", "X", "Y"]


# -- 6. nestable async: by cat + id, names matched as catapult matches them ------------------------------------


def test_nestable_async_real_file() -> None:
    st = load_trace(real_trace("catapult_nestable_async.json"))
    (bar,) = _named(st, "REQUEST_BAR")
    assert (st.start[bar], st.end[bar]) == (10_000, 100_000)
    (stray,) = st.unfinished
    assert st.name_of(stray) == "URL_REQUEST_DELEGATE_UNMATCHED_BEGIN"
    assert st.end[stray] == 100_000  # ends with the last event of its id, as catapult ends it
    assert st.problems == {"async e without a matching b": 1}  # URL_REQUEST_DELEGATE_UNMATCHED_END
    (end,) = _named(st, "URL_REQUEST_DELEGATE_UNMATCHED_END")  # drawn from its id's first event, as catapult does
    assert (st.start[end], st.end[end]) == (110_000, 130_000) and not st.flags_of(end) & UNFINISHED
    (foo,) = _named(st, "REQUEST_FOO")
    assert st.row_of(end) == st.row_of(foo) + 1 and st.track_of(end) is st.track_of(foo)
    assert (st.start[foo], st.end[foo]) == (110_000, 200_000) and not st.flags_of(foo) & UNFINISHED


def _nestable(tmp_path: Path, events: list[dict[str, Any]]) -> TraceStore:
    for e in events:
        e.setdefault("pid", 52)
        e.setdefault("tid", 53)
        e.setdefault("cat", "foo")
        e.setdefault("id", 72)
    return load_trace(write_events(tmp_path, events))


def test_catapult_nestable_unmatched_outer_begin(tmp_path: Path) -> None:
    """catapult trace_event_importer_test.html: nestableAsyncUnmatchedOuterBeginEvent."""
    st = _nestable(
        tmp_path,
        [
            {"name": "a", "args": {"x": 1}, "ts": 524, "ph": "b"},
            {"name": "b", "args": {}, "ts": 525, "ph": "b"},
            {"name": "b", "args": {"y": 2}, "ts": 560, "ph": "e"},
        ],
    )
    (a,) = _named(st, "a")
    (b,) = _named(st, "b")
    assert st.dur[a] == 36_000 and st.flags_of(a) & UNFINISHED  # ends at the last event of its id
    assert (st.start[b], st.dur[b]) == (525_000, 35_000) and st.args(b) == {"y": 2}
    assert st.row_of(b) == st.row_of(a) + 1


def test_catapult_nestable_unmatched_inner_begin(tmp_path: Path) -> None:
    """nestableAsyncUnmatchedInnerBeginEvent: the outer pair still matches by name (no false hang for it)."""
    st = _nestable(
        tmp_path,
        [
            {"name": "a", "args": {"z": 3}, "ts": 524, "ph": "b"},
            {"name": "c", "args": {}, "ts": 525, "ph": "n"},
            {"name": "b", "args": {"x": 1}, "ts": 525, "ph": "b"},
            {"name": "a", "args": {"y": 2}, "ts": 565, "ph": "e"},
        ],
    )
    (a,) = _named(st, "a")
    (b,) = _named(st, "b")
    assert st.dur[a] == 41_000 and not st.flags_of(a) & UNFINISHED
    assert st.args(a) == {"z": 3, "y": 2}
    assert (st.start[b], st.dur[b]) == (525_000, 40_000) and st.unfinished == [b]


def test_catapult_nestable_unmatched_inner_end(tmp_path: Path) -> None:
    """nestableAsyncUnmatchedInnerEndEvent: an e of another name closes nothing."""
    st = _nestable(
        tmp_path,
        [
            {"name": "a", "args": {"x": 1}, "ts": 524, "ph": "b"},
            {"name": "c", "args": {}, "ts": 525, "ph": "n"},
            {"name": "b", "args": {"z": 3}, "ts": 525, "ph": "e"},
            {"name": "a", "args": {"y": 2}, "ts": 565, "ph": "e"},
        ],
    )
    (a,) = _named(st, "a")
    assert st.dur[a] == 41_000 and not st.unfinished
    assert st.problems == {"async e without a matching b": 1}
    (b,) = _named(st, "b")  # drawn from the first event of its id (524) to it
    assert (st.start[b], st.end[b]) == (524_000, 525_000) and st.args(b) == {"z": 3}


def test_catapult_nestable_same_id_other_category(tmp_path: Path) -> None:
    """nestableAsyncSameIDDifferentCategory: two slices, not nested."""
    st = _nestable(
        tmp_path,
        [
            {"name": "EVENT_A", "ts": 500, "ph": "b"},
            {"name": "EVENT_B", "cat": "bar", "ts": 550, "ph": "b"},
            {"name": "EVENT_B", "cat": "bar", "ts": 600, "ph": "e"},
            {"name": "EVENT_A", "ts": 650, "ph": "e"},
        ],
    )
    assert sorted((st.name_of(i), st.row_of(i)) for i in range(len(st))) == [("EVENT_A", 0), ("EVENT_B", 0)]


@pytest.mark.parametrize(("scope", "slices"), [("local", 2), ("global", 1)])
def test_catapult_local_and_global_ids(tmp_path: Path, scope: str, slices: int) -> None:
    """processLocalAsync / globalAsync: id2.local is per process, id2.global is one id everywhere."""
    events = [
        {"name": "a", "pid": 52, "tid": 53, "ts": 524, "ph": "b"},
        {"name": "b", "pid": 54, "tid": 55, "ts": 525, "ph": "b", "args": {"x": 1}},
        {"name": "b", "pid": 54, "tid": 55, "ts": 560, "ph": "e", "args": {"y": 2}},
        {"name": "a", "pid": 52, "tid": 53, "ts": 565, "ph": "e"},
    ]
    for e in events:
        e.update(cat="foo", id2={scope: 72})
    st = load_trace(write_events(tmp_path, events))
    assert not st.unfinished and not st.problems
    assert len({st.track_of(i).id for i in range(len(st))}) == slices
    (b,) = _named(st, "b")
    assert st.args(b) == {"x": 1, "y": 2}


def test_legacy_steps_as_catapult_makes_them(tmp_path: Path) -> None:
    """asyncStepsInOneThread (T: from the step to the next event) and asyncStepEndEvent (p: from the previous)."""
    for ph, want in (("T", (548_000, 12_000)), ("p", (524_000, 24_000))):
        events = [
            {"name": "a", "args": {"z": 3}, "pid": 52, "ts": 560, "cat": "foo", "tid": 53, "ph": "F", "id": 72},
            {"name": "a", "args": {"step": "s1", "y": 2}, "pid": 52, "ts": 548, "cat": "foo", "tid": 53, "ph": ph,
             "id": 72},
            {"name": "a", "args": {"x": 1}, "pid": 52, "ts": 524, "cat": "foo", "tid": 53, "ph": "S", "id": 72},
        ]
        st = load_trace(write_events(tmp_path, events, f"{ph}.json"))
        (a,) = _named(st, "a")
        (s1,) = _named(st, "s1")
        assert (st.start[a], st.dur[a]) == (524_000, 36_000) and st.args(a) == {"x": 1, "z": 3}
        assert (st.start[s1], st.dur[s1]) == want and st.args(s1) == {"step": "s1", "y": 2}


# -- what Perfetto's JSON parser tests read (test/trace_processor/diff_tests/parser/json/tests.py) -----------


def test_perfetto_trailing_commas_inside_events() -> None:
    """``"args": {"02.step2": 2,}``: Perfetto's test_args_ordered expects both slices and their args; the reader
    took it for malformed JSON and the file exited 2 with nothing read."""
    p = real_trace("perfetto_json_args_ordered.json")
    st = load_trace(p)
    assert not st.lost and not st.problems
    assert [(st.name_of(i), st.args(i)) for i in range(len(st))] == [
        ("Event1", {"02.step2": 2}),
        ("Event2", {"01.step1": 1, "02.step2": 2}),
    ]
    assert all(st.start[i] == 40_000_000 for i in range(len(st)))


def test_trailing_commas_never_touch_strings(tmp_path: Path) -> None:
    """Commas inside strings stay; commas before a closing brace or bracket go, in every batch of a long file."""
    ev = '{"ph":"X","name":"a,}","ts":%d,"dur":1,"pid":1,"tid":1,"args":{"s":",]","l":[1,2,],},}'
    p = tmp_path / "t.json"
    p.write_text("[" + ",\n".join(ev % i for i in range(0, 40_000, 2)) + ",]")
    st = load_trace(p)
    assert len(st) == 20_000 and not st.lost
    assert st.name_of(0) == "a,}" and st.args(19_999) == {"s": ",]", "l": [1, 2]}


def test_perfetto_phase_read_from_its_first_character() -> None:
    """``"ph": "XXX"`` with string pid and tid: Perfetto's test_string_pid_tid (and test_decimal_timestamp_slices)
    expects one slice at ts 5100 ns, dur 500100 ns."""
    st = load_trace(real_trace("perfetto_json_string_pid_tid.json"))
    assert len(st) == 1 and st.phase_counts == {"X": 1}
    assert (st.start[0], st.dur[0], st.name_of(0)) == (5_100, 500_100, "name.exec")
    assert (st.tracks[0].pid, st.tracks[0].tid) == ("foo", "bar")

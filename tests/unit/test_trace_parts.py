"""The headless parts issue 24 added: exact time, the event stream, axis labels, area aggregation, several files,
metrics from a recording. Each is checked against an independent computation (decimal arithmetic, brute force)."""

from __future__ import annotations

import io
import json
import random
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import msgspec
import pytest

from neuron_top.trace import load_trace
from neuron_top.trace.aggregate import aggregate
from neuron_top.trace.columns import Window, axis_ticks
from neuron_top.trace.jsonstream import EventStream
from neuron_top.trace.loaders import load_traces, trace_files
from neuron_top.trace.merge import file_label
from neuron_top.trace.metrics import build_metrics, parse_offset
from neuron_top.trace.timeparse import SAFE_US, decimal_ns, ns_list, start_end_ns, to_ns
from tests.trace_helpers import DATA, real_trace, write_events, x

# -- exact time ---------------------------------------------------------------------------------------------------


def _exact(text: str) -> int:
    """Nanoseconds by Decimal, ties to even: the reference for decimal_ns."""
    return int((Decimal(text) * 1000).to_integral_value())


@pytest.mark.parametrize(
    "text",
    ["0", "1", "-1", "12.5", "1712195495519689.047", "1124609194129.6716", "2191104876.1554728", "1.0005",
     "1.0015", "-2.5e-3", "1e3", "1.5E+2", ".5", "5.", "+7.25", "0.0000001", "123456789012345678.999"],
)
def test_decimal_ns_is_exact(text: str) -> None:
    assert decimal_ns(text) == _exact(text)


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "1e", "--1", "١٢٣", "1_000", "0x10", "nan", "inf"])
def test_decimal_ns_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        decimal_ns(bad)


def test_every_path_gives_the_same_nanosecond() -> None:
    """One rule for every phase: floats in the safe range, 3-decimal text in bulk, any text one by one."""
    rnd = random.Random(5)
    for _ in range(2000):
        us = rnd.randrange(0, int(SAFE_US) * 1000) / 1000
        text = f"{us:.3f}"
        want = _exact(text)
        assert to_ns(float(text)) == want
        assert to_ns(text) == want
        assert ns_list([text, text]) == [want, want]
        assert ns_list([float(text), float(text)]) == [want, want]
    big = ["1712195495519689.047", "1712195495519695.812", "4458676522690.655"]
    assert ns_list(big) == [_exact(t) for t in big]


def test_start_end_of_complete_events() -> None:
    assert start_end_ns([1.5, 2], [0.25, 3]) == ([1500, 2000], [1750, 5000])
    assert start_end_ns(["1712195495519689.047"], ["63.813"]) == ([1712195495519689047], [1712195495519752860])
    with pytest.raises(ValueError):
        start_end_ns([1, 2], [1, -1])


# -- the event stream -----------------------------------------------------------------------------------------------


def _stream(data: bytes, chunk: int) -> EventStream[msgspec.Raw]:
    return EventStream(io.BytesIO(data), msgspec.json.Decoder(list[msgspec.Raw]).decode, chunk)


def _events(s: EventStream[msgspec.Raw]) -> list[dict]:
    return [json.loads(bytes(e)) for batch, _ in s for e in batch]


@pytest.mark.parametrize("chunk", [16, 100, 4096])
@pytest.mark.parametrize("indent", [None, 2])
def test_stream_finds_the_array_among_other_keys(chunk: int, indent: int | None) -> None:
    events = [{"ph": "X", "name": f"e{k}", "args": {"l": [{"a": k}, {"b": "},{"}]}} for k in range(40)]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": events,
           "stackFrames": {str(k): {"name": "f"} for k in range(30)}, "samples": [{"s": k} for k in range(30)],
           "traceName": "t"}
    s = _stream(json.dumps(doc, indent=indent).encode(), chunk)
    assert _events(s) == events
    assert s.lost == 0 and s.form == "object"
    assert s.meta["traceName"] == "t" and s.meta["schemaVersion"] == 1
    assert s.extra == {"stackFrames": 30, "samples": 30}


@pytest.mark.parametrize("chunk", [16, 64, 4096])
def test_stream_skips_a_broken_event_and_keeps_the_rest(chunk: int) -> None:
    good = [json.dumps({"ph": "X", "name": f"e{k}", "args": {"k": k}}) for k in range(20)]
    text = "[\n" + ",\n".join([*good[:7], '{"ph":"X","name":"bad","args":{"k": [1,}', *good[7:]]) + "\n]"
    s = _stream(text.encode(), chunk)
    assert [e["name"] for e in _events(s)] == [f"e{k}" for k in range(20)]
    assert s.lost == 1


def test_stream_cut_off_object() -> None:
    s = _stream(b'{"displayTimeUnit": "ns", "traceEvents": [{"ph":"X"},{"ph":"B"},{"ph":"E", "na', 8)
    assert [e["ph"] for e in _events(s)] == ["X", "B"]
    assert s.lost == 1 and s.lost_reasons == {"cut off at the end of the file": 1}


def test_stream_not_json() -> None:
    s = _stream(b"hello", 8)
    assert _events(s) == [] and s.lost == 1


# -- axis labels ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [0, 1_122_420_000_000_000_000, 1_712_195_495_519_689_047])
def test_tick_labels_are_always_distinct(origin: int) -> None:
    rnd = random.Random(origin % 1000)
    for _ in range(300):
        span = rnd.choice([50, 1_000, 37_000, 1_000_000, 123_456_789, 10**10, 10**12])
        t0 = origin + rnd.randrange(0, 10**13)
        width = rnd.choice([40, 80, 150])
        for absolute in (False, True):
            base, ticks = axis_ticks(Window(t0, t0 + span, width), origin, absolute=absolute)
            labels = [label for _, label in ticks]
            assert len(set(labels)) == len(labels), (span, t0, labels)
            assert all(len(label) <= 10 for label in labels), labels
            if base:
                assert all(label.startswith("+") for label in labels)


# -- area aggregation -----------------------------------------------------------------------------------------------


def _brute(st, t0: int, t1: int, tracks: set[int] | None = None) -> dict[str, tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    out: dict[str, list[int]] = defaultdict(list)
    for i in range(len(st)):
        if tracks is not None and st.track_of(i).id not in tracks:
            continue
        if st.end[i] >= t0 and st.start[i] < t1:
            out[st.name_of(i)].append(st.dur[i])
    return {k: (len(v), sum(v), max(v)) for k, v in out.items()}


@pytest.mark.parametrize("name", ["trace_small.json", "kineto", "fuchsia"])
def test_aggregate_matches_brute_force(name: str) -> None:
    path = {
        "trace_small.json": DATA / "trace_small.json",
        "kineto": real_trace("hta_kineto_alexnet_trace.json.gz"),
        "fuchsia": real_trace("catapult_nestable_async.json"),
    }[name]
    st = load_trace(path)
    rnd = random.Random(3)
    for _ in range(20):
        a, b = sorted(rnd.randrange(st.t_min - 10, st.t_max + 10) for _ in range(2))
        tracks = None if rnd.random() < 0.5 else {t.id for t in st.tracks if rnd.random() < 0.5}
        rows = aggregate(st, a, b, tracks)
        got = {r.name: (r.count, r.total, r.max) for r in rows}
        assert got == _brute(st, a, b, tracks)
        for r in rows:
            assert st.name_of(r.longest) == r.name and st.dur[r.longest] == r.max
        assert [r.total for r in rows] == sorted((r.total for r in rows), reverse=True)


# -- several files ----------------------------------------------------------------------------------------------------


def test_two_ranks_on_one_wall_clock() -> None:
    paths = [real_trace("hta_trace_filter_sampled_rank-0.json.gz"), real_trace("hta_trace_filter_sampled_rank-1.json.gz")]
    one = [load_trace(p) for p in paths]
    st = load_traces(paths)
    assert st.metadata["files"] == "2" and st.metadata["alignment"] == "one wall clock"
    assert len(st) == sum(len(s) for s in one)
    assert st.t_min == min(s.t_min for s in one) and st.t_max == max(s.t_max for s in one)
    assert {t.file for t in st.tracks} == {"rank 0", "rank 1"}
    # every event keeps its own time, name and args
    for s, label in zip(one, ("rank 0", "rank 1"), strict=True):
        mine = sorted((st.start[i], st.name_of(i)) for i in range(len(st)) if st.track_of(i).file == label)
        assert mine == sorted((s.start[i], s.name_of(i)) for i in range(len(s)))


def test_monotonic_clocks_are_aligned_at_their_starts(tmp_path: Path) -> None:
    a = write_events(tmp_path, [x("a", 100, 5), x("a2", 200, 5)], "a.json")
    b = write_events(tmp_path, [x("b", 5000, 5, ret=7)], "b.json")
    st = load_traces([a, b])
    assert st.metadata["alignment"].startswith("aligned at their starts")
    starts = {st.name_of(i): st.start[i] for i in range(len(st))}
    assert starts == {"a": 100_000, "a2": 200_000, "b": 100_000}
    assert [st.name_of(e) for e in st.errors] == ["b"]
    assert [t.file for t in st.tracks] == ["a", "b"]


def test_a_directory_of_traces_and_an_unreadable_one(tmp_path: Path) -> None:
    write_events(tmp_path, [x("a", 0, 5)], "rank0.json")
    write_events(tmp_path, [x("b", 0, 5)], "rank1.json")
    (tmp_path / "broken.json").write_text("garbage")
    assert [p.name for p in trace_files([tmp_path])] == ["broken.json", "rank0.json", "rank1.json"]
    st = load_traces([tmp_path])
    assert len(st) == 2 and st.metadata["files"] == "2"
    assert any("not opened" in u and "broken.json" in u for u in st.unread)


def test_file_labels() -> None:
    assert file_label(load_trace(real_trace("hta_trace_filter_sampled_rank-1.json.gz")), "x.json") == "rank 1"
    assert file_label(load_trace(DATA / "trace_small.json"), "t.json") == "ndet_20240101_4000_i-00000007abcdef.txt"
    assert file_label(load_trace(real_trace("catapult_simple_trace.json")), "/a/b/simple.json.gz") == "simple"


# -- metrics from a recording -------------------------------------------------------------------------------------------


def test_parse_offset() -> None:
    assert [parse_offset(t) for t in ("+2.5s", "-300ms", "1500us", "250ns", "2m", "1.5")] == [
        2_500_000_000, -300_000_000, 1_500_000, 250, 120_000_000_000, 1_500_000_000]
    with pytest.raises(ValueError):
        parse_offset("soon")


def test_metrics_values_come_from_the_reports(tmp_path: Path) -> None:
    from neuron_top.recording.writer import RecordingWriter
    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import generate

    t0 = 1_700_000_000.0
    reports = generate("trn1.32xlarge", 2, 12)
    rec = tmp_path / "rec.ndjson"
    with RecordingWriter(rec, append=False) as w:
        for i, data in enumerate(reports):
            w.write(data, t0 + i)
    events = [{"ph": "X", "name": "step", "ts": int((t0 + 2) * 1e6) + k * 1000, "dur": 500, "pid": 1, "tid": 1}
              for k in range(5000)]  # 2 s to 7 s into the recording
    st = load_trace(write_events(tmp_path, events))
    m = build_metrics(st, rec)
    assert m.matched and m.reports == 7  # reports 1..7 bracket the trace (2 s to 6.9995 s)
    vcpu = next(c for c in m.counters if c.name == "vCPU busy (average)")
    snaps = [snapshot_from(d, t0 + i) for i, d in enumerate(reports)]
    want = [sum(100 - v.idle for _, v in s.vcpus) / len(s.vcpus) for s in snaps[1:8]]
    assert list(vcpu.val) == pytest.approx(want)
    assert list(vcpu.ts) == [round((t0 + i) * 1e9) for i in range(1, 8)]

"""Trace loaders: the real fixtures (counts from SOURCES.md), the repo's own small trace, and edge cases."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neuron_top.trace import TraceError, jsonstream, load_trace, sniff_format
from neuron_top.trace.loaders import load_traces
from neuron_top.trace.store import ERROR, UNFINISHED
from tests.trace_helpers import DATA, ROOT, phase_counts, real_trace, write_events, x

# -- real traces (tests/fixtures/traces; counts by the standard library's json, SOURCES.md) ---------------

REAL = [
    "catapult_main_thread_has_unclosed_slices.json.gz",
    "catapult_multiple_input_latency.json.gz",
    "catapult_x_event_trace.json.gz",
    "catapult_simple_trace.json",
    "catapult_fuchsia_trace.json.gz",
    "catapult_perf_sampling_trace_with_trace_events.json.gz",
    "catapult_nestable_async.json",
    "catapult_async_begin_end.json",
    "catapult_flow_simple.json",
    "catapult_nanoseconds.json",
    "perfetto_flow_events_json_v1.json",
    "perfetto_flow_events_json_v2.json",
    "hta_kineto_alexnet_trace.json.gz",
    "hta_nccl_parser_config_nccl_data.json.gz",
    "hta_ns_resolution_rank-0.pt.trace.json.gz",
    "hta_trace_filter_sampled_rank-0.json.gz",
]


@pytest.mark.parametrize("name", REAL)
def test_every_event_of_a_real_trace_is_read(name: str) -> None:
    """Every event the standard library finds is counted, per phase, and nothing is lost."""
    path = real_trace(name)
    st = load_trace(path)
    assert {k: v for k, v in st.phase_counts.items() if not k.startswith("system ")} == phase_counts(path)
    assert st.lost == 0 and not st.unread
    _assert_rows_disjoint(st)


def test_counts_from_sources() -> None:
    """The counts SOURCES.md gives for the copied real traces (computed at their source, independently)."""
    want = {
        "catapult_main_thread_has_unclosed_slices.json.gz": (3386, {"B": 1684, "E": 1680, "M": 22}),
        "catapult_multiple_input_latency.json.gz": (
            18023,
            {"X": 8011, "s": 902, "t": 2188, "f": 871, "S": 1180, "T": 902, "F": 1149, "i": 2803, "M": 17},
        ),
        "catapult_x_event_trace.json.gz": (4027, {"X": 2799, "B": 442, "E": 442, "C": 42, "i": 59, "M": 9}),
        "catapult_simple_trace.json": (37, {"C": 5, "B": 8, "E": 8, "X": 4, "I": 6, "P": 3, "M": 3}),
        "hta_kineto_alexnet_trace.json.gz": (1408, {"X": 868, "s": 155, "f": 345, "i": 2, "M": 38}),
        "speedscope_simple-partial-trailing-comma.json": (6, {"B": 2, "E": 2, "X": 2}),
    }
    for name, (total, phases) in want.items():
        st = load_trace(real_trace(name))
        assert sum(st.phase_counts.values()) == total, name
        for ph, n in phases.items():
            assert st.phase_counts[ph] == n, (name, ph)


def test_unclosed_slices_are_the_hang_signal() -> None:
    st = load_trace(real_trace("catapult_main_thread_has_unclosed_slices.json.gz"))
    assert len(st.unfinished) == 4
    assert len(st.tracks) == 22
    assert 5.0e9 < st.t_max - st.t_min < 5.1e9
    for ev in st.unfinished:
        assert st.end[ev] == st.t_max  # extended to the trace end
        assert st.flags_of(ev) & UNFINISHED
    assert st.problems["E without begin"] == 0


def test_multiple_input_latency_object_form_flows_and_async() -> None:
    st = load_trace(real_trace("catapult_multiple_input_latency.json.gz"))
    assert st.flow_count > 800
    assert any(t.kind == "async" for t in st.tracks)
    assert 17.8e9 < st.t_max - st.t_min < 18.0e9
    assert {t.process for t in st.tracks} == {"Browser", "Renderer 18811", "Renderer 18931"}  # two renderers


def test_x_event_trace_counters() -> None:
    st = load_trace(real_trace("catapult_x_event_trace.json.gz"))
    assert sum(len(c.ts) for c in st.counters) >= 42


def test_simple_trace_event_without_pid_and_tid() -> None:
    st = load_trace(real_trace("catapult_simple_trace.json"))
    kinds = {t.kind for t in st.tracks}
    assert "global" in kinds and "process" in kinds
    assert len(st.counters) == 1 and list(st.counters[0].val) == [10, 1, 5, 1, 10]


def test_kineto_string_pids_epoch_us_and_flows() -> None:
    st = load_trace(real_trace("hta_kineto_alexnet_trace.json.gz"))
    assert st.format == "kineto"
    assert any(isinstance(t.pid, str) for t in st.tracks)
    assert st.t_min > 1.6e18  # epoch microseconds -> nanoseconds, still int64
    assert st.flow_count > 0
    assert any(t.source == "device" for t in st.tracks)  # GPU kernels / memcpy streams
    assert max(len(s) for s in st.strings) > 1000  # kernel names several KB long survive


def test_partial_file_without_closing_bracket() -> None:
    st = load_trace(real_trace("speedscope_simple-partial-trailing-comma.json"))
    names = sorted(st.name_of(i) for i in range(len(st)))
    assert names == ["alpha", "beta", "epsilon", "gamma"]
    (ev,) = st.unfinished
    assert st.name_of(ev) == "epsilon"  # "tdur" but no "dur"


# -- the repo's own small trace (always present) --------------------------------------------------------------


def test_small_neuron_det_trace() -> None:
    st = load_trace(DATA / "trace_small.json")
    assert st.format == "neuron-det"
    assert sorted(t.core for t in st.tracks) == [0, 1, 2, 3]
    assert all(t.source == "device" for t in st.tracks)
    assert [st.name_of(e) for e in st.unfinished] == ["nrt_execute", "nc_exec"]
    assert sorted(st.name_of(e) for e in st.errors) == ["nc_exec", "numerical_error"]
    assert st.tracks[0].instance.startswith("i-")
    # nesting: nrt_execute > sync_exec > nc_exec
    tr = next(t for t in st.tracks if t.core == 0)
    tops = [st.name_of(i) for i in range(*tr.rows[0])]
    assert set(tops) == {"nrt_execute"}
    assert {st.name_of(i).split(" ")[0] for i in range(*tr.rows[1])} == {"sync_exec"}


# -- generated edge cases ---------------------------------------------------------------------------------------


def _assert_rows_disjoint(st) -> None:  # type: ignore[no-untyped-def]
    for tr in st.tracks:
        for lo, hi in tr.rows:
            for k in range(lo, hi - 1):
                assert st.start[k] <= st.start[k + 1]
                assert st.end[k] <= st.start[k + 1]


def test_array_object_and_gzip_forms_agree(tmp_path: Path) -> None:
    events = [x("a", 0, 10), x("b", 2, 3), x("c", 20, 5, tid=2)]
    arr = load_trace(write_events(tmp_path, events, "a.json"))
    obj = load_trace(write_events(tmp_path, events, "o.json", form="object"))
    gz = tmp_path / "g.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(events).encode()))
    gzs = load_trace(gz)
    for st in (arr, obj, gzs):
        assert len(st) == 3 and len(st.tracks) == 2
        assert st.t_min == 0 and st.t_max == 25_000
    assert sniff_format(gz) == "chrome"


def test_missing_bracket_and_trailing_comma(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(
        '[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},\n{"ph":"X","name":"b","ts":5,"dur":1,"pid":1,"tid":1},\n'
    )
    st = load_trace(p)
    assert len(st) == 2 and not st.problems


def test_trailing_comma_before_bracket(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},]')
    assert len(load_trace(p)) == 1


def test_truncated_last_event_is_counted_not_fatal(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},{"ph":"X","name":"b","ts":3,"du')
    st = load_trace(p)
    assert len(st) == 1
    assert st.lost == 1 and st.lost_reasons == {"cut off at the end of the file": 1}


@pytest.mark.parametrize("content", [b"", b"   \n"])
def test_empty_file_is_a_one_line_error(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "e.json"
    p.write_bytes(content)
    with pytest.raises(TraceError, match="empty file") as exc:
        load_trace(p)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("content", [b"\x00\x01garbage\xff", b"hello world", b'{"a": 1}', b"PK\x03\x04zip"])
def test_garbage_is_a_one_line_error(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "g.bin"
    p.write_bytes(content)
    with pytest.raises(TraceError, match="not a trace") as exc:
        load_trace(p)
    assert "\n" not in str(exc.value)


def test_malformed_array_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    p.write_text("[{{{ not json")
    with pytest.raises(TraceError):
        load_trace(p)


@pytest.mark.parametrize(
    ("content", "kind"),
    [(b"[\n  [26610600797803700, 0.14],\n  [26610610797803800, 0.21]\n]", "arrays"), (b"[1, 2, 3]", "numbers"),
     (b'["a", "b"]', "strings")],
)
def test_an_array_of_something_else_is_not_called_malformed(tmp_path: Path, content: bytes, kind: str) -> None:
    """Valid JSON that is not a trace (catapult's dashboard_test_points.json, HTA's memory_timeline.raw.gz: arrays
    of arrays) was reported as "malformed JSON"."""
    p = tmp_path / "points.json"
    p.write_bytes(content)
    with pytest.raises(TraceError, match=f"not a trace file: a JSON array of {kind}, not of trace events"):
        load_trace(p)


def test_corrupt_gzip_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "c.json.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(TraceError):
        load_trace(p)


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read"):
        load_trace(tmp_path / "nope.json")


def test_empty_array_is_an_empty_trace(tmp_path: Path) -> None:
    st = load_trace(write_events(tmp_path, []))
    assert len(st) == 0 and st.tracks == []


def test_unmatched_begin_and_end(tmp_path: Path) -> None:
    events = [
        {"ph": "B", "name": "outer", "ts": 0, "pid": 1, "tid": 1},
        {"ph": "B", "name": "inner", "ts": 1, "pid": 1, "tid": 1},
        {"ph": "E", "ts": 2, "pid": 1, "tid": 1},
        {"ph": "E", "ts": 5, "pid": 1, "tid": 2},  # E without B on another thread
        x("late", 9, 1, tid=1),
    ]
    st = load_trace(write_events(tmp_path, events))
    assert st.problems["E without begin"] == 1
    (ev,) = st.unfinished
    assert st.name_of(ev) == "outer" and st.end[ev] == st.t_max == 10_000
    inner = next(i for i in range(len(st)) if st.name_of(i) == "inner")
    assert (st.start[inner], st.end[inner]) == (1000, 2000)


def test_begin_end_out_of_file_order(tmp_path: Path) -> None:
    events = [
        {"ph": "E", "ts": 4, "pid": 1, "tid": 1},
        {"ph": "B", "name": "a", "ts": 1, "pid": 1, "tid": 1},
    ]
    st = load_trace(write_events(tmp_path, events))
    assert len(st) == 1 and not st.unfinished and not st.problems
    assert st.dur[0] == 3000


def test_negative_duration_dropped_and_counted(tmp_path: Path) -> None:
    st = load_trace(write_events(tmp_path, [x("ok", 0, 5), x("bad", 1, -3)]))
    assert len(st) == 1 and st.problems["negative duration"] == 1


def test_x_without_dur_is_unfinished(tmp_path: Path) -> None:
    st = load_trace(write_events(tmp_path, [x("hang", 0, None), x("other", 1, 50, tid=2)]))
    (ev,) = st.unfinished
    assert st.name_of(ev) == "hang" and st.end[ev] == 51_000


def test_partial_overlap_goes_to_an_overflow_lane(tmp_path: Path) -> None:
    events = [x("a", 0, 10), x("b", 5, 10), x("c", 6, 2), x("d", 30, 1)]
    st = load_trace(write_events(tmp_path, events))
    tr = st.tracks[0]
    assert len(tr.rows) == 3  # a,d | c (child of b? no: c nests in a) | b in the overflow lane
    assert st.problems["partially overlapping events (overflow lane)"] == 1
    _assert_rows_disjoint(st)
    by_name = {st.name_of(i): st.row_of(i) for i in range(len(st))}
    assert by_name["a"] == by_name["d"] == 0
    assert by_name["b"] == 2


def test_equal_start_parent_and_child_nest(tmp_path: Path) -> None:
    # the child is written first: sorting must put the longer event first
    st = load_trace(write_events(tmp_path, [x("child", 0, 2), x("parent", 0, 10)]))
    rows = {st.name_of(i): st.row_of(i) for i in range(len(st))}
    assert rows == {"parent": 0, "child": 1}
    assert not st.problems


def test_string_pids_and_tids(tmp_path: Path) -> None:
    events = [
        x("a", 0, 1, pid="Spans", tid="PyTorch Profiler"),
        x("b", 0, 1, pid="", tid=""),
        x("c", 0, 1, pid=7, tid="7"),
        x("d", 2, 1, pid="7", tid=7),
        x("e", 4, 1, pid=7, tid="07"),
    ]
    st = load_trace(write_events(tmp_path, events))
    # "7" and 7 are one thread, as catapult's thread map keys them (a JavaScript object key); "07" is a name
    assert sorted((str(t.pid), str(t.tid), t.count) for t in st.tracks) == [
        ("", "", 1), ("7", "07", 1), ("7", "7", 2), ("Spans", "PyTorch Profiler", 1)
    ]
    assert {t.pid for t in st.tracks} == {"Spans", "", 7}


def test_numeric_string_timestamps(tmp_path: Path) -> None:
    st = load_trace(
        write_events(tmp_path, [{"ph": "X", "name": "a", "ts": "12.5", "dur": "2", "pid": 1, "tid": 1}])
    )
    assert (st.start[0], st.end[0]) == (12_500, 14_500)


def test_odd_types_do_not_crash(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "name": {"weird": 1}, "ts": 1, "dur": 1, "pid": 1.5, "tid": True},
        [1, 2, 3],
        "string",
        {"ph": "X", "name": "ok", "ts": 2, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "nots", "ts": None, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "huge", "ts": 1e300, "dur": 1, "pid": 1, "tid": 1},
        {"name": "no phase", "ts": 1},
    ]
    st = load_trace(write_events(tmp_path, events))
    assert "ok" in {st.name_of(i) for i in range(len(st))}
    assert st.lost_reasons["event without a valid ts"] == 2 and "event without a valid ts" not in st.problems
    assert st.problems["malformed event"] == 2
    assert st.problems["event without ph"] == 1
    weird = next(i for i in range(len(st)) if st.name_of(i).startswith("{"))
    assert st.track_of(weird).pid == "1.5"


def test_control_characters_in_names_are_kept_raw(tmp_path: Path) -> None:
    st = load_trace(write_events(tmp_path, [x("\x1b[31mred[/]", 0, 1)]))
    assert st.name_of(0) == "\x1b[31mred[/]"  # the UI cleans it; the store keeps the data


def test_many_batches_with_tricky_cut_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small chunks force many cuts; args with '},' and strings with '},{' must not split an event."""
    monkeypatch.setattr(jsonstream, "CHUNK", 256)
    events = [
        x("e" + str(i) + "},{", i * 10, 5, tid=i % 3, nested={"a": [{"b": 1}, {"c": "},"}]}, s="}, {")
        for i in range(400)
    ]
    st = load_trace(write_events(tmp_path, events))
    assert len(st) == 400 and not st.problems
    assert st.args(0)["nested"] == {"a": [{"b": 1}, {"c": "},"}]}


def test_one_event_larger_than_a_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonstream, "CHUNK", 64)
    events = [x("big", 0, 1, blob="z" * 5000), x("small", 2, 1)]
    st = load_trace(write_events(tmp_path, events))
    assert len(st) == 2


def test_instants_counters_metadata_and_flows(tmp_path: Path) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "NC 3"}},
        x("send", 0, 10),
        x("recv", 20, 10, tid=2),
        {"ph": "s", "id": 7, "cat": "f", "name": "flow", "ts": 5, "pid": 1, "tid": 1},
        {"ph": "f", "id": 7, "cat": "f", "name": "flow", "ts": 25, "pid": 1, "tid": 2, "bp": "e"},
        {"ph": "i", "name": "mark", "ts": 3, "pid": 1, "tid": 1, "s": "t"},
        {"ph": "i", "name": "global mark", "ts": 4, "s": "g"},
        {"ph": "C", "name": "mem", "ts": 0, "pid": 1, "args": {"used": 5, "free": 7}},
        {"ph": "C", "name": "mem", "ts": 10, "pid": 1, "args": {"used": 6, "free": 6}},
    ]
    st = load_trace(write_events(tmp_path, events))
    t1 = next(t for t in st.tracks if t.tid == 1)
    assert t1.name == "NC 3" and t1.core == 3 and t1.process == "trainer"
    send = next(i for i in range(len(st)) if st.name_of(i) == "send")
    recv = next(i for i in range(len(st)) if st.name_of(i) == "recv")
    assert st.flows[send] == [recv] and st.flows[recv] == [send]
    assert sorted(c.name for c in st.counters) == ["mem free", "mem used"]
    assert any(t.kind == "global" for t in st.tracks)


def test_error_events_by_ret_and_by_name(tmp_path: Path) -> None:
    events = [
        x("nrt_execute", 0, 5, ret=0),
        x("nrt_execute", 10, 5, ret=1003),
        x("nrt_execute", 20, 5, ret="0"),
        x("nrt_execute", 30, 5, ret="NRT_TIMEOUT"),
        x("numerical_err", 40, 1),
        x("numerical_error", 50, 1),
        x("dma_error", 60, 1),
        x("fine", 70, 1, note='"ret": 5 is in a string'),
    ]
    st = load_trace(write_events(tmp_path, events))
    errs = sorted(st.start[e] // 1000 for e in st.errors)
    assert errs == [10, 30, 40, 50, 60]
    assert all(st.flags_of(e) & ERROR for e in st.errors)


# -- neuron-explorer system_profile.json ------------------------------------------------------------------------

BIG_NS = 1729888371056597613  # above 2**53: a float would change it


def _explorer_profile(tmp_path: Path) -> Path:
    prof = {
        "trace_events": [
            {
                "duration": 27094,
                "group": "nrt-nc-000",
                "id": 1,
                "instance_id": "i-0abc",
                "lnc_idx": "0",
                "name": "nrt_tensor_write",
                "parent_id": 0,
                "process_id": "1627711",
                "size": "4",
                "thread_id": 1627711,
                "timestamp": BIG_NS,
                "type": 11,
            },
            {
                "duration": 1000,
                "group": "nrt-nc-001",
                "id": 2,
                "instance_id": "i-0abc",
                "name": "nrt_execute",
                "process_id": "1627711",
                "thread_id": 1627711,
                "timestamp": BIG_NS + 1,
                "type": 3,
                "ret": 1003,
            },
            {
                "duration": 500,
                "group": "framework-1627712",
                "id": 3,
                "instance_id": "i-0abc",
                "name": "forward",
                "process_id": "1627711",
                "thread_id": 1627712,
                "timestamp": BIG_NS + 3,
                "type": 99999,
            },
            {
                "group": "nrt-nc-001",
                "id": 4,
                "instance_id": "i-0abc",
                "name": "nrt_execute",
                "process_id": "1627711",
                "thread_id": 1627711,
                "timestamp": BIG_NS + 5000,
            },
        ],
        "mem_usage": [
            {
                "duration": 1,
                "instance_id": "i-0abc",
                "percent_usage": 10.0,
                "timestamp": BIG_NS,
                "usage": 100,
            },
            {
                "duration": 1,
                "instance_id": "i-0abc",
                "percent_usage": 20.0,
                "timestamp": BIG_NS + 9,
                "usage": 200,
            },
        ],
        "cpu_util": [
            {"cpu_id": 0, "duration": 1, "instance_id": "i-0abc", "timestamp": BIG_NS, "util": 50.0}
        ],
    }
    p = tmp_path / "system_profile.json"
    p.write_text(json.dumps(prof))
    return p


def test_explorer_json(tmp_path: Path) -> None:
    p = _explorer_profile(tmp_path)
    assert sniff_format(p) == "neuron-explorer-json"
    st = load_trace(p)
    assert st.format == "neuron-explorer-json"
    assert st.t_min == BIG_NS  # exact: int64, never a float
    w = next(i for i in range(len(st)) if st.name_of(i) == "nrt_tensor_write")
    assert st.start[w] == BIG_NS and st.end[w] == BIG_NS + 27094
    assert st.args(w)["tensor_name" if "tensor_name" in st.args(w) else "size"] == "4"
    cores = {t.name: t.core for t in st.tracks}
    assert cores == {"nrt-nc-000": 0, "nrt-nc-001": 1, "framework-1627712": None}
    assert [st.name_of(e) for e in st.errors] == ["nrt_execute"]
    assert len(st.unfinished) == 1  # no duration
    assert sorted(c.name for c in st.counters) == ["cpu 0 util", "host memory used"]
    assert all(t.instance == "i-0abc" for t in st.tracks)


def test_explorer_json_directory(tmp_path: Path) -> None:
    _explorer_profile(tmp_path)
    assert load_trace(tmp_path).format == "neuron-explorer-json"


def test_explorer_singular_trace_event_key(tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    p.write_text(
        json.dumps(
            {
                "trace_event": [
                    {
                        "name": "nrt_load",
                        "timestamp": 5,
                        "duration": 2,
                        "timestamp_unit": "us",
                        "process_id": "9",
                        "nc_idx": 2,
                        "exec_id": 1,
                    }
                ]
            }
        )
    )
    st = load_trace(p)
    assert (st.start[0], st.end[0]) == (5000, 7000)
    assert st.tracks[0].core == 2


# -- neuron-explorer Parquet ------------------------------------------------------------------------------------


def _write_parquet(tmp_path: Path) -> Path:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    events = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "name": ["nrt_execute", "nc_exec_running", "numerical_err", "forward"],
            "start_ts": pa.array([BIG_NS, BIG_NS + 10, BIG_NS + 20, BIG_NS - 100], pa.int64()),
            "end_ts": pa.array([BIG_NS + 1000, BIG_NS + 900, BIG_NS + 21, None], pa.int64()),
            "duration_ns": pa.array([1000, 890, 1, None], pa.int64()),
            "trace_event_source": ["neuron_rt", "neuron_hw", "neuron_hw", "framework"],
            "instance_id": ["i-0abc"] * 4,
            "process_id": pa.array([77] * 4, pa.int64()),
            "thread_id": pa.array([78, 0, 0, 79], pa.int64()),
            "nc_idx": pa.array([0, 0, 0, None], pa.int64()),
            "pcore_idx": pa.array([None, 4, 4, None], pa.int64()),
            "worker_gid": pa.array([0, 0, 0, 0], pa.int64()),
            "flow_id": pa.array([[11], [11], [], [11]], pa.list_(pa.int64())),
            "framework_stream_id": pa.array([None, None, None, 3], pa.int64()),
            "extra_attributes_json": ['{"neff": "model.neff"}', None, '{"ret": 1003}', "not json"],
        }
    )
    pq.write_table(events, tmp_path / "SystemProfileEvents.parquet")
    hbm = pa.table(
        {
            "timestamp_ns": pa.array([BIG_NS, BIG_NS, BIG_NS + 500, BIG_NS + 500], pa.int64()),
            "hbm_idx": [0, 0, 0, 0],
            "category": ["tensors", "code", "tensors", "code"],
            "bytes": pa.array([100, 50, 300, 50], pa.int64()),
        }
    )
    pq.write_table(hbm, tmp_path / "SystemProfileHbmUsage.parquet")
    pq.write_table(
        pa.table({"first_ts_ns": pa.array([BIG_NS], pa.int64())}), tmp_path / "SystemProfileMetadata.parquet"
    )
    return tmp_path / "SystemProfileEvents.parquet"


def test_parquet_events_hbm_and_flows(tmp_path: Path) -> None:
    p = _write_parquet(tmp_path)
    assert sniff_format(p) == "parquet"
    st = load_trace(p)
    assert st.format == "neuron-explorer-parquet"
    assert st.t_min == BIG_NS - 100
    labels = {t.name: (t.core, t.source) for t in st.tracks}
    assert labels["neuron_rt/NC:0"] == (0, "cpu")
    assert labels["neuron_hw/NC0:4"] == (0, "device")
    assert sorted(st.name_of(e) for e in st.errors) == ["numerical_err"]
    assert [st.name_of(e) for e in st.unfinished] == ["forward"]
    assert st.flow_count == 2  # forward -> nrt_execute -> nc_exec_running (by start time)
    (hbm,) = st.counters
    assert list(hbm.val) == [150.0, 350.0]
    assert hbm.breakdown == [{"tensors": 100.0, "code": 50.0}, {"tensors": 300.0, "code": 50.0}]
    assert st.metadata["first_ts_ns"] == str(BIG_NS)
    nrt = next(i for i in range(len(st)) if st.name_of(i) == "nrt_execute")
    assert st.args(nrt)["neff"] == "model.neff"
    assert load_trace(tmp_path).format == "neuron-explorer-parquet"  # the output directory works too


def test_parquet_without_pyarrow_is_one_line(tmp_path: Path) -> None:
    p = _write_parquet(tmp_path)
    code = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None\n"
        "from neuron_top.trace import load_trace, TraceError\n"
        f"try:\n    load_trace({str(p)!r})\nexcept TraceError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "reading Parquet traces needs pyarrow: pip install 'neuron-top[parquet]'"


def test_unreadable_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    p = tmp_path / "x.parquet"
    p.write_bytes(b"PAR1 this is not really parquet")
    with pytest.raises(TraceError, match="unreadable Parquet"):
        load_trace(p)


def test_small_fixture_is_what_the_generator_writes() -> None:
    """The repo's fixture is reproducible (and the generator the benchmark uses is deterministic)."""
    from neuron_top.trace import synth

    assert synth.trace_text(48, cores=4, seed=7, force_error=True) == (DATA / "trace_small.json").read_text()


def test_processes_and_threads_sharing_a_name_are_told_apart_as_perfetto_names_them(tmp_path: Path) -> None:
    """Chrome's two renderers (both "Renderer", each with a "Compositor") were two rows labelled alike and one
    group by process; a process's two "PAC thread #0" read as one thread twice."""
    from neuron_top.trace.model import TimelineModel

    def meta(kind: str, name: str, pid: int, tid: int = 0) -> dict[str, Any]:
        return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {"name": name}}

    path = write_events(tmp_path, [
        meta("process_name", "Renderer", 10), meta("process_name", "Renderer", 20),
        meta("process_name", "Browser", 30),
        meta("thread_name", "Compositor", 10, 11), meta("thread_name", "Compositor", 20, 21),
        meta("thread_name", "PAC thread #0", 30, 31), meta("thread_name", "PAC thread #0", 30, 32),
        x("a", 0, 1, tid=11, pid=10), x("b", 0, 1, tid=21, pid=20),
        x("c", 0, 1, tid=31, pid=30), x("d", 0, 1, tid=32, pid=30),
    ])
    st = load_trace(path)
    assert sorted((t.process, t.label) for t in st.tracks) == [
        ("Browser", "PAC thread #0 31"), ("Browser", "PAC thread #0 32"),
        ("Renderer 10", "Compositor"), ("Renderer 20", "Compositor"),
    ]
    groups = [label for label, _ in TimelineModel(st, "process").groups]
    assert groups == ["Browser", "Renderer 10", "Renderer 20"]


def test_a_cut_gzip_trace_is_read_up_to_the_cut(tmp_path: Path) -> None:
    """A .json.gz cut short (a profiler killed while writing it, a copy taken too early) was refused whole,
    "corrupt gzip data", though a cut plain .json is read up to its last whole event."""
    whole = real_trace("hta_kineto_alexnet_trace.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    st = load_trace(cut)
    assert 300 < len(st) < len(load_trace(real_trace("hta_kineto_alexnet_trace.json.gz")))
    assert st.lost >= 1 and any("gzip data ends early" in u for u in st.unread)
    assert run_check_status(cut) == 2  # not clean: what follows the cut is unknown
    assert not load_trace(real_trace("hta_kineto_alexnet_trace.json.gz")).unread
    stub = tmp_path / "stub.json.gz"
    stub.write_bytes(whole[:15])  # nothing decompresses: still a one-line refusal
    with pytest.raises(TraceError, match="corrupt gzip data"):
        load_trace(stub)


def test_a_gzip_of_several_members_is_read_whole(tmp_path: Path) -> None:
    """``cat a.gz b.gz`` is one valid gzip file: every member is read (the reader that tolerates a cut still
    goes on after each member's end)."""
    events = [x(f"e{i}", i * 10, 5) for i in range(400)]
    text = json.dumps(events).encode()
    p = tmp_path / "two.json.gz"
    p.write_bytes(gzip.compress(text[:1000]) + gzip.compress(text[1000:]))
    st = load_trace(p)
    assert len(st) == 400 and not st.unread and not st.lost
    p.write_bytes(gzip.compress(text) + b"\0" * 100_000)  # zero padding after the last member, as gzip allows
    st = load_trace(p)
    assert len(st) == 400 and not st.unread and not st.lost


def test_a_gzip_whose_first_member_spans_many_reads_is_read_whole(tmp_path: Path) -> None:
    """Two members of ~0.7 MB each: the reader written for cut traces lost the second member's start at the
    joint and called a valid file "corrupt gzip data (invalid distance too far back)", 12,594 of 20,000 events
    (and on a 2 MB file it read 64 KiB after 64 KiB for ever). The recordings' Inflater walks the members now."""
    from neuron_top.trace.gzipread import GzipReader

    text = json.dumps([x(f"e{i}", i * 10, 5) for i in range(20_000)]).encode()
    data = gzip.compress(text[: len(text) // 2]) + gzip.compress(text[len(text) // 2 :])
    p = tmp_path / "two.json.gz"
    p.write_bytes(data)
    st = load_trace(p)
    assert len(st) == 20_000 and not st.unread and not st.lost
    got = []
    with GzipReader(io.BytesIO(data)) as f:
        for _ in range(len(text) // (1 << 16) + 2):  # bounded: the old reader never ended
            chunk = f.read(1 << 16)
            if not chunk:
                break
            got.append(chunk)
    assert b"".join(got) == text


def run_check_status(path: Path) -> int:
    import io

    from neuron_top.trace import run_check

    return run_check([path], io.StringIO(), io.StringIO())


def test_a_load_can_be_given_up_between_batches(tmp_path: Path) -> None:
    """An app quitting while a large trace loads waited for the whole file (7 s for 165 MB, in tmux): the loader
    now asks ``cancelled`` between batches."""
    from neuron_top.trace.errors import LoadCancelled

    path = write_events(tmp_path, [x(f"e{i}", i, 1) for i in range(2000)])
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 1

    with pytest.raises(LoadCancelled):
        load_trace(path, cancelled=cancelled)
    assert len(load_trace(path, cancelled=lambda: False)) == 2000


def test_a_folder_of_one_trace_opens_and_an_empty_one_is_refused_before_the_timeline(tmp_path: Path) -> None:
    """A folder with one trace not named trace.json (a PyTorch profiler's log folder: worker0.<ts>.pt.trace.json)
    was refused, "directory holds no ... trace.json", though a folder of two opened; and a folder of none opened
    the timeline to say so, where a file that is not a trace is refused on the command line."""
    one = tmp_path / "log"
    one.mkdir()
    (one / "worker0.1695835535.pt.trace.json").write_bytes((DATA / "trace_small.json").read_bytes())
    assert len(load_traces([one])) == len(load_trace(DATA / "trace_small.json"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TraceError, match="directory holds no"):
        sniff_format(empty)  # what `neuron-top trace DIR` checks before it starts the timeline

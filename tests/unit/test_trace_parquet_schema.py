"""Neuron Explorer's Parquet output, profile schema 7.x and 12.x, as its Profile Parquet Schema Reference documents
the tables the timeline reads (issue 35, item 5).

No real public profile exists, so the tables are generated here with pyarrow, with the field names and types of
the reference (tools/neuron-explorer/profile-schema-reference.rst): SystemProfileEvents, SystemProfileHbmUsage,
SystemProfileMetadata, CpuUsage, HostMemUsage and Metadata, whose ``profile_schema_version`` says the version
(MAJOR.MINOR.PATCH, MAJOR an incompatible change). The field lists are those of the 7.4.0 reference (SDK 2.31);
the 12.0.1 reference (SDK 2.33) names the same tables and the same Metadata field for the version.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from neuron_top.trace import TraceError, load_trace, run_summary

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

T0 = 1_766_072_156_592_459_482  # the reference's example first_ts_ns: epoch nanoseconds above 2**53
INST = "i-0b1ea78ca2865fd32"
HBM_TYPES = [
    "generic", "tensor_instructions", "scalar_instructions", "gpsimd_instructions", "io", "dram_spill",
    "weights", "profiler_buffers", "scalar_table", "vector_instructions", "sync_instructions",
    "shared_scratchpad", "tensors", "ucode_lib", "gpsimd_stdio", "collectives", "scratchpad",
    "dma_rings_runtime", "dma_rings_spill", "dma_rings_io", "dma_rings_collectives", "unknown",
]


def _i64(values: list[Any]) -> Any:
    return pa.array(values, pa.int64())


def write_profile(folder: Path, version: str | None) -> Path:
    """A system profile's tables as the reference documents them (two NeuronCore events, a framework event
    linked to its runtime event by flow_id, HBM by usage type, CPU per core and average, host memory)."""
    folder.mkdir(parents=True, exist_ok=True)
    events = pa.table({
        "id": _i64([1, 2, 3, 4]),
        "name": ["nrt_execute", "nc_exec_running", "numerical_err", "forward"],
        "start_ts": _i64([T0 + 1_000, T0 + 1_100, T0 + 1_500, T0]),
        "end_ts": _i64([T0 + 9_000, T0 + 8_000, T0 + 1_501, T0 + 10_000]),
        "duration_ns": _i64([8_000, 6_900, 1, 10_000]),
        "trace_event_source": ["neuron_rt", "neuron_hw", "neuron_hw", "framework"],
        "instance_id": [INST] * 4,
        "process_id": _i64([4242] * 4),
        "thread_id": _i64([4243, 4243, 4243, 4244]),
        "nc_idx": _i64([0, 0, 0, None]),
        "pcore_idx": _i64([None, 1, 1, None]),
        "worker_gid": _i64([0, 0, 0, None]),
        "flow_id": pa.array([["7"], None, None, ["7"]], pa.list_(pa.string())),
        "framework_stream_id": pa.array([None, None, None, "4244"], pa.string()),
        "extra_attributes_json": pa.array(['{"neff": "model.neff"}', None, None, None], pa.string()),
    })
    pq.write_table(events, folder / "SystemProfileEvents.parquet")
    hbm: dict[str, Any] = {"timestamp": _i64([T0, T0 + 5_000])}
    used = {"weights": [1_000, 1_000], "tensors": [200, 600]}
    hbm["total_bytes"] = _i64([1_200, 1_600])
    for kind in HBM_TYPES:
        hbm[f"{kind}_bytes"] = _i64(used.get(kind, [0, 0]))
    hbm.update({"device_idx": _i64([0, 0]), "hbm_idx": _i64([1, 1]), "instance_id": [INST, INST]})
    pq.write_table(pa.table(hbm), folder / "SystemProfileHbmUsage.parquet")
    pq.write_table(pa.table({
        "first_ts": ["2025-12-18 15:35:56.592459482 +0000 UTC"], "last_ts": ["2025-12-18 15:35:57.340255583 +0000 UTC"],
        "first_ts_ns": [str(T0)], "last_ts_ns": [str(T0 + 10_000)], "ntff_version": _i64([5]),
        "hbm_capacity_bytes": _i64([16 << 30]),
    }), folder / "SystemProfileMetadata.parquet")
    pq.write_table(pa.table({
        "timestamp": _i64([T0, T0, T0, T0 + 5_000, T0 + 5_000, T0 + 5_000]),
        "util_percent": pa.array([10.0, 30.0, 20.0, 50.0, 70.0, 60.0], pa.float32()),
        "cpu_id": ["0", "1", "average"] * 2,
        "instance_id": [INST] * 6,
        "ultraserver_id": _i64([None] * 6),
        "ultraserver_instance_index": _i64([None] * 6),
    }), folder / "CpuUsage.parquet")
    pq.write_table(pa.table({
        "timestamp": _i64([T0, T0 + 5_000]),
        "used_bytes": _i64([8 << 30, 9 << 30]),
        "used_percent": pa.array([12.5, 14.0625], pa.float32()),
        "instance_id": [INST, INST],
        "ultraserver_id": _i64([None, None]),
        "ultraserver_instance_index": _i64([None, None]),
    }), folder / "HostMemUsage.parquet")
    if version is not None:
        pq.write_table(pa.table({
            "profile_schema_version": [version], "ntff_version": pa.array([5], pa.int32()),
            "num_physical_cores": pa.array([2], pa.int32()), "vnc_enabled": [True],
            "first_hw_timestamp": _i64([T0]), "last_hw_timestamp": _i64([T0 + 10_000]),
            "first_ts": ["2025-12-18 15:35:56+00:00"], "last_ts": ["2025-12-18 15:35:57+00:00"],
            "instance_type": ["trn2.48xlarge"],
        }), folder / "Metadata.parquet")
    return folder


def _summary(path: Path) -> tuple[int, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = run_summary([path], out, err)
    return code, (out.getvalue() + err.getvalue()).splitlines()


@pytest.mark.parametrize("version", ["7.4.0", "12.0.1", "12.3.0"])
def test_documented_system_tables_are_read_and_the_version_is_said(tmp_path: Path, version: str) -> None:
    st = load_trace(write_profile(tmp_path / "profile", version))
    assert st.metadata["profile_schema_version"] == version
    assert st.format_label == f"neuron-explorer-parquet, profile schema {version}"
    names = {st.name_of(i): i for i in range(len(st))}
    assert set(names) == {"nrt_execute", "nc_exec_running", "numerical_err", "forward"}
    assert [st.name_of(e) for e in st.errors] == ["numerical_err"]
    assert st.flows.outgoing(names["forward"]) == [names["nrt_execute"]]  # flow_id "7": framework -> runtime
    assert st.args(names["nrt_execute"])["neff"] == "model.neff"
    counters = {c.name: c for c in st.counters}
    hbm = counters["HBM nd0/1 used"]
    assert list(hbm.val) == [1_200.0, 1_600.0]  # the types' sum, equal to total_bytes (not added to it)
    assert hbm.breakdown == [{"weights": 1_000.0, "tensors": 200.0}, {"weights": 1_000.0, "tensors": 600.0}]
    assert list(counters["host CPU average busy"].val) == [20.0, 60.0]
    assert list(counters["host CPU 1 busy"].val) == [30.0, 70.0] and counters["host CPU 1 busy"].unit == "%"
    assert list(counters["host memory used"].val) == [float(8 << 30), float(9 << 30)]
    assert {c.group for c in st.counters if c.name.startswith("host")} == {"host"}
    assert st.metadata["first_ts_ns"] == str(T0)
    code, lines = _summary(tmp_path / "profile")
    assert code == 0
    assert lines[0] == f"profile: neuron-explorer-parquet, profile schema {version}, 4 events on 3 tracks, 5 counter " \
        "tracks, span 10 µs"


def test_an_unknown_major_is_one_line_naming_the_versions_known(tmp_path: Path) -> None:
    folder = write_profile(tmp_path / "profile", "13.0.0")
    with pytest.raises(TraceError) as e:
        load_trace(folder)
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith(
        "Neuron Explorer profile schema 13.0.0 is not one this neuron-top reads (it reads 7.x and 12.x); "
        "a newer neuron-top may"
    )
    code, lines = _summary(folder)
    assert code == 2 and len(lines) == 1 and "13.0.0" in lines[0]


def test_an_events_table_whose_fields_were_renamed_is_one_line_naming_them(tmp_path: Path) -> None:
    """12.x is read with 7.4.0's field names (the 12.0.1 field list could not be had: see the README). Should 12.x
    have renamed ``start_ts``, every row was counted as "without a valid timestamp" and the timeline was empty;
    now one line names the missing fields and those the table has."""
    folder = write_profile(tmp_path / "profile", "12.0.1")
    events = pq.read_table(folder / "SystemProfileEvents.parquet")
    pq.write_table(events.rename_columns(["start_timestamp_ns" if n == "start_ts" else n
                                          for n in events.column_names]), folder / "SystemProfileEvents.parquet")
    with pytest.raises(TraceError) as e:
        load_trace(folder)
    msg = str(e.value)
    assert "\n" not in msg and "SystemProfileEvents without start_ts (profile schema 12.0.1; it has " in msg
    assert msg.endswith("this release reads the fields of schema 7.4.0")


def test_without_a_metadata_table_the_summary_says_the_version_is_not_stated(tmp_path: Path) -> None:
    st = load_trace(write_profile(tmp_path / "profile", None))
    assert st.format_label == "neuron-explorer-parquet, profile schema not stated (no Metadata table)"


def test_device_profile_tables_are_not_read_as_events(tmp_path: Path) -> None:
    """A full output folder also holds device tables; Instruction has a name and start_ts too."""
    folder = write_profile(tmp_path / "profile", "12.0.1")
    pq.write_table(pa.table({"name": ["MATMUL"], "start_ts": _i64([T0]), "end_ts": _i64([T0 + 5])}),
                   folder / "Instruction.parquet")
    st = load_trace(folder)
    assert "MATMUL" not in {st.name_of(i) for i in range(len(st))}
    assert st.not_shown == {"other Parquet tables (Instruction)": 1}
    _code, lines = _summary(folder)
    assert "not shown: other Parquet tables (Instruction) (1 entries)" in lines


def test_a_percentage_counter_is_drawn_against_100(tmp_path: Path) -> None:
    from neuron_top.trace.columns import counter_full_scale

    st = load_trace(write_profile(tmp_path / "profile", "12.0.1"))
    counters = {c.name: c for c in st.counters}
    assert counter_full_scale(counters["host CPU average busy"]) == 100.0  # 60% is not a full bar
    assert counter_full_scale(counters["host memory used"]) == float(9 << 30)  # bytes: the largest sample

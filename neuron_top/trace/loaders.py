"""Trace loaders: sniff the format and load a file (or a neuron-explorer directory) into a ``TraceStore``.

Formats: Chrome trace JSON (array or object form, plain or gzip, closing ``]`` optional, trailing commas; read by
``chrome.py`` as a stream), neuron-det output (Chrome JSON, one thread per NeuronCore), PyTorch/Kineto traces
(Chrome JSON with string pids, epoch-microsecond timestamps, flows), neuron-explorer ``system_profile.json`` and
neuron-explorer Parquet tables (needs the optional pyarrow).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from neuron_top.trace.chrome import ChromeLoader
from neuron_top.trace.errors import LoadCancelled, TraceError
from neuron_top.trace.gzipread import GzipReader
from neuron_top.trace.store import StoreBuilder, TraceStore

__all__ = [
    "KNOWN_SCHEMA_MAJORS", "STDIN", "ChromeLoader", "TraceError", "is_stream", "load_trace", "load_traces",
    "schema_major", "sniff_format", "trace_files",
]


_LIMIT = 1 << 62
"""Timestamps beyond this (ns) do not fit the int64 columns with room for arithmetic."""


def _str(v: Any) -> str:
    return v if type(v) is str else "" if v is None else str(v)


# -- sniffing -------------------------------------------------------------------------------------------------


def _open_binary(path: Path) -> IO[bytes]:
    f: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    head = f.read(2)
    f.seek(0)
    if head == b"\x1f\x8b":
        return GzipReader(f)  # type: ignore[return-value]  # read() is all the loaders use
    return f


_EVENT_KEYS = (b'"traceEvents"', b'"trace_events"', b'"trace_event"')


def _object_key(head: bytes, f: IO[bytes]) -> bytes | None:
    """The events key of an object-form file (traceEvents first): in its first 64 KB, or after megabytes of other keys (a
    DevTools trace's "metadata", stack frames, device properties) read on in 1 MB steps to the end if need be."""
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{":
        return None
    text = head
    while True:
        for k in _EVENT_KEYS:  # in this order: a Chrome trace's own key wins
            if k in text:
                return k
        more = f.read(1 << 20)
        if not more:
            return None
        text = text[-16:] + more  # a key cut in two by the read is found whole


def sniff_format(path: str | Path) -> str:
    """One of "chrome", "neuron-explorer-json", "parquet", "directory"; raises TraceError otherwise."""
    p = Path(path)
    if p.is_dir():
        if not _holds_trace(p):  # said before the timeline opens, as for a file that is not a trace
            raise TraceError(f"{p}: directory holds no system_profile.json, Parquet tables or trace JSON files")
        return "directory"
    try:
        with open(p, "rb") as raw:
            magic = raw.read(4)
        if magic == b"PAR1":
            return "parquet"
        with _open_binary(p) as f:
            head = f.read(1 << 16)
            key = _object_key(head, f)
    except OSError as e:
        raise TraceError(f"{p}: cannot read: {e.strerror or e}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(f"{p}: corrupt gzip data: {e}") from None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        raise TraceError(f"{p}: empty file, not a trace")
    if text[:1] == b"[":
        return "chrome"
    if text[:1] == b"{":
        if key == b'"traceEvents"':
            return "chrome"
        if key is not None:
            return "neuron-explorer-json"
        if b'"ph"' in head and b'"ts"' in head:
            return "chrome"
    raise TraceError(
        f"{p}: not a trace file (expected Chrome trace JSON, neuron-det, PyTorch/Kineto, "
        "neuron-explorer system_profile.json or Parquet)"
    )


STDIN = "-"
"""The path that means standard input (``neuron-top trace - --check``)."""


def is_stream(path: str | Path) -> bool:
    """``-`` (standard input) or a pipe, such as bash's ``<(zcat trace.json.gz)``: it can be read once only, and
    the loaders read a file more than once (the format is sniffed, then read, with ``seek``)."""
    if str(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _load_stream(path: str | Path, cancelled: Callable[[], bool] | None) -> TraceStore:
    """A stream copied to a temporary file first (a large trace goes to the disk, not to memory), then loaded;
    messages and the store name the stream, never the copy."""
    stdin = str(path) == STDIN
    shown = "stdin" if stdin else str(path)
    if stdin and sys.stdin.isatty():
        raise TraceError("-: standard input is a terminal: pipe a trace into it, or name a file")
    fd, name = tempfile.mkstemp(prefix="neuron-top-trace-")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            if stdin:
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        try:
            st = load_trace(tmp, cancelled)
        except TraceError as e:
            raise TraceError(str(e).replace(str(tmp), shown)) from None
    except OSError as e:
        raise TraceError(f"{shown}: cannot read: {e.strerror or e}") from None
    finally:
        tmp.unlink(missing_ok=True)
    st.path = shown
    return st


def load_trace(path: str | Path, cancelled: Callable[[], bool] | None = None) -> TraceStore:
    """Load any supported trace; raises ``TraceError`` with a one-line message when it cannot.

    Args:
        path: a Chrome/Perfetto JSON trace, or a Neuron Profiler system trace (JSON or Parquet folder); ``-``
            (standard input) or a pipe is copied to a temporary file first.
        cancelled: asked between batches of a JSON trace; True gives the load up (``LoadCancelled``), so an app
            quitting does not wait for the rest of a large file.

    Returns:
        The events in a columnar ``TraceStore``.
    """
    if is_stream(path):
        return _load_stream(path, cancelled)
    p = Path(path)
    fmt = sniff_format(p)
    try:
        if fmt == "chrome":
            return ChromeLoader(p, _open_binary, cancelled).load()
        if fmt == "neuron-explorer-json":
            return load_explorer_json(p)
        if fmt == "parquet":
            return load_explorer_parquet([p, *_sibling_parquets(p)])
        return _load_directory(p)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(f"{p}: cannot read: {e}") from None
    except MemoryError:
        raise TraceError(f"{p}: out of memory while loading") from None


_TRACE_SUFFIXES = (".json", ".json.gz")


def trace_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files to open for ``paths``: a directory of several Chrome/Kineto traces stands for all of them
    (a neuron-explorer output directory stays one trace)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir() and not any(p.rglob("*.parquet")) and not any(p.rglob("system_profile.json")):
            found = sorted(q for q in p.iterdir() if q.is_file() and q.name.endswith(_TRACE_SUFFIXES))
            if found:  # one is a trace too: a PyTorch profiler's log folder holds worker0.<ts>.pt.trace.json
                out.extend(found)
                continue
        out.append(p)
    return out


def load_traces(paths: Sequence[str | Path], cancelled: Callable[[], bool] | None = None) -> TraceStore:
    """Several traces as one timeline (``merge.merge_stores``); one path is just ``load_trace``.

    A file that cannot be read does not stop the others: it is named in the store's ``unread`` list. Raises
    ``TraceError`` only when none can be read.
    """
    from neuron_top.trace.merge import file_label, merge_stores

    files = trace_files(list(paths))
    if len(files) == 1:
        return load_trace(files[0], cancelled)
    stores: list[TraceStore] = []
    labels: list[str] = []
    failed: list[str] = []
    for f in files:
        try:
            st = load_trace(f, cancelled)
        except LoadCancelled:
            raise
        except TraceError as e:
            failed.append(str(e))
            continue
        stores.append(st)
        labels.append(file_label(st, str(f)))
    if not stores:
        raise TraceError(failed[0] if len(failed) == 1 else f"none of the {len(files)} files could be read")
    seen: dict[str, int] = {}
    for k, label in enumerate(labels):  # two files with the same rank or name stay apart
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            labels[k] = f"{label} ({seen[label]})"
    merged = merge_stores(stores, labels)
    merged.unread += [f"not opened: {msg}" for msg in failed]
    return merged


def _holds_trace(p: Path) -> bool:
    """What ``trace_files`` and ``_load_directory`` would open: Parquet tables, a system_profile.json or a
    trace.json anywhere under ``p``, or trace files in it."""
    try:
        if any(q.is_file() and q.name.endswith(_TRACE_SUFFIXES) for q in p.iterdir()):
            return True
        return any(next(p.rglob(pattern), None) is not None
                   for pattern in ("*.parquet", "system_profile.json", "trace.json", "trace.json.gz"))
    except OSError:
        return True  # unreadable: the load says why


def _load_directory(p: Path) -> TraceStore:
    """neuron-explorer output directories: Parquet tables, else system_profile.json, else one trace JSON."""
    parquets = sorted(p.rglob("*.parquet"))[:64]
    if parquets:
        return load_explorer_parquet(parquets, p)
    for name in ("system_profile.json", "trace.json", "trace.json.gz"):
        cand = next(iter(sorted(p.rglob(name))), None)
        if cand is not None:
            return load_trace(cand)
    raise TraceError(f"{p}: directory holds no system_profile.json, Parquet tables or trace.json")


# -- neuron-explorer system_profile.json ----------------------------------------------------------------------


class _XEv(msgspec.Struct, gc=False):
    name: str | int | None = ""
    timestamp: int | float | str | None = None
    duration: int | float | str | None = None
    timestamp_unit: str | None = "ns"
    group: str | None = ""
    process_id: int | str | None = None
    thread_id: int | str | None = None
    instance_id: str | None = ""
    lnc_idx: int | str | None = None
    nc_idx: int | str | None = None
    device_core_idx: int | str | None = None
    type: int | str | None = None


class _XMem(msgspec.Struct, gc=False):
    timestamp: int | float | None = None
    usage: int | float | None = None
    percent_usage: int | float | None = None
    instance_id: str | None = ""


class _XCpu(msgspec.Struct, gc=False):
    timestamp: int | float | None = None
    util: int | float | None = None
    cpu_id: int | str | None = None
    instance_id: str | None = ""


class _XProfile(msgspec.Struct, gc=False):
    trace_events: list[msgspec.Raw] = []
    trace_event: list[msgspec.Raw] = []
    mem_usage: list[msgspec.Raw] = []
    cpu_util: list[msgspec.Raw] = []


_UNIT_NS = {"ns": 1, "us": 1000, "µs": 1000, "ms": 1_000_000, "s": 1_000_000_000}
_GROUP_NC = re.compile(r"nc-?0*(\d+)$")


def _int_or_none(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    return None


def _num(v: Any, unit: int = 1) -> int | None:
    """Nanosecond integers stay exact (above 2**53); floats and strings are converted with ``unit``."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v * unit
    if isinstance(v, float):
        return round(v * unit)
    if isinstance(v, str):
        try:
            return int(v) * unit
        except ValueError:
            try:
                return round(float(v) * unit)
            except ValueError:
                return None
    return None


def load_explorer_json(path: Path) -> TraceStore:
    """The legacy ``neuron-explorer view --output-format json`` system_profile.json."""
    with _open_binary(path) as f:
        data = f.read()
    try:
        prof = msgspec.json.decode(data, type=_XProfile)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise TraceError(f"{path}: malformed system_profile.json: {e}") from None
    del data
    b = StoreBuilder(str(path), "neuron-explorer-json")
    xdec = msgspec.json.Decoder(_XEv)
    for raw in prof.trace_events or prof.trace_event:
        try:
            ev = xdec.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            b.problems["malformed event"] += 1
            continue
        b.phase_counts["X"] += 1
        unit = _UNIT_NS.get(ev.timestamp_unit or "ns", 1)
        start, dur = _num(ev.timestamp, unit), _num(ev.duration, unit)
        if start is None:
            b.problems["event without a valid timestamp"] += 1
            continue
        if dur is not None and dur < 0:
            b.problems["negative duration"] += 1
            continue
        group = ev.group or ""
        inst = ev.instance_id or ""
        pid = ev.process_id
        core = _int_or_none(ev.nc_idx)
        if core is None:
            m = _GROUP_NC.search(group)
            core = int(m.group(1)) if m else _int_or_none(ev.lnc_idx)
            if core is None:
                core = _int_or_none(ev.device_core_idx)
        label = group or (f"NC:{core}" if core is not None else f"TID:{ev.thread_id}")
        t = b.track_id(
            (inst, pid, label),
            "thread",
            pid=pid,
            tid=ev.thread_id,
            name=label,
            process=f"{inst}/PID:{pid}" if inst else f"PID:{pid}",
            instance=inst,
            core=core if not group.startswith("framework") else None,
        )
        b.add(t, start, None if dur is None else start + dur, _str(ev.name), group, bytes(raw), "X")
    mdec, cdec = msgspec.json.Decoder(_XMem), msgspec.json.Decoder(_XCpu)
    for raw in prof.mem_usage:
        try:
            mem = mdec.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            b.problems["malformed mem_usage row"] += 1
            continue
        ts = _num(mem.timestamp)
        if ts is None or mem.usage is None:
            continue
        c = b.counter(("mem", mem.instance_id), "host memory used", instance=mem.instance_id or "", unit="B")
        c.ts.append(ts)
        c.val.append(float(mem.usage))
    for raw in prof.cpu_util:
        try:
            cu = cdec.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            b.problems["malformed cpu_util row"] += 1
            continue
        ts = _num(cu.timestamp)
        if ts is None or cu.util is None:
            continue
        c = b.counter(
            ("cpu", cu.instance_id, cu.cpu_id),
            f"cpu {cu.cpu_id} util",
            instance=cu.instance_id or "",
            unit="%",
        )
        c.ts.append(ts)
        c.val.append(float(cu.util))
    if not len(b.start) and not b.counters:
        raise TraceError(f"{path}: system_profile.json holds no trace events")
    return b.build()


# -- neuron-explorer Parquet ----------------------------------------------------------------------------------


def _sibling_parquets(p: Path) -> list[Path]:
    """Given one table of a neuron-explorer output, pick up the other tables next to it (HBM, metadata)."""
    try:
        return sorted(q for q in p.parent.glob("*.parquet") if q != p)[:16]
    except OSError:
        return []


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TraceError("reading Parquet traces needs pyarrow: pip install 'neuron-top[parquet]'") from None
    return pq


_EVENT_COLS = {"name", "start_ts"}
_HBM_TS = ("timestamp", "timestamp_ns", "ts", "start_ts", "time_ns")

KNOWN_SCHEMA_MAJORS = (7, 12)
"""Neuron Explorer profile schema MAJOR versions this loader reads: 7 (SDK 2.31, schema 7.4.0) and 12 (SDK 2.33,
schema 12.0.1). A MAJOR is an incompatible change (a table or field removed or renamed, a type changed), so a
profile of another MAJOR is refused with one line rather than misread."""

_TABLES = {
    "SystemProfileEvents": "events",
    "SystemProfileHbmUsage": "hbm",
    "SystemProfileMetadata": "system-metadata",
    "Metadata": "metadata",
    "CpuUsage": "cpu",
    "HostMemUsage": "host-memory",
}
"""The tables the timeline draws or reads (by the file name Neuron Explorer gives each table)."""

_OTHER_TABLES = frozenset(
    [
        "ActiveTime", "AssemblyInstruction", "BirInstruction", "CcInstruction", "CcOp", "CcStream",
        "CoreBarriers", "DeviceProfileList", "DmaPacket", "DmaPacketAggregated", "DmaQueuesInfo", "DmaUsage",
        "DmaUsageSummary", "Error", "ExecutionInfo", "Flow", "FrameworkInstruction", "FrameworkNode",
        "HbmUsage", "HbmUsageSummaryByType", "HloInstruction", "Instruction", "KernelInstructions",
        "KernelIterationVariables", "KernelStackFrames", "NeffHeader", "OpcodeSummary", "PendingDma",
        "PenguinInstruction", "PsumUsage", "SbufAllocation", "SbufUsage", "SchemaFields", "SemaphoreUpdate",
        "StackFrame", "StackFrameFileLocation", "StackFrameFileName", "StackFrameFunctionName", "Summary",
        "TensorInfo", "Throttle", "ThrottleSummary", "Warning",
    ]
)
"""Device-profile and other documented tables: not system-trace tables, never read as events."""


def _table_kind(path: Path, cols: set[str]) -> str:
    """Which table a Parquet file is: by its name, else (a renamed file) by its columns; "" when not drawn."""
    stem = path.name.removesuffix(".parquet")
    if stem in _TABLES:
        return _TABLES[stem]
    if stem in _OTHER_TABLES:
        return ""
    if cols >= _EVENT_COLS:
        return "events"
    if "profile_schema_version" in cols:
        return "metadata"
    if "hbm_idx" in cols:
        return "hbm"
    if "first_ts_ns" in cols:
        return "system-metadata"
    if {"util_percent", "cpu_id"} <= cols:
        return "cpu"
    if "used_bytes" in cols:
        return "host-memory"
    return ""


def schema_major(version: str) -> int | None:
    """The MAJOR of a ``MAJOR.MINOR.PATCH`` profile schema version (None when it is not one)."""
    head = version.strip().split(".", 1)[0]
    return int(head) if head.isdigit() else None


def load_explorer_parquet(paths: list[Path], origin: Path | None = None) -> TraceStore:
    """neuron-explorer Parquet tables, profile schema 7.x and 12.x: SystemProfileEvents, SystemProfileHbmUsage,
    SystemProfileMetadata, CpuUsage, HostMemUsage and Metadata (which says the schema version; the store's
    ``metadata["profile_schema_version"]`` keeps it, and the summary and the header say it)."""
    pq = _pyarrow()
    b = StoreBuilder(str(origin or paths[0]), "neuron-explorer-parquet")
    tables: list[tuple[str, Any, Path]] = []
    skipped: list[str] = []
    for path in paths:
        try:
            pf = pq.ParquetFile(path)
        except Exception as e:  # pyarrow raises its own error types; any of them means "unreadable"
            if path == paths[0]:
                raise TraceError(f"{path}: unreadable Parquet file: {_one_line(e)}") from None
            b.unread.append(f"{path.name}: unreadable Parquet file")
            continue
        kind = _table_kind(path, set(pf.schema_arrow.names))
        if kind:
            tables.append((kind, pf, path))
        else:
            skipped.append(path.name.removesuffix(".parquet"))
    for kind, pf, path in tables:  # the version first: a profile of an unknown MAJOR is not read at all
        if kind == "metadata":
            _parquet_schema_version(b, pf, path)
    readers = {"events": _parquet_events, "cpu": _parquet_cpu, "host-memory": _parquet_host_memory}
    for kind, pf, path in tables:
        if kind == "events" and not set(pf.schema_arrow.names) >= _EVENT_COLS:
            # Named SystemProfileEvents but without the fields read (a schema that renamed them): one line naming
            # what is missing and what it has, rather than every row counted as "without a valid timestamp".
            have = sorted(pf.schema_arrow.names)
            version = b.metadata.get("profile_schema_version", "not stated")
            raise TraceError(f"{path}: SystemProfileEvents without {', '.join(sorted(_EVENT_COLS - set(have)))} "
                             f"(profile schema {version}; it has {', '.join(have[:8])}"
                             f"{' ...' if len(have) > 8 else ''}): this release reads the fields of schema 7.4.0")
        if kind in readers:
            readers[kind](b, pf)
        elif kind == "hbm":
            _parquet_hbm(b, pf, set(pf.schema_arrow.names))
        elif kind == "system-metadata":
            for row in pf.read().to_pylist()[:1]:
                b.metadata.update({k: str(v) for k, v in row.items() if v is not None})
    if skipped:
        b.not_shown["other Parquet tables (" + ", ".join(sorted(skipped)[:4]) + ")"] = (
            len(skipped)
        )
    if not any(k == "events" for k, _, _ in tables) and not b.counters:
        raise TraceError(f"{paths[0]}: no SystemProfileEvents table (columns name, start_ts, ...)")
    return b.build()


def _parquet_schema_version(b: StoreBuilder, pf: Any, path: Path) -> None:
    """Metadata.profile_schema_version: kept, and checked against the MAJOR versions this loader knows."""
    if "profile_schema_version" not in pf.schema_arrow.names:
        return
    rows = pf.read(columns=["profile_schema_version"]).column(0).to_pylist()
    version = next((str(v) for v in rows if v is not None and str(v).strip()), "")
    if not version:
        return
    known = " and ".join(f"{m}.x" for m in KNOWN_SCHEMA_MAJORS)
    if schema_major(version) not in KNOWN_SCHEMA_MAJORS:
        raise TraceError(
            f"{path}: Neuron Explorer profile schema {version[:40]} is not one this neuron-top reads "
            f"(it reads {known}); a newer neuron-top may"
        )
    b.metadata["profile_schema_version"] = version.strip()


def _parquet_cpu(b: StoreBuilder, pf: Any) -> None:
    """CpuUsage: host CPU utilization per core (cpu_id "0", "1", ... or "average"), percent, one counter each."""
    cols = set(pf.schema_arrow.names)
    if not {"timestamp", "util_percent"} <= cols:
        b.problems["CpuUsage table without timestamp and util_percent"] += 1
        return
    samples: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for row in pf.read().to_pylist():
        ts, v = _num(row.get("timestamp")), row.get("util_percent")
        if ts is None or not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        key = (_str(row.get("instance_id")), _str(row.get("cpu_id")) or "?")
        samples.setdefault(key, []).append((ts, float(v)))
    for (inst, cpu), pts in sorted(samples.items(), key=lambda kv: (kv[0][0], kv[0][1] != "average", kv[0][1])):
        name = "host CPU average" if cpu == "average" else f"host CPU {cpu}"
        c = b.counter(("cpu", inst, cpu), f"{name} busy", instance=inst, unit="%", group="host")
        for ts, v in sorted(pts):
            c.ts.append(ts)
            c.val.append(v)


def _parquet_host_memory(b: StoreBuilder, pf: Any) -> None:
    """HostMemUsage: host memory in use per instance (bytes; used_percent kept as the breakdown's share)."""
    cols = set(pf.schema_arrow.names)
    if not {"timestamp", "used_bytes"} <= cols:
        b.problems["HostMemUsage table without timestamp and used_bytes"] += 1
        return
    samples: dict[str, list[tuple[int, float]]] = {}
    for row in pf.read().to_pylist():
        ts, v = _num(row.get("timestamp")), row.get("used_bytes")
        if ts is None or not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        samples.setdefault(_str(row.get("instance_id")), []).append((ts, float(v)))
    for inst, pts in sorted(samples.items()):
        c = b.counter(("host-memory", inst), "host memory used", instance=inst, unit="B", group="host")
        for ts, v in sorted(pts):
            c.ts.append(ts)
            c.val.append(v)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:200]


def _parquet_events(b: StoreBuilder, pf: Any) -> None:
    """SystemProfileEvents rows into the builder, read a column at a time (row dicts cost 3x more)."""
    flows: dict[Any, list[tuple[int, int]]] = {}
    skip = {"name", "start_ts", "end_ts", "extra_attributes_json", "flow_id"}
    tracks: dict[tuple[Any, ...], int] = {}
    for batch in pf.iter_batches(batch_size=65536):
        names = batch.schema.names
        cols = {n: batch.column(n).to_pylist() for n in names}
        n = batch.num_rows
        none = [None] * n
        get = cols.get
        starts, ends, durs = get("start_ts", none), get("end_ts", none), get("duration_ns", none)
        srcs, insts, pids = get("trace_event_source", none), get("instance_id", none), get("process_id", none)
        tids, ncs, pcs = get("thread_id", none), get("nc_idx", none), get("pcore_idx", none)
        streams, evnames = get("framework_stream_id", none), get("name", none)
        extras, fidss = get("extra_attributes_json", none), get("flow_id", none)
        argcols = [(k, cols[k]) for k in names if k not in skip]
        b.phase_counts["X"] += n
        for r in range(n):
            start, end = _num(starts[r]), _num(ends[r])
            if start is None:
                b.problems["event without a valid timestamp"] += 1
                continue
            if end is None and durs[r] is not None:
                d = _num(durs[r])
                end = None if d is None else start + d
            if end is not None and end < start:
                b.problems["negative duration"] += 1
                continue
            src = str(srcs[r] or "")
            inst = str(insts[r] or "")
            pid = pids[r]
            key = (
                inst,
                pid,
                src,
                ncs[r],
                pcs[r],
                tids[r] if src not in ("neuron_hw", "neuron_rt") else None,
                streams[r],
            )
            t = tracks.get(key)
            if t is None:
                t = tracks[key] = _parquet_track(b, src, inst, pid, tids[r], ncs[r], pcs[r], streams[r])
            args = msgspec.json.encode({k: v[r] for k, v in argcols if v[r] is not None})
            extra = extras[r]
            if extra:
                text = extra.strip() if isinstance(extra, str) else ""
                if text.startswith("{") and text.endswith("}") and len(text) > 2:
                    # splice the JSON object in (checked when the details are decoded, never here)
                    args = (args[:-1] + b"," if len(args) > 2 else b"{") + text[1:].encode()
                else:
                    args = msgspec.json.encode(
                        {**msgspec.json.decode(args), "extra_attributes_json": str(extra)}
                    )
            pos = b.add(t, start, end, _str(evnames[r]), src, args, "X")
            fids = fidss[r]
            if isinstance(fids, list):
                for fid in fids:
                    if fid is not None:
                        flows.setdefault(fid, []).append((start, pos))
    for pts in flows.values():
        pts.sort()
        b.flow_links.extend((pts[k][1], pts[k + 1][1]) for k in range(len(pts) - 1))


def _parquet_track(
    b: StoreBuilder, src: str, inst: str, pid: Any, tid: Any, nc: Any, pcore: Any, stream: Any
) -> int:
    """Track labels as Neuron Explorer writes them: ``neuron_rt/NC:0``, ``neuron_hw/NC0:4``, ``framework/TID:..``."""
    core = _int_or_none(nc)
    if src == "neuron_hw":
        label = f"neuron_hw/NC{core}:{pcore}" if pcore is not None else f"neuron_hw/NC:{core}"
    elif src == "neuron_rt":
        label = f"neuron_rt/NC:{core}"
    else:
        label = f"{src or 'framework'}/TID:{tid}" + (f"/stream:{stream}" if stream is not None else "")
        core = None
    return b.track_id(
        (inst, pid, label),
        "thread",
        pid=pid,
        tid=tid,
        name=label,
        process=f"{inst}/PID:{pid}" if inst else f"PID:{pid}",
        instance=inst,
        core=core,
        source="device" if src == "neuron_hw" else "cpu",
    )


def _parquet_hbm(b: StoreBuilder, pf: Any, cols: set[str]) -> None:
    """HBM usage: long form (category, bytes) or wide form (one numeric column per category)."""
    tcol = next((c for c in _HBM_TS if c in cols), None)
    if tcol is None:
        b.problems["HBM table without a timestamp column"] += 1
        return
    long_val = next((c for c in ("bytes", "usage_bytes", "size_bytes", "usage", "value") if c in cols), None)
    long_form = "category" in cols and long_val is not None
    ident = {tcol, "hbm_idx", "instance_id", "device_idx", "nd_idx", "process_id", "category", "id",
             "total_bytes", "ultraserver_id", "ultraserver_instance_index"}
    # the documented wide form: one <usage type>_bytes column per type, and their total_bytes (not a type)
    wide = sorted(c for c in cols if c.endswith("_bytes") and c not in ident)
    samples: dict[tuple[Any, ...], dict[int, dict[str, float]]] = {}
    for row in pf.read().to_pylist():
        ts = _num(row.get(tcol))
        if ts is None:
            continue
        key = (row.get("instance_id"), row.get("device_idx", row.get("nd_idx")), row.get("hbm_idx"))
        cats = samples.setdefault(key, {}).setdefault(ts, {})
        if long_form:
            v = row.get(long_val)
            if isinstance(v, (int, float)):
                cats[str(row.get("category"))] = cats.get(str(row.get("category")), 0.0) + float(v)
        else:
            for k, v in row.items():
                number = isinstance(v, (int, float)) and not isinstance(v, bool)
                # the 22 documented usage types are mostly empty: the breakdown keeps the used ones
                if number and ((k in wide and v) or (not wide and k not in ident)):
                    cats[k.removesuffix("_bytes") if wide else k] = float(v)
    for (inst, dev, hbm), by_ts in samples.items():
        label = f"HBM {hbm}" if dev is None else f"HBM nd{dev}/{hbm}"
        c = b.counter(("hbm", inst, dev, hbm), f"{label} used", instance=str(inst or ""), unit="B")
        c.breakdown = []
        for ts in sorted(by_ts):
            cats = by_ts[ts]
            c.ts.append(ts)
            c.val.append(sum(cats.values()))
            c.breakdown.append(cats)

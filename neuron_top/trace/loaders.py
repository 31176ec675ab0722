"""Trace loaders: sniff the format, stream the file into a ``StoreBuilder``.

Formats: Chrome trace JSON (array or object form, plain or gzip, closing ``]`` optional, trailing commas),
neuron-det output (Chrome JSON, one thread per NeuronCore), PyTorch/Kineto traces (Chrome JSON with string pids,
epoch-microsecond timestamps, flows), neuron-explorer ``system_profile.json`` and neuron-explorer Parquet tables
(needs the optional pyarrow).

Chrome JSON is read as a stream: 4 MB at a time, cut after the last ``}`` that is followed by a comma, and the
batch ``[...]`` decoded by msgspec into a lean Struct per event (args stay raw bytes). A cut that lands inside a
string or a nested object leaves unbalanced JSON, so msgspec rejects it and an earlier cut is tried: no byte-level
Python scanning, and peak memory stays one chunk plus the columns. The same prefix-decoding salvages files a killed
writer left without ``]`` or with a trailing comma.
"""

from __future__ import annotations

import gzip
import re
import zlib
from array import array
from collections.abc import Iterator
from itertools import accumulate, repeat
from operator import sub
from pathlib import Path
from typing import IO, Any

import msgspec

from neuron_top.trace.store import ASYNC, INSTANT, StoreBuilder, TraceStore

CHUNK = 1 << 22
_MAX_CUT_TRIES = 12


class TraceError(Exception):
    """A trace file that cannot be read at all; the message is one line, fit for a terminal."""


_EMPTY = msgspec.Raw(b"")


class _Ev(msgspec.Struct, gc=False):
    """The fields of a Chrome trace event the store uses; everything else is ignored by msgspec."""

    ph: str = ""
    name: str | int | float | None = ""
    cat: str | None = ""
    ts: int | float | str | None = None
    dur: int | float | str | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    id: int | str | None = None
    id2: msgspec.Raw = _EMPTY
    s: str | None = None
    bp: str | None = None
    args: msgspec.Raw = _EMPTY


_batch_decoder = msgspec.json.Decoder(list[_Ev])
_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_ev_decoder = msgspec.json.Decoder(_Ev)
_any_decoder = msgspec.json.Decoder()

_NEURON_DET_NAMES = frozenset({"nrt_execute", "nc_exec", "sync_exec", "cc_exec_barrier", "cc_op_exec"})
_KINETO_CATS = frozenset({"cpu_op", "cuda_runtime", "kernel", "python_function", "ac2g", "gpu_memcpy"})
_TRACE_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_WS_COMMA = re.compile(rb"\s*,")


_LIMIT = 1 << 62
"""Timestamps beyond this (ns) do not fit the int64 columns with room for arithmetic: dropped and counted."""


def _ts_ns(v: Any) -> int:
    """Chrome timestamps are microseconds (int, float or numeric string) -> int nanoseconds."""
    if type(v) is int:
        return v * 1000
    if type(v) is float:
        return round(v * 1000)
    if isinstance(v, str):
        s = v.strip()
        try:
            return int(s) * 1000
        except ValueError:
            return round(float(s) * 1000)
    raise ValueError("no timestamp")


# -- sniffing -------------------------------------------------------------------------------------------------


def _open_binary(path: Path) -> IO[bytes]:
    f: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    head = f.read(2)
    f.seek(0)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    return f


def sniff_format(path: str | Path) -> str:
    """One of "chrome", "neuron-explorer-json", "parquet", "directory"; raises TraceError otherwise."""
    p = Path(path)
    if p.is_dir():
        return "directory"
    try:
        with open(p, "rb") as raw:
            magic = raw.read(4)
        if magic == b"PAR1":
            return "parquet"
        with _open_binary(p) as f:
            head = f.read(1 << 16)
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
        if b'"traceEvents"' in head:
            return "chrome"
        if b'"trace_events"' in head or b'"trace_event"' in head:
            return "neuron-explorer-json"
        if b'"ph"' in head and b'"ts"' in head:
            return "chrome"
    raise TraceError(
        f"{p}: not a trace file (expected Chrome trace JSON, neuron-det, PyTorch/Kineto, "
        "neuron-explorer system_profile.json or Parquet)"
    )


def load_trace(path: str | Path) -> TraceStore:
    """Load any supported trace; raises ``TraceError`` with a one-line message when it cannot."""
    p = Path(path)
    fmt = sniff_format(p)
    try:
        if fmt == "chrome":
            return ChromeLoader(p).load()
        if fmt == "neuron-explorer-json":
            return load_explorer_json(p)
        if fmt == "parquet":
            return load_explorer_parquet([p, *_sibling_parquets(p)])
        return _load_directory(p)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(f"{p}: cannot read: {e}") from None
    except MemoryError:
        raise TraceError(f"{p}: out of memory while loading") from None


def _load_directory(p: Path) -> TraceStore:
    """neuron-explorer output directories: Parquet tables, else system_profile.json, else one trace JSON."""
    parquets = sorted(p.rglob("*.parquet"))[:64]
    if parquets:
        return load_explorer_parquet(parquets)
    for name in ("system_profile.json", "trace.json", "trace.json.gz"):
        cand = next(iter(sorted(p.rglob(name))), None)
        if cand is not None:
            return load_trace(cand)
    raise TraceError(f"{p}: directory holds no system_profile.json, Parquet tables or trace.json")


# -- Chrome trace JSON ----------------------------------------------------------------------------------------


def _append_args(blob: bytearray, xs: list[_Ev]) -> array:
    """Append the events' raw args to ``blob``; returns where each one ends (its start is the previous end)."""
    raws = [e.args for e in xs]
    base = len(blob)
    blob += b"".join(raws)
    return array("q", accumulate(map(len, raws), initial=base))[1:]


class ChromeLoader:
    """Chrome trace event format, also used by neuron-det and the PyTorch (Kineto) and JAX profilers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.b = StoreBuilder(str(path), "chrome")
        self.header = b""
        self.tail = b""
        self.malformed = 0

    def load(self) -> TraceStore:
        with _open_binary(self.path) as f:
            n = 0
            for batch in self._batches(f):
                n += len(batch)
                self._ingest(batch)
        b = self.b
        if n == 0 and self.malformed:
            raise TraceError(f"{self.path}: no trace events could be read (malformed JSON)")
        self._classify()
        return b.build()

    # streaming --------------------------------------------------------------------------------------------
    def _batches(self, f: IO[bytes]) -> Iterator[list[_Ev]]:
        buf = f.read(CHUNK)
        start = buf.lstrip(b"\xef\xbb\xbf \t\r\n")
        if start[:1] == b"{":
            m = _TRACE_EVENTS_KEY.search(buf)
            while m is None and len(buf) < (64 << 20):
                more = f.read(CHUNK)
                if not more:
                    break
                buf += more
                m = _TRACE_EVENTS_KEY.search(buf)
            if m is None:
                yield from self._whole_object(buf + f.read())
                return
            self.header = buf[: m.start()]
            buf = b"[" + buf[m.end() :]
        else:
            buf = b"[" + start[1:]
        eof = False
        want = CHUNK
        while True:
            if not eof and len(buf) < want:
                more = f.read(CHUNK)
                if more:
                    buf += more
                    continue
                eof = True
            batch, rest = self._cut(buf)
            if batch is None:
                if eof:
                    break
                want = len(buf) + CHUNK  # one huge event: read more before cutting again
                continue
            want = CHUNK
            if batch:
                yield batch
            buf = rest
        yield from self._finish(buf)

    def _cut(self, buf: bytes) -> tuple[list[_Ev] | None, bytes]:
        """Decode the longest prefix of ``buf`` that ends at an event boundary followed by a comma."""
        end = len(buf)
        for _ in range(_MAX_CUT_TRIES):
            p = buf.rfind(b"}", 1, end)
            if p < 0:
                return None, buf
            m = _WS_COMMA.match(buf, p + 1)
            end = p
            if m is None:
                continue
            events = self._decode(buf[: p + 1] + b"]")
            if events is not None:
                return events, b"[" + buf[m.end() :]
        return None, buf

    def _decode(self, data: bytes) -> list[_Ev] | None:
        try:
            return _batch_decoder.decode(data)
        except msgspec.ValidationError:
            pass
        except msgspec.DecodeError:
            return None
        # Valid JSON with an odd field somewhere: decode event by event, dropping (and counting) the bad ones.
        try:
            raws = _raw_list_decoder.decode(data)
        except msgspec.DecodeError:
            return None
        out = []
        for r in raws:
            try:
                out.append(_ev_decoder.decode(r))
            except (msgspec.ValidationError, msgspec.DecodeError):
                ev = self._coerce(r)
                if ev is None:
                    self.b.problems["malformed event"] += 1
                else:
                    out.append(ev)
        return out

    @staticmethod
    def _coerce(raw: msgspec.Raw) -> _Ev | None:
        """Last resort for an event with odd types (pid as float, name as object): keep what makes sense."""
        try:
            d = _any_decoder.decode(raw)
        except msgspec.DecodeError:
            return None
        if not isinstance(d, dict):
            return None

        def scalar(v: Any) -> Any:
            return v if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None

        args = d.get("args")
        return _Ev(
            ph=d["ph"] if isinstance(d.get("ph"), str) else "",
            name=str(d.get("name", "")),
            cat=str(d.get("cat") or ""),
            ts=scalar(d.get("ts")),
            dur=scalar(d.get("dur")),
            pid=str(d["pid"]) if isinstance(d.get("pid"), float) else scalar(d.get("pid")),
            tid=str(d["tid"]) if isinstance(d.get("tid"), float) else scalar(d.get("tid")),
            id=scalar(d.get("id")),
            s=d.get("s") if isinstance(d.get("s"), str) else None,
            bp=d.get("bp") if isinstance(d.get("bp"), str) else None,
            args=msgspec.Raw(msgspec.json.encode(args)) if isinstance(args, dict) else _EMPTY,
        )

    def _finish(self, buf: bytes) -> Iterator[list[_Ev]]:
        """The end of the stream: the last event(s), then ``]`` (optional), then the rest of an object form."""
        end = len(buf)
        for _ in range(_MAX_CUT_TRIES * 4):
            p = buf.rfind(b"}", 1, end)
            if p < 0:
                break
            events = self._decode(buf[: p + 1] + b"]")
            if events is not None:
                if events:
                    yield events
                self._tail(buf[p + 1 :])
                return
            end = p
        self._tail(buf[1:])

    def _tail(self, rest: bytes) -> None:
        s = rest.strip().lstrip(b",").strip()
        if not s:  # no closing ]: allowed by the format
            return
        if s[:1] == b"]":
            obj = s[1:].strip().lstrip(b",").strip()
            if obj and obj not in (b"}",):
                self._object_metadata(b"{" + obj if not obj.startswith(b"{") else obj)
            return
        self.malformed += 1
        self.b.problems["unparsable data at end of file (truncated?)"] += 1

    def _object_metadata(self, data: bytes) -> None:
        try:
            d = _any_decoder.decode(data)
        except msgspec.DecodeError:
            return
        if isinstance(d, dict):
            for k in ("displayTimeUnit", "traceName", "schemaVersion"):
                if k in d and isinstance(d[k], (str, int)):
                    self.b.metadata[k] = str(d[k])

    def _whole_object(self, data: bytes) -> Iterator[list[_Ev]]:
        """An object form whose traceEvents key is not near the start: decode it in one go."""
        try:
            d = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise TraceError(f"{self.path}: malformed JSON object (no readable traceEvents)") from None
        if "traceEvents" not in d:
            raise TraceError(f"{self.path}: JSON object without traceEvents: not a Chrome trace")
        events = self._decode(bytes(d["traceEvents"]))
        if events is None:
            raise TraceError(f"{self.path}: traceEvents is not a list of events")
        yield events

    # ingest -------------------------------------------------------------------------------------------------
    def _ingest(self, batch: list[_Ev]) -> None:
        """Complete (X) and begin/end (B/E) events go through column-wise comprehensions; the rest one by one."""
        phases = [e.ph for e in batch]
        self.b.phase_counts.update(phases)
        nx = phases.count("X")
        if nx == len(batch):
            self._ingest_x(batch)
            return
        if nx:
            self._ingest_x([e for e in batch if e.ph == "X"])
        nbe = phases.count("B") + phases.count("E")
        if nbe:
            self._ingest_be([e for e in batch if e.ph == "B" or e.ph == "E"])
        if nx + nbe < len(batch):
            for e in batch:
                ph = e.ph
                if ph != "X" and ph != "B" and ph != "E":
                    self._one(e)

    def _ingest_x(self, xs: list[_Ev]) -> None:
        """The hot path: a batch of X events with numeric ts and dur (anything odd falls back to ``_one``)."""
        b = self.b
        try:
            _, starts = self._starts(xs)
            durs = [e.dur for e in xs]
            # the duration is converted on its own: small, so exact enough even where epoch-µs floats are not
            ends = [
                a + (d * 1000 if type(d) is int else int(d * 1000 + 0.5))
                for a, d in zip(starts, durs, strict=True)
            ]  # type: ignore[operator]
        except (TypeError, ValueError, OverflowError):
            for e in xs:
                self._one(e)
            return
        if min(map(sub, ends, starts)) < 0 or min(starts) < -_LIMIT or max(ends) > _LIMIT:
            for e in xs:
                self._one(e)
            return
        names, cats, tracks = self._columns(xs)
        offs = _append_args(b.args_blob, xs)
        # array += array is a memcpy; array.extend(list) converts item by item and costs twice as much.
        b.start += array("q", starts)
        b.end += array("q", ends)
        b.name += array("i", names)
        b.cat += array("i", cats)
        b.track += array("i", tracks)
        b.flags.frombytes(bytes(len(xs)))
        b.phase.frombytes(b"X" * len(xs))
        b.args_off += offs

    def _ingest_be(self, xs: list[_Ev]) -> None:
        """B and E events into the builder's begin/end columns; they are paired per thread in ``build``."""
        b = self.b
        try:
            _, starts = self._starts(xs)
        except (TypeError, ValueError, OverflowError):
            for e in xs:
                self._one(e)
            return
        if min(starts) < -_LIMIT or max(starts) > _LIMIT:
            for e in xs:
                self._one(e)
            return
        names, cats, tracks = self._columns(xs)
        offs = _append_args(b.be_blob, xs)
        b.be_ts += array("q", starts)
        b.be_track += array("i", tracks)
        b.be_name += array("i", names)
        b.be_cat += array("i", cats)
        b.be_begin += bytes([e.ph == "B" for e in xs])
        b.be_off += offs

    def _columns(self, xs: list[_Ev]) -> tuple[list[int], list[int], list[int]]:
        """Interned name ids, cat ids and track ids of a batch (new ones are added as they appear)."""
        b = self.b
        sget, tget = b.smap.get, b.tmap.get
        names = [sget(e.name, -1) for e in xs]  # type: ignore[arg-type]
        if -1 in names:
            for k, v in enumerate(names):
                if v == -1:
                    names[k] = b.intern(_str(xs[k].name))
        cats = [sget(e.cat, -1) for e in xs]  # type: ignore[arg-type]
        if -1 in cats:
            for k, v in enumerate(cats):
                if v == -1:
                    cats[k] = b.intern(xs[k].cat or "")
        pids = [e.pid for e in xs]
        tids = [e.tid for e in xs]
        if pids.count(pids[0]) == len(pids) and tids.count(tids[0]) == len(tids):
            # one thread's run of events (neuron-det writes a core at a time): no tuple per event
            tracks = [b.track_id((pids[0], tids[0]))] * len(xs)
        else:
            tracks = list(map(tget, zip(pids, tids, strict=True), repeat(-1)))
        if -1 in tracks:
            for k, v in enumerate(tracks):
                if v == -1:
                    tracks[k] = b.track_id((xs[k].pid, xs[k].tid))
        return names, cats, tracks

    @staticmethod
    def _starts(xs: list[_Ev]) -> tuple[list[Any], list[int]]:
        """Raw ts values and their nanoseconds; raises TypeError/ValueError on anything non-numeric."""
        ts = [e.ts for e in xs]
        # int(x + 0.5) rounds like round() for the non-negative times of real traces, at 2/3 of the cost;
        # integer microseconds stay exact integers
        return ts, [t * 1000 if type(t) is int else int(t * 1000 + 0.5) for t in ts]  # type: ignore[operator]

    def _one(self, e: _Ev) -> None:
        """Any event, one at a time: odd values, B/E pairs, instants, counters, flows, metadata."""
        b = self.b
        problems = b.problems
        ph = e.ph
        try:
            s = _ts_ns(e.ts)
            if not -_LIMIT <= s <= _LIMIT:
                raise OverflowError
        except (ValueError, TypeError, OverflowError):
            if ph != "M":
                problems["event without a valid ts"] += 1
                return
            s = 0
        if ph == "X":
            d = e.dur
            if d is None:
                end = None  # X without dur: unfinished
            else:
                try:
                    end = s + _ts_ns(d)
                    if end > _LIMIT:
                        raise OverflowError
                except (ValueError, TypeError, OverflowError):
                    problems["X with a bad dur"] += 1
                    return
                if end < s:
                    problems["negative duration"] += 1
                    return
            t = b.track_id((e.pid, e.tid))
            b.add(t, s, end, _str(e.name), e.cat or "", _args(e), "X")
        elif ph == "B" or ph == "E":
            t = b.track_id((e.pid, e.tid))
            b.add_begin_end(s, ph == "B", t, _str(e.name), e.cat or "", _args(e))
        else:
            self._other(e, ph, s)

    def _other(self, e: _Ev, ph: str, s: int) -> None:
        b = self.b
        if ph in ("i", "I", "R"):
            scope = e.s
            if scope == "g":
                t = b.track_id(("<global>",), "global", pid=None)
            elif scope == "p":
                t = b.track_id(("<process>", e.pid), "process", pid=e.pid)
            else:
                t = b.track_id((e.pid, e.tid))
            b.add(t, s, s, _str(e.name), e.cat or "", _args(e), "i", INSTANT)
        elif ph in ("b", "e", "S", "F"):
            ident: Any = e.id if e.id is not None else bytes(e.id2)
            begin = ph in ("b", "S")
            name = _str(e.name)
            key: tuple[Any, ...] = (
                ("a", e.pid, e.cat, ident) if ph in ("b", "e") else ("a", e.pid, e.cat, ident, name)
            )
            t = b.track_id((e.pid, "<async>", name), "async", pid=e.pid, name=name) if begin else -1
            b.add_pending(s, begin, key, t, name, e.cat or "", _args(e), ph)
        elif ph == "n":
            name = _str(e.name)
            t = b.track_id((e.pid, "<async>", name), "async", pid=e.pid, name=name)
            b.add(t, s, s, name, e.cat or "", _args(e), "n", INSTANT | ASYNC)
        elif ph == "C":
            args = _decode_dict(e.args)
            series = [
                (k, v) for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
            ]
            name = _str(e.name)
            for k, v in series:
                label = name if len(series) == 1 else f"{name} {k}"
                c = b.counter(("C", e.pid, name, e.id, k), label, pid=e.pid)
                c.ts.append(s)
                c.val.append(float(v))
        elif ph in ("s", "t", "f"):
            b.seq += 1
            t = b.track_id((e.pid, e.tid))
            enclosing = ph != "f" or e.bp == "e"
            b.flow_points.append(((e.cat, e.id, bytes(e.id2)), b.seq, ph, t, s, enclosing))
        elif ph == "M":
            args = _decode_dict(e.args)
            name, val = e.name, args.get("name")
            if name == "process_name" and val is not None:
                b.process_names[e.pid] = str(val)
            elif name == "thread_name" and val is not None:
                b.thread_names[(e.pid, e.tid)] = str(val)
            elif name == "process_sort_index" and isinstance(args.get("sort_index"), int):
                b.process_sort[e.pid] = args["sort_index"]
            elif name == "thread_sort_index" and isinstance(args.get("sort_index"), int):
                b.thread_sort[(e.pid, e.tid)] = args["sort_index"]
        elif not ph:
            b.problems["event without ph"] += 1
        # T, p (async steps), N/O/D (objects), P (samples), ...: counted in phase_counts, not drawn.

    def _classify(self) -> None:
        """neuron-det and Kineto are Chrome JSON with conventions: name the format and tag NeuronCore tracks."""
        b = self.b
        procs = " ".join(b.process_names.values())
        names = set(b.smap)
        if "ndet" in procs or "GIDs" in procs or len(names & _NEURON_DET_NAMES) >= 2:
            b.format = "neuron-det"
            for tr in b.tracks:
                if tr.kind == "thread" and tr.core is None:
                    tid = tr.tid
                    if isinstance(tid, int) or (isinstance(tid, str) and tid.isdigit()):
                        tr.core = int(tid)
                        tr.source = "device"
        elif (
            b'"schemaVersion"' in self.header or b'"deviceProperties"' in self.header or names & _KINETO_CATS
        ):
            b.format = "kineto"


def _str(v: Any) -> str:
    return v if type(v) is str else "" if v is None else str(v)


def _args(e: _Ev) -> bytes:
    a = e.args
    return bytes(a) if len(a) > 2 else b""


def _decode_dict(raw: msgspec.Raw | bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        d = _any_decoder.decode(raw)
    except msgspec.DecodeError:
        return {}
    return d if isinstance(d, dict) else {}


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
            m = mdec.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            b.problems["malformed mem_usage row"] += 1
            continue
        ts = _num(m.timestamp)
        if ts is None or m.usage is None:
            continue
        c = b.counter(("mem", m.instance_id), "host memory used", instance=m.instance_id or "", unit="B")
        c.ts.append(ts)
        c.val.append(float(m.usage))
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
_HBM_TS = ("timestamp_ns", "timestamp", "ts", "start_ts", "time_ns")


def load_explorer_parquet(paths: list[Path]) -> TraceStore:
    """neuron-explorer Parquet tables: SystemProfileEvents, SystemProfileHbmUsage, SystemProfileMetadata."""
    pq = _pyarrow()
    b = StoreBuilder(str(paths[0]), "neuron-explorer-parquet")
    seen_events = False
    for path in paths:
        try:
            pf = pq.ParquetFile(path)
        except Exception as e:  # pyarrow raises its own error types; any of them means "unreadable"
            if path == paths[0]:
                raise TraceError(f"{path}: unreadable Parquet file: {_one_line(e)}") from None
            continue
        cols = set(pf.schema_arrow.names)
        if cols >= _EVENT_COLS:
            seen_events = True
            _parquet_events(b, pf)
        elif "hbm_idx" in cols:
            _parquet_hbm(b, pf, cols)
        elif "first_ts_ns" in cols:
            for row in pf.read().to_pylist()[:1]:
                b.metadata.update({k: str(v) for k, v in row.items() if v is not None})
    if not seen_events and not b.counters:
        raise TraceError(f"{paths[0]}: no SystemProfileEvents table (columns name, start_ts, ...)")
    return b.build()


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
    ident = {tcol, "hbm_idx", "instance_id", "device_idx", "nd_idx", "process_id", "category", "id"}
    samples: dict[tuple[Any, ...], dict[int, dict[str, float]]] = {}
    for row in pf.read().to_pylist():
        ts = _num(row.get(tcol))
        if ts is None:
            continue
        key = (row.get("instance_id"), row.get("device_idx", row.get("nd_idx")), row.get("hbm_idx"))
        cats = samples.setdefault(key, {}).setdefault(ts, {})
        if long_form:
            v = row.get(long_val)  # type: ignore[arg-type]
            if isinstance(v, (int, float)):
                cats[str(row.get("category"))] = cats.get(str(row.get("category")), 0.0) + float(v)
        else:
            for k, v in row.items():
                if k not in ident and isinstance(v, (int, float)) and not isinstance(v, bool):
                    cats[k] = float(v)
    for (inst, dev, hbm), by_ts in samples.items():
        label = f"HBM {hbm}" if dev is None else f"HBM nd{dev}/{hbm}"
        c = b.counter(("hbm", inst, dev, hbm), f"{label} used", instance=str(inst or ""), unit="B")
        c.breakdown = []
        for ts in sorted(by_ts):
            cats = by_ts[ts]
            c.ts.append(ts)
            c.val.append(sum(cats.values()))
            c.breakdown.append(cats)

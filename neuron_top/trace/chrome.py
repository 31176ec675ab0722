"""Chrome trace event format (also neuron-det, PyTorch/Kineto and JAX profiler output) into a ``StoreBuilder``.

``EventStream`` (jsonstream.py) cuts the file into batches of events, whatever else the file holds; here each
batch becomes columns. Complete (X) and begin/end (B/E) events, nearly all of a real trace, go through C-level
``map`` calls a batch at a time (no Python bytecode per event); everything else goes event by event.

Timestamps become integer nanoseconds by one rule (``timeparse``): batches whose times floats hold exactly are
decoded with floats (fast); as soon as a batch has a float that is not exact (epoch microseconds with a
fraction, as Kineto writes), the file is decoded from then on with the numbers kept as their text.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from itertools import compress, repeat
from operator import attrgetter, eq, ne, not_, or_
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from neuron_top.trace.errors import LoadCancelled, TraceError
from neuron_top.trace.gzipread import GzipReader
from neuron_top.trace.jsonstream import EventStream
from neuron_top.trace.store import FLOW_ID_LIMIT, FLOW_TEXT_LIMIT, INSTANT, StoreBuilder, TraceStore
from neuron_top.trace.timeparse import (
    SAFE_US,
    float_start_end,
    floats_need_text_array,
    ns_array,
    start_end_arrays,
    three_decimals_raw,
    to_ns,
)

__all__ = ["ChromeLoader", "decode_dict", "fuchsia_system"]

_LIMIT = 1 << 62
"""Timestamps beyond this (ns) do not fit the int64 columns with room for arithmetic: dropped and counted."""

_EMPTY = msgspec.Raw(b"")
_BIG_FLOAT_TS = re.compile(rb'"ts"\s*:\s*-?(\d{13,})\.')
"""A time a float cannot hold exactly (a fraction on 13+ digits of microseconds): the batch would be decoded again as
text, so the first one is read as text at once."""


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
    scope: str | None = None
    s: str | None = None
    bp: str | None = None
    bind_id: int | str | None = None
    flow_in: bool | None = None
    flow_out: bool | None = None
    args: msgspec.Raw = _EMPTY


class _EvText(_Ev, gc=False):
    """The same event with ``ts``/``dur`` kept as their raw JSON text (for exact nanoseconds): ``_value`` reads one
    as ``_Ev`` would with numbers as text, and a batch of ``digits.ddd`` numbers is read in bulk from the text
    (``_times``). Raw, not a ``float_hook``: no Python call per number while decoding."""

    ts: msgspec.Raw = _EMPTY  # type: ignore[assignment]
    dur: msgspec.Raw = _EMPTY  # type: ignore[assignment]


_text_value = msgspec.json.Decoder(float_hook=str)


def _value(v: Any) -> Any:
    """A time field as the text-mode decoders read it: a number's text (str) or an int, a string, None."""
    if type(v) is msgspec.Raw:
        return _text_value.decode(v) if len(v) else None
    return v


class _Lean(msgspec.Struct, gc=False):
    """Only what X, B and E events need: decoding fills 8 fields instead of 16 (~15% faster). Used once a batch
    held nothing else; the other fields read as their defaults."""

    ph: str = ""
    name: str | int | float | None = ""
    cat: str | None = ""
    ts: int | float | str | None = None
    dur: int | float | str | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    args: msgspec.Raw = _EMPTY
    bind_id: int | str | None = None
    """Decoded only to notice a v2 flow (the batch is then decoded again with every field)."""
    id = None
    id2 = _EMPTY
    scope = None
    s = None
    bp = None
    flow_in = None
    flow_out = None


class _Sw(msgspec.Struct, gc=False):
    pid: int | str | None = None
    tid: int | str | None = None
    prio: int | float | None = None


class _FEv(msgspec.Struct, gc=False):
    """A Fuchsia ``systemTraceEvents`` record: p (process), t (thread), k (context switch), w (wake-up)."""

    ph: str = ""
    ts: Any = None
    pid: int | str | None = None
    tid: int | str | None = None
    name: str | None = None
    cpu: int | None = None
    out: _Sw | None = None
    in_: _Sw | None = msgspec.field(default=None, name="in")


class _FSystem(msgspec.Struct, gc=False):
    type: str = ""
    events: list[msgspec.Raw] = []


_DECODERS: dict[bool, tuple[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]]] = {
    False: (msgspec.json.Decoder(list[_Ev]), msgspec.json.Decoder(_Ev), msgspec.json.Decoder()),
    True: (
        msgspec.json.Decoder(list[_EvText]),
        msgspec.json.Decoder(_EvText),
        msgspec.json.Decoder(float_hook=str),
    ),
}
_lean_decoder = msgspec.json.Decoder(list[_Lean])
_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_fsys_decoder = msgspec.json.Decoder(_FSystem)
_fev_decoder = msgspec.json.Decoder(_FEv, float_hook=str)
_any_decoder = msgspec.json.Decoder()

_PH, _NAME, _CAT, _TS, _DUR = (attrgetter(k) for k in ("ph", "name", "cat", "ts", "dur"))
_BIND = attrgetter("bind_id")
_PID, _TID, _ARGS, _ID, _BP = (attrgetter(k) for k in ("pid", "tid", "args", "id", "bp"))

_FLOW_PHASES = frozenset("stf")
_X_ONLY = frozenset("X")


def thread_ident(v: Any) -> Any:
    """A pid or tid as catapult keys its process and thread maps: a JavaScript object key, so the string
    ``"5555"`` and the number 5555 are one thread (old Kineto writes its X events with ``"tid": "5555"`` and its
    flow points and instants with ``"tid": 5555``). Only a canonical integer text becomes the number ("05" and
    "-0" stay strings: their keys differ from 5 and 0 in JavaScript too); any other string is a name."""
    if type(v) is str and v and (v.isdigit() or (v[0] == "-" and v[1:].isdigit())) and v.isascii():
        n = int(v)
        if str(n) == v:
            return n
    return v


def _mask_table(chars: str) -> bytes:
    """A bytes.translate table: 1 for the given phase letters, 0 for every other byte."""
    return bytes(1 if chr(c) in chars else 0 for c in range(256))


_MASK_X, _MASK_BE, _MASK_FLOW = _mask_table("X"), _mask_table("BE"), _mask_table("stf")
_MASK_NOT_F = bytes(0 if c == ord("f") else 1 for c in range(256))
_NOT_XBE = re.compile("[^XBE]")
_NOT_XBE_FLOW = re.compile("[^XBEstf]")
_BE_PHASES = frozenset("BE")
_XBE_FLOW = frozenset("XBEstf")
_XBE = frozenset("XBE")
_NEURON_DET_NAMES = frozenset({"nrt_execute", "nc_exec", "sync_exec", "cc_exec_barrier", "cc_op_exec"})
_KINETO_CATS = frozenset({"cpu_op", "cuda_runtime", "kernel", "python_function", "ac2g", "gpu_memcpy"})
_META_KEYS = ("displayTimeUnit", "traceName", "schemaVersion", "baseTimeNanoseconds")


_TIMED = frozenset("XBEiIRbenSTpFCstf")
"""The phases drawn at a time (the others are counted only: N/O/D objects, P samples, c clock syncs, v dumps)."""


def _str(v: Any) -> str:
    return v if type(v) is str else "" if v is None else str(v)


def _bytes(a: np.ndarray) -> memoryview:
    """An int64 array's memory as bytes, for ``array.frombytes`` (a memcpy, no per-item conversion)."""
    return np.ascontiguousarray(a, np.int64).data.cast("B")


def _bytes32(a: np.ndarray) -> memoryview:
    """An int32 array's memory as bytes, for ``array("i").frombytes``."""
    return np.ascontiguousarray(a, np.int32).data.cast("B")


def _cat_str(v: Any) -> str:
    return v if type(v) is str else ""


def _args(e: _Ev) -> bytes:
    a = e.args
    return bytes(a) if len(a) > 2 else b""


def decode_dict(raw: msgspec.Raw | bytes) -> dict[str, Any]:
    """A raw JSON object (an event's ``args``) as a dict; {} when it is empty or not an object."""
    if not raw:
        return {}
    try:
        d = _any_decoder.decode(raw)
    except msgspec.DecodeError:
        return {}
    return d if isinstance(d, dict) else {}


def _append_args(blob: bytearray, xs: list[_Ev]) -> array:
    """Append the events' raw args to ``blob``; returns where each one ends (its start is the previous end)."""
    raws = list(map(_ARGS, xs))
    base = len(blob)
    blob += b"".join(raws)
    ends = np.cumsum(np.fromiter(map(len, raws), np.int64, len(raws)))
    ends += base
    out = array("q")
    out.frombytes(_bytes(ends))
    return out


def _int_columns(pids: list[Any], tids: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """pids and tids as int64 arrays, when both are all integers (None otherwise)."""
    try:
        return np.frombuffer(array("q", pids), np.int64), np.frombuffer(array("q", tids), np.int64)
    except (TypeError, OverflowError):
        return None


def _dense(d: dict[Any, int], vals: list[Any]) -> list[int]:
    """Numbers 0, 1, 2, ... of ``vals`` in order of first appearance (``d`` keeps them across batches)."""
    ids = list(map(d.get, vals, repeat(-1)))
    if -1 in ids:
        new = dict.fromkeys(compress(vals, map(eq, ids, repeat(-1))))
        d.update(zip(new, range(len(d), len(d) + len(new)), strict=True))
        ids = list(map(d.__getitem__, vals))
    return ids


def _packed_flow_keys(b: StoreBuilder, ids: list[Any], cats: list[int], names: list[int]) -> np.ndarray:
    """``StoreBuilder.flow_key`` for a batch: packed with array passes where the ids are ints in range, the rest
    one by one."""
    n = len(ids)
    c = np.array(cats, np.int64)
    m = np.array(names, np.int64)
    try:
        i = np.frombuffer(array("q", ids), np.int64)
    except (TypeError, OverflowError):  # text (or huge) ids among them
        return np.array([b.flow_key(ids[k], cats[k], names[k]) for k in range(n)], np.int64)
    out = (c << 51) | (m << 40) | i
    fits = (i >= 0) & (i < FLOW_ID_LIMIT) & (c < FLOW_TEXT_LIMIT) & (m < FLOW_TEXT_LIMIT)
    if not fits.all():
        for k in np.flatnonzero(~fits).tolist():
            out[k] = b.flow_key(ids[k], cats[k], names[k])
    return out


def _flow_key(v: Any) -> Any:
    """Flow ids as Perfetto reads them: a string is hexadecimal (``"0x402"``), a number is itself."""
    if isinstance(v, str):
        try:
            return int(v, 16)
        except ValueError:
            return v
    return v


class ChromeLoader:
    """One Chrome trace JSON file (plain or gzip) into a ``TraceStore``."""

    def __init__(self, path: Path, opener: Callable[[Path], Any], cancelled: Callable[[], bool] | None = None) -> None:
        self.path = path
        self.opener = opener
        self.cancelled = cancelled
        """Asked between batches: True gives the load up (``LoadCancelled``)."""
        self.b = StoreBuilder(str(path), "chrome")
        self.text_mode = False
        """Numbers are read as text (set by the first batch whose floats are not exact)."""
        self.lean = False
        self._lean_off = False
        """Batches are decoded with ``_Lean`` (set after a batch of only X/B/E; unset for good by one that had
        anything else, which is then decoded again whole)."""
        self.stream: EventStream[_Ev] | None = None
        self._flow_names: dict[Any, int] = {}
        self._flow_cats: dict[Any, int] = {}
        """Flow names and cats as small numbers (in order of first appearance), for the flow keys."""
        self._sniffed = False
        self._malformed = 0
        """Events the last ``_decode`` counted as malformed (undone when a batch is decoded again as text)."""

    def load(self) -> TraceStore:
        b = self.b
        with self.opener(self.path) as f:
            self.stream = stream = EventStream(f, self._decode)
            n = 0
            for batch, data in stream:
                if self.cancelled is not None and self.cancelled():
                    raise LoadCancelled(f"{self.path}: loading given up")
                n += len(batch)
                self._ingest(batch, data)
        b.lost, b.lost_reasons = stream.lost, stream.lost_reasons
        b.unread = list(stream.unread)
        if isinstance(f, GzipReader) and f.cut:
            b.unread.append(f.cut)
        self._meta(stream)
        if stream.system is not None:
            n += self._system(stream.system)
        if n == 0 and stream.lost and not stream.form:
            raise TraceError(f"{self.path}: not JSON: no trace events could be read")
        if n == 0 and stream.lost and not b.start and not b.be_ts:
            raise TraceError(f"{self.path}: {self._why_nothing()}")
        self._classify()
        if self.cancelled is not None and self.cancelled():
            raise LoadCancelled(f"{self.path}: loading given up")
        return b.build()

    def _why_nothing(self) -> str:
        """Why no event could be read: an array of something other than events (valid JSON, not a trace: a
        catapult dashboard's points, a PyTorch memory timeline), or malformed JSON."""
        with self.opener(self.path) as f:
            head = f.read(1 << 12).lstrip(b"\xef\xbb\xbf \t\r\n")
        if head[:1] == b"[":
            first = head[1:].lstrip(b" \t\r\n")[:1]
            kind = {b"[": "arrays", b'"': "strings", b"t": "booleans", b"f": "booleans", b"n": "nulls"}.get(
                first, "numbers" if first[:1].isdigit() or first == b"-" else ""
            )
            if kind:
                return f"not a trace file: a JSON array of {kind}, not of trace events (objects with \"ph\")"
        return "no trace events could be read (malformed JSON)"

    # -- decoding -----------------------------------------------------------------------------------------------
    def _decode(self, data: bytes) -> list[_Ev]:
        """A batch of events; events with odd field types are decoded one by one (the bad ones counted)."""
        if not self._sniffed:
            self._sniffed = True
            m = _BIG_FLOAT_TS.search(data, 0, 1 << 16)
            if m is not None and int(m.group(1)) >= SAFE_US:
                self.text_mode = True  # epoch microseconds with a fraction (Kineto): text from the first batch on
        batch, one, anyd = _DECODERS[self.text_mode]
        self._malformed = 0
        try:
            if self.lean and not self.text_mode:
                return _lean_decoder.decode(data)  # type: ignore[return-value]  # _Lean reads like an _Ev
            return batch.decode(data)  # type: ignore[no-any-return]
        except msgspec.ValidationError:
            self.lean = False
        raws = _raw_list_decoder.decode(data)  # DecodeError here: not an array, the stream deals with it
        out = []
        for r in raws:
            try:
                out.append(one.decode(r))
            except (msgspec.ValidationError, msgspec.DecodeError):
                ev = self._coerce(r, anyd)
                if ev is None:
                    self.b.problems["malformed event"] += 1
                    self._malformed += 1
                else:
                    out.append(ev)
        return out

    def _coerce(self, raw: msgspec.Raw, anyd: msgspec.json.Decoder) -> _Ev | None:
        """Last resort for an event with odd types (pid as float, name as object): keep what makes sense."""
        try:
            d = anyd.decode(raw)
        except msgspec.DecodeError:
            return None
        if not isinstance(d, dict):
            return None

        def scalar(v: Any) -> Any:
            return v if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None

        def ident(v: Any) -> Any:
            return str(v) if isinstance(v, float) else scalar(v)

        args = d.get("args")
        cls = _EvText if self.text_mode else _Ev
        return cls(
            ph=d["ph"] if isinstance(d.get("ph"), str) else "",
            name=str(d.get("name", "")),
            cat=str(d.get("cat") or ""),
            ts=scalar(d.get("ts")),
            dur=scalar(d.get("dur")),
            pid=ident(d.get("pid")),
            tid=ident(d.get("tid")),
            id=ident(d.get("id")),
            s=d.get("s") if isinstance(d.get("s"), str) else None,
            bp=d.get("bp") if isinstance(d.get("bp"), str) else None,
            bind_id=ident(d.get("bind_id")),
            flow_in=d.get("flow_in") is True,
            flow_out=d.get("flow_out") is True,
            args=msgspec.Raw(msgspec.json.encode(args)) if isinstance(args, dict) else _EMPTY,
        )

    # -- ingest -------------------------------------------------------------------------------------------------
    def _redecode(self, data: bytes) -> list[_Ev]:
        """Decode a batch again (as text, or with every field): what the first decode counted is undone."""
        if self._malformed:
            self.b.problems["malformed event"] -= self._malformed
            if self.b.problems["malformed event"] <= 0:
                del self.b.problems["malformed event"]
        return self._decode(data)

    def _ingest(self, batch: list[_Ev], data: bytes) -> None:
        """X and B/E events a batch at a time; the rest one by one."""
        phases = list(map(_PH, batch))
        n = len(batch)
        joined = "".join(phases)
        if len(joined) != n and any(len(p) > 1 for p in phases):  # "ph": "XXX": Perfetto reads the first character only (its test_string_pid_tid)
            for e in batch:
                if len(e.ph) > 1:
                    e.ph = e.ph[0]
            phases = list(map(_PH, batch))
            joined = "".join(phases)
        counts = joined.count if len(joined) == n else phases.count  # one-letter phases: str.count is a memchr
        nx = counts("X")
        binds = list(map(_BIND, batch)).count(None) != n
        lean = self.lean and not self.text_mode
        if lean and (binds or nx + counts("B") + counts("E") < n):
            self.lean = lean = False  # this file has more than X/B/E: every field from now on
            self._lean_off = True
            batch = self._redecode(data)
        b = self.b
        if nx == n:
            if not self._ingest_x(batch, binds, checked=False):  # floats that are not exact: read the text
                self.text_mode = True
                batch = self._redecode(data)
                self._ingest_x(batch, binds, checked=True)
            b.phase_counts["X"] += n
            self.lean = not binds and not self.text_mode and not self._lean_off
            return
        if not self.text_mode and floats_need_text_array(list(map(_TS, batch))):
            self.text_mode = True  # this batch, and every later one, keeps its numbers as text
            batch = self._redecode(data)
        if len(joined) == n:
            for ph in dict.fromkeys(joined):  # in order of first appearance, as Counter.update counts
                b.phase_counts[ph] += joined.count(ph)
        else:
            b.phase_counts.update(phases)
        ascii_ = len(joined) == n and joined.isascii()
        code = joined.encode() if ascii_ else b""  # one byte per event: masks by bytes.translate, a C pass

        def pick(table: bytes, members: frozenset[str]) -> list[_Ev]:
            if ascii_:
                return list(compress(batch, code.translate(table)))
            return list(compress(batch, map(members.__contains__, phases)))

        if nx:
            self._ingest_x(pick(_MASK_X, _X_ONLY), binds, checked=True)
        nb, ne = counts("B"), counts("E")
        if nb + ne:
            self._ingest_be(pick(_MASK_BE, _BE_PHASES), binds)
        rest = n - nx - nb - ne
        if rest:
            nf = counts("s") + counts("t") + counts("f")
            if nf > 16:
                self._ingest_flows(pick(_MASK_FLOW, _FLOW_PHASES))
                rest -= nf
            if rest:  # instants, counters, async, metadata ...: one by one, in file order
                done = _XBE_FLOW if nf > 16 else _XBE
                if ascii_:
                    other = _NOT_XBE_FLOW if nf > 16 else _NOT_XBE
                    for m in other.finditer(joined):
                        self._one(batch[m.start()])
                else:
                    for e in compress(batch, map(not_, map(done.__contains__, phases))):
                        self._one(e)
        elif not binds and not self.text_mode and not self._lean_off:
            self.lean = True

    def _ingest_x(self, xs: list[_Ev], binds: bool, checked: bool) -> bool:
        """The hot path: a batch of X events with numeric ts and dur (anything odd falls back to ``_one``).

        Returns False, having added nothing, when ``checked`` is False and a float time is not exact: the caller
        decodes the batch again as text.
        """
        b = self.b
        ts = list(map(_TS, xs))
        durs = list(map(_DUR, xs))
        got = None if self.text_mode else float_start_end(ts, durs)
        if got is None and not checked and not self.text_mode and floats_need_text_array(ts):
            return False
        try:
            if got is None and self.text_mode:
                got = self._text_start_end(ts, durs)
                if got is None:
                    ts, durs = list(map(_value, ts)), list(map(_value, durs))
            starts, ends = got if got is not None else start_end_arrays(ts, durs)
            if len(starts) and (starts.min() < -_LIMIT or ends.max() > _LIMIT):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            for e in xs:
                self._one(e)
            return True
        base = len(b.start)
        names, cats, tracks = self._columns(xs)
        offs = _append_args(b.args_blob, xs)
        # array.frombytes of an array's buffer is a memcpy; array.extend(list) converts item by item.
        b.start.frombytes(_bytes(starts))
        b.end.frombytes(_bytes(ends))
        b.name += array("i", names)
        b.cat += array("i", cats)
        b.track.frombytes(_bytes32(tracks))
        b.flags.frombytes(bytes(len(xs)))
        b.phase.frombytes(b"X" * len(xs))
        b.args_off += offs
        if binds:
            for k, e in enumerate(xs):
                if e.bind_id is not None:
                    self._flow_v2(e, ("raw", base + k), int(starts[k]))
        return True

    def _ingest_be(self, xs: list[_Ev], binds: bool) -> None:
        """B and E events into the builder's begin/end columns; they are paired per thread in ``build``."""
        b = self.b
        try:
            starts = self._times(list(map(_TS, xs)))
            if len(starts) and (starts.min() < -_LIMIT or starts.max() > _LIMIT):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            for e in xs:
                self._one(e)
            return
        base = len(b.be_ts)
        names, cats, tracks = self._columns(xs)
        offs = _append_args(b.be_blob, xs)
        b.be_ts.frombytes(_bytes(starts))
        b.be_track.frombytes(_bytes32(tracks))
        b.be_name += array("i", names)
        b.be_cat += array("i", cats)
        b.be_begin += bytes(map(eq, map(_PH, xs), repeat("B")))
        b.be_off += offs
        if binds:
            for k, e in enumerate(xs):
                if e.bind_id is not None and e.ph == "B":
                    self._flow_v2(e, ("be", base + k), int(starts[k]))

    def _times(self, vals: list[Any]) -> np.ndarray:
        """Timestamps -> ns (``ns_array``); in text mode from the raw number texts, in bulk when they allow it."""
        if self.text_mode:
            got = three_decimals_raw(vals)
            return got if got is not None else ns_array(list(map(_value, vals)))
        return ns_array(vals)

    def _text_start_end(self, ts: list[Any], durs: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """Starts and ends of X events from raw number texts, when both columns read in bulk (else None)."""
        starts = three_decimals_raw(ts)
        if starts is None:
            return None
        d = three_decimals_raw(durs)
        if d is None:
            return start_end_arrays(list(map(_value, ts)), list(map(_value, durs)))
        if int(starts.max()) + int(d.max()) >= 1 << 63:
            raise OverflowError("end out of range")
        return starts, starts + d

    def _columns(self, xs: list[_Ev]) -> tuple[list[int], list[int], np.ndarray]:
        """Interned name ids, cat ids and track ids of a batch (new ones are added as they appear)."""
        names = self._interned(list(map(_NAME, xs)), _str)
        cats = self._interned(list(map(_CAT, xs)), _cat_str)
        tracks = self._track_ids(xs)
        return names, cats, tracks

    def _interned(self, vals: list[Any], text: Callable[[Any], str]) -> list[int]:
        """String ids of ``vals`` (``text`` makes a string of an odd value: a number, None).

        A name seen for the first time is interned once, then the whole batch is looked up again at C speed: a
        batch that brings one new name (a new core's barrier) costs two passes, not a Python step per event."""
        b = self.b
        sget = b.smap.get
        ids = list(map(sget, vals, repeat(-1)))
        if -1 in ids:
            missing = dict.fromkeys(compress(vals, map(eq, ids, repeat(-1))))  # in order of first appearance
            odd = [v for v in missing if type(v) is not str]
            for v in missing:
                b.intern(text(v))
            ids = list(map(sget, vals, repeat(-1)))
            if odd:  # numbers or None as names: looked up by their text, one by one
                for k, v in enumerate(ids):
                    if v == -1:
                        ids[k] = b.intern(text(vals[k]))
        return ids

    def _track_ids(self, xs: list[_Ev]) -> np.ndarray:
        """The thread track of each event (int32). Writers put a thread's events together (neuron-det a core at a
        time) or interleave a few threads (Kineto): with integer pids and tids both are found with array passes
        (runs of one thread, or one key per thread), new tracks numbered in order of appearance; other ids take
        a tuple and a lookup per event."""
        b = self.b
        pids = list(map(_PID, xs))
        tids = list(map(_TID, xs))
        if str in set(map(type, pids)):
            pids = list(map(thread_ident, pids))
        if str in set(map(type, tids)):
            tids = list(map(thread_ident, tids))
        n = len(xs)
        ints = _int_columns(pids, tids)
        if ints is not None:
            p, t = ints
            cuts = np.flatnonzero(np.concatenate(([True], (p[1:] != p[:-1]) | (t[1:] != t[:-1]))))
            if len(cuts) * 8 < n:  # long runs of one thread
                ids = [b.track_id((pids[a], tids[a])) for a in cuts]
                return np.repeat(np.array(ids, np.int32), np.diff(np.append(cuts, n)))
            pmin, tmin = int(p.min()), int(t.min())
            width = int(t.max()) - tmin + 1
            if (int(p.max()) - pmin + 1) * width < (1 << 62):  # threads interleaved: one key per thread
                key = (p - pmin) * width + (t - tmin)
                run_keys = key[cuts]  # the threads are those of the runs' first events: a few hundred keys
                uniq = np.array(sorted(set(run_keys.tolist())), np.int64)  # (np.unique costs more at this size)
                inv = np.searchsorted(uniq, key)
                first = np.full(len(uniq), n, np.int64)
                np.minimum.at(first, np.searchsorted(uniq, run_keys), cuts)
                table = np.empty(len(uniq), np.int32)
                for u in np.argsort(first, kind="stable").tolist():  # new tracks numbered in order of appearance
                    a = int(first[u])
                    table[u] = b.track_id((pids[a], tids[a]))
                out: np.ndarray = table[inv]
                return out
        tracks = list(map(b.tmap.get, zip(pids, tids, strict=True), repeat(-1)))
        if -1 in tracks:
            for k, v in enumerate(tracks):
                if v == -1:
                    tracks[k] = b.track_id((pids[k], tids[k]))
        return np.array(tracks, np.int32)

    def _ingest_flows(self, fs: list[_Ev]) -> None:
        """Flow events (s/t/f) of a batch into the builder's flow columns, a batch at a time."""
        b = self.b
        try:
            ts = self._times(list(map(_TS, fs)))
            if len(ts) and (ts.min() < -_LIMIT or ts.max() > _LIMIT):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            for e in fs:
                self._one(e)
            return
        ids = list(map(_ID, fs))
        types = set(map(type, ids))
        if type(None) in types:  # a flow without "id" (maybe with id2): the slow, careful way for those
            keep = [i is not None for i in ids]
            rest = [e for e, i in zip(fs, ids, strict=True) if i is None]
            fs, ids = list(compress(fs, keep)), list(compress(ids, keep))
            ts = ts[np.array(keep, bool)]
            for e in rest:
                self._one(e)
            if not fs:
                return
        tracks = self._track_ids(fs)
        if str in types:
            ids = list(map(_flow_key, ids))
        # the flow id (id, cat, name) packed into one int64 (cat and name as small numbers): no tuple per point
        raw_names = list(map(_NAME, fs))
        if set(map(type, raw_names)) != {str}:  # a number or null as a name: keyed by its text, as one by one
            raw_names = list(map(_str, raw_names))
        names = _dense(self._flow_names, raw_names)
        cats = _dense(self._flow_cats, list(map(_CAT, fs)))
        keys = _packed_flow_keys(b, ids, cats, names)
        phs = "".join(map(_PH, fs)).encode()
        bps = list(map(_BP, fs))
        if bps.count(None) == len(bps):
            enclosing = phs.translate(_MASK_NOT_F)
        else:
            enclosing = bytes(map(or_, map(ne, phs, repeat(ord("f"))), map(eq, bps, repeat("e"))))
        b.flow_v1_batch(keys, ts, phs, tracks, enclosing)

    def _one(self, e: _Ev) -> None:
        """Any event, one at a time: odd values, instants, counters, flows, async, metadata."""
        b = self.b
        problems = b.problems
        ph = e.ph
        if type(e.pid) is str:
            e.pid = thread_ident(e.pid)
        if type(e.tid) is str:
            e.tid = thread_ident(e.tid)
        if ph not in _TIMED:  # metadata, objects, samples, memory dumps: their time is never drawn, never parsed
            if ph == "M":
                self._metadata_event(e)
            elif not ph:
                problems["event without ph"] += 1
            return  # (counted in phase_counts; a Kineto trace can hold 300,000 metadata events)
        try:
            s = to_ns(_value(e.ts))
            if not -_LIMIT <= s <= _LIMIT:
                raise OverflowError
        except (ValueError, TypeError, OverflowError):
            problems["event without a valid ts"] += 1
            return
        if ph == "X":
            d = _value(e.dur)
            if d is None:
                end = None  # X without dur: unfinished
            else:
                try:
                    end = s + to_ns(d)
                    if end > _LIMIT:
                        raise OverflowError
                except (ValueError, TypeError, OverflowError):
                    problems["X with a bad dur"] += 1
                    return
                if end < s:
                    problems["negative duration"] += 1
                    return
            t = b.track_id((e.pid, e.tid))
            pos = b.add(t, s, end, _str(e.name), e.cat or "", _args(e), "X")
            if e.bind_id is not None:
                self._flow_v2(e, ("raw", pos), s)
        elif ph == "B" or ph == "E":
            t = b.track_id((e.pid, e.tid))
            b.add_begin_end(s, ph == "B", t, _str(e.name), e.cat or "", _args(e))
            if e.bind_id is not None and ph == "B":
                self._flow_v2(e, ("be", len(b.be_ts) - 1), s)
        else:
            self._other(e, ph, s)

    def _flow_v2(self, e: _Ev, ref: tuple[str, int], ts: int) -> None:
        """Flow API v2: the slice itself carries ``bind_id`` and which way the arrow goes."""
        if e.flow_in and e.flow_out:
            kind = "t"
        elif e.flow_out:
            kind = "s"
        elif e.flow_in:
            kind = "f"
        else:
            self.b.problems["flow bind_id without flow_in/flow_out"] += 1
            return
        self.b.flow_v2(("v2", _flow_key(e.bind_id)), kind, ref, ts)

    def _scoped_id(self, e: _Ev) -> tuple[Any, ...] | None:
        """An async event's id as catapult scopes it: ``id`` and ``id2.global`` are global, ``id2.local`` per
        process; ``scope`` separates id spaces."""
        if e.id is not None:
            return (e.scope, "g", e.id)
        if len(e.id2) > 2:
            d = decode_dict(e.id2)
            if "global" in d:
                return (e.scope, "g", repr(d["global"]))
            if "local" in d:
                return (e.scope, "l", e.pid, repr(d["local"]))
        return None

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
        elif ph in ("b", "e", "n", "S", "T", "p", "F"):
            ident = self._scoped_id(e)
            if ident is None:
                b.problems[f"async event ({ph}) without an id"] += 1
                return
            b.add_async(ph, ident, s, e.pid, _str(e.name), e.cat or "", _args(e))
            if e.bind_id is not None and ph in ("b", "n"):
                self._flow_v2(e, ("async", b.seq), s)
        elif ph == "C":
            self._counter(e, s)
        elif ph in ("s", "t", "f"):
            if e.id is None and len(e.id2) <= 2:
                b.problems["flow event without an id"] += 1
                return
            flow_id: Any = e.id if e.id is not None else bytes(e.id2)
            t = b.track_id((e.pid, e.tid))
            enclosing = ph != "f" or e.bp == "e"
            cat = _dense(self._flow_cats, [e.cat])[0]
            name = _dense(self._flow_names, [_str(e.name)])[0]
            b.flow_v1(b.flow_key(_flow_key(flow_id), cat, name), ph, t, s, enclosing)

    def _counter(self, e: _Ev, s: int) -> None:
        b = self.b
        args = decode_dict(e.args)
        series = []
        for k, v in args.items():
            if isinstance(v, str):  # numeric text, as Perfetto accepts it
                try:
                    v = float(v)
                except ValueError:
                    continue
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
                series.append((k, float(v)))
        name = _str(e.name)
        if e.id is not None:
            name = f"{name} id: {e.id}"
        for k, v in series:
            label = name if len(series) == 1 else f"{name} {k}"
            c = b.counter(("C", e.pid, name, k), label, pid=e.pid)
            c.ts.append(s)
            c.val.append(v)

    def _metadata_event(self, e: _Ev) -> None:
        b = self.b
        args = decode_dict(e.args)
        name, val = e.name, args.get("name")
        if name == "process_name" and val is not None:
            b.process_names[e.pid] = str(val)
        elif name == "thread_name" and val is not None:
            b.thread_names[(e.pid, e.tid)] = str(val)
        elif name in ("process_sort_index", "thread_sort_index"):
            idx = args.get("sort_index")
            if isinstance(idx, float):
                idx = int(idx)
            if isinstance(idx, int) and not isinstance(idx, bool):
                if name == "process_sort_index":
                    b.process_sort[e.pid] = idx
                else:
                    b.thread_sort[(e.pid, e.tid)] = idx
        elif name == "process_labels" and val is None and isinstance(args.get("labels"), str):
            b.process_labels[e.pid] = args["labels"]

    # -- the rest of the file -------------------------------------------------------------------------------------
    def _meta(self, stream: EventStream[_Ev]) -> None:
        b = self.b
        for k in _META_KEYS:
            v = stream.meta.get(k)
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                b.metadata[k] = str(v)
        dist = stream.meta.get("distributedInfo")
        if isinstance(dist, dict) and isinstance(dist.get("rank"), (int, str)):
            b.metadata["rank"] = str(dist["rank"])
        for k in ("schemaVersion", "deviceProperties"):
            if k in stream.meta:
                b.metadata.setdefault("kineto", "1")
        b.not_shown.update(stream.extra)

    def _system(self, raw: bytes) -> int:
        """``systemTraceEvents``: Fuchsia's records (names, and CPU tracks from context switches); systrace text
        is counted as not shown."""
        b = self.b
        head = raw.lstrip()[:1]
        if head == b'"':
            try:
                text = msgspec.json.decode(raw, type=str)
            except msgspec.DecodeError:
                text = ""
            lines = sum(1 for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))
            b.not_shown["systemTraceEvents (systrace text lines)"] = lines
            return 0
        try:
            sysobj = _fsys_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            b.unread.append("systemTraceEvents is not Fuchsia's object of events")
            return 0
        events: list[_FEv] = []
        for r in sysobj.events:
            try:
                events.append(_fev_decoder.decode(r))
            except (msgspec.DecodeError, msgspec.ValidationError):
                b.problems["malformed systemTraceEvents record"] += 1
        return fuchsia_system(b, events)

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
        elif "kineto" in b.metadata or names & _KINETO_CATS:
            b.format = "kineto"
        b.metadata.pop("kineto", None)


def fuchsia_system(b: StoreBuilder, events: list[_FEv]) -> int:
    """Fuchsia records: process and thread names, and one track per CPU showing which thread ran (as catapult's
    Fuchsia importer builds from the context switches). Returns how many records there were."""
    pnames: dict[Any, str] = {}
    threads: dict[Any, tuple[Any, str]] = {}
    switches: dict[int, list[tuple[int, Any, Any]]] = {}
    for ev in events:
        b.phase_counts[f"system {ev.ph or '?'}"] += 1
        if ev.ph == "p" and ev.name is not None:
            pnames[ev.pid] = ev.name
            b.process_names.setdefault(ev.pid, ev.name)
        elif ev.ph == "t" and ev.name is not None:
            threads[ev.tid] = (ev.pid, ev.name)
            b.thread_names.setdefault((ev.pid, ev.tid), ev.name)
        elif ev.ph == "k" and ev.cpu is not None and ev.in_ is not None:
            try:
                ts = to_ns(ev.ts)
            except (TypeError, ValueError):
                b.problems["context switch without a valid ts"] += 1
                continue
            prio = ev.in_.prio
            idle = (ev.in_.pid == 0 and prio == 0) or (ev.in_.pid is None and prio is not None and prio <= -(2**31))
            switches.setdefault(ev.cpu, []).append((ts, None if idle else ev.in_.tid, ev.in_.pid))
    end_all = max((sw[-1][0] for sw in switches.values() if sw), default=0)
    for cpu in sorted(switches):
        sw = sorted(switches[cpu], key=lambda r: r[0])
        t = b.track_id(("<cpu>", cpu), "cpu", pid=None, name=f"CPU {cpu}", process="CPUs (context switches)")
        for k, (ts, tid, _pid) in enumerate(sw):
            if tid is None:
                continue
            end = sw[k + 1][0] if k + 1 < len(sw) else end_all
            if end <= ts:
                continue
            pid, tname = threads.get(tid, (None, str(tid)))
            proc = pnames.get(pid)
            name = f"{proc}:{tname}" if proc else tname
            b.add(t, ts, end, name, "sched", b"", "k")
    return len(events)

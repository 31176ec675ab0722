"""Decode one neuron-monitor report.

The fast path is one typed msgspec decode (the k8s group is reused from the previous report when its bytes did
not change). When a report is valid JSON but some group has the wrong shape (a string where a number belongs, a
list where an object belongs), the slow path decodes it generically and converts each group on its own: the groups
that fit are kept, the ones that do not are replaced by an empty group whose ``error`` says what was wrong. Only
input that is not a JSON object at all is rejected.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from neuron_top import schema
from neuron_top.textsafe import clean

__all__ = ["NOT_A_REPORT", "REPORT_GROUPS", "DecodeError", "decode_report", "has_report_group", "is_report"]

REPORT_GROUPS = ("neuron_runtime_data", "system_data", "instance_info", "neuron_hardware_info", "neuron_k8s_info")
"""neuron-monitor's top-level groups (its user guide): a report has at least one of them."""
NOT_A_REPORT = "not a report (none of neuron-monitor's groups)"
"""Why a JSON object without any of ``REPORT_GROUPS`` is skipped: the same words in every output."""
_FIRST_GROUP = re.compile(rb'\{\s*"(?:' + b"|".join(g.encode() for g in REPORT_GROUPS) + rb')"\s*:\s*[\[{]')
_TOP_KEYS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def has_report_group(data: bytes | memoryview | Any, start: int = 0, end: int | None = None) -> bool:
    """Whether the JSON object ``data[start:end]`` has one of ``REPORT_GROUPS`` as a top-level key with an object
    or a list as its value: ``is_report`` without decoding the report, for the recording index. neuron-monitor
    writes ``neuron_runtime_data`` first, so a real report is known by its first key; any other object is
    looked at key by key (its values skipped, not decoded)."""
    end = len(data) if end is None else end
    if _FIRST_GROUP.match(data, start, end) is not None:
        return True
    try:
        top = _TOP_KEYS.decode(data[start:end])
    except msgspec.DecodeError:  # not one JSON object: the decoder refuses it too
        return False
    return any(bytes(top[g])[:1] in (b"{", b"[") for g in REPORT_GROUPS if g in top)


def is_report(report: schema.Report) -> bool:
    """Whether a decoded JSON object is a neuron-monitor report: it has at least one of ``REPORT_GROUPS``. Any
    other object (``{"a": 1}`` from a ``--command`` that is not neuron-monitor) is "not a report" for the feed,
    ``--once``, the recording index and ``--summary`` alike."""
    return any(getattr(report, g) is not None for g in REPORT_GROUPS)

_HUGE_NUMBER = re.compile(rb"(?<![\w.\"])-?\d{19,}(?:\.\d+)?(?:[eE][+-]?\d+)?|-?\d+(?:\.\d+)?[eE][+-]?\d{3,}")
_GENERIC = msgspec.json.Decoder()

# The fast path decodes ``neuron_k8s_info`` on its own: it is ~8% of a trn2 report's decode time, and
# neuron-monitor refreshes it every 15 s by default (pods do not move between reports), so consecutive reports
# carry the same bytes and the last decoded value is reused (a byte comparison instead of ~150 structs).
# Each runtime's memory in use (``memory_used.neuron_runtime_used_bytes``) likewise: over half of a trn2 report's
# bytes (every core's memory by category: ~450 dicts and ~2,200 ints a report), and the same as the runtime's
# previous report's in most reports (memory moves when models load). It is kept as raw JSON, compared with the
# last one of the same pid, and decoded only when it changed: a report then allocates a third less memory,
# which at one report a second is memory the caches no longer hold (``benchmarks/bench_cold.py``). The value is
# shared between snapshots (structs are frozen; nothing modifies the dicts in them), and the memory aggregates
# (``snapshot.across``) then find it equal at once, by identity.
def _wire(cls: type, name: str, raw: frozenset[str] = frozenset(), **types: Any) -> Any:
    """``cls`` for the fast path's decoder: the fields named in ``raw`` kept as raw JSON, ``types`` retyped."""
    return msgspec.defstruct(
        name,
        [(f.name, msgspec.Raw, msgspec.Raw()) if f.name in raw else (f.name, types.get(f.name, f.type), f.default)
         for f in msgspec.structs.fields(cls)],
        frozen=True, kw_only=True, gc=False,
    )


_WireMemoryUsed = _wire(schema.MemoryUsed, "_WireMemoryUsed", frozenset({"neuron_runtime_used_bytes"}))
_WireRuntimeReport = _wire(schema.RuntimeReport, "_WireRuntimeReport", memory_used=_WireMemoryUsed | None)
_WireRuntime = _wire(schema.Runtime, "_WireRuntime", report=_WireRuntimeReport | None)
_WireReport = _wire(schema.Report, "_WireReport", frozenset({"neuron_k8s_info"}),
                    neuron_runtime_data=list[_WireRuntime | None] | None)  # type: ignore[valid-type]
_DECODER = msgspec.json.Decoder(_WireReport, strict=False)
_K8S = msgspec.json.Decoder(schema.K8sInfo | None, strict=False)
_USED = msgspec.json.Decoder(schema.UsedBytes | None, strict=False)
_k8s_last: tuple[msgspec.Raw, schema.K8sInfo | None] = (msgspec.Raw(), None)
"""The last ``neuron_k8s_info`` bytes seen and their decoded value (one tuple: swapped atomically)."""
_used_last: dict[int | None, tuple[msgspec.Raw, schema.UsedBytes | None]] = {}
"""Pid -> the last report's ``neuron_runtime_used_bytes`` of that runtime, raw and decoded (the whole dict is
replaced after each report: only the last report's pids are kept). Several threads may decode at once (the
fleet's hosts): a value is used only when its bytes are equal, so sharing the table is safe."""


def _typed(cls: type, wire: Any, **changed: Any) -> Any:
    """The schema struct ``cls`` of a ``_wire`` one: every field as decoded, but those ``changed`` (no field
    listed by hand: one the schema gains is carried over)."""
    return cls(**{**msgspec.structs.asdict(wire), **changed})


def _runtimes(wires: list[Any] | None) -> list[schema.Runtime | None] | None:
    """The runtimes, each one's memory in use decoded, or taken from its previous report when unchanged."""
    global _used_last
    if wires is None:
        return None
    last: dict[int | None, tuple[msgspec.Raw, schema.UsedBytes | None]] = _used_last
    seen: dict[int | None, tuple[msgspec.Raw, schema.UsedBytes | None]] = {}
    out: list[schema.Runtime | None] = []
    for wire in wires:
        if wire is None:
            out.append(None)
            continue
        report = wire.report
        if report is not None:
            memory = report.memory_used
            if memory is not None:
                raw: msgspec.Raw = memory.neuron_runtime_used_bytes
                kept = last.get(wire.pid)
                if kept is None or kept[0] != raw:
                    raw = msgspec.Raw(bytes(raw))  # a copy: the Raw would otherwise keep the whole report alive
                    kept = (raw, _USED.decode(raw) if raw else None)
                seen[wire.pid] = kept
                memory = _typed(schema.MemoryUsed, memory, neuron_runtime_used_bytes=kept[1])
            report = _typed(schema.RuntimeReport, report, memory_used=memory)
        out.append(_typed(schema.Runtime, wire, report=report))
    _used_last = seen
    return out


def _fast(data: bytes | str) -> schema.Report:
    """One typed decode; raises msgspec's errors. The k8s group comes from the last report when unchanged, and
    each runtime's memory in use from its last report when unchanged."""
    global _k8s_last
    wire = _DECODER.decode(data)
    fields = msgspec.structs.asdict(wire)
    raw: msgspec.Raw = wire.neuron_k8s_info
    last_raw, k8s = _k8s_last
    if raw != last_raw:
        raw = msgspec.Raw(bytes(raw))  # a copy: the Raw would otherwise keep the whole report alive
        k8s = _K8S.decode(raw) if raw else None
        _k8s_last = (raw, k8s)
    fields["neuron_k8s_info"] = k8s
    fields["neuron_runtime_data"] = _runtimes(wire.neuron_runtime_data)
    return schema.Report(**fields)


class DecodeError(ValueError):
    """The input is not a neuron-monitor report (not JSON, truncated, or not an object)."""


def decode_report(data: bytes | str) -> tuple[schema.Report, tuple[str, ...]]:
    """Return the report and the problems found while decoding it (empty on the fast path).

    Raises ``DecodeError`` with a one-line, printable message when ``data`` is not a JSON object.
    """
    try:
        return _decode(data)
    except UnicodeDecodeError:
        # Bytes that are not UTF-8 inside a string (a process name, a tag): msgspec raises this rather than a
        # DecodeError, from either path. Replace them (U+FFFD) and keep the report; the recording has the bytes.
        if not isinstance(data, bytes):
            raise DecodeError("malformed JSON: invalid text") from None
        fixed = data.decode("utf-8", "replace").encode()
        try:
            report, problems = _decode(fixed)
        except UnicodeDecodeError:
            raise DecodeError("malformed JSON: invalid UTF-8") from None
        return report, ("bytes that are not UTF-8 were replaced", *problems)


def _decode(data: bytes | str) -> tuple[schema.Report, tuple[str, ...]]:
    try:
        report = _fast(data)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as exc:
        raise DecodeError(_describe(exc, data)) from None
    else:  # every group of the right shape: a group is there when it is not None
        if not is_report(report):
            raise DecodeError(NOT_A_REPORT)
        return report, ()
    note: tuple[str, ...] = ()
    try:
        obj = _GENERIC.decode(data)
    except msgspec.DecodeError as exc:
        # Numbers too large for int64/float64: null them and keep the rest of the report.
        if "out of range" not in str(exc):
            raise DecodeError(_describe(exc, data)) from None
        raw = data.encode() if isinstance(data, str) else data
        try:
            obj = _GENERIC.decode(_HUGE_NUMBER.sub(b"null", raw))
            note = ("numbers out of range were dropped",)
        except msgspec.DecodeError as exc2:
            raise DecodeError(_describe(exc2, data)) from None
    if not isinstance(obj, dict):
        raise DecodeError(f"a JSON {type(obj).__name__} is not a report (expected an object)")
    if not any(isinstance(obj.get(g), dict | list) for g in REPORT_GROUPS):  # as has_report_group sees it
        raise DecodeError(NOT_A_REPORT)
    report, problems = _lenient(obj)
    return report, note + problems


def _describe(exc: msgspec.DecodeError, data: bytes | str) -> str:
    msg = str(exc)
    if "truncated" in msg.lower() or "unexpected end" in msg.lower():
        return f"truncated report ({len(data)} bytes)"
    return f"malformed JSON: {clean(msg, 120)}"


_TOP_GROUPS: dict[str, Any] = {
    "instance_info": schema.InstanceInfo,
    "neuron_hardware_info": schema.HardwareInfo,
    "neuron_k8s_info": schema.K8sInfo,
    "neuron_top": schema.NeuronTopMeta,
}
_SYSTEM_GROUPS: dict[str, Any] = {
    "neuron_hw_counters": schema.HwCounters,
    "vcpu_usage": schema.VcpuUsage,
    "memory_info": schema.MemoryInfo,
}
_RUNTIME_GROUPS: dict[str, Any] = {
    "neuroncore_counters": schema.NeuroncoreCounters,
    "execution_stats": schema.ExecutionStats,
    "memory_used": schema.MemoryUsed,
    "neuron_runtime_vcpu_usage": schema.RuntimeVcpuUsage,
}


def _convert(value: Any, typ: Any, where: str, problems: list[str]) -> Any:
    """Convert one group; on a shape error return an empty group that carries the error."""
    if value is None:
        return None
    if typ is schema.MemoryUsed and isinstance(value, dict) and "loaded_models" in value:
        # kept as raw JSON (decoded lazily): give it back its bytes
        value = {**value, "loaded_models": msgspec.Raw(msgspec.json.encode(value["loaded_models"]))}
    try:
        return msgspec.convert(value, typ, strict=False)
    except msgspec.ValidationError as exc:
        problems.append(f"{where}: {clean(str(exc), 160)}")
        try:
            return typ(error=f"invalid data: {clean(str(exc), 160)}")
        except TypeError:
            return None


def _groups(obj: Any, table: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        if obj is not None:
            problems.append(f"{where}: expected an object, got {type(obj).__name__}")
        return {}
    return {k: _convert(obj.get(k), t, f"{where}.{k}" if where else k, problems) for k, t in table.items()}


def _lenient(obj: dict[str, Any]) -> tuple[schema.Report, tuple[str, ...]]:
    problems: list[str] = []
    fields = _groups(obj, _TOP_GROUPS, "", problems)
    system = _groups(obj.get("system_data"), _SYSTEM_GROUPS, "system_data", problems)
    runtimes: list[schema.Runtime | None] | None = None
    raw_runtimes = obj.get("neuron_runtime_data")
    if isinstance(raw_runtimes, list):
        runtimes = []
        for i, rt in enumerate(raw_runtimes):
            where = f"neuron_runtime_data[{i}]"
            if not isinstance(rt, dict):
                problems.append(f"{where}: expected an object")
                continue
            head = {k: rt.get(k) for k in ("pid", "address", "neuron_runtime_tag", "error")}
            try:
                runtime = msgspec.convert(head, schema.Runtime, strict=False)
            except msgspec.ValidationError as exc:
                problems.append(f"{where}: {clean(str(exc), 160)}")
                continue
            rt_report = schema.RuntimeReport(**_groups(rt.get("report"), _RUNTIME_GROUPS, f"{where}.report", problems))
            runtimes.append(msgspec.structs.replace(runtime, report=rt_report))
    elif raw_runtimes is not None:
        problems.append("neuron_runtime_data: expected a list")
    pods = obj.get("neuron_top_pods")
    report = schema.Report(
        neuron_runtime_data=runtimes,
        system_data=schema.SystemData(**system) if system else None,
        neuron_top_pods=msgspec.Raw(msgspec.json.encode(pods)) if isinstance(pods, dict) else None,
        **fields,
    )
    return report, tuple(problems)

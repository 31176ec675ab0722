"""Helpers for the trace tests: the real traces in tests/fixtures/traces, an independent reader, tiny writers."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TRACES = ROOT / "tests" / "fixtures" / "traces"
"""Real traces from catapult, Perfetto, HolisticTraceAnalysis and speedscope (SOURCES.md says where from)."""


def real_trace(name: str) -> Path:
    p = TRACES / name
    assert p.exists(), f"{p} is missing: tests/fixtures/traces is part of the repository"
    return p


def read_json(path: Path, exact: bool = False) -> Any:
    """The whole file with the standard library (the independent reading the loader is checked against).

    ``exact``: numbers with a fraction as ``Decimal``, so times can be compared to the nanosecond.
    """
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Decimal if exact else float)


def trace_events(path: Path, exact: bool = False) -> list[dict[str, Any]]:
    data = read_json(path, exact)
    return data if isinstance(data, list) else data.get("traceEvents", [])


def phase_counts(path: Path) -> Counter[str]:
    return Counter(e.get("ph", "") for e in trace_events(path) if isinstance(e, dict))


def ns(v: Any) -> int:
    """Microseconds (int, Decimal or numeric text) -> nanoseconds, by decimal arithmetic (ties to even)."""
    return int((Decimal(str(v)) * 1000).to_integral_value())


def write_events(tmp: Path, events: list[dict[str, Any]], name: str = "t.json", form: str = "array") -> Path:
    """Write Chrome trace events as a JSON array (``form="array"``) or object (``form="object"``)."""
    data: Any = events if form == "array" else {"traceEvents": events, "displayTimeUnit": "ns"}
    p = tmp / name
    p.write_text(json.dumps(data))
    return p


def x(name: str, ts: float, dur: float | None, tid: Any = 1, pid: Any = 1, **args: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {"name": name, "ph": "X", "ts": ts, "pid": pid, "tid": tid}
    if dur is not None:
        ev["dur"] = dur
    if args:
        ev["args"] = args
    return ev

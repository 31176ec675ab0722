"""Helpers for the trace tests: fixture locations and tiny trace writers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
# <repo>/../shared in the development workplace; NEURON_TOP_SHARED points elsewhere (e.g. from a git worktree).
SHARED_TRACES = (
    Path(os.environ.get("NEURON_TOP_SHARED", ROOT / ".." / "shared")) / "fixtures" / "traces"
).resolve()
SKIP_SHARED = "../shared fixtures not present (only in the development workplace)"


def shared_trace(name: str) -> Path:
    """A real trace under ../shared, or skip the test."""
    p = SHARED_TRACES / name
    if not p.exists():
        pytest.skip(SKIP_SHARED)
    return p


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

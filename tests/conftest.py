"""Shared test helpers: where the fixtures are, and how to skip when the development workplace's are absent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SHARED = (ROOT / ".." / "shared").resolve()
SHARED_REPORTS = SHARED / "fixtures" / "neuron-monitor"
SHARED_TRACES = SHARED / "fixtures" / "traces"
SKIP_SHARED = "../shared fixtures not present (they exist only in the development workplace)"


def pytest_configure(config: pytest.Config) -> None:
    """Without ../shared the snapshot tests of real fixtures skip, so their SVGs go unused; syrupy would fail
    the run for that. In a plain clone unused snapshots only warn; in the workplace they still fail."""
    if not SHARED_REPORTS.exists() and hasattr(config.option, "warn_unused_snapshots"):
        config.option.warn_unused_snapshots = True


def shared(path: Path) -> Path:
    """A path under ../shared, or skip the test with a clear reason."""
    if not path.exists():
        pytest.skip(SKIP_SHARED)
    return path


def load_snapshot(path: Path, ts: float | None = None):
    from neuron_top.decode import decode_report
    from neuron_top.snapshot import Snapshot

    report, problems = decode_report(path.read_bytes())
    return Snapshot(report, ts if ts is not None else time.time(), 1, problems)

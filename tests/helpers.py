"""Deterministic data for app and snapshot tests: seeded demo reports and fixtures, fed without threads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pytest

from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot

T0 = 1767225600.0  # 2026-01-01T00:00:00Z


@lru_cache(maxsize=8)
def demo_snapshots(instance: str = "trn2.48xlarge", seed: int = 7, n: int = 40) -> tuple[Snapshot, ...]:
    from neuron_top.sources.demo import generate

    out = []
    for i, data in enumerate(generate(instance, seed, n)):
        report, problems = decode_report(data)
        out.append(Snapshot(report, T0 + i, i + 1, problems))
    return tuple(out)


def file_snapshots(path: Path, n: int = 1) -> tuple[Snapshot, ...]:
    report, problems = decode_report(path.read_bytes())
    return tuple(Snapshot(report, T0 + i, i + 1, problems) for i in range(n))


def make_app(snapshots=(), *, size_hint: str = "", **kw):
    """An app with no source: tests push snapshots with ``feed`` (no collector thread, no timing)."""
    from neuron_top.tui.app import NeuronTopApp

    kw.setdefault("clock", lambda: 1000.0)
    app = NeuronTopApp(None, **kw)
    app.test_snapshots = tuple(snapshots)  # type: ignore[attr-defined]
    return app


def statics_text(screen, width: int) -> str:
    """The plain text of every ``Static`` on ``screen`` (the help screen's tables), printed ``width`` wide."""
    import io

    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    for w in screen.query("Static"):
        console.print(w.content)
    return console.export_text()


async def feed(pilot, snapshots=None) -> None:
    """Push snapshots into the running app as the collector would, then let it render."""
    app = pilot.app
    for s in snapshots if snapshots is not None else app.test_snapshots:
        app.accept_snapshot(s)
    app.session.set_status(state="live", name="test", last_report=1000.0)
    app._update_header()
    await pilot.pause()


async def until(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    """Let the event loop run (the app's messages, timers and workers) until ``condition()`` holds; fail after
    ``timeout`` seconds. What a test waits with, instead of a fixed sleep or ``pilot.pause()``: the pause's guess
    that the app is done (the process's CPU time barely advancing) is also what a process starved of CPU looks
    like, so on a loaded machine it returned before the work it waited for."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not true after {timeout:g} s: {what or getattr(condition, '__name__', condition)}")
        await asyncio.sleep(0.02)


def type_at_once(app, text: str) -> None:  # type: ignore[no-untyped-def]
    """Post ``text``'s keys back to back, as the driver posts what one read of the terminal gave it (typed fast,
    pasted, one ssh packet): ``Pilot.press`` waits for the app between two keys, which hides what happens to
    keys already queued when the first one opens a text box."""
    from textual import events

    names = {"/": "slash", ":": "colon", "=": "equals_sign", " ": "space", ".": "full_stop", "(": "left_parenthesis",
             "\b": "backspace", "\r": "enter"}
    for ch in text:
        app.post_message(events.Key(names.get(ch, ch), ch if ch.isprintable() else None))

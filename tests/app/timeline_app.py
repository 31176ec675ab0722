"""A tiny app that pushes the timeline screen: for the Pilot and snapshot tests."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from textual.app import App

from neuron_top.trace.store import TraceStore
from neuron_top.tui.screens.timeline import TimelineScreen


class FakeClock:
    """Time the test controls: the replay advances only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TimelineApp(App[None]):
    def __init__(
        self, source: TraceStore | str | Path | list[Path], clock: Callable[[], float] | None = None, **screen: Any
    ) -> None:
        super().__init__()
        self.source = source
        self.clock = clock or FakeClock()
        self.screen_options = screen
        """More TimelineScreen arguments: ``at``, ``metrics``."""

    def on_mount(self) -> None:
        self.push_screen(TimelineScreen(self.source, clock=self.clock, **self.screen_options))


def sync(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async Pilot test with asyncio.run (the environment has no pytest async plugin)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run

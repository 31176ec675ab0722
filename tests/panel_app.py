"""A tiny app that shows panels on a fixed view: for the Pilot tests and the snapshot tests."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from neuron_top.tui.widgets.ecc import EccPanel
from neuron_top.tui.widgets.executions import ExecPanel
from neuron_top.tui.widgets.latency import LatencyPanel
from neuron_top.tui.widgets.memory import MemorySummary, MemoryTree
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View


def all_panels() -> list[Panel]:
    return [MemorySummary(id="memory"), MemoryTree(id="tree"), EccPanel(id="ecc"), LatencyPanel(id="latency"),
            ExecPanel(id="executions")]


class PanelApp(App[None]):
    CSS = "Panel { margin-bottom: 1; }"

    def __init__(self, view: View, panels: Callable[[], list[Panel]] = all_panels) -> None:
        super().__init__()
        self._view = view
        self._make = panels

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="body"):
            yield from self._make()

    def on_mount(self) -> None:
        for p in self.query(Panel):
            p.view = self._view

    def set_view(self, view: View) -> None:
        for p in self.query(Panel):
            p.view = view


def sync(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async Pilot test with asyncio.run (the environment has no pytest async plugin)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run

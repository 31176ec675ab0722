"""How the panels look, on the hand-written data (deterministic: fixed size, fixed data, no clock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from neuron_top.tui.screens.app_detail import AppScreen
from neuron_top.view import View
from tests.panel_app import PanelApp
from tests.panel_views import hand_view

SnapCompare = Callable[..., bool]


class DrillDownApp(PanelApp):
    def __init__(self, view: View, pid: int) -> None:
        super().__init__(view, lambda: [])
        self.pid = pid

    def on_mount(self) -> None:
        self.push_screen(AppScreen(self.pid, self._view))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_panels(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(PanelApp(hand_view()), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_memory_tree_expanded_with_cursor(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    async def focus_tree(pilot: Any) -> None:
        pilot.app.query_one("#tree").focus()
        await pilot.pause()

    assert snap_compare(PanelApp(hand_view(1001)), terminal_size=size, run_before=focus_tree,
                        press=["x", "down", "down", "down"])


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_app_drill_down(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(DrillDownApp(hand_view(), 1001), terminal_size=size)

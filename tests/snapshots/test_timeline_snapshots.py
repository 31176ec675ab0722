"""Snapshots of the timeline at 80x24 and 120x40 on the repo's small deterministic neuron-det-like trace."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_top.trace import load_trace
from neuron_top.tui.screens.timeline import TimelineScreen
from tests.app.timeline_app import FakeClock, TimelineApp
from tests.trace_helpers import DATA


def _app(clock: FakeClock | None = None) -> TimelineApp:
    return TimelineApp(load_trace(DATA / "trace_small.json"), clock or FakeClock())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_overview(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(_app(), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_error_selected_with_details(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(_app(), press=["e"], terminal_size=size)


def test_neuroncore_grouping_zoomed(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["o", "plus", "plus", "right"], terminal_size=(120, 40))


def test_hang_list(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["u"], terminal_size=(120, 40))


def test_replay_playhead(snap_compare: Any) -> None:
    clock = FakeClock()

    async def play(pilot: Any) -> None:
        await pilot.press("r")
        scr = pilot.app.screen
        assert isinstance(scr, TimelineScreen)
        clock.now += 4.0  # 40% of the trace (it plays in ~10 s)
        scr.tick()
        await pilot.press("r")  # pause so the frame is still
        await pilot.pause()

    assert snap_compare(_app(clock), run_before=play, terminal_size=(120, 40))


def test_area_summary(snap_compare: Any) -> None:
    """``a``: the summary of the visible window, slice names by total time."""
    assert snap_compare(_app(), press=["a"], terminal_size=(120, 40))


def test_deep_zoom_axis_and_last_event(snap_compare: Any) -> None:
    """``G`` then ``F``: the last event fitted; the axis labels stay distinct that deep."""
    assert snap_compare(_app(), press=["G", "F", "plus", "plus"], terminal_size=(120, 40))


def test_filter_prompt_shows_its_syntax(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["f"], terminal_size=(80, 24))

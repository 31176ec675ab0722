"""The fleet screen at fixed sizes on deterministic data (demo hosts, a few in trouble), and its heat map."""

from __future__ import annotations

import pytest

from tests.fleet_app import StaticFleet, fleet_app
from tests.fleet_support import demo_frame

SIZES = [(80, 24), (120, 40), (200, 60)]


def _run(snap_compare, screen, size, press=(), theme=None):  # type: ignore[no-untyped-def]
    async def before(pilot):  # type: ignore[no-untyped-def]
        await pilot.pause()
        for key in press:
            await pilot.press(key)
        await pilot.pause()

    return snap_compare(fleet_app(screen, theme), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fleet_table(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert _run(snap_compare, StaticFleet(demo_frame(40)), size)


def test_fleet_trouble_first_grouped_120x40(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert _run(snap_compare, StaticFleet(demo_frame(80)), (120, 40), press=("exclamation_mark", "b"))


def test_fleet_heat_map_256_hosts_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert _run(snap_compare, StaticFleet(demo_frame(256)), (80, 24), press=("h",))


def test_fleet_heat_map_16_colours_120x40(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The theme for 16-colour terminals: the bands still read by their glyphs."""
    assert _run(snap_compare, StaticFleet(demo_frame(256)), (120, 40), press=("h",), theme="neuron-16")

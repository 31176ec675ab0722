"""The dashboard at fixed sizes on deterministic data (seeded demo reports and real fixtures)."""

from __future__ import annotations

import pytest

from tests.conftest import REPORTS
from tests.helpers import demo_snapshots, feed, file_snapshots, make_app

SIZES = [(80, 24), (120, 40), (200, 60)]


def _run(snap_compare, snapshots, size, press=()):
    async def before(pilot):
        await feed(pilot, snapshots)
        for key in press:
            await pilot.press(key)
        await pilot.pause()

    return snap_compare(make_app(snapshots), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_demo_trn2(snap_compare, size) -> None:
    assert _run(snap_compare, demo_snapshots("trn2.48xlarge", 7, 40), size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_trn1n_32_runtimes(snap_compare, size) -> None:
    snaps = file_snapshots(REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json", 3)
    assert _run(snap_compare, snaps, size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_inf2(snap_compare, size) -> None:
    snaps = file_snapshots(REPORTS / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json", 3)
    assert _run(snap_compare, snaps, size)


def test_demo_inf1_flops_selected_app(snap_compare) -> None:
    assert _run(snap_compare, demo_snapshots("inf1.xlarge", 3, 20), (120, 40), press=("f", "2"))


def test_demo_trn2_physical_cores_light_theme(snap_compare) -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 40)

    async def before(pilot):
        await feed(pilot, snaps)
        await pilot.press("v")
        pilot.app.theme = "neuron-light"
        await pilot.pause()

    assert snap_compare(make_app(snaps), terminal_size=(200, 60), run_before=before)


def test_demo_inf2_16_colour_theme_80x24(snap_compare) -> None:
    """The theme for 16-colour terminals, started with ``--theme neuron-16``, at the smallest size."""
    snaps = demo_snapshots("inf2.48xlarge", 3, 20)

    async def before(pilot):
        await feed(pilot, snaps)
        await pilot.pause()

    assert snap_compare(make_app(snaps, theme="neuron-16"), terminal_size=(80, 24), run_before=before)


def test_help_screen(snap_compare) -> None:
    assert _run(snap_compare, demo_snapshots("inf1.xlarge", 3, 5), (100, 40), press=("question_mark",))

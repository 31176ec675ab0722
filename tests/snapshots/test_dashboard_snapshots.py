"""The dashboard at fixed sizes on deterministic data (seeded demo reports and real fixtures).

Every demo machine at 80x24, 120x40, 160x50 and 200x60, in the utilization and the FLOPS view: the layout rules
(devices side by side, two columns, the overview's extras) and the exact core cells at everyday sizes.
``test_snapshot_text.py`` reads every stored SVG back and checks that no core cell is cut.
"""

from __future__ import annotations

import pytest

from tests.conftest import REPORTS
from tests.helpers import demo_snapshots, feed, file_snapshots, make_app

INSTANCES = ["inf1.xlarge", "inf2.48xlarge", "trn1.32xlarge", "trn2.48xlarge"]
SIZES = [(80, 24), (120, 40), (160, 50), (200, 60)]
SEED, REPORTS_FED = 7, 40


def _run(snap_compare, snapshots, size, press=(), **app):
    async def before(pilot):
        await feed(pilot, snapshots)
        for key in press:
            await pilot.press(key)
        await pilot.pause()

    return snap_compare(make_app(snapshots, **app), terminal_size=size, run_before=before)


@pytest.mark.parametrize("view", ["util", "flops"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("instance", INSTANCES)
def test_demo(snap_compare, instance: str, size: tuple[int, int], view: str) -> None:
    snaps = demo_snapshots(instance, SEED, REPORTS_FED)
    assert _run(snap_compare, snaps, size, press=("f",) if view == "flops" else ())


def test_trn1n_32_runtimes(snap_compare) -> None:
    """A real trn1n report with 32 runtimes: 32 rows in the apps panel, the screen scrolls."""
    snaps = file_snapshots(REPORTS / "trn1n_32xlarge_32runtimes_cwagent_test.json", 3)
    assert _run(snap_compare, snaps, (120, 40))


def test_inf2(snap_compare) -> None:
    """A real inf2.xlarge report (one device, two cores)."""
    snaps = file_snapshots(REPORTS / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json", 3)
    assert _run(snap_compare, snaps, (120, 40))


def test_demo_inf1_flops_selected_app(snap_compare) -> None:
    """inf1 reports no FLOPS: the grid says so and shows utilization; the second tab is selected."""
    assert _run(snap_compare, demo_snapshots("inf1.xlarge", 3, 20), (120, 40), press=("f", "2"))


def test_demo_trn2_physical_cores_light_theme_full_layout(snap_compare) -> None:
    snaps = demo_snapshots("trn2.48xlarge", SEED, REPORTS_FED)

    async def before(pilot):
        await feed(pilot, snaps)
        await pilot.press("v")
        pilot.app.theme = "neuron-light"
        await pilot.pause()

    assert snap_compare(make_app(snaps, layout="full"), terminal_size=(200, 60), run_before=before)


def test_demo_inf2_16_colour_theme_80x24(snap_compare) -> None:
    """The theme for 16-colour terminals, started with ``--theme neuron-16``, at the smallest size."""
    snaps = demo_snapshots("inf2.48xlarge", 3, 20)

    async def before(pilot):
        await feed(pilot, snaps)
        await pilot.pause()

    assert snap_compare(make_app(snaps, theme="neuron-16"), terminal_size=(80, 24), run_before=before)


def test_help_screen(snap_compare) -> None:
    assert _run(snap_compare, demo_snapshots("inf1.xlarge", 3, 5), (100, 40), press=("question_mark",))

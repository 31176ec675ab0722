"""NeuronCore utilization history on the main screen (issue 32 item 10, as btop and nvitop keep it beside the bars):
the mean of every core and of each device's cores over the session, where room allows, toggled with ``U``."""

from __future__ import annotations

import pytest

from neuron_top.tui.widgets.core_history import CoreHistory
from neuron_top.tui.widgets.sparkline import SPARK, STEP
from tests.helpers import demo_snapshots, feed, make_app


def lines_of(panel: CoreHistory) -> list[str]:
    return [s.text for s in panel.build(panel.view, panel.size.width)]


@pytest.mark.parametrize(("instance", "size", "devices"), [
    ("trn2.48xlarge", (120, 40), False), ("trn1.32xlarge", (120, 40), False), ("inf1.xlarge", (120, 40), False),
    ("trn1.32xlarge", (160, 50), True), ("inf2.48xlarge", (160, 50), True), ("trn2.48xlarge", (200, 60), True),
])
async def test_the_overview_shows_core_history_where_room_allows(instance: str, size: tuple[int, int],
                                                                 devices: bool) -> None:
    """At 120x40 and up, without scrolling: every device's line where they fit (160x50 and up), else the "all"
    line alone (16 devices at 120x40; one device: its line is the "all" line); each line's newest value is the mean of the last two reports, from the same figures as
    the grid."""
    snaps = demo_snapshots(instance, 7, 20)
    app = make_app(snaps)
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        await pilot.pause()
        panel = app.screen.query_one(CoreHistory)
        assert panel.display and app.screen.query_one("#body").max_scroll_y == 0
        text = lines_of(panel)
        assert text[0].startswith(" NeuronCore utilization history") and "avg " in text[0]
        assert text[1].startswith(" all ") and any(c in text[1] for c in SPARK)
        last = snaps[-1]
        want_all = sum(s.all.core_stats.util_avg for s in snaps[-STEP:]) / STEP
        assert text[1].rstrip().endswith(f"{want_all:.0f}%")
        nd = [t for t in text[2:] if " ND" in t]
        if devices:
            assert f"ND{last.device_count - 1} " in "\n".join(nd)
            cpd = last.cores_per_device

            def dev_mean(s, d: int) -> float:  # brute force: the device's cores that report a sane value
                us = [u for i, u in s.all.core_stats.util.items() if i // cpd == d and u is not None and 0 <= u <= 110]
                return sum(us) / len(us)

            want0 = sum(dev_mean(s, 0) for s in snaps[-STEP:]) / STEP
            first = nd[0].split(" ND1 ")[0]
            assert first.startswith(" ND0 ") and first.rstrip().endswith(f"{want0:.0f}%"), first
        else:
            assert not nd


async def test_u_hides_and_shows_it_and_it_is_in_the_help() -> None:
    from neuron_top.tui.screens.help import HelpScreen

    app = make_app(demo_snapshots("trn1.32xlarge", 7, 6))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.pause()
        panel = app.screen.query_one(CoreHistory)
        assert panel.display
        await pilot.press("U")
        await pilot.pause()
        assert not panel.display
        await pilot.press("U")
        await pilot.pause()
        assert panel.display and any(" ND15 " in t for t in lines_of(panel))  # shown by hand: every device
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = dict(dict(app.screen.sections)["Dashboard"])
        assert "NeuronCore utilization history" in rows["U"]


async def test_between_two_steps_it_hands_out_the_same_rows() -> None:
    """The history moves every other report: on the report between, the sparkline rows are the same strips
    (nothing rebuilt, the diff skips them); on the next step they move."""
    snaps = demo_snapshots("trn1.32xlarge", 7, 12)
    app = make_app(snaps[:10])
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(pilot)
        panel = app.screen.query_one(CoreHistory)
        assert app.history.pushed % STEP == 0
        before = panel.build(panel.view, 98)[1:]
        await feed(pilot, snaps[10:11])
        during = panel.build(panel.view, 98)[1:]
        assert all(a is b for a, b in zip(before, during, strict=True))
        await feed(pilot, snaps[11:12])
        after = panel.build(panel.view, 98)[1:]
        assert not any(a is b for a, b in zip(before, after, strict=True))


async def test_one_report_shows_its_value_not_a_dash() -> None:
    """A single report (a replayed fixture) has no whole cell of two reports yet: the line gives the report's own
    mean, as the grid's title does, not "-" (issue 32 item 7's kind: one report must not hide data)."""
    from neuron_top.tui.widgets.cores import CoreGrid
    from tests.app.test_main_screen import FIXTURES
    from tests.helpers import file_snapshots

    snaps = file_snapshots(FIXTURES / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json")
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        await pilot.pause()
        text = lines_of(app.screen.query_one(CoreHistory))
        want = snaps[0].all.core_stats.util_avg
        assert text[1].rstrip().endswith(f"{want:.0f}%")
        assert f"avg {want:.1f}%" in app.screen.query_one(CoreGrid)._strips[0].text

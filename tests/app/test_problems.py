"""The problems screen (E): group errors listed, ECC acknowledged, the source's exit and stderr, skipped input."""

from __future__ import annotations

from neuron_top.feed import SkippedInput, StatusChanged
from neuron_top.sources.base import Skipped, State, Status
from neuron_top.tui.screens.problems import ProblemsBody, ProblemsScreen
from neuron_top.tui.widgets.header import HeaderBar
from tests.conftest import DATA
from tests.helpers import feed, file_snapshots, make_app


def body(app) -> str:
    return str(app.screen.query_one(ProblemsBody).render())


async def test_group_errors_are_listed_one_key_away_and_the_ecc_mark_is_acknowledged() -> None:
    snaps = file_snapshots(DATA / "trn2_small.json")  # ND1 has an uncorrected error; one group error
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        header = app.screen.query_one(HeaderBar)
        assert "ECC! ND1 (E)" in header.render_line(0).text and "1 group error (E)" in header.render_line(0).text
        await pilot.press("E")
        assert isinstance(app.screen, ProblemsScreen)
        text = body(app)
        assert "Metric-group errors in the latest report (1)" in text
        assert "serve.neuron_runtime_vcpu_usage: open /proc/5151/stat: no such file or directory" in text
        assert "ND1: uncorrected ECC error; DRAM 1, SRAM 0 since start" in text
        await pilot.press("a")
        assert "none since the last acknowledgement" in body(app)
        assert "ECC!" not in app.screen.query_one(HeaderBar).render_line(0).text
        await pilot.press("escape")
        assert "ECC!" not in app.screen.query_one(HeaderBar).render_line(0).text
        await feed(pilot, snaps)  # a new uncorrected event: the mark comes back
        assert "ECC! ND1" in app.screen.query_one(HeaderBar).render_line(0).text


async def test_the_source_exit_stderr_and_skipped_input_are_listed_and_follow_changes() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.session.apply(SkippedInput(Skipped("not a report", "Warning: Permanently added", 2), 2))
        await pilot.press("E")
        assert "not a report: 2  e.g. 'Warning: Permanently added'" in body(app)
        assert "no report yet" in body(app)
        app.react(app.session.apply(StatusChanged(Status(
            State.FAILED, "stream ended: ssh trn exited with status 255 after 0 reports",
            "line one\nssh: connect to host trn port 22: Connection refused", exit_status=255))))
        await pilot.pause()
        text = body(app)
        assert "ssh trn exited with status 255" in text and "FAILED (exit 255)" in text
        assert "Connection refused" in text and "last 2 lines of its stderr" in text
        await pilot.press("E")  # E again closes it
        assert not isinstance(app.screen, ProblemsScreen)


async def test_a_report_on_the_dashboard_asks_the_dom_for_nothing(monkeypatch) -> None:
    """Handing a report to the dashboard looks no widget up in the DOM: the problems list is only on its own
    screen, and a query for it on every report walked and matched every widget of the dashboard (~0.4 ms of a
    ~9 ms update, issue 38)."""
    from textual.dom import DOMNode

    snaps = file_snapshots(DATA / "trn2_small.json")
    app = make_app(snaps)
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        queries: list[object] = []
        query = DOMNode.query

        def counted(self, *args, **kwargs):
            queries.append(args)
            return query(self, *args, **kwargs)

        monkeypatch.setattr(DOMNode, "query", counted)
        for s in snaps:
            app.accept_snapshot(s)
        assert queries == []

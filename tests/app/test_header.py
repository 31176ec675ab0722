"""The header's first line: each thing said once, the state and exit status never cut, "…" where text is cut."""

from __future__ import annotations

import threading

import pytest

from neuron_top.feed import SkippedInput, StatusChanged
from neuron_top.session import Session, SourceStatus
from neuron_top.sources.base import Skipped, State, Status
from neuron_top.tui.widgets.header import HeaderBar, status_line
from tests.helpers import demo_snapshots, feed, make_app, until

CMD = "ssh -o ConnectTimeout=5 ubuntu@trn2-node-17.example.internal neuron-monitor -c /etc/nm.json"


def line(src: SourceStatus, width: int = 120, snap=None, now: float = 1003.0) -> str:
    text = "".join(t for t, _ in status_line(snap, src, now, width))
    assert len(text) <= width
    return text


def test_a_long_command_is_said_once_and_the_age_stays_on_the_line() -> None:
    src = SourceStatus(name=CMD[:60], state="live", message=f"reports from {CMD[:60]} (pid 4242)",
                       last_report=1000.0)
    text = line(src)
    assert text.count("ssh -o ConnectTimeout") == 1
    assert "updated 3s ago" in text and "LIVE" in text
    assert "…" in text  # the message is cut, not the age
    assert "(pid 4242)" in line(src, 200)


def test_the_demo_names_its_instance_once_and_whole_at_80_columns() -> None:
    """The demo said "demo inf2.x… · simulated inf2.xlarge, seed 1" at 80 columns: the instance type twice, the
    one cut. Its status now says what the name does not (the seed)."""
    from neuron_top.sources.demo import DemoSource

    demo = DemoSource("inf2.xlarge", seed=1)
    first = next(iter(demo.items(threading.Event())))
    assert isinstance(first, Status)
    src = SourceStatus(name=demo.name, state="demo", message=first.message, last_report=1000.0)
    text = line(src, 80)
    assert text.count("inf2.xlarge") == 1 and "demo inf2.xlarge" in text and "seed 1" in text and "…" not in text


def test_a_failed_command_shows_its_exit_status_and_stderr_in_the_header_at_80_columns() -> None:
    s = Session(CMD[:60], clock=lambda: 1000.0)
    s.apply(StatusChanged(Status(State.FAILED, f"stream ended: {CMD[:60]} exited with status 255 after 0 reports",
                                 "Warning: Permanently added\nssh: connect to host trn2-node-17 port 22: "
                                 "Connection refused\n", exit_status=255)))
    text = line(s.shown(), 80)
    assert " FAILED exit 255 " in text
    assert "exited with status 255" not in text  # the badge says it: not twice
    wide = line(s.shown(), 200)
    assert "Connection refused" in wide and wide.count("ssh -o ConnectTimeout") == 1


def test_the_last_line_on_stderr_shows_even_when_the_command_holds_it() -> None:
    """``--command 'sh -c "echo oops >&2; exit 3"'``: "oops" is a word of the command, and the header took the
    stderr line for a repeat of it and left it out."""
    cmd = 'sh -c "echo oops >&2; exit 3"'
    s = Session(cmd, clock=lambda: 1000.0)
    s.apply(StatusChanged(Status(State.FAILED, f"stream ended: {cmd} exited with status 3 after 0 reports",
                                 "oops\n", exit_status=3)))
    text = line(s.shown(), 120)
    assert " FAILED exit 3 " in text and text.count("oops") == 2 and text.rstrip().endswith("oops")


def test_text_that_does_not_fit_is_cut_with_an_ellipsis() -> None:
    src = SourceStatus(name="stdin", state="live", message="x" * 300, last_report=1000.0)
    for width in (60, 80, 120):
        text = line(src, width)
        assert "…" in text and "updated 3s ago" in text


def test_stale_is_amber_and_says_how_late() -> None:
    src = SourceStatus(name="neuron-monitor", state="stale", last_report=900.0, expected=5.0)
    pieces = status_line(None, src, 1000.0, 120)
    assert (" STALE ", "state-warn") in pieces
    assert "no report for 1m40s (expected every 5s)" in "".join(t for t, _ in pieces)


def test_garbage_before_any_report_says_so() -> None:
    s = Session("stdin", clock=lambda: 1000.0)
    s.apply(StatusChanged(Status(State.STARTING, "waiting for reports on stdin")))
    s.apply(SkippedInput(Skipped("not a report", count=5000), 5000))
    text = line(s.shown(), 80)
    assert "NO DATA" in text and "no valid report yet, 5,000 lines skipped" in text
    one = Session("stdin", clock=lambda: 1000.0)  # a feed's total only grows: a new one for the singular
    one.apply(SkippedInput(Skipped("not a report"), 1))
    assert "no valid report yet, 1 line skipped" in line(one.shown())


def test_one_group_error_is_singular_and_the_ecc_mark_shows() -> None:
    from neuron_top.snapshot import snapshot_from
    from tests.conftest import DATA

    snap = snapshot_from((DATA / "trn2_small.json").read_bytes(), 1.0, 1)
    n = len(snap.group_statuses)
    src = SourceStatus(name="t", state="live", uncorrected=(1, 3))
    text = line(src, 160, snap)
    assert f"{n} group error{'s' if n != 1 else ''} (E)" in text
    assert " ECC! ND1,ND3 (E) " in text


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_the_recording_indicator_has_its_own_field(width: int) -> None:
    src = SourceStatus(name="neuron-monitor", state="live", recording="REC run.jsonl.zst", last_report=1000.0)
    text = line(src, width)
    assert "REC run.jsonl.zst" in text or width < 60


async def test_the_header_turns_stale_when_reports_stop() -> None:
    """The header of a running app: LIVE while reports come, STALE (amber) once three periods pass without one,
    with no event at all (the age clock's look), LIVE again at the next report."""
    now = [1000.0]
    snaps = demo_snapshots("trn2.48xlarge", 7, 6)
    app = make_app(clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        app.session.apply(StatusChanged(Status(State.LIVE, "reports from stdin")))
        for s in snaps[:5]:
            app.accept_snapshot(s)
            now[0] += 1.0
        await pilot.pause()
        header = app.screen.query_one(HeaderBar)
        assert " LIVE " in header.render_line(0).text
        now[0] += 10.0
        app._tick_clock()
        await pilot.pause()
        assert " STALE " in header.render_line(0).text and "no report for" in header.render_line(0).text
        app.accept_snapshot(snaps[5])
        await pilot.pause()
        assert " LIVE " in header.render_line(0).text


async def test_the_header_is_never_wider_than_the_screen_with_everything_on_it() -> None:
    snaps = demo_snapshots("trn2.48xlarge", 7, 3)
    app = make_app(snaps)
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot)
        app.session.set_status(message=CMD, skipped=12345, uncorrected=(3,), recording="REC x.jsonl")
        app._update_header()
        await pilot.pause()
        text = app.screen.query_one(HeaderBar).render_line(0).text
        assert len(text) == 80 and "ECC! ND3" in text and "updated" in text


async def test_a_flood_of_skipped_input_says_so_and_draws_the_header_a_few_times() -> None:
    """Garbage on stdin: the header says "no valid report yet, N lines skipped" with the last count, but is not
    drawn again for each of the hundreds of messages a flood brings (that cost a whole core)."""

    from neuron_top.tui.messages import InputSkipped

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.session.apply(StatusChanged(Status(State.STARTING, "waiting for reports on stdin")))
        header = app.screen.query_one(HeaderBar)
        calls = []
        update = app._update_header
        app._update_header = lambda: (calls.append(1), update())  # type: ignore[method-assign]
        for i in range(1, 301):
            app.on_input_skipped(InputSkipped(Skipped("not a report", count=100), i * 100))
        await pilot.pause()
        # Once at the first message; the timer may already have drawn the last count on a loaded machine (the
        # loop above runs without yielding, so never more than that).
        assert len(calls) <= 2
        await until(lambda: len(calls) >= 2, what="the header drawn again when the skip timer is due")
        assert len(calls) == 2
        text = header.render_line(0).text
        assert " NO DATA " in text and "no valid report yet, 30,000 lines skipped" in text


def test_the_problems_screen_still_says_why_a_restarted_command_ended() -> None:
    """Once a failed ``--command`` runs again (STARTING, then LIVE) its status says only "started ...": the
    problems screen lost the exit status and the report count it restarted for (CI caught it when the back-off
    ran out before the screen was drawn)."""
    from neuron_top.tui.screens.problems import problems_text

    now = [1000.0]
    s = Session(name="stalls", clock=lambda: now[0])
    ended = "stalls exited with status 3 after 4 reports; restarting in 2 s"
    s.apply(StatusChanged(Status(State.RESTARTING, ended, exit_status=3)))
    now[0] = 1004.0
    s.apply(StatusChanged(Status(State.STARTING, "started stalls (pid 4242)")))
    text = problems_text(s, 1004.0).plain
    assert "STARTING" in text and f"last ended 4s ago:\n    {ended}\n" in text
    assert text.count(ended) == 1  # while it says so itself, once
    s.apply(StatusChanged(Status(State.RESTARTING, ended, exit_status=3)))
    text = problems_text(s, 1004.0).plain
    assert text.count(ended) == 1
    assert "started again 2 times" in text  # the exporter's neurontop_source_restarts_total, counted the same way


async def test_skipped_input_coalesced_keeps_every_reason() -> None:
    """A stream of truncated and malformed reports: InputSkipped messages waiting in a row are coalesced by Textual,
    and the newest replaced the others outright. The header's total stayed right (the feed's count), but the
    problems screen said "Skipped input (6 items)" above one reason with 3 (seen in tmux)."""
    from neuron_top.tui.messages import InputSkipped
    from neuron_top.tui.screens.problems import problems_text

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        for n, (reason, sample) in enumerate([("truncated report", "{a"), ("truncated report", "{b"),
                                               ("malformed JSON", "{c"), ("malformed JSON", "{d")], 1):
            app.post_message(InputSkipped(Skipped(reason, sample), n))  # queued together: they coalesce
        await until(lambda: app.session.status.skipped == 4, what="the skipped count")
        await pilot.pause()
        assert app.session.skip_reasons == {"truncated report": (2, "{b"), "malformed JSON": (2, "{d")}
        text = problems_text(app.session, 1000.0).plain
        assert "Skipped input (4 items)" in text and "truncated report: 2" in text and "malformed JSON: 2" in text


def test_the_problems_screen_says_a_fast_period_in_milliseconds() -> None:
    """"3 reports received, one expected every 0.0623866s": the period as measured, unformatted."""
    from neuron_top.tui.screens.problems import problems_text
    from tests.conftest import REPORTS, load_snapshot

    s = Session(name="fast", clock=lambda: 1000.0)
    s.apply(StatusChanged(Status(State.LIVE)))
    for i in range(3):
        s.accept(load_snapshot(REPORTS / "inf1_xlarge_single_runtime.json", ts=1000.0 + i * 0.0624))
    assert "3 reports received, one expected every 62.4ms" in problems_text(s, 1000.2).plain


@pytest.mark.parametrize("width", [120, 160])
def test_the_pods_note_is_cut_not_left_out_of_the_machine_line(width: int) -> None:
    """On a trn1.32xlarge at 120 columns the second line had no room for "pods: none (kubelet socket absent: ...)"
    and dropped it whole: why the pods columns are empty was never seen. It is text, not figures: cut with "…"."""
    from neuron_top.k8s.model import Attribution
    from neuron_top.tui.widgets.header import machine_line

    note = "kubelet socket absent: /var/lib/kubelet/pod-resources/kubelet.sock (not a Kubernetes node?)"
    snap = demo_snapshots("trn1.32xlarge", 3, 1)[0].with_attribution(Attribution(note=note))
    whole = machine_line(snap, 10_000)
    assert f"pods: none ({note})" in whole
    text = machine_line(snap, width)
    assert len(text) <= width and "NeuronCores" in text
    pods = next(f for f in text.split(" · ") if f.startswith("pods: none (kubelet socket"))
    assert pods.endswith("…") or pods in whole

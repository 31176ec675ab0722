"""Pilot tests of the replay screen: every transport key, the scrubber, markers, writing, following, stdin.

The recording is built in tmp_path from deterministic demo reports, with a garbage line in the middle and a
truncated last line. The controller's clock is a fake one the tests move, so nothing here depends on timing:
playback is driven by calling the screen's wake-up (``_advance``) after moving the clock, and following by
calling its index poll (``_poll``) after the file grew.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Static

from neuron_top.recording.index import RecordingIndex, SpooledIndex
from neuron_top.recording.markers import MARKER_KINDS, Marker
from neuron_top.recording.player import ReplayController
from neuron_top.recording.writer import RecordingWriter, stamp
from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.screens.replay import HISTORY_WINDOW, ReplayScreen
from neuron_top.tui.screens.transport import GotoBar
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.scrubber import JUMP_KINDS, Scrubber, cell_of, report_at
from neuron_top.tui.widgets.tabs import AppTabs
from tests.list_index import ListIndex

T0 = 1767225600.0
N = 200


@lru_cache(maxsize=1)
def demo_reports() -> tuple[bytes, ...]:
    from neuron_top.sources.demo import generate

    return tuple(generate("inf1.xlarge", 7, N + 10))  # every marker kind happens in these


class Clock:
    def __init__(self) -> None:
        self.t = 5000.0

    def __call__(self) -> float:
        return self.t


def make_recording(path: Path, n: int = N) -> Path:
    """``n`` reports a second apart, a garbage line after report 100, and a cut report at the end."""
    reps = demo_reports()
    with RecordingWriter(path, append=False) as w:
        for i in range(n):
            w.write(reps[i], T0 + i)
            if i == 99:
                w.write_line(b"this is not a report")
    with path.open("ab") as f:
        f.write(stamp(reps[n], T0 + n)[:300])  # a writer killed mid-line
    return path


def replay_app(path: Path, speed: float = 1.0, index=None) -> tuple[NeuronTopApp, Clock]:
    clock = Clock()
    if index is None:
        index = RecordingIndex(path, follow=True)
        index.wait()
    c = ReplayController(index, speed=speed, clock=clock)
    return NeuronTopApp(None, replay=c, replay_name=path.name, clock=lambda: 1000.0), clock


@pytest.fixture
def rec(tmp_path: Path) -> Path:
    return make_recording(tmp_path / "rec.jsonl")


def header(app) -> str:
    return app.screen.query_one(HeaderBar).render_line(0).text


def ctl(app) -> ReplayController:
    return app.replay


async def settle(pilot) -> None:
    """Let the first frame out, the marker scan start (it waits for that frame), and every worker finish."""
    await pilot.pause()
    for _ in range(200):
        if getattr(pilot.app.screen, "_scanner", True) is not None:
            break
        await pilot.pause(0.01)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_first_frame_header_and_bad_lines(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ReplayScreen)
        assert app.latest is not None and app.latest.seq == 1
        assert app.latest.ts == T0  # the recorded time, not now
        h = header(app)
        assert "REPLAY" in h and "rec.jsonl" in h
        assert "report 1/200" in h and "1x" in h
        assert "skipped 1" in h  # the garbage line; the cut last line is not counted (it may yet complete)
        assert app.screen.query_one(Scrubber).total == N
    ctl(app).index.close()


async def test_plays_at_recorded_speed(rec: Path) -> None:
    app, clock = replay_app(rec, speed=2.0)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await settle(pilot)
        screen._advance()  # the first wake-up sets the pacing origin
        clock.t += 1.0  # one second at 2x: two reports
        screen._advance()
        assert ctl(app).position == 2
        assert app.latest.seq == 3
        assert len(app.history) == 3  # every report played went into history
        assert "report 3/200" in header(app)
        clock.t += 50.0  # a hundred more, in one frame
        screen._advance()
        assert ctl(app).position == 102
        assert app.latest.seq == 103
        assert screen._timer is not None  # the next wake-up is scheduled
    ctl(app).index.close()


async def test_space_and_p_pause_and_play(rec: Path) -> None:
    app, clock = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await settle(pilot)
        await pilot.press("space")
        assert not ctl(app).playing
        assert "⏸" in header(app)
        assert screen._timer is None  # paused: nothing scheduled, nothing polled for playback
        clock.t += 30
        screen._advance()
        assert ctl(app).position == 0
        await pilot.press("p")
        assert ctl(app).playing and not app.paused  # the screen's p, not the app's freeze
        assert screen._timer is not None
        await pilot.press("p")
        assert not ctl(app).playing
    ctl(app).index.close()


@pytest.mark.parametrize(("keys", "want"), [
    (["right_square_bracket"], 1),
    (["right_square_bracket", "right_square_bracket", "left_square_bracket"], 1),
    (["full_stop"], 10),
    (["full_stop", "full_stop", "comma"], 10),
    (["right_curly_bracket"], 60),
    (["right_curly_bracket", "right_curly_bracket", "left_curly_bracket"], 60),
    (["G"], N - 1),
    (["end"], N - 1),
    (["G", "g"], 0),
    (["end", "home"], 0),
    (["left_square_bracket"], 0),
    (["G", "full_stop"], N - 1),
])
async def test_transport_keys(rec: Path, keys: list[str], want: int) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space")  # paused, so only the keys move
        await pilot.press(*keys)
        assert ctl(app).position == want
        assert app.latest.seq == want + 1
        assert f"report {want + 1}/200" in header(app)
        await settle(pilot)
        assert len(app.history) == min(want + 1, HISTORY_WINDOW)
    ctl(app).index.close()


async def test_speed_keys_clamp_and_show(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("plus")
        assert ctl(app).speed == 2.0 and "2x" in header(app)
        await pilot.press("equals_sign")
        assert ctl(app).speed == 5.0
        await pilot.press(*["plus"] * 10)
        assert ctl(app).speed == 100.0 and "100x" in header(app)
        await pilot.press(*["minus"] * 20)
        assert ctl(app).speed == 0.25 and "0.25x" in header(app)
    ctl(app).index.close()


async def test_arrow_keys_stay_with_the_focused_panel(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "full_stop")
        grid = app.screen.query_one(CoreGrid)
        grid.focus()
        await pilot.press("right", "left", "down", "up")
        assert ctl(app).position == 10
        app.screen.query_one(AppTabs).focus()
        await pilot.press("right", "left")
        assert ctl(app).position == 10
    ctl(app).index.close()


async def test_goto_input(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "colon")
        box = app.screen.query_one("#goto")
        bar = app.screen.query_one(GotoBar)
        assert box.has_focus and bar.is_open
        await pilot.press(*"150", "enter")
        assert ctl(app).position == 149
        assert not bar.is_open
        await pilot.press("colon", *"50%", "enter")
        assert ctl(app).position == 99
        await pilot.press("colon", *"-30s", "enter")
        assert ctl(app).position == 69
        await pilot.press("colon", *"nonsense", "enter")
        assert ctl(app).position == 69  # not moved; the prompt stays open and says why
        assert bar.is_open and box.value == "nonsense"
        assert "not a report number, time or percentage" in str(bar.query_one("#goto-hint", Static).render())
        await pilot.press("escape")
        assert not bar.is_open and not box.has_focus
        await pilot.press("colon", *"12", "escape")
        assert ctl(app).position == 69 and not bar.is_open
        await settle(pilot)
        assert len(app.history) == 70
    ctl(app).index.close()


async def test_keys_typed_right_after_colon_go_into_the_goto_box(rec: Path) -> None:
    """``:150`` arriving at once: the box is focused before ``1`` (the first tab) and ``5`` are routed."""
    from tests.helpers import type_at_once

    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        type_at_once(app, ":15:0")
        await pilot.pause()
        assert app.screen.query_one("#goto", Input).value == "15:0"  # ":" typed in the box too
    ctl(app).index.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_goto_prompt_is_visible_at_every_size(rec: Path, size: tuple[int, int]) -> None:
    """Docked to the bottom edge, the prompt was drawn under the footer: invisible, while it held the keys."""
    app, _ = replay_app(rec)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("space", "colon", *"3:0")
        await pilot.pause()
        bar = app.screen.query_one(GotoBar)
        box = bar.query_one("#goto", Input)
        hint = bar.query_one("#goto-hint", Static)
        assert bar.region.bottom <= size[1] - 1  # above the footer line
        # what is on top at the prompt's place is the prompt
        assert app.screen.get_widget_at(box.region.x + 1, box.region.y)[0] is box
        assert app.screen.get_widget_at(hint.region.x + 1, hint.region.y)[0] is hint
        assert "HH:MM[:SS]" in str(hint.render()) and "Esc" in str(hint.render())
        assert box.value == "3:0"
        await pilot.press("q")  # typed into the visible prompt, not a quit
        assert box.value == "3:0q" and app.is_running
    ctl(app).index.close()


async def test_scrubber_click_seeks(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        s = app.screen.query_one(Scrubber)
        bar_w = s.size.width - 2
        for x in (1, 40, bar_w):
            assert await pilot.click(Scrubber, offset=(x, 0))
            want = report_at(x - 1, bar_w, N)
            assert ctl(app).position == want
            assert cell_of(want, bar_w, N) == x - 1  # the head is drawn where we clicked
            assert s.render_line(0).text[x] == "┃"
        await settle(pilot)
        assert len(app.history) == min(ctl(app).position + 1, HISTORY_WINDOW)
    ctl(app).index.close()


async def test_one_marker_is_said_in_the_singular() -> None:
    """The wandb stream (real reports) has one marker, an execution error: the scrubber said "1 markers"."""
    app, _ = replay_app(Path(__file__).parent.parent / "fixtures/neuron-monitor/wandb_trn1_2xlarge_stream.ndjson")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert len(ctl(app).markers) == 1
        assert "1 marker" in app.screen.query_one(Scrubber).render_line(2).text
        assert "1 markers" not in app.screen.query_one(Scrubber).render_line(2).text
    ctl(app).index.close()


async def test_markers_n_and_N(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        c = ctl(app)
        assert c.scanned == N
        kinds = {m.kind for m in c.markers}
        assert kinds == {"ecc-uncorrected", "ecc-corrected", "error", "app+", "app-", "stall", "group-error"}
        first, second = sorted({m.index for m in c.markers})[:2]
        await pilot.press("n")
        assert c.position == first
        await pilot.press("n")
        assert c.position == second
        await pilot.press("N")
        assert c.position == first
        s = app.screen.query_one(Scrubber)
        assert f"{len(c.markers)} markers" in s.render_line(2).text
        bar = s.render_line(0).text
        assert any(g in bar for g in "E+x")
        await pilot.press("G", "n")
        assert c.position == N - 1  # no marker after the end: stays
    ctl(app).index.close()


async def test_history_rebuilt_after_seek(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "G")
        assert len(app.history) >= 1  # never empty, even before the worker fills the window
        await settle(pilot)
        assert len(app.history) == HISTORY_WINDOW
        assert app.history.ts[-1] == T0 + N - 1 and app.history.ts[0] == T0 + N - HISTORY_WINDOW
        await pilot.press("g")
        await settle(pilot)
        assert list(app.history.ts) == [T0]
    ctl(app).index.close()


async def test_w_writes_the_visible_window(rec: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "w")  # at the first report: a window of one
        await settle(pilot)
        assert any(n.message.startswith("wrote 1 report (1-1) to ") for n in app._notifications)  # not "1 reports"
        await pilot.press("colon", *"150", "enter", "w")
        await settle(pilot)
        first = (tmp_path / "rec-31-150.jsonl").read_bytes()
        await pilot.press("w")  # the same window again: a new name, never over the first
        await settle(pilot)
        assert (tmp_path / "rec-31-150.jsonl").read_bytes() == first
        assert (tmp_path / "rec-31-150-2.jsonl").read_bytes() == first
        assert any("rec-31-150-2.jsonl" in n.message for n in app._notifications)
    ctl(app).index.close()
    out = tmp_path / "rec-31-150.jsonl"
    assert out.exists(), sorted(os.listdir(tmp_path))
    with RecordingIndex(out) as idx:
        idx.wait()
        assert len(idx) == HISTORY_WINDOW and idx.skipped == 0  # the garbage line is not copied
        assert idx.timestamp(0) == T0 + 30 and idx.timestamp(HISTORY_WINDOW - 1) == T0 + 149


async def test_m_marks_a_range_for_w(rec: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app, _ = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "full_stop", "m")
        s = app.screen.query_one(Scrubber)
        assert "range from #11" in s.render_line(2).text
        await pilot.press("full_stop", "full_stop", "right_square_bracket", "w")
        await settle(pilot)
        await pilot.press("m")
        assert ctl(app).mark_in is None
    ctl(app).index.close()
    from neuron_top.tui.screens.help import help_sections

    # pressed twice as a range's two ends, m cleared the first: the help says what it marks (it said "mark range")
    replay_keys = dict(next(rows for title, rows in help_sections([]) if title.startswith("Replay")))
    assert replay_keys["m"] == "mark the start of a range for w (again: no range)"
    with RecordingIndex(tmp_path / "rec-11-32.jsonl") as idx:
        idx.wait()
        assert len(idx) == 22


async def test_follow_a_growing_recording(rec: Path) -> None:
    app, clock = replay_app(rec)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await settle(pilot)
        await pilot.press("G")
        assert "report 200/200" in header(app)
        reps = demo_reports()
        with rec.open("ab") as f:
            f.write(stamp(reps[N], T0 + N)[300:] + b"\n")  # the cut line completes
            for i in range(N + 1, N + 5):
                f.write(stamp(reps[i], T0 + i) + b"\n")
        screen._poll()
        assert len(ctl(app)) == N + 5
        assert app.screen.query_one(Scrubber).total == N + 5
        screen._advance()  # playing at the end: pacing starts from the last report shown
        clock.t += 100.0
        screen._advance()
        assert ctl(app).position == N + 4
        assert "report 205/205" in header(app)
        assert "skipped 1" in header(app)
        await settle(pilot)
        assert ctl(app).scanned == N + 5  # the marker scan carried on
    ctl(app).index.close()


async def test_stdin_pipe_first_frame_and_seek_back() -> None:
    r, w = os.pipe()
    reps = demo_reports()
    with os.fdopen(r, "rb", buffering=0) as rf:
        index = SpooledIndex(rf)
        app, _ = replay_app(Path("stdin"), index=index)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = app.screen
            await pilot.pause()
            assert "no reports yet" in header(app) and "reading stdin" in header(app)
            os.write(w, b"".join(stamp(reps[i], T0 + i) + b"\n" for i in range(30)))
            assert index.wait_for(29, timeout=10)
            screen._poll()
            assert app.latest is not None and app.latest.seq == 1  # the first report, at once
            await pilot.press("space", "G")
            assert ctl(app).position == 29
            await pilot.press("g")  # back within what was read
            assert ctl(app).position == 0 and app.latest.seq == 1
            os.write(w, stamp(reps[30], T0 + 30) + b"\n")
            os.close(w)
            index.wait(timeout=10)
            screen._poll()
            assert "report 1/31" in header(app)
        index.close()


async def test_seek_in_a_10000_report_recording(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    base = b'{"system_data":{"memory_info":{"period":1.0,"memory_used_bytes":%d}},"neuron_top":{"ts":%.6f}}\n'
    path.write_bytes(b"".join(base % (i * 1000, T0 + i) for i in range(10_000)))
    app, _ = replay_app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "G")
        assert ctl(app).position == 9999 and "report 10000/10000" in header(app)
        await pilot.press("colon", *"5000", "enter")
        assert app.latest.seq == 5000
        await pilot.press("colon", *"+1h", "enter")
        assert ctl(app).position == 4999 + 3600
        await pilot.click(Scrubber, offset=(1, 0))
        assert ctl(app).position == 0
        bar_w = app.screen.query_one(Scrubber).size.width - 2
        await pilot.click(Scrubber, offset=(bar_w // 2 + 1, 0))
        assert ctl(app).position == report_at(bar_w // 2, bar_w, 10_000)
        await settle(pilot)
        assert len(app.history) == HISTORY_WINDOW
        assert app.history.series("host_mem")[-1] == ctl(app).position * 1000.0
    ctl(app).index.close()


class SlowIndex(ListIndex):
    """A recording index still being built (as for a multi-GB file): some reports, done later."""

    def __init__(self, inner: RecordingIndex) -> None:
        super().__init__([inner.get(i) for i in range(len(inner))], [inner.timestamp(i) for i in range(len(inner))],
                         done=False, name="big.jsonl")
        self.progress_value = 0.42

    def __len__(self) -> int:
        return len(self.reports) if self.done else 50

    def find_time(self, t: float) -> int:
        return min(super().find_time(t), len(self) - 1)


async def test_first_frame_while_indexing_shows_progress(rec: Path) -> None:
    inner = RecordingIndex(rec, follow=True)
    inner.wait()
    index = SlowIndex(inner)
    app, _ = replay_app(rec, index=index)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert app.latest is not None and app.latest.seq == 1
        assert "report 1/50" in header(app) and "indexing 42%" in header(app)
        await pilot.press("space", "G")
        assert ctl(app).position == 49
        index.done = True
        app.screen._poll()
        assert "report 50/200" in header(app) and "indexing" not in header(app)
    inner.close()


async def test_raw_recording_shows_relative_time(tmp_path: Path) -> None:
    from neuron_top.sources.demo import generate

    p = tmp_path / "raw.json"
    p.write_bytes(b"\n".join(generate("inf1.xlarge", 3, 6, period=2.0)) + b"\n")
    app, _ = replay_app(p)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        first = header(app)
        assert "report 1/6" in first and " +" in first and "2026" not in first  # no wall clock to show
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert ctl(app).index.timestamp(ctl(app).position) == pytest.approx(4.0, abs=0.01)
        assert "report 3/6" in header(app)
    ctl(app).index.close()


# --- recorded time ----------------------------------------------------------------------------------------------


def slow_recording(path: Path) -> Path:
    """Reports 60 s apart (as people record overnight), with a 2-hour hole after report 20."""
    reps = demo_reports()
    with RecordingWriter(path, append=False) as w:
        for i in range(40):
            w.write(reps[i], T0 + 60 * i + (7200 if i > 19 else 0))
    return path


@pytest.mark.parametrize(("speed", "hold"), [(1.0, 60.0), (4.0, 15.0)])
async def test_a_sixty_second_recording_is_held_its_recorded_time(tmp_path: Path, speed: float, hold: float) -> None:
    """It raced (report 93 of 200 after 3 s at 1x): every gap of 10 s and more was cut as if it were a hole."""
    app, clock = replay_app(slow_recording(tmp_path / "slow.jsonl"), speed=speed)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await settle(pilot)
        screen._advance()  # the first wake-up starts the pacing at report 1
        for _ in range(3):  # each report in turn, the whole gap over the speed
            clock.t += hold - 0.5
            screen._advance()
            before = ctl(app).position
            clock.t += 1.0
            screen._advance()
            assert ctl(app).position == before + 1
            clock.t -= 0.5  # back on the report's due time
        assert ctl(app).position == 3 and app.latest.seq == 4
        assert "report 4/40" in header(app)
    ctl(app).index.close()


async def test_a_two_hour_hole_is_held_briefly_and_announced(tmp_path: Path) -> None:
    app, clock = replay_app(slow_recording(tmp_path / "slow.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await settle(pilot)
        await pilot.press("colon", *"19", "enter")  # just before the hole
        screen._advance()
        clock.t += 60.0
        screen._advance()
        assert ctl(app).position == 19
        assert "next: 2 h 01 m without data" in header(app)
        clock.t += 2.0  # at most ~2 s of wall time, not two hours
        screen._advance()
        await pilot.pause()
        assert ctl(app).position == 20
        shown = [n.message for n in app._notifications]
        assert "skipped 2 h 01 m without data" in shown
        assert "next:" not in header(app)
    ctl(app).index.close()


# --- markers that matter ----------------------------------------------------------------------------------------


class ScrubberApp(App):
    def __init__(self, markers: list[Marker], total: int) -> None:
        super().__init__()
        self.markers = markers
        self.total = total

    def compose(self):  # type: ignore[no-untyped-def]
        s = Scrubber(self.markers)
        s.total = self.total
        yield s


def busy_markers() -> list[Marker]:
    """10,000 reports, 9,945 with corrected ECC, one uncorrected in the middle, an app stopping near the end."""
    ms = [Marker(i, "ecc-corrected", "ND0 corrected ECC (HBM) x1") for i in range(10_000) if i % 182 != 5]
    ms.append(Marker(5_000, "ecc-uncorrected", "ND3 uncorrected ECC (HBM) x1"))
    ms.append(Marker(9_000, "app-", "app bert (pid 1) stopped"))
    return sorted(ms, key=lambda m: m.index)


async def test_a_busy_recording_shows_its_rare_serious_markers() -> None:
    """9,945 of 10,000 reports with a marker made the bar a wall of E; the uncorrected one could not be seen."""
    app = ScrubberApp(busy_markers(), 10_000)
    async with app.run_test(size=(80, 24)) as pilot:
        s = app.query_one(Scrubber)
        s.position = 9_999
        await pilot.pause()
        bar = s.render_line(0).text
        bar_w = s.size.width - 2
        assert bar[1 + cell_of(5_000, bar_w, 10_000)] == "E"
        assert bar[1 + cell_of(9_000, bar_w, 10_000)] == "-"
        assert bar.count("E") == 1 and bar.count("e") > bar_w // 2  # the flood is a quiet lower-case e
        s.hidden = frozenset({"ecc-corrected"})
        bar = s.render_line(0).text
        assert "e" not in bar and bar.count("E") == 1 and bar.count("-") == 1
        legend = s.render_line(1).text
        assert "E uncorr 1" in legend and "- stop 1" in legend and "corr 9945 hidden" in legend
        assert len(legend.rstrip()) <= 80


@pytest.mark.parametrize("width", [40, 60, 80])
async def test_the_legend_and_info_line_keep_whole_entries(width: int) -> None:
    """A recording with every kind of marker, at 80 columns or less: the legend was cropped at the edge, so
    "e corr 9945" could read "e corr 99", and the next-marker line lost its report number mid-way. Now whole
    entries, then "…"."""
    kinds = [k.name for k in MARKER_KINDS]
    ms = [Marker(i, kinds[i % len(kinds)], f"ND0 something x{i}") for i in range(9_000)]
    app = ScrubberApp(ms, 10_000)
    async with app.run_test(size=(width, 24)) as pilot:
        s = app.query_one(Scrubber)
        s.info = ("9,000 markers", "next: ND0 corrected ECC (HBM) x2 (#6,123)", "range from #1,234")
        s.jump = ("ecc-uncorrected",)
        await pilot.pause()
        counts = {k: sum(m.kind == k for m in ms) for k in kinds}
        legend = s.render_line(1).text.rstrip()
        assert len(legend) <= width and legend.endswith("…")
        for entry in legend[1:-1].split("  "):
            if entry.strip() and not entry.startswith("n/N"):
                assert int(entry.rsplit(" ", 1)[1]) in counts.values(), entry  # never a count cut short
        info = s.render_line(2).text.rstrip()
        assert len(info) <= width and info.startswith(" 9,000 markers")
        for part in s.info:
            assert part in info or info.endswith("…")


async def test_a_hole_under_a_more_severe_marker_still_shows() -> None:
    """On a busy recording the hole's cell showed the execution error there and nothing of the two hours lost."""
    ms = [Marker(i, "error", "app a: 1 execution error") for i in range(0, 10_000, 3)]
    ms.append(Marker(5_001, "gap", "skipped 2 h 03 m without data"))
    app = ScrubberApp(sorted(ms, key=lambda m: m.index), 10_000)
    async with app.run_test(size=(80, 24)) as pilot:
        s = app.query_one(Scrubber)
        await pilot.pause()
        segs = list(s.render_line(0))
        bar_w = s.size.width - 2
        at = 1 + cell_of(5_001, bar_w, 10_000)
        gap_bg = s.get_component_rich_style("scrubber--gap", partial=True).bgcolor
        assert segs[at].text == "x" and segs[at].style.bgcolor == gap_bg  # the error's glyph, the gap's ground
        assert all(seg.style is None or seg.style.bgcolor != gap_bg for k, seg in enumerate(segs) if k != at)
        assert "gap 1" in s.render_line(1).text


async def test_k_chooses_what_n_jumps_to_and_e_hides_corrected_ecc(rec: Path) -> None:
    app, _ = replay_app(rec)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        c = ctl(app)
        want = {kind: [m.index for m in c.markers if m.kind in kinds]
                for kind, kinds in (("u", {"ecc-uncorrected"}), ("app", {"app-", "app+"}))}
        await pilot.press("k", "n")  # every marker -> uncorrected ECC
        assert c.position == want["u"][0]
        legend = app.screen.query_one(Scrubber).render_line(1).text
        assert "n/N: uncorr" in legend
        await pilot.press("k", "k", "g", "n", "n")  # -> execution errors -> app stop/start
        assert c.position == want["app"][1]
        await pilot.press("N")
        assert c.position == want["app"][0]
        await pilot.press(*["k"] * (len(JUMP_KINDS) - 3))  # round to every marker again
        assert app.screen._jump is None
        await pilot.press("e")
        s = app.screen.query_one(Scrubber)
        assert "hidden" in s.render_line(1).text and "e" not in s.render_line(0).text[1:-1]
        await pilot.press("g", *["n"] * 40)
        assert all(m.kind != "ecc-corrected" for m in c.markers if m.index == c.position)
    ctl(app).index.close()


async def test_a_hole_is_drawn_on_the_scrubber(tmp_path: Path) -> None:
    app, _ = replay_app(slow_recording(tmp_path / "slow.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        gaps = [m for m in ctl(app).markers if m.kind == "gap"]
        assert [(m.index, m.text) for m in gaps] == [(20, "skipped 2 h 01 m without data")]
        s = app.screen.query_one(Scrubber)
        assert "┊" in s.render_line(0).text and "gap 1" in s.render_line(1).text
    ctl(app).index.close()


# --- following like tail -F -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["rotated", "truncated"])
async def test_follow_reopens_on_rotation_and_reindexes_on_truncation(rec: Path, how: str) -> None:
    """It went on showing reports no longer in the file (truncated), or the old file forever (rotated); a
    rotation now reads on in the new file after the old one's reports."""
    app, _ = replay_app(rec)
    reps = demo_reports()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await settle(pilot)
        await pilot.press("G")
        if how == "rotated":
            rec.rename(rec.with_name("rec.jsonl.1"))
            screen._poll()  # between the mv and the new file: still the old one
            assert len(ctl(app)) == N
        else:
            rec.write_bytes(b"")
        with RecordingWriter(rec) as w:
            for i in range(5):
                w.write(reps[i], T0 + 10_000 + i)
        screen._poll()
        await pilot.pause()
        if how == "rotated":  # read on after the old file's reports (its cut last line skipped), numbers valid
            assert len(ctl(app)) == N + 5 and app.screen.query_one(Scrubber).total == N + 5
            assert any("rotated: 200 reports of the old file kept" in n.message for n in app._notifications)
            await settle(pilot)
            assert ctl(app).scanned == N + 5
            ctl(app).index.close()
            return
        assert len(ctl(app)) == 5 and app.screen.query_one(Scrubber).total == 5
        assert ctl(app).position == 4 and app.latest.ts == T0 + 10_004  # it was at the end: it stays there
        assert "report 5/5" in header(app)
        assert any(how in n.message and "200 reports before" in n.message for n in app._notifications)
        await settle(pilot)
        assert ctl(app).scanned == 5 and all(m.index < 5 for m in ctl(app).markers)
    ctl(app).index.close()


# --- counts since start after any move (issue 33) ---

async def test_ecc_since_start_is_exact_after_a_seek_and_a_step_back(tmp_path: Path) -> None:
    """An uncorrected ECC early in a 400-report recording, corrected ones later: after a jump to the end (the
    history window holds the last 120 reports) and a step back, the ECC panel counts every event since the
    start, and says "uncorrected" while the header says ECC!."""
    from neuron_top.tui.widgets.ecc import EccPanel
    from tests.recordings import Plan, write

    plan = Plan(seconds=400 * 60, period=60.0, jitter=0.003,
                ecc=[(600, 5, "mem_uncorrected", 1), (900, 5, "mem_corrected", 2), (20000, 3, "sram_corrected", 4)])
    path = write(tmp_path / "ecc.jsonl", plan)
    app, _ = replay_app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert ctl(app).scanned == len(ctl(app))
        for keys in (("space", "G"), ("left_square_bracket",), ("comma",), ("colon", *"50%", "enter")):
            await pilot.press(*keys)
            await settle(pilot)
            totals = app.history.ecc_totals
            assert totals[5].mem_uncorrected == 1 and totals[5].mem_corrected == 2, keys
            assert totals[3].sram_corrected == (4 if ctl(app).position >= 20000 // 60 else 0), keys
            text = "\n".join(s.text for s in app.screen.query_one(EccPanel).build(app.screen.view, 160))
            assert "no errors" not in text.splitlines()[0] and "1 uncorrected" in text, keys
            assert "ECC! ND5" in header(app) and "counting" not in header(app), keys
        await pilot.press("g")  # back before the event: none since start, and no ECC! either
        await settle(pilot)
        assert app.history.ecc_totals[5].uncorrected == 0
        assert "ECC!" not in header(app)
    ctl(app).index.close()


async def test_clamps_are_said_on_screen(rec: Path) -> None:
    """':1802' went to the last report and '--speed 1000' played at 100x, both silently."""
    app, _ = replay_app(rec, speed=1000.0)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert any("playing at 100x, the fastest" in str(n.message) for n in app._notifications)
        await pilot.press("space", "colon", *"999", "enter")
        assert ctl(app).position == N - 1
        assert any(f"report 999 is past the end: the last one, {N}" in str(n.message) for n in app._notifications)
        assert "UTC" in header(app) or time.strftime("%Z") in header(app)  # the zone beside the time
        assert "down" not in app.screen.query_one(Scrubber).render_line(1).text  # a fleet-only kind, none here
    ctl(app).index.close()


async def test_before_the_scan_reaches_a_jump_the_header_and_the_ecc_panel_agree(tmp_path: Path,
                                                                                monkeypatch) -> None:
    """Until the marker scan has passed the position, the panel sums the history window: the header's ECC! is set
    from the same sums, never 'no errors' beside ECC!."""
    from tests.recordings import Plan, write

    monkeypatch.setattr(ReplayScreen, "scan_markers", lambda self: None)  # the scan never gets anywhere
    path = write(tmp_path / "ecc.jsonl", Plan(seconds=300 * 60, period=60.0, ecc=[(120, 5, "mem_uncorrected", 1)]))
    app, _ = replay_app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("space", "colon", *"5", "enter")  # past the event: in the window
        await pilot.pause()
        assert app.history.ecc_totals[5].uncorrected == 1 and "ECC! ND5" in header(app)
        await pilot.press("G")  # the window (last 120 reports) no longer holds it, and nothing says since start yet
        await pilot.pause()
        assert app.history.ecc_totals[5].uncorrected == 0 and "ECC!" not in header(app)
        assert "ECC since start: counting" in header(app)  # and says these are not yet the whole recording's
    ctl(app).index.close()


async def test_executions_since_start_in_the_panel_after_any_move(tmp_path: Path) -> None:
    """Issue 33 Deliver 2: the executions panel in replay shows every outcome's count since the start of the
    recording up to the position, exact after a jump, a step back and a seek (a brute-force sum of the JSON)."""
    import json

    from neuron_top.tui.widgets.executions import ExecPanel
    from tests.recordings import Plan, lines, write

    plan = Plan(seconds=300 * 60, period=60.0, completed=3,
                executions=[(600, 6000, "completed_with_err", 2), (9000, 9600, "timed_out", 7)])
    path = write(tmp_path / "exec.jsonl", plan)
    docs = [json.loads(x) for x in lines(plan)]

    def brute(upto: int, key: str) -> int:
        return sum(d["neuron_runtime_data"][0]["report"]["execution_stats"]["execution_summary"][key]
                   for d in docs[:upto + 1])

    app, _ = replay_app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        for keys in (("space", "G"), ("comma",), ("colon", *"50%", "enter"), ("g",)):
            await pilot.press(*keys)
            await settle(pilot)
            i = ctl(app).position
            text = "\n".join(s.text for s in app.screen.query_one(ExecPanel).build(app.screen.view, 160))
            row = next(line for line in text.splitlines() if line.startswith(" since start"))
            want = [f"{brute(i, k):,}" for k in ("completed", "completed_with_err", "completed_with_num_err",
                                                 "timed_out", "incorrect_input", "failed_to_queue")]
            assert row.split()[2:8] == want, (keys, i, row)
            narrow = [s.text for s in app.screen.query_one(ExecPanel).build(app.screen.view, 58)]
            row = next(line for line in narrow if line.startswith(" so far"))  # 120x40's left column
            assert row.split()[2:8] == want, (keys, i, row)
    ctl(app).index.close()


async def test_executions_since_start_under_a_filter_are_the_filtered_apps(tmp_path: Path) -> None:
    """Under a tag filter the "all" tab's since start row counted every app and said "(all apps)": it counts the
    apps the filter selects and names the filter; a new filter (``/``) counts its apps, and with none the row is
    every app's again (a brute-force sum of the JSON each time)."""
    import json

    from neuron_top.sources.demo import generate
    from neuron_top.tui.widgets.executions import ExecPanel

    path = tmp_path / "inf2.jsonl"
    reps = list(generate("inf2.48xlarge", 7, 90))
    with RecordingWriter(path) as w:
        for i, r in enumerate(reps):
            w.write(r, T0 + i)

    def brute(upto: int, word: str) -> str:
        n = sum(rt["report"]["execution_stats"]["execution_summary"]["completed"]
                for r in reps[:upto + 1] for rt in json.loads(r)["neuron_runtime_data"]
                if word in rt["neuron_runtime_tag"])
        return f"{n:,}"

    def row(app) -> str:
        text = "\n".join(s.text for s in app.screen.query_one(ExecPanel).build(app.screen.view, 160))
        return next(line for line in text.splitlines() if line.startswith(" since start"))

    app, _ = replay_app(path)
    app.selection.set_filter("serve")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("space", "G")
        await settle(pilot)
        end = ctl(app).position
        assert row(app).split()[2] == brute(end, "serve") != brute(end, "")
        assert "(filter 'serve')" in row(app) and "all apps" not in row(app)
        await pilot.press("slash", *"bert", "enter")
        await settle(pilot)
        assert row(app).split()[2] == brute(end, "bert") and "(filter 'bert')" in row(app)
        await pilot.press("slash", "escape")
        await settle(pilot)
        assert row(app).split()[2] == brute(end, "") and "filter" not in row(app)
    ctl(app).index.close()


async def test_the_problems_screen_says_where_the_replay_is_not_a_count_of_reports_played(rec: Path) -> None:
    """At report 200/200 after G it said "9 reports received": the reports played before the jump, read as
    how many the recording had."""
    from neuron_top.tui.screens.problems import problems_text

    app, _ = replay_app(rec)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"]]]", "G")
        await pilot.pause()
        text = problems_text(app.session, 1000.0).plain
        assert "received" not in text
        assert "report 200/200" in text.split("Source\n")[1].split("\n\n")[0]
    ctl(app).index.close()

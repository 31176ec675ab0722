"""ReplayController without a screen: pacing against a fake clock, moves, history windows, markers, go-to."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from neuron_top.decode import decode_report
from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.markers import KINDS, Facts, Marker, brief_facts, markers_between, severity
from neuron_top.recording.pacing import HOLE_HOLD, Hole, gap_text, hole_after
from neuron_top.recording.player import (
    MAX_FRAME_REPORTS,
    SPEEDS,
    GotoError,
    ReplayController,
    clamp_speed,
    parse_goto,
    resolve_goto,
)
from neuron_top.recording.writer import RecordingWriter
from neuron_top.snapshot import Snapshot
from tests.list_index import ListIndex

T0 = 1767225600.0  # 2026-01-01T00:00:00Z


class FakeClock:
    def __init__(self, t: float = 500.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def report(*, apps: list[dict] | None = None, ecc: tuple[int, int] = (0, 0), vcpu_error: str = "") -> bytes:
    """A small neuron-monitor report: apps as {pid, tag, util, errors}; ECC (corrected, uncorrected) on ND0."""
    runtimes = []
    for a in apps or ():
        runtimes.append({
            "pid": a["pid"], "neuron_runtime_tag": a.get("tag", f"app{a['pid']}"),
            "report": {
                "neuroncore_counters": {"period": 1.0, "neuroncores_in_use": {
                    "0": {"neuroncore_utilization": a.get("util", 50.0)}}},
                "execution_stats": {"period": 1.0, "error_summary": {"generic": a.get("errors", 0)},
                                    "execution_summary": {"completed": 10, "timed_out": a.get("timeouts", 0)}},
            },
        })
    system = {"neuron_hw_counters": {"period": 1.0, "neuron_devices": [
        {"neuron_device_index": 0, "mem_ecc_corrected": ecc[0], "mem_ecc_uncorrected": ecc[1],
         "sram_ecc_corrected": 0, "sram_ecc_uncorrected": 0}]},
              "vcpu_usage": {"period": 1.0, "error": vcpu_error}}
    return json.dumps({"neuron_runtime_data": runtimes, "system_data": system,
                       "neuron_hardware_info": {"neuron_device_count": 1, "neuroncore_per_device_count": 2}}).encode()


def snap(data: bytes, i: int = 0) -> Snapshot:
    rep, problems = decode_report(data)
    return Snapshot(rep, T0 + i, i + 1, problems)


def plain(n: int, period: float = 1.0, **kw) -> ListIndex:
    return ListIndex([report(apps=[{"pid": 1}])] * n, [T0 + i * period for i in range(n)], **kw)


# --- pacing ---

@pytest.mark.parametrize("speed", [0.25, 1.0, 2.0, 10.0, 100.0])
def test_due_follows_recorded_time_at_speed(speed: float) -> None:
    clock = FakeClock()
    c = ReplayController(plain(2000), speed=speed, clock=clock)
    assert c.next_delay() == 0.0  # not started: wake at once to set the origin
    assert c.due() == []  # origin set at report 0
    assert c.next_delay() == pytest.approx(1.0 / speed)
    clock.t += 0.999 / speed
    assert c.due() == []
    clock.t += 0.002 / speed
    assert c.due() == [1]
    clock.t += 5.0 / speed  # five more periods: five reports due together, one frame
    assert c.due() == [2, 3, 4, 5, 6]
    assert c.position == 6
    assert c.next_delay() == pytest.approx(0.999 / speed, rel=0.01)


def test_due_caps_a_frame_and_restarts_pacing() -> None:
    clock = FakeClock()
    c = ReplayController(plain(1000), speed=100.0, clock=clock)
    c.due()
    clock.t += 50.0  # way behind: 5000 reports' worth
    passed = c.due()
    assert len(passed) == MAX_FRAME_REPORTS
    assert c.next_delay() == pytest.approx(0.01)  # pacing restarts from where we are: one gap from now
    clock.t += 0.0101
    assert c.due() == [MAX_FRAME_REPORTS + 1]


def test_paused_and_at_end_need_no_wakeup() -> None:
    clock = FakeClock()
    c = ReplayController(plain(3), clock=clock)
    c.toggle()
    assert not c.playing
    assert c.next_delay() is None
    clock.t += 100
    assert c.due() == []
    c.toggle()
    c.due()
    clock.t += 10
    assert c.due() == [1, 2]
    assert c.at_end()
    assert c.next_delay() is None
    assert c.due() == []


def test_a_hole_is_held_briefly_and_announced() -> None:
    clock = FakeClock()
    times = [T0 + i for i in range(40)] + [T0 + 39 + 7200 + i for i in range(10)]  # 2 h without data after #40
    c = ReplayController(ListIndex([report()] * 50, times), clock=clock)
    c.seek(38)
    c.due()
    clock.t += 1
    assert c.due() == [39]
    assert c.hole_ahead() is not None and c.hole_ahead().seconds == 7200
    assert c.next_delay() == HOLE_HOLD <= 2.0  # held briefly, not two hours, not skipped at once
    clock.t += HOLE_HOLD - 0.01
    assert c.due() == []
    clock.t += 0.02
    assert c.due() == [40]
    assert [h.text for h in c.take_holes()] == ["skipped 2 h 00 m without data"]
    assert c.take_holes() == []  # announced once
    assert c.next_delay() == pytest.approx(1.0 - 0.01)  # after the hole, recorded time again


def test_a_hole_after_a_seek_follows_the_same_rule() -> None:
    clock = FakeClock()
    times = [T0 + i for i in range(40)] + [T0 + 39 + 7380 + i for i in range(10)]
    c = ReplayController(ListIndex([report()] * 50, times), speed=100.0, clock=clock)
    c.seek(39)  # right before the hole
    assert c.due() == []
    assert c.next_delay() == HOLE_HOLD
    clock.t += HOLE_HOLD
    assert c.due() == [40]
    assert [h.text for h in c.take_holes()] == ["skipped 2 h 03 m without data"]


@pytest.mark.parametrize("period", [1.0, 5.0, 10.0, 30.0, 60.0])
def test_each_report_is_held_its_recorded_gap_over_the_speed(period: float) -> None:
    """Periods of 10 s and more raced (the old 10 s gap cut applied to every report); slowing down made it faster."""
    holds = []
    for speed in SPEEDS:
        clock = FakeClock()
        c = ReplayController(plain(50, period=period), speed=speed, clock=clock)
        c.due()
        assert c.next_delay() == pytest.approx(period / speed)
        clock.t += period / speed * 0.999
        assert c.due() == []
        clock.t += period / speed * 0.002
        assert c.due() == [1]
        holds.append(c.next_delay())
    assert holds == sorted(holds, reverse=True)  # slower is never faster


def test_a_sixty_second_recording_holds_a_minute_at_1x_and_15_s_at_4x() -> None:
    for speed, hold in ((1.0, 60.0), (4.0, 15.0)):
        clock = FakeClock()
        c = ReplayController(plain(200, period=60.0), speed=speed, clock=clock)
        c.due()
        clock.t += 3.0  # the old pacing was at report 93 by now
        assert c.due() == []
        clock.t += hold - 3.0
        assert c.due() == [1]
        assert c.take_holes() == []  # a slow period is not a hole


def test_a_gap_is_a_hole_only_against_the_usual_period() -> None:
    # 11 min between reports of a 1-minute recording is a hole; the same between reports of a 2-minute one is not
    one = [T0 + 60 * i for i in range(20)] + [T0 + 60 * 19 + 660 + 60 * i for i in range(5)]
    two = [T0 + 120 * i for i in range(20)] + [T0 + 120 * 19 + 660 + 120 * i for i in range(5)]
    assert hole_after(ListIndex([b""] * 25, one), 19) == Hole(19, 660.0)
    assert hole_after(ListIndex([b""] * 25, two), 19) is None
    # a minute is never a hole, even in a 1 s recording; at the start the gaps after it decide
    assert hole_after(ListIndex([b""] * 20, [T0 + i for i in range(10)] + [T0 + 69 + i for i in range(10)]), 9) is None
    assert hole_after(ListIndex([b""] * 10, [T0] + [T0 + 3600 + i for i in range(9)]), 0) == Hole(0, 3600.0)


@pytest.mark.parametrize(("seconds", "text"), [(45, "45 s"), (245, "4 m 05 s"), (7380, "2 h 03 m"),
                                               (3 * 86400 + 4 * 3600, "3 d 04 h")])
def test_gap_text(seconds: float, text: str) -> None:
    assert gap_text(seconds) == text


def test_resume_after_pause_does_not_jump() -> None:
    clock = FakeClock()
    c = ReplayController(plain(100), clock=clock)
    c.due()
    c.toggle()
    clock.t += 30  # paused for 30 s
    c.toggle()
    assert c.due() == []
    clock.t += 1
    assert c.due() == [1]


# --- speed ---

def test_speed_steps_clamp_between_quarter_and_hundred() -> None:
    c = ReplayController(plain(3), speed=1.0)
    seen = [c.set_speed(1) for _ in range(20)]
    assert seen[-1] == 100.0 and max(seen) == 100.0
    assert seen[:3] == [2.0, 5.0, 10.0]
    seen = [c.set_speed(-1) for _ in range(20)]
    assert seen[-1] == 0.25 and min(seen) == 0.25
    assert SPEEDS[0] == 0.25 and SPEEDS[-1] == 100.0


@pytest.mark.parametrize(("given", "want"), [(0.01, 0.25), (1000, 100.0), (3.0, 3.0), (float("nan"), 1.0)])
def test_speed_given_at_start_is_clamped(given: float, want: float) -> None:
    assert clamp_speed(given) == want
    assert ReplayController(plain(3), speed=given).speed == want


# --- moving ---

def test_seek_and_step_clamp_to_the_recording() -> None:
    c = ReplayController(plain(50))
    assert c.seek(10) == 10
    assert c.step(5) == 15
    assert c.step(-100) == 0
    assert c.step(1000) == 49
    assert c.seek(-3) == 0
    assert ReplayController(plain(0)).seek(5) == 0


def test_step_seconds_and_seek_time() -> None:
    c = ReplayController(plain(300, period=2.0))  # a report every 2 s
    c.seek(100)
    assert c.step_seconds(60) == 130
    assert c.step_seconds(-60) == 100
    assert c.seek_time(T0 + 41) == 21  # first report at or after the time
    assert c.seek_time(T0 + 10**6) == 299
    assert c.seek_time(0) == 0


def test_minute_back_over_a_gap_lands_before_it() -> None:
    times = [T0, T0 + 1, T0 + 2, T0 + 3600, T0 + 3601]
    c = ReplayController(ListIndex([report()] * 5, times))
    c.seek(3)
    assert c.step_seconds(-60) == 2
    assert c.step_seconds(60) == 3  # forward: the first report after the minute


def test_start_past_the_end_settles_once_indexed() -> None:
    idx = plain(5, done=False)
    c = ReplayController(idx, start=20)
    c.settle()
    assert c.position == 20  # still indexing: report 21 may yet come
    idx.done = True
    c.settle()
    assert c.position == 4


# --- reading and history windows ---

def test_window_rebuilds_history_before_the_position() -> None:
    c = ReplayController(plain(300))
    w = c.window(200, 120)
    assert [s.seq for s in w] == list(range(82, 202))
    assert [s.seq for s in c.window(3, 120)] == [1, 2, 3, 4]
    assert w[-1].ts == T0 + 200


def test_window_skips_bad_reports_and_counts_them_once() -> None:
    reps = [report()] * 10
    reps[5] = b'{"neuron_runtime_data": 12'
    c = ReplayController(ListIndex(reps, [T0 + i for i in range(10)]))
    assert [s.seq for s in c.window(9, 10)] == [1, 2, 3, 4, 5, 7, 8, 9, 10]
    c.window(9, 10)
    assert c.bad == 1


def test_window_budget_keeps_the_newest() -> None:
    c = ReplayController(plain(300), cache=0)
    w = c.window(250, 120, budget=0.0)
    assert [s.seq for s in w] == [251]  # the report at the position is always there


def test_a_report_not_indexed_yet_is_not_bad() -> None:
    idx = plain(0, done=False)
    c = ReplayController(idx)
    assert c.snapshot(0) is None and c.current() is None
    idx.reports.append(report())
    idx.times.append(T0)
    assert c.snapshot(0) is not None
    assert c.bad == 0


def test_cache_is_bounded() -> None:
    c = ReplayController(plain(50), cache=8)
    c.window(49, 50)
    assert len(c._cache) == 8


# --- markers ---

def kinds(prev: bytes | None, cur: bytes) -> list[str]:
    return [m.kind for m in markers_between(snap(prev) if prev else None, snap(cur), 7)]


def test_marker_ecc() -> None:
    # neuron-monitor reports each period's ECC events: every report that carries some is a marker
    assert kinds(report(ecc=(0, 0)), report(ecc=(2, 0))) == ["ecc-corrected"]
    m = markers_between(snap(report(ecc=(2, 0))), snap(report(ecc=(2, 1))), 7)
    assert m == [Marker(7, "ecc-uncorrected", "ND0 uncorrected ECC (HBM) x1", "ND0 HBM", 1),
                 Marker(7, "ecc-corrected", "ND0 corrected ECC (HBM) x2", "ND0 HBM", 2)]
    assert kinds(report(ecc=(5, 1)), report(ecc=(5, 1))) == ["ecc-uncorrected", "ecc-corrected"]
    assert kinds(report(ecc=(5, 1)), report(ecc=(0, 0))) == []


def test_markers_are_ranked_by_severity() -> None:
    order = ["ecc-uncorrected", "error", "host-down", "stall", "group-error", "gap", "ecc-corrected"]
    assert [severity(k) for k in order] == sorted(severity(k) for k in order)
    assert severity("app-") == severity("app+") == severity("host-down")
    assert set(KINDS) == {*order, "app+", "app-"}


def test_every_app_whose_errors_start_is_a_marker() -> None:
    ok = report(apps=[{"pid": 1}, {"pid": 2}])
    both = report(apps=[{"pid": 1, "errors": 1}, {"pid": 2, "timeouts": 4}])
    m = markers_between(snap(ok), snap(both), 3)
    assert [(x.kind, x.subject, x.count) for x in m] == [("error", "app1", 1), ("error", "app2", 4)]


def test_the_brief_decode_finds_the_same_markers_as_a_full_one() -> None:
    """The scan and --summary decode a brief view and take the facts from it; they must be a Snapshot's."""
    import glob

    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import PROFILES, generate
    from tests.conftest import ROOT

    for instance in PROFILES:
        reps = generate(instance, 7, 300)
        full: list[Marker] = []
        brief: list[Marker] = []
        pf = pb = None
        for i, r in enumerate(reps):
            f, b = Facts(snapshot_from(r, 0.0, i + 1)), brief_facts(r, i + 1)
            assert f == b, (instance, i)
            full += markers_between(pf, f, i)
            brief += markers_between(pb, b, i)
            pf, pb = f, b
        assert brief == full and len({m.kind for m in full}) >= 6, instance
    fixtures = glob.glob(str(ROOT / "tests" / "fixtures" / "**" / "*.json"), recursive=True)
    checked = 0
    for path in fixtures:
        data = Path(path).read_bytes()
        try:
            f = Facts(snapshot_from(data, 0.0, 1))
        except ValueError:
            continue  # not a report (a trace): nothing to compare
        assert brief_facts(data, 1) == f, path
        checked += 1
    assert checked or not fixtures


def test_marker_execution_errors_when_they_start() -> None:
    ok, bad = report(apps=[{"pid": 1}]), report(apps=[{"pid": 1, "errors": 3}])
    assert kinds(ok, bad) == ["error"]
    assert kinds(bad, bad) == []  # a run of failing reports is one event
    assert kinds(ok, report(apps=[{"pid": 1, "timeouts": 2}])) == ["error"]
    assert kinds(None, bad) == ["error"]


def test_marker_app_appears_and_disappears() -> None:
    one, two = report(apps=[{"pid": 1}]), report(apps=[{"pid": 1}, {"pid": 2, "tag": "[red]x"}])
    m = markers_between(snap(one), snap(two), 3)
    assert [(x.kind, x.index) for x in m] == [("app+", 3)]
    assert "[red]x" in m[0].text and "pid 2" in m[0].text
    assert kinds(two, one) == ["app-"]


def test_marker_utilization_falls_to_zero_while_the_app_runs() -> None:
    busy, idle = report(apps=[{"pid": 1, "util": 80.0}]), report(apps=[{"pid": 1, "util": 0.0}])
    assert kinds(busy, idle) == ["stall"]
    assert kinds(idle, idle) == []
    assert kinds(report(apps=[{"pid": 1, "util": 3.0}]), idle) == []  # was not really busy


def test_marker_metric_group_error() -> None:
    ok, failing = report(), report(vcpu_error="cannot read /proc/stat")
    m = markers_between(snap(ok), snap(failing), 4)
    assert [x.kind for x in m] == ["group-error"]
    assert "vcpu_usage" in m[0].text and "/proc/stat" in m[0].text
    assert kinds(failing, failing) == []
    assert kinds(None, failing) == ["group-error"]


def write_recording(path: Path, reports: list[bytes], t0: float = T0) -> None:
    with RecordingWriter(path, append=False) as w:
        for i, data in enumerate(reports):
            w.write(data, t0 + i)


def test_scan_markers_over_a_recording_and_resume_when_it_grows(tmp_path: Path) -> None:
    p = tmp_path / "rec.jsonl"
    reps = [report(apps=[{"pid": 1}])] * 5 + [report(apps=[{"pid": 1}, {"pid": 2}])] * 5
    write_recording(p, reps)
    with RecordingIndex(p, follow=True) as idx:
        idx.wait()
        c = ReplayController(idx)
        calls: list[int] = []
        c.scan_markers(progress=lambda: calls.append(c.scanned), every=4)
        assert [(m.index, m.kind) for m in c.markers] == [(5, "app+")]
        assert c.scanned == 10 and calls == [4, 8, 10]
        with p.open("ab") as f:  # the recording grows: app 2 stops, ECC
            f.write(b"garbage\n")
            for i, data in enumerate([report(apps=[{"pid": 1}], ecc=(1, 0))] * 2):
                from neuron_top.recording.writer import stamp

                f.write(stamp(data, T0 + 10 + i) + b"\n")
        idx.refresh()
        assert len(idx) == 12
        c.scan_markers()
        assert [(m.index, m.kind) for m in c.markers] == [(5, "app+"), (10, "ecc-corrected"), (10, "app-"),
                                                          (11, "ecc-corrected")]
        c.seek(0)
        assert c.next_marker(1).index == 5
        assert c.next_marker(1, kinds={"app-"}).index == 10
        assert c.next_marker(1, kinds={"ecc-uncorrected"}) is None
        c.seek(11)
        assert c.next_marker(-1, kinds={"app+"}).index == 5
        assert c.next_marker(-1).index == 10
        c.seek(10)
        assert c.next_marker(1).index == 11
        c.seek(11)
        assert c.next_marker(1) is None
        assert c.next_marker(-1).index == 10


def test_stop_scan_stops_a_scan_waiting_for_the_index() -> None:
    import threading

    idx = plain(3, done=False)
    c = ReplayController(idx)
    t = threading.Thread(target=c.scan_markers)
    t.start()
    deadline = time.monotonic() + 5
    while c.scanned < 3 and time.monotonic() < deadline:  # the scan reaches the end and waits for more reports
        time.sleep(0.001)
    c.stop_scan()
    t.join(timeout=5)
    assert not t.is_alive()
    assert c.scanned == 3


def test_a_stop_before_the_scan_starts_is_kept() -> None:
    """The screen closed before its scan worker got going: the scan must not then run (and wait) for ever."""
    import threading

    c = ReplayController(plain(3, done=False))
    c.stop_scan()
    t = threading.Thread(target=c.scan_markers, daemon=True)
    t.start()
    t.join(timeout=5)
    assert not t.is_alive()
    assert c.scanned == 0


def test_a_scan_after_restart_runs_again() -> None:
    c = ReplayController(plain(3))
    c.scan_markers()
    assert c.scanned == 3
    c.restart()
    c.scan_markers()
    assert c.scanned == 3


# --- go to ---

@pytest.fixture
def at_100() -> ReplayController:
    c = ReplayController(plain(1000))
    c.seek(99)
    return c


@pytest.mark.parametrize(("text", "want"), [
    ("123", 122), (" 1 ", 0), ("0", 0), ("99999", 999),
    ("50%", 499), ("0%", 0), ("100%", 999), ("12.5%", 124),
    ("+90s", 189), ("-2m", 0), ("-30s", 69), ("+1m30s", 189),
])
def test_parse_goto(at_100: ReplayController, text: str, want: int) -> None:
    assert parse_goto(text, at_100) == want


@pytest.mark.parametrize("text", ["", "abc", "12:xx", "+", "+5q", "%", "x%", "1e3", "25:99:99x", "-",
                                  "nan%", "inf%", "²", "+infs"])
def test_parse_goto_garbage(at_100: ReplayController, text: str) -> None:
    assert parse_goto(text, at_100) is None


def test_parse_goto_time_of_day(at_100: ReplayController) -> None:
    t = time.localtime(T0 + 200)  # whatever the machine's time zone: the clock as the header shows it
    assert parse_goto(f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}", at_100) == 200
    minute = T0 + 200 - t.tm_sec
    assert parse_goto(f"{t.tm_hour}:{t.tm_min:02d}", at_100) == at_100.index.find_time(minute)


def test_parse_goto_relative_recording() -> None:
    idx = plain(100)
    idx.times = [float(i) for i in range(100)]
    idx.wallclock = False
    c = ReplayController(idx)
    assert parse_goto("00:01:10", c) == 70


def test_parse_goto_empty_recording() -> None:
    assert parse_goto("5", ReplayController(plain(0))) is None


def test_raw_neuron_monitor_output_is_paced_by_its_periods(tmp_path: Path) -> None:
    from neuron_top.sources.demo import generate

    p = tmp_path / "raw.json"
    p.write_bytes(b"\n".join(generate("inf1.xlarge", 3, 6, period=2.0)) + b"\n")  # no neuron_top.ts keys
    with RecordingIndex(p) as idx:
        idx.wait()
        assert not idx.wallclock
        clock = FakeClock()
        c = ReplayController(idx, clock=clock)
        assert c.snapshot(3).ts == idx.timestamp(3) == pytest.approx(6.0, abs=0.01)
        c.due()
        clock.t += 1.95  # the first period is 2.0003 s (the reports' own "period" fields, no neuron_top.ts)
        assert c.due() == []
        clock.t += 0.1
        assert c.due() == [1]
        assert parse_goto("+4s", c) == 3


def night() -> ReplayController:
    """A recording from 22:00 to 06:20 the next morning (local time, as the header shows it), a report a minute."""
    start = time.mktime((2026, 1, 1, 22, 0, 0, 0, 0, -1))
    n = 8 * 60 + 21
    return ReplayController(ListIndex([b"{}"] * n, [start + 60 * i for i in range(n)]))


def clock_of(c: ReplayController, i: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c.index.timestamp(i)))


def test_goto_a_time_of_day_is_the_next_one_in_the_recording() -> None:
    """':03:00:00' resolved on the date of the current position: in a 22:00 -> 06:20 recording, report 1."""
    c = night()
    assert clock_of(c, resolve_goto("03:00:00", c)) == "2026-01-02 03:00:00"
    assert clock_of(c, resolve_goto("23:30", c)) == "2026-01-01 23:30:00"
    c.seek(resolve_goto("04:00", c))
    assert clock_of(c, resolve_goto("03:00", c)) == "2026-01-02 03:00:00"  # none after: the first one
    assert clock_of(c, resolve_goto("23:30", c)) == "2026-01-01 23:30:00"
    assert clock_of(c, resolve_goto("04:00", c)) == "2026-01-02 04:00:00"  # at the position counts
    with pytest.raises(GotoError, match="is not in the recording"):
        resolve_goto("12:00", c)
    with pytest.raises(GotoError, match="not a time of day"):
        resolve_goto("25:00", c)


def test_goto_a_time_of_day_in_a_recording_of_several_days_is_the_next_one_from_the_position() -> None:
    """Each time of day is in a 3-day recording three times: the next one at or after the position, else the
    first (the test above cannot tell them apart: in one night each time of day comes once)."""
    start = time.mktime((2026, 1, 1, 0, 0, 0, 0, 0, -1))
    n = 3 * 24 * 12  # a report every 5 minutes
    c = ReplayController(ListIndex([b"{}"] * n, [start + 300 * i for i in range(n)]))
    assert clock_of(c, resolve_goto("03:00", c)) == "2026-01-01 03:00:00"
    c.seek(resolve_goto("2026-01-02 10:00:00", c))
    assert clock_of(c, resolve_goto("03:00", c)) == "2026-01-03 03:00:00"  # not the first day's
    assert clock_of(c, resolve_goto("10:00", c)) == "2026-01-02 10:00:00"  # at the position counts
    c.seek(resolve_goto("2026-01-03 20:00:00", c))
    assert clock_of(c, resolve_goto("03:00", c)) == "2026-01-01 03:00:00"  # none after: the first one


@pytest.mark.parametrize("text", ["2026-01-02 03:00:00", "2026-01-02T03:00:00", "2026-01-02 03:00", "2026-01-02 3:00"])
def test_goto_the_headers_date_and_time(text: str) -> None:
    """The header's own format was refused."""
    c = night()
    assert clock_of(c, resolve_goto(text, c)) == "2026-01-02 03:00:00"


@pytest.mark.parametrize(("text", "why"), [
    ("2026-01-03 03:00:00", "is not in the recording (2026-01-01 22:00:00 to 2026-01-02 06:20:00)"),
    ("2026-02-30 03:00:00", "is not in the recording"),
    ("150%", "a percentage from 0% to 100%"),
    ("+5q", "not a time span like +90s or -2m"),
    ("soon", "not a report number, time or percentage"),
    ("", "type a report number"),
])
def test_goto_says_why_an_entry_is_refused(text: str, why: str) -> None:
    with pytest.raises(GotoError, match=re.escape(why)):
        resolve_goto(text, night())


def test_goto_in_a_recording_without_wall_clock_times() -> None:
    idx = plain(100)
    idx.times = [float(i) for i in range(100)]
    idx.wallclock = False
    c = ReplayController(idx)
    assert resolve_goto("00:01:10", c) == 70
    with pytest.raises(GotoError, match="no wall-clock times"):
        resolve_goto("2026-01-01 00:00:00", c)
    with pytest.raises(GotoError, match="long"):
        resolve_goto("02:00:00", c)
    # "2:00" is read as H:MM since the start (as the header's +0:01:10): said, since 2 minutes was likely meant
    with pytest.raises(GotoError, match=re.escape("2:00 is 2 h 00 m from its start (H:MM[:SS]); the recording "
                                                  "is 1 m 39 s long")):
        resolve_goto("2:00", c)


# --- go-to exact with real jitter (issue 33) ---

def jittered(period: float, n: int = 200, jitter: float = 0.004, seed: int = 3) -> ReplayController:
    from tests.recordings import Plan, times

    ts = [t for _, t in times(Plan(seconds=period * (n - 1), period=period, jitter=jitter, seed=seed))]
    return ReplayController(ListIndex([b"{}"] * len(ts), ts))


@pytest.mark.parametrize("period", [1.0, 10.0, 60.0, 300.0])
def test_relative_moves_land_on_the_report_a_period_away_and_come_back(period: float) -> None:
    """``:+10s``/``:-1m``/``{``/``}`` landed one report off (or stayed put) with ms jitter."""
    c = jittered(period)
    for start in range(20, 180, 7):
        c.seek(start)
        c.seek(resolve_goto(f"+{int(period * 3)}s", c))
        assert c.position == start + 3
        c.seek(resolve_goto(f"-{int(period * 3)}s", c))
        assert c.position == start  # there and back: no drift
    c.seek(100)
    if period == 60.0:
        assert resolve_goto("-1m", c) == 99
        assert c.step_seconds(60) == 101 and c.step_seconds(-60) == 100
    assert c.step_seconds(-period) == 99 and c.step_seconds(period) == 100


def test_goto_takes_the_first_time_as_the_header_prints_it() -> None:
    c = jittered(60.0, seed=5)
    first = c.index.timestamp(0)
    c.seek(50)
    shown = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(first))  # whole seconds, as the header
    assert resolve_goto(shown, c) == 0
    assert resolve_goto(shown[11:], c) == 0


def test_goto_says_when_it_clamps() -> None:
    from neuron_top.recording.player import goto

    c = ReplayController(plain(1801))
    assert goto("1802", c) == (1800, "report 1,802 is past the end: the last one, 1,801")
    assert goto("1801", c) == (1800, "")
    c.seek(1790)
    assert goto("+1h", c) == (1800, "+1h is past the end: the last report")
    assert goto("-1h", c)[1] == "-1h is before the start: the first report"


def test_a_speed_out_of_range_is_said() -> None:
    assert ReplayController(plain(3), speed=1000).notes == ["speed 1000x is out of range: playing at 100x, the fastest"]
    assert ReplayController(plain(3), speed=0.1).notes == ["speed 0.1x is out of range: playing at 0.25x, the slowest"]
    assert ReplayController(plain(3), speed=2).notes == []


def test_following_a_live_recording_at_its_end_does_not_trail_by_one_report() -> None:
    """At the end of a live 60 s recording, the report that arrives a minute later is shown when it arrives (it
    was paced from the moment it arrived, so the screen showed each report a minute late)."""
    clock = FakeClock(0.0)
    idx = plain(10, period=60.0, done=False)
    c = ReplayController(idx, clock=clock)
    c.seek(9)  # G: the newest report, shown now
    clock.t += 60.0  # a minute later the writer appends the next one
    idx.reports.append(idx.reports[-1])
    idx.times.append(idx.times[-1] + 60.0)
    assert c.due() == [10]
    clock.t += 59.9
    idx.reports.append(idx.reports[-1])
    idx.times.append(idx.times[-1] + 60.0)
    assert c.due() == []
    clock.t += 0.2
    assert c.due() == [11]


def test_goto_takes_the_header_time_with_its_zone() -> None:
    from neuron_top.recording.pacing import report_time

    c = jittered(60.0, seed=5)
    c.seek(50)
    shown = report_time(c.index.timestamp(20), True)  # "2026-01-01 00:20:00 UTC", as the header prints it
    assert resolve_goto(shown, c) == 20
    with pytest.raises(GotoError, match="times here are in"):
        resolve_goto(shown.rsplit(" ", 1)[0] + " XYZT", c)

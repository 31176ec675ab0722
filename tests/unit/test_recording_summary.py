"""``neuron-top replay FILE --summary``: span, holes, one line per event in time order, floods grouped, exit 1 on
uncorrected ECC or execution errors."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.recording.writer import RecordingWriter


def local(h: int, m: int, s: int, day: int = 1) -> float:
    """A wall-clock time on 2026-01-<day> in local time (what the summary prints)."""
    return time.mktime((2026, 1, day, h, m, s, 0, 0, -1))


def report(*, pids: tuple[int, ...] = (1,), corrected: int = 0, uncorrected_nd3: int = 0, errors: int = 0) -> bytes:
    devices = [{"neuron_device_index": d, "mem_ecc_corrected": corrected if d == 0 else 0,
                "mem_ecc_uncorrected": uncorrected_nd3 if d == 3 else 0, "sram_ecc_corrected": 0,
                "sram_ecc_uncorrected": 0} for d in range(4)]
    runtimes = [{"pid": p, "neuron_runtime_tag": f"app{p}", "report": {
        "neuroncore_counters": {"period": 1.0, "neuroncores_in_use": {"0": {"neuroncore_utilization": 40.0}}},
        "execution_stats": {"period": 1.0, "error_summary": {"generic": errors if p == 1 else 0},
                            "execution_summary": {"completed": 10}}}} for p in pids]
    return json.dumps({"neuron_runtime_data": runtimes,
                       "system_data": {"neuron_hw_counters": {"period": 1.0, "neuron_devices": devices}}}).encode()


def night(path: Path) -> Path:
    """01:00 to about 05:20, a report every 10 s: corrected ECC on ND0 in every report, one uncorrected on ND3 at
    02:13:05, app 2 stops at 02:30:05, a 2 h 03 m hole, app 1's execution errors start after it."""
    with RecordingWriter(path) as w:
        t = local(1, 0, 5)
        for _ in range(2 * 360):  # 01:00 -> 03:00
            w.write(report(pids=(1, 2) if t < local(2, 30, 5) else (1,), corrected=1,
                           uncorrected_nd3=1 if t == local(2, 13, 5) else 0), t)
            t += 10.0
        t += 2 * 3600 + 3 * 60 - 10  # a hole
        for k in range(10):
            w.write(report(errors=2 if k >= 3 else 0), t)
            t += 10.0
    return path


def test_the_incident_report(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(night(tmp_path / "night.jsonl")), "--summary"]) == 1
    lines = capfd.readouterr().out.splitlines()
    z = time.strftime("%Z", time.localtime(local(1, 0, 5)))
    assert lines == [
        f"night.jsonl: 730 reports, 2026-01-01 01:00:05 to 05:04:25 {z} (4 h 04 m)",
        "holes: 1, 2 h 03 m without data in all",
        "executions: completed 12,700 (others 0 or not reported); errors 14",
        "serious:",
        f"  2026-01-01 02:13:05 {z}  ND3 uncorrected ECC (HBM) x1",
        f"  2026-01-01 05:03:25 to 05:04:25 {z} (1 m 10 s)  app app1: 14 execution errors in 7 reports, peak 0.20/s",
        "other:",
        f"  2026-01-01 02:30:05 {z}  app app2 (pid 2) stopped",
        f"  2026-01-01 02:59:55 to 05:02:55 {z} (2 h 03 m)  no data",
        "corrected ECC (one line per device and memory, the whole recording):",
        # 720 reports with corrected ECC on ND0: one line for the whole recording, not 720
        f"  ND0 HBM x720 in 720 reports, 2026-01-01 01:00:05 to 02:59:55 {z}",
        "found: 1 uncorrected ECC event, 1 execution error burst (14 errors)",
    ]


def test_a_clean_recording_exits_0(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calm.jsonl.zst"
    with RecordingWriter(path) as w:
        for i in range(20):
            w.write(report(), local(9, 0, i))
    assert main(["replay", str(path), "--summary"]) == 0
    out = capfd.readouterr().out
    assert out.splitlines()[-1] == "found: no uncorrected ECC errors, no execution errors"
    assert "holes" not in out


def test_summary_as_json(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(night(tmp_path / "n.jsonl")), "--summary", "--json"]) == 1
    doc = json.loads(capfd.readouterr().out)
    assert doc["reports"] == 730 and doc["serious"] == {"ecc-uncorrected": 1, "error": 1}
    assert doc["zone"] == time.strftime("%Z", time.localtime(local(1, 0, 5)))
    assert doc["holes"][0]["seconds"] == pytest.approx(2 * 3600 + 3 * 60)
    first = next(e for e in doc["events"] if e["kind"] == "ecc-uncorrected")
    assert first["text"] == "ND3 uncorrected ECC (HBM) x1" and first["start"] == local(2, 13, 5)
    burst = next(e for e in doc["events"] if e["kind"] == "error")
    assert (burst["count"], burst["reports"], burst["start"], burst["end"]) == (14, 7, local(5, 3, 25),
                                                                                 local(5, 4, 25))
    assert burst["seconds"] == pytest.approx(70) and burst["peak_per_second"] == pytest.approx(0.2)


def test_skipped_input_is_counted(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junk.jsonl"
    with RecordingWriter(path) as w:
        w.write(report(), local(9, 0, 0))
        w.write_line(b"garbage")
        w.write(report(), local(9, 0, 1))
    assert main(["replay", str(path), "--summary"]) == 0
    assert "skipped: 1 (not a report 1)" in capfd.readouterr().out


def test_a_report_that_could_not_be_read_makes_the_summary_incomplete(tmp_path: Path,
                                                                       capfd: pytest.CaptureFixture[str]) -> None:
    """A report cut short (a crash mid-write) is data lost: the summary cannot speak for it, so the exit status
    says so (2, as ``trace --check`` for a trace), even when it found incidents; a log line in the file is not."""
    path = tmp_path / "cut.jsonl"
    with RecordingWriter(path) as w:
        w.write(report(), local(9, 0, 0))
        w.write_line(report()[:40])
        w.write(report(), local(9, 0, 2))
    assert main(["replay", str(path), "--summary"]) == 2
    lines = capfd.readouterr().out.splitlines()
    assert lines[-2] == "found: no uncorrected ECC errors, no execution errors"
    assert lines[-1] == "incomplete: 1 report could not be read; what it held is not in this summary"
    assert main(["replay", str(path), "--summary", "--json"]) == 2
    assert json.loads(capfd.readouterr().out)["lost"] == {"truncated report": 1}
    night(path)  # serious incidents too: still 2, the summary may be missing others
    with path.open("ab") as f:
        f.write(b'{"neuron_runtime_data": [\n')
    assert main(["replay", str(path), "--summary"]) == 2
    assert "found: 1 uncorrected ECC event" in capfd.readouterr().out


def test_a_single_report(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.jsonl"
    with RecordingWriter(path) as w:
        w.write(b'{"system_data":{}}', 1767225600.0)
    assert main(["replay", str(path), "--summary"]) == 0
    assert capfd.readouterr().out.splitlines()[0].startswith("one.jsonl: 1 report, ")  # not "1 reports"


def test_no_reports_is_a_usage_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"junk\n")
    assert main(["replay", str(path), "--summary"]) == 2
    assert "no reports in" in capfd.readouterr().err


def test_the_scan_split_over_workers_finds_what_one_scan_finds(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from neuron_top.recording import incident as summary
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import scan_range

    path = tmp_path / "many.jsonl"
    with RecordingWriter(path) as w:
        for i in range(600):
            w.write(report(pids=(1, 2) if i % 97 < 50 else (1,), corrected=1 if i % 7 == 0 else 0,
                           uncorrected_nd3=1 if i == 333 else 0, errors=1 if i % 41 == 0 else 0),
                    local(9, 0, 0) + i * (10 if i != 400 else 5000))
            if i == 200:
                w.write_line(b'{"neuron_runtime_data": "not a list"}')  # decodes in the tolerant decoder only
    monkeypatch.setattr(summary, "PARALLEL_MIN", 100)
    with RecordingIndex(path) as ix:
        ix.wait()
        one = scan_range(ix, 0, len(ix))
        split = summary.scan_all(ix, workers=2)
        assert split == one and len(one[0]) > 100
        assert {m.kind for m in one[0]} >= {"app-", "app+", "ecc-corrected", "ecc-uncorrected", "error", "gap"}


def test_times_of_a_raw_recording_agree_with_its_span(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """300 raw reports 0.01 s apart said "+0:00:00 to +0:00:02 (3 s)": the end truncated, the span rounded."""
    path = tmp_path / "raw.jsonl"
    path.write_bytes(b"".join(b'{"system_data":{"vcpu_usage":{"period":0.01}}}\n' for _ in range(300)))
    assert main(["replay", str(path), "--summary"]) == 0
    assert "300 reports, +0:00:00 to +0:00:03 (3 s)" in capfd.readouterr().out


def test_one_error_is_one_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The last line said "1 execution error burst (1 errors)"."""
    from tests.recordings import Plan, write

    path = write(tmp_path / "one.jsonl", Plan(seconds=600, period=10.0, bursts=[(300, 310, 1)]))
    assert main(["replay", str(path), "--summary"]) == 1
    assert capfd.readouterr().out.splitlines()[-1] == "found: 1 execution error burst (1 error)"


def test_the_last_line_counts_the_bad_executions_of_the_bursts_too(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A burst of bad executions without errors is an execution error burst too: the last line said "2 execution
    error bursts (10 errors)" for two bursts, one of them 60 timed-out executions, as if the bursts held 10."""
    from tests.recordings import Plan, write

    path = write(tmp_path / "bad.jsonl", Plan(seconds=600, period=10.0, bursts=[(100, 150, 2)],
                                             executions=[(300, 360, "timed_out", 10)]))
    assert main(["replay", str(path), "--summary"]) == 1
    assert capfd.readouterr().out.splitlines()[-1] == \
        "found: 2 execution error bursts (10 errors, 60 bad executions)"


# --- incidents as intervals, on recordings made as the findings describe (issue 33) ---

def test_a_day_with_a_burst_and_one_uncorrected_ecc_among_corrected_on_16_devices(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The acceptance case: 24 h at 10 s, a 10-minute burst (60 reports x 3 failed = 180) and one uncorrected
    ECC among corrected ones on 16 devices: at most ~30 lines, the serious ones (with the burst's start, end and
    180 errors) before any corrected ECC."""
    from tests.recordings import Plan, write

    plan = Plan(seconds=86400, period=10.0, jitter=0.003, bursts=[(3 * 3600 + 40 * 60, 3 * 3600 + 50 * 60, 3)],
                ecc=[(5 * 3600 + 13, 5, "mem_uncorrected", 1)], corrected_every=60,
                group_errors=[(6 * 3600, 6 * 3600 + 300, "open /proc/meminfo: too many open files")])
    path = write(tmp_path / "day.jsonl", plan)
    assert main(["replay", str(path), "--summary"]) == 1
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) <= 30
    z = time.strftime("%Z", time.localtime(plan.start))
    burst = next(i for i, x in enumerate(lines) if "execution errors" in x)
    assert lines[burst].startswith(f"  {time.strftime('%Y-%m-%d %H:%M', time.localtime(plan.start + 13200))}")
    assert f"to {time.strftime('%H:%M', time.localtime(plan.start + 13790))}" in lines[burst]
    assert z in lines[burst] and "(10 m 00 s)" in lines[burst] and "180 execution errors in 60 reports" in lines[burst]
    uncorrected = next(i for i, x in enumerate(lines) if "uncorrected ECC" in x)
    group = next(i for i, x in enumerate(lines) if "memory_info failing" in x)
    assert "(5 m 00 s)" in lines[group] and "(30 reports)" in lines[group]
    corrected = [i for i, x in enumerate(lines) if " HBM x" in x]
    assert len(corrected) == 16
    assert max(burst, uncorrected) < group < min(corrected)
    assert lines[-1] == "found: 1 uncorrected ECC event, 1 execution error burst (180 errors)"


def test_a_fleet_recording_gets_the_summary_over_its_hosts(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """It said ``"events": []`` and exit 0 while its replay showed an uncorrected ECC, errors and a host down."""
    from tests.recordings import T0, fleet

    path = fleet(tmp_path / "fleet.jsonl", hosts=4, seconds=1200, down=[("host2", 300, 500)],
                 uncorrected=[("host1", 600)], errors=[("host3", 100, 200, 2.5)])
    assert main(["replay", str(path), "--summary", "--json"]) == 1
    doc = json.loads(capfd.readouterr().out)
    by = {e["kind"]: e for e in doc["events"]}
    assert doc["serious"] == {"ecc-uncorrected": 1, "error": 1, "host-down": 1}
    assert (by["host-down"]["subject"], by["host-down"]["start"], by["host-down"]["end"]) == ("host2", T0 + 300,
                                                                                            T0 + 490)
    assert by["error"]["peak_per_second"] == 2.5 and by["error"]["reports"] == 10
    assert main(["replay", str(path), "--summary"]) == 1
    out = capfd.readouterr().out
    assert "121 refreshes" in out and "host2 down (20 refreshes)" in out


def test_a_fleet_recordings_summary_estimates_its_executions(tmp_path: Path,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    """A fleet recording's summary had no executions line (its frames keep rates, not counts): each up host's
    rates times the time since the refresh before, said to be an estimate, in the single-host wording."""
    from neuron_top.fleet.frame import FleetFrame
    from neuron_top.fleet.record import FleetRecorder
    from neuron_top.fleet.rows import UP, FleetRow
    from tests.recordings import T0, fleet

    # 121 refreshes 10 s apart, 4 hosts at 100 executions/s: host2 down for 20 refreshes (not counted), host3
    # 2.5 bad/s for 10; the first refresh has no time before it.
    path = fleet(tmp_path / "fleet.jsonl", hosts=4, seconds=1200, down=[("host2", 300, 500)],
                 errors=[("host3", 100, 200, 2.5)])
    assert main(["replay", str(path), "--summary"]) == 1
    out = capfd.readouterr().out.splitlines()
    bad = 2.5 * 10 * 10
    completed = (120 * 4 - 20) * 100 * 10 - bad
    assert out[1] == (f"executions: completed ~{completed:,.0f}, bad ~{bad:,.0f} (estimated: each up host's exec/s "
                      "and bad/s times the time since the refresh before)")
    assert main(["replay", str(path), "--summary", "--json"]) == 1
    doc = json.loads(capfd.readouterr().out)
    assert doc["executions"] == {"completed": completed, "bad": bad} and doc["errors"] is None
    assert doc["executions_estimated"].startswith("estimated: ")

    # the time across a hole (an hour without refreshes) counts for nothing; no rate at all is not zero
    rec = FleetRecorder(tmp_path / "hole.jsonl")
    for at, rate in ((0, 1.0), (10, 1.0), (20, 1.0), (3620, 50.0), (3630, None)):
        rec.write(FleetFrame(ts=T0 + at, source="ssh 1 hosts",
                             rows=[FleetRow(key="h", exec_rate=rate, err_rate=rate and 0.0, status=UP)]))
    rec.close()
    assert main(["replay", str(tmp_path / "hole.jsonl"), "--summary"]) == 0
    assert "executions: completed ~20, bad ~0 (estimated" in capfd.readouterr().out
    rec = FleetRecorder(tmp_path / "none.jsonl")
    for at in (0, 10):
        rec.write(FleetFrame(ts=T0 + at, source="ssh 1 hosts", rows=[FleetRow(key="h", status=UP)]))
    rec.close()
    assert main(["replay", str(tmp_path / "none.jsonl"), "--summary"]) == 0
    assert "executions" not in capfd.readouterr().out


def test_fleet_replay_calls_a_host_going_down_host_down_not_a_stall(tmp_path: Path) -> None:
    from neuron_top.fleet.record import decode_frame, fleet_markers
    from neuron_top.recording.index import RecordingIndex
    from tests.recordings import fleet

    path = fleet(tmp_path / "fleet.jsonl", hosts=2, seconds=100, down=[("host1", 50, 80)])
    with RecordingIndex(path) as ix:
        ix.wait()
        found = list(fleet_markers((i, decode_frame(ix.get(i))) for i in range(len(ix))))
    assert [(m.index, m.kind) for m in found] == [(5, "host-down")]


# --- time on the command line (issue 33) ---

@pytest.fixture
def hour(tmp_path: Path) -> Path:
    """01:00 to 02:00 UTC-ish (local), a report a minute with ms jitter, a burst 01:20-01:25."""
    from tests.recordings import Plan, write

    return write(tmp_path / "hour.jsonl", Plan(seconds=3600, period=60.0, jitter=0.003, start=local(1, 0, 0),
                                               bursts=[(1200, 1500, 2)]))


@pytest.mark.parametrize("start", ["31", "01:30", "01:30:00", "2026-01-01 01:30:00", "+30m", "50%"])
def test_once_at_start_in_every_form_prints_the_report_and_its_time(
        hour: Path, capfd: pytest.CaptureFixture[str], start: str) -> None:
    assert main(["replay", str(hour), "--once", "--start", start]) == 0
    out = capfd.readouterr().out
    z = time.strftime("%Z", time.localtime(local(1, 30, 0)))
    assert f"report 31/61 at 2026-01-01 01:29:59 {z}" in out or f"report 31/61 at 2026-01-01 01:30:00 {z}" in out


def test_summary_of_a_window(hour: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(hour), "--summary", "--start", "01:30", "--end", "+10m"]) == 0
    out = capfd.readouterr().out
    assert "(reports 31 to 41)" in out.splitlines()[0] and "execution errors in" not in out
    assert main(["replay", str(hour), "--summary", "--start", "01:10", "--end", "01:40"]) == 1
    assert "10 execution errors in 5 reports" in capfd.readouterr().out


@pytest.mark.parametrize(("args", "says"), [
    (["--summary", "--tag", "bert"], "--tag narrows the screen"),
    (["--once", "--end", "5"], "--end sets the last report of a --summary window"),
    (["--once", "--start", "05:00"], "--start 05:00: 05:00 is not in the recording"),
    (["--summary", "--start", "01:40", "--end", "01:10"], "is before --start"),
])
def test_time_options_refused_with_a_reason(hour: Path, capfd: pytest.CaptureFixture[str], args: list[str],
                                            says: str) -> None:
    assert main(["replay", str(hour), *args]) == 2
    assert says in capfd.readouterr().err


def test_a_start_past_the_end_says_it_clamped(hour: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(hour), "--once", "--start", "99"]) == 0
    captured = capfd.readouterr()
    assert "report 61/61" in captured.out and "report 99 is past the end: the last one, 61" in captured.err


# --- time going backwards (issue 33) ---

def rotated_out_of_order(tmp_path: Path) -> Path:
    """``cat live.jsonl live.jsonl.1``, the order a shell glob gives: 2.5 h (live, 02:30-05:00) then the older
    file (00:00-02:30), a report a minute."""
    from tests.recordings import T0, Plan, lines

    older = list(lines(Plan(seconds=9000 - 60, period=60.0, jitter=0.003)))
    live = list(lines(Plan(seconds=9000 - 60, period=60.0, jitter=0.003, start=T0 + 9000)))
    path = tmp_path / "all.jsonl"
    path.write_bytes(b"".join(live + older))
    return path


def test_time_going_back_is_kept_in_file_order_and_shown(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from neuron_top.recording.index import RecordingIndex
    from tests.recordings import T0

    path = rotated_out_of_order(tmp_path)
    with RecordingIndex(path) as ix:
        ix.wait()
        ts = [ix.timestamp(i) for i in range(len(ix))]
    assert len(ts) == 300 and ts[149] > T0 + 9000 + 8900 and ts[150] < T0 + 1  # its own times, not pinned
    assert main(["replay", str(path), "--summary", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert doc["start"] < T0 + 1 and doc["end"] > T0 + 17900  # the span: earliest to latest
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds == ["clock-back"]  # no invented app stopped/started, no hole
    assert doc["events"][0]["first"] == 151
    assert main(["replay", str(path), "--summary"]) == 0
    assert "the recorded clock went back 4 h 59 m" in capfd.readouterr().out


def test_playing_across_a_jump_back_keeps_the_recorded_pace(tmp_path: Path) -> None:
    """2.5 h played in under a second: every report after the jump was due at once."""
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import ReplayController

    t = [0.0]
    with RecordingIndex(rotated_out_of_order(tmp_path)) as ix:
        ix.wait()
        c = ReplayController(ix, speed=100.0, clock=lambda: t[0], start=148)
        c.due()  # the origin
        for _ in range(40):
            t[0] += 0.6  # 60 recorded seconds at 100x
            c.due()
        assert 148 + 35 <= c.position <= 148 + 41
        holes = c.take_holes()
        assert [h.text for h in holes] == ["the recorded clock went back 4 h 59 m"]
        c.scan_markers()
        back = [m for m in c.markers if m.kind == "gap"]
        assert [(m.index, m.text) for m in back] == [(150, "the recorded clock went back 4 h 59 m")]


def test_summary_every_10m_is_a_table_per_interval(hour: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """atopsar for a post-mortem: a row per 10 minutes (aligned), '-' for what no report had."""
    assert main(["replay", str(hour), "--summary", "--every", "10m", "--json"]) == 1
    doc = json.loads(capfd.readouterr().out)
    rows = doc["table"]["intervals"]
    assert doc["table"]["every"] == 600 and [r["start"] for r in rows][1:3] == [local(1, 0, 0), local(1, 10, 0)]
    burst = next(r for r in rows if r["start"] == local(1, 20, 0))
    assert burst["err_per_s"] > 0 and burst["exec_per_s"] == pytest.approx(100 / 60)
    assert burst["util_max"] >= burst["util_avg"] > 40 and burst["device_memory"] > 0 and burst["p99"] is None
    # the burst's 10 errors (5 reports x 2, a minute each; jitter puts its first report in the interval before)
    assert sum((r["err_per_s"] or 0) * r["reports"] * 60 for r in rows) == pytest.approx(10)
    assert sum(r["reports"] for r in rows) == 61
    assert main(["replay", str(hour), "--summary", "--every", "10m", "--start", "01:30"]) == 0
    text = capfd.readouterr().out.splitlines()
    head = next(i for i, x in enumerate(text) if x.startswith("interval"))
    assert "util avg" in text[head] and "ECC c/u" in text[head]
    starts = {x[:19] for x in text[head + 1:]}
    want = {time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(local(1, m, 0))) for m in (20, 30, 40, 50, 60)}
    assert {w for w in want if "01:20" not in w and "02:00" not in w} <= starts <= want  # ms jitter at the ends


def test_every_needs_summary_and_a_period(hour: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(hour), "--once", "--every", "10m"]) == 2
    assert "--every adds a table per interval to --summary" in capfd.readouterr().err
    assert main(["replay", str(hour), "--summary", "--every", "soon"]) == 2
    assert "--every" in capfd.readouterr().err


@pytest.mark.parametrize("period", [1.0, 60.0, 300.0])
def test_holes_at_any_period_are_intervals_with_their_length(tmp_path: Path, period: float,
                                                              capfd: pytest.CaptureFixture[str]) -> None:
    """neuron-monitor down for two hours, in recordings at 1 s, 60 s and 300 s with ms jitter."""
    from tests.recordings import Plan, write

    seconds = 4 * 3600 if period > 1 else 3 * 3600
    plan = Plan(seconds=seconds, period=period, jitter=0.003, holes=[(1800, 7200)])
    path = write(tmp_path / "holes.jsonl", plan)
    assert main(["replay", str(path), "--summary", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert len(doc["holes"]) == 1 and doc["holes"][0]["seconds"] == pytest.approx(7200 + period, abs=0.01)
    gap = next(e for e in doc["events"] if e["kind"] == "gap")
    assert gap["start"] == pytest.approx(plan.start + 1800 - period, abs=0.01)


def test_corrected_ecc_on_both_memories_of_16_devices_is_one_line_per_memory(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """32 folded lines (DRAM and SRAM of 16 devices) would break the ~30-line page: one line per memory."""
    from tests.recordings import Plan, write

    ecc = [(60.0 * k, k % 16, "mem_corrected" if k < 16 else "sram_corrected", 1 + k % 3) for k in range(32)]
    path = write(tmp_path / "busy.jsonl", Plan(seconds=3900, period=60.0, ecc=ecc))
    assert main(["replay", str(path), "--summary"]) == 0
    lines = capfd.readouterr().out.splitlines()
    folded = lines[lines.index("corrected ECC (one line per device and memory, the whole recording):") + 1:-1]
    hbm = sum(1 + k % 3 for k in range(16))
    sram = sum(1 + k % 3 for k in range(16, 32))
    assert [x.split(",")[0] for x in folded] == [f"  16 devices (ND0-ND15) HBM x{hbm}",
                                                 f"  16 devices (ND0-ND15) SRAM x{sram}"]


@pytest.mark.parametrize("workers", [1, 3])
def test_summary_counts_executions_by_outcome_exactly(tmp_path: Path, monkeypatch, capfd,
                                                     workers: int) -> None:
    """Issue 33 Deliver 2: ``--summary`` gives the executions of every outcome over the recording (or a
    ``--start``/``--end`` window), equal to a brute-force sum of the JSON, also when split over workers."""
    from neuron_top.derived import EXEC_TYPES
    from neuron_top.recording import incident
    from neuron_top.recording.index import RecordingIndex
    from tests.recordings import Plan, lines, write

    plan = Plan(seconds=500 * 10, period=10.0, completed=4,
                executions=[(100, 900, "completed_with_err", 3), (2000, 2050, "timed_out", 9),
                            (4000, 4500, "incorrect_input", 1)])
    path = write(tmp_path / "x.jsonl", plan)
    docs = [json.loads(x) for x in lines(plan)]

    def brute(lo: int, hi: int) -> dict[str, int]:
        return {k: sum(d["neuron_runtime_data"][0]["report"]["execution_stats"]["execution_summary"][k]
                       for d in docs[lo:hi]) for k in EXEC_TYPES}

    monkeypatch.setattr(incident, "PARALLEL_MIN", 10)
    index = RecordingIndex(path)
    index.wait()
    try:
        for lo, hi in ((0, len(docs)), (150, 420)):
            *_, totals = incident.scan_incidents(index, workers=workers, lo=lo, hi=hi)
            assert dict(zip(EXEC_TYPES, totals.executions, strict=True)) == brute(lo, hi), (lo, hi)
    finally:
        index.close()
    assert main(["replay", str(path), "--summary", "--json"]) == 1  # bad executions are serious
    doc = json.loads(capfd.readouterr().out)
    assert doc["executions"] == brute(0, len(docs)) and doc["errors"] == 0
    assert main(["replay", str(path), "--summary"]) == 1
    want = brute(0, len(docs))
    assert (f"executions: completed {want['completed']:,}, completed_with_err {want['completed_with_err']:,}, "
            f"timed_out {want['timed_out']}, incorrect_input {want['incorrect_input']} (others 0 or not reported); "
            "errors 0") in capfd.readouterr().out

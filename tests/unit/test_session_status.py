"""The source status as the header says it, headless and on an injected clock: LIVE only while reports arrive,
STALE after three periods without one, "no data" for garbage, exit statuses, the sticky ECC mark."""

from __future__ import annotations

import json

from neuron_top.feed import Report, SkippedInput, StatusChanged
from neuron_top.session import DEFAULT_PERIOD, MIN_STALE_SECONDS, Session, SourceStatus
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.sources.base import Skipped, State, Status
from tests.conftest import DATA

RAW = (DATA / "trn2_small.json").read_bytes().strip()


class Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def with_ecc(uncorrected: int, device: int = 0) -> bytes:
    """The fixture with ``uncorrected`` DRAM ECC events on ``device`` and none elsewhere."""
    doc = json.loads(RAW)
    hw = doc["neuron_hardware_info"]
    counts = []
    for d in range(hw["neuron_device_count"]):
        n = uncorrected if d == device else 0
        counts.append({"mem_ecc_corrected": 0, "mem_ecc_uncorrected": n, "sram_ecc_corrected": 0,
                       "sram_ecc_uncorrected": 0})
    doc["system_data"]["neuron_hw_counters"] = {"period": 1.0, "error": "", "neuron_devices": [
        {"neuron_device_index": d, **c} for d, c in enumerate(counts)]}
    return json.dumps(doc).encode()


REPORT = with_ecc(0)


def snap(seq: int = 1, data: bytes = REPORT) -> Snapshot:
    return snapshot_from(data, float(seq), seq)


def live(clock: Clock) -> Session:
    s = Session("neuron-monitor", clock=clock)
    s.apply(StatusChanged(Status(State.LIVE, "reading")))
    return s


def test_live_turns_stale_after_three_periods_without_a_report_and_live_again_at_the_next() -> None:
    clock = Clock()
    s = live(clock)
    for _ in range(5):  # one report a second
        s.apply(Report(snap(), REPORT))
        clock.t += 1.0
    period = s.expected_period()
    assert period == max(1.0, snap().period() or 0)
    clock.t = s.status.last_report + s.stale_after() - 0.01  # type: ignore[operator]
    assert s.shown().state == "live"
    clock.t += 0.02
    shown = s.shown()
    assert shown.state == "stale" and shown.expected == period
    assert s.status.state == "live"  # the status as set is unchanged: staleness is read, not stored
    s.apply(Report(snap(), REPORT))
    assert s.shown().state == "live"


def test_stale_needs_at_least_the_minimum_and_the_default_period_before_the_pace_is_known() -> None:
    empty = b'{"neuron_runtime_data": []}'  # a report with no period of its own
    clock = Clock()
    s = live(clock)
    s.apply(Report(snapshot_from(empty, 1.0, 1), empty))
    assert s.expected_period() == DEFAULT_PERIOD  # one arrival: nothing learned yet
    for _ in range(5):  # a burst (a file piped in): no pace to learn either
        s.apply(Report(snapshot_from(empty, 1.0, 1), empty))
    assert s.expected_period() == DEFAULT_PERIOD
    fast = live(clock)
    for _ in range(5):  # five reports a second: three periods would be 0.6 s
        fast.apply(Report(snapshot_from(empty, 1.0, 1), empty))
        clock.t += 0.2
    assert abs(fast.expected_period() - 0.2) < 1e-9 and fast.stale_after() == MIN_STALE_SECONDS


def test_a_slow_source_is_judged_by_its_own_period() -> None:
    clock = Clock()
    s = live(clock)
    doc = json.loads(REPORT)
    doc["system_data"]["neuron_hw_counters"]["period"] = 60.0  # a "period": "1m" config
    slow = json.dumps(doc).encode()
    for _ in range(4):
        s.apply(Report(snap(data=slow), slow))
        clock.t += 60.0
    clock.t -= 60.0
    clock.t += 170.0
    assert s.shown().state == "live"
    clock.t += 11.0
    assert s.shown().state == "stale"


def test_stale_follows_the_reports_period_not_the_observed_cadence() -> None:
    """Reports that say "period 1.0" but come every 30 s: STALE 3 s after each one, every time (it was STALE
    once, then LIVE with 28-second-old data for good once the 30 s cadence was learned)."""
    clock = Clock()
    s = live(clock)
    assert snap().period() == 1.0
    s.apply(Report(snap(), REPORT))  # the first waits the default period (see below)
    clock.t += 30.0
    for _ in range(12):
        s.apply(Report(snap(), REPORT))
        assert s.shown().state == "live"
        clock.t += 3.5
        assert s.shown().state == "stale"
        clock.t += 26.5
    assert s.expected_period() == 1.0 and s.stale_after() == MIN_STALE_SECONDS


def test_the_first_report_s_start_up_period_waits_the_default() -> None:
    clock = Clock()
    s = live(clock)
    doc = json.loads(REPORT)
    doc["system_data"]["neuron_hw_counters"]["period"] = 0.0007  # neuron-monitor's first report
    first = json.dumps(doc).encode()
    s.apply(Report(snap(data=first), first))
    clock.t += 4.0
    assert s.shown().state == "live" and s.expected_period() == DEFAULT_PERIOD


def test_replay_and_ended_sources_are_never_stale() -> None:
    clock = Clock()
    r = Session("run.jsonl", "replay", clock=clock)
    r.accept(snap())
    clock.t += 1e6
    assert r.shown().state == "replay"
    s = live(clock)
    s.apply(Report(snap(), REPORT))
    s.apply(StatusChanged(Status(State.ENDED, "stream ended (end of input on stdin) after 1 report")))
    clock.t += 1e6
    assert s.shown().state == "ended"


def test_garbage_before_any_report_is_no_data_not_starting() -> None:
    s = Session("stdin", clock=Clock())
    s.apply(StatusChanged(Status(State.STARTING, "waiting for reports on stdin")))
    assert s.shown().state == "starting"
    s.apply(SkippedInput(Skipped("not a report", count=5000), 5000))
    shown = s.shown()
    assert shown.state == "no data" and shown.skipped == 5000 and shown.reports == 0


def test_the_exit_status_reaches_the_status_and_goes_when_the_source_runs_again() -> None:
    s = Session("ssh trn neuron-monitor", clock=Clock())
    s.apply(StatusChanged(Status(State.FAILED, "stream ended: ssh exited with status 255 after 0 reports",
                                 "ssh: Connection refused", exit_status=255)))
    assert s.shown().exit_status == 255 and s.shown().exit_text == "exit 255"
    s.apply(StatusChanged(Status(State.RESTARTING, "neuron-monitor was killed by SIGKILL", exit_status=-9)))
    assert s.status.exit_text == "SIGKILL"
    s.apply(StatusChanged(Status(State.LIVE, "neuron-monitor (pid 4)")))
    assert s.status.exit_status is None and s.status.exit_text == ""
    assert SourceStatus(exit_status=-200).exit_text == "signal 200"


def test_uncorrected_ecc_stays_marked_until_acknowledged() -> None:
    s = live(Clock())
    up = s.apply(Report(snap(1, with_ecc(2, device=1)), REPORT))
    assert up.uncorrected == (1,) and up.status and s.status.uncorrected == (1,)
    s.apply(Report(snap(2), REPORT))  # the next period has no new event: the mark stays
    assert s.shown().uncorrected == (1,)
    s.apply(Report(snap(3, with_ecc(1, device=0)), REPORT))
    assert s.status.uncorrected == (0, 1)
    assert s.acknowledge() == (0, 1)
    assert s.status.uncorrected == () and s.acknowledge() == ()


def test_skipped_input_is_kept_by_reason_with_its_latest_sample() -> None:
    s = Session("stdin", clock=Clock())
    s.apply(SkippedInput(Skipped("not a report", "ssh banner", 3), 3))
    s.apply(SkippedInput(Skipped("truncated report", '{"neuron_runtime_data": [', 1), 4))
    s.apply(SkippedInput(Skipped("not a report", "WARN retrying", 2), 6))
    assert s.skip_reasons == {"not a report": (5, "WARN retrying"),
                              "truncated report": (1, '{"neuron_runtime_data": [')}
    assert s.status.skipped == 6

"""Fleet rows from query answers and from snapshots: missing is blank, collisions are said, one rule for both."""

from __future__ import annotations

import pytest

from neuron_top.fleet.promql import PromError, Sample
from neuron_top.fleet.queries import PART, MatchError, QuerySet, check_label, parse_match
from neuron_top.fleet.rows import (
    DOWN,
    STALE,
    UP,
    EccTotals,
    Thresholds,
    from_answers,
    from_snapshot,
    status_for,
    with_status,
)
from neuron_top.snapshot import snapshot_from
from tests.conftest import REPORTS
from tests.helpers import demo_snapshots

QS = QuerySet()
TH = Thresholds(stale_after=30, down_after=120)


def s(value: float | str, **labels: str) -> Sample:
    return Sample(labels, (0.0, str(value)))


def rows_of(answers: dict[str, object], qs: QuerySet = QS) -> dict[str, object]:
    return {r.key: r for r in from_answers(qs, qs.queries(), answers, TH)}


# --- the query set --------------------------------------------------------------------------------------------


def test_query_count_is_fixed_and_small() -> None:
    for qs in (QuerySet(), QuerySet(by="node", labels=("cluster", "team"), match='job="x"')):
        queries = qs.queries()
        assert len(queries) == 11 and sum(not q.slow for q in queries) == 3


def test_match_and_by_reach_every_selector() -> None:
    qs = QuerySet(by="node", match=parse_match('{cluster="a",instance_type=~"trn2.*"}'))
    for q in qs.queries():
        assert 'cluster="a",instance_type=~"trn2.*"' in q.expr, q.name
        assert "by (node" in q.expr, q.name


@pytest.mark.parametrize("text, want", [
    ('job="neuron"', 'job="neuron"'),
    ('{job="neuron", az!~"us-.*"}', 'job="neuron",az!~"us-.*"'),
    ('a="x\\"y"', 'a="x\\"y"'),
    ("", ""),
])
def test_parse_match(text: str, want: str) -> None:
    assert parse_match(text) == want


@pytest.mark.parametrize("text", ['up{job="x"}', "job=neuron", 'job="x" or 1', '__name__="up"', 'job="x",,'])
def test_parse_match_refuses(text: str) -> None:
    with pytest.raises(MatchError):
        parse_match(text)


def test_label_names_are_checked() -> None:
    assert check_label("node") == "node"
    # UTF-8 names (OpenTelemetry resource attributes in CloudWatch, Prometheus 3), bare or quoted as in PromQL
    assert check_label("@resource.k8s.pod.name") == check_label('"@resource.k8s.pod.name"') == "@resource.k8s.pod.name"
    for bad in ("", '""', "__name__", '"__name__"', "x\ny"):
        with pytest.raises(MatchError):
            check_label(bad)


# --- rows from answers ----------------------------------------------------------------------------------------


def test_every_figure_lands_in_its_field() -> None:
    rows = rows_of({
        "seen": [s(3, instance_id="i-1", **{PART: "now"})], "gone": [s(3, instance_id="i-1")],
        "info": [s(1, instance_id="i-1", instance_name="web", instance_type="trn2.48xlarge",
                   availability_zone="us-east-2a", region="us-east-2")],
        "hardware": [s(1, instance_id="i-1", neuron_device_count="16", neuroncore_per_device_count="4",
                       neuron_device_memory_size="103079215104")],
        "util": [s(0.5, instance_id="i-1")], "busiest": [s(0.9, instance_id="i-1")],
        "busy": [s(40, instance_id="i-1")], "allocated": [s(42, instance_id="i-1")],
        "host": [s(1e9, instance_id="i-1", **{PART: "mem_used"}), s(3, instance_id="i-1", **{PART: "apps"}),
                 s(0.25, instance_id="i-1", **{PART: "vcpu"}), s(192, instance_id="i-1", **{PART: "vcpus"}),
                 s(0.012, instance_id="i-1", **{PART: "p99"})],
        "executions": [s(9.5, instance_id="i-1", status_type="completed"),
                       s(0.25, instance_id="i-1", status_type="timed_out"),
                       s(0.25, instance_id="i-1", status_type="completed_with_err")],
        "ecc": [s(1, instance_id="i-1", event_type="mem_ecc_corrected"),
                s(0, instance_id="i-1", event_type="sram_ecc_corrected"),
                s(0, instance_id="i-1", event_type="mem_ecc_uncorrected"),
                s(0, instance_id="i-1", event_type="mem_ecc_repairable_uncorrected")],
    })
    r = rows["i-1"]
    assert (r.name, r.instance_type, r.zone, r.region) == ("web", "trn2.48xlarge", "us-east-2a", "us-east-2")
    assert (r.devices, r.cores, r.mem_total) == (16, 64, 16 * 103079215104)
    assert (r.util, r.util_max, r.busy, r.idle, r.apps) == (50.0, 90.0, 40, 2, 3)
    assert (r.mem_used, r.vcpu, r.vcpus, r.exec_rate, r.err_rate, r.p99) == (1e9, 25.0, 192, 10, 0.5, 0.012)
    assert (r.ecc_corrected, r.ecc_uncorrected) == (1, 0)
    assert (r.status, r.age, r.note, r.targets) == (UP, 3.0, "", 1)


def test_missing_families_are_blank_not_zero() -> None:
    rows = rows_of({"seen": [s(2, instance_id="i-1", **{PART: "now"})],
                    "info": [s(1, instance_id="i-1", instance_type="inf1.xlarge")],
                    "util": [s(0.1, instance_id="i-1")], "host": [], "ecc": []})
    r = rows["i-1"]
    assert r.util == 10.0
    assert r.cores is None and r.devices is None and r.mem_total is None and r.p99 is None
    assert r.ecc_corrected is None and r.ecc_uncorrected is None and r.exec_rate is None and r.busy is None


def test_a_host_whose_exporter_counts_no_runtime_runs_nothing_as_its_dashboard_says() -> None:
    """neuron-top export's ``neurontop_runtimes`` is 0 on a host with no runtime, where AWS's families have no
    per-runtime series: its row was blank (not reported) for APPS, DEV MEM, BUSY and IDLE, while the ssh row and
    the host's dashboard say 0 ("apps: none", 0B used). The count also stands for runtimes sharing a tag (AWS's
    families keep one series for them); without it (AWS's exporter) the figures stay as the series say."""
    hw = [s(1, instance_id=i, neuron_device_count="1", neuroncore_per_device_count="4") for i in ("i-1", "i-2", "i-3")]
    rows = rows_of({"seen": [s(2, instance_id=i, **{PART: "now"}) for i in ("i-1", "i-2", "i-3")],
                    "hardware": hw, "util": [s(0.03, instance_id="i-2")], "busy": [s(4, instance_id="i-2")],
                    "allocated": [s(4, instance_id="i-2")],
                    "host": [s(0, instance_id="i-1", **{PART: "runtimes"}),
                             s(6e7, instance_id="i-2", **{PART: "mem_used"}), s(1, instance_id="i-2", **{PART: "apps"}),
                             s(4, instance_id="i-2", **{PART: "runtimes"})]})
    none, four, aws = rows["i-1"], rows["i-2"], rows["i-3"]
    assert (none.apps, none.mem_used, none.busy, none.idle, none.util) == (0, 0, 0, 0, None)
    assert (four.apps, four.mem_used, four.busy, four.idle) == (4, 6e7, 4, 0)
    assert (aws.apps, aws.mem_used, aws.busy, aws.idle) == (None, None, None, None)


def test_a_failed_query_blanks_only_its_columns() -> None:
    rows = rows_of({"seen": [s(2, instance_id="i-1", **{PART: "now"})],
                    "host": [s(5e9, instance_id="i-1", **{PART: "mem_used"})],
                    "util": PromError("query", "bad_data: boom", "avg(...)")})
    r = rows["i-1"]
    assert r.mem_used == 5e9 and r.util is None and r.status == UP


def test_without_the_seen_answer_the_status_is_unknown() -> None:
    r = rows_of({"seen": PromError("timeout", "slow"), "host": [s(1, instance_id="i-1", **{PART: "mem_used"})]})["i-1"]
    assert r.status == STALE and "status unknown" in r.note


@pytest.mark.parametrize("gone", [PromError("timeout", "slow", "gone"), []])
def test_a_failing_scrape_is_down_with_why_without_the_gone_answer(gone: object) -> None:
    # up == 0 joined to the host in "seen", but "gone" (slow: kept, or failed this refresh) has no age for it:
    # the row said "no instance_info ... sample seen" and dropped why
    r = rows_of({"seen": [s(1, instance_id="i-1", instance="h1", job="neuron", **{PART: "scrape_down"})],
                 "info": [s(1, instance_id="i-1", instance_type="trn2.48xlarge")], "gone": gone})["i-1"]
    assert r.status == DOWN and r.note.startswith("scrape fails: h1 (neuron): up == 0"), r.note


RULED = QuerySet(rules=True)


def test_with_the_rules_presence_is_read_by_target_and_a_host_whose_targets_all_fail_now_is_down() -> None:
    """With the recording rules, "now" reads their presence series (one a target, ~5 ms at 1,000 hosts against
    ~0.5 s for the raw families), known as of their last evaluation. A target that fails its scrape since then
    (``up == 0``, read raw) must not leave its host shown up for an evaluation interval."""
    seen = "time() - max by (instance_id, instance, job) (instance_id:neuron_presence:max_timestamp)"
    assert f'label_replace({seen}, "{PART}", "now"' in next(q.expr for q in RULED.queries() if q.name == "seen")
    assert "instance_info" not in next(q.expr for q in RULED.queries() if q.name == "seen")
    now = [s(4, instance_id="i-1", instance="h1:9000", job="neuron", **{PART: "now"}),
           s(9, instance_id="i-1", instance="h1:9100", job="node", **{PART: "now"}),
           s(5, instance_id="i-2", instance="h2:9000", job="neuron", **{PART: "now"})]
    rows = rows_of({"seen": [*now, s(1, instance_id="i-2", instance="h2:9000", job="neuron",
                                    **{PART: "scrape_down"})], "gone": [s(20, instance_id="i-2")]}, RULED)
    assert rows["i-1"].status == UP and rows["i-1"].age == 4.0  # the newest of its targets
    # a target whose age is not a number (NaN) leaves the others' age as it is, in either order
    for nan_first in (True, False):
        odd = s("NaN", instance_id="i-1", instance="h1:9200", job="other", **{PART: "now"})
        seen = [odd, *now] if nan_first else [*now, odd]
        assert rows_of({"seen": seen}, RULED)["i-1"].age == 4.0
    assert rows["i-2"].status == DOWN and rows["i-2"].note.startswith("scrape fails: h2:9000 (neuron)")
    assert rows["i-2"].scraped == 20.0
    # one of two targets failing: still seen (its other target is scraped), the failure said
    one = rows_of({"seen": [*now, s(1, instance_id="i-1", instance="h1:9100", job="node", **{PART: "scrape_down"})]},
                  RULED)["i-1"]
    assert one.status == UP and one.note.startswith("scrape fails: h1:9100 (node)")


def test_colliding_labels_are_noted_and_the_majority_shown() -> None:
    rows = rows_of({"info": [s(1, instance_id="i-1", instance_type="trn1.32xlarge"),
                             s(2, instance_id="i-1", instance_type="trn2.48xlarge")]})
    r = rows["i-1"]
    assert r.instance_type == "trn2.48xlarge" and r.targets == 3
    assert "labels collide: instance_type 'trn2.48xlarge'/'trn1.32xlarge'" in r.note
    assert "3 scrape targets report this host" in r.note


def test_a_host_scraped_twice_is_said() -> None:
    r = rows_of({"info": [s(2, instance_id="i-1", instance_type="trn2.48xlarge")]})["i-1"]
    assert r.targets == 2 and "2 scrape targets" in r.note


def test_a_host_scraped_by_two_jobs_counts_its_cores_once() -> None:
    """A trn2 host with 54 busy cores and 6 idle, scraped by two jobs. The core counts come from the per-core
    ``max by``, which merged the two copies already; plain sums came twice. It showed 27/3."""
    r = rows_of({"info": [s(2, instance_id="i-1", instance_type="trn2.48xlarge")],
                 "busy": [s(54, instance_id="i-1")], "allocated": [s(60, instance_id="i-1")],
                 "ecc": [s(1, instance_id="i-1", event_type="mem_ecc_uncorrected")],
                 "host": [s(2e9, instance_id="i-1", **{PART: "mem_used"}), s(6, instance_id="i-1", **{PART: "apps"})]
                 })["i-1"]
    assert (r.busy, r.idle, r.ecc_uncorrected) == (54, 6, 1)
    assert (r.mem_used, r.apps) == (1e9, 3)  # sums of every series: divided by the copies


def test_series_without_the_by_label_are_one_flagged_row() -> None:
    qs = QuerySet(by="node")
    rows = rows_of({"seen": [s(1, node="n1", **{PART: "now"}), s(1, **{PART: "now"})]}, qs)
    assert set(rows) == {"n1", ""}
    assert "without the node label" in rows[""].note and rows[""].title == "(no label)"


def test_extra_labels_come_from_instance_info() -> None:
    qs = QuerySet(labels=("cluster",))
    r = rows_of({"info": [s(1, instance_id="i-1", cluster="blue")]}, qs)["i-1"]
    assert r.labels == {"cluster": "blue"}


@pytest.mark.parametrize("age, present, want", [
    (5, True, UP), (31, True, STALE), (5, False, STALE), (121, False, DOWN), (121, True, STALE),
    (None, True, STALE), (None, False, DOWN)])
def test_status_for(age: float | None, present: bool, want: str) -> None:
    assert status_for(age, present, TH) == want


def test_our_exporter_says_how_old_its_data_is() -> None:
    rows = rows_of({"seen": [s(1, instance_id="i-1", **{PART: "now"}), s(45, instance_id="i-1", **{PART: "report"}),
                             s(1, instance_id="i-1", **{PART: "source_up"}),
                             s(1, instance_id="i-2", **{PART: "now"}), s(2, instance_id="i-2", **{PART: "report"}),
                             s(0, instance_id="i-2", **{PART: "source_up"})]})
    hung, stopped = rows["i-1"], rows["i-2"]
    assert (hung.status, hung.age) == (STALE, 45.0)  # scraped every second, but its last report is 45 s old
    assert stopped.status == STALE and "neurontop_source_up 0" in stopped.note


def test_rows_age_while_no_answer_comes() -> None:
    r = rows_of({"seen": [s(10, instance_id="i-1", **{PART: "now"})]})["i-1"]
    [later] = with_status([r], TH, 25.0)
    assert (later.age, later.status) == (35.0, STALE)
    [much_later] = with_status([r], TH, 200.0)
    assert much_later.status == DOWN


# --- rows from snapshots ------------------------------------------------------------------------------------------


def test_snapshot_row_uses_the_one_per_core_rule() -> None:
    snap = demo_snapshots("trn2.48xlarge", 3, 20)[-1]
    per_core = {i: u for i, u in snap.all.core_stats.util.items() if u is not None}
    r = from_snapshot("host-a", snap)
    assert r.util == pytest.approx(sum(per_core.values()) / len(per_core))
    assert r.util_max == max(per_core.values())
    assert r.instance_type == "trn2.48xlarge" and r.devices == 16 and r.cores == 64
    assert r.apps == len(snap.apps) and r.vcpus == 192
    assert r.mem_total == 16 * snap.hardware.neuron_device_memory_size


def test_a_report_without_per_core_memory_does_not_say_which_cores_are_idle() -> None:
    """A real inf2 report trimmed to the memory totals (no usage_breakdown): which cores hold a model is not
    reported, so IDLE is blank, as from Prometheus (no neuroncore_memory_usage_* series); it was 0."""
    snap = snapshot_from((REPORTS / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json").read_bytes(), 0.0)
    r = from_snapshot("h", snap)
    assert (r.busy, r.idle, r.apps) == (1, None, 1) and r.mem_used == 141649980
    full = from_snapshot("h", demo_snapshots("inf2.48xlarge", 3, 2)[-1])
    assert full.idle is not None


def test_ecc_totals_keep_every_event_since_the_stream_started() -> None:
    """As ``hardware_ecc_events_total`` does (what the alert and the Prometheus mode read): an uncorrected event
    stays on the row; it used to leave it after a 15-minute window while the alert kept firing."""
    snaps = demo_snapshots("inf2.48xlarge", 5, 45)  # events: 1 corrected at report 6, 1 uncorrected at 38
    w = EccTotals()
    seen = [w.add(sn) for sn in snaps]
    assert seen[5] == (0.0, 0.0) and seen[6] == seen[37] == (1.0, 0.0)
    assert seen[38] == seen[44] == (1.0, 1.0)

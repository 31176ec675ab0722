"""The fleet's apps view in the core (fleet/apps.py): one row per runtime tag across hosts from the hosts' own
reports (the ssh mode), its text table, and a hostile tag shown literally."""

from __future__ import annotations

import json

import pytest

from neuron_top.fleet.apps import AppRow, apps_from_snapshots, apps_table, host_filter
from neuron_top.fleet.sessions import SessionFleet
from neuron_top.fleet.table import compile_filter
from neuron_top.snapshot import snapshot_from
from tests.conftest import REPORTS
from tests.helpers import demo_snapshots


def test_apps_across_hosts_from_their_reports() -> None:
    """AWS's real 4-runtime inf1 report on two hosts: its runtimes all carry tag "1" (the fixture's), each holding
    one core at 2.5-3%: one app on 2 hosts and 8 cores, its executions the sum over both."""
    snap = snapshot_from((REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").read_bytes(), 0.0)
    [app] = apps_from_snapshots({"h1": snap, "h2": snap, "down": None})
    assert (app.tag, app.hosts, app.cores) == ("1", ["h1", "h2"], 8)
    per_host = sum(sum(a.exec_summary.values()) / a.period for a in snap.apps)  # type: ignore[operator]
    assert app.exec_rate == pytest.approx(per_host * 2) and app.err_rate == 0.0
    assert app.util is not None and 2.4 < app.util < 3.1
    assert app.p99 is not None and app.p99 < 0.1


def test_a_runtime_without_a_tag_is_no_tag_from_prometheus_too() -> None:
    """The real inf2 report's runtime has no tag; the exporters write it runtime_tag="None" (AWS's str(None)).
    The apps view from Prometheus listed an app "None" (over ssh: "(no tag)"), and the host's dashboard from
    its series an app tagged "None"."""
    from neuron_top.fleet.apps import apps_from_answer
    from neuron_top.fleet.host_source import report_from_series
    from neuron_top.fleet.promql import Sample
    from neuron_top.fleet.queries import PART, QuerySet

    snap = snapshot_from((REPORTS / "inf2_xlarge_rt2.30.51_trimmed_pantheon.json").read_bytes(), 0.0)
    [direct] = apps_from_snapshots({"i-1": snap})
    answer = [Sample({PART: "hosts", "runtime_tag": "None", "instance_id": "i-1"}, (0.0, "1")),
              Sample({PART: "cores", "runtime_tag": "None"}, (0.0, "1"))]
    [app] = apps_from_answer(QuerySet(), answer)
    assert app.tag == direct.tag == "" and apps_table([app])[1].startswith("(no tag)")
    gauge = Sample({"__name__": "neuroncore_utilization_ratio", "runtime_tag": "None", "neuroncore": "0"},
                   (0.0, "0.5"))
    [runtime] = report_from_series([gauge], [], period=1.0, window=60.0)["neuron_runtime_data"]
    assert runtime["neuron_runtime_tag"] is None


def test_a_long_tag_is_cut_with_its_ellipsis_in_the_text_table() -> None:
    """It was cut silently to 24 characters: "llama-3-70b-finetune-run" of "llama-3-70b-finetune-run-2"."""
    lines = apps_table([AppRow(tag="llama-3-70b-finetune-run-2", hosts=["i-1"]),
                        AppRow(tag="llama-3-70b-finetune-run", hosts=["i-2"])])
    assert lines[1].startswith("llama-3-70b-finetune-ru… ") and lines[2].startswith("llama-3-70b-finetune-run ")


def test_session_fleet_frames_carry_the_apps() -> None:
    from neuron_top.feed import Report, StatusChanged
    from neuron_top.sources.base import State, Status

    fleet = SessionFleet(["a", "b"])
    for h, seed in (("a", 3), ("b", 4)):
        fleet.apply(h, StatusChanged(Status(State.LIVE, "x")))
        fleet.apply(h, Report(demo_snapshots("trn2.48xlarge", seed, 2)[-1], b""))
    apps = fleet.frame().apps
    assert apps and all(a.hosts == ["a", "b"] for a in apps[:3])
    assert [a.cores for a in apps] == sorted((a.cores for a in apps), reverse=True)


def test_table_says_not_reported_and_shows_tags_literally() -> None:
    hostile = AppRow(tag="[red]x\x1b[2J", hosts=["h"], cores=None, util=None)
    lines = apps_table([hostile, AppRow(tag="ok", hosts=["h", "i"], cores=2, util=50.0, exec_rate=3.0,
                                        err_rate=0.0, p99=0.012)])
    assert lines[0].split() == ["APP", "HOSTS", "CORES", "UTIL", "EXEC/s", "BAD/s", "P99"]
    assert "\x1b" not in "\n".join(lines) and lines[1].startswith("[red]x")
    assert lines[1].split()[2:7] == ["-", "-", "-", "-", "-"]
    assert lines[2].split()[:7] == ["ok", "2", "2", "50.0%", "3.0", "0.0", "12.0ms"]
    assert apps_table([])[-1].strip() == "(no runtimes reported)"


def test_enter_filter_matches_exactly_the_apps_hosts() -> None:
    pattern = compile_filter(host_filter(AppRow(tag="x", hosts=["i-1", "i-1.2"])))
    assert pattern is not None
    assert pattern.search("i-1\nname") and pattern.search("i-1.2\nx")
    assert not pattern.search("i-12\nname") and not pattern.search("zz\ni-1")
    json.dumps(host_filter(AppRow(tag="y")))

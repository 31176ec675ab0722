"""The Prometheus fleet against a real Prometheus (Debian's) on a loopback port, scraping expositions in AWS's
format: demo hosts of four instance types, AWS's own real scrapes, hosts whose labels collide, a host that goes
away, a server that goes down, a query that fails. One server for the module; each test picks its hosts with a
target label (``--match 'group="..."'``), as a user picks a cluster."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_top.cli.main import main as cli_main
from neuron_top.feed import Feed, Report
from neuron_top.fleet.host_source import PromHostSource
from neuron_top.fleet.prom import PromFleet
from neuron_top.fleet.promql import PromClient
from neuron_top.fleet.queries import SLOW_EVERY, QuerySet, parse_match
from neuron_top.fleet.rows import DOWN, STALE, UP, FleetRow, Thresholds, from_snapshot
from neuron_top.snapshot import snapshot_from
from neuron_top.sources.demo import generate
from tests.conftest import REPORTS, ROOT
from tests.e2e.test_prometheus import RULES
from tests.fleet_support import PROMETHEUS, ExpositionServer, HostExporter, Prometheus, free_port, targets_on

pytestmark = [pytest.mark.prometheus,
              pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed")]

FIXTURES = ROOT / "tests" / "fixtures" / "prometheus"
DEMO8 = [(inst, seed) for inst in ("trn2.48xlarge", "trn1.32xlarge", "inf2.48xlarge", "inf1.xlarge")
         for seed in (11, 12)]


def demo_report(instance: str, seed: int) -> dict:
    return json.loads(generate(instance, seed, 1)[0])


def _ecc_first(report: dict) -> Iterator[dict]:
    """``report`` with one uncorrected DRAM event on device 2 in its first period, none after."""
    first = json.loads(json.dumps(report))
    for dev in first["system_data"]["neuron_hw_counters"]["neuron_devices"]:
        dev.update({k: 0 for k in dev if k != "neuron_device_index"})
        if dev["neuron_device_index"] == 2:
            dev["mem_ecc_uncorrected"] = 1
    quiet = json.loads(json.dumps(first))
    quiet["system_data"]["neuron_hw_counters"]["neuron_devices"][2]["mem_ecc_uncorrected"] = 0
    yield first
    while True:
        yield quiet


class _AwsSlowThenStopped:
    """AWS's ``neuron-monitor-prometheus.py`` (rebuilt): each scrape one report of the real 4-runtime inf1 node at
    p99 0.8 s; once ``stopped`` is set, reports with nothing executed and a null latency (its gauge stays 0.8)."""

    def __init__(self, report: dict, stopped: threading.Event) -> None:
        from tests.export_reference import NaiveExporter

        self.naive = NaiveExporter()
        self.slow = json.loads(json.dumps(report))
        self.idle = json.loads(json.dumps(report))
        for rt in self.slow["neuron_runtime_data"]:
            rt["report"]["execution_stats"]["latency_stats"]["total_latency"]["p99"] = 0.8
        for rt in self.idle["neuron_runtime_data"]:
            st = rt["report"]["execution_stats"]
            st["latency_stats"] = {"total_latency": None, "device_latency": None}
            st["execution_summary"] = dict.fromkeys(st["execution_summary"], 0)
        self.stopped = stopped
        self.lock = threading.Lock()

    def __call__(self) -> str:
        from prometheus_client import generate_latest

        with self.lock:
            doc = self.idle if self.stopped.is_set() else self.slow
            self.naive.apply(snapshot_from(json.dumps(doc).encode(), time.time()).report)
            return generate_latest(self.naive.registry).decode()


class Cluster:
    def __init__(self) -> None:
        self.server = ExpositionServer()
        self.demo: dict[str, dict] = {}
        for inst, seed in DEMO8:
            name = f"{inst}-{seed}"
            self.demo[name] = demo_report(inst, seed)
            self.server.add(name, HostExporter(self.demo[name]))
        for f in ("inf1_xlarge_4runtimes_datadog.txt", "trn1n_32xlarge_trimmed_otel_awscontainerinsight.txt"):
            text = (FIXTURES / f).read_text()
            self.server.add(f, lambda text=text: text)
        twin = demo_report("trn2.48xlarge", 21)
        self.twin_id = twin["instance_info"]["instance_id"]
        self.twin = twin
        self.server.add("twin-a", HostExporter(twin))
        self.server.add("twin-b", HostExporter(twin, instance_type="trn1.32xlarge"))  # same id, another type
        self.dup = demo_report("inf2.48xlarge", 22)
        self.server.add("dup", HostExporter(self.dup))
        self.server.add("dup-again", HostExporter(self.dup))  # the same host scraped by two jobs
        self.going = demo_report("inf1.xlarge", 23)
        self.server.add("going", HostExporter(self.going))
        self.server.add("stay", HostExporter(demo_report("inf1.xlarge", 24)))
        self.ended = demo_report("trn1.32xlarge", 25)
        self.ended_exporter = HostExporter(self.ended)
        self.server.add("ended", self.ended_exporter)
        # an uncorrected ECC event in the report before Prometheus's first scrape: the counter starts at 1
        self.ecc_old = demo_report("inf2.48xlarge", 26)
        self.server.add("ecc-old", HostExporter(_ecc_first(self.ecc_old)))
        # AWS's exporter (rebuilt), a runtime at p99 0.8 s that stops executing when ``stopped`` is set
        self.slow = json.loads((REPORTS / "inf1_xlarge_4runtimes_vcpu_errors.json").read_text())
        self.stopped = threading.Event()
        self.server.add("slow", _AwsSlowThenStopped(self.slow, self.stopped))
        # real reports: no runtime (two machines), four runtimes sharing the tag "1", memory totals without per core
        self.norun = {f: json.loads((REPORTS / f).read_text()) for f in (
            "inf1_xlarge_idle_no_runtimes.json", "trn1_2xlarge_first_record_no_runtime_allsmi.json",
            "inf1_xlarge_4runtimes_vcpu_errors.json", "inf2_xlarge_rt2.30.51_trimmed_pantheon.json")}
        for f, rep in self.norun.items():
            self.server.add(f, HostExporter(rep))
        self.server.start()
        targets = {**targets_on(self.server, [f"{i}-{s}" for i, s in DEMO8], group="demo8"),
                   **targets_on(self.server, ["inf1_xlarge_4runtimes_datadog.txt",
                                              "trn1n_32xlarge_trimmed_otel_awscontainerinsight.txt"], group="aws"),
                   **targets_on(self.server, ["twin-a", "twin-b", "dup", "dup-again"], group="collide"),
                   **targets_on(self.server, ["going", "stay"], group="vanish"),
                   **targets_on(self.server, ["ended"], group="ended"),
                   **targets_on(self.server, ["ecc-old"], group="eccold"),
                   **targets_on(self.server, ["slow"], group="slow"),
                   **targets_on(self.server, list(self.norun), group="norun")}
        self.prom = Prometheus(targets)
        self.prom.wait_ready()
        # every target scraped at least three times: rate() and increase() need two samples in their window
        self.prom.wait_for("min(count_over_time(up[1m]))", lambda r: bool(r) and float(r[0]["value"][1]) >= 3)

    def fleet(self, group: str, **kw) -> PromFleet:  # type: ignore[no-untyped-def]
        qs = QuerySet(match=parse_match(f'group="{group}"'), **kw.pop("qs", {}))
        return PromFleet(PromClient(self.prom.url, timeout=5), qs, **kw)

    def stop(self) -> None:
        self.prom.stop()
        self.server.stop()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster()
    yield c
    c.stop()


def rows_of(fleet: PromFleet) -> dict[str, FleetRow]:
    frame = fleet.refresh()
    assert frame.state == "ok", frame.problems
    return {r.key: r for r in frame.rows}


def one_refresh(cluster: Cluster, group: str) -> dict[str, FleetRow]:
    """One refresh of the hosts of ``group``, their rows by key."""
    fleet = cluster.fleet(group)
    try:
        return rows_of(fleet)
    finally:
        fleet.close()


def once_avg(instance: str, seed: int) -> float:
    """The "NeuronCores (all): avg N%" of ``neuron-top demo --once`` for that demo (the real command)."""
    out = subprocess.run([sys.executable, "-m", "neuron_top", "demo", "--instance", instance, "--seed", str(seed),
                          "--once"], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60).stdout
    return float(re.search(r"NeuronCores \(all\):.*?avg ([0-9.]+)%", out)[1])  # type: ignore[index]


def test_eight_demo_hosts_with_their_ids_and_the_demos_own_utilization(cluster: Cluster) -> None:
    rows = one_refresh(cluster, "demo8")
    want = {rep["instance_info"]["instance_id"]: name for name, rep in cluster.demo.items()}
    assert set(rows) == set(want)
    for iid, name in want.items():
        inst, seed = name.rsplit("-", 1)
        r = rows[iid]
        assert r.status == UP and r.instance_type == inst
        assert r.util is not None and abs(r.util - once_avg(inst, int(seed))) <= 2.0, name


def test_prometheus_and_ssh_rows_agree_for_the_same_report(cluster: Cluster) -> None:
    """The same report read back from Prometheus and taken straight from the stream gives the same row."""
    rows = one_refresh(cluster, "demo8")
    for name, rep in cluster.demo.items():
        direct = from_snapshot(name, snapshot_from(json.dumps(rep).encode(), 0.0))
        r = rows[rep["instance_info"]["instance_id"]]
        for f in ("util", "util_max"):
            assert getattr(r, f) == pytest.approx(getattr(direct, f), abs=0.01), (name, f)
        assert r.vcpu == pytest.approx(direct.vcpu, abs=0.1)  # 100 - idle vs the exporter's sum of the rest
        for f in ("devices", "cores", "busy", "idle", "apps", "mem_used", "mem_total", "p99"):
            assert getattr(r, f) == getattr(direct, f), (name, f)
        assert r.exec_rate is not None and r.exec_rate > 0  # counters grow by the report's counts each scrape


def test_aws_real_scrapes(cluster: Cluster) -> None:
    rows = one_refresh(cluster, "aws")
    inf1, trn1n = rows["i-022af70542e30e040"], rows["i-09db9b55e0095612f"]
    # inf1: 4 runtimes each reporting all 4 cores; per core the runtimes' shares added up (the summed share,
    # derived.core_utilization), then the average
    per_core: dict[str, float] = {}
    for line in (FIXTURES / "inf1_xlarge_4runtimes_datadog.txt").read_text().splitlines():
        if line.startswith("neuroncore_utilization_ratio{"):
            core = re.search(r'neuroncore="(\d+)"', line)[1]  # type: ignore[index]
            per_core[core] = min(per_core.get(core, 0.0) + float(line.rsplit(" ", 1)[1]), 1.0)
    assert inf1.util == pytest.approx(100 * sum(per_core.values()) / 4)
    assert (inf1.instance_type, inf1.zone, inf1.devices, inf1.cores, inf1.apps) == (
        "inf1.xlarge", "eu-north-1a", 1, 4, 4)
    assert inf1.mem_total == 8589934592 and inf1.vcpus == 4
    assert (inf1.ecc_corrected, inf1.ecc_uncorrected) == (0, 0)
    # a fixed scrape: its execution counters never grow, nothing runs, so its frozen p99 is not today's latency
    assert inf1.p99 is None
    # the trimmed trn1n scrape has no hardware info, no latency and no ECC: blank, not zero
    assert trn1n.instance_type == "trn1n.32xlarge" and trn1n.util == pytest.approx(10.0)
    assert trn1n.devices is None and trn1n.mem_total is None and trn1n.cores is None
    assert trn1n.p99 is None and trn1n.ecc_corrected is None and trn1n.ecc_uncorrected is None
    assert trn1n.vcpus == 128


def test_colliding_labels_and_duplicate_targets(cluster: Cluster) -> None:
    rows = one_refresh(cluster, "collide")
    twin = rows[cluster.twin_id]
    assert "labels collide: instance_type" in twin.note and twin.targets == 2
    dup = rows[cluster.dup["instance_info"]["instance_id"]]
    direct = from_snapshot("dup", snapshot_from(json.dumps(cluster.dup).encode(), 0.0))
    assert dup.targets == 2 and "2 scrape targets" in dup.note
    assert dup.mem_used == direct.mem_used and dup.apps == direct.apps  # counted once, not twice
    # the core counts were divided by the two targets a second time (27/3 for 54/6)
    assert (dup.busy, dup.idle) == (direct.busy, direct.idle) and dup.busy
    assert (dup.ecc_corrected, dup.ecc_uncorrected) == (0, 0)


def _rule_expr(alert: str) -> str:
    """The ``expr`` of one alert of deploy/prometheus/neuron-top.rules.yml (a one-line or ``|`` block)."""
    lines = RULES.read_text().splitlines()
    i = lines.index(f"      - alert: {alert}")
    j = next(k for k in range(i, len(lines)) if lines[k].strip().startswith("expr:"))
    first = lines[j].split("expr:", 1)[1].strip()
    if first != "|":
        return first
    body = []
    for line in lines[j + 1:]:
        if not line.startswith("          "):
            break
        body.append(line.strip())
    return " ".join(body)


def test_an_ecc_event_older_than_the_first_scrape_agrees_in_row_drilldown_and_alert(cluster: Cluster) -> None:
    """The exporter counted an uncorrected event before Prometheus first scraped it: the counter is 1 from its first
    sample, its increase 0. The fleet row said 0/0 and the drill-down "0 uncorrected" while the alert fired."""
    iid = cluster.ecc_old["instance_info"]["instance_id"]
    row = one_refresh(cluster, "eccold")[iid]
    alerts = [a for a in cluster.prom.query(_rule_expr("NeuronUncorrectedECC"))
              if a["metric"].get("instance_id") == iid]
    assert [(a["metric"]["neuron_device_index"], a["value"][1]) for a in alerts] == [("2", "1")]
    assert row.ecc_uncorrected == 1
    client = PromClient(cluster.prom.url)
    source = PromHostSource(client, QuerySet(match='group="eccold"'), iid, interval=0.2)
    feed = Feed(source)
    snaps = []
    try:
        for ev in feed.events():
            if isinstance(ev, Report):
                snaps.append(ev.snapshot)
                if len(snaps) == 3:
                    break
    finally:
        feed.close()
        client.close()
    # the dashboard adds each report's counts up: the counter's value once, then what it grew by
    per_report = [{e.device: e.uncorrected for e in sn.ecc if e.uncorrected} for sn in snaps]
    assert per_report == [{2: 1}, {}, {}]


def test_a_runtime_that_stopped_executing_has_no_p99_on_aws_exporter(cluster: Cluster) -> None:
    """AWS's exporter keeps the last p99 (0.8 s) when the runtime stops; the row showed that stale 800 ms."""
    fleet = cluster.fleet("slow", qs={"rate_window": "4s"})
    iid = cluster.slow["instance_info"]["instance_id"]
    try:
        cluster.prom.wait_for('increase(execution_status_total{group="slow"}[4s]) > 0', bool)
        assert rows_of(fleet)[iid].p99 == 0.8
        cluster.stopped.set()
        deadline = time.monotonic() + 30
        row = rows_of(fleet)[iid]
        while row.p99 is not None and time.monotonic() < deadline:
            time.sleep(0.5)
            row = rows_of(fleet)[iid]
    finally:
        fleet.close()
    assert row.p99 is None and row.status == UP
    frozen = cluster.prom.query('execution_latency_seconds{group="slow",percentile="p99"}')
    assert frozen and all(x["value"][1] == "0.8" for x in frozen)  # still there, frozen, in Prometheus


def test_hosts_with_no_runtime_or_runtimes_sharing_a_tag_agree_with_their_own_reports(cluster: Cluster) -> None:
    """A host with no runtime was blank for APPS, DEV MEM, BUSY and IDLE (not reported) while its dashboard and
    its ssh row say 0; four runtimes tagged "1" were one app at a quarter of their utilization (AWS's families
    keep one series per tag; the recording rule: neuron-top.recording.test.yml)."""
    rows = one_refresh(cluster, "norun")
    for f, rep in cluster.norun.items():
        direct = from_snapshot(f, snapshot_from(json.dumps(rep).encode(), 0.0))
        r = rows[rep["instance_info"]["instance_id"]]
        assert (r.apps, r.busy, r.idle) == (direct.apps, direct.busy, direct.idle), f  # pantheon: no per-core memory
        for field in ("util", "util_max"):  # the 4 runtimes tagged "1": 0.6% / 2.5% (the last one's share) before
            assert getattr(r, field) == pytest.approx(getattr(direct, field), abs=1e-6), (f, field)
        if not rep["neuron_runtime_data"]:
            assert (r.apps, r.busy, r.idle, r.mem_used) == (direct.apps, direct.busy, direct.idle, direct.mem_used) \
                == (0, 0, 0, 0), f
    assert [r.apps for r in rows.values()].count(4) == 1


def test_queries_per_refresh_do_not_depend_on_the_host_count(cluster: Cluster) -> None:
    counts = {}
    for group in ("vanish", "aws", "demo8"):
        fleet = cluster.fleet(group, background=False)  # each refresh waits for the slow ones it asks: countable
        try:
            sent = []
            for _ in range(SLOW_EVERY + 1):  # a full refresh, the fast ones between, the next full one
                before = fleet.client.requests
                frame = fleet.refresh()
                sent.append((fleet.client.requests - before, frame.queries))
            counts[group] = (len(frame.rows), sent)
        finally:
            fleet.close()
    assert [c[0] for c in counts.values()] == [2, 2, 8]
    sent = [c[1] for c in counts.values()]
    assert sent[0] == sent[1] == sent[2], counts  # the same queries, refresh by refresh, for 2 hosts or 8
    # the first refresh: the 11 and the probe for the recording rules
    assert sent[0][0] == (12, 12) and all(3 <= n <= 5 and n == q for n, q in sent[0][1:])


def test_a_host_that_goes_away_turns_stale_then_down(cluster: Cluster) -> None:
    fleet = cluster.fleet("vanish", thresholds=Thresholds(stale_after=30, down_after=4))
    going = cluster.going["instance_info"]["instance_id"]
    try:
        assert rows_of(fleet)[going].status == UP
        cluster.server.failing.add("going")
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and DOWN not in seen:
            r = rows_of(fleet)
            seen.append(r[going].status)
            assert all(x.status == UP for k, x in r.items() if k != going)
            # its series went stale in Prometheus; the row keeps what it last said
            assert r[going].instance_type == "inf1.xlarge" and r[going].util is not None
            time.sleep(0.5)
    finally:
        cluster.server.failing.discard("going")
        fleet.close()
    # stale while its series are gone, down after down_after; or down at once, when Prometheus's up == 0 for its
    # target is seen first (test_a_dead_exporter_is_down_from_up_0_with_the_scrape_error)
    assert seen[-1] == DOWN and set(seen[:seen.index(DOWN)]) <= {UP, STALE}


def test_a_dead_exporter_is_down_from_up_0_with_the_scrape_error(cluster: Cluster) -> None:
    """Prometheus knows at its next scrape that the exporter is gone (``up == 0``) and why: the row was "stale"
    for ``down_after`` (3 minutes) first."""
    fleet = cluster.fleet("vanish")  # default thresholds: stale after 60 s, down after 180 s
    going = cluster.going["instance_info"]["instance_id"]
    try:
        deadline = time.monotonic() + 20  # (a test before this one stopped it for a while)
        while rows_of(fleet)[going].status != UP and time.monotonic() < deadline:
            time.sleep(0.5)
        assert rows_of(fleet)[going].status == UP
        cluster.server.failing.add("going")
        seen = []
        deadline = time.monotonic() + 20
        row = rows_of(fleet)[going]
        while row.status != DOWN and time.monotonic() < deadline:
            seen.append(row.status)
            time.sleep(0.5)
            row = rows_of(fleet)[going]
        others = [r.status for k, r in rows_of(fleet).items() if k != going]
    finally:
        cluster.server.failing.discard("going")
        fleet.close()
    assert row.status == DOWN, (seen, row)
    assert "scrape fails" in row.note and "503" in row.note, row.note  # Prometheus's lastError
    assert row.instance_type == "inf1.xlarge" and others == [UP]


def test_an_exporter_whose_neuron_monitor_stopped_is_stale(cluster: Cluster) -> None:
    """neuron-top export keeps answering when its source ends (neurontop_source_up 0): the row says so."""
    fleet = cluster.fleet("ended")
    iid = cluster.ended["instance_info"]["instance_id"]
    try:
        assert rows_of(fleet)[iid].status == UP
        cluster.ended_exporter.end()
        deadline = time.monotonic() + 15
        row = rows_of(fleet)[iid]
        while row.status == UP and time.monotonic() < deadline:
            time.sleep(0.5)
            row = rows_of(fleet)[iid]
    finally:
        fleet.close()
    assert row.status == STALE and "neurontop_source_up 0" in row.note
    assert row.util is not None  # still scraped: its last values are there


def test_a_failing_query_is_shown_with_its_text_and_blanks_its_columns(cluster: Cluster) -> None:
    # the tests before stopped "going" for a while: wait until its figures are back in every query. Its first
    # scrape after that can fall between two of a refresh's queries (each is evaluated when it arrives), up in
    # one and not yet in the other (CI saw a row up without util)
    settle = cluster.fleet("vanish")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
                r.status == UP and r.util is not None for r in rows_of(settle).values()):
            time.sleep(0.5)
    finally:
        settle.close()
    fleet = cluster.fleet("vanish", qs={"ecc_window": "15x"})  # not a duration: Prometheus refuses the query
    try:
        frame = fleet.refresh()
    finally:
        fleet.close()
    assert frame.state == "partial"
    [problem] = frame.problems
    assert problem.name == "ecc" and "bad_data" in problem.message and "[15x]" in problem.query
    assert frame.rows and all(r.ecc_corrected is None for r in frame.rows)
    up = [r for r in frame.rows if r.status == UP]
    assert up and all(r.util is not None and r.mem_used is not None for r in up)


def test_a_host_dashboard_from_its_series(cluster: Cluster) -> None:
    rep = cluster.demo["trn2.48xlarge-11"]
    iid = rep["instance_info"]["instance_id"]
    client = PromClient(cluster.prom.url)
    source = PromHostSource(client, QuerySet(match='group="demo8"'), iid, interval=0.2)
    feed = Feed(source)
    try:
        snap = next(ev.snapshot for ev in feed.events() if isinstance(ev, Report))
    finally:
        feed.close()
        client.close()
    direct = snapshot_from(json.dumps(rep).encode(), 0.0)
    assert snap.instance.instance_id == iid and snap.device_count == 16 and snap.core_count == 64
    assert sorted(a.tag for a in snap.apps) == sorted(a.tag for a in direct.apps)
    got, want = from_snapshot("x", snap), from_snapshot("x", direct)
    assert got.util == pytest.approx(want.util, abs=0.01) and got.mem_used == want.mem_used
    assert got.p99 == want.p99 and got.idle == want.idle
    # device latency is published by neuron-top export (neurontop_execution_device_latency_seconds): reported,
    # not "idle" as when the drill-down left it out
    ran = [a for a in direct.apps if a.latency("device") is not None and sum(a.exec_summary.values())]
    assert ran
    by_tag = {a.tag: a for a in snap.apps}
    for a in ran:
        assert by_tag[a.tag].latency("device") == pytest.approx(a.latency("device")), a.tag
    assert snap.host_memory is not None and snap.host_memory.memory_total_bytes == (
        rep["system_data"]["memory_info"]["memory_total_bytes"])


def test_a_host_dashboard_says_when_runtimes_share_a_tag(cluster: Cluster) -> None:
    """The real inf1 report's four runtimes are all tagged "1": its dashboard from Prometheus can only show one
    app (AWS's families keep one series a tag) while the fleet's row counts 4 at their summed utilization; the
    header said nothing of it."""
    from neuron_top.feed import StatusChanged

    def live_message(name: str) -> str:
        iid = cluster.norun[name]["instance_info"]["instance_id"]
        client = PromClient(cluster.prom.url)
        feed = Feed(PromHostSource(client, QuerySet(match='group="norun"'), iid, interval=0.2))
        try:
            return next(ev.status.message for ev in feed.events()
                        if isinstance(ev, StatusChanged) and ev.status.state.name == "LIVE")
        finally:
            feed.close()
            client.close()

    shared = live_message("inf1_xlarge_4runtimes_vcpu_errors.json")
    assert shared == f"{cluster.prom.url} · 4 runtimes, 1 tag: AWS's series show one a tag"
    assert live_message("inf2_xlarge_rt2.30.51_trimmed_pantheon.json") == cluster.prom.url


def test_prometheus_down_keeps_the_last_rows_aging_and_backs_off(tmp_path: Path) -> None:
    server = ExpositionServer()
    rep = demo_report("inf2.48xlarge", 31)
    server.add("h", HostExporter(rep))
    server.start()
    prom = Prometheus(targets_on(server))
    try:
        prom.wait_ready()
        prom.wait_for("count(instance_info)", lambda r: bool(r))
        fleet = PromFleet(PromClient(prom.url, timeout=2), QuerySet(), thresholds=Thresholds(5, 60))
        first = fleet.refresh()
        assert first.state == "ok" and first.rows[0].status == UP
        prom.stop(keep_data=True)
        down = [fleet.refresh() for _ in range(3)]
        assert all(f.state == "unreachable" for f in down)
        assert [f.retry_in for f in down] == [2.0, 4.0, 8.0]
        assert "connection refused" in down[0].problems[0].message
        kept = down[-1].rows[0]
        assert kept.key == first.rows[0].key and kept.util == first.rows[0].util  # the last data stays
        assert kept.status == STALE and kept.age is not None and kept.age >= first.rows[0].age
        again = Prometheus(targets_on(server), port=prom.port, data=prom.data)
        try:
            again.wait_ready()
            again.wait_for("count(instance_info)", lambda r: bool(r))
            back = fleet.refresh()
            assert back.state == "ok" and back.retry_in is None and fleet.backoff.failures == 0
        finally:
            again.stop()
        fleet.close()
    finally:
        prom.stop()
        server.stop()


def test_a_server_that_never_answers_times_out_as_unreachable() -> None:
    with socket.socket() as listener:  # accepts connections (the backlog) and never answers
        port = free_port()
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        fleet = PromFleet(PromClient(f"http://127.0.0.1:{port}", timeout=0.5), QuerySet())
        t0 = time.monotonic()
        frame = fleet.refresh()
        took = time.monotonic() - t0
        fleet.close()
    assert frame.state == "unreachable" and frame.retry_in == 2.0
    assert "no answer within 0.5 s" in frame.problems[0].message and frame.queries == 1
    assert took < 1.5  # the first query's timeout says it: not 11 more waits of 0.5 s, 4 at a time


def test_fleet_once_cli(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["fleet", "--prometheus", cluster.prom.url, "--match", 'group="aws"', "--once",
                     "--width", "200", "--sort", "util"]) == 0
    out = capsys.readouterr().out
    assert "2 hosts: 2 up, 0 stale, 0 down" in out
    lines = [ln for ln in out.splitlines() if "i-0" in ln]
    utils = [float(re.search(r" ([0-9.]+)% ", ln)[1]) for ln in lines]  # type: ignore[index]
    assert len(utils) == 2 and utils == sorted(utils, reverse=True)  # utilization, highest first
    assert cli_main(["fleet", "--prometheus", cluster.prom.url, "--match", 'group="aws"', "--json"]) == 0
    frame = json.loads(capsys.readouterr().out)
    assert frame["neuron_top_fleet"] == 1 and len(frame["frame"]["rows"]) == 2


def test_fleet_once_cli_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["fleet", "--prometheus", f"http://127.0.0.1:{free_port()}", "--once"]) == 1
    out = capsys.readouterr().out
    assert "connection refused" in out and " · unreachable · " in out and " · 1 query in " in out


def test_a_url_that_is_not_a_prometheus_api_is_one_line_and_exit_1(cluster: Cluster,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An exporter's port (``/api/v1/query`` is 404 there) or a wrong path on the real server: it was "partial",
    an error with its full query for each of the 11 queries, and exit 0."""
    from neuron_top.export import Exporter, ExportOptions
    from neuron_top.export.server import serve

    exporter = serve("127.0.0.1:0", Exporter(ExportOptions(process_metrics=False)))
    try:
        for url in (exporter.url.removesuffix("/metrics"), cluster.prom.url + "/graph"):
            assert cli_main(["fleet", "--prometheus", url, "--once"]) == 1
            out = capsys.readouterr().out
            errors = [ln for ln in out.splitlines() if ln.startswith("error")]
            assert len(errors) == 1 and "\n  query: " not in out, out  # no failed query listed with its text
            assert f"{url} is not a Prometheus query API (/api/v1/query: HTTP 404 Not Found" in errors[0]
            assert "--prometheus takes the server's base URL" in errors[0]
    finally:
        exporter.stop()


def test_apps_view_from_prometheus_matches_the_hosts_own_reports(cluster: Cluster) -> None:
    """One row per runtime tag across the eight demo hosts, aggregated on the server in one query, equal to what
    the hosts' own reports say (the ssh mode's rule); a host scraped by two jobs counts once."""
    from neuron_top.fleet.apps import apps_from_snapshots

    # collide: a host scraped by two jobs, and two targets with one instance_id: each counted once
    for group, reports in (("demo8", cluster.demo), ("collide", {"dup": cluster.dup, "twin": cluster.twin})):
        fleet = cluster.fleet(group)
        fleet.apps = True
        try:
            before = fleet.client.requests
            frame = fleet.refresh()
            # the set, the apps query and (a first refresh) the probe for the recording rules
            assert frame.queries == len(fleet.queries) + 2 == fleet.client.requests - before
        finally:
            fleet.close()
        got = {a.tag: a for a in frame.apps or []}
        want = {a.tag: a for a in apps_from_snapshots(
            {rep["instance_info"]["instance_id"]: snapshot_from(json.dumps(rep).encode(), 0.0)
             for rep in reports.values()})}
        assert set(got) == set(want), group
        for tag, w in want.items():
            g = got[tag]
            assert (g.hosts, g.cores) == (w.hosts, w.cores), (group, tag)
            assert g.util == pytest.approx(w.util, abs=0.01), (group, tag)
            assert (g.exec_rate is None) == (w.exec_rate is None) and (g.exec_rate or 0) >= 0


def test_fleet_apps_once_cli(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["fleet", "--prometheus", cluster.prom.url, "--match", 'group="demo8"', "--apps", "--once"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(i for i, ln in enumerate(out) if ln.startswith("APP "))
    assert out[header].split() == ["APP", "HOSTS", "CORES", "UTIL", "EXEC/s", "BAD/s", "P99"]
    assert len(out) > header + 3 and all(ln.split()[1].isdigit() for ln in out[header + 1:])

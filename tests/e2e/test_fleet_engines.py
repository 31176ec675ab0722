"""The fleet on the engines clusters use, each a real server or a stand-in on loopback in front of Debian's
Prometheus: Amazon Managed Prometheus and CloudWatch behind a proxy that checks every SigV4 signature with its own
code (``tests/sigv4_support.py``), CloudWatch's rules (a metric name in every query, 500 series an answer) with
1,200 hosts, Debian's VictoriaMetrics scraping the same exporters as Prometheus, and the recording rules of
``deploy/prometheus/neuron-top.recording.yml`` loaded in Prometheus.

One Prometheus and one VictoriaMetrics for the module, scraping every second: three demo hosts (``group="small"``,
the first of which has one corrected ECC event once the module has started) and one target exposing 1,200 small
hosts (``group="big"``) in two zones and three instance types."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from neuron_top.cli.fleet_cmd import print_frame
from neuron_top.cli.main import main as cli_main
from neuron_top.export import exposition
from neuron_top.feed import Feed, Report
from neuron_top.fleet.host_source import PromHostSource
from neuron_top.fleet.prom import PromFleet
from neuron_top.fleet.promql import PromClient, PromError
from neuron_top.fleet.queries import PART, QuerySet, parse_match
from neuron_top.fleet.record import decode_frame
from neuron_top.fleet.rows import FleetRow, from_snapshot
from neuron_top.snapshot import Snapshot
from neuron_top.sources.demo import generate
from tests.conftest import ROOT
from tests.engine_support import VICTORIA, CloudWatchStandIn, VictoriaMetrics
from tests.fleet_support import PROMETHEUS, ExpositionServer, Prometheus, targets_on
from tests.sigv4_support import Keys, SigV4Proxy, StsStandIn

pytestmark = [pytest.mark.prometheus,
              pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed")]

pytest.importorskip("botocore")

RECORDING = ROOT / "deploy" / "prometheus" / "neuron-top.recording.yml"
SMALL = [("trn1.32xlarge", 31), ("inf2.48xlarge", 32), ("inf1.xlarge", 33)]
BIG = 1200
ECC_LINE = re.compile(r'^(hardware_ecc_events_total\{[^}]*event_type="mem_ecc_corrected"[^}]*'
                      r'neuron_device_index="0"[^}]*\}) 0\.0$', re.M)
FIGURES = ("name", "instance_type", "zone", "devices", "cores", "util", "util_max", "busy", "idle", "apps",
           "mem_used", "mem_total", "vcpu", "vcpus", "exec_rate", "err_rate", "p99", "ecc_corrected",
           "ecc_uncorrected", "status")


def big_exposition() -> str:
    """1,200 hosts in one exposition (one scrape target): instance labels, two cores each, a vCPU count."""
    out = []
    for i in range(BIG):
        labels = (f'instance_id="i-{i:017x}",instance_name="n{i}",instance_type="{("trn1.2xlarge", "inf2.xlarge", "trn2.3xlarge")[i % 3]}",'
                  f'availability_zone="us-east-2{"ab"[i % 2]}",region="us-east-2"')
        out.append(f"instance_info{{{labels}}} 1")
        out.append(f'neuron_hardware_info{{{labels},neuron_device_count="1",neuroncore_per_device_count="2",'
                   f'neuron_device_memory_size="34359738368"}} 1')
        for core in (0, 1):
            out.append(f'neuroncore_utilization_ratio{{{labels},neuroncore="{core}",runtime_tag="r"}} '
                       f"{(i % 100) / 100 if core == 0 else 0.0}")
        out.append(f"system_vcpu_count{{{labels}}} 8")
    return "\n".join(out) + "\n"


class Engines:
    def __init__(self) -> None:
        self.server = ExpositionServer()
        self.ecc = threading.Event()
        self.ids: list[str] = []
        for n, (inst, seed) in enumerate(SMALL):
            report = generate(inst, seed, 1)[0]
            self.ids.append(json.loads(report)["instance_info"]["instance_id"])
            text = exposition([report])
            if n == 0:
                assert ECC_LINE.search(text), "the demo's exposition has no ECC counter to raise"
                raised = ECC_LINE.sub(r"\1 1.0", text)
                self.server.add(f"small-{n}", lambda text=text, raised=raised: raised if self.ecc.is_set() else text)
            else:
                self.server.add(f"small-{n}", lambda text=text: text)
        big = big_exposition()
        self.server.add("big", lambda: big)
        self.server.start()
        small = [f"small-{n}" for n in range(len(SMALL))]
        targets = {**targets_on(self.server, small, group="small"), **targets_on(self.server, ["big"], group="big")}
        self.prom = Prometheus(targets, rule_files=(RECORDING,), evaluation_interval="1s")
        self.vm = VictoriaMetrics(targets) if VICTORIA is not None else None
        self.prom.wait_ready()
        enough = 'min(count_over_time(instance_info{group="small"}[1m])) >= 3'
        self.prom.wait_for(enough, bool)
        if self.vm is not None:
            self.vm.wait_for(enough, bool)
        self.ecc.set()  # one corrected ECC event on the first host, from now on
        raised = 'increase(hardware_ecc_events_total{group="small",event_type="mem_ecc_corrected"}[1m]) > 0.5'
        self.prom.wait_for(raised, bool)
        if self.vm is not None:
            self.vm.wait_for(raised, bool)
        # the per-host rules have evaluated at least twice (their rate needs two), the last time after the event
        self.prom.wait_for('count_over_time(instance_id:execution_status:rate1m{group="small"}[1m])',
                           lambda r: bool(r) and min(float(x["value"][1]) for x in r) >= 2)
        self.prom.wait_for('instance_id:hardware_ecc_events:sum_last15m{group="small",'
                           'event_type="mem_ecc_corrected"} > 0.5', bool)

    def fleet(self, url: str, group: str = "small", **kw) -> PromFleet:  # type: ignore[no-untyped-def]
        return PromFleet(PromClient(url, timeout=10), QuerySet(match=parse_match(f'group="{group}"')), **kw)

    def stop(self) -> None:
        self.prom.stop()
        if self.vm is not None:
            self.vm.stop()
        self.server.stop()


@pytest.fixture(scope="module")
def engines() -> Iterator[Engines]:
    e = Engines()
    yield e
    e.stop()


def rows_of(fleet: PromFleet) -> tuple[dict[str, FleetRow], list[str]]:
    try:
        frame = fleet.refresh()
    finally:
        fleet.close()
    assert frame.state == "ok", frame.problems
    return {r.key: r for r in frame.rows}, frame.notes


def figures(row: FleetRow) -> dict[str, object]:
    return {f: (round(v, 9) if isinstance(v := getattr(row, f), float) else v) for f in FIGURES}


# --- recording rules and VictoriaMetrics -------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_checks_and_unit_tests_the_recording_rules() -> None:
    for args in (["check", "rules", str(RECORDING)],
                 ["test", "rules", str(RECORDING.with_name("neuron-top.recording.test.yml"))]):
        out = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_the_rules_probe_reads_raw_with_an_older_rules_file_and_rules_without_ecc_counters(tmp_path: Path) -> None:
    """The ECC rule was renamed when its meaning changed (a vanished counter's last value, not its increase): a
    server still running the older file has the first and the presence rules but not it, and would have left the
    ECC columns empty. The probes, evaluated by promtool's real engine: the rules' parts, and (asked only when the
    ECC rule has no series) whether there is no raw ECC counter at all; ``PromFleet`` reads the rules only for
    both parts, or the first part and no counter (``test_fleet_prom`` has that decision)."""
    qs = QuerySet(match=parse_match('job="neuron"'))
    host = 'job="neuron",instance="n1:8000",instance_id="i-1"'
    util = f"{{__name__=\"instance_id:neuroncore_utilization_ratio:avg_sum\",{host}}}"
    presence = f"{{__name__=\"instance_id:neuron_presence:max_timestamp\",{host}}}"
    ecc_rule = f"{{__name__=\"instance_id:hardware_ecc_events:sum_last15m\",{host},event_type=\"mem_ecc_corrected\"}}"
    raw_ecc = f"{{__name__=\"hardware_ecc_events_total\",{host},neuron_device_index=\"0\",event_type=\"mem_ecc_corrected\"}}"
    rules = {"labels": f'{{{PART}="rules"}}', "value": 1}
    ecc = {"labels": f'{{{PART}="ecc"}}', "value": 1}
    cases = {  # series -> the probe's answer, the ECC probe's
        "older file, ECC counters": ([util, presence, raw_ecc], [rules], []),
        "no ECC counters": ([util, presence], [rules], [{"labels": '{job="neuron"}', "value": 1}]),
        "this file": ([util, presence, ecc_rule, raw_ecc], [rules, ecc], []),
        "no rules": ([raw_ecc], [], []),
    }
    (tmp_path / "none.yml").write_text("groups: []\n")
    tests = [{"interval": "1m", "input_series": [{"series": x, "values": "1x5"} for x in series],
              "promql_expr_test": [{"expr": qs.rules_probe(), "eval_time": "3m", "exp_samples": probe},
                                   {"expr": qs.ecc_probe(), "eval_time": "3m", "exp_samples": absent}]}
             for series, probe, absent in cases.values()]
    (tmp_path / "probe.test.yml").write_text(json.dumps({"rule_files": ["none.yml"], "tests": tests}))
    out = subprocess.run(["promtool", "test", "rules", str(tmp_path / "probe.test.yml")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_recording_rules_are_read_when_loaded_and_give_the_raw_figures(engines: Engines) -> None:
    ruled, notes = rows_of(engines.fleet(engines.prom.url))
    raw, raw_notes = rows_of(engines.fleet(engines.prom.url, rules="off"))
    assert "recording rules" in notes and "raw series" in raw_notes
    assert sorted(ruled) == sorted(raw) == sorted(engines.ids)
    for key in raw:
        assert figures(ruled[key]) == figures(raw[key]), key
    # the ECC event is one, not Prometheus's extrapolated 1.0x
    assert raw[engines.ids[0]].ecc_corrected == 1.0 and raw[engines.ids[1]].ecc_corrected == 0.0


@pytest.mark.skipif(VICTORIA is None, reason="Debian's victoria-metrics is not installed")
def test_victoriametrics_rows_equal_prometheus_rows(engines: Engines) -> None:
    assert engines.vm is not None
    prom, _ = rows_of(engines.fleet(engines.prom.url, rules="off"))
    vm, notes = rows_of(engines.fleet(engines.vm.url))
    assert "raw series" in notes  # no recording rules there
    assert sorted(vm) == sorted(prom) == sorted(engines.ids)
    for key in prom:
        assert figures(vm[key]) == figures(prom[key]), key
        assert vm[key].age is not None and vm[key].age < 5
    assert vm[engines.ids[0]].ecc_corrected == 1.0
    # its own errors, said as it says them
    with pytest.raises(PromError) as err:
        PromClient(engines.vm.url, timeout=10).query("sum(")
    assert err.value.kind == "query" and err.value.message.startswith("422: ") and "unexpected token" in \
        err.value.message


# --- CloudWatch: a metric name in every query, 500 series an answer ---------------------------------------


def test_cloudwatch_caps_answers_at_500_series_and_the_view_shows_all_1200_hosts(
        engines: Engines, capsys: pytest.CaptureFixture[str]) -> None:
    cw = CloudWatchStandIn(engines.prom.url)
    try:
        assert cli_main(["fleet", "--prometheus", cw.url, "--match", 'group="big"', "--series-limit", "500",
                         "--timeout", "30", "--json"]) == 0
        line = capsys.readouterr().out.encode()
        frame = json.loads(line)["frame"]
        rows = frame["rows"]
        assert len(rows) == BIG and len({r["key"] for r in rows}) == BIG
        assert all(r.get("util") is not None and r.get("instance_type") and r.get("cores") == 2 for r in rows)
        host99 = next(r for r in rows if r["key"] == "i-00000000000000063")  # 99% on one core of two
        assert host99["util"] == pytest.approx(49.5) and host99["util_max"] == pytest.approx(99.0)
        assert not frame.get("problems"), frame.get("problems")
        # 600 hosts a zone: still over the cap, so each zone split again by instance type
        assert any("split by availability_zone" in n for n in frame["notes"]), frame["notes"]
        assert cw.cut > 0 and not cw.refused
        assert all(len(q) < 4000 for q in cw.asked)
        # the header says so (the same frame printed as --once prints it)
        print_frame(decode_frame(line), argparse.Namespace(json=False, width=200))
        head = capsys.readouterr().out.splitlines()[:2]
        assert "split by availability_zone, then instance_type" in head[0] and head[1].startswith("1,200 hosts")
    finally:
        cw.stop()


def host_snapshot(url: str, key: str, limit: int | None = None) -> Snapshot:
    """The first report of one host's dashboard (``PromHostSource``, as the fleet's drill-down makes it)."""
    client = PromClient(url, timeout=10)
    feed = Feed(PromHostSource(client, QuerySet(match=parse_match('group="small"')), key, interval=0.2,
                               limit=limit))
    try:
        return next(ev.snapshot for ev in feed.events() if isinstance(ev, Report))
    finally:
        feed.close()
        client.close()


def test_a_host_dashboard_over_cloudwatch_past_500_series_is_asked_family_by_family(engines: Engines) -> None:
    key = engines.ids[0]  # the trn1.32xlarge demo: ~620 gauge series (its runtimes on 32 cores)
    cw = CloudWatchStandIn(engines.prom.url)
    try:
        capped = host_snapshot(cw.url, key, limit=500)
    finally:
        cw.stop()
    whole = host_snapshot(engines.prom.url, key)
    assert cw.cut >= 1 and not cw.refused  # the whole answer was cut once, then asked in parts under the cap
    assert capped.core_count == whole.core_count == 32
    assert sorted(a.tag for a in capped.apps) == sorted(a.tag for a in whole.apps)
    mine = {a.tag: a for a in capped.apps}
    for a in whole.apps:
        assert mine[a.tag].core_memory == a.core_memory and mine[a.tag].cores == a.cores, a.tag
    got, want = from_snapshot(key, capped), from_snapshot(key, whole)
    assert msgspec.structs.asdict(got) == msgspec.structs.asdict(want)


# --- SigV4: Amazon Managed Prometheus and CloudWatch, keys from the environment and from a web identity ----------


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No AWS configuration of the machine's own: no files, no instance metadata, no profile."""
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ENDPOINT_URL",
                 "AWS_ENDPOINT_URL_STS", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


def test_amp_signed_with_keys_from_the_environment(engines: Engines, aws_env: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    keys = Keys()
    keys.add("AKIDTESTAMP", "amp-secret/with+chars")
    proxy = SigV4Proxy(engines.prom.url, keys, region="us-east-2", service="aps", prefix="/workspaces/ws-test")
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTAMP")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "amp-secret/with+chars")
    try:
        assert cli_main(["fleet", "--prometheus", proxy.url, "--sigv4", "--region", "us-east-2",
                         "--sigv4-service", "aps", "--match", 'group="small"', "--json"]) == 0
        frame = json.loads(capsys.readouterr().out)["frame"]
        assert sorted(r["key"] for r in frame["rows"]) == sorted(engines.ids)
        assert "recording rules" in frame["notes"] and "sigv4 aps us-east-2" in frame["source"]
        assert not proxy.refused and len(proxy.seen) == frame["queries"] == 12
        assert {m for m, _ in proxy.seen} == {"POST"}  # form bodies, as AWS's examples
        # a wrong secret: refused by the proxy, said in one line
        aws_env.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        assert cli_main(["fleet", "--prometheus", proxy.url, "--sigv4", "--region", "us-east-2",
                         "--sigv4-service", "aps", "--once"]) == 1
        out = capsys.readouterr().out
        said = [ln for ln in out.splitlines() if "HTTP 403" in ln]
        assert len(said) == 1 and "signature we calculated does not match" in said[0]
        assert "check the AWS credentials" in said[0] and "Traceback" not in out
        # an expired key
        aws_env.setenv("AWS_SECRET_ACCESS_KEY", "amp-secret/with+chars")
        keys.expired.add("AKIDTESTAMP")
        assert cli_main(["fleet", "--prometheus", proxy.url, "--sigv4", "--region", "us-east-2",
                         "--sigv4-service", "aps", "--once"]) == 1
        assert "security token included in the request is expired" in capsys.readouterr().out
    finally:
        proxy.stop()


def test_cloudwatch_signed_with_a_web_identity_renewed_before_it_expires(
        engines: Engines, aws_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """IRSA: the role and the token file in the environment; botocore asks STS (a stand-in here) for keys that
    live 5 minutes, inside its refresh window, so each request renews them: every request signed with a fresh
    key, each one checked."""
    keys = Keys()
    sts = StsStandIn(keys, token="eks-projected-token", lifetime=300)
    cw = CloudWatchStandIn(engines.prom.url)
    proxy = SigV4Proxy(cw.url, keys, region="eu-west-1", service="monitoring")
    (tmp_path / "token").write_text("eks-projected-token")
    aws_env.setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/neuron-top")
    aws_env.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(tmp_path / "token"))
    aws_env.setenv("AWS_ENDPOINT_URL_STS", sts.url)
    aws_env.setenv("AWS_REGION", "eu-west-1")
    try:
        assert cli_main(["fleet", "--prometheus", proxy.url, "--sigv4", "--sigv4-service", "monitoring",
                         "--match", 'group="small"', "--raw", "--json"]) == 0
        frame = json.loads(capsys.readouterr().out)["frame"]
        assert sorted(r["key"] for r in frame["rows"]) == sorted(engines.ids)
        assert not proxy.refused and len(proxy.seen) == 11 and not cw.refused
        assert sts.calls >= 2 and len({k for _, k in proxy.seen}) >= 2
        assert {k for _, k in proxy.seen} <= set(sts.issued)
        # a token STS does not take: one line
        (tmp_path / "token").write_text("someone-elses-token")
        assert cli_main(["fleet", "--prometheus", proxy.url, "--sigv4", "--sigv4-service", "monitoring",
                         "--once"]) == 1
        out = capsys.readouterr().out
        assert "InvalidIdentityToken" in out and "Traceback" not in out
    finally:
        proxy.stop()
        cw.stop()
        sts.stop()

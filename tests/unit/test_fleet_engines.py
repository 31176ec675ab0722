"""What the fleet sends to engines other than a plain Prometheus, and what it makes of their answers, against a
fake server: SigV4 (each signature checked by ``tests/sigv4_support.py``'s own code, itself checked against AWS's
published example), POST form bodies, a Mimir tenant's header, Thanos's parameters and warnings, OpenTelemetry
label names, and the one line said when botocore is missing. (The real servers: tests/e2e/test_fleet_engines.py.)"""

from __future__ import annotations

import datetime
import json
import re
import sys
import urllib.parse
from pathlib import Path

import pytest

from neuron_top.cli.common import UsageError
from neuron_top.cli.fleet_cmd import fleet_parser, prom_fleet
from neuron_top.fleet.promql import PromClient, PromError, Request
from neuron_top.fleet.queries import QuerySet, check_label, host_queries, parse_match
from neuron_top.fleet.sigv4 import MISSING, guess_region, guess_service
from tests.sigv4_support import Keys, canonical_request, check, expected_signature
from tests.unit.test_fleet_promql import VECTOR, fake, ok  # noqa: F401 (fake is a fixture)


def test_the_signature_check_reproduces_aws_published_example() -> None:
    """AWS's Signature Version 4 example (IAM ListUsers, key AKIDEXAMPLE, 2015-08-30 12:36:00 UTC): the canonical
    request's hash and the signature as AWS's documentation gives them."""
    import hashlib

    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Host": "iam.amazonaws.com",
               "X-Amz-Date": "20150830T123600Z"}
    creq = canonical_request("GET", "/", "Action=ListUsers&Version=2010-05-08", headers,
                             ["content-type", "host", "x-amz-date"], b"")
    assert hashlib.sha256(creq.encode()).hexdigest() == \
        "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
    assert expected_signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830T123600Z", "us-east-1", "iam",
                              creq) == "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"


def test_service_and_region_from_the_url() -> None:
    amp = "https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-0123"
    cw = "https://monitoring.eu-west-1.amazonaws.com"
    assert (guess_service(amp), guess_region(amp)) == ("aps", "us-east-2")
    assert (guess_service(cw), guess_region(cw)) == ("monitoring", "eu-west-1")
    assert guess_service("http://prometheus:9090") is None and guess_region("http://prometheus:9090") is None


def signer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, service: str = "aps"):  # type: ignore[no-untyped-def]
    pytest.importorskip("botocore")
    from neuron_top.fleet.sigv4 import SigV4

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDUNIT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "unit-secret")
    return SigV4("us-west-2", service)


def test_a_signed_post_passes_the_independent_check_and_a_changed_one_does_not(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    auth = signer(monkeypatch, tmp_path)
    keys = Keys()
    keys.add("AKIDUNIT", "unit-secret")
    body = urllib.parse.urlencode({"query": 'max by (instance_id) (up{job="a b"})'}).encode()
    headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
    req = Request("POST", "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/api/v1/query", headers,
                  body)
    sent = {**headers, **auth.headers(req), "Host": "aps-workspaces.us-west-2.amazonaws.com"}
    path = "/workspaces/ws-1/api/v1/query"
    assert check(keys, "POST", path, sent, body, "us-west-2", "aps") is None
    assert "does not match" in (check(keys, "POST", path, sent, body + b"x", "us-west-2", "aps") or "")
    assert "region/service" in (check(keys, "POST", path, sent, body, "us-west-2", "monitoring") or "")
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=10)
    assert check(keys, "POST", path, sent, body, "us-west-2", "aps", now=later) == "Signature expired"


def test_no_credentials_is_one_clear_problem(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    auth = signer(monkeypatch, tmp_path)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    auth = type(auth)("us-west-2", "aps")
    with pytest.raises(PromError) as err:
        auth.headers(Request("POST", "https://monitoring.us-west-2.amazonaws.com/api/v1/query", {}, b""))
    assert err.value.kind == "auth" and err.value.whole and "no AWS credentials found" in err.value.message


def test_without_botocore_sigv4_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "botocore" or m.startswith("botocore.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "botocore", None)
    ns = fleet_parser().parse_args(["--prometheus", "https://aps-workspaces.us-east-2.amazonaws.com/workspaces/w",
                                    "--sigv4"])
    with pytest.raises(UsageError) as err:
        prom_fleet(ns)
    assert str(err.value) == MISSING == "--sigv4 needs botocore: pip install 'neuron-top[aws]'"


def test_sigv4_options_are_checked() -> None:
    def usage(*args: str) -> str:
        with pytest.raises(UsageError) as err:
            prom_fleet(fleet_parser().parse_args(["--prometheus", "http://prom:9090", *args]))
        return str(err.value)

    assert "--sigv4-service" in usage("--sigv4", "--region", "us-east-1")  # the URL does not say which service
    assert "go with --sigv4" in usage("--region", "us-east-1")
    assert "'NAME: VALUE'" in usage("--header", "X-Scope-OrgID")
    assert "NAME=VALUE" in usage("--query-param", "dedup")
    assert "--shard-by" in usage("--shard-by", "__name__")


def test_post_bodies_tenant_header_thanos_params_and_warnings(fake) -> None:  # noqa: F811
    """A Thanos Querier behind Mimir-style tenancy: every query a POST form with dedup, partial_response and raw
    resolution, the tenant header on each; the answer's warning shown with the query's name, the frame partial."""
    answer = {**VECTOR, "warnings": ["receive-0: store unavailable, partial response"]}
    f = fake(lambda h: (200, {"Content-Type": "application/json"}, json.dumps(answer).encode()))
    ns = fleet_parser().parse_args(["--prometheus", f"http://127.0.0.1:{f.port}", "--thanos", "--post", "--header",
                                    "X-Scope-OrgID: team-a", "--raw"])
    fleet = prom_fleet(ns)
    try:
        frame = fleet.refresh()
    finally:
        fleet.close()
    assert len(f.requests) == 11 and {p for p, _ in f.requests} == {"/api/v1/query"}
    assert {h["X-Scope-OrgID"] for _, h in f.requests} == {"team-a"}
    forms = [dict(urllib.parse.parse_qsl(b.decode())) for b in f.bodies]
    assert all(x["dedup"] == "true" and x["partial_response"] == "true" and x["max_source_resolution"] == "0s"
               and x["query"] for x in forms)
    warned = [p for p in frame.problems if p.warning]
    assert frame.state == "partial" and len(warned) == 11 and "store unavailable" in warned[0].message
    assert frame.notes == ["raw series"]


def test_the_client_keeps_warnings_and_get_stays_the_default(fake) -> None:  # noqa: F811
    f = fake(ok({**VECTOR, "warnings": ["w1"]}))
    got = PromClient(f"http://127.0.0.1:{f.port}", params={"dedup": "false"}).answer("up")
    assert got.warnings == ["w1"] and len(got.samples) == 2
    path = f.requests[0][0]
    assert path.startswith("/api/v1/query?") and "dedup=false" in path and not f.bodies


def test_opentelemetry_label_names_are_quoted_in_every_query() -> None:
    """CloudWatch's Container Insights (OTel): resource attributes are labels with dots and @, written quoted in
    PromQL 3 (``sum by ("@resource.k8s.node.name")``, ``{"@resource.k8s.pod.name"=~"llama.*"}``)."""
    by = check_label('"@resource.k8s.node.name"')
    match = parse_match('"@resource.k8s.pod.name"=~"llama.*", job="neuron"')
    assert match == '"@resource.k8s.pod.name"=~"llama.*",job="neuron"'
    qs = QuerySet(by=by, match=match)
    for q in qs.queries():
        assert "@resource.k8s.node.name" not in q.expr.replace('"@resource.k8s.node.name"', ""), q.expr
        assert q.name == "info" or '"@resource.k8s.pod.name"=~"llama.*"' in q.expr
    assert 'count by ("@resource.k8s.node.name", instance_id,' in next(
        q.expr for q in qs.queries() if q.name == "info")
    gauges, counters = host_queries(qs, 'node "a"')
    assert '"@resource.k8s.node.name"="node \\"a\\""' in gauges and '"@resource.k8s.node.name"="node' in counters


class Capped:
    """A server that cuts every answer to ``cap`` series (as CloudWatch does at 500): 30 hosts in three zones and
    two instance types; a query is answered for the hosts its matchers select."""

    def __init__(self, cap: int = 10) -> None:
        from neuron_top.fleet.promql import Sample

        self.Sample, self.cap = Sample, cap
        self.hosts = [{"instance_id": f"i-{n:02d}", "availability_zone": "abc"[n % 3],
                       "instance_type": ("trn1", "inf2")[n % 2]} for n in range(30)]
        self.asked: list[str] = []
        self.ats: list[float | None] = []
        self.requests = 0
        self.display = "http://capped"

    def answer(self, expr: str, at: float | None = None):  # type: ignore[no-untyped-def]
        from neuron_top.fleet.promql import Answer
        from neuron_top.fleet.queries import PART

        self.asked.append(expr)
        self.ats.append(at)
        self.requests += 1
        chosen = [h for h in self.hosts
                  if all(f'{k}="{v}"' in expr for k, v in h.items() if k != "instance_id"
                         if f'{k}="' in expr)]
        for label in ("availability_zone", "instance_type"):
            if expr.startswith(f"count by ({label})"):
                return Answer([self.Sample({label: v}, (0.0, "1")) for v in sorted({h[label] for h in chosen})])
        tag = {PART: "now"} if expr.startswith("label_replace(time()") else {}
        return Answer([self.Sample({"instance_id": h["instance_id"], **tag}, (0.0, "1")) for h in chosen][:self.cap])

    def query(self, expr: str, at: float | None = None):  # type: ignore[no-untyped-def]
        return self.answer(expr).samples

    def close(self) -> None:
        pass


def test_answers_at_the_cap_are_split_by_zone_then_type_and_merged() -> None:
    from neuron_top.fleet.prom import PromFleet

    server = Capped()
    fleet = PromFleet(server, QuerySet(), rules="off", limit=10)  # type: ignore[arg-type]
    frame = fleet.refresh()
    assert len(frame.rows) == 30 and not frame.problems
    assert frame.notes[-1] == "answers over 10 series split by availability_zone, then instance_type (6 parts)"
    assert frame.queries == server.requests  # every request counted, the parts too
    # from then on those queries are asked in parts at once (no capped answer first)
    before = len(server.asked)
    fleet.refresh()
    assert all("availability_zone=" in e or e.startswith("count by") for e in server.asked[before:])
    # every part and every label's values at the refresh's one instant
    assert len(set(server.ats[before:])) == 1 and server.ats[-1] is not None
    fleet.close()
    # no label left to split by: said, with what to do
    fleet = PromFleet(Capped(), QuerySet(), rules="off", limit=10, shard_by=("availability_zone",))  # type: ignore[arg-type]
    frame = fleet.refresh()
    assert frame.problems and "give --shard-by LABEL" in frame.problems[0].message
    fleet.close()


def test_every_query_names_a_metric_as_cloudwatch_requires() -> None:
    """The fleet's queries (raw and with the rules, any shard) and a host's dashboard's: no ``{__name__=~...}``."""
    from tests.engine_support import names_a_metric

    for qs in (QuerySet(), QuerySet(rules=True), QuerySet(match='job="n"', shard='availability_zone="a"')):
        for q in qs.queries():
            assert names_a_metric(q.expr), q.expr
        for expr in host_queries(qs, "i-1"):
            assert "__name__" not in expr and names_a_metric(expr), expr
    assert not names_a_metric('{__name__=~"neuroncore_.+",instance_id="i-1"}')


class Series:
    """A server holding one host's gauge series, cutting every answer to ``cap`` series: it answers the host
    dashboard's selectors (``family{matchers}``, tagged or not, "or"-ed) and ``count by (label) (...)``."""

    SELECTOR = re.compile(r'([a-z_]+)\{([^}]*)\}')

    def __init__(self, series: list[dict[str, str]], cap: int) -> None:
        self.series, self.cap = series, cap
        self.asked: list[str] = []

    def _selected(self, expr: str) -> list[tuple[str, dict[str, str]]]:
        out = []
        for family, inside in self.SELECTOR.findall(expr):
            want = dict(re.findall(r'([a-z_]+)="([^"]*)"', inside))
            out += [(family, m) for m in self.series if m["__name__"] == family
                    and all(m.get(k, "") == v for k, v in want.items())]
        return out

    def answer(self, expr: str, at: float | None = None):  # type: ignore[no-untyped-def]
        from neuron_top.fleet.promql import Answer, Sample
        from neuron_top.fleet.queries import PART

        self.asked.append(expr)
        if expr.startswith("increase(") or "increase(" in expr:
            return Answer([])
        if m := re.match(r"count by \((\w+)\)", expr):
            values = sorted({s.get(m[1], "") for _, s in self._selected(expr)})
            return Answer([Sample({m[1]: v}, (0.0, "1")) for v in values])
        got = [Sample({**s, PART: family}, (0.0, "1")) for family, s in self._selected(expr)]
        return Answer(got[:self.cap])

    def query(self, expr: str, at: float | None = None):  # type: ignore[no-untyped-def]
        return self.answer(expr).samples


def test_a_host_dashboard_past_the_cap_asks_family_by_family_then_by_runtime_then_by_core() -> None:
    from neuron_top.fleet.host_source import PromHostSource

    host = {"instance_id": "i-1"}
    series = [{"__name__": "instance_info", **host}]
    for tag, cores in (("a", 60), ("b", 30)):  # 90 utilization series: runtime a alone is over the cap of 50
        series += [{"__name__": "neuroncore_utilization_ratio", **host, "runtime_tag": tag, "neuroncore": str(c)}
                   for c in range(cores)]
    for tag in ("a", "b"):  # 80 model-code series: each runtime's 40 under the cap
        series += [{"__name__": "neuroncore_memory_usage_model_code", **host, "runtime_tag": tag,
                    "neuroncore": str(c)} for c in range(40)]
    server = Series(series, cap=50)
    source = PromHostSource(server, QuerySet(), "i-1", limit=50)  # type: ignore[arg-type]
    got = source._gauges()
    key = sorted((s.metric["__name__"], s.metric.get("runtime_tag", ""), s.metric.get("neuroncore", ""))
                 for s in got)
    assert key == sorted((m["__name__"], m.get("runtime_tag", ""), m.get("neuroncore", "")) for m in series)
    # runtime a's utilization by core; runtime b's, and each runtime's model code, whole
    asked = server.asked
    assert any('runtime_tag="a",neuroncore="59"' in q for q in asked)
    assert not any('runtime_tag="b",neuroncore=' in q for q in asked)
    assert any('neuroncore_memory_usage_model_code{instance_id="i-1",runtime_tag="b"}' in q for q in asked)
    # from then on straight to the families (no whole answer cut first)
    before = len(server.asked)
    assert len(source._gauges()) == len(series)
    assert not any(" or " in q for q in server.asked[before:])
    # no cap: one query
    whole = PromHostSource(Series(series, cap=10_000), QuerySet(), "i-1")  # type: ignore[arg-type]
    assert len(whole._gauges()) == len(series)

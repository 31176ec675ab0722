"""Pods in every output: the feed hands each snapshot the latest attribution; --once/--json, the exporter's info
family and --pod-labels read the one PodMap; the demo's simulated pods."""

from __future__ import annotations

import json
import re

from prometheus_client.parser import text_string_to_metric_families

from neuron_top.export import Exporter, ExportOptions
from neuron_top.feed import Feed, Report
from neuron_top.k8s.model import Attribution, PodRef
from neuron_top.output.text import SourceInfo, as_json, text
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.sources.demo import DemoSource, generate
from neuron_top.sources.demo.pods import DemoPods

HOSTILE = "[bold red]pwn\x1b[31m" + "x" * 80


def inf2() -> Snapshot:
    """A trn1 report (no neuron_k8s_info of its own), its first app's cores held by a pod."""
    return snapshot_from(generate("trn1.32xlarge", 3, 1)[0], 1000.0)


def with_pods(snap: Snapshot, pod: str = "train-0") -> Snapshot:
    app = snap.apps[0]
    cores = dict.fromkeys(snap.cores_of(app), PodRef.of("ml", pod, "worker", "kubelet"))
    return snap.with_attribution(Attribution("kubelet", cores=cores, offered_cores=frozenset(range(snap.core_count))))


def samples(text_: str, name: str) -> list[dict[str, str]]:
    return [s.labels for f in text_string_to_metric_families(text_) for s in f.samples if s.name == name]


def test_the_feed_hands_each_snapshot_the_latest_attribution() -> None:
    src = DemoSource("trn2.48xlarge", 2, clock=lambda: 0.0, sleep=lambda s: None, count=2)
    reports = [e for e in Feed(src, pods=DemoPods(src)).events() if isinstance(e, Report)]
    assert len(reports) == 2
    for r in reports:
        assert r.snapshot.attribution is not None and r.snapshot.pods.source == "demo"
        assert all(r.snapshot.app_pod(a) is not None for a in r.snapshot.apps)


def test_once_text_and_json_carry_pods_and_idle_cores() -> None:
    snap = with_pods(inf2())
    app = snap.apps[0]
    out = text(snap, SourceInfo("demo", "live"))
    assert "pods: kubelet, 1 with Neuron cores" in out
    assert f"(pid {app.pid}) pod ml/train-0" in out
    assert re.search(r"^  ml/train-0 \[worker\]  cores \S+  util ", out, re.M)
    assert "not allocated: cores" in out
    doc = json.loads(as_json(snap, SourceInfo("demo", "live")))
    assert doc["apps"][0]["pod"] == {"namespace": "ml", "pod": "train-0", "container": "worker", "source": "kubelet"}
    pods = doc["pods"]
    assert pods["source"] == "kubelet" and pods["pods"][0]["cores"] == list(snap.cores_of(app))
    assert set(pods["free_cores"]) == set(range(snap.core_count)) - set(snap.cores_of(app))


def test_untrusted_pod_names_stay_text() -> None:
    out = text(with_pods(inf2(), HOSTILE), SourceInfo("demo", "live"))
    assert "\x1b" not in out and "[bold red]pwn\\x1b[31m" in out


def test_info_family_joins_cores_to_pods_and_aws_families_are_unchanged() -> None:
    plain, pods = inf2(), with_pods(inf2())
    a, b = Exporter(ExportOptions(process_metrics=False), clock=lambda: 5.0), Exporter(
        ExportOptions(process_metrics=False), clock=lambda: 5.0)
    a.apply_snapshot(plain)
    b.apply_snapshot(pods)
    ta, tb = a.render().decode(), b.render().decode()
    info = samples(tb, "neurontop_neuroncore_pod_info")
    assert sorted(int(s["neuroncore"]) for s in info) == list(pods.cores_of(pods.apps[0]))
    assert {(s["pod"], s["namespace"], s["container"]) for s in info} == {("train-0", "ml", "worker")}
    assert info[0]["instance_id"]  # the join key: on (instance_id, neuroncore)
    assert "neurontop_neuroncore_pod" not in ta
    drop = re.compile(r"^(# (HELP|TYPE) )?neurontop_neuroncore_pod_info.*\n", re.M)
    assert drop.sub("", tb) == ta  # without --pod-labels, nothing else changes


def test_pod_labels_on_per_core_and_per_runtime_families() -> None:
    snap = with_pods(inf2())
    app = snap.apps[0]
    exp = Exporter(ExportOptions(process_metrics=False, pod_labels=True), clock=lambda: 5.0)
    exp.apply_snapshot(snap)
    out = exp.render().decode()
    mine = set(map(str, snap.cores_of(app)))
    util = samples(out, "neuroncore_utilization_ratio")
    assert util and all({"pod", "namespace", "container"} <= s.keys() for s in util)
    assert {s["pod"] for s in util if s["neuroncore"] in mine} == {"train-0"}
    assert {s["pod"] for s in util if s["neuroncore"] not in mine} <= {""}
    mem = samples(out, "neuron_runtime_memory_used_bytes")
    assert {s["pod"] for s in mem if s["runtime_tag"] == app.tag} == {"train-0"}
    assert {s["pod"] for s in mem if s["runtime_tag"] != app.tag} <= {""}
    for fam in ("neuroncore_memory_usage_tensors", "execution_status_total", "execution_latency_seconds"):
        assert all("pod" in s for s in samples(out, fam)), fam


def test_demo_pods_hold_every_app_and_offer_every_device() -> None:
    src = DemoSource("trn2.48xlarge", 1, clock=lambda: 0.0, sleep=lambda s: None, count=1)
    snap = next(e.snapshot for e in Feed(src, pods=DemoPods(src)).events() if isinstance(e, Report))
    m = snap.pods
    assert m.source == "demo" and m.offered == frozenset(range(snap.core_count))
    assert {a.pid for a in snap.apps} == set(m.apps)
    assert any(u.idle for u in snap.pod_usage)  # a pod whose cores sit idle


def test_fleet_by_pod_records_nothing_so_refuses_record(capsys, tmp_path) -> None:
    from neuron_top.cli.main import main

    assert main(["fleet", "--prometheus", "http://127.0.0.1:1", "--by", "namespace", "--record",
                 str(tmp_path / "f.jsonl")]) == 2
    assert "with --by namespace there are none" in capsys.readouterr().err


def test_fleet_pod_queries_group_and_match() -> None:
    from neuron_top.fleet.pods import PodQueries
    from neuron_top.fleet.queries import QuerySet

    q = PodQueries("namespace", QuerySet(match='cluster="a"')).queries()
    assert set(q) == {"cores", "hosts", "util", "busy"}
    assert all(e.startswith(("count by (namespace) (", "avg by (namespace) (")) for e in q.values())
    assert all('neurontop_neuroncore_pod_info{cluster="a"}' in e for e in q.values())
    assert 'neuroncore_utilization_ratio{cluster="a"}' in q["util"]


def test_demo_pods_on_the_command_line(capsysbinary) -> None:
    from neuron_top.cli.main import main

    assert main(["demo", "--pods", "--json", "--seed", "1"]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    assert doc["pods"]["source"] == "demo" and doc["pods"]["pods"]
    assert all(a["pod"] is not None and a["pod"]["source"] == "demo" for a in doc["apps"])
    assert main(["demo", "--once", "--seed", "1", "--instance", "trn1.32xlarge"]) == 0
    assert b"pods:" not in capsysbinary.readouterr().out  # no pods without --pods on a profile without k8s


def test_a_recording_keeps_who_held_each_core_and_replay_shows_it(tmp_path) -> None:
    """A recording kept the reports but not the node's answer about pods: replay, ``--once`` on the file and a
    post-mortem could not say which pod held a core at 03:40. Each recorded report now carries the attribution
    of its moment (``neuron_top_pods``), read back by the one decoder with names cleaned again."""
    from neuron_top.recording.index import open_recording
    from neuron_top.recording.writer import RecordingWriter

    src = DemoSource("trn2.48xlarge", 2, clock=lambda: 0.0, sleep=lambda s: None, count=3)
    path = tmp_path / "pods.jsonl.gz"
    with RecordingWriter(path) as rec:
        live = [e.snapshot for e in Feed(src, pods=DemoPods(src), recorder=rec).events() if isinstance(e, Report)]
    with open_recording(path) as index:
        index.wait()
        replayed = [snapshot_from(index.get(i), index.timestamp(i), i + 1) for i in range(len(index))]
    assert len(replayed) == len(live) == 3
    for a, b in zip(live, replayed, strict=True):
        assert b.attribution is not None and b.pods.cores == a.pods.cores and b.pods.free == a.pods.free
        assert b.pods.status() == a.pods.status() + " (as recorded)"
    # a file anyone can edit: names cleaned again, a broken record ignored
    from neuron_top.k8s.model import attribution_from_record, attribution_record

    hostile = Attribution("kubelet", cores={0: PodRef(HOSTILE, HOSTILE, HOSTILE, "kubelet")}, pods=1)
    back = attribution_from_record(attribution_record(hostile))
    assert back is not None and "\x1b" not in back.cores[0].pod and len(back.cores[0].pod) <= 253
    assert attribution_from_record(b'{"cores": {"x": 1, "2": ["a"]}, "pods": true}').cores == {}
    assert attribution_from_record(b"[1, 2]") is None

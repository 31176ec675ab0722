"""Pod attribution from a real gRPC server on a unix socket speaking the kubelet's PodResources v1 contract."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("grpc")
import grpc

from neuron_top.k8s import PodWatcher, resolve
from neuron_top.k8s.kubelet import KubeletClient, KubeletError
from neuron_top.k8s.model import PodRef
from tests.kubelet_server import FakeKubelet, pod

CORE = "aws.amazon.com/neuroncore"
DEV = "aws.amazon.com/neuron"
OLD_DEV = "aws.amazon.com/neurondevice"


@pytest.fixture
def kubelet() -> Iterator[FakeKubelet]:
    # unix socket paths are limited to ~107 bytes: pytest's tmp_path can be longer
    import tempfile

    d = tempfile.mkdtemp(prefix="nt-k8s-")
    k = FakeKubelet(os.path.join(d, "kubelet.sock"))
    yield k
    k.stop()


def refs(m: dict[int, PodRef]) -> dict[int, str]:
    return {i: f"{r.name}/{r.container}" for i, r in m.items()}


def test_cores_devices_and_dra_claims(kubelet: FakeKubelet) -> None:
    kubelet.pods = [
        pod("train-0", "ml", ("worker", {CORE: ["0", "1"], "nvidia.com/gpu": ["x"]})),
        pod("infer", "serve", ("server", {DEV: ["1"]})),
        pod("legacy", "old", ("app", {OLD_DEV: ["2"]})),
        pod("dra", "new", ("main", {}), claims=["neurondevice3", "gpu0"]),
        pod("web", "default", ("nginx", {})),
    ]
    kubelet.offered = {CORE: [str(i) for i in range(8)], DEV: ["1", "2", "3"]}
    w = PodWatcher(kubelet.path)
    att, _ = w.refresh()
    w.close()
    assert att.source == "kubelet" and att.pods == 5 and att.note == ""
    m = resolve(att, cores_per_device=2, app_cores={})
    assert refs(dict(m.cores)) == {0: "ml/train-0/worker", 1: "ml/train-0/worker", 2: "serve/infer/server",
                                   3: "serve/infer/server", 4: "old/legacy/app", 5: "old/legacy/app",
                                   6: "new/dra/main", 7: "new/dra/main"}
    assert m.source == "kubelet" and m.free == ()
    kubelet.pods = kubelet.pods[:1]
    m = resolve(PodWatcher(kubelet.path).refresh()[0], 2, {})
    assert sorted(m.cores) == [0, 1] and m.free == (2, 3, 4, 5, 6, 7)


def test_lnc2_logical_core_ids_expand_devices_by_logical_cores(kubelet: FakeKubelet) -> None:
    # trn2 at LNC=2: 4 logical cores per device, ids 0..63; neuron-monitor's indexes are logical too
    kubelet.pods = [pod("a", "ns", ("c", {CORE: ["62", "63"]})), pod("b", "ns", ("c", {DEV: ["15"]}))]
    m = resolve(PodWatcher(kubelet.path).refresh()[0], cores_per_device=4, app_cores={7: [62, 63]})
    assert sorted(m.cores) == [60, 61, 62, 63]
    assert m.cores[60].pod == "b" and m.cores[62].pod == "a" and m.apps[7].pod == "a"


def test_long_and_hostile_names_from_the_kubelet_are_cut_and_escaped(kubelet: FakeKubelet) -> None:
    kubelet.pods = [pod("[red]p\x1b]0;pwned\x07" + "n" * 400, "ns\u202e", ("c", {CORE: ["0"]}))]
    ref = PodWatcher(kubelet.path).refresh()[0].cores[0]
    assert ref.pod.startswith("[red]p\\x1b]0;pwned\\x07n") and ref.pod.endswith("…") and len(ref.pod) < 270
    assert ref.namespace == "ns\\u202e"


def test_pods_come_and_go_between_polls(kubelet: FakeKubelet) -> None:
    w = PodWatcher(kubelet.path)
    kubelet.pods = [pod("a", "ns", ("c", {CORE: ["0"]}))]
    assert [r.pod for r in w.refresh()[0].cores.values()] == ["a"]
    kubelet.pods = [pod("b", "ns", ("c", {CORE: ["1"]}))]
    att = w.refresh()[0]
    assert {i: r.pod for i, r in att.cores.items()} == {1: "b"}
    kubelet.pods = []
    assert not w.refresh()[0].cores


@pytest.mark.parametrize(("code", "says"), [
    (grpc.StatusCode.UNAVAILABLE, "kubelet unavailable"),
    (grpc.StatusCode.PERMISSION_DENIED, "permission denied"),
])
def test_errors_are_reasons_not_tracebacks(kubelet: FakeKubelet, code: grpc.StatusCode, says: str) -> None:
    kubelet.error = code
    att, delay = PodWatcher(kubelet.path, interval=10).refresh()
    assert att.source == "" and says in att.note and delay == 10


def test_rate_limit_backs_off_then_recovers(kubelet: FakeKubelet) -> None:
    kubelet.error = grpc.StatusCode.RESOURCE_EXHAUSTED
    w = PodWatcher(kubelet.path, interval=10)
    delays = [w.refresh()[1] for _ in range(3)]
    assert delays == [20, 40, 80] and "rate limit" in w.current().note
    kubelet.error = None
    kubelet.pods = [pod("a", "ns", ("c", {CORE: ["0"]}))]
    att, delay = w.refresh()
    assert att.source == "kubelet" and delay == 10 and w.backoff.next() == 20


def test_slow_answer_times_out_and_the_reader_never_waits(kubelet: FakeKubelet) -> None:
    kubelet.delay = 30
    w = PodWatcher(kubelet.path, timeout=0.3).start()
    t0 = time.monotonic()
    assert w.current().source == ""  # at once, while the call is in flight
    assert time.monotonic() - t0 < 0.1
    deadline = time.monotonic() + 10
    while w.refreshes == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert "did not answer in 0.3 s" in w.current().note
    w.close()


def test_reply_above_grpc_default_4_mib(kubelet: FakeKubelet) -> None:
    # 60 pods with 12,000 large cpu ids each: about 4.4 MiB, above gRPC's default receive limit
    kubelet.pods = [pod(f"p{i}", "ns", ("c", {CORE: [str(i)]}), pad=12_000) for i in range(60)]
    size = sum(p.ByteSize() for p in kubelet.pods)
    assert size > 4 * 1024 * 1024
    att, _ = PodWatcher(kubelet.path).refresh()
    assert att.source == "kubelet" and len(att.cores) == 60


def test_allocatable_not_served_leaves_free_unknown(kubelet: FakeKubelet) -> None:
    kubelet.pods = [pod("a", "ns", ("c", {CORE: ["0"]}))]
    kubelet.offered = None
    m = resolve(PodWatcher(kubelet.path).refresh()[0], 2, {})
    assert m.offered is None and m.free is None and m.source == "kubelet"


def test_socket_absent_and_not_writable(tmp_path: Path) -> None:
    with pytest.raises(KubeletError, match="kubelet socket absent"):
        KubeletClient(str(tmp_path / "nope.sock")).list()
    if os.geteuid() != 0:
        s = tmp_path / "ro.sock"
        s.touch(mode=0o400)
        with pytest.raises(KubeletError, match="permission denied"):
            KubeletClient(str(s)).list()


def test_grpc_missing_says_how_to_install(kubelet: FakeKubelet, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "grpc", None)
    with pytest.raises(KubeletError, match=r"pip install neuron-top\[k8s\]"):
        KubeletClient(kubelet.path).list()


def test_once_json_asks_the_kubelet_once_before_printing(kubelet: FakeKubelet, capsysbinary) -> None:
    import json
    import shlex
    import sys

    from neuron_top.cli.main import main

    kubelet.pods = [pod("train-0", "ml", ("worker", {CORE: ["0", "1"]}))]
    emit = shlex.join([sys.executable, "-m", "neuron_top", "demo", "--emit", "--count", "1", "--instance",
                       "trn1.32xlarge", "--seed", "1"])
    assert main(["--command", emit, "--json", "--kubelet-socket", kubelet.path]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    assert doc["pods"]["source"] == "kubelet"
    assert doc["pods"]["cores"]["0"] == {"namespace": "ml", "pod": "train-0", "container": "worker",
                                         "source": "kubelet"}
    assert main(["--command", emit, "--json", "--kubelet-socket", kubelet.path, "--no-k8s"]) == 0
    assert json.loads(capsysbinary.readouterr().out)["pods"]["source"] is None


def test_once_record_asks_the_kubelet_once_for_the_recording_and_the_output(kubelet: FakeKubelet,
                                                                           capsysbinary) -> None:
    """``--once --record FILE`` asked the kubelet before the report (for the recording) and again after it (for
    the output): two reads for one report, and two answers that could differ. One read (List and
    GetAllocatableResources) now serves both, as without ``--record``."""
    import json
    import shlex
    import sys
    import tempfile

    from neuron_top.cli.main import main
    from neuron_top.k8s.model import attribution_from_record
    from neuron_top.recording.index import open_recording

    kubelet.pods = [pod("train-0", "ml", ("worker", {CORE: ["0", "1"]}))]
    emit = shlex.join([sys.executable, "-m", "neuron_top", "demo", "--emit", "--count", "1", "--instance",
                       "trn1.32xlarge", "--seed", "1"])
    assert main(["--command", emit, "--json", "--kubelet-socket", kubelet.path]) == 0
    one_read = kubelet.calls
    assert one_read == 2  # List, GetAllocatableResources
    capsysbinary.readouterr()
    path = Path(tempfile.mkdtemp(prefix="nt-rec-")) / "once.jsonl"
    kubelet.calls = 0
    assert main(["--command", emit, "--json", "--record", str(path), "--kubelet-socket", kubelet.path]) == 0
    assert kubelet.calls == one_read
    printed = json.loads(capsysbinary.readouterr().out)["pods"]
    assert printed["source"] == "kubelet" and printed["cores"]["1"]["pod"] == "train-0"
    with open_recording(path) as index:
        index.wait()
        raw = json.loads(index.get(0))["neuron_top_pods"]
    recorded = attribution_from_record(json.dumps(raw).encode())
    assert recorded is not None and recorded.source == "kubelet" and recorded.cores[1].pod == "train-0"


def test_selection_filter_matches_pod_and_namespace() -> None:
    from neuron_top.k8s.model import Attribution
    from neuron_top.selection import Selection
    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import generate

    snap = snapshot_from(generate("trn1.32xlarge", 3, 1)[0], 1.0)
    a = snap.apps[0]
    snap = snap.with_attribution(Attribution("kubelet", cores=dict.fromkeys(snap.cores_of(a),
                                                                             PodRef.of("team-x", "job-7"))))
    sel = Selection("team-x")
    assert [v.pid for v in sel.visible(snap)] == [a.pid]
    sel.set_filter("^team-x/job-7$")
    assert [v.pid for v in sel.visible(snap)] == [a.pid]


def test_the_thread_follows_pods_between_polls_and_stops(kubelet: FakeKubelet) -> None:
    kubelet.pods = [pod("a", "ns", ("c", {CORE: ["0"]}))]
    w = PodWatcher(kubelet.path, interval=0.2).start()

    def wait_for(pods: set[str]) -> None:
        deadline = time.monotonic() + 10
        while {r.pod for r in w.current().cores.values()} != pods:
            assert time.monotonic() < deadline, w.current()
            time.sleep(0.02)

    wait_for({"a"})
    kubelet.pods = [pod("b", "ns", ("c", {CORE: ["1"]})), pod("c", "ns", ("c", {DEV: ["3"]}))]
    wait_for({"b"})  # device ids are expanded when resolved, not here
    assert set(w.current().devices) == {3}
    w.close()
    assert w._thread is not None
    w._thread.join(timeout=5)
    assert not w._thread.is_alive()


def test_an_absent_socket_is_not_news_off_kubernetes(tmp_path: Path) -> None:
    quiet = PodWatcher(str(tmp_path / "none.sock"), host_root=str(tmp_path), announce_absent=False).refresh()[0]
    assert quiet.note == "" and resolve(quiet, 2, {}).status() == ""
    loud = PodWatcher(str(tmp_path / "none.sock"), host_root=str(tmp_path)).refresh()[0]
    assert "kubelet socket absent" in resolve(loud, 2, {}).status()


def test_a_kubelet_that_is_down_says_why_within_the_line(tmp_path: Path) -> None:
    """A kubelet restarting leaves its socket file with nobody listening. gRPC's sentence names the socket twice
    before its reason, and cut to 160 characters the header read "... connect failed: addr: unix:/var/lib/kub…"."""
    import socket
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="nt-k8s-"), "kubelet.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.close()  # the file stays: connecting to it is refused
    with pytest.raises(KubeletError) as info:
        KubeletClient(path, timeout=5).list()
    assert info.value.code == "UNAVAILABLE"
    assert str(info.value) == f"kubelet unavailable: connection refused: {path} (is the kubelet running?)"


def test_grpc_writes_nothing_on_the_terminal_when_the_kubelet_goes_away() -> None:
    """gRPC's C core logged "I1129 ... chttp2_transport.cc ... Got goaway" on file descriptor 2 when the kubelet
    stopped, written over the dashboard. The client runs in a fresh interpreter, as the app does."""
    import subprocess
    import sys
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="nt-k8s-"), "kubelet.sock")
    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"} | {"PYTHONPATH": root}
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from tests.kubelet_server import FakeKubelet; "
         "k = FakeKubelet(sys.argv[1]); print('ready', flush=True); sys.stdin.read(); k.stop()", path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=root)
    client: subprocess.Popen[str] | None = None
    try:
        assert server.stdout is not None and server.stdout.readline() == "ready\n"
        client = subprocess.Popen(
            [sys.executable, "-c", "import sys; from neuron_top.k8s.kubelet import KubeletClient, KubeletError; "
             "c = KubeletClient(sys.argv[1], timeout=5); c.list(); print('ok', flush=True); sys.stdin.readline()\n"
             "try:\n    c.list()\nexcept KubeletError as e:\n    print(e.code, flush=True)", path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
        assert client.stdout is not None and client.stdout.readline() == "ok\n", client.communicate(timeout=30)
        server.communicate("", timeout=30)  # stops: the client's connection gets GOAWAY
        out, err = client.communicate("\n", timeout=30)
    finally:
        for p in (server, client):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    assert out.strip() in ("UNAVAILABLE", "ABSENT")
    assert err == ""


def test_a_dra_node_does_not_say_every_core_is_held(kubelet: FakeKubelet) -> None:
    """With the Neuron DRA driver there is no device plugin: GetAllocatableResources names no Neuron resource
    (the devices are in ResourceSlices), and the answer read as "the node offers no core", so --json said
    "free_cores": [] (none free) for the node's idle devices. Unknown is what is known."""
    kubelet.pods = [pod("dra", "new", ("main", {}), claims=["neurondevice3"])]
    kubelet.offered = {"cpu": ["0", "1"]}
    m = resolve(PodWatcher(kubelet.path).refresh()[0], cores_per_device=2, app_cores={})
    assert sorted(m.cores) == [6, 7] and m.offered is None and m.free is None
    kubelet.offered = {CORE: []}  # a device plugin that offers nothing does say so
    m = resolve(PodWatcher(kubelet.path).refresh()[0], cores_per_device=2, app_cores={})
    assert m.offered == frozenset() and m.free == ()


def test_a_socket_path_that_is_a_folder_or_a_file_says_so(tmp_path: Path) -> None:
    """``--kubelet-socket /var/lib/kubelet/pod-resources`` (the folder, not kubelet.sock in it) said "connection
    refused", as a kubelet that is down does."""
    (tmp_path / "file").write_text("")
    for path, what in ((tmp_path, "is a directory"), (tmp_path / "file", "is not a socket")):
        with pytest.raises(KubeletError) as info:
            KubeletClient(str(path), timeout=3).list()
        assert info.value.code == "NOT_SOCKET" and what in str(info.value) and "kubelet.sock" in str(info.value)

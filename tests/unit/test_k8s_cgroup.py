"""A runtime's pod from /proc/<pid>/cgroup and the kubelet's log folders, in trees under --host-root."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_top.k8s import PodWatcher, resolve
from neuron_top.k8s.cgroup import container_of_pid, pod_of_pid
from neuron_top.k8s.kubelet import KubeletClient

UID = "3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8"
CID = "ab" * 32

CGROUPS = {
    "v2 systemd containerd": f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                             f"{UID.replace('-', '_')}.slice/cri-containerd-{CID}.scope\n",
    "v2 cgroupfs": f"0::/kubepods/burstable/pod{UID}/{CID}\n",
    "v2 systemd cri-o": f"0::/kubepods.slice/kubepods-pod{UID.replace('-', '_')}.slice/crio-{CID}.scope\n",
    "v1 cgroupfs": (f"12:pids:/kubepods/besteffort/pod{UID}/{CID}\n11:cpu,cpuacct:/kubepods/besteffort/pod{UID}/{CID}\n"
                    "1:name=systemd:/\n"),
    "v1 systemd": (f"5:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                   f"{UID.replace('-', '_')}.slice/cri-containerd-{CID}.scope\n0::/\n"),
}


def host(tmp_path: Path, cgroup: str, pod: str = "train-0", ns: str = "ml", containers: tuple[str, ...] = ("worker",
         "sidecar")) -> Path:
    (tmp_path / "proc" / "4242").mkdir(parents=True)
    (tmp_path / "proc" / "4242" / "cgroup").write_text(cgroup)
    for c in containers:
        (tmp_path / "var" / "log" / "pods" / f"{ns}_{pod}_{UID}" / c).mkdir(parents=True)
    logs = tmp_path / "var" / "log" / "containers"
    logs.mkdir(parents=True)
    (logs / f"{pod}_{ns}_worker-{CID}.log").touch()
    (logs / f"{pod}_{ns}_sidecar-{'cd' * 32}.log").touch()
    return tmp_path


@pytest.mark.parametrize("kind", list(CGROUPS))
def test_every_cgroup_layout_names_the_pod_and_container(tmp_path: Path, kind: str) -> None:
    root = str(host(tmp_path, CGROUPS[kind]))
    assert container_of_pid(4242, root) == (UID, CID)
    ref = pod_of_pid(4242, root)
    assert ref is not None and (ref.namespace, ref.pod, ref.container, ref.source) == ("ml", "train-0", "worker",
                                                                                         "cgroup")


def test_not_in_a_pod_or_gone_is_none(tmp_path: Path) -> None:
    root = str(host(tmp_path, "0::/user.slice/user-1000.slice/session-2.scope\n"))
    assert pod_of_pid(4242, root) is None
    assert pod_of_pid(999999, root) is None
    assert pod_of_pid(4242, str(tmp_path / "nothing")) is None


def test_pod_level_process_with_one_container_takes_its_name(tmp_path: Path) -> None:
    root = str(host(tmp_path, f"0::/kubepods/pod{UID}\n", containers=("only",)))
    ref = pod_of_pid(4242, root)
    assert ref is not None and ref.container == "only"


def test_watcher_falls_back_to_cgroups_when_the_socket_is_absent(tmp_path: Path) -> None:
    root = str(host(tmp_path, CGROUPS["v2 cgroupfs"]))
    w = PodWatcher(client=KubeletClient(str(tmp_path / "absent.sock")), host_root=root)
    w.want_pids([4242, 7])
    att, _ = w.refresh()
    assert att.source == "cgroup" and "kubelet socket absent" in att.note
    m = resolve(att, 2, {4242: [2, 3], 7: [4]})
    assert m.source == "cgroup" and m.apps[4242].pod == "train-0" and 7 not in m.apps
    assert {c: r.pod for c, r in m.cores.items()} == {2: "train-0", 3: "train-0"}
    assert m.status() == "pods: cgroup, 1 with Neuron cores (kubelet socket absent: " + str(tmp_path / "absent.sock") + ")"


def test_untrusted_names_are_kept_literal_and_safe(tmp_path: Path) -> None:
    # the folder name is the only source of the names here: markup and an escape sequence must survive as text
    bad = "[red]x\x1b[2J" + "y" * 80  # a file name holds at most 255 bytes
    root = str(host(tmp_path, CGROUPS["v2 cgroupfs"], pod=bad, ns="[b]ns"))
    ref = pod_of_pid(4242, root)
    assert ref is not None
    assert ref.namespace == "[b]ns" and ref.pod.startswith("[red]x\\x1b[2J") and "\x1b" not in ref.pod


def test_monitor_map_is_the_last_resort() -> None:
    from neuron_top.k8s.model import Attribution, PodRef

    nm = {0: PodRef.of("ns", "from-monitor", "c", "neuron-monitor")}
    assert resolve(None, 2, {}, nm).source == "neuron-monitor"
    assert resolve(Attribution(note="kubelet socket absent: x"), 2, {}, nm).cores[0].pod == "from-monitor"
    kubelet = Attribution("kubelet", cores={1: PodRef.of("ns", "k", "c", "kubelet")})
    m = resolve(kubelet, 2, {}, nm)
    assert m.source == "kubelet" and {c: r.pod for c, r in m.cores.items()} == {1: "k"}


def test_once_json_behind_host_root_finds_runtimes_pods_by_cgroup(tmp_path: Path, capsysbinary) -> None:
    import json
    import shlex
    import sys

    from neuron_top.cli.main import main
    from neuron_top.snapshot import snapshot_from
    from neuron_top.sources.demo import generate

    report = generate("trn1.32xlarge", 1, 1)[0]
    pid = snapshot_from(report, 0.0).apps[0].pid
    root = host(tmp_path / "host", CGROUPS["v1 systemd"])
    (root / "proc" / "4242").rename(root / "proc" / str(pid))
    emit = shlex.join([sys.executable, "-m", "neuron_top", "demo", "--emit", "--count", "1", "--instance",
                       "trn1.32xlarge", "--seed", "1"])
    assert main(["--command", emit, "--json", "--host-root", str(root)]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    app = next(a for a in doc["apps"] if a["pid"] == pid)
    assert app["pod"] == {"namespace": "ml", "pod": "train-0", "container": "worker", "source": "cgroup"}
    assert doc["pods"]["source"] == "cgroup"
    assert doc["pods"]["note"].startswith("kubelet socket absent: " + str(root))
    assert main(["--command", emit, "--json", "--host-root", str(tmp_path / "nope")]) == 2  # a clear usage error

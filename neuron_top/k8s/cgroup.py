"""A runtime's pod from the node's files, without the kubelet's API: ``/proc/<pid>/cgroup`` names the pod UID and
the container id; the kubelet's log folders name the pod, its namespace and the container.

Works under cgroup v1 (one line per controller) and v2 (``0::``), with the systemd driver
(``kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope``, ``crio-<id>.scope``) and the cgroupfs
one (``/kubepods/burstable/pod<uid>/<id>``). Every path is under ``host_root`` (``--host-root``: the host's ``/``
mounted in a container, as node_exporter's ``--path.rootfs``). Reading fails quietly: no pod is the answer.
"""

from __future__ import annotations

import os
import re

from neuron_top.k8s.model import PodRef

__all__ = ["container_of_pid", "pod_names", "pod_of_pid"]

_POD_UID = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")
_CONTAINER = re.compile(r"(?:cri-containerd-|crio-|docker-|containerd-)?([0-9a-f]{64})(?:\.scope)?\Z")


def _path(host_root: str, *parts: str) -> str:
    return os.path.join(host_root or "/", *parts)


def container_of_pid(pid: int, host_root: str = "/") -> tuple[str, str] | None:
    """(pod UID, container id) of a process from its cgroup file; None when it is not in a Kubernetes pod, gone,
    or unreadable. The container id is "" when the path names only the pod (a pod-level process)."""
    try:
        with open(_path(host_root, "proc", str(pid), "cgroup"), encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return None
    for line in text.splitlines():
        path = line.split(":", 2)[-1]
        if "kubepods" not in path:
            continue
        m = _POD_UID.search(path)
        if not m:
            continue
        uid = m.group(1).replace("_", "-")
        c = _CONTAINER.search(path.rstrip("/").rsplit("/", 1)[-1])
        return uid, c.group(1) if c else ""
    return None


def pod_names(uid: str, container_id: str, host_root: str = "/") -> PodRef | None:
    """The pod with this UID, from the kubelet's log folders: ``/var/log/pods/<ns>_<pod>_<uid>/<container>/``,
    and the container's name from ``/var/log/containers/<pod>_<ns>_<container>-<id>.log`` (else the pod's only
    container). None when the pod has no log folder here."""
    pods_dir = _path(host_root, "var", "log", "pods")
    try:
        entries = os.listdir(pods_dir)
    except OSError:
        return None
    suffix = "_" + uid
    for entry in entries:
        if not entry.endswith(suffix):
            continue
        parts = entry[: -len(suffix)].split("_", 1)
        if len(parts) != 2:
            continue
        namespace, pod = parts
        return PodRef.of(namespace, pod, _container_name(host_root, entry, namespace, pod, container_id), "cgroup")
    return None


def _container_name(host_root: str, pod_dir: str, namespace: str, pod: str, container_id: str) -> str:
    if container_id:
        try:
            for name in os.listdir(_path(host_root, "var", "log", "containers")):
                prefix = f"{pod}_{namespace}_"
                if name.startswith(prefix) and name.endswith(f"-{container_id}.log"):
                    return name[len(prefix): -len(container_id) - 5]
        except OSError:
            pass
    try:
        names = [n for n in os.listdir(_path(host_root, "var", "log", "pods", pod_dir))
                 if os.path.isdir(_path(host_root, "var", "log", "pods", pod_dir, n))]
    except OSError:
        return ""
    return names[0] if len(names) == 1 else ""


def pod_of_pid(pid: int, host_root: str = "/") -> PodRef | None:
    """The pod a process runs in, or None."""
    found = container_of_pid(pid, host_root)
    return pod_names(*found, host_root=host_root) if found is not None else None

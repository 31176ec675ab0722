"""deploy/kubernetes/ agrees with the program: the DaemonSet's args parse, the socket is mounted read-only where
--host-root makes neuron-top look for it, the PodMonitor keeps the workload's pod labels."""

from __future__ import annotations

import json
import os
import re

from neuron_top.cli.export_cmd import export_parser
from neuron_top.k8s.kubelet import DEFAULT_SOCKET
from neuron_top.k8s.watcher import socket_path
from tests.conftest import ROOT

DEPLOY = ROOT / "deploy" / "kubernetes"


def test_daemonset_args_parse_and_mount_the_socket_read_only_where_it_is_looked_for() -> None:
    text = (DEPLOY / "neuron-top-exporter.yaml").read_text()
    args = json.loads(re.search(r"^\s*args: (\[.*\])$", text, re.M).group(1))  # type: ignore[union-attr]
    assert args[0] == "export"
    ns = export_parser().parse_args(args[1:])
    assert ns.pod_labels and ns.host_root == "/host" and not ns.no_k8s
    looked_for = os.path.dirname(socket_path(ns.kubelet_socket, ns.host_root))
    mount = re.search(r"\{name: pod-resources, mountPath: (\S+), readOnly: true\}", text)
    assert mount is not None and mount.group(1) == looked_for
    assert f"path: {os.path.dirname(DEFAULT_SOCKET)}," in text
    for path in ("/proc", "/var/log/pods", "/var/log/containers"):
        assert f"mountPath: /host{path}, readOnly: true" in text
    assert re.search(r"^\s*hostPID: true$", text, re.M)


def test_podmonitor_scrapes_the_daemonset_port_with_honor_labels() -> None:
    pm = (DEPLOY / "podmonitor.yaml").read_text()
    ds = (DEPLOY / "neuron-top-exporter.yaml").read_text()
    assert re.search(r"^\s*honorLabels: true$", pm, re.M)
    port = re.search(r"- port: (\S+)", pm).group(1)  # type: ignore[union-attr]
    assert f"{{name: {port}, containerPort: 8000}}" in ds
    assert "app.kubernetes.io/name: neuron-top-exporter" in pm

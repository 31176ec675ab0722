"""Which Kubernetes pod holds each NeuronCore, found on the node itself (no UI imports).

* ``model``: the values (``PodRef``, ``Attribution``, ``PodMap``) and the one rule that combines the sources
  (``resolve``): the kubelet's PodResources allocation, else each runtime's cgroup, else neuron-monitor's own
  ``neuron_k8s_info``.
* ``kubelet`` + ``wire``: the PodResources v1 client (grpcio, optional: ``pip install neuron-top[k8s]``) and the
  hand decoder of its messages (``podresources.proto`` is the contract).
* ``cgroup``: ``/proc/<pid>/cgroup`` and ``/var/log/pods`` under ``--host-root``.
* ``watcher``: ``PodWatcher``, the background refresh every 10 s; ``current()`` never waits.
"""

from neuron_top.k8s.model import Attribution, PodMap, PodRef, PodUsage, attribute, resolve
from neuron_top.k8s.watcher import PodWatcher, socket_path

__all__ = ["Attribution", "PodMap", "PodRef", "PodUsage", "PodWatcher", "attribute", "resolve", "socket_path"]

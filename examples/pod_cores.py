"""Which Kubernetes pod holds each NeuronCore, and which of its cores sit idle: one report, the node asked once.

    python examples/pod_cores.py --demo trn2.48xlarge                       # the simulator's neuron_k8s_info
    python examples/pod_cores.py --kubelet-socket /var/lib/kubelet/pod-resources/kubelet.sock
    neuron-monitor | python examples/pod_cores.py                           # reports on stdin, this node's kubelet

Only the headless library is used: a ``PodWatcher`` asks the kubelet's PodResources API (else traces the runtimes'
cgroups), the feed hands each snapshot its answer, and ``Snapshot.pod_usage`` is what the pods screen (``P``),
``--once`` and the exporter read. Needs ``pip install 'neuron-top[k8s]'`` for the kubelet; without it, or off
Kubernetes, the line on stderr says why and neuron-monitor's own ``neuron_k8s_info`` is used when present.
"""

from __future__ import annotations

import argparse
import sys

from neuron_top import DemoSource, Feed, PodWatcher, Report, Source, choose_live_source
from neuron_top.fmt import core_ranges, pct
from neuron_top.k8s import socket_path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--demo", metavar="INSTANCE", help="the simulator instead of neuron-monitor")
    p.add_argument("--kubelet-socket", metavar="PATH")
    p.add_argument("--host-root", metavar="DIR")
    args = p.parse_args()
    source: Source = (DemoSource(args.demo, seed=1, sleep=lambda _s: None) if args.demo
                      else choose_live_source().source)
    watcher = PodWatcher(socket_path(args.kubelet_socket, args.host_root), args.host_root or "/")
    watcher.settle()  # asked once, here: no background thread for one report
    feed = Feed(source, pods=watcher)
    try:
        snap = next((e.snapshot for e in feed.events() if isinstance(e, Report)), None)
    finally:
        feed.close()
    if snap is None:
        print("no report", file=sys.stderr)
        return 1
    print(snap.pods.status() or "pods: none", file=sys.stderr)
    for u in snap.pod_usage:
        idle = f"  idle {core_ranges(u.idle)}" if u.idle else ""
        print(f"{u.ref.name}  cores {core_ranges(u.cores) or '-'}  util {pct(u.util)}{idle}")
    free = snap.pods.free
    if free:
        print(f"not allocated: cores {core_ranges(free)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Simulated pods for ``neuron-top demo --pods``: what a kubelet would answer for the demo's apps, so a newcomer
sees pod attribution (the pods screen, the core grid by pod, the exporter's pod families) without a cluster.

Each visible app is a pod holding its cores; one more pod, ``research/notebook-0``, holds the last device whenever
no app runs on it: the allocated-but-idle case. The node offers every device.
"""

from __future__ import annotations

from collections.abc import Iterable

from neuron_top.k8s.model import Attribution, PodRef
from neuron_top.sources.demo.source import DemoSource

__all__ = ["IDLE_POD", "DemoPods"]

IDLE_POD = PodRef("research", "notebook-0", "jupyter", "demo")
"""The pod that holds a device and runs nothing on it."""


class DemoPods:
    """A ``feed.PodSource`` over a ``DemoSource``'s world; read on the feed's thread, as the world is."""

    def __init__(self, source: DemoSource) -> None:
        self.world = source._world

    def current(self) -> Attribution:
        profile = self.world.profile
        cores: dict[int, PodRef] = {}
        for app in self.world.apps:
            if app.visible:
                e = app.k8s_entry()
                ref = PodRef.of(e["namespace"], e["pod_name"], e["container_name"][0], "demo")
                cores.update(dict.fromkeys(app.cores, ref))
        devices: dict[int, PodRef] = {}
        last = profile.device_count - 1
        if last >= 0 and not any(c // profile.cores_per_device == last for c in cores):
            devices[last] = IDLE_POD
        return Attribution("demo", "", cores, devices, {}, None, frozenset(range(profile.device_count)),
                           len({r.key for r in cores.values()}) + len(devices))

    def want_pids(self, pids: Iterable[int]) -> None:
        pass  # the demo knows its pods

    def settle(self, ask: bool = True) -> Attribution:
        return self.current()

    def close(self) -> None:
        pass

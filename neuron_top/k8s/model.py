"""Which pod holds which NeuronCore: the values every output shares (no I/O, no UI imports).

The kubelet's answer (``Pod``: containers, device ids, DRA claims) becomes an ``Attribution`` (cores and whole
devices by pod, what the node offers) in ``attribute``; ``resolve`` then combines it with one report (its apps,
their cores and neuron-monitor's own ``neuron_k8s_info``) into the ``PodMap`` that panels, ``--once``, the
exporter and the fleet read. The order is the rule: the kubelet's allocation, else the pod of each runtime found
from its cgroup, else neuron-monitor's map.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from neuron_top.derived import BUSY_PERCENT
from neuron_top.textsafe import clean

__all__ = [
    "CORE_RESOURCES", "DEVICE_RESOURCES", "DRA_DRIVER", "RECORD_KEY", "Attribution", "Claim", "Container", "Pod",
    "PodMap", "PodRef", "PodUsage", "attribute", "attribution_from_record", "attribution_record", "resolve",
]

RECORD_KEY = "neuron_top_pods"
"""The key a recording adds to each report for the pods the node named when it arrived (``attribution_record``):
replay, ``--once`` and the exporter then see who held each core, as the live dashboard did."""
RECORDED = "as recorded"
"""The note an attribution read back from a recording carries (the header: "pods: kubelet, 3 ... (as recorded)")."""

CORE_RESOURCES = frozenset({"aws.amazon.com/neuroncore"})
"""Device plugin resources whose ids are NeuronCore indexes."""
DEVICE_RESOURCES = frozenset({"aws.amazon.com/neuron", "aws.amazon.com/neurondevice"})
"""Device plugin resources whose ids are whole Neuron devices (all their cores)."""
DRA_DRIVER = "neuron.aws.com"
"""The Neuron DRA driver's name in a claim; its devices are named ``neurondevice<N>``."""
_DRA_DEVICE = re.compile(r"neurondevice(\d{1,4})\Z")
NAME_LIMIT = 253
"""Kubernetes names are at most 253 characters; longer ones from a bad reply are cut."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One device of a DRA claim (``ClaimResource``)."""

    driver: str
    pool: str
    device: str


@dataclass(frozen=True, slots=True)
class Container:
    """One container's devices: (resource name, device ids) pairs, and its DRA claims."""

    name: str
    devices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True, slots=True)
class Pod:
    """One pod of the kubelet's ``List`` answer."""

    name: str
    namespace: str
    containers: tuple[Container, ...] = ()


@dataclass(frozen=True, slots=True, order=True)
class PodRef:
    """Who holds a core: names cleaned for display (control characters escaped, cut to 253 characters); never
    markup. ``source`` says how it was found: "kubelet", "cgroup", "neuron-monitor" or "demo"."""

    namespace: str
    pod: str
    container: str = ""
    source: str = ""

    @staticmethod
    def of(namespace: str, pod: str, container: str = "", source: str = "") -> PodRef:
        """A reference with its untrusted names made safe to show."""
        return PodRef(clean(namespace, NAME_LIMIT), clean(pod, NAME_LIMIT), clean(container, NAME_LIMIT), source)

    @property
    def key(self) -> tuple[str, str]:
        """(namespace, pod): a pod, whichever of its containers holds the core."""
        return (self.namespace, self.pod)

    @property
    def name(self) -> str:
        """``namespace/pod`` (the pod alone when there is no namespace)."""
        return f"{self.namespace}/{self.pod}" if self.namespace else self.pod

    def describe(self) -> str:
        """``namespace/pod [container] (via source)``: the drill-down screens' line."""
        cont = f" [{self.container}]" if self.container else ""
        via = f" (via {self.source})" if self.source else ""
        return f"{self.name}{cont}{via}"


def _index(s: str) -> int | None:
    return int(s) if s.isascii() and s.isdigit() and len(s) <= 4 else None


@dataclass(frozen=True, slots=True)
class Attribution:
    """What the node says (one refresh of ``PodWatcher``), before it meets a report.

    ``source`` is "kubelet" (the PodResources API answered), "cgroup" (runtimes' pids were traced to pods),
    "demo" (``demo --pods``: as the kubelet would answer) or "" (neither); ``note`` says why the kubelet was not used, or what went wrong last, for the header.
    """

    source: str = ""
    note: str = ""
    cores: Mapping[int, PodRef] = field(default_factory=dict)
    """NeuronCore index -> pod, from ``aws.amazon.com/neuroncore`` ids."""
    devices: Mapping[int, PodRef] = field(default_factory=dict)
    """Device index -> pod, from ``neuron``/``neurondevice`` ids and DRA claims (all the device's cores)."""
    pids: Mapping[int, PodRef] = field(default_factory=dict)
    """Runtime pid -> pod, from ``/proc/<pid>/cgroup``."""
    offered_cores: frozenset[int] | None = None
    """Cores the node offers (``GetAllocatableResources``); None when unknown."""
    offered_devices: frozenset[int] | None = None
    pods: int = 0
    """Pods the kubelet listed (any pod, with Neuron devices or not)."""
    ts: float = 0.0


def attribute(pods: Iterable[Pod], offered: Iterable[tuple[str, Iterable[str]]] | None = None, *,
              note: str = "", ts: float = 0.0) -> Attribution:
    """The kubelet's answer as an ``Attribution``: each Neuron core and device id, by the container that holds it.

    Args:
        pods: ``List``'s pods.
        offered: ``GetAllocatableResources``' (resource, ids), or None when it was not available.
    """
    cores: dict[int, PodRef] = {}
    devices: dict[int, PodRef] = {}
    n = 0
    for pod in pods:
        n += 1
        for c in pod.containers:
            ref = PodRef.of(pod.namespace, pod.name, c.name, "kubelet")
            for resource, ids in c.devices:
                target = cores if resource in CORE_RESOURCES else devices if resource in DEVICE_RESOURCES else None
                if target is None:
                    continue
                for s in ids:
                    i = _index(s)
                    if i is not None:
                        target[i] = ref
            for claim in c.claims:
                m = _DRA_DEVICE.match(claim.device) if claim.driver == DRA_DRIVER else None
                if m:
                    devices[int(m.group(1))] = ref
    oc: set[int] | None = None
    od: set[int] | None = None
    if offered is not None:
        oc, od = set(), set()
        named = False
        for resource, offered_ids in offered:
            target_set = oc if resource in CORE_RESOURCES else od if resource in DEVICE_RESOURCES else None
            if target_set is not None:
                named = True
                target_set.update(i for s in offered_ids if (i := _index(s)) is not None)
        if not named:  # no Neuron device plugin answered: what the node offers is unknown, not nothing. A DRA
            oc = od = None  # node offers its devices in ResourceSlices, which this API does not list
    return Attribution("kubelet", note, cores, devices, {}, frozenset(oc) if oc is not None else None,
                       frozenset(od) if od is not None else None, n, ts)


@dataclass(frozen=True, slots=True)
class PodUsage:
    """One pod's share of the node in one report (the pods screen, ``--once``, the exporter, the fleet)."""

    ref: PodRef
    """The pod (its first container's reference; ``containers`` has them all)."""
    containers: tuple[str, ...]
    cores: tuple[int, ...]
    util: float | None
    """Mean utilization of its cores, percent; None when no core of it is reported."""
    idle: tuple[int, ...]
    """Its cores that no runtime uses, or that ran at most 1% (``derived.BUSY_PERCENT``, the fleet's rule too):
    allocated but idle."""
    pids: tuple[int, ...]
    """The runtimes (apps) on its cores."""


@dataclass(frozen=True, slots=True)
class PodMap:
    """Who holds each core in one report, found once per snapshot (``Snapshot.pods``)."""

    cores: Mapping[int, PodRef]
    """Global NeuronCore index -> pod."""
    apps: Mapping[int, PodRef]
    """Runtime pid -> pod."""
    source: str
    """How most of it was found: "kubelet", "cgroup", "neuron-monitor", "demo", or "" (no attribution)."""
    note: str = ""
    """Why attribution is missing or partial (for the header), "" when all is well."""
    offered: frozenset[int] | None = None
    """Cores the node offers to pods (expanded from devices); None when unknown."""

    @property
    def free(self) -> tuple[int, ...] | None:
        """Offered cores no pod holds; None when what the node offers is unknown."""
        if self.offered is None:
            return None
        return tuple(sorted(self.offered - self.cores.keys()))

    def colours(self) -> dict[tuple[str, str], int]:
        """Each pod's colour index (0, 1, ...) in (namespace, pod) order: the grid by pod and its legend agree."""
        keys = sorted({r.key for r in self.cores.values()})
        return {k: i for i, k in enumerate(keys)}

    def by_device(self, cores_per_device: int) -> dict[int, tuple[PodRef, ...]]:
        """Device -> the pods on its cores, each once, in core order (the grid's column beside each device)."""
        out: dict[int, dict[tuple[str, str], PodRef]] = {}
        for core, ref in sorted(self.cores.items()):
            out.setdefault(core // max(cores_per_device, 1), {}).setdefault(ref.key, ref)
        return {d: tuple(refs.values()) for d, refs in out.items()}

    def status(self) -> str:
        """One line for the header: how attribution was found, or why not."""
        if self.source:
            pods = len({r.key for r in self.cores.values()} | {r.key for r in self.apps.values()})
            s = f"pods: {self.source}, {pods} with Neuron cores"
            return f"{s} ({self.note})" if self.note else s
        return f"pods: none ({self.note})" if self.note else ""

    def usage(self, util: Mapping[int, float | None], app_cores: Mapping[int, Iterable[int]]) -> tuple[PodUsage, ...]:
        """Each pod's cores, utilization and idle cores, sorted by namespace and pod.

        Args:
            util: core -> utilization percent (None: not reported), over all apps.
            app_cores: pid -> the cores that runtime uses.
        """
        by_pod: dict[tuple[str, str], list[int]] = {}
        first: dict[tuple[str, str], PodRef] = {}
        containers: dict[tuple[str, str], dict[str, None]] = {}
        for core, ref in sorted(self.cores.items()):
            by_pod.setdefault(ref.key, []).append(core)
            first.setdefault(ref.key, ref)
            containers.setdefault(ref.key, {})[ref.container] = None
        for ref in self.apps.values():
            by_pod.setdefault(ref.key, [])
            first.setdefault(ref.key, ref)
            containers.setdefault(ref.key, {})[ref.container] = None
        used = {c for cs in app_cores.values() for c in cs}
        out = []
        for key in sorted(by_pod):
            cores = tuple(by_pod[key])
            vals = [u for c in cores if (u := util.get(c)) is not None]
            idle = tuple(c for c in cores if c not in used or not (util.get(c) or 0.0) > BUSY_PERCENT)
            pids = tuple(sorted(p for p, r in self.apps.items() if r.key == key))
            out.append(PodUsage(first[key], tuple(c for c in containers[key] if c), cores,
                                sum(vals) / len(vals) if vals else None, idle, pids))
        return tuple(out)


def resolve(att: Attribution | None, cores_per_device: int, app_cores: Mapping[int, Iterable[int]],
            monitor_cores: Mapping[int, PodRef] | None = None,
            monitor_devices: Mapping[int, PodRef] | None = None) -> PodMap:
    """The one rule: the kubelet's allocation, else each runtime's cgroup pod on its cores, else neuron-monitor's
    ``neuron_k8s_info``.

    Args:
        att: the watcher's latest ``Attribution`` (None: attribution is off or not started).
        cores_per_device: to expand whole devices into cores (logical cores per device: LNC=2 halves it).
        app_cores: runtime pid -> the cores it uses, from the report.
        monitor_cores, monitor_devices: neuron-monitor's own maps, when the report carries them.
    """
    cores: dict[int, PodRef] = {}
    source = ""
    for d, ref in (monitor_devices or {}).items():
        cores.update(dict.fromkeys(range(d * cores_per_device, (d + 1) * cores_per_device), ref))
    cores.update(monitor_cores or {})
    if cores:
        source = "neuron-monitor"
    apps: dict[int, PodRef] = {}
    note = att.note if att is not None else ""
    offered: frozenset[int] | None = None
    if att is not None and att.pids:
        for pid, cs in app_cores.items():
            found = att.pids.get(pid)
            if found is not None:
                apps[pid] = found
                cores.update(dict.fromkeys(cs, found))
        if apps:
            source = att.source or "cgroup"
    if att is not None and att.source in ("kubelet", "demo"):
        cores = {}  # the kubelet is the authority: a core it does not list is held by no pod
        for d, held_by in att.devices.items():
            cores.update(dict.fromkeys(range(d * cores_per_device, (d + 1) * cores_per_device), held_by))
        cores.update(att.cores)
        source = att.source
        if att.offered_cores is not None or att.offered_devices is not None:
            offered = frozenset(att.offered_cores or ()) | frozenset(
                c for d in att.offered_devices or () for c in range(d * cores_per_device, (d + 1) * cores_per_device))
    for pid, cs in app_cores.items():
        if pid not in apps:
            held = Counter(r for c in cs if (r := cores.get(c)) is not None)
            if held:
                apps[pid] = held.most_common(1)[0][0]
    return PodMap(cores, apps, source, note, offered)


def _ref_out(r: PodRef) -> list[str]:
    return [r.namespace, r.pod, r.container, r.source]


def attribution_record(att: Attribution) -> bytes:
    """``att`` as the JSON object a recording keeps under ``RECORD_KEY``: refs as [namespace, pod, container,
    source], maps keyed by index, offered sets as sorted lists (null when unknown).

    >>> a = Attribution("kubelet", "", {0: PodRef("ml", "serve-0", "main", "kubelet")}, pods=1)
    >>> attribution_record(a)
    b'{"source":"kubelet","note":"","ts":0.0,"pods":1,"cores":{"0":["ml","serve-0","main","kubelet"]},"devices":{},"pids":{},"offered_cores":null,"offered_devices":null}'
    >>> attribution_from_record(attribution_record(a)).cores[0].describe()
    'ml/serve-0 [main] (via kubelet)'
    """
    doc = {
        "source": att.source, "note": att.note, "ts": att.ts, "pods": att.pods,
        "cores": {str(k): _ref_out(v) for k, v in sorted(att.cores.items())},
        "devices": {str(k): _ref_out(v) for k, v in sorted(att.devices.items())},
        "pids": {str(k): _ref_out(v) for k, v in sorted(att.pids.items())},
        "offered_cores": None if att.offered_cores is None else sorted(att.offered_cores),
        "offered_devices": None if att.offered_devices is None else sorted(att.offered_devices),
    }
    return msgspec.json.encode(doc)


def _refs_in(obj: Any) -> dict[int, PodRef]:
    out: dict[int, PodRef] = {}
    if not isinstance(obj, dict):
        return out
    for k, v in obj.items():
        i = _index(k) if isinstance(k, str) else None
        if i is None or not isinstance(v, list) or not 2 <= len(v) <= 4 or not all(isinstance(x, str) for x in v):
            continue
        out[i] = PodRef.of(*v)  # names from a file: cleaned again, as the kubelet's are
    return out


def _indexes_in(obj: Any) -> frozenset[int] | None:
    if not isinstance(obj, list):
        return None
    return frozenset(x for x in obj if isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 10_000)


_last_read: tuple[bytes, Attribution | None] = (b"", None)
"""The last record read and its answer: a recording repeats one record for many reports in a row."""


def attribution_from_record(raw: bytes) -> Attribution | None:
    """An ``Attribution`` back from ``attribution_record``'s JSON (its note says "as recorded"); None when it is not
    one. Every field is checked: a recording is a file anyone can edit."""
    global _last_read
    if raw == _last_read[0]:
        return _last_read[1]
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        doc = None
    att = None
    if isinstance(doc, dict):
        def text(key: str, limit: int) -> str:
            v = doc.get(key)
            return clean(v, limit) if isinstance(v, str) else ""

        ts, pods = doc.get("ts"), doc.get("pods")
        att = Attribution(
            text("source", 20), RECORDED if not text("note", 200) else f"{RECORDED}; {text('note', 200)}",
            _refs_in(doc.get("cores")), _refs_in(doc.get("devices")), _refs_in(doc.get("pids")),
            _indexes_in(doc.get("offered_cores")), _indexes_in(doc.get("offered_devices")),
            pods if isinstance(pods, int) and not isinstance(pods, bool) and pods >= 0 else 0,
            float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0)
    _last_read = (raw, att)
    return att

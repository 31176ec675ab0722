"""The memory breakdown tree (device -> core -> model -> category), as AWS neuron-top's "Memory Usage Details".

Headless so the arithmetic is testable without a terminal. The rule, from the neuron-top user guide: every parent
shows the sum of its children. ``neuroncore_memory_usage`` is what the runtime allocated on a core in total
(models included), so a core's own category rows are what is left after its models' shares are taken out;
a row that would be zero is dropped. A subgraph's ``neuroncore_index`` is the core within its device (the
neuron-monitor guide's example has core 0 on device 12), so the global core is device x cores-per-device + index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from neuron_top.snapshot import DEVICE_CATEGORIES, HOST_CATEGORIES, AppView, ModelView, Snapshot, SubgraphView
from neuron_top.textsafe import clean

__all__ = [
    "CATEGORY_LABELS", "Key", "ModelCache", "ModelShare", "Node", "build_tree", "category_label",
    "expandable", "global_core", "walk",
]

CATEGORY_LABELS = {
    "tensors": "Tensors",
    "constants": "Constants",
    "model_code": "Model Code",
    "runtime_memory": "Runtime Memory",
    "model_shared_scratchpad": "Model Scratchpad",
    "dma_buffers": "DMA Buffers",
    "application_memory": "App. Memory",
}
_ORDER = (*DEVICE_CATEGORIES, *(c for c in HOST_CATEGORIES if c not in DEVICE_CATEGORIES))

Key = tuple[object, ...]


class Node:
    """One row of the tree. Read-only after ``build_tree``; a model's category rows are made on first use
    (a 32-runtime machine has hundreds of models, and most reports nobody opens them)."""

    __slots__ = ("_cats", "_children", "device", "full_name", "host", "key", "kind", "label", "model_id")

    def __init__(self, key: Key, kind: str, label: str, device: int, host: int, model_id: str = "",
                 children: tuple[Node, ...] = (), full_name: str = "",
                 cats: tuple[Mapping[str, int], Mapping[str, int]] | None = None) -> None:
        self.key = key
        """Stable across reports: ("dev", 3), ("core", 12), ("model", pid, model_id, uuid, core),
        ("cat", parent key, name)."""
        self.kind = kind
        """"dev", "core", "model" or "cat"."""
        self.label = label
        """Already cleaned (printable)."""
        self.device = device
        self.host = host
        self.model_id = model_id
        self.full_name = full_name
        """Models: the whole (cleaned) name; ``label`` is its last path component."""
        self._children: tuple[Node, ...] | None = children if cats is None else None
        self._cats = cats

    @property
    def children(self) -> tuple[Node, ...]:
        if self._children is None:
            dev, host = self._cats or ({}, {})
            self._children = _category_nodes(self.key, dev, host)
        return self._children

    @property
    def has_children(self) -> bool:
        if self._children is not None:
            return bool(self._children)
        dev, host = self._cats or ({}, {})
        return any(dev.values()) or any(host.values())

    def __repr__(self) -> str:
        return f"Node({self.key!r}, {self.label!r}, device={self.device}, host={self.host})"


def category_label(name: str) -> str:
    """A memory category's name as the tree shows it (its known label, else the name, cleaned and cut)."""
    return CATEGORY_LABELS.get(name) or clean(name, 40)


def global_core(sg: SubgraphView, cores_per_device: int) -> int | None:
    """The global core of a subgraph (its ``neuroncore_index`` is the core within its device)."""
    return sg.global_core(cores_per_device)


def _category_nodes(parent: Key, dev: Mapping[str, int], host: Mapping[str, int]) -> tuple[Node, ...]:
    names = [n for n in _ORDER if n in dev or n in host]
    names += sorted(n for n in {*dev, *host} if n not in _ORDER)
    out = []
    for n in names:
        d, h = dev.get(n, 0), host.get(n, 0)
        if d or h:
            out.append(Node(("cat", parent, n), "cat", category_label(n), d, h))
    return tuple(out)


def _add(into: dict[str, int], cats: Mapping[str, int]) -> None:
    for k, v in cats.items():
        into[k] = into.get(k, 0) + v


def _model_name(m: ModelView) -> str:
    base = m.name.rstrip("/").rsplit("/", 1)[-1]
    return base or m.name or "?"


ModelShare = tuple[int, ModelView, dict[str, int], dict[str, int], int, int]
"""One model's share of one core: (pid, model, device categories, host categories, device bytes, host bytes)."""


class ModelCache:
    """Each app's model shares per core, with the raw ``loaded_models`` JSON they came from, kept between
    reports by the tree's owner. Why: the tree is rebuilt whenever any app's memory changes (a model loading
    moves its numbers for several reports); each rebuild decoded and walked the models of every app (~3 ms on a
    trn2 with 8 apps) though only the app that changed had new ones."""

    def __init__(self) -> None:
        self._apps: dict[int, tuple[object, int, dict[int, list[ModelShare]], str | None]] = {}
        self._cores: dict[int, tuple[int, Mapping[str, int], tuple[ModelShare, ...], Node | None]] = {}
        """Per core, the node ``build_tree`` made last and what it was made from (cores per device, its
        categories, its model shares): a core whose memory and models did not change keeps its node. Most
        rebuilds are for one app's memory moving; the other cores' nodes were made again each time."""

    def shares(self, a: AppView, cpd: int) -> dict[int, list[ModelShare]]:
        raw = a.memory.loaded_models
        hit = self._apps.get(a.pid)
        if hit is not None and hit[1] == cpd and hit[0] == raw:
            a.models_error = hit[3]  # as if its models had been decoded again (the header lists the error)
            return hit[2]
        out = _model_shares(a, cpd)
        self._apps[a.pid] = (raw, cpd, out, a.models_error)
        return out

    def keep_only(self, pids: set[int]) -> None:
        for pid in self._apps.keys() - pids:
            del self._apps[pid]


def _model_shares(a: AppView, cpd: int) -> dict[int, list[ModelShare]]:
    out: dict[int, list[ModelShare]] = {}
    for m in a.models:
        per_core: dict[int, list[SubgraphView]] = {}
        for sg in m.subgraphs:
            core = global_core(sg, cpd)
            if core is not None:
                per_core.setdefault(core, []).append(sg)
        for core, sgs in per_core.items():
            dcat: dict[str, int] = {}
            hcat: dict[str, int] = {}
            for sg in sgs:
                _add(dcat, sg.device_categories)
                _add(hcat, sg.host)
            out.setdefault(core, []).append(
                (a.pid, m, dcat, hcat, sum(s.device_bytes for s in sgs), sum(s.host_bytes for s in sgs)))
    return out


def build_tree(snap: Snapshot, app: AppView, cache: ModelCache | None = None) -> tuple[Node, ...]:
    """Device nodes for ``app`` (every app merged when it is the "all" aggregate), sorted by index. ``cache``
    saves decoding again the models of apps whose ``loaded_models`` did not change since the last call, and
    making again the nodes of cores whose memory and models did not change."""
    cpd = snap.cores_per_device
    apps = snap.apps if app.is_all else (app,)
    models: dict[int, list[ModelShare]] = {}
    for a in apps:
        for core, shares in (cache.shares(a, cpd) if cache is not None else _model_shares(a, cpd)).items():
            models.setdefault(core, []).extend(shares)
    if cache is not None and app.is_all:
        cache.keep_only({a.pid for a in apps})
    core_memory = app.core_memory
    devices: dict[int, list[Node]] = {}
    kept = cache._cores if cache is not None else {}
    made: dict[int, tuple[int, Mapping[str, int], tuple[ModelShare, ...], Node | None]] = {}
    for core in sorted({*core_memory, *models}):
        cats = core_memory.get(core, {})
        core_shares = tuple(models.get(core, ()))
        hit = kept.get(core)
        if hit is not None and hit[0] == cpd and hit[1] == cats and len(hit[2]) == len(core_shares) \
                and all(a is b for a, b in zip(hit[2], core_shares, strict=True)):
            node = hit[3]
        else:
            node = _core_node(core, cpd, cats, core_shares)
        made[core] = (cpd, cats, core_shares, node)
        if node is not None:
            devices.setdefault(core // cpd, []).append(node)
    if cache is not None:
        cache._cores = made
    return tuple(Node(("dev", d), "dev", f"ND {d}", sum(c.device for c in cores), sum(c.host for c in cores),
                      children=tuple(cores))
                 for d, cores in sorted(devices.items()))


def _core_node(core: int, cpd: int, cats: Mapping[str, int], shares: tuple[ModelShare, ...]) -> Node | None:
    """A core's node: its models' shares, then what is left of its categories; None when it holds nothing."""
    ckey: Key = ("core", core)
    children: list[Node] = []
    left = dict(cats)
    for pid, m, dcat, hcat, dbytes, hbytes in shares:
        mkey: Key = ("model", pid, m.model_id, m.uuid, core)
        for k, v in dcat.items():
            left[k] = max(left.get(k, 0) - v, 0)
        children.append(Node(mkey, "model", _model_name(m), dbytes, hbytes,
                             "" if m.model_id is None else str(m.model_id), full_name=m.name,
                             cats=(dcat, hcat)))
    children.extend(_category_nodes(ckey, left, {}))
    dev_total = sum(c.device for c in children)
    host_total = sum(c.host for c in children)
    if not children or not (dev_total or host_total):
        return None
    return Node(ckey, "core", f"NC {core % cpd}", dev_total, host_total, children=tuple(children))


def walk(nodes: tuple[Node, ...], expanded: Callable[[Node], bool], depth: int = 0) -> list[tuple[Node, int]]:
    """The visible rows: (node, depth) in order, descending only into nodes for which ``expanded(node)`` is true."""
    out: list[tuple[Node, int]] = []
    for n in nodes:
        out.append((n, depth))
        if n.has_children and expanded(n):
            out.extend(walk(n.children, expanded, depth + 1))
    return out


def expandable(nodes: tuple[Node, ...]) -> list[Node]:
    """Every node that has children, depth first (a model's children are category leaves: not made here)."""
    out: list[Node] = []
    for n in nodes:
        if n.has_children:
            out.append(n)
            if n.kind != "model":
                out.extend(expandable(n.children))
    return out

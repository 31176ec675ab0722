"""The memory tree's arithmetic: parents are the sums of their children, cores are global, nothing negative."""

from __future__ import annotations

from typing import Any

import msgspec

from neuron_top.decode import decode_report
from neuron_top.memtree import build_tree, expandable, global_core, walk
from neuron_top.snapshot import Snapshot, SubgraphView
from tests.panel_views import hand_view


def sg(core: int | None, device: int | None) -> SubgraphView:
    return SubgraphView("sg_00", core, device, 0, 0, {}, {}, ())


def test_subgraph_core_is_local_to_its_device() -> None:
    assert global_core(sg(0, 12), 2) == 24  # the neuron-monitor guide's example: core 0 of device 12
    assert global_core(sg(1, 0), 2) == 1
    assert global_core(sg(5, None), 2) == 5  # no device: taken as global
    assert global_core(sg(7, 1), 2) == 7  # not a local index: taken as global
    assert global_core(sg(None, 1), 2) is None
    assert global_core(sg(10**9, None), 2) is None


def test_hand_tree_sums_and_residuals() -> None:
    view = hand_view()
    nodes = build_tree(view.snapshot, view.app)
    assert [n.key for n in nodes] == [("dev", 0), ("dev", 1)]
    nd0 = nodes[0]
    assert [c.key for c in nd0.children] == [("core", 0), ("core", 1)]
    nc0 = nd0.children[0]
    model = nc0.children[0]
    assert model.key == ("model", 1001, 10001, "0123456789abcdef0123456789abcdef", 0)
    assert model.label == "bert\\x1b[31m.neff" and model.model_id == "10001"
    # the core's own rows: what is left of each category after the model's share
    own = {c.label: c.device for c in nc0.children[1:]}
    assert own == {"Tensors": 4 << 20, "Model Code": 4 << 20, "Runtime Memory": 1100, "Model Scratchpad": 256 << 20}
    for node, _ in walk(nodes, lambda n: True):
        if node.has_children:
            assert node.device == sum(c.device for c in node.children)
            assert node.host == sum(c.host for c in node.children)
    # the idle app's model sits on device 1, core 0 (global core 2)
    assert nodes[1].children[0].key == ("core", 2)


def test_single_app_tree_has_only_its_models() -> None:
    view = hand_view(1002)
    nodes = build_tree(view.snapshot, view.app)
    assert [n.key for n in nodes] == [("dev", 1)]
    models = [n for n, _ in walk(nodes, lambda n: True) if n.kind == "model"]
    assert [m.key[1] for m in models] == [1002]


def test_expandable_does_not_make_category_rows() -> None:
    view = hand_view()
    nodes = build_tree(view.snapshot, view.app)
    kinds = [n.kind for n in expandable(nodes)]
    assert kinds.count("model") == 3 and kinds.count("dev") == 2
    assert all(n._children is None for n in expandable(nodes) if n.kind == "model")


def report(runtime: dict[str, Any]) -> Snapshot:
    doc = {"neuron_hardware_info": {"neuroncore_per_device_count": 2}, "neuron_runtime_data": [runtime]}
    return Snapshot(decode_report(msgspec.json.encode(doc))[0], 0.0)


def test_models_bigger_than_their_core_never_go_negative() -> None:
    snap = report({"pid": 7, "report": {"memory_used": {
        "neuron_runtime_used_bytes": {"usage_breakdown": {"neuroncore_memory_usage": {"0": {"constants": 10}}}},
        "loaded_models": [{"name": "m", "uuid": "u", "model_id": 1, "subgraphs": {"sg_00": {
            "neuroncore_index": 0, "neuron_device_index": 0,
            "memory_used_bytes": {"neuron_device": 50, "usage_breakdown": {"neuron_device": {"constants": 50}}}}}}]}}})
    nodes = build_tree(snap, snap.all)
    core = nodes[0].children[0]
    assert core.device == 50 and all(c.device >= 0 for c in core.children)


def test_unknown_categories_and_empty_cores() -> None:
    snap = report({"pid": 7, "report": {"memory_used": {"neuron_runtime_used_bytes": {"usage_breakdown": {
        "neuroncore_memory_usage": {"0": {"tensors": 0}, "3": {"new_kind\x1b": 5}, "x": {"tensors": 1}}}}}}})
    nodes = build_tree(snap, snap.all)
    assert [n.key for n in nodes] == [("dev", 1)]  # core 0 is all zeros, "x" is not a core
    cat = nodes[0].children[0].children[0]
    assert cat.label == "new_kind\\x1b" and cat.device == 5


def _runtime(pid: int, core: int, size: int, name: str = "m") -> dict[str, Any]:
    return {"pid": pid, "report": {"memory_used": {
        "neuron_runtime_used_bytes": {"usage_breakdown": {"neuroncore_memory_usage": {str(core): {"tensors": 5}}}},
        "loaded_models": [{"name": name, "uuid": f"u{pid}", "model_id": pid, "subgraphs": {"sg_00": {
            "neuroncore_index": core, "neuron_device_index": 0,
            "memory_used_bytes": {"neuron_device": size, "usage_breakdown": {"neuron_device": {"tensors": size}}}}}}]}}}


def two_apps(size_b: int, bad_c: bool = False) -> Snapshot:
    runtimes = [_runtime(1, 0, 100), _runtime(2, 1, size_b)]
    if bad_c:
        runtimes.append({"pid": 3, "report": {"memory_used": {"loaded_models": [{"name": 5}]}}})
    doc = {"neuron_hardware_info": {"neuroncore_per_device_count": 2}, "neuron_runtime_data": runtimes}
    return Snapshot(decode_report(msgspec.json.encode(doc))[0], 0.0)


def rows(nodes: tuple) -> list[tuple[object, ...]]:
    return [(n.key, n.label, n.device, n.host) for n, _ in walk(nodes, lambda n: True)]


def test_model_cache_decodes_only_the_apps_whose_models_changed(monkeypatch) -> None:
    from neuron_top import memtree

    decoded: list[int] = []
    real = memtree._model_shares
    monkeypatch.setattr(memtree, "_model_shares", lambda a, cpd: decoded.append(a.pid) or real(a, cpd))
    cache = memtree.ModelCache()
    first = two_apps(200, bad_c=True)
    assert rows(build_tree(first, first.all, cache)) == rows(build_tree(first, first.all))
    decoded.clear()
    # the next report: same models for pids 1 and 3, a bigger model for pid 2
    second = two_apps(300, bad_c=True)
    tree = build_tree(second, second.all, cache)
    assert decoded == [2]
    # an app whose models did not decode still says so, though they were not decoded again
    assert [s.where for s in second.group_statuses] == ["3.memory_used"]
    assert rows(tree) == rows(build_tree(second, second.all))
    # pid 3 is gone: its entry goes too, and it is decoded afresh if it comes back
    third = two_apps(300)
    build_tree(third, third.all, cache)
    assert set(cache._apps) == {1, 2}


def test_core_nodes_are_kept_while_their_memory_and_models_are_the_same() -> None:
    """Over the trn2 demo (apps loading models, memory moving): with the cache, each tree is what a build
    without it makes, and the nodes of cores that did not change are the very same objects."""
    from neuron_top.memtree import ModelCache
    from tests.helpers import demo_snapshots

    cache = ModelCache()
    kept = made = 0
    before: dict[object, object] = {}
    for s in demo_snapshots("trn2.48xlarge", 7, 60):
        tree = build_tree(s, s.all, cache)
        assert rows(tree) == rows(build_tree(s, s.all))
        cores = {c.key: c for d in tree for c in d.children}
        kept += sum(before.get(k) is c for k, c in cores.items())
        made += sum(before.get(k) is not c for k, c in cores.items())
        before = cores
    assert kept > made > 0

from __future__ import annotations

from neuron_top.selection import Selection
from tests.helpers import demo_snapshots


def test_select_step_and_filter() -> None:
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    sel = Selection()
    apps = sel.visible(snap)
    sel.select(2, snap)
    assert sel.pid == apps[0].pid
    sel.select(99, snap)  # no such tab: unchanged
    assert sel.pid == apps[0].pid
    sel.step(-1, snap)
    assert sel.pid is None
    sel.step(-1, snap)
    assert sel.pid == apps[-1].pid
    assert sel.set_filter("serve") is None
    assert all("serve" in a.tag for a in sel.visible(snap))
    sel.settle(snap)  # the selected app is filtered out: back to "all"
    assert sel.pid is None or "serve" in next(a.tag for a in apps if a.pid == sel.pid)


def test_invalid_regex_keeps_the_previous_filter() -> None:
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    sel = Selection("bert")
    assert [a.tag for a in sel.visible(snap)] == ["bert-base-inf"]
    err = sel.set_filter("bert[")
    assert err and "invalid" in sel.text
    assert [a.tag for a in sel.visible(snap)] == ["bert-base-inf"]
    sel.set_filter("")
    assert len(sel.visible(snap)) == len(snap.apps)

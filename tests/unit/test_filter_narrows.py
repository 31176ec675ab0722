"""The tag filter (``/``, ``--tag``) narrows the snapshot itself, once, in the core: the apps, the "all" totals,
the cores, the memory and models; the machine (devices, ECC, vCPUs) stays whole. ``--once`` says the filter."""

from __future__ import annotations

import json
import re

from neuron_top.cli.main import main
from neuron_top.output.cells import HIDDEN, core_cells
from neuron_top.selection import Selection, narrow_by_tag
from tests.helpers import demo_snapshots


def test_narrowed_snapshot_has_only_the_matching_apps_and_totals_over_them() -> None:
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    serve = [a for a in snap.apps if re.search("serve", a.tag)]
    assert 0 < len(serve) < len(snap.apps)
    n = narrow_by_tag(snap, "serve")
    assert [a.pid for a in n.apps] == [a.pid for a in serve]
    assert n.filter is not None and (n.filter.shown, n.filter.total) == (len(serve), len(snap.apps))
    # the totals are the serve apps' alone
    assert n.all.exec_summary == {k: sum(a.exec_summary.get(k, 0) for a in serve)
                                  for k in n.all.exec_summary}
    assert n.all.used_bytes == (sum(a.used_bytes[0] for a in serve), sum(a.used_bytes[1] for a in serve))
    assert {m.name for m in n.all.models} == {m.name for a in serve for m in a.models}
    assert n.all.used_bytes != snap.all.used_bytes
    # the cores: the serve apps' are shown, the others' dimmed, the machine stays 16 devices
    mine = {c for a in serve for c in snap.cores_of(a)}
    assert mine <= set(n.all.cores)
    assert n.filter.hidden_cores and not (n.filter.hidden_cores & mine)
    assert not (n.filter.hidden_cores & set(n.all.cores))
    assert n.device_count == snap.device_count and n.ecc == snap.ecc
    cells = core_cells(n, n.all)
    hidden = min(n.filter.hidden_cores)
    assert cells.core(hidden)[0][0].strip() == HIDDEN
    assert "filter 'serve': 2 of" in cells.title


def test_no_filter_is_the_snapshot_itself_and_selection_keeps_its_narrowing() -> None:
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    assert narrow_by_tag(snap, None) is snap and snap.filter is None
    sel = Selection("serve")
    assert sel.narrow(snap) is sel.narrow(snap)  # one narrowing per report, whatever asks
    sel.set_filter("bert[")  # invalid: the previous filter stays, and the title names the one in force
    assert sel.narrow(snap).filter.text == "serve"


def test_once_with_tag_shows_only_those_apps_and_says_the_filter(capfdbinary) -> None:
    assert main(["demo", "--seed", "7", "--tag", "serve", "--once"]) == 0
    out = capfdbinary.readouterr().out.decode()
    assert "filter 'serve': 2 of" in out
    apps_line = next(line for line in out.splitlines() if line.startswith("apps: "))
    assert apps_line.count("(pid") == 2 and "serve" in apps_line
    before_pods = out.split("\npods (")[0]  # the pods section is the machine's (every pod holding cores)
    assert "bert" not in before_pods and "bert" not in out.split("latency (")[1]
    assert main(["demo", "--seed", "7", "--tag", "serve", "--json"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert {a["tag"] for a in doc["apps"]} == {"llama-70b-serve", "mistral-7b-serve"}
    assert doc["filter"]["tag"] == "serve" and doc["filter"]["apps_shown"] == 2


def test_flops_title_has_the_average_beside_the_total() -> None:
    """AWS neuron-top shows "Avg: 9.946TF | Total: 318.278TF"; the grid's title gave only the total."""
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    cells = core_cells(snap, snap.all, flops=True)
    flops = [f for f in snap.all.core_stats.flops.values() if f is not None]
    avg = sum(flops) / len(flops)
    assert f"avg {cells.scale.total(avg)}LOPS, total " in cells.title
    app = next(a for a in snap.apps if a.tag == "llama-70b-serve")
    own = [snap.all.core_stats.flops[i] for i in snap.cores_of(app)]
    mine = core_cells(snap, app, flops=True)
    assert f"avg {mine.scale.total(sum(own) / len(own))}" in mine.title


def test_pods_under_a_filter_are_the_shown_apps_with_the_whole_reports_figures() -> None:
    """``--tag serve`` listed every pod, and the pods of filtered-out apps as "allocated but idle" (their cores
    are left out of the narrowed "all"): a 91%-busy pod read idle. Now only the shown apps' pods, figures as
    unfiltered."""
    snap = demo_snapshots("trn2.48xlarge", 7, 3)[-1]
    assert snap.pod_usage, "the demo attaches pods"
    n = narrow_by_tag(snap, "serve")
    serve = {a.pid for a in n.apps}
    whole = {u.ref.name: u for u in snap.pod_usage}
    assert n.pod_usage and all(serve.intersection(u.pids) for u in n.pod_usage)
    assert {u.ref.name for u in n.pod_usage} == {u.ref.name for u in snap.pod_usage if serve.intersection(u.pids)}
    for u in n.pod_usage:
        assert (u.util, u.idle) == (whole[u.ref.name].util, whole[u.ref.name].idle)

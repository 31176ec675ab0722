"""Pods on screen: the header, the apps panel's pod column, the selected tab, the pods screen (P), the grid by
pod (b) and the / filter, all from one PodMap; hostile pod names drawn as text."""

from __future__ import annotations

import pytest

from neuron_top.k8s.model import Attribution, PodRef
from neuron_top.snapshot import Snapshot
from neuron_top.tui.screens.app_detail import AppScreen
from neuron_top.tui.screens.detail import PodsScreen
from neuron_top.tui.widgets.apps import AppsPanel
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.pods import PodsPanel
from neuron_top.tui.widgets.tabs import AppTabs
from tests.helpers import demo_snapshots, feed, make_app

HOSTILE = "[bold red]pwn\x1b[31m"


def with_pods(snaps: tuple[Snapshot, ...]) -> tuple[Snapshot, ...]:
    """trn1 reports (no neuron_k8s_info of their own): the first app in ml/train-0, the second in a pod with a
    hostile name, one more core allocated to the first pod and left idle."""
    out = []
    for s in snaps:
        a, b = s.apps[0], s.apps[1]
        train = PodRef.of("ml", "train-0", "worker", "kubelet")
        bad = PodRef.of("default", HOSTILE, "c", "kubelet")
        cores = {**dict.fromkeys(s.cores_of(a), train), **dict.fromkeys(s.cores_of(b), bad)}
        spare = next(c for c in range(s.core_count) if c not in cores)
        cores[spare] = train
        out.append(s.with_attribution(Attribution("kubelet", cores=cores,
                                                  offered_cores=frozenset(range(s.core_count)))))
    return tuple(out)


@pytest.fixture
def snaps() -> tuple[Snapshot, ...]:
    return with_pods(demo_snapshots("trn1.32xlarge", 7, 6))


def text(widget, rows: int = 40) -> list[str]:
    return [widget.render_line(y).text for y in range(min(rows, widget.size.height))]


async def test_header_apps_panel_and_tab_name_the_pods(snaps) -> None:
    app = make_app(snaps)
    async with app.run_test(size=(200, 50)) as pilot:
        await feed(pilot)
        header = app.screen.query_one(HeaderBar)
        assert "pods: kubelet, 2 with Neuron cores" in header.render_line(1).text
        apps = "\n".join(text(app.screen.query_one(AppsPanel)))
        assert "ml/train-0" in apps and "pod" in apps.splitlines()[1]
        assert "default/[bold re" in apps and "\x1b" not in apps  # literal, never markup or an escape
        await pilot.press("2")
        assert "ml/train-0" in app.screen.query_one(AppTabs).render_line(0).text


async def test_pods_screen_lists_cores_idle_and_unallocated_then_opens_the_app(snaps) -> None:
    app = make_app(snaps)
    async with app.run_test(size=(160, 40)) as pilot:
        await feed(pilot)
        await pilot.press("P")
        assert isinstance(app.screen, PodsScreen)
        lines = text(app.screen.query_one(PodsPanel))
        body = "\n".join(lines)
        assert "2 pods" in lines[0] and "1 idle cores" in lines[0]
        row = next(ln for ln in lines if "ml/train-0" in ln)
        assert "idle" in row and "[worker]" in row
        assert "not allocated to any pod" in body
        assert "[bold red]pwn\\x1b[31m" in body
        await pilot.press("enter")  # the first pod (default/...): its app
        assert isinstance(app.screen, AppScreen)
        assert app.screen.crumb.note.startswith("pod default/[bold red]pwn")


async def test_b_colours_the_grid_by_pod_with_a_legend(snaps) -> None:
    app = make_app(snaps)
    async with app.run_test(size=(200, 50)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        assert not any("pods:" in ln for ln in text(grid))
        await pilot.press("b")
        legend = [ln for ln in text(grid) if "■" in ln]
        assert legend and "ml/train-0 (1 idle)" in legend[0]
        await pilot.press("b")
        assert not any("■" in ln for ln in text(grid))


async def test_filter_matches_pod_and_namespace(snaps) -> None:
    app = make_app(snaps)
    async with app.run_test(size=(160, 40)) as pilot:
        await feed(pilot)
        first = snaps[-1].apps[0]
        app.set_filter("^ml$")
        assert [a.pid for a in app.visible_apps()] == [first.pid]
        app.set_filter("train-0")
        assert [a.pid for a in app.visible_apps()] == [first.pid]


async def test_the_picked_pod_stays_picked_when_a_pod_above_it_ends(snaps) -> None:
    """Rows are by name: when the pod above the one picked ended, the cursor (a row number) fell off the list,
    and Enter opened nothing; with three pods it opened the app of the pod that took the row."""
    app = make_app(snaps)
    async with app.run_test(size=(160, 40)) as pilot:
        await feed(pilot)
        await pilot.press("P", "down")  # default/<hostile> first, then ml/train-0: picked
        panel = app.screen.query_one(PodsPanel)
        assert "ml/train-0" in next(ln for ln in text(panel) if "train-0" in ln)
        train = PodRef.of("ml", "train-0", "worker", "kubelet")
        gone = []
        for s in snaps:  # the hostile pod ends: ml/train-0 is the first row now
            a = s.apps[0]
            cores = dict.fromkeys([*s.cores_of(a)], train)
            gone.append(s.with_attribution(Attribution("kubelet", cores=cores,
                                                       offered_cores=frozenset(range(s.core_count)))))
        await feed(pilot, gone)
        assert len(app.screen.query_one(PodsPanel)._usage()) == 1
        await pilot.press("enter")
        assert isinstance(app.screen, AppScreen)
        assert app.screen.crumb.note.startswith("pod ml/train-0")

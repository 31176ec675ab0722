"""Write SVG screenshots of neuron-top into ``screenshots/`` from the same deterministic data as the snapshot tests.

Usage (from the repo root)::

    python scripts/make_screenshots.py                 # every shot into screenshots/
    python scripts/make_screenshots.py --only help --out /tmp/shots
    python scripts/make_screenshots.py --list

The data is the seeded demo (``tests/helpers.py``: ``demo_snapshots``, ``make_app``, ``feed``) with an injected
clock, so two runs write identical files: run it twice and ``git diff --exit-code screenshots/`` to check.
Shots whose screen is not in this tree (the timeline, before it is merged) are skipped with a message.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers import demo_snapshots, feed, make_app  # noqa: E402

INSTANCE = "trn2.48xlarge"
SEED = 7
REPORTS = 40


class Skip(Exception):
    """This shot cannot be made in this tree; the message says why."""


Shot = Callable[[Path], Awaitable[None]]
SHOTS: dict[str, tuple[str, Shot]] = {}


def shot(name: str, what: str) -> Callable[[Shot], Shot]:
    def register(fn: Shot) -> Shot:
        SHOTS[name] = (what, fn)
        return fn

    return register


def _save(app, out: Path, name: str) -> None:
    app.save_screenshot(filename=f"{name}.svg", path=str(out))


async def _dashboard(out: Path, name: str, size: tuple[int, int], press: tuple[str, ...] = (),
                     theme: str | None = None, snaps=None) -> None:
    snaps = snaps if snaps is not None else demo_snapshots(INSTANCE, SEED, REPORTS)
    app = make_app(snaps)
    async with app.run_test(size=size) as pilot:
        await feed(pilot)
        if theme is not None:
            app.theme = theme
        for key in press:
            await pilot.press(key)
        await pilot.pause()
        _save(app, out, name)


@shot("dashboard-200x60", "trn2.48xlarge demo: 128 cores, 192 vCPUs, 8 apps, on a 200x60 terminal")
async def dashboard_200(out: Path) -> None:
    await _dashboard(out, "dashboard-200x60", (200, 60))


@shot("dashboard-120x40", "the same on a 120x40 terminal: every panel that matters on one screen")
async def dashboard_120(out: Path) -> None:
    await _dashboard(out, "dashboard-120x40", (120, 40))


@shot("dashboard-120x40-trn1", "a trn1.32xlarge demo at 120x40: 16 devices of two cores in eight rows, two abreast")
async def dashboard_120_trn1(out: Path) -> None:
    await _dashboard(out, "dashboard-120x40-trn1", (120, 40), snaps=demo_snapshots("trn1.32xlarge", SEED, REPORTS))


@shot("dashboard-80x24", "the same on an 80x24 terminal")
async def dashboard_80(out: Path) -> None:
    await _dashboard(out, "dashboard-80x24", (80, 24))


@shot("flops", "f: effective FLOPS per core instead of utilization, at 120x40")
async def flops(out: Path) -> None:
    await _dashboard(out, "flops", (120, 40), press=("f",))


@shot("layout-cores", "l l: the cores layout (the grid with room, ECC and the apps) at 120x40")
async def layout_cores(out: Path) -> None:
    await _dashboard(out, "layout-cores", (120, 40), press=("l", "l"))


@shot("app-selected", "2: the first app's tab; every panel shows only that app")
async def app_selected(out: Path) -> None:
    await _dashboard(out, "app-selected", (200, 60), press=("2",))


@shot("light-theme", "the neuron-light theme with physical cores (v)")
async def light(out: Path) -> None:
    await _dashboard(out, "light-theme", (200, 60), press=("v",), theme="neuron-light")


@shot("help", "?: every key, by screen")
async def help_screen(out: Path) -> None:
    await _dashboard(out, "help", (120, 50), press=("question_mark",))


def _with_pods(snaps):
    """The demo's pods (its neuron_k8s_info) as the kubelet would answer them, with every device offered: the
    pods screen then also shows the cores no pod holds."""
    from neuron_top.k8s.model import Attribution, PodRef

    out = []
    for s in snaps:
        cores = {c: PodRef(r.namespace, r.pod, r.container, "kubelet") for c, r in s.pods.cores.items()}
        out.append(s.with_attribution(Attribution("kubelet", cores=cores,
                                                  offered_cores=frozenset(range(s.core_count)))))
    return tuple(out)


@shot("pods", "P: the Kubernetes pods holding NeuronCores, their utilization and idle cores")
async def pods(out: Path) -> None:
    await _dashboard(out, "pods", (160, 30), press=("P",), snaps=_with_pods(demo_snapshots(INSTANCE, SEED, REPORTS)))


@shot("cores-by-pod", "b: the NeuronCore grid coloured by pod, with its legend")
async def cores_by_pod(out: Path) -> None:
    await _dashboard(out, "cores-by-pod", (200, 60), press=("b",),
                     snaps=_with_pods(demo_snapshots(INSTANCE, SEED, REPORTS)))


@shot("core-detail", "Enter on the NeuronCore grid: one core in detail")
async def core_detail(out: Path) -> None:
    from neuron_top.tui.widgets.cores import CoreGrid

    app = make_app(demo_snapshots(INSTANCE, SEED, REPORTS))
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        app.screen.query_one(CoreGrid).focus()
        await pilot.press("right", "down", "enter")
        await pilot.pause()
        # open_screen updates the header before the pushed screen is mounted, so the new header says
        # "waiting for the first report" until the next report or clock tick (reported to the lead).
        app._update_header()
        await pilot.pause()
        _save(app, out, "core-detail")


@shot("app-detail", "Enter on an app tab: one app's cores, memory, latency and errors")
async def app_detail(out: Path) -> None:
    from neuron_top.tui.widgets.tabs import AppTabs

    app = make_app(demo_snapshots(INSTANCE, SEED, REPORTS))
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        await pilot.press("3")
        app.screen.query_one(AppTabs).focus()
        await pilot.press("enter")
        await pilot.pause()
        _save(app, out, "app-detail")


def _recording(tmp: Path, n: int = 90) -> Path:
    """A recording as ``neuron-top demo --emit > FILE`` writes it: one report per line."""
    from neuron_top.sources.demo import generate

    path = tmp / "trn2-demo.ndjson"
    path.write_bytes(b"".join(line.rstrip(b"\n") + b"\n" for line in generate(INSTANCE, SEED, n)))
    return path


@shot("replay", "neuron-top replay FILE: the scrubber with markers, paused at report 31")
async def replay(out: Path) -> None:
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import ReplayController
    from neuron_top.tui.app import NeuronTopApp

    with tempfile.TemporaryDirectory(prefix="neuron-top-shots-") as tmp:
        path = _recording(Path(tmp))
        index = RecordingIndex(path)
        index.wait()
        frozen = 1000.0
        controller = ReplayController(index, start=30, clock=lambda: frozen)
        controller.playing = False
        app = NeuronTopApp(None, replay=controller, replay_name=path.name, clock=lambda: frozen)
        try:
            async with app.run_test(size=(200, 60)) as pilot:
                deadline = time.monotonic() + 30
                while controller.scanned < len(controller) and time.monotonic() < deadline:
                    await pilot.pause(0.05)
                await pilot.pause()
                app.screen.show_position()  # the scrubber line, once the marker scan is complete
                await pilot.pause()
                _save(app, out, "replay")
        finally:
            controller.stop_scan()
            index.close()


@shot("timeline", "the timeline pane on the repo's small system trace (tests/data/trace_small.json)")
async def timeline(out: Path) -> None:
    trace = ROOT / "tests" / "data" / "trace_small.json"
    if not trace.exists():
        raise Skip(f"{trace.relative_to(ROOT)} is not in this tree")
    from textual.app import App

    from neuron_top.trace import load_trace
    from neuron_top.tui.screens.timeline import TimelineScreen

    store = load_trace(trace)

    class TimelineOnly(App[None]):
        """The pane alone, on a frozen clock, as the timeline snapshot tests build it."""

        def on_mount(self) -> None:
            self.push_screen(TimelineScreen(store, clock=lambda: 0.0))

    app = TimelineOnly()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("e")  # select the first error: the side panel shows its details
        await pilot.pause()
        _save(app, out, "timeline")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "screenshots", help="directory for the SVGs (screenshots/)")
    p.add_argument("--only", action="append", metavar="NAME", choices=sorted(SHOTS), help="make only this shot")
    p.add_argument("--list", action="store_true", help="list the shots and exit")
    ns = p.parse_args(argv)
    if ns.list:
        for name, (what, _) in SHOTS.items():
            print(f"{name:18} {what}")
        return 0
    os.environ["TZ"] = "UTC"  # replay clock text is local time
    time.tzset()
    ns.out.mkdir(parents=True, exist_ok=True)
    skipped = 0
    for name in ns.only or list(SHOTS):
        what, fn = SHOTS[name]
        try:
            asyncio.run(fn(ns.out))
        except Skip as why:
            skipped += 1
            print(f"skipped {name}: {why}")
            continue
        print(f"wrote {ns.out / (name + '.svg')}  ({what})")
    return 0 if not ns.only or not skipped else 1


if __name__ == "__main__":
    sys.exit(main())

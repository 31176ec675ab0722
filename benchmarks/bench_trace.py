"""Trace loading and timeline redraw benchmark (issue: 1,000,000-event neuron-det-like trace, ~140 MB).

Measured in one run, against baselines measured in the same run:

1. load: stdlib ``json.load`` of the file vs ``neuron_top.trace.load_trace`` (each in a fresh subprocess,
   alternating, ``--repeat`` times): wall and CPU seconds, peak RSS growth (VmHWM - RSS after imports) and
   what the loaded result keeps (RSS after load), per event.
2. redraw: after loading, the cost of one full timeline frame (every visible line's spans summarised and turned
   into strips, as ``Timeline.render_line`` does) at zoom levels from the whole trace down to a few events,
   in a headless Textual app of ``--size`` cells; and the bare per-column summaries without Textual.

Usage: python benchmarks/bench_trace.py [--events 1000000] [--repeat 3] [--size 200x50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neuron_top.trace import TimelineModel, load_trace, synth  # noqa: E402
from neuron_top.trace.summary import Window, summarise_counter, summarise_row  # noqa: E402

_CHILD = r"""
import gc, json, os, sys, time
sys.path.insert(0, {root!r})
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
what, path = sys.argv[1], sys.argv[2]
if what == "loader":
    from neuron_top.trace import load_trace
gc.collect()
base = status("VmRSS")
w0, c0 = time.perf_counter(), time.process_time()
if what == "json":
    with open(path) as f:
        result = json.load(f)
    n = len(result) if isinstance(result, list) else len(result.get("traceEvents", []))
else:
    result = load_trace(path)
    n = sum(result.phase_counts.values())
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
gc.collect()
print(json.dumps({{"wall": wall, "cpu": cpu, "peak": status("VmHWM") - base, "kept": status("VmRSS") - base, "n": n}}))
"""


def run_child(what: str, path: Path) -> dict[str, float]:
    code = _CHILD.format(root=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, what, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_mb(b: float) -> str:
    return f"{b / 1e6:,.0f} MB"


def bench_load(path: Path, repeat: int) -> tuple[dict[str, list[float]], dict[str, list[float]], int]:
    js: dict[str, list[float]] = {"wall": [], "cpu": [], "peak": [], "kept": []}
    ld: dict[str, list[float]] = {"wall": [], "cpu": [], "peak": [], "kept": []}
    n = 0
    for i in range(repeat):
        for what, acc in (("json", js), ("loader", ld)) if i % 2 == 0 else (("loader", ld), ("json", js)):
            r = run_child(what, path)
            n = int(r["n"])
            for k in acc:
                acc[k].append(r[k])
    return js, ld, n


def column_bytes(store: object) -> int:
    """Bytes held by the store's columns, args blob and mipmaps (the data, without Python object headers)."""
    st = store
    total = 0
    for name in ("start", "end", "dur", "orig", "name", "cat", "track", "flags", "phase", "args_off"):
        a = getattr(st, name)
        total += len(a) * a.itemsize
    total += len(st.args_blob)  # type: ignore[attr-defined]
    for tr in st.tracks:  # type: ignore[attr-defined]
        for r in range(len(tr.rows)):  # mipmaps are built on first use: count them as if all were
            total += sum(len(a) * a.itemsize for a in st.row_mips(tr, r))  # type: ignore[attr-defined]
    return total


def zoom_windows(store: object, width: int) -> list[tuple[str, int, int]]:
    """(label, t0, t1): the whole trace, then 10x deeper each step, centred, down to ~1 event per screen."""
    st = store
    t_min, span = st.t_min, st.span  # type: ignore[attr-defined]
    mid = t_min + span // 2
    out = []
    f = 1
    while span // f >= 2_000:
        w = span // f
        out.append((f"1/{f}", mid - w // 2, mid - w // 2 + w))
        f *= 10
    return out


def bench_summaries(store: object, width: int, height: int, reps: int) -> list[tuple[str, float, int]]:
    """Bare summaries (no Textual) of the first ``height`` lines at each zoom: median ms and events in view."""
    model = TimelineModel(store)  # type: ignore[arg-type]
    lines = [ln for ln in model.lines][:height]
    out = []
    for label, t0, t1 in zoom_windows(store, width):
        bounds = Window(t0, t1, width).bounds()
        times = []
        for _ in range(reps):
            w0 = time.perf_counter()
            for ln in lines:
                if ln.kind == "row":
                    summarise_row(model.row_index(ln.track, ln.row), bounds)
                elif ln.kind == "counter":
                    summarise_counter(store.counters[ln.counter], bounds)  # type: ignore[attr-defined]
            times.append(time.perf_counter() - w0)
        in_view = 0
        for ln in lines:
            if ln.kind == "row":
                ri = model.row_index(ln.track, ln.row)
                from bisect import bisect_left

                in_view += bisect_left(ri.start, t1, ri.lo, ri.hi) - bisect_left(ri.end, t0, ri.lo, ri.hi)
        out.append((label, statistics.median(times) * 1000, max(in_view, 0)))
    return out


async def bench_frames(store: object, size: tuple[int, int], reps: int) -> list[tuple[str, float, float]]:
    """A full frame of the real widget (spans + strips for every visible line) per zoom level."""
    from textual.app import App

    from neuron_top.tui.screens.timeline import TimelineScreen
    from neuron_top.tui.widgets.tracks import Timeline

    class BenchApp(App[None]):
        def on_mount(self) -> None:
            self.push_screen(TimelineScreen(store))  # type: ignore[arg-type]

    out = []
    app = BenchApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        tl = app.screen.query_one(Timeline)
        for label, t0, t1 in zoom_windows(store, tl.area_w):
            times, cpu = [], []
            height = tl.size.height
            for k in range(reps):
                shift = (k % 2) * max((t1 - t0) // 50, 1)  # a small pan each time: nothing is cached
                w0, c0 = time.perf_counter(), time.process_time()
                tl.set_window(t0 + shift, t1 + shift)
                for y in range(height):
                    tl.render_line(y)
                times.append(time.perf_counter() - w0)
                cpu.append(time.process_time() - c0)
            out.append((label, statistics.median(times) * 1000, statistics.median(cpu) * 1000))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="load runs of each kind (alternating)")
    ap.add_argument("--size", default="120x40,200x50", help="terminal sizes for the redraw benchmark")
    ap.add_argument("--keep", type=Path, help="write (or reuse) the generated trace here")
    args = ap.parse_args()
    sizes = [tuple(int(v) for v in sz.lower().split("x")) for sz in args.size.split(",")]
    tmp = None
    if args.keep:
        path = args.keep / f"ndet_{args.events}.json"
        args.keep.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench_trace_")
        path = Path(tmp.name) / f"ndet_{args.events}.json"
    try:
        if not path.exists():
            t = time.perf_counter()
            with open(path, "w") as f:
                synth.write_trace(f, args.events, cores=32, processes=2, seed=1)
            print(f"generated {path.name}: {fmt_mb(path.stat().st_size)} in {time.perf_counter() - t:.1f} s")
        size = path.stat().st_size
        print(
            f"file: {fmt_mb(size)}, python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}"
        )

        js, ld, n = bench_load(path, args.repeat)
        print(f"\nload ({n:,} trace events, median of {args.repeat} runs each, fresh process per run):")
        print(f"{'':24}{'wall s':>9}{'cpu s':>9}{'peak RSS':>12}{'B/event':>9}{'kept RSS':>11}{'B/event':>9}")
        for label, acc in (("json.load (baseline)", js), ("neuron_top load_trace", ld)):
            wall, cpu = statistics.median(acc["wall"]), statistics.median(acc["cpu"])
            peak, kept = statistics.median(acc["peak"]), statistics.median(acc["kept"])
            print(
                f"{label:24}{wall:9.2f}{cpu:9.2f}{fmt_mb(peak):>12}{peak / n:9.0f}{fmt_mb(kept):>11}{kept / n:9.0f}"
            )
        print(
            f"ratio loader/json.load: wall {statistics.median(ld['wall']) / statistics.median(js['wall']):.2f}, "
            f"cpu {statistics.median(ld['cpu']) / statistics.median(js['cpu']):.2f}, "
            f"peak memory {statistics.median(ld['peak']) / statistics.median(js['peak']):.2f}"
        )
        store = load_trace(path)
        print(
            f"store columns+args+mipmaps: {column_bytes(store) / len(store):.0f} B/event ({len(store):,} events)"
        )

        worst = 0.0
        for w, h in sizes:
            print(f"\nredraw at {w}x{h} (median of 15; a frame = every visible line summarised and drawn):")
            summ = bench_summaries(store, w - 31, h - 1, 15)
            frames = asyncio.run(bench_frames(store, (w, h), 15))
            print(
                f"{'zoom':>10}{'events in view':>16}{'summaries ms':>14}{'frame ms':>10}{'frame cpu ms':>14}"
            )
            for (label, ms, nv), (_, fms, fcpu) in zip(summ, frames, strict=False):
                print(f"{label:>10}{nv:>16,}{ms:>14.2f}{fms:>10.2f}{fcpu:>14.2f}")
            worst = max(worst, *(f for _, f, _ in frames))
        print(f"worst frame {worst:.2f} ms wall (target <= 16 ms): {'OK' if worst <= 16 else 'OVER'}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()

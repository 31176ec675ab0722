"""Trace loading, timeline redraw and area aggregation, against baselines measured in the same run.

Two files:

* the generated 1,000,000-event neuron-det-like trace (``synth``, ~165 MB: one X event per line, 3-decimal
  microseconds);
* a PyTorch profiler (Kineto) trace of ``--kineto-mb`` MB (87 by default). No public Kineto trace that large could
  be fetched, so it is built from a real one: HolisticTraceAnalysis' ``ns_resolution`` rank-0 trace (in
  tests/fixtures/traces, 68,692 events, epoch microseconds with nanoseconds), its events repeated back to back,
  each copy shifted in time by the trace's span and its flow ids made unique, written as Kineto writes them (one
  pretty-printed object per event, the header keys before ``traceEvents``). Every name, argument shape and number
  format is the real trace's.

Measured:

1. load: stdlib ``json.load`` of the file vs ``neuron_top.trace.load_trace`` (each in a fresh subprocess,
   alternating, ``--repeat`` times): wall and CPU seconds, peak RSS growth (VmHWM - RSS after imports) and what the
   loaded result keeps, per event. Targets: load <= 0.5x json.load, peak <= 200 B/event (1M trace).
2. redraw: one full timeline frame (every visible line summarised and drawn, as ``Timeline.render_line`` does) at
   zoom levels from the whole trace down to a few events, in a headless Textual app. Target <= 16 ms.
3. area aggregation: ``aggregate`` over the whole trace and over parts of it (slice names with count, total,
   average, max). Target <= 100 ms over 1,000,000 events.

Usage: python benchmarks/bench_trace.py [--events 1000000] [--kineto-mb 87] [--repeat 3] [--size 120x40,200x50]
                                        [--keep DIR] [--only synth|kineto]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from bisect import bisect_left
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neuron_top.trace import TimelineModel, load_trace, synth  # noqa: E402
from neuron_top.trace.aggregate import aggregate, display_names  # noqa: E402
from neuron_top.trace.columns import Window, summarise_counter, summarise_row  # noqa: E402

KINETO_SOURCE = ROOT / "tests" / "fixtures" / "traces" / "hta_ns_resolution_rank-0.pt.trace.json.gz"

_CHILD = r"""
import gc, json, os, sys, time
sys.path.insert(0, {root!r})
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
what, path = sys.argv[1], sys.argv[2]
i0 = time.perf_counter()
if what == "loader":
    from neuron_top.trace import load_trace  # numpy comes with it
imported = time.perf_counter() - i0
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
print(json.dumps({{"wall": wall, "cpu": cpu, "peak": status("VmHWM") - base, "kept": status("VmRSS") - base, "n": n,
                  "import": imported}}))
"""


def run_child(what: str, path: Path) -> dict[str, float]:
    code = _CHILD.format(root=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, what, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_mb(b: float) -> str:
    return f"{b / 1e6:,.0f} MB"


# -- the Kineto-shaped file ---------------------------------------------------------------------------------------

_TS = re.compile(r'("ts": )(\d+)\.(\d{3})')
_ID = re.compile(r'("ph": "[sf]", "id": )(\d+)')


def make_kineto(path: Path, target_mb: float) -> int:
    """Repeat the real Kineto trace's events, shifted in time, until the file is ``target_mb``; events written."""
    text = gzip.decompress(KINETO_SOURCE.read_bytes()).decode()
    head_end = text.index('"traceEvents": [') + len('"traceEvents": [')
    array_end = text.rindex("}\n  ]") + 1  # Kineto indents the closing bracket of traceEvents
    head, body, tail = text[:head_end], text[head_end:array_end].strip().rstrip(","), text[array_end:]
    stamps = [int(m.group(2)) * 1000 + int(m.group(3)) for m in _TS.finditer(body)]
    span_ns = max(stamps) - min(stamps) + 1_000_000
    ids = [int(m.group(2)) for m in _ID.finditer(body)]
    id_step = (max(ids) if ids else 0) + 1
    events_per_copy = body.count('"ph": ')
    target = int(target_mb * 1e6)
    copies = max(1, -(-target // len(body)))
    with open(path, "w") as f:
        f.write(head + "\n")
        for k in range(copies):
            shift = k * span_ns

            def ts(m: re.Match[str], shift: int = shift) -> str:
                v = int(m.group(2)) * 1000 + int(m.group(3)) + shift
                return f"{m.group(1)}{v // 1000}.{v % 1000:03d}"

            def fid(m: re.Match[str], k: int = k) -> str:
                return f"{m.group(1)}{int(m.group(2)) + k * id_step}"

            f.write(_ID.sub(fid, _TS.sub(ts, body)) if k else body)
            f.write(",\n" if k < copies - 1 else "\n")
        f.write(tail)
    return copies * events_per_copy


# -- measurements -----------------------------------------------------------------------------------------------


def bench_load(path: Path, repeat: int) -> dict[str, object]:
    js: dict[str, list[float]] = {"wall": [], "cpu": [], "peak": [], "kept": [], "import": []}
    ld: dict[str, list[float]] = {"wall": [], "cpu": [], "peak": [], "kept": [], "import": []}
    n = 0
    for i in range(repeat):
        for what, acc in (("json", js), ("loader", ld)) if i % 2 == 0 else (("loader", ld), ("json", js)):
            r = run_child(what, path)
            n = int(r["n"])
            for k in acc:
                acc[k].append(r[k])
    print(f"\nload ({n:,} trace events, median of {repeat} runs each, fresh process per run):")
    print(f"{'':24}{'wall s':>9}{'cpu s':>9}{'peak RSS':>12}{'B/event':>9}{'kept RSS':>11}{'B/event':>9}")
    for label, acc in (("json.load (baseline)", js), ("neuron_top load_trace", ld)):
        wall, cpu = statistics.median(acc["wall"]), statistics.median(acc["cpu"])
        peak, kept = statistics.median(acc["peak"]), statistics.median(acc["kept"])
        print(f"{label:24}{wall:9.2f}{cpu:9.2f}{fmt_mb(peak):>12}{peak / n:9.0f}{fmt_mb(kept):>11}{kept / n:9.0f}")
    ratios = [a / b for a, b in zip(ld["wall"], js["wall"], strict=True)]
    cpu_ratios = [a / b for a, b in zip(ld["cpu"], js["cpu"], strict=True)]
    ratio = statistics.median(ld["wall"]) / statistics.median(js["wall"])
    cpu_ratio = statistics.median(ld["cpu"]) / statistics.median(js["cpu"])
    imp = statistics.median(ld["import"])
    print(
        f"ratio loader/json.load: wall {ratio:.2f} (per run: {', '.join(f'{r:.2f}' for r in ratios)}), "
        f"cpu {cpu_ratio:.2f} (per run: {', '.join(f'{r:.2f}' for r in cpu_ratios)}), "
        f"peak memory {statistics.median(ld['peak']) / statistics.median(js['peak']):.2f}"
    )
    print(
        f"not timed above: importing the loader (neuron_top.trace with numpy) {imp * 1000:.0f} ms; "
        f"counted in, the wall ratio would be {(statistics.median(ld['wall']) + imp) / statistics.median(js['wall']):.2f}"
    )
    return {"n": n, "ratio": ratio, "cpu_ratio": cpu_ratio, "peak_per_event": statistics.median(ld["peak"]) / n,
            "loader_s": statistics.median(ld["wall"]), "json_s": statistics.median(js["wall"])}


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
    lines = list(model.lines)[:height]
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


def bench_redraw(store: object, sizes: list[tuple[int, int]]) -> float:
    worst = 0.0
    for w, h in sizes:
        print(f"\nredraw at {w}x{h} (median of 15; a frame = every visible line summarised and drawn):")
        summ = bench_summaries(store, w - 31, h - 1, 15)
        frames = asyncio.run(bench_frames(store, (w, h), 15))
        print(f"{'zoom':>10}{'events in view':>16}{'summaries ms':>14}{'frame ms':>10}{'frame cpu ms':>14}")
        for (label, ms, nv), (_, fms, fcpu) in zip(summ, frames, strict=False):
            print(f"{label:>10}{nv:>16,}{ms:>14.2f}{fms:>10.2f}{fcpu:>14.2f}")
        worst = max(worst, *(f for _, f, _ in frames))
    return worst


def bench_aggregate(store: object, reps: int = 7) -> float:
    """Area aggregation over the whole trace and parts of it: median ms (the name column is built once first)."""
    st = store
    w0 = time.perf_counter()
    display_names(st)  # type: ignore[arg-type]
    first = (time.perf_counter() - w0) * 1000
    print(f"\narea aggregation (median of {reps}; the display-order name column, built once, took {first:.0f} ms):")
    print(f"{'area':>10}{'events':>12}{'names':>8}{'ms':>9}")
    whole = 0.0
    for frac in (1.0, 0.5, 0.1, 0.01):
        span = int(st.span * frac)  # type: ignore[attr-defined]
        t0 = st.t_min + (st.span - span) // 2  # type: ignore[attr-defined]
        times = []
        rows: list = []
        for _ in range(reps):
            a = time.perf_counter()
            rows = aggregate(st, t0, t0 + span + (1 if frac == 1.0 else 0))  # type: ignore[arg-type]
            times.append((time.perf_counter() - a) * 1000)
        ms = statistics.median(times)
        if frac == 1.0:
            whole = ms
        print(f"{frac:>10.0%}{sum(r.count for r in rows):>12,}{len(rows):>8}{ms:>9.1f}")
    return whole


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--kineto-mb", type=float, default=87.0)
    ap.add_argument("--repeat", type=int, default=3, help="load runs of each kind (alternating)")
    ap.add_argument("--size", default="120x40,200x50", help="terminal sizes for the redraw benchmark")
    ap.add_argument("--keep", type=Path, help="write (or reuse) the generated traces here")
    ap.add_argument("--only", choices=("synth", "kineto"), help="one of the two files")
    args = ap.parse_args()
    sizes = [tuple(int(v) for v in sz.lower().split("x")) for sz in args.size.split(",")]
    tmp = None
    if args.keep:
        folder = args.keep
        folder.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench_trace_")
        folder = Path(tmp.name)
    verdicts: list[str] = []
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}")
        if args.only in (None, "synth"):
            path = folder / f"ndet_{args.events}.json"
            if not path.exists():
                t = time.perf_counter()
                with open(path, "w") as f:
                    synth.write_trace(f, args.events, cores=32, processes=2, seed=1)
                print(f"generated {path.name}: {fmt_mb(path.stat().st_size)} in {time.perf_counter() - t:.1f} s")
            print(f"\n== neuron-det-like trace: {path.name}, {fmt_mb(path.stat().st_size)}")
            res = bench_load(path, args.repeat)
            store = load_trace(path)
            worst = bench_redraw(store, sizes)
            agg = bench_aggregate(store)
            per_m = agg * 1_000_000 / len(store)
            verdicts += [
                f"1M load {res['ratio']:.2f}x json.load wall, {res['cpu_ratio']:.2f}x cpu (target <= 0.50): "
                f"{'OK' if res['ratio'] <= 0.5 else 'OVER'}",
                f"1M peak {res['peak_per_event']:.0f} B/event (target <= 200): "
                f"{'OK' if res['peak_per_event'] <= 200 else 'OVER'}",
                f"1M redraw worst {worst:.2f} ms (target <= 16): {'OK' if worst <= 16 else 'OVER'}",
                f"aggregation over the whole trace {agg:.0f} ms for {len(store):,} events = {per_m:.0f} ms per 1M "
                f"(target <= 100): {'OK' if per_m <= 100 else 'OVER'}",
            ]
            del store
        if args.only in (None, "kineto"):
            path = folder / f"kineto_{args.kineto_mb:g}mb.json"
            if not path.exists():
                t = time.perf_counter()
                n = make_kineto(path, args.kineto_mb)
                print(f"generated {path.name}: {fmt_mb(path.stat().st_size)}, {n:,} events, "
                      f"{time.perf_counter() - t:.1f} s")
            print(f"\n== Kineto trace (the real ns_resolution trace repeated): {path.name}, "
                  f"{fmt_mb(path.stat().st_size)}")
            res = bench_load(path, args.repeat)
            store = load_trace(path)
            worst = bench_redraw(store, sizes[:1])
            verdicts += [
                f"Kineto load {res['ratio']:.2f}x json.load wall, {res['cpu_ratio']:.2f}x cpu (target <= 0.50): "
                f"{'OK' if res['ratio'] <= 0.5 else 'OVER'}",
                f"Kineto redraw worst {worst:.2f} ms (target <= 16): {'OK' if worst <= 16 else 'OVER'}",
            ]
        print("\n" + "\n".join(verdicts))
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()

"""Benchmark replay ("time travel") on a ~1 GB, 10,000-report trn2.48xlarge-size recording.

The recording is generated into a temporary directory (deleted afterwards): ``trn2_benchmark_report()`` (one full
trn2.48xlarge report, ~115 KB) with its host-memory counter and its ``neuron_top.ts`` changed per report, a
second apart. Then:

* first frame: the real TUI (``python -m neuron_top replay FILE``) runs in a pseudo-terminal (160x50); the time
  from spawning it to the first header showing ``report 1/`` is measured, median of ``--runs``. Baseline, same
  run: the same command on a one-report recording (the cost of starting Python and Textual).
* seek: in this process, what the screen does on a jump: ``ReplayController.seek`` + ``snapshot`` + the history
  window decoded within the screen's time budget and pushed into a fresh ``History``; random reports, median and
  p99. Also the full 120-report window (what the screen's worker decodes afterwards).
* 100x: the TUI is started with ``--speed 100`` and watched for ``--watch`` seconds; reports advanced per wall
  second (read from the header) against the 100 expected. The marker scan runs meanwhile, as it does for users.
* memory: peak RSS (``VmHWM``) of the TUI process at the end of that run.

    python benchmarks/bench_replay.py                  # 10,000 reports, ~1.1 GB (the figures in BENCHMARKS.md)
    python benchmarks/bench_replay.py --reports 1000   # a quick run
    python benchmarks/bench_replay.py --other /tmp/base --runs 5   # first frame only, this tree against another

``--other TREE`` (another checkout, e.g. ``git worktree add /tmp/base <commit>``) measures only the first frame,
of both trees on the same two recordings, the runs interleaved (this big, other big, this small, other small, ...)
so that the machine's drift falls on both alike; it prints each tree's medians and ratios and the ratio of the two.

``--day`` measures a 24-hour recording instead: 86,400 reports of the inf2.48xlarge demo (seed 7), one a second,
recorded by ``RecordingWriter`` as people record overnight (``.zst``, a flushed block per report; 4.4 GB
uncompressed, 0.3 GB on disk), generated under ``--tmp`` and deleted afterwards:

* the replay screen plays it at 100x from the first report to the last (14.4 minutes), in this process on
  Textual's headless driver with the real clock: resident memory (``VmRSS``) once a second, and every frame (a
  call of the screen's ``show_position``) with the report it shows; a frame is *held too long* when the time to
  the next one exceeds the recorded time it covers over the speed by more than ``--slack`` (a frame's own cost),
  and *lag* is how far the screen is behind recorded time from the first frame on;
* ``replay --summary`` of the same file (a subprocess, wall time) against indexing it (``RecordingIndex``, in
  this process), medians of two; and the same for the reports recorded as ``.gz`` and as plain ``.jsonl``.

    python benchmarks/bench_replay.py --day                        # ~25 minutes, 5.3 GB under /tmp
    python benchmarks/bench_replay.py --day --day-reports 6000     # a quick run (1 minute of playback)
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import os
import random
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from itertools import pairwise
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pyc import compile_bytecode  # noqa: E402  (benchmarks/pyc.py, beside this script)

from neuron_top.history import History  # noqa: E402
from neuron_top.recording.index import RecordingIndex  # noqa: E402
from neuron_top.recording.player import ReplayController  # noqa: E402
from neuron_top.recording.writer import stamp  # noqa: E402
from neuron_top.sources.demo import trn2_benchmark_report  # noqa: E402
from neuron_top.tui.screens.replay import HISTORY_WINDOW, SEEK_BUDGET  # noqa: E402

T0 = 1767225600.0
POS = re.compile(r"report (\d+)/(\d+)")


def generate(path: Path, n: int) -> int:
    """``n`` reports, each with its own host-memory value and time; returns the file size."""
    base = stamp(trn2_benchmark_report(), 0.0)
    assert base is not None
    base = base.replace(b"%", b"%%")
    base = re.sub(rb'("memory_used_bytes":)(\d+)', rb"\1%d", base, count=1)
    base = re.sub(rb'("ts":)[0-9.]+\}\}$', rb"\1%.6f}}", base)
    assert base.count(b"%d") == 1 and base.count(b"%.6f") == 1
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        chunk: list[bytes] = []
        for i in range(n):
            chunk.append(base % (10_000_000_000 + i * 4096, T0 + i) + b"\n")
            if len(chunk) == 64:
                os.write(fd, b"".join(chunk))
                chunk.clear()
        os.write(fd, b"".join(chunk))
    finally:
        os.close(fd)
    return path.stat().st_size


class Tui:
    """``neuron-top replay`` in a pseudo-terminal; collects (time, report number) from its header.

    The output goes through a terminal emulator (pyte, a test dependency) and the header is read off the emulated
    screen: after the first frame only changed cells are sent, so "report 123/10000" never appears whole in the
    byte stream once it is on screen."""

    def __init__(self, path: Path, *args: str, cols: int = 160, rows: int = 50, tree: Path = ROOT) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "neuron_top", "replay", str(path), *args],
                                     stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tree,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.samples: list[tuple[float, int]] = []
        self.indexing_at_first: bool | None = None

    def read_for(self, seconds: float, until_first: bool = False) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            r, _, _ = select.select([self.master], [], [], 0.02)
            if not r:
                continue
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return
            now = time.perf_counter() - self.t0
            self.stream.feed(data)
            header = self.screen.display[0]
            m = POS.search(header)
            if m and (not self.samples or self.samples[-1][1] != int(m.group(1))):
                if not self.samples:
                    self.indexing_at_first = "indexing" in header
                self.samples.append((now, int(m.group(1))))
            if until_first and self.samples:
                return

    @property
    def first_frame(self) -> float | None:
        return self.samples[0][0] if self.samples else None

    def peak_rss_mib(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def quit(self) -> None:
        try:
            os.write(self.master, b"q")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def first_frame(path: Path, runs: int, tree: Path = ROOT) -> tuple[list[float], list[bool | None]]:
    times, indexing = [], []
    for _ in range(runs):
        t = Tui(path, tree=tree)
        t.read_for(30, until_first=True)
        t.quit()
        if t.first_frame is None:
            raise SystemExit(f"no first frame from the TUI on {path}")
        times.append(t.first_frame)
        indexing.append(t.indexing_at_first)
    return times, indexing


def seek_latency(path: Path, seeks: int) -> tuple[list[float], list[float], list[int], list[float]]:
    """The screen's work for a jump (budgeted window), and the full window the worker then decodes."""
    with RecordingIndex(path) as idx:
        idx.wait()
        n = len(idx)
        c = ReplayController(idx, clock=time.monotonic)
        rng = random.Random(1)
        # As the app does after its first frame (TerminalApp._freeze_startup_objects in ui/terminal.py): what is alive now (Textual, from
        # the in-process first-frame runs) is moved out of the collector's way.
        gc.collect()
        gc.freeze()
        quick, full, sizes, cpu = [], [], [], []
        for _ in range(seeks):
            target = rng.randrange(n)
            t, tc = time.perf_counter(), time.thread_time()
            c.seek(target)
            c.snapshot(c.position)
            window = c.window(c.position, HISTORY_WINDOW, budget=SEEK_BUDGET)
            h = History(600)
            h.extend(window)
            quick.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - tc)
            sizes.append(len(window))
        for _ in range(max(3, seeks // 10)):
            c._cache.clear()
            target = rng.randrange(n)
            t = time.perf_counter()
            h = History(600)
            h.extend(c.window(target, HISTORY_WINDOW))
            full.append(time.perf_counter() - t)
    return quick, full, sizes, cpu


def first_frame_in_process(path: Path) -> float:
    """Lower bound without starting Python and importing Textual: open the index, mount the app headless, and
    stop when the first report is on the screen (``app.latest``)."""
    import asyncio

    from neuron_top.tui.app import NeuronTopApp

    async def run() -> float:
        t = time.perf_counter()
        idx = RecordingIndex(path, follow=True)
        idx.wait_for(0, timeout=0.5)
        app = NeuronTopApp(None, replay=ReplayController(idx), replay_name=path.name)
        async with app.run_test(size=(160, 50)) as pilot:
            while app.latest is None:
                await pilot.pause(0.005)
            took = time.perf_counter() - t
            app.replay.stop_scan()
        idx.close()
        return took

    return asyncio.run(run())


def playback(path: Path, watch: float) -> tuple[float, float | None, Tui]:
    """Reports per wall second at 100x, measured from 2 s after the first frame to the end of the watch."""
    t = Tui(path, "--speed", "100")
    t.read_for(30, until_first=True)
    t.read_for(watch)
    rss = t.peak_rss_mib()
    t.quit()
    if not t.samples:
        raise SystemExit("no frame from the TUI")
    start = next(((tt, r) for tt, r in t.samples if tt >= t.samples[0][0] + 2.0), t.samples[0])
    end = t.samples[-1]
    rate = (end[1] - start[1]) / (end[0] - start[0]) if end[0] > start[0] else 0.0
    return rate, rss, t


def generate_day(path: Path, n: int) -> int:
    """``n`` inf2.48xlarge demo reports a second apart, recorded as the app records them; returns the size."""
    from neuron_top.recording.writer import RecordingWriter
    from neuron_top.sources.demo import iter_reports

    with RecordingWriter(path, append=False) as w:
        for i, data in zip(range(n), iter_reports("inf2.48xlarge", 7), strict=False):
            w.write(data, T0 + i)
    return path.stat().st_size


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def day_playback(path: Path, n: int, slack: float) -> None:
    """The 24-hour recording at 100x from start to end: the app's resident memory once a second, and each frame.

    The app runs in this process (Textual's headless driver, the real clock, the real replay screen): a frame is
    each call of the screen's ``show_position`` with the report it shows, timed exactly. (Read off a terminal,
    frames were lost whenever the header's line was repainted wrong, a render bug on main, and the emulator
    competed with the app for the two cores.)"""
    import asyncio

    from neuron_top.tui.app import NeuronTopApp

    speed = 100.0
    frames: list[tuple[float, int]] = []
    rss: list[tuple[float, float]] = []

    async def run() -> None:
        index = RecordingIndex(path, follow=True)
        index.wait_for(0, timeout=5)
        c = ReplayController(index, speed=speed)
        app = NeuronTopApp(None, replay=c, replay_name=path.name)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = app.screen
            shown = screen.show_position

            def show_position(*args: object, **kwargs: object) -> None:
                shown(*args, **kwargs)  # type: ignore[arg-type]
                frames.append((time.perf_counter(), c.position))

            screen.show_position = show_position  # type: ignore[method-assign]
            deadline = time.perf_counter() + n / speed * 1.5 + 120
            while c.position < n - 1 and time.perf_counter() < deadline:
                await pilot.pause(1.0)
                m = rss_mib(os.getpid())
                if m is not None:
                    rss.append((time.perf_counter(), m))
            c.stop_scan()
        index.close()

    asyncio.run(run())
    frames = [f for f in frames if f[1] > 0] or frames  # from the first report played
    start_t, start_r = frames[0]
    print(f"100x of {n} reports: {len(frames)} frames, last report {frames[-1][1] + 1} after "
          f"{frames[-1][0] - start_t:.1f} s (recorded time / speed = {(frames[-1][1] - start_r) / speed:.1f} s)")
    after = [m for tt, m in rss if tt >= start_t + 60]
    if after:
        print(f"resident memory of the app's process: {rss[0][1]:.0f} MiB at the first sample, {after[0]:.0f} MiB "
              f"a minute in, max {max(after):.0f} MiB, last {after[-1]:.0f} MiB: growth after the first minute "
              f"{max(after) - after[0]:+.1f} MiB (target < 20 MB)")
    over, lags = [], []
    for (t1, r1), (t2, r2) in pairwise(frames):
        over.append((t2 - t1) - (r2 - r1) / speed)  # the reports are 1 s apart
        lags.append(t2 - start_t - (r2 - start_r) / speed)
    held = [x for x in over if x > slack]
    print(f"frame holds: {len(held)} of {len(over)} frames held longer than the recorded time they cover by "
          f"more than {slack * 1000:.0f} ms (worst {max(over) * 1000:.0f} ms over, p99 {pct(over, 99) * 1000:.0f} "
          f"ms); lag behind recorded time: median {statistics.median(lags) * 1000:.0f} ms, max "
          f"{max(lags) * 1000:.0f} ms, at the end {lags[-1] * 1000:.0f} ms")


def day_summary(path: Path, runs: int = 2) -> tuple[float, float, str]:
    """Indexing (in-process) against ``replay --summary`` (a subprocess); medians; the summary's last line."""
    index_times, summary_times = [], []
    last = ""
    for _ in range(runs):
        t = time.perf_counter()
        with RecordingIndex(path) as ix:
            ix.wait()
        index_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "neuron_top", "replay", str(path), "--summary"], cwd=ROOT,
                             capture_output=True, text=True)
        summary_times.append(time.perf_counter() - t)
        last = (out.stdout.strip().splitlines() or [out.stderr.strip()])[-1]
    return statistics.median(index_times), statistics.median(summary_times), last


def day(ns: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-replay-day-", dir=ns.tmp))
    try:
        rec = tmp / "day.jsonl.zst"
        t = time.perf_counter()
        size = generate_day(rec, ns.day_reports)
        print(f"recorded {ns.day_reports} inf2.48xlarge demo reports: {size / 2**20:.0f} MiB on disk in "
              f"{time.perf_counter() - t:.0f} s")
        from neuron_top.recording.writer import RecordingWriter

        for label, path in (("zst", rec), ("gz", tmp / "day.jsonl.gz"), ("plain", tmp / "day.jsonl")):
            if not path.exists():  # the same reports, written again (gzip) or decompressed (plain)
                with RecordingIndex(rec) as ix, RecordingWriter(path, append=False, fsync_interval=1e9) as w:
                    ix.wait()
                    for i in range(len(ix)):
                        w.write_line(ix.get(i))
            idx_t, sum_t, last = day_summary(path)
            print(f"{label} ({path.stat().st_size / 2**30:.2f} GiB on disk): index {idx_t:.2f} s, replay --summary "
                  f"{sum_t:.2f} s = {sum_t / idx_t:.2f}x the indexing (target < 2x); summary said: {last}")
        day_playback(rec, ns.day_reports, ns.slack)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def _ab_first_frame(big: Path, small: Path, other: Path, runs: int) -> int:
    """First frame of this tree and ``other`` on the same recordings, runs interleaved; medians and ratios."""
    compile_bytecode(other)
    trees = {"this": ROOT, "other": other}
    got: dict[tuple[str, str], list[float]] = {(t, f): [] for t in trees for f in ("big", "small")}
    for _ in range(runs):
        for file_name, path in (("big", big), ("small", small)):
            for tree_name, tree in trees.items():
                got[tree_name, file_name] += first_frame(path, 1, tree)[0]
    med = {k: statistics.median(v) for k, v in got.items()}
    for tree_name, tree in trees.items():
        print(f"{tree_name} ({tree}): first frame median {med[tree_name, 'big']:.2f} s (runs "
              f"{', '.join(f'{x:.2f}' for x in got[tree_name, 'big'])}); one-report baseline "
              f"{med[tree_name, 'small']:.2f} s (runs {', '.join(f'{x:.2f}' for x in got[tree_name, 'small'])}); "
              f"ratio {med[tree_name, 'big'] / med[tree_name, 'small']:.2f}")
    print(f"this / other: first frame {med['this', 'big'] / med['other', 'big']:.2f}, "
          f"baseline {med['this', 'small'] / med['other', 'small']:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def main() -> int:
    compile_bytecode(ROOT)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3, help="TUI starts for the first-frame median (3)")
    ap.add_argument("--seeks", type=int, default=100)
    ap.add_argument("--watch", type=float, default=12.0, help="seconds of 100x playback watched (12)")
    ap.add_argument("--other", type=Path, default=None, help="another checkout: first frame only, A/B interleaved")
    ap.add_argument("--day", action="store_true", help="the 24-hour recording instead (see above)")
    ap.add_argument("--day-reports", type=int, default=86_400, help="reports of the --day recording (86,400)")
    ap.add_argument("--slack", type=float, default=0.05,
                    help="seconds a --day frame may be held past its recorded time (0.05)")
    ap.add_argument("--tmp", default="/tmp", help="where the --day files go (deleted afterwards; 5.3 GB)")
    ns = ap.parse_args()
    cmd = "python benchmarks/bench_replay.py" + "".join(
        f" --{k.replace('_', '-')}" + ("" if v is True else f" {v}")
        for k, v in vars(ns).items() if v != ap.get_default(k))
    print(f"command: {cmd}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    if ns.day:
        day(ns)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        big, small = tmp / "trn2.jsonl", tmp / "one.jsonl"
        t = time.perf_counter()
        size = generate(big, ns.reports)
        generate(small, 1)
        print(f"generated {ns.reports} reports, {size / 2**20:.0f} MiB ({size / ns.reports / 1024:.0f} KiB each) "
              f"in {time.perf_counter() - t:.1f} s")

        if ns.other is not None:
            return _ab_first_frame(big, small, ns.other.resolve(), ns.runs)
        ff, indexing = first_frame(big, ns.runs)
        base, _ = first_frame(small, ns.runs)
        print(f"first frame (real TUI in a pty): median {statistics.median(ff):.2f} s "
              f"(runs {', '.join(f'{x:.2f}' for x in ff)}; header still said 'indexing': {indexing}); "
              f"baseline one-report recording: median {statistics.median(base):.2f} s; "
              f"ratio {statistics.median(ff) / statistics.median(base):.2f} (target <= 1 s)")

        inproc = [first_frame_in_process(big) for _ in range(ns.runs)]
        print(f"first frame in-process (headless App.run_test, Python and Textual already imported; a lower "
              f"bound): median {statistics.median(inproc):.2f} s (runs {', '.join(f'{x:.2f}' for x in inproc)})")

        quick, full, sizes, cpu = seek_latency(big, ns.seeks)
        print(f"seek (seek + snapshot + budgeted window + History, in-process): median "
              f"{statistics.median(quick) * 1000:.1f} ms, p99 {pct(quick, 99) * 1000:.1f} ms wall over {len(quick)} "
              f"random seeks; CPU time median {statistics.median(cpu) * 1000:.1f} ms, p99 "
              f"{pct(cpu, 99) * 1000:.1f} ms; window decoded at once: median {statistics.median(sizes)} reports "
              f"(target <= 50 ms)")
        print(f"full {HISTORY_WINDOW}-report window (the worker's part after a seek): median "
              f"{statistics.median(full) * 1000:.0f} ms, p99 {pct(full, 99) * 1000:.0f} ms")

        rate, rss, tui = playback(big, ns.watch)
        print(f"100x playback in the TUI: {rate:.1f} reports per wall second over the last "
              f"{tui.samples[-1][0] - tui.samples[0][0] - 2.0:.1f} s (100 expected: "
              f"{'keeps up' if rate >= 95 else 'falls behind'}); last frame report {tui.samples[-1][1]}")
        print(f"peak RSS of the TUI process (VmHWM) after the 100x run: "
              f"{rss:.0f} MiB (target <= 300 MB)" if rss is not None else "peak RSS: unavailable")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

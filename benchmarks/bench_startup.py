"""What the terminal sees while the dashboard starts: each frame, its bytes, and when the screen is whole.

    python benchmarks/bench_startup.py [--runs 5] [--seconds 2.5] [--other OTHER_TREE]

The trn2 demo (``neuron-top demo --instance trn2.48xlarge --seed 7``) runs in a pseudo-terminal of 200x60 (as
``xterm-256color``); everything it writes is read with a timestamp and fed to a VT100 emulator (pyte). Writes
less than 5 ms apart are one frame. For each frame: when it ended, its bytes, and what the screen shows then
(the header's title, the tab bar, the last row of the core grid, the grid's column width). Reported per run,
then as medians over the runs:

* frames and bytes until the first report after start-up (the demo sends one a second: what comes before it
  is start-up);
* when the header's title first shows, when the grid's last row first shows;
* how many frames showed something the settled screen does not (a partly drawn header, a grid at another
  width): the start-up glitches a user sees as flicker.

``--other TREE`` runs another checkout (``git worktree add /tmp/base <commit>``) in alternation with this one,
as the baseline measured in the same minutes.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
W, H = 200, 60
GAP = 0.005
"""Writes closer than this are one frame (Textual writes a frame in 4 KB pieces, microseconds apart)."""
BAR = re.compile(r"ND0 +([█▏▎▍▌▋▊▉─·]+)\[")


@dataclass
class Frame:
    end: float
    size: int
    title: bool
    tabs: bool
    grid_done: bool
    bar_width: int | None


@dataclass
class Run:
    frames: list[Frame] = field(default_factory=list)

    def startup(self) -> list[Frame]:
        """The frames before the first report after start-up (the second report comes ~1 s after the first)."""
        first_data = next((f.end for f in self.frames if f.bar_width is not None), None)
        if first_data is None:
            return self.frames
        return [f for f in self.frames if f.end < first_data + 0.6]

    def first(self, attr: str) -> float | None:
        return next((f.end for f in self.frames if getattr(f, attr)), None)

    def glitches(self) -> int:
        """Start-up frames that show what the settled screen does not: the header or tab bar partly drawn once
        something below them is, or the grid at a width it does not keep."""
        frames = self.startup()
        if not frames:
            return 0
        final_bar = frames[-1].bar_width
        bad = 0
        for f in frames:
            partial_top = f.size > 0 and (not f.title or not f.tabs) and (f.bar_width is not None or f.grid_done)
            other_width = f.bar_width is not None and f.bar_width != final_bar
            bad += partial_top or other_width
        return bad


def record(tree: Path, seconds: float) -> list[tuple[float, bytes]]:
    """Everything the demo writes to a 200x60 pty in its first ``seconds``, with the time of each read."""
    cmd = [sys.executable, "-m", "neuron_top", "demo", "--instance", "trn2.48xlarge", "--seed", "7"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the demo, from ``tree``
        os.chdir(tree)
        os.environ["TERM"] = "xterm-256color"
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
        os.execv(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", H, W, 0, 0))
    start = time.monotonic()
    chunks: list[tuple[float, bytes]] = []
    try:
        while (now := time.monotonic() - start) < seconds:
            ready, _, _ = select.select([fd], [], [], seconds - now)
            if ready:
                try:
                    data = os.read(fd, 1 << 20)
                except OSError:
                    break
                if not data:
                    break
                chunks.append((time.monotonic() - start, data))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return chunks


def frames_of(chunks: list[tuple[float, bytes]]) -> list[Frame]:
    import pyte

    screen = pyte.Screen(W, H)
    stream = pyte.ByteStream(screen)
    frames: list[Frame] = []
    pending = 0
    for i, (t, data) in enumerate(chunks):
        stream.feed(data)
        pending += len(data)
        if i + 1 < len(chunks) and chunks[i + 1][0] - t < GAP:
            continue
        rows = screen.display
        bar = BAR.search("\n".join(rows[3:8]))
        frames.append(Frame(t, pending, rows[0].startswith(" neuron-top "), rows[2].startswith(" Apps "),
                            any(re.match(r"ND\d", r) and re.search(r"ND15 .*\]", r) for r in rows),
                            len(bar.group(1)) if bar else None))
        pending = 0
    return frames


def summary(name: str, runs: list[Run]) -> None:
    def med(values: list[float | None], fmt: str) -> str:
        got = [v for v in values if v is not None]
        return format(statistics.median(got), fmt) if got else "never"

    starts = [r.startup() for r in runs]
    print(f"{name:10} start-up frames {med([len(s) for s in starts], '.0f'):>3}  "
          f"bytes {med([sum(f.size for f in s) for s in starts], ',.0f'):>7}  "
          f"title at {med([r.first('title') for r in runs], '.3f')} s  "
          f"grid whole at {med([r.first('grid_done') for r in runs], '.3f')} s  "
          f"glitched frames {med([r.glitches() for r in runs], '.0f')} "
          f"(per run: {', '.join(str(r.glitches()) for r in runs)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.5)
    ap.add_argument("--other", type=Path, help="another checkout to run in alternation (the baseline)")
    ap.add_argument("--verbose", action="store_true", help="print every frame of every run")
    ns = ap.parse_args()
    try:
        import pyte  # noqa: F401
    except ImportError:
        print("bench_startup: needs pyte (pip install -e '.[test]')", file=sys.stderr)
        return 2
    trees = {"this": ROOT} | ({"other": ns.other.resolve()} if ns.other else {})
    print(f"bench_startup: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"terminal {W}x{H}, {ns.runs} runs of {ns.seconds} s; load average {os.getloadavg()[0]:.2f}")
    results: dict[str, list[Run]] = {name: [] for name in trees}
    for _ in range(ns.runs):
        for name, tree in trees.items():  # alternating: both see the same minutes of the machine
            run = Run(frames_of(record(tree, ns.seconds)))
            results[name].append(run)
            if ns.verbose:
                print(f"-- {name}")
                for f in run.frames:
                    print(f"   {f.end:6.3f} s {f.size:6d} B  title={f.title:d} tabs={f.tabs:d} "
                          f"grid_done={f.grid_done:d} bar_width={f.bar_width}")
    for name, runs in results.items():
        summary(name, runs)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

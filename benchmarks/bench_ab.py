"""Two versions of the dashboard side by side in one tmux server: CPU and bytes to the terminal.

    python benchmarks/bench_ab.py OTHER_TREE [--runs 3] [--seconds 60] [--memory-hog] [--size 120x40] [--pipe]

OTHER_TREE is another checkout of neuron-top (e.g. ``git worktree add /tmp/base <commit>``); it runs beside this
tree's code, both as ``neuron-top demo --instance trn2.48xlarge --seed 7`` at 200x60 (or ``--size``), and each window measures both
at once. ``--pipe`` runs each as ``bench_peers.py`` does, fed by a pipe (``neuron-top --command "neuron-top demo ...
--emit"``: the reader thread, framing and decoding counted, the simulator's CPU not). Why: this shared 2-core
machine's speed drifts within the hour, so runs of ``bench_ui.py`` minutes apart do not compare; two programs
measured in the same seconds do. Per run: CPU % of one core of the whole process and of its UI (main) thread,
and bytes/s written to the terminal, from 6 s after start (``--warm-up``).
``--memory-hog`` runs ``bench_ui.py``'s memory hog (a ``nice 19`` copy loop over 64 MB) during each window: a change
that makes an update touch less memory shows more there (the dashboard costs more beside it).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ui import PY, ROOT, Tmux, cpu_seconds, memory_hog, pane


def one_run(other: Path, seconds: float, tmp: Path, warm_up: float = 6.0,
            hog: bool = False, size: tuple[int, int] = (200, 60),
            pipe: bool = False) -> dict[str, tuple[float, float, float]]:
    tmux = Tmux()
    trees = {"other": other, "this": ROOT}
    try:
        tmux.new("keep", "sleep 86400")
        for name, tree in trees.items():
            demo = f"{PY} -m neuron_top demo --instance trn2.48xlarge --seed 7"
            run = f"{PY} -m neuron_top --command {shlex.quote(demo + ' --emit')}" if pipe else demo
            cmd = f"cd {shlex.quote(str(tree))} && exec {run}"
            tmux("new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]),
                 "-e", "TERM=xterm-256color", f"unset COLUMNS LINES; {cmd}")
        time.sleep(warm_up)
        with memory_hog(tmp) if hog else contextlib.nullcontext():
            return _window(tmux, trees, seconds, tmp)
    finally:
        tmux.kill()


def _window(tmux: Tmux, trees: dict[str, Path], seconds: float, tmp: Path) -> dict[str, tuple[float, float, float]]:
    """CPU % of each dashboard (whole process, UI thread) and its bytes/s to the terminal over ``seconds``."""
    pids = {n: tmux.pid(n) for n in trees}
    files = {n: tmp / f"{n}-{time.monotonic_ns()}.out" for n in trees}
    for n in trees:
        tmux("pipe-pane", "-o", "-t", pane(n), f"cat >> {shlex.quote(str(files[n]))}")
    time.sleep(0.3)

    def sample() -> dict[str, tuple[float, float, int]]:
        return {n: (cpu_seconds(p), cpu_seconds(p, p), files[n].stat().st_size if files[n].exists() else 0)
                for n, p in pids.items()}

    start, t0 = sample(), time.monotonic()
    time.sleep(seconds)
    end, dt = sample(), time.monotonic() - t0
    return {n: ((end[n][0] - start[n][0]) / dt * 100, (end[n][1] - start[n][1]) / dt * 100,
                (end[n][2] - start[n][2]) / dt) for n in trees}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of neuron-top to run beside this one")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--warm-up", type=float, default=6.0,
                    help="seconds from start to the window (6); 30 starts after the demo's start-up layout changes")
    ap.add_argument("--size", default="200x60", help="terminal size, WxH (default 200x60)")
    ap.add_argument("--pipe", action="store_true",
                    help="each dashboard fed by a pipe from the demo's --emit, as bench_peers.py measures it")
    ap.add_argument("--memory-hog", action="store_true",
                    help="a process streaming memory on the other CPU during each window (see bench_ui.py)")
    ns = ap.parse_args()
    if not (ns.other / "neuron_top").is_dir():
        print(f"{ns.other} is not a neuron-top checkout", file=sys.stderr)
        return 2
    ratios = []
    with tempfile.TemporaryDirectory(prefix="neuron-top-ab-") as tmpdir:
        for i in range(ns.runs):
            size = tuple(int(x) for x in ns.size.lower().split("x"))
            r = one_run(ns.other.resolve(), ns.seconds, Path(tmpdir), ns.warm_up, ns.memory_hog,
                        (size[0], size[1]), ns.pipe)
            for n in ("other", "this"):
                cpu, main_cpu, rate = r[n]
                print(f"run {i + 1} {n:5}  CPU {cpu:5.2f}%  UI thread {main_cpu:5.2f}%  bytes/s {rate:7.0f}", flush=True)
            ratios.append(r["this"][0] / max(r["other"][0], 1e-9))
    print(f"this / other, whole-process CPU: {', '.join(f'{x:.2f}' for x in ratios)} "
          f"(median {statistics.median(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The dashboard beside the monitors a user compares it with: CPU of each, in the same tmux server and seconds.

    python benchmarks/bench_peers.py [--runs 3] [--seconds 60] [--warm-up 25] [--sizes 120x40,200x60] [--glances]

Targets (issue 38): the pipe-fed dashboard (``neuron-top --command "neuron-top demo --instance trn2.48xlarge
--seed 7 --emit"``: the simulator runs in the child, so its CPU is not counted) costs <= 1.0x btop's CPU at 120x40
and <= 1.2x at 200x60, at one update a second.

Per size and run, every program starts in a tmux pane of that size, all at once: the pipe-fed dashboard, the
in-process demo (``neuron-top demo --instance trn2.48xlarge --seed 7``: simulator included), btop (``update_ms =
1000`` in a btop.conf under a temporary XDG_CONFIG_HOME; its default is 2000), ``htop -d 10``, ``glances -t 1``
(see ``--glances``), ``top -d 1`` and a minimal Textual app (one Static: Textual's own cost). After the warm-up,
each program's CPU over the same window (all its threads, the scheduler's nanosecond count, ``bench_ui.
cpu_seconds``) as % of one core, its bytes/s to the terminal, and for each run the ratio of the dashboard to btop.
Sizes run one after the other (fourteen programs at once on two CPUs would measure the contention). Each run
prints the load average before the warm-up, before the window and after it, and the machine's steal time over
the warm-up and over the window (CPU the hypervisor gave to others). The summary gives medians over ``--runs``
(each ratio from one run) and repeats each run's load and steal.

glances is not installed with the project: ``--glances`` installs it with pip into a venv of its own
(``/tmp/neuron-top-bench-glances``) when it is not on PATH or there already; without the flag and without an
install it is skipped with a note. Quick check of the script: ``--seconds 10 --warm-up 5 --runs 1``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ui import (
    MINIMAL_APP,
    PY,
    ROOT,
    Measured,
    Tmux,
    cpu_ticks,
    load,
    measure_window,
    steal_since,
)
from pyc import compile_bytecode

GLANCES_VENV = Path(tempfile.gettempdir()) / "neuron-top-bench-glances"
TARGETS = {(120, 40): 1.0, (200, 60): 1.2}
"""Dashboard / btop CPU, at most, per size (issue 38)."""
DEMO = f"{PY} -m neuron_top demo --instance trn2.48xlarge --seed 7"
DASHBOARD = "pipe"


def glances_path(install: bool) -> tuple[str | None, str]:
    """The glances executable and a note: on PATH, in our venv, or installed there now when ``install``."""
    found = shutil.which("glances") or (str(GLANCES_VENV / "bin" / "glances")
                                        if (GLANCES_VENV / "bin" / "glances").exists() else None)
    if found or not install:
        return found, "" if found else "glances skipped: not installed (--glances installs it into " \
                                       f"{GLANCES_VENV} with pip)"
    print(f"installing glances into {GLANCES_VENV} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(GLANCES_VENV)], check=True)
        subprocess.run([str(GLANCES_VENV / "bin" / "pip"), "install", "-q", "glances"], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        return None, f"glances skipped: installing it failed ({e})"
    return str(GLANCES_VENV / "bin" / "glances"), ""


def programs(minimal: Path, glances: str | None) -> dict[str, tuple[str, str, str]]:
    """Pane name -> (label, command, text on its screen once it draws)."""
    emit = f"{DEMO} --emit"
    out = {
        DASHBOARD: ("neuron-top fed by a pipe", f"{PY} -m neuron_top --command {shlex.quote(emit)}", "ND15"),
        "demo": ("neuron-top demo (in-process sim.)", DEMO, "ND15"),
        "btop": ("btop (update_ms 1000)", "btop", "1000ms"),
        "htop": ("htop -d 10", "htop -d 10", "PID"),
        "glances": ("glances -t 1", f"{shlex.quote(glances or '')} -t 1", "CPU"),
        "top": ("top -d 1", "top -d 1", "PID"),
        "minimal": ("minimal Textual app", f"{PY} {shlex.quote(str(minimal))}", "minimal-ready"),
    }
    if glances is None:
        del out["glances"]
    for name in ("btop", "htop", "top"):
        if shutil.which(name) is None:
            del out[name]
    return out


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def ready(tmux: Tmux, name: str, text: str, timeout: float = 60.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if text in tmux.screen(name):
            return True
        time.sleep(0.1)
    return False


def one_size(tmux: Tmux, progs: dict[str, tuple[str, str, str]], size: tuple[int, int], warm_up: float,
             seconds: float, tmp: Path) -> tuple[dict[str, Measured], list[str]]:
    """Every program in a pane of ``size``, warmed up, measured over one window, stopped. Also the lines that say
    the conditions (load, steal, programs that did not start)."""
    notes = [f"load average before the warm-up: {load()}"]
    start = cpu_ticks()
    for name, (_, command, _) in progs.items():
        tmux.new(name, command, size)
    names = []
    for name, (label, _, text) in progs.items():
        if ready(tmux, name, text):
            names.append(name)
        else:
            notes.append(f"{label}: {text!r} not on its screen after 60 s, left out:\n{tmux.screen(name)}")
    time.sleep(warm_up)
    notes.append(f"steal over start-up and warm-up: {steal_since(start)}; load average before the window: {load()}")
    ticks = cpu_ticks()
    measured = measure_window(tmux, names, seconds, tmp)
    notes.append(f"steal over the window: {steal_since(ticks)}; load average after it: {load()}")
    stop_sessions(tmux, list(progs))
    return measured, notes


def stop_sessions(tmux: Tmux, names: list[str], grace: float = 3.0) -> None:
    """Kill the sessions and make sure their programs went with them: tmux only sends SIGHUP, and one glances
    outlived it (reparented to init, 5% of a core through the next runs' windows). Each pane's program leads its
    own process group: what is left of it after ``grace`` seconds is killed."""
    groups = []
    for name in names:
        with contextlib.suppress(subprocess.CalledProcessError, ValueError):  # never started, or gone already
            groups.append(tmux.pid(name))
        tmux.kill_session(name)
    deadline = time.monotonic() + grace
    for pgid in groups:
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.05)
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress shows when piped to a file
    compile_bytecode(ROOT)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per size (3); the summary gives medians")
    ap.add_argument("--seconds", type=float, default=60.0, help="measurement window (60)")
    ap.add_argument("--warm-up", "--warmup", dest="warm_up", type=float, default=25.0,
                    help="seconds after every program has drawn before the window opens (25)")
    ap.add_argument("--sizes", default="120x40,200x60", help="terminal sizes, WxH, comma-separated")
    ap.add_argument("--glances", action="store_true",
                    help=f"install glances with pip into {GLANCES_VENV} if it is not there (else skipped)")
    ns = ap.parse_args()
    sizes = [parse_size(s) for s in ns.sizes.split(",")]
    if shutil.which("tmux") is None:
        print("tmux is not installed: the measurements need it", file=sys.stderr)
        return 2
    glances, note = glances_path(ns.glances)
    print(f"bench_peers: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs "
          f"(nproc {len(os.sched_getaffinity(0))}), python {sys.version.split()[0]}, code "
          f"{subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}")
    print(f"{ns.runs} run(s) per size, warm-up {ns.warm_up:.0f} s, window {ns.seconds:.0f} s; load average {load()}")
    if note:
        print(note)
    results: dict[tuple[int, int], list[dict[str, Measured]]] = {s: [] for s in sizes}
    conditions: dict[tuple[int, int], list[str]] = {s: [] for s in sizes}
    with tempfile.TemporaryDirectory(prefix="neuron-top-peers-") as tmpdir:
        tmp = Path(tmpdir)
        config = tmp / "config"  # btop's update_ms, and the dashboard's default layout whatever the user chose
        (config / "btop").mkdir(parents=True)
        (config / "btop" / "btop.conf").write_text("update_ms = 1000\n")
        os.environ["XDG_CONFIG_HOME"] = str(config)  # the tmux server, and so every pane, inherits it
        minimal = tmp / "minimal_app.py"
        minimal.write_text(MINIMAL_APP)
        progs = programs(minimal, glances)
        tmux = Tmux()
        try:
            tmux.new("keep", "sleep 86400")  # the server outlives the sessions we start and kill
            for run in range(ns.runs):
                for size in sizes:
                    measured, notes = one_size(tmux, progs, size, ns.warm_up, ns.seconds, tmp)
                    results[size].append(measured)
                    conditions[size].append("; ".join(n for n in notes if "\n" not in n))
                    print(f"\n[{size[0]}x{size[1]}, run {run + 1}/{ns.runs}] {ns.seconds:.0f} s window")
                    for line in notes:
                        print(line)
                    print(f"{'program':36} {'CPU % of one core':>18} {'UI thread %':>12} {'bytes/s':>9}")
                    for name, m in measured.items():
                        print(f"{progs[name][0]:36} {m.cpu_pct:18.2f} {m.extra['main']:>12} {m.bytes_per_s:9.0f}")
                    if DASHBOARD in measured and "btop" in measured:
                        ratio = measured[DASHBOARD].cpu_pct / max(measured["btop"].cpu_pct, 1e-9)
                        print(f"dashboard (pipe-fed) / btop: {ratio:.2f}x (target <= {TARGETS.get(size, '?')}x)",
                              flush=True)
        finally:
            tmux.kill()

    print(f"\n[summary] medians of {ns.runs} run(s); CPU % of one core (bytes/s to the terminal)")
    for size, runs in results.items():
        print(f"\n{size[0]}x{size[1]}:")
        for name, (label, _, _) in progs.items():
            xs = [r[name] for r in runs if name in r]
            if xs:
                print(f"  {label:36} {statistics.median(m.cpu_pct for m in xs):6.2f}%  "
                      f"(runs {', '.join(f'{m.cpu_pct:.2f}' for m in xs)}; "
                      f"{statistics.median(m.bytes_per_s for m in xs):.0f} B/s)")
        ratios = [r[DASHBOARD].cpu_pct / max(r["btop"].cpu_pct, 1e-9) for r in runs if DASHBOARD in r and "btop" in r]
        if ratios:
            target = TARGETS.get(size)
            med = statistics.median(ratios)
            verdict = "" if target is None else f", target <= {target}x: {'met' if med <= target else 'NOT met'}"
            print(f"  dashboard / btop: median {med:.2f}x (runs {', '.join(f'{x:.2f}' for x in ratios)}){verdict}")
            over = [r[DASHBOARD].cpu_pct - r["minimal"].cpu_pct for r in runs if "minimal" in r]
            if over:
                print(f"  dashboard - minimal Textual app: {statistics.median(over):+.2f} points of a core")
        for i, line in enumerate(conditions[size], 1):
            print(f"  run {i}: {line}")
    print(f"\nload average at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

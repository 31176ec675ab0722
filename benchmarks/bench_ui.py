"""What the dashboard costs in a real terminal, against baselines measured in the same run.

    python benchmarks/bench_ui.py [--seconds 60] [--quick] [--results FILE]

Targets (performance acceptance list): a trn2.48xlarge demo (128 cores, 192 vCPUs, 8 apps) at one report per
second costs <= 1% of one core over >= 60 s in a real terminal; each update renders in <= 20 ms; a paused view
costs ~0; <= 5 KB/s written to the terminal at 1 Hz on 200x60; first frame <= 0.5 s after start.

What is measured, and how:

* CPU: ``neuron-top demo --instance trn2.48xlarge --seed 7`` runs in tmux at 200x60 (a real pty; headless runs
  skip the terminal writes and understate CPU). After a warm-up, the CPU time of the process (all its threads: the
  scheduler's nanosecond count from /proc/PID/task/*/schedstat, not the tick-sampled utime+stime; see
  ``cpu_seconds``) over the window, as % of one core. In three settings:

  - alone: the dashboard is the only program in the tmux server, as a user runs it (the target's reading);
  - beside a memory hog: the same, while a ``nice 19`` process copies a 64 MB buffer back and forth on the other
    CPU, as on an instance whose workload streams memory (it empties the shared caches and takes memory
    bandwidth; a CPU-bound neighbour changed nothing here). The slow phases of this shared host, when the same
    code measures well above its usual figure, cannot be made on purpose; this is the nearest we can make.
    These two take turns, ``ROUNDS`` windows each adding up to ``--seconds``: the demo's apps start, stop and
    change phase as it runs, so windows minutes apart draw different screens;
  - side by side: the baselines in one window and terminal size: ``neuron-top --command "neuron-top demo
    --emit ..."`` (the dashboard fed from another process as neuron-monitor would feed it: the simulator's own
    CPU is then the child's, not counted), a minimal Textual app (one Static) and ``top -d 1`` (``htop -d 10``
    too if installed), with the dashboard still running. Five programs waking once a second on two CPUs may slow
    each other, so the dashboard's figure here can read above its figure alone.

  Each window also gives the machine's steal time (/proc/stat: CPU time the hypervisor gave to others while
  this machine wanted it). Then ``p`` pauses the dashboard and the same is measured for the paused view.
* Bytes to the terminal: ``tmux pipe-pane`` copies everything each program writes to its pane into a file over
  the same window; bytes / seconds. That is what SSH would carry (before compression).
* First frame: wall time from ``tmux new-session`` (process start) until capture-pane shows the header text,
  polled every 10 ms; the same for the minimal app (its one line). Median of several starts.
* Render per update: in-process, ``App.run_test(size=(200, 60))`` fed the seeded demo reports through
  ``app.accept_snapshot`` (as the collector does), timing from accept until ``pilot.pause()`` returns (message
  handling, reactive updates, layout, compositor, direct panel paints, and the terminal bytes themselves: the
  headless driver writes nothing, so ``App._display`` is replaced by one that renders each update to a string
  for a 256-colour terminal, as the real driver would, and drops it), and separately the time inside
  ``Screen._on_timer_update`` and ``paint.flush`` (layout, compositor, painting and the bytes only).

The machine is shared: the load average is recorded before and after each phase.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pyc import compile_bytecode  # noqa: E402  (benchmarks/pyc.py, beside this script)  # run as a plain script from anywhere

PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
W, H = 200, 60
ROUNDS = 2
"""Windows alone and beside the memory hog, each, taken in turns."""

MINIMAL_APP = '''\
"""The smallest useful Textual app: the cost of Textual itself, for comparison."""
from textual.app import App
from textual.widgets import Static


class Minimal(App):
    def compose(self):
        yield Static("minimal-ready")


Minimal().run()
'''

MEMORY_HOG = '''\
"""A neighbour that streams memory: copies a 64 MB buffer back and forth, at the lowest priority, until its
parent is gone (a benchmark killed before it could stop the hog must not leave it slowing every later run)."""
import os
os.nice(19)
parent = os.getppid()
a, b = bytearray(64 << 20), bytearray(b"\\x01" * (64 << 20))
while os.getppid() == parent:
    a[:] = b
    b[:] = a
'''


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_ticks() -> tuple[int, int]:
    """(steal, all) ticks of the whole machine so far, from /proc/stat's first line (0, 1 where it is missing)."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 1
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_since(before: tuple[int, int]) -> str:
    """The share of the machine's CPU time stolen by the hypervisor since ``before`` (``cpu_ticks()``)."""
    steal, total = cpu_ticks()
    return f"{(steal - before[0]) / max(total - before[1], 1) * 100:.2f}%"


def pane(session: str) -> str:
    """The tmux target of ``session``'s pane, matched exactly. Why: a bare name is looked up loosely (tmux 3.3
    took ``-t top`` for the session "htop" while both existed: every "top -d 1" figure before this fix was
    htop's)."""
    return f"={session}:"


class Tmux:
    """A private tmux server (its own socket) for the benchmark's panes."""

    def __init__(self) -> None:
        self.socket = f"nt-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.started = False

    def __call__(self, *args: str, check: bool = True) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                              text=True, check=check, timeout=15).stdout

    def new(self, name: str, command: str, size: tuple[int, int] | None = None) -> None:
        """A detached session (``size``, default W x H) running ``command`` with exec, so the pane's pid is the
        program's."""
        w, h = size or (W, H)
        line = f"unset COLUMNS LINES; cd {shlex.quote(str(ROOT))} && exec {command}"
        self("new-session", "-d", "-s", name, "-x", str(w), "-y", str(h), "-e", "TERM=xterm-256color", line)

    def pid(self, name: str) -> int:
        return int(self("display-message", "-p", "-t", pane(name), "#{pane_pid}").strip())

    def screen(self, name: str) -> str:
        return self("capture-pane", "-p", "-t", pane(name), check=False)

    def wait_for(self, name: str, text: str, timeout: float = 60.0, poll: float = 0.05) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if text in self.screen(name):
                return time.monotonic() - t0
            time.sleep(poll)
        raise SystemExit(f"{name}: {text!r} did not appear within {timeout:.0f}s:\n{self.screen(name)}")

    def kill_session(self, name: str) -> None:
        self("kill-session", "-t", f"={name}", check=False)

    def kill(self) -> None:
        """Stop the server and remove its socket file (tmux leaves it behind after kill-server)."""
        sock = self("display-message", "-p", "#{socket_path}", check=False).strip()
        self("kill-server", check=False)
        if sock:
            Path(sock).unlink(missing_ok=True)


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """CPU time of the whole process (all its threads), or of one thread, in seconds: the scheduler's own count
    in nanoseconds (``/proc/PID/task/TID/schedstat``) where the kernel keeps it, else utime + stime.

    Why not utime + stime alone: on this kernel they are sampled at the timer tick (100 Hz), so a program that
    runs ~9 ms a second in short bursts is charged ~55 ticks in a minute, give or take ~7 by chance: +-13% from
    the counting alone, as much as the changes measured. The scheduler's count is exact. (A thread that ended
    during the window is missing from it; the dashboard's threads live as long as the app.)"""
    tids = [tid] if tid is not None else [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    try:
        return sum(int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0]) for t in tids) / 1e9
    except (OSError, ValueError, IndexError):
        return ticks_seconds(pid, tid)


def ticks_seconds(pid: int, tid: int | None = None) -> float:
    """utime + stime of the whole process (all threads), or of one thread, in seconds (timer-tick sampled)."""
    stat = Path(f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


@dataclass
class Measured:
    name: str
    cpu_pct: float = 0.0
    bytes_per_s: float = 0.0
    seconds: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)


def measure_window(tmux: Tmux, names: list[str], seconds: float, tmp: Path) -> dict[str, Measured]:
    """CPU % of one core and bytes/s to the terminal for each pane over the same ``seconds``."""
    pids = {n: tmux.pid(n) for n in names}
    files = {n: tmp / f"{n}-{uuid.uuid4().hex[:6]}.out" for n in names}
    for n in names:
        tmux("pipe-pane", "-o", "-t", pane(n), f"cat >> {shlex.quote(str(files[n]))}")
    time.sleep(0.2)  # let pipe-pane's cat start before the window opens
    def sample(p: int, n: str) -> tuple[float, int, float, float]:
        return (cpu_seconds(p), files[n].stat().st_size if files[n].exists() else 0, cpu_seconds(p, p),
                ticks_seconds(p))

    start = {n: sample(p, n) for n, p in pids.items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    end = {n: sample(p, n) for n, p in pids.items()}
    dt = time.monotonic() - t0
    for n in names:
        tmux("pipe-pane", "-t", pane(n))
    return {n: Measured(n, (end[n][0] - start[n][0]) / dt * 100.0, (end[n][1] - start[n][1]) / dt, dt,
                        {"main": f"{(end[n][2] - start[n][2]) / dt * 100.0:.2f}",
                         "ticks": f"{(end[n][3] - start[n][3]) / dt * 100.0:.2f}"}) for n in names}


def mean_cpu(windows: list[Measured]) -> float:
    return statistics.mean(m.cpu_pct for m in windows)


@contextlib.contextmanager
def memory_hog(tmp: Path) -> Iterator[None]:
    """``MEMORY_HOG`` running (its script written to ``tmp``) while the block runs; stopped after it."""
    script = tmp / "memory_hog.py"
    script.write_text(MEMORY_HOG)
    hog = subprocess.Popen([PY, str(script)])
    try:
        time.sleep(1.5)  # its buffers allocated and filled
        yield
    finally:
        hog.kill()
        hog.wait()


def alone_and_beside_hog(tmux: Tmux, seconds: float, tmp: Path) -> tuple[dict[str, list[Measured]],
                                                                        dict[str, list[str]]]:
    """The dashboard (pane "neuron-top", alone in ``tmux``) measured alone and beside ``memory_hog``, in turns:
    ``ROUNDS`` windows of each, adding up to ``seconds`` each. Why in turns: the demo's apps start, stop and
    change phase as it runs, so two windows minutes apart draw different screens. Per case: the windows, and the
    machine's steal time in each."""
    windows: dict[str, list[Measured]] = {"alone": [], "beside a memory hog": []}
    steal: dict[str, list[str]] = {case: [] for case in windows}
    for _ in range(ROUNDS):
        for case, ms in windows.items():
            with contextlib.nullcontext() if case == "alone" else memory_hog(tmp):
                ticks = cpu_ticks()
                ms.append(measure_window(tmux, ["neuron-top"], seconds / ROUNDS, tmp)["neuron-top"])
                steal[case].append(steal_since(ticks))
    return windows, steal


def first_frames(tmux: Tmux, runs: int, minimal: Path) -> dict[str, list[float]]:
    """Seconds from session start until the first meaningful text is on screen; alternating programs."""
    demo = f"{PY} -m neuron_top demo --instance trn2.48xlarge --seed 7"
    cases = (("neuron-top", demo, ("DEMO", "ND15")), ("minimal", f"{PY} {shlex.quote(str(minimal))}", ("minimal-ready",)))
    out: dict[str, list[float]] = {"neuron-top header": [], "neuron-top data": [], "minimal Textual app": []}
    for i in range(runs):
        for label, cmd, wants in cases:
            name = f"ff{i}{label[:3]}"
            t0 = time.monotonic()
            tmux.new(name, cmd)
            seen: dict[str, float] = {}
            while len(seen) < len(wants) and time.monotonic() - t0 < 30:
                screen = tmux.screen(name)
                for w in wants:
                    if w not in seen and w in screen:
                        seen[w] = time.monotonic() - t0
                time.sleep(0.01)
            tmux.kill_session(name)
            if label == "neuron-top":
                out["neuron-top header"].append(seen.get("DEMO", float("nan")))
                out["neuron-top data"].append(seen.get("ND15", float("nan")))
            else:
                out["minimal Textual app"].append(seen.get("minimal-ready", float("nan")))
    return out


@contextlib.contextmanager
def terminal_bytes(width: int, height: int) -> Iterator[None]:
    """While inside, every screen update of every app is rendered to a string for a 256-colour terminal of that
    size, as the real driver would write it (the headless driver of ``run_test`` writes nothing, so a render
    time measured with it would leave the terminal bytes out). Patched on ``App``: enter it before the app runs."""
    from rich.console import Console
    from textual._compositor import CompositorUpdate
    from textual.app import App
    from textual.screen import Screen

    console = Console(force_terminal=True, color_system="256", width=width, height=height, file=io.StringIO())
    display = App._display

    def render(self: App, screen: Screen, renderable: object) -> None:
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            renderable.render_segments(console)  # what the driver would write; the headless driver skips it

    App._display = render  # type: ignore[method-assign]
    try:
        yield
    finally:
        App._display = display  # type: ignore[method-assign]


async def render_times(updates: int) -> dict[str, list[float]]:
    """Per update, in ms: CPU of the event-loop thread from accept until idle, the same for an idle pause (the
    baseline), and wall time inside ``accept_snapshot`` plus every ``Screen._on_timer_update`` and panel
    ``paint.flush`` (the direct write of changed cells) it caused."""
    from textual.screen import Screen

    from neuron_top.tui.render import paint
    from tests.helpers import demo_snapshots, feed, make_app

    snaps = demo_snapshots("trn2.48xlarge", 7, 40 + updates)
    inside: list[float] = []
    original = Screen._on_timer_update

    def timed(self: Screen) -> None:
        t = time.perf_counter()
        original(self)
        inside.append(time.perf_counter() - t)

    flush = paint.flush

    def timed_flush(app: object) -> None:
        t = time.perf_counter()
        flush(app)  # type: ignore[arg-type]
        inside.append(time.perf_counter() - t)

    # Patched before any screen exists: each screen's update timer binds the method when it is created.
    Screen._on_timer_update = timed  # type: ignore[method-assign]
    paint.flush = timed_flush  # type: ignore[assignment]
    out: dict[str, list[float]] = {"cpu": [], "idle_cpu": [], "busy_wall": []}
    try:
        app = make_app()
        with terminal_bytes(W, H):
            async with app.run_test(size=(W, H)) as pilot:
                await feed(pilot, snaps[:40])  # a full history first, as after 40 s of running
                for s in snaps[40:]:
                    c = time.thread_time()
                    await pilot.pause()
                    out["idle_cpu"].append((time.thread_time() - c) * 1000)
                    inside.clear()
                    c = time.thread_time()
                    t = time.perf_counter()
                    app.accept_snapshot(s)
                    sync = time.perf_counter() - t
                    await pilot.pause()
                    out["cpu"].append((time.thread_time() - c) * 1000)
                    out["busy_wall"].append((sync + sum(inside)) * 1000)
    finally:
        Screen._on_timer_update = original  # type: ignore[method-assign]
        paint.flush = flush  # type: ignore[assignment]
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> int:
    global W, H  # --size
    compile_bytecode(ROOT)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="measurement window while running (60)")
    ap.add_argument("--warm-up", type=float, default=3.0,
                    help="seconds after the first frame before the window opens (3; the demo's apps start and "
                         "panels grow during the first minute: 30 or more measures the steady state)")
    ap.add_argument("--paused-seconds", type=float, default=None, help="window while paused (seconds/3, >= 10)")
    ap.add_argument("--first-frame-runs", type=int, default=5)
    ap.add_argument("--updates", type=int, default=60, help="updates timed in-process (60)")
    ap.add_argument("--quick", action="store_true", help="10 s windows, 3 starts, 20 updates")
    ap.add_argument("--size", default=f"{W}x{H}", metavar="WxH", help=f"terminal size ({W}x{H}; 120x40 too)")
    ap.add_argument("--results", type=Path, default=None,
                    help="also append the report to this markdown file (nothing is written by default)")
    ns = ap.parse_args()
    W, H = (int(n) for n in ns.size.lower().split("x"))
    if ns.quick:
        ns.seconds, ns.first_frame_runs, ns.updates = 10.0, 3, 20
    paused_s = ns.paused_seconds or max(10.0, ns.seconds / 3)
    if shutil.which("tmux") is None:
        print("tmux is not installed: the terminal measurements need it", file=sys.stderr)
        return 2

    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    say(f"bench_ui: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"python {sys.version.split()[0]}, terminal {W}x{H}")
    say(f"load average before: {load()}")
    tmux = Tmux()
    with tempfile.TemporaryDirectory(prefix="neuron-top-bench-") as tmpdir:
        tmp = Path(tmpdir)
        # the default layout, whatever the user running this chose (tmux's server and panes inherit it)
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
        minimal = tmp / "minimal_app.py"
        minimal.write_text(MINIMAL_APP)
        try:
            tmux.new("keep", "sleep 86400")  # the server outlives the sessions we start and kill
            # --- running alone, then beside a memory hog ---
            tmux.new("neuron-top", f"{PY} -m neuron_top demo --instance trn2.48xlarge --seed 7")
            tmux.wait_for("neuron-top", "ND15")
            time.sleep(ns.warm_up)  # warm-up: first-time imports done; the demo's apps are still starting
            say(f"\n[alone, and beside a memory hog] {ROUNDS} windows of {ns.seconds / ROUNDS:.0f} s each, "
                f"in turns; the dashboard the only program in tmux; load average {load()}")
            windows, steal = alone_and_beside_hog(tmux, ns.seconds, tmp)
            for case, ms in windows.items():
                say(f"{'neuron-top demo trn2 1 Hz, ' + case:47} {mean_cpu(ms):5.2f}% of one core "
                    f"(windows {', '.join(f'{m.cpu_pct:.2f}' for m in ms)}; UI thread "
                    f"{statistics.mean(float(m.extra['main']) for m in ms):.2f}%), "
                    f"{statistics.mean(m.bytes_per_s for m in ms):.0f} bytes/s; steal {', '.join(steal[case])}")
            alone = mean_cpu(windows["alone"])
            say(f"beside the hog / alone: {mean_cpu(windows['beside a memory hog']) / max(alone, 1e-9):.2f}x")

            # --- the baselines side by side with it ---
            # The same reports from a separate process, as neuron-monitor would send them: the dashboard's own
            # cost without the simulator's (~0.5 ms per trn2 report, `bench_demo.py`) inside it.
            emit = f"{PY} -m neuron_top demo --instance trn2.48xlarge --seed 7 --emit"
            tmux.new("neuron-top-cmd", f"{PY} -m neuron_top --command {shlex.quote(emit)}")
            tmux.new("minimal", f"{PY} {shlex.quote(str(minimal))}")
            tmux.new("top", "top -d 1")
            panes = ["neuron-top", "neuron-top-cmd", "minimal", "top"]
            if shutil.which("htop"):
                tmux.new("htop", "htop -d 10")
                panes.append("htop")
            tmux.wait_for("neuron-top-cmd", "ND15")
            tmux.wait_for("minimal", "minimal-ready")
            time.sleep(ns.warm_up)
            say(f"\n[side by side] {ns.seconds:.0f} s window, all panes at once; load average {load()}")
            ticks = cpu_ticks()
            run = measure_window(tmux, panes, ns.seconds, tmp)
            nt = run["neuron-top"]
            say(f"{'program':34} {'CPU % of one core':>18} {'bytes/s to terminal':>20} {'(utime+stime, ticks)':>21}")
            for n in panes:
                label = {"neuron-top": "neuron-top demo trn2 1 Hz",
                         "neuron-top-cmd": "neuron-top --command 'demo --emit'", "minimal": "minimal Textual app",
                         "top": "top -d 1", "htop": "htop -d 10"}[n]
                say(f"{label:34} {run[n].cpu_pct:18.2f} {run[n].bytes_per_s:20.0f} {run[n].extra['ticks']:>21}")
            say("of which the UI (main) thread: " + ", ".join(
                f"{n} {run[n].extra['main']}%" for n in ("neuron-top", "neuron-top-cmd")) +
                " (the rest: the source/collector thread and Textual's writer and input threads)")
            say(f"steal {steal_since(ticks)}; neuron-top here {nt.cpu_pct / max(alone, 1e-9):.2f}x alone")
            say(f"neuron-top vs minimal Textual app: {nt.cpu_pct - run['minimal'].cpu_pct:+.2f} points of a core; "
                f"vs top -d 1: {nt.cpu_pct / max(run['top'].cpu_pct, 1e-9):.1f}x")
            say(f"bytes per update (1 report/s): {nt.bytes_per_s / 1000:.2f} KB")

            # --- paused ---
            tmux("send-keys", "-t", pane("neuron-top"), "p")
            tmux.wait_for("neuron-top", "PAUSED", timeout=10)
            time.sleep(1.5)
            say(f"\n[paused] {paused_s:.0f} s window; load average {load()}")
            paused = measure_window(tmux, ["neuron-top", "minimal"], paused_s, tmp)
            say(f"{'neuron-top paused':28} {paused['neuron-top'].cpu_pct:18.2f} "
                f"{paused['neuron-top'].bytes_per_s:20.0f}")
            say(f"{'minimal Textual app':28} {paused['minimal'].cpu_pct:18.2f} {paused['minimal'].bytes_per_s:20.0f}")
            for n in panes:
                tmux.kill_session(n)

            # --- first frame ---
            say(f"\n[first frame] {ns.first_frame_runs} starts each, alternating; load average {load()}")
            ff = first_frames(tmux, ns.first_frame_runs, minimal)
            for label, xs in ff.items():
                say(f"{label:28} median {statistics.median(xs):.3f} s  (min {min(xs):.3f}, max {max(xs):.3f})")
            ratio = statistics.median(ff["neuron-top header"]) / statistics.median(ff["minimal Textual app"])
            say(f"neuron-top header / minimal app: {ratio:.2f}x")
        finally:
            tmux.kill()

    # --- render per update, in-process ---
    say(f"\n[render] {ns.updates} updates in-process at {W}x{H} (App.run_test); load average {load()}")
    r = asyncio.run(render_times(ns.updates))
    for key, label in (("busy_wall", "wall in accept_snapshot + screen updates"),
                       ("cpu", "CPU, accept until idle"), ("idle_cpu", "CPU, idle pause (baseline)")):
        xs = r[key]
        say(f"{label:42} median {statistics.median(xs):6.1f} ms, p90 {pct(xs, 0.9):6.1f} ms, max {max(xs):6.1f} ms")
    say(f"render CPU per update net of the idle baseline: "
        f"{statistics.median(r['cpu']) - statistics.median(r['idle_cpu']):.1f} ms (median)")
    say(f"\nload average after: {load()}")

    if ns.results is not None:
        argv = " ".join(shlex.quote(a) for a in sys.argv[1:])
        with ns.results.open("a") as f:
            f.write(f"\n## Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n"
                    f"Command: `python benchmarks/bench_ui.py {argv}`\n\n```\n" + "\n".join(lines) + "\n```\n")
        print(f"appended to {ns.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The kill test: 50 random SIGKILL/SIGTERM/SIGHUP/SIGINT of ``record`` and of the dashboard with ``--record``, on
``.jsonl``, ``.gz`` and ``.zst``, each restarted on the same file: every complete report ever written replays, in
order, and nothing else.

Each run records a tiny emitter (no neuron_top import: it starts in milliseconds) that numbers its reports
(run, seq) every 5 ms. After every kill the file is read back with the replay index and must hold: the runs in the
order they were started, each run's reports numbered 0, 1, 2 ... with none missing, everything read after the
previous kill still there (a prefix), and nothing skipped. A clean signal must give status 128+signal; the
emitter (a child process group) must be gone after any exit. The dashboard runs in a pseudo-terminal; after a
clean signal it must have switched the terminal back (left the alternate screen).

Short-lived processes keep it to seconds: the three files are driven in parallel, ``record`` most of the time,
the dashboard (half a second to start) one kill in four.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import random
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from neuron_top.recording.index import RecordingIndex
from tests.conftest import ROOT

KILLS = 50
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

EMITTER = r"""
import json, os, sys, time
run = int(sys.argv[1])
open(sys.argv[2], "w").write(str(os.getpid()))
k = 0
while True:
    sys.stdout.write(json.dumps({"run": run, "seq": k, "system_data": {"vcpu_usage": {"period": 0.005}}}) + "\n")
    sys.stdout.flush()
    k += 1
    time.sleep(0.005)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def read_back(path: Path) -> tuple[list[tuple[int, int]], int]:
    with RecordingIndex(path) as ix:
        assert ix.wait(60)
        assert ix.error is None, ix.error
        pairs = []
        for i in range(len(ix)):
            doc = json.loads(ix.get(i))
            pairs.append((doc["run"], doc["seq"]))
        return pairs, ix.skipped


class Chain:
    """One file, killed and restarted again and again."""

    def __init__(self, path: Path, work: Path, rng: random.Random) -> None:
        self.path = path
        self.work = work
        self.rng = rng
        self.run = 0
        self.seen: list[tuple[int, int]] = []
        self.runs_with_reports: list[int] = []
        self.log: list[str] = []

    def once(self, kind: str, sig: signal.Signals) -> None:
        self.run += 1
        run = self.run
        kid_file = self.work / f"kid-{self.path.name}-{run}"
        command = f"{sys.executable} {self.work / 'emit.py'} {run} {kid_file}"
        before = self.path.stat().st_size if self.path.exists() else 0
        if kind == "record":
            proc = subprocess.Popen([sys.executable, "-m", "neuron_top", "record", str(self.path), "--command", command],
                                    cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            master = None
        else:
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            env = {**os.environ, "TERM": "xterm-256color"}
            env.pop("COLUMNS", None)
            env.pop("LINES", None)
            proc = subprocess.Popen([sys.executable, "-m", "neuron_top", "--command", command, "--record",
                                     str(self.path)], cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, env=env,
                                    start_new_session=True)
            os.close(slave)
        screen = bytearray()
        reader = None
        if master is not None:
            def drain() -> None:
                while True:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:
                        return
                    if not chunk:
                        return
                    screen.extend(chunk)

            reader = threading.Thread(target=drain, daemon=True)
            reader.start()
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # this run has written something
                if self.path.exists() and self.path.stat().st_size > before and kid_file.exists():
                    break
                if proc.poll() is not None:
                    pytest.fail(f"{kind} exited early ({proc.returncode}): {proc.stderr and proc.stderr.read()!r}")
                time.sleep(0.01)
            else:
                pytest.fail(f"{kind} run {run} wrote nothing to {self.path.name}")
            time.sleep(self.rng.uniform(0.0, 0.15))
            proc.send_signal(sig)
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if master is not None:
                if reader is not None:
                    reader.join(timeout=5)
                os.close(master)
        self.log.append(f"{self.path.name} run {run}: {kind} {sig.name} -> {code}")
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + sig), self.log[-1]
        if kind == "dashboard" and sig != signal.SIGKILL:
            assert b"\x1b[?1049l" in screen, "the dashboard left the alternate screen on"
        kid = int(kid_file.read_text() or 0)
        deadline = time.monotonic() + 5
        while kid and alive(kid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not (kid and alive(kid)), f"{self.log[-1]}: the emitter outlived it"
        self.check()

    def check(self) -> None:
        pairs, skipped = read_back(self.path)
        assert skipped == 0, f"{self.log}: {skipped} skipped"
        assert pairs[: len(self.seen)] == self.seen, f"{self.log[-1]}: reports read before are gone or changed"
        runs = [r for r, _ in pairs]
        assert runs == sorted(runs), "runs out of order"
        by_run: dict[int, list[int]] = {}
        for r, k in pairs:
            by_run.setdefault(r, []).append(k)
        for r, seqs in by_run.items():
            assert seqs == list(range(len(seqs))), f"run {r}: reports missing or out of order"
        assert self.run in by_run, f"{self.log[-1]}: nothing of the last run"
        self.seen = pairs


def test_fifty_random_kills_lose_no_complete_report(tmp_path: Path) -> None:
    (tmp_path / "emit.py").write_text(EMITTER)
    rng = random.Random(23)
    chains = [Chain(tmp_path / name, tmp_path, random.Random(rng.random()))
              for name in ("k.jsonl", "k.jsonl.gz", "k.jsonl.zst")]
    plan: list[list[tuple[str, signal.Signals]]] = [[] for _ in chains]
    for i in range(KILLS):
        kind = "dashboard" if i % 4 == 3 else "record"
        plan[i % len(chains)].append((kind, rng.choice(SIGNALS)))
    errors: list[BaseException] = []

    def drive(chain: Chain, steps: list[tuple[str, signal.Signals]]) -> None:
        try:
            for kind, sig in steps:
                chain.once(kind, sig)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=drive, args=(c, p)) for c, p in zip(chains, plan, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    if errors:
        raise errors[0]
    assert sum(c.run for c in chains) == KILLS
    kinds = {line.split(": ")[1].split()[0] for c in chains for line in c.log}
    sigs = {line.split()[-3] for c in chains for line in c.log}
    assert kinds == {"record", "dashboard"} and sigs == {s.name for s in SIGNALS}
    for c in chains:
        assert len({r for r, _ in c.seen}) == c.run  # every run's reports are there

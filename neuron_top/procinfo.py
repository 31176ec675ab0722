"""A runtime's process, when its pid is on this machine: command line, user, start time, resident memory (no UI
imports). What nvitop shows beside a GPU process; neuron-monitor's report gives only the pid.

Only for sources that read this machine (neuron-monitor, the built-in collector): a pid from ``--command "ssh
..."``, a pipe or a recording belongs to another machine or another time, and a local process with the same
number would be a stranger's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from neuron_top import fmt
from neuron_top.textsafe import clean

__all__ = ["ProcessInfo", "process_info"]


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    pid: int
    cmdline: str
    """The command line, cleaned (arguments joined by spaces); the process name when it has none."""
    user: str
    started: float
    """Unix time the process started."""
    rss: int
    """Resident memory in bytes."""

    def describe(self, now: float | None = None) -> str:
        """``user ubuntu · started 17:02:11 (2h05m ago) · RSS 1.2GB · python train.py --tp 8``."""
        now = time.time() if now is None else now
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return (f"user {self.user} · started {when} ({fmt.duration(max(now - self.started, 0.0))} ago) · "
                f"RSS {fmt.human_bytes(self.rss)} · {self.cmdline}")


def process_info(pid: int) -> ProcessInfo | None:
    """The process ``pid`` on this machine, or None when there is none (gone, not visible from this container,
    not ours to read, or psutil missing)."""
    if pid <= 0:
        return None
    try:
        import psutil

        p = psutil.Process(pid)
        with p.oneshot():
            cmd = " ".join(p.cmdline()) or p.name()
            user = p.username()
            started = p.create_time()
            rss = p.memory_info().rss
    except Exception:  # NoSuchProcess, AccessDenied, ZombieProcess, ImportError: nothing to say
        return None
    return ProcessInfo(pid, clean(cmd, 2000), clean(user, 64), float(started), int(rss))

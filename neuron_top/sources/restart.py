"""``--command``, restarted: a command that fails is started again after a back-off, as neuron-monitor is.

``--command "ssh trn-host neuron-monitor"`` is the source most likely to drop (a network blip, the far host
rebooting); it was FAILED for good after the first drop while plain ``neuron-top`` restarts its neuron-monitor
and ``fleet --ssh`` reconnects. A command that exits with status 0 (``cat run.jsonl``) has said everything: that
is ENDED, not restarted. A command that cannot be parsed or run at all is FAILED at once (it will not get better).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from neuron_top.fmt import plural
from neuron_top.sources.base import Item, RawReport, State, Status, pause
from neuron_top.sources.monitor import HEALTHY_RUN, Backoff
from neuron_top.sources.stream import CommandSource, describe_exit
from neuron_top.textsafe import clean

__all__ = ["RestartingCommand"]


class RestartingCommand:
    """Reports from ``command`` (``CommandSource``), started again with ``Backoff`` whenever it fails.

    Each restart is a ``Status(RESTARTING)`` with how it ended (the exit status, the reports it gave) and when it
    is tried again, the child's stderr as ``detail``. The back-off starts over after a run of ``healthy_run``
    seconds that gave reports.

    Args:
        command: the command line (``CommandSource``'s rules: ``shlex``, or ``/bin/sh -c`` for shell syntax).
        shell: force or forbid the shell (None: from the syntax).
        backoff, sleep, clock, healthy_run: restart delays and pacing (injected by tests).
    """

    def __init__(self, command: str, *, shell: bool | None = None, backoff: Backoff | None = None,
                 sleep: Callable[[float], object] | None = None, clock: Callable[[], float] = time.time,
                 healthy_run: float = HEALTHY_RUN) -> None:
        self.command = command
        self.name = clean(command, 60)
        self._shell = shell
        self.backoff = backoff or Backoff()
        self.healthy_run = healthy_run
        self._sleep = sleep
        self._clock = clock
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._current: CommandSource | None = None

    def items(self, stop: threading.Event) -> Iterator[Item]:
        while not (stop.is_set() or self._closed.is_set()):
            src = CommandSource(self.command, shell=self._shell, clock=self._clock)
            with self._lock:
                if self._closed.is_set():
                    return
                self._current = src
            started, reports, ran_child = time.monotonic(), 0, False
            end: Status | None = None
            for item in src.items(stop):
                if isinstance(item, Status) and item.state in (State.ENDED, State.FAILED):
                    end = item
                    continue
                ran_child = ran_child or (isinstance(item, Status) and item.state is State.STARTING)
                reports += isinstance(item, RawReport)
                yield item
            with self._lock:
                self._current = None
            src.close()
            if stop.is_set() or self._closed.is_set() or end is None:
                return
            if end.state is State.ENDED or not ran_child:  # said everything, or cannot run at all
                yield end
                return
            if reports and time.monotonic() - started >= self.healthy_run:
                self.backoff.reset()
            delay = self.backoff.next()
            yield Status(State.RESTARTING,
                         f"{self.name} {describe_exit(end.exit_status)} after {plural(reports, 'report')}; "
                         f"restarting in {delay:g} s", detail=end.detail, exit_status=end.exit_status)
            pause(delay, self._sleep, stop, self._closed)

    def close(self) -> None:
        """Stop the command and the restarts; safe to call twice and from another thread."""
        self._closed.set()
        with self._lock:
            cur = self._current
        if cur is not None:
            cur.close()

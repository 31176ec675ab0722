"""What every source yields.

A source turns some input (a process, a pipe, a file, psutil, a simulator) into a stream of items. It runs in the
one collector thread; it never touches the UI. Items are small immutable records:

* ``RawReport``: one complete JSON document, exactly as it will be decoded (and recorded).
* ``Skipped``: input that was not a report (malformed, truncated, garbage); counted and shown, never fatal.
* ``Status``: a change of the source's state (live, ended, restarting, ...), with a human message.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from neuron_top.textsafe import clean

__all__ = ["Backoff", "Item", "RawReport", "Skipped", "Source", "State", "Status", "last_line", "pause", "wait_for_any"]


class State(enum.Enum):
    """Where a source is: the status line's word and the feed's."""

    STARTING = "starting"
    LIVE = "live"  # reports are flowing from a live source
    REPLAY = "replay"  # reports come from a recording
    DEMO = "demo"  # simulated data
    ENDED = "ended"  # the stream ended (EOF); the last data stays on screen
    RESTARTING = "restarting"  # neuron-monitor exited; it will be started again
    FAILED = "failed"  # the source cannot be read at all


@dataclass(frozen=True, slots=True)
class RawReport:
    data: bytes
    """One JSON document (no trailing newline)."""
    ts: float | None = None
    """Unix seconds the report was received or recorded; None when unknown."""
    index: int | None = None
    """Position in a recording, when the source is one."""


@dataclass(frozen=True, slots=True)
class Skipped:
    reason: str
    """Why it was skipped, e.g. "malformed JSON" or "truncated report"."""
    sample: str = ""
    """The first bytes of what was skipped (already made printable)."""
    count: int = 1


@dataclass(frozen=True, slots=True)
class Status:
    state: State
    message: str = ""
    detail: str = field(default="", compare=False)
    """Extra text such as the last lines of neuron-monitor's stderr."""
    exit_status: int | None = None
    """The exit status of the process that ended (negative: killed by that signal), when one did: the header
    shows it next to ENDED/FAILED/RESTARTING, not only in a message that may be cut."""
    cause: str = field(default="", compare=False)
    """What happened, without what the source does about it (``message`` less "; restarting in 2 s"): what a
    one-shot command (``--once``) says, as it waits for no restart."""

    @property
    def last_words(self) -> str:
        """The last line of ``detail`` that says something (a child's last line on stderr: usually its error)."""
        return last_line(self.detail)


def last_line(text: str, width: int = 240) -> str:
    """The last line of ``text`` that says something (of a child's stderr: usually its error), stripped and made
    printable (``clean``, at most ``width`` characters); "" when none. What the header, ``--once``, ``record``,
    ``export``, ``health`` and the fleet's ssh hosts say of a command that ended."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return clean(line.strip(), width)
    return ""


Item = RawReport | Skipped | Status


class Source(Protocol):
    """A source of reports. ``items`` blocks; it returns when the input ends or ``stop`` is set."""

    name: str
    """Shown in the header, e.g. "neuron-monitor", "stdin", "demo trn2.48xlarge", "run.jsonl"."""

    def items(self, stop: threading.Event) -> Iterator[Item]: ...

    def close(self) -> None:
        """Release processes and files; safe to call twice and from another thread."""
        ...


def wait_for_any(timeout: float, *events: threading.Event, step: float = 0.1) -> bool:
    """Sleep up to ``timeout`` seconds, waking early once any event is set; True if one was.

    A source sleeps between reports or restarts and must still stop promptly when either the collector's ``stop``
    or its own ``close()`` fires; ``threading`` has no wait-for-several, so this polls the others every ``step``.
    """
    if not events:
        time.sleep(max(0.0, timeout))
        return False
    first, rest = events[0], events[1:]
    remaining = max(0.0, timeout)
    while True:
        if any(e.is_set() for e in events):
            return True
        if remaining <= 0:
            return False
        chunk = min(remaining, step) if rest else remaining
        if first.wait(chunk):
            return True
        remaining -= chunk


class Backoff:
    """Delays between failed tries: ``first``, doubled at each failure, at most ``cap``; ``reset()`` after a
    success. The one back-off of the program: neuron-monitor restarts, ssh streams, Prometheus refreshes.

    >>> b = Backoff(first=1.0, cap=5.0)
    >>> [b.next() for _ in range(5)], b.failures
    ([1.0, 2.0, 4.0, 5.0, 5.0], 5)
    >>> b.reset(); b.next()
    1.0
    """

    def __init__(self, first: float = 1.0, cap: float = 30.0) -> None:
        self.first = first
        self.cap = cap
        self.failures = 0
        """Failures since the last ``reset``."""

    def next(self) -> float:
        """The delay before the next try, counting one more failure."""
        self.failures += 1
        return float(min(self.cap, self.first * 2 ** min(self.failures - 1, 64)))

    def reset(self) -> None:
        self.failures = 0


def pause(
    seconds: float, sleep: Callable[[float], object] | None, stop: threading.Event, closed: threading.Event
) -> None:
    """A source's wait between reports or restarts: nothing once stopped or closed; the injected ``sleep`` when
    there is one (tests and replays drive time); else a wait that ``stop`` or ``close()`` cut short."""
    if stop.is_set() or closed.is_set():
        return
    if sleep is not None:
        sleep(seconds)
    else:
        wait_for_any(seconds, stop, closed)

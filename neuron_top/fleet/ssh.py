"""The ssh fleet: one live report stream per host, each reconnected with back-off (no UI imports).

Each host runs a command such as ``ssh {host} neuron-monitor`` through ``CommandSource`` (the child in its own
session, no terminal, stderr kept); when it ends, ``HostStream`` says why (the stderr's last line: "Permission
denied (publickey)", "Could not resolve hostname") and starts it again after a back-off that doubles (1, 2, 4 ...
30 s) and starts over after a healthy run, as the local neuron-monitor is restarted.

Commands are built without a shell: the template is split into words first and ``{host}`` (or a Prometheus
label, ``{instance_id}``) is put into words, so a host name or label value can never become shell syntax.
"""

from __future__ import annotations

import shlex
import string
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from neuron_top.sources.base import Backoff, Item, State, Status, last_line, pause
from neuron_top.sources.stream import CommandSource
from neuron_top.textsafe import clean

__all__ = ["DEFAULT_COMMAND", "HostStream", "TemplateError", "command_for", "read_hosts"]

DEFAULT_COMMAND = "ssh -o BatchMode=yes -o ConnectTimeout=10 {host} neuron-monitor"
"""BatchMode: never ask for a password (there is no terminal to ask on); the child fails with a reason instead."""
HEALTHY_RUN = 30.0


class TemplateError(ValueError):
    """A command template that cannot be used (unbalanced quotes, an unknown ``{name}``)."""


def command_for(template: str, values: Mapping[str, str]) -> list[str]:
    """The argv of ``template`` with ``{name}`` replaced in each word by ``values[name]``.

    Raises ``TemplateError`` for a template that does not split into words or names a value not given.
    """
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise TemplateError(f"cannot split the command {template!r}: {exc}") from None
    if not words:
        raise TemplateError("the command is empty")
    out = []
    for w in words:
        try:
            fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(w) if f is not None]
        except ValueError as exc:
            raise TemplateError(f"bad {{...}} in {w!r}: {exc}") from None
        names = [f for f, _, _ in fields]
        for n, spec, conv in fields:
            if spec or conv or not n.isidentifier():
                raise TemplateError(f"bad {{...}} in {w!r}: only plain names such as {{host}} are allowed")
            if n not in values:
                known = ", ".join("{" + k + "}" for k in values) or "none"
                raise TemplateError(f"the command names {{{n}}}, which is not known here (known: {known})")
        out.append(w.format_map(values) if names else w)
    return out


def read_hosts(path: str | Path) -> list[str]:
    """Host names from a file: one per line (or several separated by spaces), ``#`` comments, blank lines."""
    hosts: list[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0]
        for h in line.split():
            if h not in hosts:
                hosts.append(h)
    return hosts


class HostStream:
    """One host's reports from ``argv`` (e.g. ``ssh host neuron-monitor``), restarted whenever it ends.

    Every end is a ``Status(RESTARTING)`` saying how it ended and when it is tried again, with the child's stderr
    as ``detail``; a source that cannot even be started is retried the same way (a host down now may be up later).
    """

    def __init__(self, host: str, argv: Sequence[str], *, backoff: Backoff | None = None,
                 sleep: Callable[[float], object] | None = None, clock: Callable[[], float] = time.time,
                 healthy_run: float = HEALTHY_RUN) -> None:
        self.host = host
        self.argv = list(argv)
        self.name = clean(shlex.join(self.argv), 80)
        self.backoff = backoff or Backoff()
        self.healthy_run = healthy_run
        self._sleep = sleep
        self._clock = clock
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._current: CommandSource | None = None

    def items(self, stop: threading.Event) -> Iterator[Item]:
        while not (stop.is_set() or self._closed.is_set()):
            src = CommandSource(shlex.join(self.argv), shell=False, clock=self._clock)
            with self._lock:
                if self._closed.is_set():
                    return
                self._current = src
            started = time.monotonic()
            reports = 0
            end: Status | None = None
            for item in src.items(stop):
                if isinstance(item, Status) and item.state in (State.ENDED, State.FAILED):
                    end = item
                    continue
                if isinstance(item, Status) and item.state == State.LIVE:
                    reports += 1
                yield item
            with self._lock:
                self._current = None
            src.close()
            if stop.is_set() or self._closed.is_set():
                return
            if reports and time.monotonic() - started >= self.healthy_run:
                self.backoff.reset()
            delay = self.backoff.next()
            # the reason first (ssh's own last words), then how the command ended: a narrow row shows the start
            how = (end.message.removeprefix("stream ended: ").removeprefix(src.name).strip()
                   if end is not None else "the stream ended")
            last = last_line(end.detail, 160) if end is not None else ""
            text = f"{last} ({how})" if last else how
            yield Status(State.RESTARTING, f"{text}; retrying in {delay:g} s",
                         detail=end.detail if end is not None else "")
            pause(delay, self._sleep, stop, self._closed)

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            cur = self._current
        if cur is not None:
            cur.close()



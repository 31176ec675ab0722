"""The demo as a ``Source``, as a pure report generator, and as a neuron-monitor stand-in on stdout."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import IO, Any, BinaryIO, cast

from neuron_top.fmt import plural
from neuron_top.sources.base import Item, RawReport, State, Status
from neuron_top.sources.demo.profiles import PROFILES
from neuron_top.sources.demo.workload import encode
from neuron_top.sources.demo.world import World, resolve_periods

__all__ = ["BATCH", "DemoSource", "emit_main", "generate", "iter_reports", "trn2_benchmark_report"]


def _profile(instance: str) -> Any:
    try:
        return PROFILES[instance]
    except KeyError:
        raise ValueError(f"unknown demo instance {instance!r}; choose one of: {', '.join(PROFILES)}") from None


def iter_reports(instance: str, seed: int = 0, *, periods: Mapping[str, float] | None = None, period: float = 1.0,
                 tag_filter: str | None = None) -> Iterator[bytes]:
    """Endless reports (JSON bytes, no newline), report ``i`` at ``i * tick`` seconds of demo time.

    Deterministic: the same arguments give byte-identical reports. No clock, no sleeping. Bad arguments raise
    ``ValueError`` here, not at the first ``next``.
    """
    world = World(_profile(instance), seed, periods=periods, period=period, tag_filter=tag_filter)

    def reports() -> Iterator[bytes]:
        while True:
            yield encode(world.report())
            world.advance()

    return reports()


def generate(instance: str, seed: int, n: int, *, periods: Mapping[str, float] | None = None,
             period: float = 1.0, tag_filter: str | None = None) -> list[bytes]:
    """The first ``n`` reports, for tests, screenshots and benchmarks."""
    return list(islice(iter_reports(instance, seed, periods=periods, period=period, tag_filter=tag_filter), n))


def trn2_benchmark_report(seed: int = 0) -> bytes:
    """A full trn2.48xlarge report (~120 KB): 16 devices, 64 logical / 128 physical cores, 192 vCPUs, all 8
    runtimes loaded and running, for the decode benchmark."""
    world = World(_profile("trn2.48xlarge"), seed)
    want = len(world.apps)
    for _ in range(3_600):
        if all(a.state == "running" for a in world.apps):
            break
        world.advance()
    report = world.report()
    assert len(report["neuron_runtime_data"]) == want, "the schedule never had every app running"
    return encode(report)


BATCH = 10
"""Reports the demo simulates in one go (after the first, which is made alone so that it shows at once).

Why: the simulator runs once a second, and each time its code and data have left the CPU's caches: in the
running app a report made alone costs about twice what it costs made in a row with others (``thread_time``,
trn2.48xlarge, a second's sleep between rounds), a visible share of an app whose whole budget is 1% of a core.
The reports do not depend on the clock, so making them early changes nothing that is shown; ten trn2 reports
are ~1.2 MB."""


class DemoSource:
    """Simulated neuron-monitor output, paced by an injected clock.

    ``items`` yields ``Status(DEMO, ...)`` first, then one ``RawReport`` per tick. The report bytes never depend
    on the clock (only ``RawReport.ts`` does), so a seeded demo is reproducible. Reports are simulated ``BATCH``
    at a time, each still handed out at its own tick.

    Args:
        instance: one of ``INSTANCE_TYPES`` (``trn2.48xlarge``, ``inf2.48xlarge``, ...).
        seed: the simulation's seed; the same seed gives the same reports.
        period: seconds between reports, in simulated time and (unless ``sleep``/``clock`` say otherwise) in real
            time.
        clock, sleep: pacing (``sleep=lambda s: None`` hands reports out as fast as they are read).
        start_ts: the first report's timestamp (default: the clock at start).
        periods: per-group periods, as a neuron-monitor config gives them; tag_filter: only apps whose tag matches.
        count: end after this many reports (None: never).
    """

    def __init__(self, instance: str, seed: int = 0, period: float = 1.0, *,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], None] | None = None,
                 start_ts: float | None = None, periods: Mapping[str, float] | None = None,
                 tag_filter: str | None = None, count: int | None = None) -> None:
        self.instance = instance
        self.seed = seed
        self._world = World(_profile(instance), seed, periods=periods, period=period, tag_filter=tag_filter)
        self.tick = self._world.tick
        self._clock = clock
        self._sleep = sleep
        self._start_ts = start_ts
        self._count = count
        self._closed = threading.Event()
        self._stop: threading.Event | None = None
        """The ``stop`` of the running ``items``, which ``close`` sets so the one wait between reports ends."""
        self.name = f"demo {instance}"

    def items(self, stop: threading.Event) -> Iterator[Item]:
        self._stop = stop  # before the first _closed check, so a concurrent close() is never missed
        yield Status(State.DEMO, f"simulated, seed {self.seed}")  # the instance is in the name: said once
        start = self._clock()
        ts0 = start if self._start_ts is None else self._start_ts
        i = 0
        made: deque[bytes] = deque()
        while not (stop.is_set() or self._closed.is_set()):
            if self._count is not None and i >= self._count:
                yield Status(State.ENDED, f"demo ended after {plural(i, 'report')}")
                return
            if not made:
                self._make(made, 1 if i == 0 else BATCH if self._count is None else min(BATCH, self._count - i),
                           first=i == 0)
            yield RawReport(made.popleft(), ts=ts0 + i * self.tick)  # no index: that marks a replayed report
            i += 1
            delay = start + i * self.tick - self._clock()  # absolute deadlines: no drift
            if delay > 0:
                if self._sleep is not None:
                    self._sleep(delay)
                elif stop.wait(delay):
                    return

    def _make(self, made: deque[bytes], n: int, first: bool) -> None:
        """The next ``n`` reports into ``made`` (the world's current tick is the first one's when ``first``)."""
        for k in range(n):
            if k or not first:
                self._world.advance()
            made.append(encode(self._world.report()))

    def close(self) -> None:
        """End ``items`` now, also while it waits for the next tick.

        The wait blocks on ``stop`` alone: polling for ``close`` as well would wake the thread several times a
        second in an app whose whole budget is 1% of a core. So ``close`` sets that ``stop`` too (the collector
        sets it anyway just before calling this).
        """
        self._closed.set()
        if self._stop is not None:
            self._stop.set()


def emit_main(instance: str, seed: int, out: IO[Any] | None = None, count: int | None = None,
              period: float = 1.0, *, sleep: Callable[[float], None] = time.sleep,
              clock: Callable[[], float] = time.monotonic, periods: Mapping[str, float] | None = None,
              tag_filter: str | None = None) -> int:
    """``neuron-top demo --emit``: reports on ``out`` one per line, flushed, paced like neuron-monitor.

    Returns the exit status: 0, also when the reader closes the pipe (``| head``), 130 on Ctrl-C.
    """
    if out is None:
        out = sys.stdout
    binary = cast(BinaryIO, getattr(out, "buffer", out))
    try:
        reports = iter_reports(instance, seed, periods=periods, period=period, tag_filter=tag_filter)
        tick = min(resolve_periods(periods, period).values(), default=period)
    except ValueError as exc:
        print(f"neuron-top demo: {exc}", file=sys.stderr, flush=True)
        return 2
    start = clock()
    try:
        for i, data in enumerate(reports):
            if count is not None and i >= count:
                break
            if i:
                delay = start + i * tick - clock()
                if delay > 0:
                    sleep(delay)
            binary.write(data + b"\n")
            binary.flush()
    except BrokenPipeError:
        _silence_stdout(out)
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


def _silence_stdout(out: IO[Any]) -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush does not complain."""
    if out is not sys.stdout and out is not getattr(sys.stdout, "buffer", None):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass

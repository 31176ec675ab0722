"""Run neuron-monitor and read its reports; restart it when it exits.

neuron-monitor exits when the driver is reloaded, when it is killed by an OOM or a package upgrade, or when its
config is bad. A dashboard left open on a machine should survive all of that: every exit becomes a
``Status(RESTARTING, ...)`` with the tail of its stderr, and it is started again after a back-off that doubles
(1, 2, 4, ... up to 30 s) while it keeps failing and starts again from 1 s after a run that was healthy.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from neuron_top.config import MonitorConfig, default_config, load_config
from neuron_top.fmt import plural
from neuron_top.sources.base import Backoff, Item, State, Status, pause
from neuron_top.sources.stream import ChildProcess, ChildSource, Clock, describe_exit
from neuron_top.textsafe import clean

__all__ = [
    "BACKOFF_FIRST", "BACKOFF_MAX", "HEALTHY_RUN", "NEURON_BIN", "Backoff", "MonitorSource",
    "find_neuron_monitor",
]

NEURON_BIN = Path("/opt/aws/neuron/bin")
"""Where aws-neuronx-tools installs neuron-monitor; on PATH only through the DLAMI profile scripts."""

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0
HEALTHY_RUN = 30.0
"""A run at least this long (that delivered a report) resets the back-off."""


def find_neuron_monitor(path: str | None = None) -> str | None:
    """The neuron-monitor executable: on PATH (or ``path``), else in /opt/aws/neuron/bin; None if absent."""
    found = shutil.which("neuron-monitor", path=path)
    if found:
        return found
    fallback = NEURON_BIN / "neuron-monitor"
    return str(fallback) if os.access(fallback, os.X_OK) and fallback.is_file() else None


class MonitorSource(ChildSource):
    """Reports from a neuron-monitor child process, restarted whenever it exits.

    ``config_path`` is passed as ``-c``. With ``tag`` (the ``--tag`` flag) the config (or neuron-monitor's
    default, every group every 5 s) is rewritten with that ``tag_filter`` into a temporary file, so neuron-monitor
    itself filters applications. ``sleep`` waits between restarts and is injectable so tests are instant; by
    default it returns early on ``stop`` or ``close()``.

    Args:
        config_path: a neuron-monitor config file, passed as ``-c``.
        tag: only runtimes whose tag matches this regex (written into a temporary config).
        executable: the neuron-monitor binary (default: found on ``PATH`` or in ``/opt/aws/neuron/bin``).
        clock, sleep, backoff: pacing and restart delays (injected by tests).
        healthy_run: seconds a run must last for the restart delay to start again from its shortest.
    """

    name = "neuron-monitor"

    def __init__(
        self,
        config_path: str | Path | None = None,
        *,
        tag: str | None = None,
        executable: str | None = None,
        clock: Clock = time.time,
        sleep: Callable[[float], object] | None = None,
        backoff: Backoff | None = None,
        healthy_run: float = HEALTHY_RUN,
    ) -> None:
        super().__init__(clock)
        self.config_path = str(config_path) if config_path is not None else None
        self.tag = tag
        self.executable = executable
        self._sleep = sleep
        self.backoff = backoff or Backoff(BACKOFF_FIRST, BACKOFF_MAX)
        self.healthy_run = healthy_run
        self._temp_config: str | None = None

    def config_for_tag(self) -> MonitorConfig:
        """The config neuron-monitor will run with when ``tag`` is set (raises ConfigError on a bad file/regex)."""
        base = load_config(self.config_path) if self.config_path else default_config()
        return base.with_tag_filter(self.tag or ".*")

    def argv(self) -> list[str] | None:
        """The command line, or None when neuron-monitor cannot be found."""
        exe = self.executable or find_neuron_monitor()
        if exe is None:
            return None
        config = self._temp_config or self.config_path
        return [exe, "-c", config] if config else [exe]

    def _wait(self, seconds: float, stop: threading.Event) -> None:
        pause(seconds, self._sleep, stop, self._closed)

    def _items(self, stop: threading.Event) -> Iterator[Item]:
        if self.tag is not None:
            try:
                self._write_temp_config(self.config_for_tag())
            except (ValueError, OSError) as exc:  # ConfigError is a ValueError
                yield Status(State.FAILED, f"cannot apply --tag: {clean(exc)}")
                return
        first = True
        while not (stop.is_set() or self._closed.is_set()):
            argv = self.argv()
            if argv is None:
                missing = f"neuron-monitor not found (not on PATH, not in {NEURON_BIN})"
                if first:
                    yield Status(State.FAILED, f"{missing}; is aws-neuronx-tools installed?")
                    return
                # it was there a moment ago: a package upgrade replacing it, most likely
                delay = self.backoff.next()
                yield Status(State.RESTARTING, f"{missing}; retrying in {delay:g} s")
                self._wait(delay, stop)
                continue
            first = False
            started = self._clock()
            try:
                child = ChildProcess(argv)
            except OSError as exc:
                delay = self.backoff.next()
                yield Status(
                    State.RESTARTING,
                    f"cannot start neuron-monitor: {clean(exc.strerror or exc)}; retrying in {delay:g} s",
                )
                self._wait(delay, stop)
                continue
            end = yield from self._run(
                child,
                stop,
                f"started {clean(' '.join(argv))} (pid {child.pid})",
                f"neuron-monitor (pid {child.pid})",
            )
            if end is None:
                return
            ran = self._clock() - started
            if end.reports and ran >= self.healthy_run:
                self.backoff.reset()
            delay = self.backoff.next()
            yield Status(
                State.RESTARTING,
                f"neuron-monitor {describe_exit(end.code)} after {ran:.0f} s and {plural(end.reports, 'report')}; "
                f"restarting in {delay:g} s",
                detail=end.detail,
                exit_status=end.code,
            )
            self._wait(delay, stop)

    def _write_temp_config(self, config: MonitorConfig) -> None:
        fd, path = tempfile.mkstemp(prefix="neuron-top-", suffix=".conf")
        with os.fdopen(fd, "wb") as f:
            f.write(config.to_json())
        self._temp_config = path

    def _release(self) -> None:
        super()._release()
        if self._temp_config is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temp_config)
            self._temp_config = None

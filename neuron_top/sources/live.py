"""Pick the live source from the command line, in one place, so the rule is testable and the CLI stays small.

Order: ``--command`` wins; else reports piped on stdin; else neuron-monitor if installed; else the built-in
collector. Config and ``--tag`` mistakes raise ``ConfigError`` here, before the TUI starts, so the user sees the
message on a normal terminal. ``--tag`` is the screen's filter for every source; a ``tag_filter`` in the ``-c``
config is neuron-monitor's own (``LiveChoice.source_filter``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from neuron_top.config import ConfigError, MonitorConfig, default_config, load_config
from neuron_top.sources.base import Backoff, Source
from neuron_top.sources.host import HostCollector
from neuron_top.sources.monitor import MonitorSource, find_neuron_monitor
from neuron_top.sources.stream import CommandSource, StreamSource, take_stdin_for_reports


def stdin_kind(fd: int = 0) -> Literal["pipe", "file"] | None:
    """``"pipe"`` for a pipe or socket (``neuron-monitor | neuron-top``), ``"file"`` for a redirected regular file
    (``neuron-top < run.jsonl``: the CLI may prefer to replay it with its recorded timing), else None.

    A terminal gives None, and so do ``/dev/null`` and a closed stdin (cron, systemd, ``nohup``): those must
    not turn into a stream that ends at once.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    return "file" if stat.S_ISREG(mode) else None


def stdin_has_reports(fd: int = 0) -> bool:
    """True when stdin is a pipe, socket or regular file (see ``stdin_kind``)."""
    return stdin_kind(fd) is not None


@dataclass
class LiveChoice:
    source: Source
    tag_filter: re.Pattern[str] | None = None
    """``--tag``: the screen's ``/`` filter to start with (``re.search`` on tags), whatever the source. It never
    filters at the source: clearing ``/`` must bring every application back."""
    notes: list[str] = field(default_factory=list)
    """Config warnings worth showing once (unknown keys, duplicates)."""
    source_filter: str | None = None
    """The ``tag_filter`` of the ``-c`` config that neuron-monitor applies itself (``MonitorConfig.source_filter``):
    applications it leaves out are not in the reports at all. Shown as such in the header."""


def choose_live_source(
    *,
    config_path: str | Path | None = None,
    tag: str | None = None,
    command: str | None = None,
    stdin_fd: int = 0,
    take_stdin: Callable[[], BinaryIO] = take_stdin_for_reports,
    monitor: Callable[[], str | None] = find_neuron_monitor,
    restart_command: bool = False,
) -> LiveChoice:
    """The source for ``neuron-top [-c FILE] [--tag REGEX] [--command CMD]``; raises ConfigError.

    Args:
        config_path: a neuron-monitor config file.
        tag: only runtimes whose tag matches this regex.
        command: read reports from this command's stdout instead.
        stdin_fd, take_stdin, monitor: where a piped stdin and neuron-monitor are found (injected by tests).
        restart_command: restart ``command`` with back-off when it exits (``neuron-top export``: a daemon).

    Returns:
        A ``LiveChoice``: the source and notes to show the user (a config's warnings, why the built-in collector
        is used).
    """
    config: MonitorConfig | None = load_config(config_path) if config_path is not None else None
    notes = list(config.warnings) if config is not None else []
    pattern = None
    if tag is not None:
        default_config().with_tag_filter(tag)  # validates the regex (ConfigError naming --tag)
        pattern = re.compile(tag)
    if command is not None:
        if config_path is not None:
            notes.append(
                "-c applies to a local neuron-monitor; with --command, pass the config in the command"
            )
        # restarted when it fails, as neuron-monitor is; an exit 0 (cat FILE) ends it, except for a daemon (export)
        return LiveChoice(CommandSource(command, restart=Backoff(), restart_on_success=restart_command), pattern,
                          notes)
    if stdin_has_reports(stdin_fd):
        stream = take_stdin()
        return LiveChoice(StreamSource(stream, "stdin"), pattern, notes)
    exe = monitor()
    if exe is not None:
        return LiveChoice(MonitorSource(config_path, executable=exe), pattern, notes,
                          config.source_filter() if config is not None else None)
    return LiveChoice(HostCollector(config, reason="neuron-monitor not found"), pattern, notes)


__all__ = ["ConfigError", "LiveChoice", "choose_live_source", "stdin_has_reports", "stdin_kind"]

"""Which live source the command line gets."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_top.config import ConfigError
from neuron_top.sources.host import HostCollector
from neuron_top.sources.live import choose_live_source, stdin_has_reports, stdin_kind
from neuron_top.sources.monitor import MonitorSource
from neuron_top.sources.stream import CommandSource, StreamSource


@pytest.fixture
def tty_like() -> Iterator[int]:
    """A descriptor that is not a pipe or file (/dev/null: a character device)."""
    fd = os.open(os.devnull, os.O_RDONLY)
    yield fd
    os.close(fd)


def test_stdin_kinds(tmp_path: Path, tty_like: int) -> None:
    r, w = os.pipe()
    assert stdin_has_reports(r) and stdin_kind(r) == "pipe"
    assert not stdin_has_reports(tty_like) and stdin_kind(tty_like) is None
    f = tmp_path / "run.jsonl"
    f.write_text("{}\n")
    with open(f, "rb") as fh:
        assert stdin_kind(fh.fileno()) == "file"
    os.close(r)
    os.close(w)
    assert not stdin_has_reports(r)  # closed


def test_command_wins(tty_like: int) -> None:
    choice = choose_live_source(command="ssh trn neuron-monitor", tag="^bert", stdin_fd=tty_like)
    assert isinstance(choice.source, CommandSource) and choice.source.restart is not None  # restarted when it fails
    assert choice.tag_filter is not None and choice.tag_filter.search("bert_1")


def test_pipe_on_stdin_is_read(tty_like: int) -> None:
    r, w = os.pipe()
    taken: list[int] = []

    def take() -> io.RawIOBase:
        taken.append(1)
        return os.fdopen(r, "rb", buffering=0)

    choice = choose_live_source(stdin_fd=r, take_stdin=take, monitor=lambda: "/x/neuron-monitor")
    assert isinstance(choice.source, StreamSource) and taken == [1]
    choice.source.close()
    os.close(w)


def test_neuron_monitor_when_installed(tty_like: int, tmp_path: Path) -> None:
    conf = tmp_path / "m.conf"
    conf.write_text('{"period": "1s", "extra": 1}')
    choice = choose_live_source(
        config_path=conf, tag="x", stdin_fd=tty_like, monitor=lambda: "/x/neuron-monitor"
    )
    assert isinstance(choice.source, MonitorSource)
    assert choice.source.argv() == ["/x/neuron-monitor", "-c", str(conf)]
    assert choice.source.tag is None  # --tag is the screen's filter, never neuron-monitor's
    assert choice.tag_filter is not None and choice.tag_filter.pattern == "x"
    assert choice.source_filter is None  # the config filters nothing
    assert choice.notes == ["extra: unknown key, ignored"]


def test_a_tag_filter_in_the_config_is_the_sources_own_and_kept_apart_from_tag(tty_like: int,
                                                                               tmp_path: Path) -> None:
    conf = tmp_path / "m.conf"
    conf.write_text('{"neuron_runtimes": [{"tag_filter": "^bert", "metrics": [{"type": "memory_used"}]}]}')
    choice = choose_live_source(config_path=conf, tag="serve", stdin_fd=tty_like,
                                monitor=lambda: "/x/neuron-monitor")
    assert choice.source_filter == "^bert"
    assert choice.tag_filter is not None and choice.tag_filter.pattern == "serve"


def test_built_in_collector_otherwise(tty_like: int, tmp_path: Path) -> None:
    conf = tmp_path / "m.conf"
    conf.write_text('{"period": "2s", "system_metrics": [{"type": "memory_info"}]}')
    choice = choose_live_source(config_path=conf, stdin_fd=tty_like, monitor=lambda: None)
    assert isinstance(choice.source, HostCollector)
    assert choice.source.config.group_periods() == {"memory_info": 2.0}


def test_bad_config_or_tag_raise_before_anything_starts(tty_like: int, tmp_path: Path) -> None:
    conf = tmp_path / "m.conf"
    conf.write_text('{"period": "2x"}')
    with pytest.raises(ConfigError, match='period: "2x"'):
        choose_live_source(config_path=conf, stdin_fd=tty_like, monitor=lambda: None)
    with pytest.raises(ConfigError, match="--tag"):
        choose_live_source(tag="(", stdin_fd=tty_like, monitor=lambda: None)

"""The header says that recording is on (file, reports written, what went wrong); ``w`` never overwrites a file."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.writer import RecordingWriter, free_name, write_range
from neuron_top.sources.base import Item, RawReport, State, Status
from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.widgets.header import HeaderBar
from tests.conftest import DATA
from tests.helpers import until

REPORT = (DATA / "trn2_small.json").read_bytes().strip()


class Reports:
    """Three reports, then quiet (the source stays live, as neuron-monitor between reports)."""

    name = "test source"

    def __init__(self, extra: list[bytes] | None = None) -> None:
        self.extra = extra or []
        self.done = threading.Event()

    def items(self, stop: threading.Event) -> Iterator[Item]:
        yield Status(State.LIVE, "reports from test")
        for data in [REPORT, REPORT, *self.extra, REPORT]:
            yield RawReport(data)
        self.done.set()
        stop.wait()

    def close(self) -> None:
        pass


def header(app: NeuronTopApp) -> str:
    return app.screen.query_one(HeaderBar).render_line(0).text


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_header_says_recording_is_on(tmp_path: Path, size: tuple[int, int]) -> None:
    """Nothing on screen said that recording was on."""
    source = Reports(extra=[b"[1, 2]"])  # not a report: refused by the recorder, counted
    app = NeuronTopApp(source, recorder=RecordingWriter(tmp_path / "night.jsonl.zst"), clock=lambda: 1000.0)
    async with app.run_test(size=size):
        await until(lambda: source.done.is_set() and "REC" in header(app) and " 3" in header(app))
        line = header(app)
        assert "● REC night.jsonl.zst 3 · 1 refused" in line  # with the state badge: seen at 80 columns


async def test_the_header_says_when_recording_stopped(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full to fill")
    source = Reports()
    app = NeuronTopApp(source, recorder=RecordingWriter("/dev/full"), clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)):
        await until(lambda: source.done.is_set() and "STOPPED" in header(app))
        assert "● REC STOPPED (No space left on device)" in header(app)
        assert app.latest is not None  # the data goes on


async def test_no_indicator_without_recording() -> None:
    source = Reports()
    app = NeuronTopApp(source, clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(source.done.is_set)
        await pilot.pause(0.1)
        assert "REC" not in header(app)


def test_write_range_never_overwrites(tmp_path: Path) -> None:
    """``w`` silently overwrote a file of the same name."""
    src = tmp_path / "src.jsonl"
    with RecordingWriter(src) as w:
        for i in range(5):
            w.write(REPORT, 1000.0 + i)
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"precious\n")
    with RecordingIndex(src) as ix:
        ix.wait()
        with pytest.raises(FileExistsError):
            write_range(ix, 0, 5, out)
        assert out.read_bytes() == b"precious\n"
        assert free_name(out) == tmp_path / "out-2.jsonl"
        assert write_range(ix, 0, 5, free_name(out)) == 5
        assert free_name(out) == tmp_path / "out-3.jsonl"
        assert free_name(tmp_path / "new.jsonl.gz") == tmp_path / "new.jsonl.gz"
    (tmp_path / "x.jsonl.gz").write_bytes(b"")
    assert free_name(tmp_path / "x.jsonl.gz") == tmp_path / "x-2.jsonl.gz"
    assert sorted(os.listdir(tmp_path)) == ["out-2.jsonl", "out.jsonl", "src.jsonl", "x.jsonl.gz"]  # no leftovers


async def test_the_header_says_recording_paused_on_a_full_disk_then_resumed(tmp_path: Path, monkeypatch) -> None:
    """Issue 33 item 9: a full disk pauses --record (the header says why, how many reports were not recorded and
    when it tries again), and once there is room it goes on in the same file and says how many were lost."""
    import errno
    import queue

    from neuron_top.recording import writer as recording

    full = threading.Event()
    real = os.write

    def write(fd: int, data: bytes) -> int:
        if full.is_set():
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(recording.os, "write", write)
    now = [0.0]
    fed: queue.Queue[bytes] = queue.Queue()

    class Fed:
        name = "test source"

        def items(self, stop: threading.Event) -> Iterator[Item]:
            yield Status(State.LIVE, "reports from test")
            while not stop.is_set():
                try:
                    yield RawReport(fed.get(timeout=0.05))
                except queue.Empty:
                    continue

        def close(self) -> None:
            pass

    rec = RecordingWriter(tmp_path / "night.jsonl.gz", retry=True, monotonic=lambda: now[0])
    app = NeuronTopApp(Fed(), recorder=rec, clock=lambda: 1000.0)
    async with app.run_test(size=(120, 40)):
        fed.put(REPORT)
        await until(lambda: "REC night.jsonl.gz 1" in header(app))
        full.set()
        for _ in range(3):
            fed.put(REPORT)
        await until(lambda: "3 reports not recorded" in header(app))
        assert "● REC PAUSED: disk full, 3 reports not recorded, retrying in 1s" in header(app)
        full.clear()
        now[0] += 5.0
        fed.put(REPORT)
        await until(lambda: "lost" in header(app))
        assert "● REC night.jsonl.gz 2 (3 reports lost while the disk was full)" in header(app)
    rec.close()
    with RecordingIndex(tmp_path / "night.jsonl.gz") as ix:
        ix.wait(30)
        assert len(ix) == 2 and ix.skipped == 0

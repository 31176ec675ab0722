"""Following a recording like ``tail -F``: appended reports, a rotated file (``mv`` then a new one), a truncated
one (``> file``, logrotate's copytruncate), for plain and compressed recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.player import ReplayController
from neuron_top.recording.writer import RecordingWriter


def report(i: int) -> bytes:
    return json.dumps({"i": i, "system_data": {}}, separators=(",", ":")).encode()


def write(path: Path, numbers: range) -> None:
    with RecordingWriter(path) as w:
        for i in numbers:
            w.write(report(i), ts=1000.0 + i)


def numbers(ix: RecordingIndex) -> list[int]:
    return [json.loads(ix.get(i))["i"] for i in range(len(ix))]


@pytest.mark.parametrize("name", ["f.jsonl", "f.jsonl.gz", "f.jsonl.zst"])
def test_rotation_reopens_the_new_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write(path, range(10))
    with RecordingIndex(path, follow=True) as ix:
        ix.wait()
        write(path, range(10, 12))
        ix.refresh()
        assert numbers(ix) == list(range(12)) and ix.generation == 0
        path.rename(tmp_path / (name + ".1"))
        assert ix.refresh() == 12  # the path is missing for a moment: the old file is still followed
        write(path, range(100, 103))
        ix.refresh()
        assert numbers(ix) == [100, 101, 102] and ix.generation == 1
        assert ix.take_notices() == [f"{name} was replaced (rotated): reading the new file from its start "
                                     "(12 reports before are no longer in it)"]
        assert ix.take_notices() == []
        write(path, range(103, 105))
        ix.refresh()
        assert numbers(ix) == [100, 101, 102, 103, 104]  # and it follows the new one


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz"])
def test_truncation_reindexes(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write(path, range(10))
    with RecordingIndex(path, follow=True) as ix:
        ix.wait()
        path.write_bytes(b"")  # > file: the same inode, shorter
        write(path, range(50, 53))
        ix.refresh()
        assert numbers(ix) == [50, 51, 52] and ix.generation == 1
        assert "was truncated" in ix.take_notices()[0]


def test_a_file_not_followed_is_not_reopened(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    write(path, range(3))
    with RecordingIndex(path) as ix:
        ix.wait()
        path.unlink()
        write(path, range(7, 9))
        ix.refresh()
        assert numbers(ix) == [0, 1, 2] and ix.generation == 0


def test_restart_forgets_markers_and_goes_to_the_end_when_following(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write(path, range(10))
    with RecordingIndex(path, follow=True) as ix:
        ix.wait()
        c = ReplayController(ix)
        c.scan_markers()
        c.seek(9)
        c.mark_in = 3
        path.write_bytes(b"")
        write(path, range(4))
        ix.refresh()
        c.restart()
        assert c.position == 3 and c.scanned == 0 and c.markers == [] and c.mark_in is None
        c.seek(0)
        c.restart()
        assert c.position == 0  # not at the end: back to the start

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
def test_rotation_reads_the_old_files_end_then_the_new_file(tmp_path: Path, name: str) -> None:
    """An ``mv`` rotation skipped the old file's last reports (written after the last look) and dropped every
    report before it from the list; now the old file is read to its end and the new one read on after it."""
    path = tmp_path / name
    write(path, range(10))
    with RecordingIndex(path, follow=True) as ix:
        ix.wait()
        write(path, range(10, 12))
        ix.refresh()
        assert numbers(ix) == list(range(12)) and ix.generation == 0
        write(path, range(12, 15))  # the writer's last reports before logrotate: not looked at yet
        path.rename(tmp_path / (name + ".1"))
        write(path, range(100, 103))  # the writer reopens the path: a new file
        ix.refresh()
        assert numbers(ix) == [*range(15), 100, 101, 102] and ix.generation == 0  # numbers stay valid
        assert ix.take_notices() == [f"{name} was rotated: 15 reports of the old file kept (3 read from its end), "
                                     "reading on in the new one"]
        assert ix.take_notices() == []
        write(path, range(103, 105))
        ix.refresh()
        assert numbers(ix)[-5:] == [100, 101, 102, 103, 104]  # and it follows the new one
        assert [ix.timestamp(i) for i in (14, 15)] == [1014.0, 1100.0]


def test_rotation_while_the_path_is_missing_follows_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    write(path, range(5))
    with RecordingIndex(path, follow=True) as ix:
        ix.wait()
        path.rename(tmp_path / "m.jsonl.1")
        assert ix.refresh() == 5  # the path is missing for a moment: the old file is still followed
        with (tmp_path / "m.jsonl.1").open("ab") as f:  # the writer still has it open
            from neuron_top.recording.writer import stamp

            f.write(stamp(report(5), 1005.0) + b"\n")
        assert ix.refresh() == 6


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

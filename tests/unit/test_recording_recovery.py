"""Compressed recordings that survive: a recorder killed and started again on the same file, damaged bytes, two
writers at once. Every complete report is read, as ``zcat`` reads every complete line, and what is lost is counted."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.recording.index import RecordingIndex, SpooledIndex
from neuron_top.recording.inflate import Damage, Inflater
from neuron_top.recording.writer import RecordingWriter


def report(i: int) -> bytes:
    return json.dumps({"i": i, "pad": "x" * (i % 50), "system_data": {}}, separators=(",", ":")).encode()


def killed_session(path: Path, numbers: range) -> None:
    """A recorder that wrote ``numbers`` and was killed (SIGKILL: no end of stream, no close), appended to
    ``path`` as it is, cut member and all (the writer now closes a cut member before it appends; files written
    before that, or put together with cat, still hold them: the reader must read past them)."""
    part = path.with_name("part-" + path.name)
    w = RecordingWriter(part, append=False)
    for i in numbers:
        w.write(report(i), ts=1000.0 + i)
    os.close(w._fd)
    with path.open("ab") as f:
        f.write(part.read_bytes())
    part.unlink()


def numbers(ix: RecordingIndex | SpooledIndex) -> list[int]:
    return [json.loads(ix.get(i))["i"] for i in range(len(ix))]


def index_of(path: Path, **kw: object) -> RecordingIndex:
    ix = RecordingIndex(path, **kw)  # type: ignore[arg-type]
    assert ix.wait(30)
    return ix


@pytest.mark.parametrize("name", ["r.jsonl.gz", "r.jsonl.zst", "r.jsonl"])
def test_killed_and_restarted_on_the_same_file(tmp_path: Path, name: str, capfdbinary) -> None:
    """It said 'no reports ... corrupt gzip data' (exit 2) after one SIGKILL and a restart on a .gz/.zst file."""
    path = tmp_path / name
    killed_session(path, range(0, 40))
    killed_session(path, range(40, 45))
    killed_session(path, range(45, 46))
    with RecordingWriter(path) as w:  # a last session that ends properly
        for i in range(46, 60):
            w.write(report(i), ts=1000.0 + i)
    with index_of(path) as ix:
        assert numbers(ix) == list(range(60))
        assert ix.skipped == 0 and ix.error is None  # a member cut short loses nothing: nothing to count
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capfdbinary.readouterr().out)["source"]["position"].startswith("report 60/60 at ")


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_the_reader_gets_every_line_zcat_gets(tmp_path: Path, kind: str) -> None:
    tool = {"gz": "zcat", "zst": "zstdcat"}[kind]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    path = tmp_path / f"r.jsonl.{kind}"
    killed_session(path, range(0, 30))
    killed_session(path, range(30, 31))
    with RecordingWriter(path) as w:
        w.write(report(31), ts=2000.0)
    theirs = subprocess.run([tool], stdin=path.open("rb"), capture_output=True).stdout
    with index_of(path) as ix:
        ours = numbers(ix)
    assert ours == list(range(32))
    assert set(json.loads(line)["i"] for line in theirs.splitlines() if line.endswith(b"}")) <= set(ours)


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_damage_in_the_middle_is_skipped_counted_and_the_rest_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ("d.gz" if kind == "gzip" else "d.zst")
    for start in (0, 20, 40):
        with RecordingWriter(path) as w:
            for i in range(start, start + 20):
                w.write(report(i), ts=float(i))
    data = bytearray(path.read_bytes())
    second = data.find(b"\x1f\x8b\x08" if kind == "gzip" else b"\x28\xb5\x2f\xfd", 10)
    third = data.find(b"\x1f\x8b\x08" if kind == "gzip" else b"\x28\xb5\x2f\xfd", second + 10)
    middle = (second + third) // 2
    data[middle : middle + 8] = b"\xff" * 8  # a few bad bytes in the second member
    path.write_bytes(bytes(data))
    with index_of(path) as ix:
        got = numbers(ix)
        assert got[:20] == list(range(20)) and got[-20:] == list(range(40, 60))  # first and last members whole
        assert set(got) < set(range(60)) and got == sorted(got)  # some of the second, in order
        assert ix.skipped >= 1
        assert "damaged compressed data" in {s.reason for _, s in ix.skips()}
        assert ix.error is None


def test_two_writers_interleaved_never_crash_and_keep_what_reads(tmp_path: Path) -> None:
    """The lock refuses a second recorder; a file written by two anyway (another tool) reads whole: each writer
    sees the file changed under it and goes on in a member of its own."""
    path = tmp_path / "two.gz"
    a, b = RecordingWriter(path, lock=False), RecordingWriter(path, lock=False)
    for i in range(30):
        (a if i % 3 else b).write(report(i), ts=float(i))
    a.close()
    b.close()
    with index_of(path) as ix:
        real = []
        for i in range(len(ix)):
            try:
                doc = json.loads(ix.get(i))
            except ValueError:
                continue  # blocks of one writer inflated in the other's window: garbage, rejected by the decoder
            k = doc.get("i") if isinstance(doc, dict) else None
            if isinstance(k, int) and doc == {**json.loads(report(k)), "neuron_top": {"ts": float(k)}}:
                real.append(k)
        assert real == list(range(30)) and ix.skipped == 0


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_pipe_of_a_killed_and_restarted_recording(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ("p.gz" if kind == "gzip" else "p.zst")
    killed_session(path, range(0, 10))
    killed_session(path, range(10, 20))
    ix = SpooledIndex(io.BytesIO(path.read_bytes()))
    try:
        assert ix.wait(30)
        assert numbers(ix) == list(range(20))
    finally:
        ix.close()


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_inflater_fed_in_any_pieces(tmp_path: Path, kind: str, chunk: int) -> None:
    """A member header split between two chunks is still found after a break."""
    path = tmp_path / ("c.gz" if kind == "gzip" else "c.zst")
    killed_session(path, range(0, 5))
    killed_session(path, range(5, 9))
    data = path.read_bytes()
    inf = Inflater(kind, lambda size, at: data[at : at + size])
    out = b"".join(x for k in range(0, len(data), chunk) for x in inf.feed(data[k : k + chunk])
                   if isinstance(x, bytes))
    assert [json.loads(line)["i"] for line in out.splitlines()] == list(range(9))
    assert inf.cut == 1 and inf.damaged == 0


def test_random_damage_never_crashes_and_keeps_order(tmp_path: Path) -> None:
    rng = random.Random(5)
    for kind in ("gz", "zst"):
        path = tmp_path / f"x.{kind}"
        for start in range(0, 100, 20):
            killed_session(path, range(start, start + 20))
        clean = path.read_bytes()
        for _ in range(15):
            data = bytearray(clean)
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(data))
                data[at : at + rng.randint(1, 30)] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 30)))
            path.write_bytes(bytes(data))
            with index_of(path) as ix:
                got = []
                for i in range(len(ix)):
                    with contextlib.suppress(ValueError, KeyError, TypeError):  # a line the damage made up: the
                        got.append(json.loads(ix.get(i))["i"])  # decoder skips and counts it
                assert got == sorted(got)
                assert len(got) >= 20  # at least the members the damage did not touch


def test_damage_note_text() -> None:
    assert Damage(10, 110, "corrupt gzip data").text == "100 bytes from byte 10: corrupt gzip data"
    assert Damage(10, -1, "x").text == "the rest from byte 10: x"


@pytest.mark.parametrize("kind", ["xz", "bzip2"])
def test_random_damage_in_xz_or_bzip2_never_crashes_and_keeps_order(tmp_path: Path, kind: str) -> None:
    import bz2
    import lzma

    pack = lzma.compress if kind == "xz" else bz2.compress
    whole = b"".join(pack(b"".join(report(i) + b"\n" for i in range(k, k + 10))) for k in (0, 10, 20))
    rng = random.Random(11)
    for n in range(12):
        data = bytearray(whole)
        for _ in range(1 + n % 3):
            at = rng.randrange(6, len(data))
            data[at : at + rng.randint(1, 12)] = bytes(rng.randrange(256) for _ in range(4))
        path = tmp_path / f"x{n}.{kind}"
        path.write_bytes(bytes(data))
        with index_of(path) as ix:
            got = numbers(ix)
            assert got == sorted(got) and set(got) <= set(range(30))
        for piece in (1, 333):  # a pipe: fed in pieces, the same rule
            inf = Inflater(kind)
            out = [x for k in range(0, len(data), piece) for x in inf.feed(bytes(data[k : k + piece]))]
            assert all(isinstance(x, bytes | Damage) for x in out)

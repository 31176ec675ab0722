"""Files people make by hand read like recordings: saved without a final newline (``curl -o``, an editor), run
together by ``cat``, pretty-printed and run together."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.recording.index import RecordingIndex
from neuron_top.sources.demo import generate


@cache
def reports() -> tuple[bytes, ...]:
    return tuple(generate("inf1.xlarge", 4, 3))


def index_of(path: Path) -> RecordingIndex:
    ix = RecordingIndex(path)
    assert ix.wait(30)
    return ix


@pytest.mark.parametrize("flag", ["--once", "--json"])
def test_one_report_without_a_final_newline(tmp_path: Path, flag: str, capfdbinary: pytest.CaptureFixture) -> None:
    """It said "no reports in ..." and exited 2: the file was opened to be followed, so its end was not final."""
    path = tmp_path / "one.json"
    path.write_bytes(reports()[0])
    assert main(["replay", str(path), flag]) == 0
    out = capfdbinary.readouterr().out.decode()
    assert "report 1/1" in out


def test_reports_run_together_on_one_line_are_entries_of_their_own(tmp_path: Path,
                                                                   capfdbinary: pytest.CaptureFixture) -> None:
    """``cat a.json b.json`` of files without a final newline: "no decodable report" before."""
    r = reports()
    path = tmp_path / "cat.json"
    path.write_bytes(r[0] + r[1] + b"\n" + r[2])
    with index_of(path) as ix:
        assert len(ix) == 3 and ix.skipped == 0
        assert [ix.get(i) for i in range(3)] == list(r)
    assert main(["replay", str(path), "--json", "--start", "1"]) == 0
    assert json.loads(capfdbinary.readouterr().out)["source"]["position"].startswith("report 1/3 at ")
    assert main(["replay", str(path), "--once"]) == 0
    assert "report 3/3" in capfdbinary.readouterr().out.decode()


def test_pretty_printed_reports_run_together(tmp_path: Path) -> None:
    docs = [json.loads(x) for x in reports()]
    path = tmp_path / "pretty.json"
    path.write_text("".join(json.dumps(d, indent=2) for d in docs))  # "}{" at column 0 between them
    with index_of(path) as ix:
        assert len(ix) == 3 and ix.skipped == 0
        assert [json.loads(ix.get(i)) for i in range(3)] == docs


def test_a_brace_pair_inside_a_string_is_not_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "tag.json"
    doc = {"neuron_runtime_data": [{"pid": 1, "neuron_runtime_tag": "a}{b", "report": {}}]}
    path.write_text(json.dumps(doc) + "\n")
    with index_of(path) as ix:
        assert len(ix) == 1 and json.loads(ix.get(0)) == doc


def test_garbage_after_reports_on_one_line_is_skipped_and_counted(tmp_path: Path) -> None:
    r = reports()
    path = tmp_path / "junk.json"
    path.write_bytes(r[0] + r[1] + b"}{oops\n" + r[2] + b"\n")
    with index_of(path) as ix:
        assert [ix.get(i) for i in range(len(ix))] == list(r)
        assert ix.skipped == 1


def test_reports_run_together_deep_in_a_long_file(tmp_path: Path) -> None:
    """Only the first lines and unusually long ones are looked at (a search of every report would cost seven
    times the indexing pass): two reports on one line are twice as long, so they are found anywhere."""
    r = generate("inf1.xlarge", 4, 120)
    path = tmp_path / "long.json"
    path.write_bytes(b"\n".join(r[:100]) + b"\n" + r[100] + r[101] + b"\n" + b"\n".join(r[102:]) + b"\n")
    with index_of(path) as ix:
        assert len(ix) == 120 and ix.skipped == 0
        assert ix.get(100) == r[100] and ix.get(101) == r[101]


@pytest.mark.parametrize("joint", [b"", b" ", b"\t ", b"  "])
def test_cat_of_files_without_a_final_newline(tmp_path: Path, joint: bytes, capfdbinary: pytest.CaptureFixture) -> None:
    """``cat a.json b.json`` of two files saved without a final newline is ``{..}{..}`` with no newline at all:
    "no reports in cat.json (1 bad lines skipped)". Blanks between them (``printf '%s %s'``) were not split."""
    r = reports()
    path = tmp_path / "cat.json"
    path.write_bytes(joint.join(r))
    with index_of(path) as ix:
        assert [ix.get(i) for i in range(len(ix))] == list(r) and ix.skipped == 0
    assert main(["replay", str(path), "--once"]) == 0
    assert "report 3/3" in capfdbinary.readouterr().out.decode()
    assert main(["replay", str(path), "--summary"]) == 0
    assert "3 reports" in capfdbinary.readouterr().out.decode()


def test_followed_reports_run_together_without_a_newline_wait_until_all_are_whole(tmp_path: Path) -> None:
    r = reports()
    path = tmp_path / "grow.json"
    path.write_bytes(r[0] + r[1][:-20])
    with RecordingIndex(path, follow=True) as ix:
        assert ix.wait(30)
        assert len(ix) == 0 and ix.skipped == 0  # the second is being written: wait, take nothing out yet
        assert ix.refresh() == 0
        with path.open("ab") as f:
            f.write(r[1][-20:])
        assert ix.refresh() == 0  # whole, but the file just grew: wait for a newline or a quiet poll
        assert ix.refresh() == 2 and [ix.get(0), ix.get(1)] == [r[0], r[1]] and ix.skipped == 0


def test_a_file_without_reports_says_what_was_skipped_in_words(tmp_path: Path, capfdbinary) -> None:
    path = tmp_path / "array.json"  # one line that is not a report (a jq -s array is read now: see below)
    path.write_text('"a string, not a report"')
    assert main(["replay", str(path), "--once"]) == 2
    assert "array.json (1 bad line skipped)" in capfdbinary.readouterr().err.decode()  # not "1 bad lines"


# --- saved by other tools (issue 33) ---

def test_a_json_array_as_jq_s_writes_it_is_read(tmp_path: Path, capfdbinary) -> None:
    """``jq -s . night.jsonl > night.json``: one array of reports, pretty-printed."""
    from neuron_top.cli.main import main
    from tests.recordings import Plan, lines

    docs = [json.loads(x) for x in lines(Plan(seconds=240, period=60.0))]
    path = tmp_path / "night.json"
    path.write_text(json.dumps(docs, indent=2))
    assert main(["replay", str(path), "--json"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert doc["source"]["position"].startswith("report 5/5 at ") and doc["ts"] == docs[-1]["neuron_top"]["ts"]
    assert main(["replay", str(path), "--summary"]) == 0
    assert "night.json: 5 reports" in capfdbinary.readouterr().out.decode()


def test_kubectl_logs_with_timestamps_is_read_at_its_times(tmp_path: Path, capfdbinary) -> None:
    """``kubectl logs --timestamps neuron-monitor-x > f`` (or ``docker logs -t``, ``journalctl``): every line
    begins with the logger's prefix, and replay said "no reports in f (3 bad lines skipped)". The reports are
    read after it, at the prefix's time when it has one (a recorder's own time wins)."""
    from neuron_top.cli.main import main

    r = reports()
    path = tmp_path / "pod.log"
    path.write_bytes(b"".join(b"2026-11-29T10:00:0%dZ %s\n" % (i, line) for i, line in enumerate(r)))
    with index_of(path) as ix:
        assert [ix.get(i) for i in range(len(ix))] == list(r) and ix.skipped == 0
        assert ix.wallclock and [ix.timestamp(i) for i in range(3)] == [1795946400.0, 1795946401.0, 1795946402.0]
    assert main(["replay", str(path), "--summary"]) == 0
    first = capfdbinary.readouterr().out.decode().splitlines()[0]
    assert first.startswith("pod.log: 3 reports, 2026-11-2") and first.endswith("(2 s)")  # wall clock, any zone
    journal = tmp_path / "journal.txt"  # no year in the prefix: read, at times from the reports' periods
    journal.write_bytes(b"".join(b"Nov 29 10:00:0%d ip-10-0-0-1 neuron-monitor[812]: %s\n" % (i, line)
                                 for i, line in enumerate(r)))
    with index_of(journal) as ix:
        assert [ix.get(i) for i in range(len(ix))] == list(r) and not ix.wallclock


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_file_is_read(tmp_path: Path, capfdbinary, encoding: str) -> None:
    """PowerShell's ``>`` and some editors save UTF-16: it was 'no reports'."""
    from neuron_top.cli.main import main
    from tests.recordings import Plan, lines

    text = b"".join(lines(Plan(seconds=120, period=60.0))).decode()
    path = tmp_path / "saved.jsonl"
    data = text.encode(encoding)
    path.write_bytes(data if encoding == "utf-16" else b"\xfe\xff" + data)
    assert main(["replay", str(path), "--summary"]) == 0
    assert "saved.jsonl: 3 reports" in capfdbinary.readouterr().out.decode()


def test_a_broken_json_array_says_why(tmp_path: Path, capfdbinary) -> None:
    from neuron_top.cli.main import main

    path = tmp_path / "bad.json"
    path.write_text('[{"system_data": {}}, {"oops"')
    assert main(["replay", str(path), "--once"]) == 2
    assert "JSON array that does not parse" in capfdbinary.readouterr().err.decode()

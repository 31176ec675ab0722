"""``neuron-top replay FILE --summary``: span, holes, one line per event in time order, floods grouped, exit 1 on
uncorrected ECC or execution errors."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.recording.writer import RecordingWriter


def local(h: int, m: int, s: int, day: int = 1) -> float:
    """A wall-clock time on 2026-01-<day> in local time (what the summary prints)."""
    return time.mktime((2026, 1, day, h, m, s, 0, 0, -1))


def report(*, pids: tuple[int, ...] = (1,), corrected: int = 0, uncorrected_nd3: int = 0, errors: int = 0) -> bytes:
    devices = [{"neuron_device_index": d, "mem_ecc_corrected": corrected if d == 0 else 0,
                "mem_ecc_uncorrected": uncorrected_nd3 if d == 3 else 0, "sram_ecc_corrected": 0,
                "sram_ecc_uncorrected": 0} for d in range(4)]
    runtimes = [{"pid": p, "neuron_runtime_tag": f"app{p}", "report": {
        "neuroncore_counters": {"period": 1.0, "neuroncores_in_use": {"0": {"neuroncore_utilization": 40.0}}},
        "execution_stats": {"period": 1.0, "error_summary": {"generic": errors if p == 1 else 0},
                            "execution_summary": {"completed": 10}}}} for p in pids]
    return json.dumps({"neuron_runtime_data": runtimes,
                       "system_data": {"neuron_hw_counters": {"period": 1.0, "neuron_devices": devices}}}).encode()


def night(path: Path) -> Path:
    """01:00 to about 05:20, a report every 10 s: corrected ECC on ND0 in every report, one uncorrected on ND3 at
    02:13:05, app 2 stops at 02:30:05, a 2 h 03 m hole, app 1's execution errors start after it."""
    with RecordingWriter(path) as w:
        t = local(1, 0, 5)
        for _ in range(2 * 360):  # 01:00 -> 03:00
            w.write(report(pids=(1, 2) if t < local(2, 30, 5) else (1,), corrected=1,
                           uncorrected_nd3=1 if t == local(2, 13, 5) else 0), t)
            t += 10.0
        t += 2 * 3600 + 3 * 60 - 10  # a hole
        for k in range(10):
            w.write(report(errors=2 if k >= 3 else 0), t)
            t += 10.0
    return path


def test_the_incident_report(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(night(tmp_path / "night.jsonl")), "--summary"]) == 1
    lines = capfd.readouterr().out.splitlines()
    assert lines[0] == "night.jsonl: 730 reports, 2026-01-01 01:00:05 to 2026-01-01 05:04:25 (4 h 04 m)"
    assert lines[1] == "holes: 1, 2 h 03 m without data in all"
    assert "2026-01-01 02:13:05 ND3 uncorrected ECC (HBM) x1" in lines
    assert "2026-01-01 02:30:05 app app2 (pid 2) stopped" in lines
    assert "2026-01-01 02:59:55 skipped 2 h 03 m without data, until 2026-01-01 05:02:55" in lines
    assert "2026-01-01 05:03:25 app app1: 2 execution errors" in lines
    # 720 reports with corrected ECC on ND0: one line an hour, not 720
    flood = [line for line in lines if "corrected ECC (HBM)" in line and "uncorrected" not in line]
    assert flood == ["2026-01-01 01:00:05 ND0 corrected ECC (HBM) x360 in 360 reports, last 01:59:55",
                     "2026-01-01 02:00:05 ND0 corrected ECC (HBM) x360 in 360 reports, last 02:59:55"]
    times = [line[:19] for line in lines[2:-1]]
    assert times == sorted(times)  # in time order
    assert lines[-1] == "found: 1 uncorrected ECC event, 1 app with execution errors starting"


def test_a_clean_recording_exits_0(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calm.jsonl.zst"
    with RecordingWriter(path) as w:
        for i in range(20):
            w.write(report(), local(9, 0, i))
    assert main(["replay", str(path), "--summary"]) == 0
    out = capfd.readouterr().out
    assert out.splitlines()[-1] == "found: no uncorrected ECC errors, no execution errors"
    assert "holes" not in out


def test_summary_as_json(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(night(tmp_path / "n.jsonl")), "--summary", "--json"]) == 1
    doc = json.loads(capfd.readouterr().out)
    assert doc["reports"] == 730 and doc["serious"] == {"ecc-uncorrected": 1, "error": 1}
    assert doc["holes"][0]["seconds"] == pytest.approx(2 * 3600 + 3 * 60)
    first = next(e for e in doc["events"] if e["kind"] == "ecc-uncorrected")
    assert first["text"] == "ND3 uncorrected ECC (HBM) x1" and first["ts"] == local(2, 13, 5)


def test_skipped_input_is_counted(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junk.jsonl"
    with RecordingWriter(path) as w:
        w.write(report(), local(9, 0, 0))
        w.write_line(b"garbage")
        w.write(report(), local(9, 0, 1))
    assert main(["replay", str(path), "--summary"]) == 0
    assert "skipped: 1 (not a report 1)" in capfd.readouterr().out


def test_a_single_report(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.jsonl"
    with RecordingWriter(path) as w:
        w.write(b'{"system_data":{}}', 1767225600.0)
    assert main(["replay", str(path), "--summary"]) == 0
    assert capfd.readouterr().out.splitlines()[0].startswith("one.jsonl: 1 report, ")  # not "1 reports"


def test_no_reports_is_a_usage_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"junk\n")
    assert main(["replay", str(path), "--summary"]) == 2
    assert "no reports in" in capfd.readouterr().err


def test_the_scan_split_over_workers_finds_what_one_scan_finds(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from neuron_top.recording import incident as summary
    from neuron_top.recording.index import RecordingIndex
    from neuron_top.recording.player import scan_range

    path = tmp_path / "many.jsonl"
    with RecordingWriter(path) as w:
        for i in range(600):
            w.write(report(pids=(1, 2) if i % 97 < 50 else (1,), corrected=1 if i % 7 == 0 else 0,
                           uncorrected_nd3=1 if i == 333 else 0, errors=1 if i % 41 == 0 else 0),
                    local(9, 0, 0) + i * (10 if i != 400 else 5000))
            if i == 200:
                w.write_line(b'{"neuron_runtime_data": "not a list"}')  # decodes in the tolerant decoder only
    monkeypatch.setattr(summary, "PARALLEL_MIN", 100)
    with RecordingIndex(path) as ix:
        ix.wait()
        one = scan_range(ix, 0, len(ix))
        split = summary.scan_all(ix, workers=2)
        assert split == one and len(one[0]) > 100
        assert {m.kind for m in one[0]} >= {"app-", "app+", "ecc-corrected", "ecc-uncorrected", "error", "gap"}


def test_times_of_a_raw_recording_agree_with_its_span(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """300 raw reports 0.01 s apart said "+0:00:00 to +0:00:02 (3 s)": the end truncated, the span rounded."""
    path = tmp_path / "raw.jsonl"
    path.write_bytes(b"".join(b'{"system_data":{"vcpu_usage":{"period":0.01}}}\n' for _ in range(300)))
    assert main(["replay", str(path), "--summary"]) == 0
    assert "300 reports, +0:00:00 to +0:00:03 (3 s)" in capfd.readouterr().out

"""What counts as a report: at least one of neuron-monitor's top-level groups. Any other JSON object (``{"a": 1}``
from a ``--command`` that is not neuron-monitor) is "not a report", counted once and the same way by the live
feed, ``--once``, the recording index (replay, ``--once --start``) and ``--summary``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.decode import NOT_A_REPORT, DecodeError, decode_report
from neuron_top.feed import Feed, Report
from neuron_top.recording.index import RecordingIndex
from neuron_top.session import Session
from neuron_top.sources.demo import generate
from neuron_top.sources.stream import StreamSource

FOREIGN = [b'{"a": 1}', b"{}", b'{"neuron_top": {"ts": 5.0}}', b'{"system_data": null}', b'{"x": {"system_data": {}}}']


@pytest.mark.parametrize("data", FOREIGN)
def test_an_object_without_a_group_is_not_a_report(data: bytes) -> None:
    with pytest.raises(DecodeError, match="not a report"):
        decode_report(data)


@pytest.mark.parametrize("data", [b'{"neuron_runtime_data": []}', b'{"x": 1, "instance_info": {}}',
                                  b'{"system_data": {"vcpu_usage": {}}}'])
def test_one_group_is_enough(data: bytes) -> None:
    decode_report(data)


def _mixed(n: int = 4) -> list[bytes]:
    """Real demo reports with a foreign object after each."""
    out = []
    for data in generate("inf1.xlarge", 3, n):
        out += [data, b'{"a": 1}']
    return out


def test_a_live_stream_of_objects_is_no_data_not_live(tmp_path: Path) -> None:
    path = tmp_path / "objects.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 33)
    feed = Feed(StreamSource(path.open("rb"), name="cmd"))
    session = Session("cmd", "starting")
    events = list(feed.events())
    said = set()
    for e in events:
        session.apply(e)
        said.add(session.shown().state)
    assert not [e for e in events if isinstance(e, Report)]
    assert feed.skipped == 33 and feed.skip_reasons == {NOT_A_REPORT: 33}
    # while they come the header says NO DATA, never LIVE; at the end, "after 0 reports" as every output counts
    assert session.latest is None and "live" not in said and "no data" in said, said
    assert session.status.state == "ended" and "after 0 reports" in session.status.message


def test_every_output_counts_them_the_same_way(tmp_path: Path, capfdbinary) -> None:
    lines = _mixed(4)
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    feed = Feed(StreamSource(path.open("rb"), name="x"))
    reports = [e for e in feed.events() if isinstance(e, Report)]
    assert (len(reports), feed.skipped) == (4, 4)
    with RecordingIndex(path) as ix:
        ix.wait(30)
        assert (len(ix), ix.skipped) == (4, 4)
        assert {sk.reason for _, sk in ix.skips()} == {NOT_A_REPORT}
    assert main(["replay", str(path), "--once", "--json"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert (doc["source"]["reports"], doc["source"]["skipped"]) == (4, 4) and doc["source"]["position"].startswith("report 4/4")
    assert main(["replay", str(path), "--once", "--json", "--start", "2"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert (doc["source"]["reports"], doc["source"]["skipped"]) == (4, 4) and doc["source"]["position"].startswith("report 2/4")
    main(["replay", str(path), "--summary", "--json"])
    doc = json.loads(capfdbinary.readouterr().out)
    assert doc["skipped"] == {NOT_A_REPORT: 4}

"""The index agrees with a slow, obvious reader on random mixes of reports, garbage and blank lines.

The naive reader below is the specification written out line by line (``split(b"\\n")`` and ``json.loads``);
the index must find the same reports, byte for byte, and count the same skipped and blank lines, whether it reads
a file in one pass or a pipe that delivers a few bytes at a time.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neuron_top.recording import index as rec
from neuron_top.recording.index import RecordingIndex, SpooledIndex

BOM = b"\xef\xbb\xbf"
WS = b" \t\r\f\v"


def lstrip(line: bytes) -> bytes:
    while True:
        s = line.lstrip(WS)
        if s.startswith(BOM):
            s = s[3:]
        if s == line:
            return line
        line = s


def is_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


GROUPS = ("neuron_runtime_data", "system_data", "instance_info", "neuron_hardware_info", "neuron_k8s_info")
FIRST_GROUP = re.compile(rb'\{\s*"(?:' + "|".join(GROUPS).encode() + rb')"\s*:\s*[\[{]')


def is_report(body: bytes) -> bool:
    """A report has one of neuron-monitor's top-level groups, an object or a list. One that starts with it is
    taken without parsing (as the index does, for speed); any other is parsed."""
    if FIRST_GROUP.match(body):
        return True
    try:
        obj = json.loads(body)
    except ValueError:
        return False
    return isinstance(obj, dict) and any(isinstance(obj.get(g), dict | list) for g in GROUPS)


def naive(data: bytes) -> tuple[list[bytes], int, int]:
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # what follows the last newline is not a line
    terminated = data.endswith(b"\n")
    reports: list[bytes] = []
    skipped = blank = 0
    i = 0
    while i < len(lines):
        raw = lines[i]
        last_open = i == len(lines) - 1 and not terminated
        body = lstrip(raw).rstrip(WS)
        i += 1
        if not body:
            blank += 1
        elif body[:1] == b"{" and body[-1:] == b"}" and len(body) >= 2:
            if (not last_open or is_object(body)) and is_report(body):
                reports.append(body)
            else:
                skipped += 1
        elif body[:1] == b"{" and raw[: len(raw) - len(lstrip(raw))].strip(BOM) == b"":
            # A pretty-printed report runs to the next column-0 "}" line, unless a column-0 "{" comes first.
            found = None
            for j in range(i, len(lines)):
                if lines[j].startswith(b"{"):
                    break
                if lines[j].rstrip(b" \t\r") == b"}":
                    doc = b"\n".join([lstrip(raw), *lines[i:j], b"}"])
                    if is_object(doc):
                        found = doc, j + 1
                    break
            if found:
                if is_report(found[0]):
                    reports.append(found[0])
                else:
                    skipped += 1
                i = found[1]
            else:
                skipped += 1
        else:
            skipped += 1
    return reports, skipped, blank


ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | ascii_text,
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(ascii_text, kids, max_size=3),
                           max_leaves=6)
objects = st.dictionaries(ascii_text, json_values, max_size=4)
groups = st.dictionaries(st.sampled_from(GROUPS), st.dictionaries(ascii_text, json_values, max_size=2)
                         | st.lists(json_values, max_size=2) | json_values, min_size=1, max_size=2)
report_dicts = st.one_of(st.tuples(groups, objects).map(lambda t: {**t[0], **t[1]}),
                         st.tuples(objects, groups).map(lambda t: {**t[0], **t[1]}), objects)
report_lines = report_dicts.map(lambda d: json.dumps(d, separators=(",", ":")).encode())
"""Reports (a group first or later, of any shape) and JSON objects that are not reports."""


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["report", "report", "pretty", "cut", "garbage", "blank", "brace"]))
    if kind == "report":
        line = draw(report_lines)
    elif kind == "pretty":
        return json.dumps(draw(report_dicts), indent=2).encode()
    elif kind == "cut":
        full = draw(report_lines)
        line = full[: draw(st.integers(1, max(1, len(full) - 1)))]
    elif kind == "garbage":
        line = draw(ascii_text).encode()
    elif kind == "brace":
        line = draw(st.sampled_from([b"{", b"}", b"  }", b"{}", b"} ", b"[]"]))
    else:
        line = draw(st.sampled_from([b"", b" ", b"\t \f"]))
    prefix = draw(st.sampled_from([b"", b"", b"", BOM, b"  ", b"\t"]))
    return prefix + line + draw(st.sampled_from([b"", b"", b"\r", b" "]))


recordings = st.tuples(st.lists(lines(), max_size=25), st.booleans()).map(
    lambda t: b"\n".join(t[0]) + (b"\n" if t[1] and t[0] else b""))


def index_result(ix: RecordingIndex | SpooledIndex) -> tuple[list[bytes], int, int]:
    assert ix.wait(30)
    try:
        return [ix.get(i) for i in range(len(ix))], ix.skipped, ix.blank
    finally:
        ix.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=recordings)
def test_file_index_matches_naive_reader(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "r.ndjson"
    path.write_bytes(data)
    assert index_result(RecordingIndex(path)) == naive(data)


@settings(max_examples=100, deadline=None)
@given(data=recordings, chunk=st.integers(1, 64))
def test_pipe_read_in_small_chunks_matches_naive_reader(data: bytes, chunk: int) -> None:
    """Lines and pretty reports cut across reads give the same result as one pass over the whole input."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rec, "_CHUNK", chunk)
        assert index_result(SpooledIndex(io.BytesIO(data))) == naive(data)  # type: ignore[arg-type]

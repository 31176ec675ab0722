"""The framer: one report per line, pretty-printed, CRLF, BOM, garbage, truncation, chunk boundaries."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_top.sources.base import Skipped
from neuron_top.sources.framing import (
    BOM,
    NOT_A_REPORT,
    TOO_LARGE,
    TRUNCATED,
    ReportFramer,
    after_log_prefix,
    brace_depth,
    prefix_time,
    split_concatenated,
)
from tests.conftest import REPORTS


def frame(data: bytes, chunk: int | None = None) -> list[bytes | Skipped]:
    framer = ReportFramer()
    out: list[bytes | Skipped] = []
    if chunk is None:
        out += framer.feed(data)
    else:
        for i in range(0, len(data), chunk):
            out += framer.feed(data[i : i + chunk])
    out += framer.finish()
    return out


def docs(items: list[bytes | Skipped]) -> list[object]:
    return [json.loads(x) for x in items if isinstance(x, bytes)]


def skipped(items: list[bytes | Skipped]) -> list[str]:
    """The reason of every skipped item, once per item it counts (a run of lines comes as one ``Skipped``)."""
    return [x.reason for x in items if isinstance(x, Skipped) for _ in range(x.count)]


def merged(items: list[bytes | Skipped]) -> list[bytes | Skipped]:
    """``items`` with each run of skipped lines as one item: how a run is cut into items follows the chunks the
    input came in (each ``feed`` hands out the lines it completed); what was skipped, in what order, does not."""
    out: list[bytes | Skipped] = []
    for x in items:
        prev = out[-1] if out else None
        if (isinstance(x, Skipped) and isinstance(prev, Skipped) and x.reason == prev.reason == NOT_A_REPORT):
            out[-1] = Skipped(prev.reason, prev.sample, prev.count + x.count)
        else:
            out.append(x)
    return out


REPORT = {"system_data": {"memory_info": {"period": 1.0, "error": ""}}, "neuron_runtime_data": [{"pid": 1}]}


def test_one_report_per_line_comes_back_verbatim() -> None:
    line = json.dumps(REPORT, separators=(",", ":")).encode()
    out = frame(line + b"\n" + line + b"\n")
    assert out == [line, line]


@pytest.mark.parametrize("prefix", [
    b"2026-11-29T10:00:01.123456789Z ",  # kubectl logs --timestamps, docker logs -t
    b"2026-11-29T10:00:01+0000 ip-10-0-0-1 neuron-monitor[812]: ",  # journalctl -o short-iso
    b"Nov 29 10:00:01 ip-10-0-0-1 neuron-monitor[812]: ",  # journalctl, syslog
    b"2026-11-29 10:00:01 ",  # neuron-monitor | ts '%Y-%m-%d %H:%M:%S'
])
def test_a_report_after_a_loggers_prefix_is_read(prefix: bytes) -> None:
    """neuron-monitor's output as Kubernetes, Docker or journald keep it: every line was skipped as "not a
    report", so ``kubectl logs --timestamps pod | neuron-top`` showed nothing."""
    line = json.dumps(REPORT, separators=(",", ":")).encode()
    out = frame(prefix + line + b"\n" + b"INFO monitor started\n" + prefix + line + b"\n", chunk=1000)
    assert out[0] == line and out[2] == line and skipped(out) == [NOT_A_REPORT]


def test_a_prefix_is_short_without_quotes_or_braces_and_ends_in_a_blank() -> None:
    assert after_log_prefix(b'2026-11-29T10:00:01Z {"a":1}') == 21
    for line in (b'say "hi" {"a":1}', b'x' * 300 + b' {"a":1}', b"abc{}", b'{"a":1}', b"] {}"):
        assert after_log_prefix(line) == (-1 if line != b"] {}" else 2)
    assert prefix_time(b"2026-11-29T10:00:01.5Z ") == 1795946401.5
    assert prefix_time(b"2026-11-29T12:00:01+02:00 host x: ") == 1795946401.0
    assert prefix_time(b"[2026-11-29T10:00:01Z] ") == 1795946401.0
    assert prefix_time(b"Nov 29 10:00:01 host x: ") is None  # no year: not a time we can place


def test_pretty_printed_reports_back_to_back_are_joined_onto_one_line() -> None:
    pretty = json.dumps(REPORT, indent=2).encode()
    out = frame(pretty + b"\n" + pretty + b"\n")
    assert docs(out) == [REPORT, REPORT]
    assert all(b"\n" not in x for x in out if isinstance(x, bytes))


def test_crlf_and_bom_are_ignored() -> None:
    pretty = json.dumps(REPORT, indent=2).replace("\n", "\r\n").encode()
    out = frame(BOM + pretty + b"\r\n" + BOM + json.dumps(REPORT).encode() + b"\r\n")
    assert docs(out) == [REPORT, REPORT]
    assert skipped(out) == []


def test_garbage_between_reports_is_skipped_with_a_clean_sample() -> None:
    line = json.dumps(REPORT).encode()
    out = frame(b"Warning: Permanently added 'trn' (ED25519)\n" + line + b"\n\x1b[31mboom\n" + line + b"\n")
    assert docs(out) == [REPORT, REPORT]
    notes = [x for x in out if isinstance(x, Skipped)]
    assert [n.reason for n in notes] == [NOT_A_REPORT, NOT_A_REPORT]
    assert "\x1b" not in notes[1].sample and "\\x1b" in notes[1].sample


def test_a_run_of_garbage_lines_is_one_skipped_item_counting_them_in_input_order() -> None:
    """A flood of lines that are not reports is counted in bulk: one ``Skipped`` per run (per chunk at most),
    with the first line as its sample, still in order with the reports around it; blank lines are not counted."""
    line = json.dumps(REPORT).encode()
    noise = b"".join(b"WARN retrying %d\n" % i for i in range(5000))
    for chunk in (None, 7, 4096, 65536):
        out = frame(b"ssh banner\n\n" + noise + line + b"\n" + noise + b"  \n\xef\xbb\xbftail\n" + line, chunk)
        assert docs(out) == [REPORT, REPORT]
        assert skipped(out) == [NOT_A_REPORT] * 10002
        kinds = ["doc" if isinstance(x, bytes) else "skip" for x in out]
        assert kinds[0] == "skip" and kinds.index("doc") < len(kinds) - 2 and kinds[-1] == "doc", chunk
        first = next(x for x in out if isinstance(x, Skipped))
        assert first.sample == "ssh banner"
        if chunk is None or chunk >= 4096:
            assert len([x for x in out if isinstance(x, Skipped)]) <= 4 + 2 * (len(noise) // (chunk or 10**9))


def test_truncated_pretty_report_followed_by_a_complete_one() -> None:
    pretty = json.dumps(REPORT, indent=2)
    cut = "\n".join(pretty.splitlines()[:5])
    out = frame((cut + "\n" + pretty + "\n").encode())
    assert skipped(out) == [TRUNCATED]
    assert docs(out) == [REPORT]


def test_truncated_line_followed_by_a_complete_line() -> None:
    line = json.dumps(REPORT)
    out = frame((line[:30] + "\n" + line + "\n").encode())
    assert skipped(out) == [TRUNCATED]
    assert docs(out) == [REPORT]


def test_last_report_without_newline_is_flushed_at_finish() -> None:
    framer = ReportFramer()
    line = json.dumps(REPORT).encode()
    assert framer.feed(line) == []
    assert framer.pending
    assert framer.finish() == [line]


def test_incomplete_tail_at_eof_is_a_truncated_report() -> None:
    out = frame(json.dumps(REPORT).encode()[:-3])
    assert skipped(out) == [TRUNCATED]


def test_braces_inside_strings_do_not_confuse_depth() -> None:
    obj = {"tag": '}}}{ "x', "a": {"b": "{"}}
    out = frame(json.dumps(obj, indent=1).encode() + b"\n" + json.dumps(obj).encode())
    assert docs(out) == [obj, obj]
    assert brace_depth(b'{"a": "}}}') == 1
    assert brace_depth(b'{"a": "\\"}"}') == 0


def test_oversized_report_is_dropped_and_the_next_one_survives() -> None:
    framer = ReportFramer(max_report_bytes=100)
    big = json.dumps({"x": "y" * 500}).encode()
    small = json.dumps(REPORT).encode()
    out: list[bytes | Skipped] = []
    for i in range(0, len(big), 7):
        out += framer.feed(big[i : i + 7])
    out += framer.feed(b"\n" + small[:50])
    out += framer.feed(small[50:] + b"\n")
    out += framer.finish()
    assert skipped(out) == [TOO_LARGE]
    assert docs(out) == [REPORT]


def test_oversized_pretty_report_is_dropped() -> None:
    framer = ReportFramer(max_report_bytes=100)
    big = json.dumps({f"k{i}": i for i in range(50)}, indent=2).encode()
    out = framer.feed(big + b"\n" + json.dumps(REPORT).encode() + b"\n") + framer.finish()
    assert TOO_LARGE in skipped(out)
    assert docs(out)[-1] == REPORT


def test_real_fixtures_frame_as_one_document_each() -> None:
    folder = REPORTS
    for path in sorted(folder.glob("*.json")):
        out = frame(path.read_bytes(), chunk=4096)
        assert len(docs(out)) == 1, path.name
    stream = frame((folder / "wandb_trn1_2xlarge_stream.ndjson").read_bytes(), chunk=1000)
    assert len(docs(stream)) == 3
    truncated = frame((folder / "issue633_inf1_container_no_devices_TRUNCATED.txt").read_bytes())
    assert docs(truncated) == []
    assert skipped(truncated) == [NOT_A_REPORT, NOT_A_REPORT, TRUNCATED]


# -- properties -------------------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


STYLES = ["compact", "spaced", "indent2", "indent4", "crlf"]


@st.composite
def encoded(draw: st.DrawFn, obj: object, styles: list[str] = STYLES) -> bytes:
    style = draw(st.sampled_from(styles))
    ascii_only = draw(st.booleans())
    if style == "compact":
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)
    elif style == "spaced":
        text = json.dumps(obj, ensure_ascii=ascii_only)
    elif style == "crlf":
        text = json.dumps(obj, indent=2, ensure_ascii=ascii_only).replace("\n", "\r\n")
    else:
        text = json.dumps(obj, indent=int(style[-1]), ensure_ascii=ascii_only)
    return text.encode()


def _is_garbage(line: bytes) -> bool:
    body = (line[len(BOM) :] if line.startswith(BOM) else line).strip()
    return not body.startswith(b"{") and not (body.endswith(b"}") and after_log_prefix(body) > 0)


garbage_lines = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")).filter(_is_garbage)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000), st.integers(min_value=1, max_value=64))
def test_any_byte_soup_never_raises(soup: bytes, chunk: int) -> None:
    out = frame(soup, chunk)
    for item in out:
        assert isinstance(item, (bytes, Skipped))
        if isinstance(item, bytes):
            assert item.startswith(b"{")


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[object]]:
    objs = draw(st.lists(json_objects, max_size=5))
    parts: list[bytes] = []
    for obj in objs:
        parts += draw(st.lists(garbage_lines, max_size=2))
        parts.append(draw(encoded(obj, [*STYLES, "indent0"])))
    parts += draw(st.lists(garbage_lines, max_size=2))
    data = b"\n".join(parts)
    if draw(st.booleans()):
        data += b"\n"
    return data, objs


@settings(max_examples=150, deadline=None)
@given(streams())
def test_reports_with_garbage_lines_come_back_intact(stream: tuple[bytes, list[object]]) -> None:
    data, objs = stream
    out = frame(data)
    assert docs(out) == objs
    assert TRUNCATED not in skipped(out)


@settings(max_examples=150, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_chunk_boundaries_do_not_change_the_result(
    stream: tuple[bytes, list[object]], cuts: list[int]
) -> None:
    data, _ = stream
    framer = ReportFramer()
    out: list[bytes | Skipped] = []
    last = 0
    for cut in sorted({c % (len(data) + 1) for c in cuts}):
        out += framer.feed(data[last:cut])
        last = cut
    out += framer.feed(data[last:])
    out += framer.finish()
    assert merged(out) == merged(frame(data))


@settings(max_examples=200, deadline=None)
@given(json_objects.filter(bool), st.data())
def test_truncated_then_complete_keeps_the_complete_one(obj: dict[str, object], data: st.DataObject) -> None:
    whole = data.draw(encoded(obj))
    cut = data.draw(st.integers(min_value=1, max_value=len(whole) - 1))
    head = whole[:cut]
    out = frame(head + b"\n" + whole + b"\n")
    # The complete report always comes out last. The cut-off one is reported as truncated, or, when it happens to
    # look balanced (braces inside strings fool the one-line fast path), passed on for the decoder to reject.
    assert out[-1] == whole.replace(b"\r", b"") or json.loads(out[-1]) == obj  # type: ignore[arg-type]
    for item in out[:-1]:
        assert isinstance(item, Skipped) or not _is_json(item)


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def test_unindented_multiline_report_is_not_mistaken_for_truncation() -> None:
    obj = {"a": [{"b": 1}, {"c": {"d": 2}}], "e": {}}
    text = json.dumps(obj, indent=0)
    assert "\n{" in text  # nested braces at column 0
    out = frame((text + "\n" + text + "\n").encode())
    assert docs(out) == [obj, obj]
    assert skipped(out) == []


def test_truncated_line_then_garbage_then_a_complete_report() -> None:
    line = json.dumps(REPORT)
    out = frame((line[:40] + "\nerror: lost connection\n" + line + "\n").encode())
    assert docs(out) == [REPORT]
    assert skipped(out) == [TRUNCATED]


class ReferenceFramer(ReportFramer):
    """The framer without its inlined fast loop: every line goes through ``_line``."""

    def _lines(self, lines: list[bytes], out: list[bytes | Skipped]) -> None:
        for line in lines:
            self._line(line, out)


soup_lines = st.lists(
    st.sampled_from(
        [b"{", b"}", b"  {", b"  }", b'  "a": "}{",', b"\xef\xbb\xbf{", b"", b"x", b'{"a": 1}', b"  [{", b"}{",
         b'{"a": 1}{"b": 2}']
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(streams().map(lambda s: s[0]), soup_lines.map(b"\n".join)), st.integers(1, 50))
def test_fast_loop_matches_the_line_by_line_reference(data: bytes, chunk: int) -> None:
    fast, ref = ReportFramer(max_report_bytes=200), ReferenceFramer(max_report_bytes=200)
    got: list[bytes | Skipped] = []
    want: list[bytes | Skipped] = []
    for i in range(0, len(data), chunk):
        got += fast.feed(data[i : i + chunk])
        want += ref.feed(data[i : i + chunk])
    assert got + fast.finish() == want + ref.finish()


def test_flush_if_complete_delivers_a_report_without_newline_only_when_whole() -> None:
    framer = ReportFramer()
    line = json.dumps(REPORT).encode()
    assert framer.feed(line[:10]) == []
    assert framer.flush_if_complete() == []  # incomplete: stays buffered
    assert framer.feed(line[10:]) == []
    assert framer.flush_if_complete() == [line]
    assert not framer.pending
    pretty = json.dumps(REPORT, indent=2).encode()
    assert framer.feed(pretty) == []  # the closing brace has no newline yet
    assert docs(framer.flush_if_complete()) == [REPORT]
    assert framer.feed(b"\n") + framer.finish() == []


@settings(max_examples=150, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_flushing_when_quiet_never_changes_a_valid_stream(
    stream: tuple[bytes, list[object]], cuts: list[int]
) -> None:
    data, objs = stream
    framer = ReportFramer()
    out: list[bytes | Skipped] = []
    last = 0
    for cut in sorted({c % (len(data) + 1) for c in cuts}):
        out += framer.feed(data[last:cut])
        out += framer.flush_if_complete()
        last = cut
    out += framer.feed(data[last:]) + framer.finish()
    assert docs(out) == objs
    assert skipped(out) == skipped(frame(data))


def test_reports_run_together_on_one_line_are_cut_apart() -> None:
    """``cat`` of files without a final newline puts the end of one report and the start of the next on one
    line. The framer passes such a line on whole (checking every report would cost a scan); the collector and
    the recorder cut it with ``split_concatenated`` when it fails to decode."""
    a, b = {"a": 1, "b": {"c": "x"}}, {"x": [1, {"y": 2}]}
    compact_a, compact_b = json.dumps(a).encode(), json.dumps(b).encode()
    assert frame(compact_a + compact_b + b"\n") == [compact_a + compact_b]
    assert split_concatenated(compact_a + compact_b) == [compact_a, compact_b]
    assert split_concatenated(compact_a + b" \t" + compact_b + compact_a) == [compact_a, compact_b, compact_a]
    pretty = (json.dumps(a, indent=2) + json.dumps(b, indent=2) + "\n").encode()  # "}{" on a line of its own
    (doc,) = frame(pretty, chunk=7)
    assert [json.loads(p) for p in split_concatenated(doc)] == [a, b]


def test_braces_in_strings_or_garbage_between_do_not_cut() -> None:
    one = json.dumps({"tag": "x}{y", "n": "} {"}).encode()
    assert split_concatenated(one) == [one]
    assert split_concatenated(b'{"a": 1}xx{"b": 2}') == [b'{"a": 1}xx{"b": 2}']  # the decoder rejects it
    # a cut-off second report: the first is kept, the rest is one bad piece
    assert split_concatenated(b'{"a": 1}{"b": ') == [b'{"a": 1}', b'{"b":']


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.text(alphabet="{}\" a", max_size=4),
                                max_size=3), min_size=1, max_size=4),
       st.sampled_from(["", " ", "  ", "\t"]))
def test_any_objects_run_together_come_apart(objs: list[dict], sep: str) -> None:
    line = sep.join(json.dumps(o) for o in objs).encode()
    assert [json.loads(p) for p in split_concatenated(line)] == objs


def test_a_line_of_a_byte_order_mark_and_blanks_is_blank_wherever_a_read_ends() -> None:
    """Found by a random property run: such a line at the end of a read was counted as a skipped line ("not a
    report"), in the middle of one it was blank; whole lines without a brace take a quicker path that did not
    drop the mark first."""
    data = b'\x00\x00\x00\n\xef\xbb\xbf\t\t\t \n{}\n{\n"": null\n}\n\x00\x00\x00\n{}\n\x00\x00\n'
    whole = merged(frame(data))
    assert [s.count for s in whole if isinstance(s, Skipped)] == [1, 1, 1]
    for cut in range(len(data) + 1):
        framer = ReportFramer()
        out = framer.feed(data[:cut]) + framer.feed(data[cut:]) + framer.finish()
        assert merged(out) == whole, cut

"""Cut a byte stream into neuron-monitor reports.

neuron-monitor writes one JSON document per line, but what reaches us is not always that tidy: reports that went
through ``jq .`` are pretty-printed over many lines, files edited on Windows have CRLF and a BOM, ssh banners and
shell noise land between reports, and a monitor killed mid-write leaves half a report followed by a whole one.

The framer works line by line (JSON strings cannot hold a raw newline, so a line break is never inside a string):

* A line that starts with ``{``, ends with ``}`` and has as many ``}`` as ``{`` is a whole report: the fast path,
  two C-speed counts (the lengths without each brace: ``bytes.replace`` finds a byte with ``memchr``, 2.5x faster
  than ``bytes.count``'s byte-by-byte loop on a trn2 report, 0.08 ms instead of 0.2). A cut-off line can pass it
  when braces inside strings balance the count; the decoder then rejects it as malformed, and the next report is
  unaffected.
* A line that starts with ``{`` but does not balance opens a document; following lines are added until the brace
  depth (counted outside strings) returns to zero. Lines are stripped and joined, so every document comes out on
  one line (ready to be recorded as JSON Lines).
* While inside a document, a ``{`` at column 0 means the document was cut short: in pretty-printed output only the
  top-level braces are at column 0. The partial document is reported as truncated and the new one starts. (Output
  with no indentation at all, ``json.dumps(indent=0)``, is recognised by its second line and exempt.)
* Anything else outside a document is skipped and reported.
* Several top-level objects in a row (``{..}{..}``: ``cat`` of files without a final newline) come out as one
  document. Looking for that costs a scan of every report, so it is left to the collector, which calls
  ``split_concatenated`` only when a document fails to decode.

The framer never decodes: it only promises that each document starts with ``{``. The decoder has the last word.
Partial lines are kept as a list of chunks and only new bytes are searched for newlines, so a huge line arriving in
small pieces costs linear time.
"""

from __future__ import annotations

import re
from itertools import repeat

from neuron_top.sources.base import Skipped
from neuron_top.textsafe import clean

__all__ = [
    "BOM", "DEFAULT_MAX_REPORT_BYTES", "NOT_A_REPORT", "PREFIX_MAX", "SAMPLE_BYTES", "TOO_LARGE", "TRUNCATED",
    "Framed", "ReportFramer", "after_log_prefix", "brace_depth", "prefix_time", "sample", "split_concatenated",
]

BOM = b"\xef\xbb\xbf"
SAMPLE_BYTES = 120
"""How much of skipped input is kept as a sample."""
DEFAULT_MAX_REPORT_BYTES = 64 << 20
"""A report larger than this is dropped (the biggest real one, 32 runtimes on a trn1n.32xlarge, is ~450 KB)."""

NOT_A_REPORT = "not a report"
TRUNCATED = "truncated report"
TOO_LARGE = "report too large"

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_WS = b" \t\r\n\f\v"

Framed = bytes | Skipped
"""What the framer yields: a candidate document, or a note about skipped input."""


PREFIX_MAX = 200
"""The longest log prefix read past before a report (``kubectl logs --timestamps``' is 31 bytes, journald's
``short-iso`` with a host and unit ~60)."""
_LOG_PREFIX = re.compile(rb'[^"{}\r\n]{1,%d}[ \t]\Z' % PREFIX_MAX)
_PREFIX_TIME = re.compile(
    rb"[ \t]*\[?(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d+))?[ \t]*(Z|[+-]\d\d:?\d\d)?\]?[ \t]")


def after_log_prefix(head: bytes) -> int:
    """Where a report starts in a line (``head``: its first ``PREFIX_MAX`` + 1 bytes or more; the caller checks
    that it ends with ``}``) that a logger prefixed (``kubectl logs --timestamps``, ``docker logs -t``,
    ``journalctl``, moreutils' ``ts``): the index of its ``{``, or -1. The prefix is short, has no quote or
    brace, and ends in a blank; the decoder still has the last word on what follows. Such lines were all
    skipped as "not a report". The one rule for the live framer and the recording index."""
    j = head.find(b"{", 0, PREFIX_MAX + 1)
    if j <= 0 or _LOG_PREFIX.match(head, 0, j) is None:
        return -1
    return j


def prefix_time(prefix: bytes) -> float | None:
    """The Unix time a log prefix starts with (``2026-11-29T10:00:01.123456789Z``, ``[2026-11-29 10:00:01]``: an
    ISO 8601 date and time, local when it has no zone), or None."""
    from datetime import datetime

    m = _PREFIX_TIME.match(prefix + b" ")
    if m is None:
        return None
    day, clock, frac, zone = m.groups()
    text = f"{day.decode()}T{clock.decode()}" + (f".{frac.decode()[:6].ljust(6, '0')}" if frac else "")
    if zone:
        z = zone.decode()
        text += "+00:00" if z == "Z" else (z if ":" in z else f"{z[:3]}:{z[3:]}")
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def sample(data: bytes) -> str:
    """The start of ``data`` as a printable one-line string."""
    return clean(data[:SAMPLE_BYTES].decode("utf-8", "replace"), SAMPLE_BYTES)


def brace_depth(line: bytes) -> int:
    """``{`` minus ``}`` in ``line``, ignoring braces inside strings.

    An unterminated string runs to the end of the line (it was cut off there), so braces after its opening quote
    do not count either.
    """
    if b"{" not in line and b"}" not in line:
        return 0  # most lines of a pretty-printed report: skip the regex
    if b'"' in line:
        line = _STRING.sub(b"", line)
        quote = line.find(b'"')
        if quote >= 0:
            line = line[:quote]
    return line.count(b"{") - line.count(b"}")


_BETWEEN = re.compile(rb"}[ \t]+{")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}]')


def split_concatenated(doc: bytes) -> list[bytes]:
    """``doc`` cut where one top-level object ends and another begins on the same line (``{..}{..}``, as
    ``cat`` makes of files without a final newline); ``[doc]`` when there is nothing to cut.

    Braces inside strings do not count. What follows a closed object must be whitespace and a ``{``; anything else
    is left attached for the decoder to reject."""
    spans = concatenated_spans(doc)
    return [doc] if len(spans) == 1 else [doc[a:b] for a, b in spans]


def concatenated_spans(doc: bytes) -> list[tuple[int, int]]:
    """Where ``split_concatenated`` cuts ``doc``, as ``(start, end)`` offsets (a recording index keeps offsets)."""
    whole = [(0, len(doc))]
    if b"}{" not in doc and not _BETWEEN.search(doc):
        return whole
    spans: list[tuple[int, int]] = []
    start = depth = 0
    for m in _TOKEN.finditer(doc):
        tok = m.group()
        if tok == b"{":
            if depth == 0 and m.start() > start:
                if doc[start:m.start()].strip(_WS):
                    break  # something other than whitespace between: not two documents
                start = m.start()
            depth += 1
        elif tok == b"}":
            depth -= 1
            if depth == 0:
                spans.append((start, m.end()))
                start = m.end()
    else:
        if not doc[start:].strip(_WS):
            return spans or whole
    if not spans:
        return whole
    rest = doc[start:]
    return [*spans, (start + len(rest) - len(rest.lstrip(_WS)), len(doc) - (len(rest) - len(rest.rstrip(_WS))))]


class ReportFramer:
    """Feed it bytes as they arrive; it returns complete documents and ``Skipped`` notes, in input order.

    Not thread-safe: one framer per stream, used by the thread that reads the stream.
    """

    def __init__(self, max_report_bytes: int = DEFAULT_MAX_REPORT_BYTES) -> None:
        self.max_report_bytes = max_report_bytes
        self._partial: list[bytes] = []  # pieces of the current, unfinished line
        self._partial_len = 0
        self._overlong = False  # the current line already exceeded the limit; drop the rest of it
        self._doc: list[bytes] = []  # stripped lines of the document being collected
        self._doc_len = 0
        self._depth = 0
        self._col0_rule = True
        self._junk = 0
        """Lines that were not reports, not yet handed out: a run of them becomes one ``Skipped`` (``_emit``)."""
        self._junk_head = b""

    # -- input ---------------------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Framed]:
        """Take the next bytes of the stream; return what they completed."""
        out: list[Framed] = []
        if b"\n" in chunk:
            lines = chunk.split(b"\n")
            rest = lines.pop()
            if self._overlong:  # the first line finishes one we are dropping
                self._overlong = False
                lines.pop(0)
                self._partial.clear()
                self._partial_len = 0
            elif self._partial:
                self._partial.append(lines[0])
                lines[0] = b"".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
            if not self._doc and b"{" not in chunk and (not lines or b"{" not in lines[0]):
                self._junk_lines(lines)
            else:
                self._lines(lines, out)
        else:
            rest = chunk
        if rest and not self._overlong:
            self._partial.append(rest)
            self._partial_len += len(rest)
            if self._partial_len > self.max_report_bytes:
                head = self._partial[0]
                self._partial.clear()
                self._partial_len = 0
                self._overlong = True
                self._abandon_doc(out)
                self._emit(out, Skipped(TOO_LARGE, sample(head)))
        self._flush_junk(out)
        return out

    def _junk_lines(self, lines: list[bytes]) -> None:
        """Whole lines outside a document, none with a ``{``: none can be or start a report, so they are counted
        at C speed, not framed one by one. A flood of log lines (a wrong ``--command``, an ssh banner loop) cost
        a ``Skipped``, a sample and a feed event each; now a chunk costs one (``benchmarks/bench_garbage.py``)."""
        if any(map(bytes.startswith, lines, repeat(BOM))):
            # as ``_line`` reads them: a byte-order mark opening a line goes first (a line of only that and
            # blanks is blank, not junk; it was counted when it came at the end of a read, not in its middle)
            lines = [line[len(BOM):] if line.startswith(BOM) else line for line in lines]
        bodies = [*filter(None, map(bytes.strip, lines))]
        if not bodies:
            return
        if not self._junk:
            head = bodies[0]
            self._junk_head = (head[len(BOM):] if head.startswith(BOM) else head)[:SAMPLE_BYTES]
        self._junk += len(bodies)

    def _emit(self, out: list[Framed], item: Framed) -> None:
        """``item`` into ``out``, after the run of skipped lines before it (so the order stays the input's)."""
        if self._junk:
            self._flush_junk(out)
        out.append(item)

    def _flush_junk(self, out: list[Framed]) -> None:
        if self._junk:
            out.append(Skipped(NOT_A_REPORT, sample(self._junk_head), self._junk))
            self._junk, self._junk_head = 0, b""

    def _lines(self, lines: list[bytes], out: list[Framed]) -> None:
        """``_line`` for each line, with the common case inlined: a line inside a pretty-printed document whose
        style is known (this loop is what makes ``jq .`` output cheap to frame). Same result as ``_line``."""
        doc = self._doc
        limit = self.max_report_bytes
        slow = self._line
        for line in lines:
            if not doc or (len(doc) == 1 and doc[0] == b"{") or line.startswith((b"{", BOM)):
                slow(line, out)
                continue
            body = line.strip(_WS)
            if not body:
                continue
            if self._doc_len + len(body) > limit:
                slow(line, out)
                continue
            doc.append(body)
            self._doc_len += len(body)
            if b"{" in body or b"}" in body:
                self._depth += brace_depth(body)
                if self._depth <= 0:
                    self._emit(out, b"".join(doc))
                    doc.clear()
                    self._doc_len = 0
                    self._depth = 0

    def finish(self) -> list[Framed]:
        """The stream ended: flush a last line without newline; an unfinished document is reported truncated."""
        out: list[Framed] = []
        if self._partial:
            line = b"".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
            self._line(line, out)
        self._overlong = False
        self._abandon_doc(out)
        self._flush_junk(out)
        return out

    @property
    def deliverable(self) -> bool:
        """A buffered line ``flush_if_complete`` may deliver once the stream goes quiet (the reader then polls
        with a timeout)."""
        return bool(self._partial) and not self._overlong

    def flush_if_complete(self) -> list[Framed]:
        """The stream went quiet: deliver a buffered last line now if it completes a report.

        For producers that do not end a report with a newline (``printf %s``, ``jq -j``): without this their
        report would wait for the next one. A line that does not complete a report stays buffered.
        """
        if not self._partial or self._overlong:
            return []
        line = b"".join(self._partial)
        body = line.strip(_WS)
        if body.startswith(BOM):
            body = body[len(BOM) :].strip(_WS)
        if self._doc:
            complete = not line.startswith(b"{") and self._depth + brace_depth(body) <= 0
        else:
            complete = body.startswith(b"{") and body.endswith(b"}") and brace_depth(body) <= 0
        if not complete:
            return []
        self._partial.clear()
        self._partial_len = 0
        out: list[Framed] = []
        self._line(line, out)
        self._flush_junk(out)
        return out

    @property
    def pending(self) -> bool:
        """True while part of a document or line is buffered."""
        return bool(self._partial or self._doc)

    @property
    def collecting(self) -> bool:
        """True while a report is on its way in: lines of a document, or an unfinished line that starts with
        ``{`` (the head of a one-line report bigger than a read: a trn2 report is ~110 KB)."""
        if self._doc:
            return True
        if not self._partial or self._overlong:
            return False
        head = self._partial[0][:64].lstrip(_WS)
        return head.startswith(b"{") or head.startswith(BOM + b"{")

    # -- lines ---------------------------------------------------------------------------------------------

    def _line(self, line: bytes, out: list[Framed]) -> None:
        if line.startswith(BOM):
            line = line[len(BOM) :]
        if self._doc:
            if len(self._doc) == 1 and self._doc[0] == b"{" and line.strip(_WS):
                # The second line tells the style: indented (jq) output puts only top-level braces at column 0;
                # unindented multi-line output (json.dumps(indent=0)) does not, so the rule is off for it.
                self._col0_rule = line[:1] in b" \t{"
            if line.startswith(b"{") and self._col0_rule:
                # A top-level brace at column 0: the document we were collecting was cut short.
                self._abandon_doc(out)
            else:
                self._continue_doc(line, out)
                return
        body = line.strip(_WS)
        if not body:
            return
        if not body.startswith(b"{") and body.endswith(b"}") and (j := after_log_prefix(body)) > 0:
            body = body[j:]  # a logger's prefix (a time, a host): the report after it, as any other
        if not body.startswith(b"{"):
            if not self._junk:
                self._junk_head = body[:SAMPLE_BYTES]
            self._junk += 1
            return
        if len(body) > self.max_report_bytes:
            self._emit(out, Skipped(TOO_LARGE, sample(body)))
            return
        if body.endswith(b"}") and len(body.replace(b"{", b"")) == len(body.replace(b"}", b"")):
            self._emit(out, body)  # fast path: one report per line
            return
        depth = brace_depth(body)
        if depth <= 0:
            self._emit(out, body)  # balanced once braces inside strings are left out
            return
        self._doc.append(body)
        self._doc_len = len(body)
        self._depth = depth
        self._col0_rule = True

    def _continue_doc(self, line: bytes, out: list[Framed]) -> None:
        body = line.strip(_WS)
        if not body:
            return
        self._doc.append(body)
        self._doc_len += len(body)
        if b"{" not in body and b"}" not in body and self._doc_len <= self.max_report_bytes:
            return  # most lines of a pretty-printed report: depth unchanged, not done
        if self._doc_len > self.max_report_bytes:
            first = self._doc[0]
            self._doc.clear()
            self._doc_len = 0
            self._depth = 0
            self._emit(out, Skipped(TOO_LARGE, sample(first)))
            return
        self._depth += brace_depth(body)
        if self._depth <= 0:
            self._emit(out, b"".join(self._doc))
            self._doc.clear()
            self._doc_len = 0
            self._depth = 0

    def _abandon_doc(self, out: list[Framed]) -> None:
        if self._doc:
            self._emit(out, Skipped(TRUNCATED, sample(b"".join(self._doc[:4]))))
            self._doc.clear()
            self._doc_len = 0
            self._depth = 0

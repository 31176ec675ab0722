"""Cell-level diffs: which cells of a line changed, so that only those are repainted.

Why: on a busy trn2 machine most dashboard lines change every second, but only a few cells in each (a digit,
the tip of a bar). ``changed_spans`` finds what changed between a panel line's old and new strips; ``paint``
(paint.py) hands the cells on, and the engine's writer (frame_writer.py) sends only them. Nothing here changes
Textual; with the engine off (``--render textual``) the same spans go to ``Widget.refresh``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate
from operator import ne

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.tui.render import light
from neuron_top.tui.render.light import pieces
from neuron_top.tui.render.paint import Spans, paint, regions

__all__ = ["SPAN_GAP", "LineDiff", "changed_lines", "changed_regions", "changed_spans"]

SPAN_GAP = 1
"""Changed cells closer than this are sent as one span. 1: none are joined here; the writer joins two spans
when re-sending the cells between them is cheaper than moving over them (``_bridged``), which it can tell
because it sees the characters and colours (a block character costs as much as a move; a colour change more).
Joining runs less than 4 cells apart here cost 4.6% more bytes on the trn2 demo."""


_NARROW_RANGES = ((0x20, 0x7E), (0xA0, 0xAC), (0xAE, 0x2FF), (0x370, 0x482), (0x2026, 0x2026), (0x2500, 0x25FC),
                  (0x2800, 0x28FF))
"""Characters one cell wide (Rich's own fast-path set, plus the ellipsis): every character a panel draws,
except what comes from the data."""
_NOT_NARROW = re.compile("[^" + "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _NARROW_RANGES) + "]")
_ONES = b"\x01" * 1024


def _ones(n: int) -> bytes:
    return _ONES[:n] if n <= len(_ONES) else b"\x01" * n


@lru_cache(maxsize=8)
def _runs(gap: int) -> re.Pattern[bytes]:
    """Runs of non-zero bytes in a mask, with gaps of fewer than ``gap`` zeros inside them."""
    return re.compile(rb"[^\x00](?:\x00{0,%d}[^\x00])*" % max(gap - 1, 0))


def _differ(ta: str, tb: str) -> bytearray:
    """A mask of the characters where two strings differ (non-zero) over the shorter one's length.

    Why not ``bytearray(map(ne, ta, tb))``: that makes a one-character string for every block character of both
    lines (only Latin-1 ones are cached), ~40% of finding a line's changed cells. Here the two texts are
    compared as numbers, in C: the UTF-16 code units XORed, then the two bytes of each unit ORed together. A
    character outside the BMP (two units) falls back to ``map``."""
    n = len(ta) if len(ta) < len(tb) else len(tb)
    ea, eb = ta[:n].encode("utf-16-le"), tb[:n].encode("utf-16-le")
    if len(ea) != 2 * n or len(eb) != 2 * n:
        return bytearray(map(ne, ta, tb))
    xor = (int.from_bytes(ea, "little") ^ int.from_bytes(eb, "little")).to_bytes(2 * n, "little")
    return bytearray((int.from_bytes(xor[0::2], "little") | int.from_bytes(xor[1::2], "little")).to_bytes(n, "little"))


def _measure(strip: Strip, text: str) -> int:
    """``strip.cell_length`` (``text`` is its text): the strip's own when it knows it, else ``len(text)`` when
    every character is known to be one cell wide (a regex search in C). Textual measures a fresh 200-column
    strip segment by segment, ~10x slower, and every new line of every update needs it (diff, crop, paint); the
    result is kept in the strip where Textual keeps its own. With the engine off: ``strip.cell_length``."""
    if not light.engine_strips():
        return strip.cell_length
    known = strip._cell_length
    if known is not None:
        return known
    if _NOT_NARROW.search(text) is not None:
        return strip.cell_length
    strip._cell_length = len(text)
    return len(text)


def changed_spans(a: Strip, b: Strip, gap: int = SPAN_GAP) -> list[tuple[int, int]]:
    """Column ranges ``[x1, x2)`` where two strips of one line draw different cells (text or style); ranges
    closer than ``gap`` merge. A line holding wide characters (a CJK tag) is reported as changed whole.

    It runs on every changed line of every update, so the per-cell work is done in C (``map`` over the texts,
    a regex over a 0/1 mask); styles are compared per run of segments."""
    texts_a, ta, styles_a = pieces(a)
    texts_b, tb, styles_b = pieces(b)
    wa, wb = _measure(a, ta), _measure(b, tb)
    if len(ta) != wa or len(tb) != wb:
        return [(0, max(wa, wb))]
    # One mask of the line (changed characters, in C), with the cells whose style changed set in it too; then one
    # regex over it finds the runs, already sorted and merged across gaps shorter than ``gap``.
    mask = _differ(ta, tb)
    if wa != wb:
        mask += _ones(abs(wa - wb))
    if styles_a == styles_b:
        # Same styles in the same order (the common case: a bar's fill moved): only cells between two
        # boundaries that moved change style.
        for x, y in zip(accumulate(map(len, texts_a)), accumulate(map(len, texts_b)), strict=False):
            if x != y:
                lo, hi = (x, y) if x < y else (y, x)
                mask[lo:hi] = _ones(hi - lo)
    else:
        for lo, hi in _style_changes(texts_a, styles_a, texts_b, styles_b):
            mask[lo:hi] = _ones(hi - lo)
    return [m.span() for m in _runs(gap).finditer(mask)]


def _style_changes(texts_a: list[str], styles_a: list[Style | None], texts_b: list[str],
                   styles_b: list[Style | None]) -> list[tuple[int, int]]:
    """Pieces drawn in a different style, walking both lists of runs in step (their ends found in C first)."""
    ends_a, ends_b = list(accumulate(map(len, texts_a))), list(accumulate(map(len, texts_b)))
    na, nb = len(ends_a), len(ends_b)
    marks = []
    ia = ib = x = 0
    while ia < na and ib < nb:
        ea, eb = ends_a[ia], ends_b[ib]
        end = ea if ea < eb else eb
        if end > x:  # (an empty segment ends where it starts: no piece)
            sta, stb = styles_a[ia], styles_b[ib]
            if sta is not stb and sta != stb:
                marks.append((x, end))
            x = end
        if ea == end:
            ia += 1
        if eb == end:
            ib += 1
    return marks


def changed_lines(before: Sequence[Strip], after: Sequence[Strip]) -> Spans:
    """The cells to repaint when ``before`` (on screen) becomes ``after`` (same line count), line by line:
    ``(y, [(x1, x2), ...])``."""
    return [(y, changed_spans(a, b)) for y, (a, b) in enumerate(zip(before, after, strict=True))
            if a is not b and a != b]


def changed_regions(before: Sequence[Strip], after: Sequence[Strip]) -> list[Region]:
    """``changed_lines`` as widget-relative regions (the form ``Widget.refresh`` takes)."""
    return regions(changed_lines(before, after))


class LineDiff(Widget):
    """A widget drawn line by line whose lines are cheap to rebuild: when its data changes, only the cells that
    differ from what is on screen are repainted. Subclasses implement ``draw_line`` and declare their reactives
    with ``repaint=False``, calling ``repaint_changed`` from a watcher."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._drawn: dict[int, Strip] = {}

    def draw_line(self, y: int) -> Strip:
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        strip = self._drawn[y] = self.draw_line(y)
        return strip

    def repaint_changed(self) -> None:
        if not self.is_mounted or not self._drawn:
            self.refresh()
            return
        ys = sorted(self._drawn)
        before = [self._drawn[y] for y in ys]
        after = [self.draw_line(y) for y in ys]
        self._drawn = dict(zip(ys, after, strict=True))
        paint(self, [(ys[y], xs) for y, xs in changed_lines(before, after)])

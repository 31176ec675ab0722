"""The engine's terminal writer: a frame as the fewest bytes that leave the terminal showing it.

Why: on a busy trn2 machine most dashboard lines change every second, but only a few cells in each (a digit,
the tip of a bar). Textual already tracks partial regions, but its writer crops a span on the right only,
re-sending every line from the widget's left edge, with a reset after every segment; and after any layout change
it repaints every cell. ``write_chops`` sends only the spans, ``write_layout`` only the cells that differ from
what the terminal shows (``Shadow``). ``RenderEngine`` (engine.py) calls them for one app's frames; nothing here
replaces anything of Textual's.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate, chain, compress, pairwise, repeat
from operator import is_not, ne, or_

from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from textual.strip import Strip

from neuron_top.tui.render.light import characters, pieces
from neuron_top.tui.render.light import segment_style as _style
from neuron_top.tui.render.light import segment_text as _text
from neuron_top.tui.render.paint import ExactChops, WidgetChops
from neuron_top.tui.render.private import ChopsUpdate, LayoutUpdate
from neuron_top.tui.render.spans import SPAN_GAP, _ones, _runs

__all__ = ["Shadow", "narrowed", "write_chops", "write_layout"]


def _move_cost(n: int) -> int:
    """Bytes of ``CSI n C``, the move right by ``n`` cells."""
    return 3 if n == 1 else 3 + len(str(n))


_BRIDGEABLE = 4
"""Gaps narrower than this may be cheaper to re-send than to move over (``_bridged``): re-sending n cells costs at
least n bytes, a move ``_move_cost(n)``, and 4 >= _move_cost(4)."""


def _bridged(strip: Strip, x: int, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` (screen columns of ``strip``, drawn from column ``x``) with a gap between two of them joined
    when re-sending the gap's characters costs fewer bytes than moving over them: the gap lies in one segment
    drawn in the style the cell before it has (no colour change either way). That is a gap of one or two
    ASCII cells; a block character (3 bytes) never beats the 3-byte move. curses weighs moves the same way."""
    segments = list(strip)
    starts = [0, *accumulate(map(len, pieces(strip)[0]))]
    out = [ranges[0]]
    for lo, hi in ranges[1:]:
        g1, g2 = out[-1][1] - x, lo - x
        if g2 - g1 >= _BRIDGEABLE:  # never cheaper to re-send (most gaps): no need to look at the cells
            out.append((lo, hi))
            continue
        i = bisect_right(starts, g1) - 1  # the segment holding the gap's first cell
        if g1 > 0 and i + 1 < len(starts) and g2 <= starts[i + 1]:  # a gap past the strip's end: not bridged
            text, style, _ = segments[i]
            before = style if g1 > starts[i] else segments[i - 1].style
            if (before is style or before == style) and \
                    len(text[g1 - starts[i]:g2 - starts[i]].encode()) < _move_cost(g2 - g1):
                out[-1] = (out[-1][0], hi)
                continue
        out.append((lo, hi))
    return out


def _parts(sgr: str) -> tuple[tuple[str, ...], str, str]:
    """SGR parameters as (attributes, foreground, background): ``1;38;2;1;2;3;48;5;7`` ->
    (("1",), "38;2;1;2;3", "48;5;7")."""
    attrs: list[str] = []
    fg = bg = ""
    codes = sgr.split(";") if sgr else []
    i = 0
    while i < len(codes):
        c = codes[i]
        if c in ("38", "48"):
            n = 3 if i + 1 < len(codes) and codes[i + 1] == "5" else 5
            part = ";".join(codes[i:i + n])
            i += n
            if c == "38":
                fg = part
            else:
                bg = part
            continue
        if len(c) == 2 and c[0] in "39" and c[1] != "8":
            fg = c
        elif (len(c) == 2 and c[0] == "4" and c[1] != "8") or (len(c) == 3 and c.startswith("10")):
            bg = c
        else:
            attrs.append(c)
        i += 1
    return tuple(attrs), fg, bg


@lru_cache(maxsize=4096)  # the writer asks on every style change, about the few dozen SGR strings a theme makes
def _sgr_change(state: str, ansi: str) -> str:
    """The SGR parameters that turn ``state`` into ``ansi``: only the colour that changed when the attributes
    are the same (``38;2;..`` when only the foreground changes on the same background, the usual case in a
    panel whose styles all carry its background), else a reset and all of ``ansi``."""
    if not state:
        return ansi
    a_attrs, a_fg, a_bg = _parts(state)
    b_attrs, b_fg, b_bg = _parts(ansi)
    if a_attrs != b_attrs:
        return "0;" + ansi
    out = []
    if a_fg != b_fg:
        out.append(b_fg or "39")
    if a_bg != b_bg:
        out.append(b_bg or "49")
    return ";".join(out)


def write_chops(self: ChopsUpdate, console: Console, shadow: Shadow | None = None) -> str:
    """What ``ChopsUpdate.render_segments`` (Textual 8.2) sends, with three savings, each a few bytes per changed
    span (``shadow``: the terminal's cells, told what was sent; None when not followed):

    * each span is cropped on the left as well as the right (Textual re-sends from the widget's left edge);
    * the colour state is tracked across segments and spans (cursor moves keep it), so a style is sent only
      when it changes (only the colour that changed, without a reset, when the attributes stay) and there is one
      reset at the end instead of one after every segment;
    * no line feed between spans, and a span to the right on the same row is reached with a short relative
      move (``CSI n C``, 3-5 bytes) instead of an absolute one (``CSI row;col H``, 6-9 bytes). The cursor is
      never assumed after the last column (terminals differ in how they hold it there).

    The update's spans must be sorted (row, then column) and disjoint, as Textual's are: a row's ranges are
    walked once, left to right, and the gap between two is measured from the end of the first (``paint.merged``
    keeps the panels' own so).
    """
    out: list[str] = []
    append = out.append
    color_system = console._color_system or ColorSystem.TRUECOLOR
    state = ""  # the SGR parameters in force; "" after a reset
    change = _sgr_change
    cursor: tuple[int, int] | None = None  # (x, y) of the terminal's cursor when known
    widget_lines = isinstance(self, WidgetChops)

    def move(x: int, y: int) -> None:
        if cursor is not None and cursor[1] == y and x >= cursor[0]:
            n = x - cursor[0]
            if n:
                append(f"\x1b[{n}C" if n > 1 else "\x1b[C")
        else:
            append(f"\x1b[{y + 1};{x + 1}H")  # what Control.move_to(x, y) sends, without building a Control

    def emit_segment(text: str, style: Style | None) -> None:
        nonlocal state
        if style is None:
            ansi = ""
        else:
            if style._link:  # rare: Textual's own rendering, which resets after itself
                if state:
                    append("\x1b[0m")
                    state = ""
                append(Strip.render_style(style, text, color_system))
                return
            ansi = style._ansi if style._ansi is not None else Strip.render_ansi(style, color_system)
        if ansi != state:
            if not ansi:
                append("\x1b[0m")
            else:  # only what changed (no reset when only a colour does)
                delta = change(state, ansi)
                if delta:  # the same style written another way: nothing to send
                    append(f"\x1b[{delta}m")
            state = ansi
        append(text)

    def emit(strip: Strip) -> None:
        for text, style, _ in strip:
            emit_segment(text, style)

    chops = self.chops
    chop_ends = self.chop_ends
    spans = self.spans
    i, count_spans = 0, len(spans)
    while i < count_spans:  # one row at a time: its spans, then each chop's segments walked once for them all
        y = spans[i][0]
        j = i
        while j < count_spans and spans[j][0] == y:
            j += 1
        row = spans[i:j]
        i = j
        ends = chop_ends[y]
        last = ends[-1]
        for end, (x, strip) in zip(ends, chops[y].items(), strict=False):
            if strip is None:
                continue
            ranges = [(x1 if x1 > x else x, x2 if x2 < end else end) for _, x1, x2 in row if x1 < end and x2 > x]
            if not ranges:
                continue
            wide = strip.cell_length != characters(strip)
            if shadow is not None:
                if wide:
                    shadow.forget_row(y)  # the shadow counts characters as cells: this row is not followed
                else:
                    shadow.wrote(y, x, end, strip, ranges, widget_lines)
            if len(ranges) > 1 and not wide and any(b[0] - a[1] < _BRIDGEABLE for a, b in pairwise(ranges)):
                ranges = _bridged(strip, x, ranges)
            if len(ranges) == 1 and ranges[0] == (x, end):
                move(x, y)
                emit(strip)
                cursor = (end, y) if end < last else None
                continue
            if wide:  # crop by cells
                for lo, hi in ranges:
                    move(lo, y)
                    emit(strip.crop(lo - x, hi - x))
                    cursor = (hi, y) if hi < last else None
                continue
            # The cells [lo, hi) of each range, in one walk over the chop's segments.
            k, n = 0, len(ranges)
            lo, hi = ranges[0]
            move(lo, y)
            pos = x
            for text, style, _ in strip:
                seg_end = pos + len(text)
                while seg_end > lo:  # this segment reaches into range k
                    a, b = lo if lo > pos else pos, hi if hi < seg_end else seg_end  # (no max/min calls: per piece)
                    emit_segment(text if a == pos and b == seg_end else text[a - pos:b - pos], style)
                    if seg_end < hi:
                        break  # range k goes on in the next segment
                    cursor = (hi, y) if hi < last else None
                    k += 1
                    if k == n:
                        break
                    lo, hi = ranges[k]
                    move(lo, y)
                if k == n:
                    break
                pos = seg_end
    if state:
        append("\x1b[0m")
    return "".join(out)


class Shadow:
    """What the terminal shows, cell by cell (a character and a style per cell), so that a full repaint sends only
    the cells that differ from it, as curses has always done.

    Why: after any layout change (an app starting or stopping, a drill-down, Esc back, a theme) Textual repaints
    every cell of the screen, each segment with its own colour codes and a reset: ~60 KB at 200x60 on the trn2
    demo, as much as several seconds of ordinary updates. The writer records every cell it sends (a slice
    assignment per segment); a row it cannot follow (wide characters) is forgotten and sent whole next time.
    Anything else that may change the terminal (a resize, resuming after Ctrl+Z) calls ``forget``.
    """

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.chars: list[list[str] | None] = [None] * height
        """Per row, its characters; None while the row is not known (nothing sent yet, or forgotten)."""
        self.styles: list[list[Style | None]] = [[] for _ in range(height)]
        self._written: dict[int, list[_Write]] = {}
        """Per row, what was written to it and is not in ``chars`` yet, oldest first."""

    def row(self, y: int) -> list[str] | None:
        if y >= self.height:
            return None
        if y in self._written:
            self._take(y)
        return self.chars[y]

    def forget_row(self, y: int) -> None:
        if y < self.height:
            self.chars[y] = None
            self._written.pop(y, None)

    def wrote(self, y: int, x: int, end: int, strip: Strip, ranges: list[tuple[int, int]],
              widget_line: bool) -> None:
        """The cells ``ranges`` (screen columns) of ``strip``, drawn from ``x`` to ``end`` on row ``y``, were sent.

        Kept as they are and taken into ``chars`` only when the row is next read (a full repaint, a Textual
        update): on the dashboard that is rare, and following every segment of every update cell by cell was
        ~30% of the writer's time. A widget's line written again at the same place (``WidgetChops``, one after
        the other on the row) replaces the one before, its cells added to its ranges: at every cell the earlier
        one wrote, the newer line holds what the terminal shows (see ``WidgetChops``). So a row holds an entry
        per widget on it, and a few more, whatever the time between two reads."""
        if y >= self.height or self.chars[y] is None:
            return  # a row not followed stays so until a full repaint makes it known
        if end > self.width:  # past the edge the shadow had (a resize under way): not followed
            self.forget_row(y)
            return
        writes = self._written.get(y)
        if writes is None:
            writes = self._written[y] = []
        elif widget_line:
            for w in reversed(writes):  # the same line's last write, unless something was drawn over it since
                if w.x == x and w.end == end and w.widget_line:
                    w.strip = strip
                    w.cells.update(ranges)
                    if len(w.cells) > _KEEP_RANGES:
                        w.cells = set(_union(w.cells, x, end))
                    return
                if w.x < end and w.end > x:
                    break
        writes.append(_Write(x, end, strip, set(ranges), widget_line))

    def _take(self, y: int) -> None:
        """Bring row ``y`` up to date with what was written to it since it was last read."""
        writes = self._written.pop(y)
        row, styles = self.chars[y], self.styles[y]
        if row is None:
            return
        for w in writes:
            segments = list(w.strip)
            starts = list(accumulate(map(len, pieces(w.strip)[0]), initial=w.x))  # and the end
            for lo, hi in _union(w.cells, w.x, w.end):
                i = bisect_right(starts, lo) - 1
                while lo < hi and i < len(segments):
                    text, style, _ = segments[i]
                    seg_end = starts[i + 1]
                    b = hi if hi < seg_end else seg_end
                    row[lo:b] = text[lo - starts[i]:b - starts[i]]
                    styles[lo:b] = repeat(style, b - lo)
                    lo, i = b, i + 1

    def changed(self, y: int, x: int, strip: Strip, gap: int = SPAN_GAP) -> list[tuple[int, int]]:
        """Column ranges (relative to ``x``) where ``strip``, drawn at (``x``, ``y``), differs from the terminal;
        the whole strip when that row is not known. The row becomes known (the caller sends what differs)."""
        texts = list(map(_text, strip))
        text = "".join(texts)
        width = strip.cell_length
        row = self.row(y)
        if len(text) != width or x + width > self.width:  # wide characters: not followed cell by cell
            self.chars[y] = None
            return [(0, width)] if width else []
        new_styles = list(chain.from_iterable(map(repeat, map(_style, strip), map(len, texts))))
        if row is None:
            if x or width != self.width:  # part of a row: the rest stays unknown
                return [(0, width)] if width else []
            self.chars[y] = row = [" "] * self.width
            self.styles[y] = [None] * self.width
            row[x:x + width] = text
            self.styles[y][x:x + width] = new_styles
            return [(0, width)] if width else []
        old_styles = self.styles[y][x:x + width]
        # Styles by identity first (in C): ``!=`` on two Styles is a Python call, and a full repaint compares
        # ~12,000 cells, nearly all holding the very style object the shadow holds. Equal copies are cleared after.
        other = bytearray(map(is_not, old_styles, new_styles))
        if any(other):
            for i in compress(range(width), other):
                if old_styles[i] == new_styles[i]:
                    other[i] = 0
        mask = bytes(map(or_, map(ne, row[x:x + width], text), other))
        return [m.span() for m in _runs(gap).finditer(mask)]


class _Write:
    """A chop the writer sent and the shadow has not taken in yet: ``strip`` drawn at ``x`` up to ``end``, the
    column ranges of it that were sent (a set that may overlap: a busy line rewrites the same few), and whether
    it is a widget's own line (``WidgetChops``), which a newer one at the same place may replace."""

    __slots__ = ("cells", "end", "strip", "widget_line", "x")

    def __init__(self, x: int, end: int, strip: Strip, cells: set[tuple[int, int]], widget_line: bool) -> None:
        self.x, self.end, self.strip, self.cells, self.widget_line = x, end, strip, cells, widget_line


_KEEP_RANGES = 256
"""A widget line's written ranges are merged into disjoint runs once there are this many different ones."""


def _union(ranges: Iterable[tuple[int, int]], x: int, end: int) -> list[tuple[int, int]]:
    """``ranges`` (columns within ``[x, end)``, in any order, overlapping) as sorted disjoint runs."""
    mask = bytearray(end - x)
    for lo, hi in ranges:
        mask[lo - x:hi - x] = _ones(hi - lo)
    return [(m.start() + x, m.end() + x) for m in _runs(1).finditer(mask)]


def write_layout(self: LayoutUpdate, console: Console, shadow: Shadow) -> str:
    """``LayoutUpdate.render_segments`` (a full repaint) as the cells that differ from what the terminal shows
    (``shadow``, as big as the update's region reaches), sent by the partial-update writer."""
    region = self.region
    chops: dict[int, dict[int, Strip]] = {}
    ends: dict[int, list[int]] = {}
    spans: list[tuple[int, int, int]] = []
    x = region.x
    for y, line in enumerate(self.strips, region.y):
        strip = Strip.join(line)
        chops[y] = {x: strip}
        ends[y] = [x + strip.cell_length]
        spans += [(y, x + x1, x + x2) for x1, x2 in shadow.changed(y, x, strip)]
    if not spans:
        return ""
    # by screen row, as ChopsUpdate reads them (chops[y], ends[y]): a dict from the region's first row serves
    return write_chops(ExactChops(chops, spans, ends), console, shadow)  # type: ignore[arg-type]


def narrowed(update: ChopsUpdate, shadow: Shadow) -> ChopsUpdate:
    """``update`` (Textual's: whole regions of widgets that moved or were refreshed) with its spans narrowed to
    the cells that differ from the terminal. After a panel's height changes, Textual repaints everything below
    it: ~60 KB at 200x60, of which only a few hundred cells really change."""
    spans: list[tuple[int, int, int]] = []
    rows: dict[int, list[tuple[int, int, int]]] = {}
    for span in update.spans:
        rows.setdefault(span[0], []).append(span)
    for y, row in rows.items():
        if shadow.row(y) is None:
            spans += row
            continue
        differ: list[tuple[int, int]] = []
        for (x, strip), end in zip(update.chops[y].items(), update.chop_ends[y], strict=False):
            if strip is not None and any(x1 < end and x2 > x for _, x1, x2 in row):
                differ += [(x + a, x + b) for a, b in shadow.changed(y, x, strip)]
        spans += [(y, lo, hi) for _, x1, x2 in row for a, b in differ
                  if (lo := max(a, x1)) < (hi := min(b, x2))]
    return ChopsUpdate(update.chops, spans, update.chop_ends)

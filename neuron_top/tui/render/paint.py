"""Direct repaints: a widget's changed cells go to the terminal without a trip through Textual's compositor.

Why: on the trn2 demo every report changes ~300 spans on ~60 lines. Sent through ``Widget.refresh``, each update
costs a chain of messages, then the compositor re-renders every dirty line through the widget's StylesCache
(borders, padding, tint, line filters), cuts it at every widget edge on the row and hands the pieces to the
writer: about a third of an update's CPU. A widget without border, padding, outline, tint or opacity, that
nothing covers, draws exactly its own ``render_line`` output (after the app's line filters). Those lines can be
handed straight to the writer (``spans.py``), once per update for all panels together.

Anything unusual falls back to ``Widget.refresh``: a toast or another widget over the panel, a screen that is not
current, a batch in progress, a line that is not exactly as wide as the widget. Either way the widget's
StylesCache is told its lines changed, so a later full repaint (a resize, a toast going away) draws the new lines.
An app without the render engine (``--render textual``) gets every change as ``Widget.refresh`` of its cells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from weakref import WeakKeyDictionary

from rich.segment import Segment
from rich.style import Style
from textual.app import App
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.tui.render.light import segment_style as _style
from neuron_top.tui.render.light import styles
from neuron_top.tui.render.private import ChopsUpdate

__all__ = ["HIDDEN", "ExactChops", "QuickTruecolor", "Spans", "WidgetChops", "flush", "forget", "merged", "paint",
           "placement", "quicken_filters", "regions"]

Line = Callable[[int], Strip]
"""What a widget draws on one of its lines (``render_line``, or a cheaper equivalent the widget provides)."""

class ExactChops(ChopsUpdate):
    """A partial update whose spans hold only cells that differ from what the terminal shows (the panels' own
    diff found them). Textual's own partial updates mark whole regions; the writer narrows those first."""


class WidgetChops(ExactChops):
    """``ExactChops`` from ``flush``: each chop is one widget's whole line, and its spans are every cell where that
    line differs from the widget's line before (the one the previous update sent, ``Panel`` diffs against it).
    So at the cells this chop leaves alone, it holds what the terminal shows wherever an earlier one of the same
    widget line was written: the writer's shadow keeps the newest chop, not every cell of each (``Shadow.wrote``)."""


Spans = list[tuple[int, list[tuple[int, int]]]]
"""Changed cells of a widget, line by line: ``(y, [(x1, x2), ...])``, widget-relative, columns ``[x1, x2)``; one
entry per line, its ranges sorted and disjoint (``changed_lines`` makes them so; ``merged`` keeps them so)."""

_pending: WeakKeyDictionary[App, dict[Widget, tuple[Spans, Line]]] = WeakKeyDictionary()
"""Per app: the widgets with changed lines since the last flush, their changed cells, their lines."""


def paint(widget: Widget, spans: Spans, line: Line | None = None) -> None:
    """Repaint the changed cells ``spans`` (found line by line, ``changed_lines``) of ``widget``: directly when
    that is safe, through ``Widget.refresh`` otherwise. All calls made while one message is handled go out as one
    write. ``line(y)`` must return what ``render_line(y)`` would (default: ``render_line``). Why lines of spans and
    not Regions: an update changes ~300 spans, and making, storing and taking apart a Region for each was ~5% of
    it."""
    if not spans:
        return
    if not widget.is_mounted:
        widget.refresh(*regions(spans))
        return
    app = widget.app
    if getattr(app, "render_engine", None) is None:  # Textual's own paths only (or not our app)
        widget.refresh(*regions(spans))
        return
    pending = _pending.get(app)
    if pending is None:
        pending = _pending[app] = {}
        app.call_next(flush, app)
    known = pending.get(widget)
    if known is None:
        pending[widget] = (list(spans), line or widget.render_line)
    else:  # painted again before the flush (reports arriving together on a busy machine)
        pending[widget] = (merged(known[0], spans), known[1])
    # Whichever way the cells reach the screen, the lines the StylesCache holds for them are stale now (it
    # keeps whole lines: one region per line says as much as one per span, and a region one cell wide as much as
    # one the widget's width, which ``widget.size`` finds by walking up to the screen: ~6 us a panel a report).
    widget._styles_cache.set_dirty(*[Region(0, y, 1, 1) for y, _ in spans])


def forget(widget: Widget) -> None:
    """Drop what ``paint`` collected for ``widget`` and not yet flushed: its lines changed number, so its spans
    name lines it may no longer have, and the layout it asked for repaints all of it anyway."""
    if widget.is_attached and (pending := _pending.get(widget.app)) is not None:
        pending.pop(widget, None)


def merged(a: Spans, b: Spans) -> Spans:
    """Two ``Spans`` of one widget as one, in the form the writer takes: one entry per line, in line order, its
    ranges sorted and disjoint.

    Why: two updates painted before one flush repaint overlapping cells (a number that changed twice). Appended
    as they came, a line's ranges overlapped and went backwards, and the writer, which walks a line's ranges
    left to right once (as Textual's own spans are), sent some cells twice and others never: joining the gap
    between two ranges (``_bridged``) cut the first one short where the second began inside it. The shadow and
    the widget counted those cells as sent; on a busy machine the fleet's summary line read ``p10 51.7rs -/s``
    until Ctrl+L."""
    rows: dict[int, list[tuple[int, int]]] = {}
    for y, xs in chain(a, b):
        rows.setdefault(y, []).extend(xs)
    out: Spans = []
    for y in sorted(rows):
        xs = sorted(rows[y])
        runs = [xs[0]]
        for lo, hi in xs[1:]:
            last_lo, last_hi = runs[-1]
            if lo <= last_hi:
                if hi > last_hi:
                    runs[-1] = (last_lo, hi)
            else:
                runs.append((lo, hi))
        out.append((y, runs))
    return out


def regions(spans: Spans) -> list[Region]:
    """``spans`` as widget-relative Regions, the form ``Widget.refresh`` takes."""
    return [Region(x1, y, x2 - x1, 1) for y, xs in spans for x1, x2 in xs]


def flush(app: App) -> None:
    """Write everything ``paint`` collected since the last flush as one partial update."""
    pending = _pending.pop(app, None)
    if not pending:
        return
    direct = (app._running and not app._closed and not app._batch_count and not app.is_inline
              and app._driver is not None)
    chops: dict[int, dict[int, Strip]] = {}
    ends: dict[int, list[int]] = {}
    spans: list[tuple[int, int, int]] = []
    for widget, (changed, line) in pending.items():
        if not widget.is_mounted:
            continue
        placed = placement(widget) if direct else None
        if placed is None:
            widget.refresh(*regions(changed))
            continue
        if placed is HIDDEN:
            continue  # scrolled out of view: the StylesCache already knows, and Textual paints it when shown
        region, visible = placed
        lines = _lines(widget, line, region, visible, changed)
        if lines is None:
            widget.refresh(*regions(changed))
            continue
        rows, widget_spans = lines
        for y, strip in rows.items():
            chops.setdefault(y, {})[region.x] = strip
            ends.setdefault(y, []).append(region.right)
        spans += widget_spans
    if not spans:
        return
    spans.sort()
    for y, row in chops.items():
        if len(row) > 1:  # two panels side by side: the writer walks a row's chops left to right
            chops[y] = dict(sorted(row.items()))
            ends[y].sort()
    app._display(app.screen, WidgetChops(chops, spans, ends))  # type: ignore[arg-type]


HIDDEN = (Region(), Region())


def placement(widget: Widget) -> tuple[Region, Region] | None:
    """Where ``widget`` is on screen and which part of it shows, ``HIDDEN`` when none does, or None when its
    cells cannot be written directly (styles that change its lines, something drawn over it, not the current
    screen)."""
    screen = widget.screen
    if not screen.is_current or screen is not widget.app.screen:
        return None
    return _known(widget, screen._compositor.visible_widgets).placed


class _Known:
    """What ``placement`` and the line filters need of a widget, for one map of visible widgets and one theme."""

    __slots__ = ("background", "placed", "theme", "visible_widgets")

    def __init__(self, widget: Widget, visible_widgets: dict[Widget, tuple[Region, Region]]) -> None:
        self.visible_widgets = visible_widgets
        self.theme = widget.app.theme
        self.placed = _place(widget, visible_widgets) if _plain(widget) else None
        self.background: Color | None = None
        """``widget.background_colors[1]``, found when first asked (it walks the widget's ancestors)."""


def _known(widget: Widget, visible_widgets: dict[Widget, tuple[Region, Region]]) -> _Known:
    known = _placed.get(widget)
    if known is None or known.visible_widgets is not visible_widgets or known.theme != widget.app.theme:
        known = _placed[widget] = _Known(widget, visible_widgets)
    return known


def _background(widget: Widget) -> Color:
    """The background the line filters see behind ``widget``, kept with its placement (``flush`` has just
    placed it)."""
    known = _placed.get(widget)
    if known is None:
        return widget.background_colors[1]
    if known.background is None:
        known.background = widget.background_colors[1]
    return known.background


_placed: WeakKeyDictionary[Widget, _Known] = WeakKeyDictionary()
"""Per widget: the compositor's map of visible widgets it was placed against, where, whether its styles let
its lines through unchanged (``_plain``) and its background. Textual makes a new map whenever anything moves,
appears, disappears or scrolls, and a theme changes the styles; until then the widgets above a panel stay where
they were. Walking them, reading five style rules and the background of every ancestor, for every panel on
every report, was ~20 us a panel."""


def _place(widget: Widget, visible_widgets: dict[Widget, tuple[Region, Region]]) -> tuple[Region, Region] | None:
    geometry = visible_widgets.get(widget)
    if geometry is None:
        return HIDDEN
    region, clip = geometry
    visible = region.intersection(clip)
    if not visible:
        return HIDDEN
    for other, (other_region, other_clip) in visible_widgets.items():  # topmost first
        if other is widget:
            return region, visible
        if other_region.intersection(other_clip).overlaps(visible):
            return None
    return None


def _plain(widget: Widget) -> bool:
    """True when Textual draws the widget's lines as they are: no border, padding, outline, tint, hatch or
    opacity (StylesCache would change them), nothing that replaces them (BLANK)."""
    styles = widget.styles
    return (not getattr(widget, "BLANK", False) and not any(styles.padding) and not any(kind for kind, _ in styles.border)
            and not any(kind for kind, _ in styles.outline) and not styles.tint.a and styles.text_opacity == 1
            and not (styles.has_rule("hatch") and styles.hatch != "none") and widget.opacity == 1)


def _lines(widget: Widget, line: Line, region: Region, visible: Region,
           changed: Spans) -> tuple[dict[int, Strip], list[tuple[int, int, int]]] | None:
    """The screen lines to send and the screen spans within them; None if a line is not exactly the widget's
    width (StylesCache would pad or crop it; let Textual do that)."""
    filters = widget.app.get_line_filters()
    background = _background(widget) if filters else None
    width = region.width
    x0, y0 = region.x, region.y
    top, bottom, left, right = visible.y, visible.bottom, visible.x, visible.right
    rows: dict[int, Strip] = {}
    spans: list[tuple[int, int, int]] = []
    for wy, xs in changed:
        y = y0 + wy
        if not top <= y < bottom:
            continue
        row = [(y, x1, x2) for a, b in xs
               if (x1 := x0 + a if x0 + a > left else left) < (x2 := x0 + b if x0 + b < right else right)]
        if not row:
            continue
        if y not in rows:
            strip = line(wy)
            if strip.cell_length != width:
                return None
            rows[y] = _filtered(strip, filters, background) if filters else strip
        spans += row
    return rows, spans


_kept: dict[int, tuple[LineFilter, dict[Color, dict[int, Style | None]]]] = {}
"""Per filter (by id, the filter itself kept beside it) and background: the style objects known to come out of
ANSI-to-truecolor unchanged, by id (each kept beside its id, so the id stays its own). A plain dict: a
WeakKeyDictionary makes a weak reference on every lookup, and this runs for every line Textual or a panel draws."""


def _unchanged(line_filter: ANSIToTruecolor, segments: Iterable[Segment], background: Color,
               known: list[Style | None] | None = None) -> bool:
    """True when ANSI colours to truecolor changes nothing on these segments: each of their few distinct
    styles maps to itself (every style a theme gives is truecolor already). A line whose style objects are all
    known to map to themselves costs one set comparison of their ids, in C (hashing a Style is a Python call).
    ``known``: the segments' styles when known already (``light.styles``: those the diff kept)."""
    entry = _kept.get(id(line_filter))
    if entry is None or entry[0] is not line_filter:
        if len(_kept) >= 64:  # a new filter comes with each terminal theme change: bound the old ones
            _kept.clear()
        entry = _kept[id(line_filter)] = (line_filter, {})
    kept = entry[1].get(background)
    if kept is None:
        kept = entry[1][background] = {id(None): None}
    found = list(map(_style, segments)) if known is None else known
    if kept.keys() >= set(map(id, found)):
        return True
    under = background.rich_color
    convert = line_filter.truecolor_style
    # ``==`` as well as ``is``: the conversion is cached by equality, so an equal style made for another line
    # comes back as the first one seen
    if all(style is None or (out := convert(style, under)) is style or out == style for style in set(found)):
        if len(kept) > 4096:  # styles come from the theme; this only bounds the unexpected
            kept.clear()
            kept[id(None)] = None
        kept.update(zip(map(id, found), found, strict=True))
        return True
    return False


def _filtered(strip: Strip, filters: Sequence[LineFilter], background: Color | None) -> Strip:
    """``strip`` through the app's line filters, as the StylesCache applies them, skipping ANSI colours to
    truecolor where it changes nothing (instead of rebuilding every segment and the strip)."""
    for line_filter in filters:
        if isinstance(line_filter, ANSIToTruecolor) and background is not None \
                and _unchanged(line_filter, strip, background, styles(strip)):
            continue
        strip = strip.apply_filter(line_filter, background)  # type: ignore[arg-type]
    return strip


class QuickTruecolor(ANSIToTruecolor):
    """Textual's ANSI-to-truecolor line filter, returning a line's segments as they are when it would change
    none of them. Why: Textual passes every line it renders itself (a layout change, a drill-down, a toast going
    away) through this filter, which rebuilds each segment; on the dashboard's theme-coloured lines that was a
    quarter of the CPU of a layout change (py-spy, trn2 demo in tmux)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if _unchanged(self, segments, background):
            return segments
        return super().apply(segments, background)


def quicken_filters(filters: list[LineFilter]) -> None:
    """Swap Textual's ANSI-to-truecolor filter in an app's filter list for ``QuickTruecolor`` (same theme, same
    enabled state). Textual makes a new one when the terminal theme changes; call this again then."""
    if not callable(getattr(ANSIToTruecolor, "truecolor_style", None)):
        return  # a Textual whose filter has another shape (pyproject allows newer ones): keep its own
    for i, line_filter in enumerate(filters):
        theme = getattr(line_filter, "_terminal_theme", None)
        if type(line_filter) is ANSIToTruecolor and theme is not None:
            filters[i] = QuickTruecolor(theme, enabled=line_filter.enabled)

"""The base of every dashboard panel: many rows drawn as cached Strips by one widget.

Why: hundreds of small widgets (a ProgressBar per core) cost ~30x more CPU than one widget that draws its rows
with ``render_line``. A panel builds its strips once per (view, width, theme) and then only hands them out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from itertools import repeat
from operator import is_
from typing import Any, Generic, TypeVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.history import History
from neuron_top.tui.render.light import LightStrip, pieces, segment_text
from neuron_top.tui.render.paint import forget, paint
from neuron_top.tui.render.spans import changed_lines
from neuron_top.tui.widgets.fixedwidth import fit, num
from neuron_top.tui.widgets.sparkline import STEP
from neuron_top.view import View

BAR_EIGHTHS = " ▏▎▍▌▋▊▉█"
_NOT_MADE = object()
M = TypeVar("M")
C = TypeVar("C")
"""What a panel's ``build`` draws from a view (``Panel.content``): compared with ``==`` to skip a build."""
LOAD_BANDS = ("low", "mid", "high")
"""The load colours, by ``load_band``."""
SHRINK_AFTER = 60
"""Builds (reports) a panel stays at a lower height after an app stopped before it shrinks: longer than a batch
job's pause. While the same apps run it never shrinks."""


def settle_size(widget: Widget, parent: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``Widget._size_updated(*args, **kwargs)`` for a widget laid out by the layout under way, without asking for
    another (with the render engine on; Textual's, unchanged, with it off: ``--render textual``).

    Why: after a layout Textual hands every widget its new size with ``layout=True``, so a widget whose virtual
    size changed (a panel that grew by a row, and every container around it) asks for a second layout of the
    whole screen, which finds the same sizes: 8-13 ms more on each of the demo's start-up height changes. That
    request comes from the ``virtual_size`` reactive; a scrollbar that must appear or go asks for its own layout
    (``show_vertical_scrollbar`` and ``show_horizontal_scrollbar``), so nothing is lost. ``parent`` is
    ``super()`` of the calling ``widget``."""
    if getattr(widget.app, "render_engine", None) is None:
        return parent._size_updated(*args, **kwargs)  # type: ignore[no-any-return]
    size, virtual_size, container_size = args[:3]
    return parent._size_updated(size, virtual_size, container_size, layout=False)  # type: ignore[no-any-return]


def load_band(pct: float) -> int:
    """Which of ``LOAD_BANDS`` colours ``pct``: under 50, under 80, the rest."""
    return 0 if pct < 50 else 1 if pct < 80 else 2


def bar_fill(pct: float, width: int) -> tuple[int, int]:
    """The whole cells and the eighths of the next cell a bar ``width`` cells long fills at ``pct`` (clamped to
    0-100 by comparisons, not max/min calls: it runs for every core; NaN fills nothing)."""
    frac = ((pct if pct <= 100.0 else 100.0) if pct >= 0.0 else 0.0) / 100.0 * width
    full = int(frac)
    return full, int((frac - full) * 8)


PAUSED = "· PAUSED"
"""What a panel's title says while the screen is paused (``p``)."""


def title_text(text: str, right: str, width: int) -> str:
    """A title line exactly ``width`` cells: `` text`` on the left, ``right `` on the right. What does not fit is
    cut with "…", the right part first (the left names what the panel shows), and never without a mark."""
    left = f" {text}"
    if not right:
        return fit(left, width)
    room = width - cell_len(left) - 2  # a space between, one at the end
    if room >= cell_len(right):
        return fit(left, width - cell_len(right) - 1) + right + " "
    if room >= 6:
        return left + " " + fit(right, room) + " "
    return fit(left, width)


class Panel(Widget, Generic[C], can_focus=True):
    """Subclasses implement ``build(view, width) -> list[Strip]``; the first strip is usually ``title_strip``.

    ``C`` is the type of what ``content`` returns (``Panel[None]``: a panel built on every new view)."""

    COMPONENT_CLASSES = {
        "panel--title", "panel--title-focus", "panel--label", "panel--dim", "panel--low", "panel--mid",
        "panel--high", "panel--bad", "panel--value", "panel--cursor", "panel--track",
    }
    DEFAULT_CSS = """
    Panel {
        height: auto;
        width: 1fr;
    }
    Panel > .panel--title { background: $primary-muted; color: $text; text-style: bold; }
    Panel > .panel--title-focus { background: $primary; color: $text; text-style: bold; }
    Panel > .panel--label { color: $text-muted; }
    Panel > .panel--dim { color: $text-disabled; }
    Panel > .panel--low { color: $success; }
    Panel > .panel--mid { color: $warning; }
    Panel > .panel--high { color: $error; }
    Panel > .panel--bad { color: $text; background: $error; text-style: bold; }
    Panel > .panel--value { color: $text; }
    Panel > .panel--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    Panel > .panel--track { color: $foreground 18%; }
    """

    TITLE = ""
    STEADY = False
    """Keep the tallest height seen lately (``_steady``): for panels with a row per app."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._view: View | None = None
        self._content: C | None = None
        """What ``content`` returned for the build under way (or the last one)."""
        self._cache_key: tuple[object, ...] | None = None
        self._strips: list[Strip] = []
        self._base_style = Style()
        """``rich_style`` as of the last build: reading it walks the DOM, too slow once per line."""
        self.ground: Style | None = None
        """The style to draw spacers and other unstyled cells in during ``build``: the panel's own (its background)
        where it has a background colour, else None (an ANSI theme: the terminal's). What ``_grounded`` would
        give such a segment when the line is drawn; drawn so from the start, a changed line is not copied segment
        by segment on every report to put it on the background (~28 lines a trn2 report)."""
        self._styles: dict[str, Style] = {}
        self._styles_theme = ""
        self._width = 0
        """The width the strips were built for."""
        self._steady_shape: tuple[object, ...] | None = None
        """The shape (selection, view options, width) the steady height was kept for (``_steady``)."""
        self._memo: dict[object, object] = {}
        """What ``memo`` made in the last build, by key; the next build fills ``_memo_next``."""
        self._memo_next: dict[object, object] = {}
        self._memo_context: tuple[object, ...] | None = None
        self._parts: dict[object, object] = {}
        """``part``'s cache: kept across builds, emptied with the memo."""
        self._step_at: tuple[object, ...] | None = None
        self._step_parts: dict[object, object] = {}
        """``per_step``'s cache: what was made at the history step ``_step_at``."""
        self._ground: dict[int, tuple[Strip, Strip]] = {}
        """Drawn strip (by id, kept alive beside it) -> the same on the panel's background (``_grounded``)."""
        self._tallest = 0
        self._tallest_key: object = None
        """``steady_key`` when the tallest height was drawn."""
        self._lower = 0
        """Builds in a row shorter than ``_tallest`` (see ``_steady``)."""
        self._room: int | None = None

    # --- subclass API ---
    def build(self, view: View, width: int) -> list[Strip]:
        raise NotImplementedError

    def cache_extra(self) -> tuple[object, ...]:
        """Extra state that changes what is drawn (a cursor position, an expansion)."""
        return ()

    def rows_needed(self, view: View, width: int) -> int | None:
        """At most how many rows the panel takes for ``view`` at ``width``, whatever the apps are doing (the
        layout adds it only where that fits); None: unknown (never added for room)."""
        return None

    def rows_within(self, view: View, width: int, free: int) -> int | None:
        """The rows this panel takes when the screen has ``free`` rows left for it, the gap after it included (as a
        layout's extra, ``DashboardScreen._fill``); None: it does not fit. ``rows_needed``, whole or not at all; a
        panel that can draw less where room is short overrides this and reads ``room``."""
        need = self.rows_needed(view, width)
        return need if need is not None and need + 1 <= free else None

    @property
    def room(self) -> int | None:
        """The rows the screen found for this panel as a layout extra (``rows_within``'s ``free``); None: shown by
        the layout itself, as tall as it needs. Setting it draws the panel again when it changed."""
        return self._room

    @room.setter
    def room(self, rows: int | None) -> None:
        if rows != self._room:
            self._room = rows
            if self.is_mounted and self._view is not None:
                self._view_changed()

    def content(self, view: View, width: int) -> C | None:
        """Everything ``build`` draws from ``view`` (besides the selection, view options and ``cache_extra``),
        compared with ``==``; or None (the default): every new view is built. A panel whose data most reports
        leave alone (memory) returns it, and then an equal report costs the comparison, not a build and a diff
        of all its lines. Computed before every build (``build`` may read it back from ``self._content``)."""
        return None

    def memo(self, key: Hashable, make: Callable[[], M]) -> M:
        """``make()``, or what it returned for an equal ``key`` in the previous build: the same Strip objects, which
        the diff then skips at once. For rows that most reports leave alone (error counters, ECC, memory
        categories): building them again cost as much as the rows that change. ``key`` must hold everything
        ``make`` draws from; width, theme and focus are taken care of (the memo starts afresh when they change)."""
        made = self._memo.get(key, _NOT_MADE)
        if made is _NOT_MADE:
            made = make()
        self._memo_next[key] = made
        return made  # type: ignore[return-value]

    def part(self, key: Hashable, make: Callable[..., M], *args: object) -> M:
        """``make(*args)``, kept by ``key`` across builds: for pieces that recur anywhere in a panel (a core's bar
        and value at a given percent), unlike ``memo`` rows, which are kept for their own place. Emptied when the
        width, theme or focus change, and when it grows past a few thousand pieces. ``make`` and its ``args`` come
        apart, not as a lambda: the core grid and the value cells ask ~160 times a report and nearly always find
        the piece, so a closure made for each call would be made for nothing."""
        made = self._parts.get(key, _NOT_MADE)
        if made is _NOT_MADE:
            if len(self._parts) >= 4096:
                self._parts.clear()
            made = self._parts[key] = make(*args)
        return made  # type: ignore[return-value]

    def num(self, text: str, width: int, style: Style | None = None) -> Segment:
        """``cells.num`` kept by ``part``: a value cell as drawn before, when it reads the same. The latency and
        execution rows draw ~200 of them a report, most of them the same text as in an earlier report, and
        fitting each (measuring its cells, padding it) cost three times the lookup."""
        return self.part(("num", text, width, style), num, text, width, style)

    def per_step(self, history: History, key: Hashable, make: Callable[[], M]) -> M:
        """``make()``, kept while ``history`` stays at the same step (``STEP`` reports): for the stepped history
        sparklines, which only move every other report. Each latency row drew its two sparklines again on every
        report, a quarter of that panel's cost. ``key`` must hold everything else ``make`` draws from (width, app,
        series); a new history, a clear, the theme, the width or the focus start afresh."""
        at = (history, history.clears, history.pushed // STEP)
        if at != self._step_at:
            self._step_at, self._step_parts = at, {}
        made = self._step_parts.get(key, _NOT_MADE)
        if made is _NOT_MADE:
            made = self._step_parts[key] = make()
        return made  # type: ignore[return-value]

    # --- styles ---
    def style(self, name: str) -> Style:
        """A component style with its colours resolved for where it is drawn (a partial style left ``$text``'s
        "auto" colour white, in every theme: labels were not muted, the light theme's text was white), cached per
        theme (a build asks for thousands of them; ``_lines`` drops the cache when the theme changes)."""
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(f"panel--{name}")
        return style

    def component(self, name: str) -> Style:
        """A subclass's own component style (``latency--p50``), cached per theme like ``style``: drawing a
        row asked Textual for it, a walk of the DOM, every time."""
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def load_style(self, pct: float | None) -> Style:
        if pct is None:
            return self.style("dim")
        return self.style(LOAD_BANDS[load_band(pct)])

    def title_strip(self, text: str, width: int, right: str = "") -> Strip:
        """The title line; the same Strip while it reads the same (the diff then skips it at once). Paused, it
        says so after the title: new reports (an ECC mark in the header) are not in what the panel shows."""
        style = self.style("title-focus" if self.has_focus else "title")
        if self._view is not None and self._view.frozen:
            text = f"{text} {PAUSED}"
        return self.part(("title", text, width, right, style), lambda: LightStrip(
            [Segment(title_text(text, right, width), style)]))

    def padded(self, segments: list[Segment], width: int) -> Strip:
        """``LightStrip(segments)`` reaching the panel's edge: the rest of the line in the panel's style, as
        ``_line`` pads it each time it is drawn. For rows that change on most reports and stop short of the edge
        (the core grid's, the vCPU grid's): padded here, the line drawn is the strip the diff has taken apart
        already, not a copy made on every draw. Counted in characters, not cells: with a wide character from the
        data the line comes out longer than the panel, and ``_line`` cuts it at the edge, as it was drawn before."""
        n = sum(map(len, map(segment_text, segments)))
        if n < width:
            segments.append(Segment(" " * (width - n), self._base_style))
        return LightStrip(segments)

    def bar(self, pct: float | None, width: int) -> list[Segment]:
        """A horizontal bar with eighth-cell resolution, coloured by load; a gap when there is no data."""
        if width <= 0:
            return []
        return self.filled_bar(None if pct is None else (*bar_fill(pct, width), load_band(pct)), width)

    def filled_bar(self, fill: tuple[int, int, int] | None, width: int) -> list[Segment]:
        """``bar`` from what it draws of a percent: (whole cells, eighths, load band), or None for no data."""
        if width <= 0:
            return []
        if fill is None:
            return [Segment("·" * width, self.style("dim"))]
        full, eighths, band = fill
        part = BAR_EIGHTHS[eighths] if full < width else ""
        filled = "█" * full + (part if part.strip() else "")
        rest = width - len(filled)
        return [Segment(filled, self.style(LOAD_BANDS[band])), Segment("─" * rest, self.style("track"))]

    # --- Textual plumbing ---
    def _lines(self, width: int) -> list[Strip]:
        view = self.view
        if view is None:
            return []
        shape = (view.pid, view.flops, view.physical, view.frozen, width, *self.cache_extra())
        content = self.content(view, width)
        key = (view.tick if content is None else content, self.app.theme, self.has_focus, *shape)
        if key != self._cache_key:
            self._content = content
            if self.app.theme != self._styles_theme:
                self._styles.clear()
                self._styles_theme = self.app.theme
            if "base" not in self._styles:  # once per theme: computing it walks the DOM (~0.1 ms)
                self._styles["base"] = self.rich_style
            self._base_style = self._styles["base"]
            self.ground = self._base_style if self._base_style.bgcolor is not None else None
            context = (width, self.app.theme, self.has_focus, view.frozen)  # frozen: the titles say PAUSED
            if context != self._memo_context:
                self._memo, self._memo_context = {}, context
                self._parts = {}
                self._step_at = None
            self._memo_next = {}
            self._strips = self._steady(shape, self.build(view, width), width)
            self._memo = self._memo_next
            self._width = width
            self._cache_key = key
        return self._strips

    def _grounded(self, strip: Strip) -> Strip:
        """``strip`` with its unstyled segments (spacers, plain cells) on the panel's background.

        Why: Textual paints no background under what ``render_line`` returns, so such a segment showed the
        terminal's own background: the light theme's rows had holes of a dark terminal's black. Component styles
        carry their background already (``style``), so only segments without a style need one. Done for the
        lines drawn (the changed ones, on each report), not for every line built; found at C speed, and a strip
        drawn again gets the same grounded strip. ANSI themes (no background colour) keep the terminal's."""
        base = self._base_style
        if base.bgcolor is None or not any(map(is_, pieces(strip)[2], repeat(None))):
            return strip
        pair = self._ground.get(id(strip))
        if pair is None or pair[0] is not strip:
            if len(self._ground) > 512:
                self._ground.clear()
            pair = self._ground[id(strip)] = (strip, LightStrip(
                [seg if seg.style is not None else Segment(seg.text, base) for seg in strip], strip.cell_length))
        return pair[1]

    def _steady(self, shape: tuple[object, ...], strips: list[Strip], width: int) -> list[Strip]:
        """``strips`` padded with blank lines to the tallest height shown lately for the same ``shape`` (selection,
        view options, width, expansion).

        Why: when an app goes idle or stops, the panels with a row per app would shrink and everything below
        them would move, under the eyes of whoever reads it. Each height change also costs a layout of the whole
        screen (10-80 ms) and repaints every moved line. While the same apps run (``steady_key``: only their
        activity changed) the height never shrinks; once an app has stopped it shrinks after ``SHRINK_AFTER``
        builds in a row lower (a batch job that comes and goes every few dozen seconds moves nothing). A new
        shape starts afresh."""
        if not self.STEADY:
            return strips
        key = self.steady_key()
        if shape != self._steady_shape:
            self._steady_shape, self._tallest, self._lower, self._tallest_key = shape, len(strips), 0, key
            return strips
        if len(strips) >= self._tallest:
            self._tallest, self._lower, self._tallest_key = len(strips), 0, key
            return strips
        if key != self._tallest_key:
            self._lower += 1
            if self._lower >= SHRINK_AFTER:
                self._tallest, self._lower, self._tallest_key = len(strips), 0, key
                return strips
        return strips + [Strip.blank(width, self._base_style)] * (self._tallest - len(strips))

    def steady_key(self) -> object:
        """What must stay the same for a panel to keep its height for good (``_steady``): the apps it has rows
        for. ``self.view`` is the view being built."""
        view = self.view
        return None if view is None else tuple(a.key for a in view.snapshot.apps)

    def _size_updated(self, *args: Any, **kwargs: Any) -> bool:
        return settle_size(self, super(), args, kwargs)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(len(self._lines(width)), 1)

    @property
    def view(self) -> View | None:
        """What to draw; replaced as a whole on every update. Setting it repaints the cells that changed.

        A plain property, not a reactive: a reactive's set looks up validators and watchers by name, enters the
        widget's message-pump context and counts the watcher's parameters, and the screen's ``data_bind`` added
        a second reactive set per panel; for seven panels on every report that was ~4% of an update."""
        return self._view

    @view.setter
    def view(self, new: View | None) -> None:
        old, self._view = self._view, new
        if new is not old and self.is_mounted:  # before that, the first layout draws it
            self._view_changed()

    def _view_changed(self) -> None:
        before = self._strips
        after = self._lines(self.size.width or 80)
        if after is before:  # nothing new to draw (``content`` unchanged)
            return
        if len(after) != len(before):
            # A paint of the build before, not flushed yet (two reports, or keys typed fast into the filter,
            # handled before the flush), names lines this build may not have: the layout repaints it all.
            forget(self)
            self.refresh(layout=True)
            return
        # Repaint only the cells that changed (see spans.py): fewer bytes over SSH, less compositing.
        paint(self, changed_lines(before, after), self._line)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _line(self, y: int) -> Strip:
        """``render_line`` for a line of the strips just built (no cache-key check: that walks the DOM)."""
        if y >= len(self._strips):  # as render_line: below the content, blank
            return Strip.blank(self._width, self._base_style)
        strip = self._grounded(self._strips[y])
        n = strip.cell_length
        if n == self._width:  # what crop_extend would return, without its caches
            return strip
        if n < self._width:  # many rows end before the panel's edge: padded as crop_extend pads them
            return LightStrip([*strip, Segment(" " * (self._width - n), self._base_style)], self._width)
        return strip.crop_extend(0, self._width, self._base_style)

    def render_line(self, y: int) -> Strip:
        lines = self._lines(self.size.width)
        if y < len(lines):
            return self._grounded(lines[y]).crop_extend(0, self.size.width, self._base_style)
        return Strip.blank(self.size.width, self._base_style if self._cache_key is not None else self.rich_style)

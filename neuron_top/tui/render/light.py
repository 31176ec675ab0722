"""``LightStrip``: a Textual ``Strip`` whose caches are made when first used, for the lines panels build per report.

Why: ``Strip.__init__`` (Textual 8.2) makes seven ``FIFOCache`` objects, each with its dict, for crops, styles,
filters and the like. The dashboard builds ~65 strips a report and asks almost none of them for any of that:
the diff reads their segments, the writer walks them. Without the caches a strip costs a fifth as much to
make, and has eight fewer objects for the garbage collector.

Light only while an app runs the render engine (``use_engine_strips``, called by ``TerminalApp`` at start-up):
otherwise a ``LightStrip`` is made by ``Strip.__init__`` and read through Strip's public methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from rich.segment import Segment
from rich.style import Style
from textual.cache import FIFOCache
from textual.strip import Strip


def _caches() -> dict[str, int] | None:
    """Strip's cache slots and their sizes, when a Strip is made of exactly those, its segments, its cell length
    and the three slots ``LightStrip`` sets; else None (another Textual: ``LightStrip`` is then a plain Strip)."""
    probe = Strip([])
    slots = set(getattr(Strip, "__slots__", ()))
    caches = {name: getattr(probe, name)._maxsize for name in slots
              if isinstance(getattr(probe, name, None), FIFOCache)}
    plain = slots - set(caches)
    if plain != {"_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"}:
        return None
    if any(getattr(probe, name) is not None for name in ("_render_cache", "_link_ids", "_cell_count")):
        return None
    return caches


_CACHES = _caches()
_light = False
"""Strips are made light (``use_engine_strips``)."""


def use_engine_strips(on: bool) -> None:
    """Make ``LightStrip`` light and let the diff read and set Strip's private fields (``engine_strips``), or
    not. Process-wide, but only our widgets make LightStrips: Textual's own strips are untouched either way, and a
    strip made either way works in every app."""
    global _light
    _light = on and _CACHES is not None


def engine_strips() -> bool:
    """Whether the render engine's strip shortcuts are on (see ``use_engine_strips``)."""
    return _light


class LightStrip(Strip):
    """A Strip that makes each of its caches when Textual first reads it, and keeps what the cell diff reads of
    it (``pieces``): each line is diffed twice, as the new line and then as the old one."""

    __slots__ = ("_pieces",)

    def __init__(self, segments: Iterable[Segment], cell_length: int | None = None) -> None:
        self._pieces: tuple[list[str], str, list[Style | None]] | None = None
        if not _light:
            super().__init__(segments, cell_length)
            return
        self._segments = list(segments)
        self._cell_length = cell_length
        self._render_cache = None
        self._link_ids = None
        self._cell_count = None

    def __getattr__(self, name: str) -> FIFOCache:
        """Only reached for a slot not set yet (a strip made light): a cache, made now."""
        size = _CACHES.get(name) if _CACHES is not None else None
        if size is None:
            raise AttributeError(name)
        cache: FIFOCache = FIFOCache(size)
        setattr(self, name, cache)
        return cache


segment_text = attrgetter("text")
segment_style = attrgetter("style")
"""What a Segment draws and in which style (the diff, the writer and the line filters read them of every
segment of every changed line)."""


def pieces(strip: Strip) -> tuple[list[str], str, list[Style | None]]:
    """The texts of a strip's segments, their concatenation and the segments' styles: kept in a ``LightStrip``,
    made again for any other. Shared: not to be changed."""
    if type(strip) is LightStrip:
        kept = strip._pieces
        if kept is None:
            segments = strip._segments if _light else list(strip)
            texts = list(map(segment_text, segments))
            kept = strip._pieces = (texts, "".join(texts), list(map(segment_style, segments)))
        return kept
    texts = list(map(segment_text, strip))
    return texts, "".join(texts), list(map(segment_style, strip))


def characters(strip: Strip) -> int:
    """How many characters a strip's segments hold (its cells, when none is wide): from the kept ``pieces`` when
    the diff has taken the strip apart already, as it has every panel line the writer gets."""
    if type(strip) is LightStrip and strip._pieces is not None:
        return len(strip._pieces[1])
    return sum(map(len, map(segment_text, strip)))


def styles(strip: Strip) -> list[Style | None]:
    """The styles of a strip's segments: the kept ``pieces``' when the diff has taken the strip apart already (every
    panel line ``paint`` sends), else made now (without the texts ``pieces`` would make and keep). Shared: not to
    be changed."""
    if type(strip) is LightStrip and strip._pieces is not None:
        return strip._pieces[2]
    return list(map(segment_style, strip))

"""The replay scrubber: the whole recording as one bar, where you are, and what happened where.

Line 1 is the bar: one cell stands for a stretch of reports and shows the most severe marker in it
(``recording.markers.KINDS``), so a busy recording, where nearly every report carries a corrected ECC event, still
shows the rare uncorrected one; a hole in a cell that shows a more severe marker gives that cell an amber ground.
Line 2 is the legend: each kind's glyph and how many there are; the kind ``n``/``N`` jump by is highlighted, and
corrected ECC can be hidden. Line 3 says where the next marker is.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from neuron_top.fmt import cut_parts
from neuron_top.recording.markers import KIND, KINDS, LABELS, MARKER_KINDS, Marker, severity
from neuron_top.recording.pacing import report_time

GLYPH = {k.name: k.glyph for k in MARKER_KINDS}
STYLE = {k.name: k.style for k in MARKER_KINDS}
SHORT = {k.name: k.short for k in MARKER_KINDS}
"""Legend words (the full names, ``LABELS``, are in the help screen and the next-marker line)."""
JUMP_KINDS: tuple[tuple[str, ...] | None, ...] = (None, *(
    tuple(k.name for k in MARKER_KINDS if k.jump == j) for j in dict.fromkeys(k.jump for k in MARKER_KINDS)))
"""What ``n``/``N`` can jump by, in the order ``k`` cycles through them (None: every marker shown)."""


class Scrubber(Widget):
    COMPONENT_CLASSES = {"scrubber--track", "scrubber--played", "scrubber--head", "scrubber--bad",
                         "scrubber--warn", "scrubber--note", "scrubber--info", "scrubber--mark",
                         "scrubber--chosen", "scrubber--gap"}
    DEFAULT_CSS = """
    Scrubber { height: 3; background: $panel; }
    Scrubber > .scrubber--track { color: $surface-lighten-2; }
    Scrubber > .scrubber--played { color: $primary; }
    Scrubber > .scrubber--head { color: $text; background: $primary; text-style: bold; }
    Scrubber > .scrubber--bad { color: $error; text-style: bold; }
    Scrubber > .scrubber--warn { color: $warning; text-style: bold; }
    Scrubber > .scrubber--note { color: $text-muted; }
    Scrubber > .scrubber--info { color: $text-muted; }
    Scrubber > .scrubber--mark { background: $accent-muted; }
    Scrubber > .scrubber--chosen { text-style: reverse; }
    Scrubber > .scrubber--gap { background: $warning-muted; }
    """

    position: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    markers_seen: reactive[int] = reactive(0)
    """How many markers are known (they arrive while the background scan runs)."""
    info: reactive[tuple[str, ...]] = reactive(())
    """The line under the legend, in parts (markers found, the next one, the range): whole parts that fit."""
    mark_in: reactive[int | None] = reactive(None)
    hidden: reactive[frozenset[str]] = reactive(frozenset())
    """Kinds not drawn (corrected ECC, when hidden)."""
    jump: reactive[tuple[str, ...] | None] = reactive(None)
    """The kinds ``n``/``N`` jump by (None: all shown), highlighted in the legend."""

    class Seek(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, markers: Sequence[Marker], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.markers = markers
        self._cells_key: tuple[object, ...] = ()
        self._cells_cache: list[str | None] = []
        self._counts: dict[str, int] = {}
        self._gaps: set[int] = set()
        """Cells holding a hole, also when a more severe marker is drawn there (it gets the gap's background)."""

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"scrubber--{name}", partial=True)

    def cells(self, width: int) -> list[str | None]:
        """The most severe marker kind in each cell (hidden kinds left out). Cached: a busy recording has a
        marker in nearly every report, and the bar is drawn on every frame of playback."""
        seen = self.markers_seen or len(self.markers)
        key = (width, self.total, seen, self.hidden, id(self.markers))
        if key == self._cells_key:
            return self._cells_cache
        cells: list[str | None] = [None] * width
        rank = [len(KINDS)] * width
        counts: dict[str, int] = {}
        gaps: set[int] = set()
        n = max(self.total, 1)
        hidden = self.hidden
        for m in self.markers[:seen]:
            counts[m.kind] = counts.get(m.kind, 0) + 1
            if m.kind in hidden:
                continue
            c = cell_of(m.index, width, n)
            if m.kind == "gap":
                gaps.add(c)
            r = severity(m.kind)
            if r < rank[c]:
                rank[c], cells[c] = r, m.kind
        self._cells_key, self._cells_cache, self._counts, self._gaps = key, cells, counts, gaps
        return cells

    def render_line(self, y: int) -> Strip:
        w = self.size.width
        if y == 1:
            return Strip(self._legend(w)).crop_extend(0, w, self.rich_style)
        if y == 2:  # whole parts: a count or a report number cut short reads as another one
            return Strip([Segment(" " + cut_parts(self.info, w - 1, measure=cell_len), self._style("info"))]
                         ).crop_extend(0, w, self.rich_style)
        bar_w = max(w - 2, 1)
        n = max(self.total, 1)
        head = cell_of(self.position, bar_w, n)
        lo = hi = -1
        if self.mark_in is not None:
            a, b = sorted((self.mark_in, self.position))
            lo, hi = cell_of(a, bar_w, n), cell_of(b, bar_w, n)
        segs = [Segment(" ")]
        cells = self.cells(bar_w)
        gaps = self._gaps
        for c, kind in enumerate(cells):
            if c == head:
                segs.append(Segment("┃", self._style("head")))
                continue
            if kind is not None:
                style = self._style(STYLE[kind])
                ch = GLYPH[kind]
            else:
                style = self._style("played" if c < head else "track")
                ch = "━" if c < head else "─"
            if c in gaps and kind != "gap":  # a hole under a more severe marker still shows
                style = style + self._style("gap")
            if lo <= c <= hi:
                style = style + self._style("mark")
            segs.append(Segment(ch, style))
        return Strip(segs).crop_extend(0, w, self.rich_style)

    def _legend(self, width: int) -> list[Segment]:
        """`` E uncorr 2  x err 5 ...``: every kind with its count (ECC: E uncorrected, e corrected); hidden ones
        say so; the jump kind is highlighted. Kinds with none are left out (but for the two most severe, so their
        absence is plain), so it fits 80 columns."""
        self.cells(max(self.size.width - 2, 1))  # the counts
        counts = self._counts
        segs = [Segment(" ")]
        chosen = self._style("chosen")
        entries: list[list[Segment]] = []
        for kind in KINDS:
            k = counts.get(kind, 0)
            if not k and (not KIND[kind].serious or KIND[kind].family == "host"):
                continue  # (a host going down: only fleet recordings have it, and they say it when they do)
            style = self._style(STYLE[kind])
            label = f"{SHORT[kind]} {k}" + (" hidden" if kind in self.hidden else "")
            label_style = chosen if self.jump is not None and kind in self.jump else self._style("info")
            entries.append([Segment(GLYPH[kind], style), Segment(" " + label, label_style)])
        if self.jump is not None:
            entries.append([Segment("n/N: " + "/".join(SHORT[k] for k in self.jump), self._style("info"))])
        # whole entries only, then "…" for those left out: a count cut short ("x err 1" of "x err 12") lies
        widths = [sum(cell_len(sg.text) for sg in entry) for entry in entries]

        def need(keep: int) -> int:  # the lead blank, the entries two blanks apart, and "  …" after a cut
            used = 1 + sum(widths[:keep]) + 2 * max(keep - 1, 0)
            return used if keep == len(entries) else used + (3 if keep else 1)

        keep = len(entries)
        while keep and need(keep) > width:
            keep -= 1
        for i, entry in enumerate(entries[:keep]):
            segs += [Segment("  "), *entry] if i else entry
        if keep < len(entries):
            segs.append(Segment("  …" if keep else "…", self._style("info")))
        return segs

    def on_click(self, event: Click) -> None:
        if event.y != 0 or self.total <= 0:
            return
        bar_w = max(self.size.width - 2, 1)
        x = min(max(event.x - 1, 0), bar_w - 1)
        self.post_message(self.Seek(report_at(x, bar_w, self.total)))


def cell_of(index: int, width: int, total: int) -> int:
    """The bar cell report ``index`` is drawn in."""
    return min(index * width // max(total, 1), width - 1)


def report_at(x: int, width: int, total: int) -> int:
    """The first report drawn in cell ``x`` (or the next one right of it): the inverse of ``cell_of``, so
    clicking where a marker or the head is drawn lands on that report."""
    return max(0, min(-(-x * total // width), total - 1))


def clock_text(ts: float, wallclock: bool) -> str:
    """Where the replay is, with the zone (``recording.pacing.report_time``, over ``fmt.moment``)."""
    return report_time(ts, wallclock)


def kind_names(kinds: tuple[str, ...] | None) -> str:
    """"every marker", "uncorrected ECC", "app stopped / app started"."""
    return "every marker" if kinds is None else " / ".join(LABELS[k] for k in kinds)

"""Sparkline cells as Segments (not widgets): a panel draws hundreds of them in one pass."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain, repeat
from operator import is_not, itemgetter
from typing import cast

from neuron_top import fmt
from neuron_top.history import History, Key

SPARK = "▁▂▃▄▅▆▇█"
STEP = 2
"""Reports per cell of the dashboard's history sparklines: each cell sums up two reports and the sparklines
move every other report (btop's default update is 2 s). Why: a sparkline that scrolls every second changes every
one of its cells; the dashboard's ~250 sparklines were most of what it drew and sent each second. At two reports
per cell they change half as often and show twice the history in the same width. The numbers beside them still
change with every report; the drill-down screens' charts keep one report per column."""


def per_cell(history: History) -> str:
    """How long one cell of the history sparklines spans, for their titles ("10s", "500ms"; "" before two
    reports): ``STEP`` times the reports' spacing as the history holds it. The vCPU and NeuronCore histories said
    it from the report's period, each its own way ("549ms per cell" from the built-in collector's first report,
    a quarter second long; the core history nothing below a second)."""
    every = history.interval()
    if every is None:
        return ""
    cell = every * STEP
    return fmt.duration(round(cell)) if cell >= 1 else f"{cell * 1000:.0f}ms"


def _window(values: Sequence[float | None], width: int, top: float | None) -> tuple[list[float | None], float]:
    """The newest ``width`` values, padded on the left with gaps, and the value the top of the chart stands for
    (``top``, or the window's largest value when ``top`` is None)."""
    vals: list[float | None] = list(values)[-width:]
    gap: list[float | None] = [None]
    vals = gap * (width - len(vals)) + vals
    hi = top
    if hi is None:
        nums = [v for v in vals if v is not None]
        hi = max(nums) if nums else 1.0
    return vals, hi or 1.0


def spark_text(values: Sequence[float | None], width: int, top: float | None = 100.0) -> str:
    """The newest ``width`` values as block characters; None is a gap (space), never a zero."""
    vals, hi = _window(values, width, top)
    return "".join(_blocks(vals, hi))


def _block(v: float | None, hi: float) -> str:
    """One cell of a sparkline whose top stands for ``hi``: a block character, a space for a gap (clamped by
    comparisons, not max()/min() calls: ~130 sparklines are drawn per update)."""
    return " " if v is None else SPARK[0 if (i := int(v / hi * 7.999)) < 0 else 7 if i > 7 else i]


def _blocks(values: Iterable[float | None], hi: float) -> list[str]:
    """``_block`` of each value, without a call per value (the vCPU strip draws 192 at a step)."""
    return [" " if v is None else SPARK[0 if (i := int(v / hi * 7.999)) < 0 else 7 if i > 7 else i] for v in values]


def chart_rows(values: Sequence[float | None], width: int, height: int, top: float | None = 100.0) -> list[str]:
    """A bar chart ``height`` rows tall of the newest ``width`` values, top row first (eighth-block resolution)."""
    vals, hi = _window(values, width, top)
    levels = [None if v is None else max(0.0, min(v / hi, 1.0)) * height * 8 for v in vals]
    rows = []
    for r in range(height - 1, -1, -1):
        base = r * 8
        row = []
        for lv in levels:
            if lv is None:
                row.append(" ")
            elif lv >= base + 8:
                row.append("█")
            elif lv > base:
                row.append(SPARK[max(int(lv - base) - 1, 0)])
            else:
                row.append(" ")
        rows.append("".join(row))
    return rows


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def stepped(history: History, key: Key, cells: int, combine: Callable[[list[float]], float] = mean,
            step: int = STEP) -> list[float | None]:
    """The newest ``cells`` complete groups of ``step`` reports of a series, each group combined (the mean, or
    e.g. ``max`` so that a latency spike stays visible); None only where a whole group had no data (a gap, never
    a zero). Groups are aligned on ``history.pushed``, so a cell keeps its value until the sparkline moves; the
    reports of an unfinished group wait for the next step."""
    extra = history.pushed % step
    values = history.last(key, cells * step + extra)
    if extra:
        del values[-extra:]
    if step == 2:  # the dashboard's case, ~130 series an update: pairs without a list per group
        pairs = zip(values[0::2], values[1::2], strict=True)
        if combine is mean:
            return [y if x is None else x if y is None else (x + y) / 2 for x, y in pairs]
        return [y if x is None else x if y is None else combine([x, y]) for x, y in pairs]
    out: list[float | None] = []
    for k in range(0, len(values), step):
        got = [v for v in values[k:k + step] if v is not None]
        out.append(combine(got) if got else None)
    return out


def newest_cells(history: History, keys: Sequence[Key], combine: Callable[[list[float]], float] = mean
                 ) -> list[float | None]:
    """For each of ``keys``, the newest complete step of its series combined: ``stepped(history, key, 1,
    combine)[0]``, read straight from the two reports at the end of every series (the reports of an unfinished
    step left out), in C loops, instead of a padded window per series. What kept sparklines gain at each step: the
    vCPU strip asks it of 192 series. A series with less than a whole step of history goes to ``stepped``."""
    extra = history.pushed % STEP
    columns = history.columns(keys)
    if STEP != 2 or min(map(len, columns), default=0) < 2 + extra:
        return [stepped(history, key, 1, combine)[0] for key in keys]
    pairs = zip(map(itemgetter(-2 - extra), columns), map(itemgetter(-1 - extra), columns), strict=True)
    if combine is mean:
        return [y if x is None else x if y is None else (x + y) / 2 for x, y in pairs]
    return [y if x is None else x if y is None else combine([x, y]) for x, y in pairs]


_TOGETHER = 32
"""Series from which ``SteppedSparks.many`` moves them on together: a few (the core history's 16 devices, its
"all" line) cost less one at a time than the lists that moving them together makes."""


class SteppedSparks:
    """Stepped sparklines (two reports per cell, each the mean) of many series, kept from one step to the next:
    when the history has only moved on by one step, a sparkline drops its oldest cell and gains the newest,
    instead of being computed again from ``2 x cells`` values. Why: the vCPU grid draws 192 of them every other
    report; recomputing each was most of that panel's cost. Anything else (a clear, a seek, a jump of several
    steps) computes them afresh. A call of many series (``_TOGETHER``) with the keys of the call before, one step
    on, moves them all on together (``newest_cells``, a few list comprehensions rather than a loop of lookups per
    series: the vCPU strip's step cost ~0.6x as much)."""

    def __init__(self, cells: int, top: float = 100.0) -> None:
        self.cells = cells
        self.top = top
        self._kept: dict[Key, tuple[tuple[int, int, int], str, float | None]] = {}
        """Per series: (history id, clears, step) it was drawn at, its text, its newest cell."""
        self._keys: list[Key] = []
        self._drawn: list[tuple[tuple[int, int, int], str, float | None]] = []
        """The last call's keys (a copy) and what it returned."""

    def many(self, history: History, keys: Iterable[Key]) -> list[tuple[tuple[int, int, int], str, float | None]]:
        """For each of ``keys``, ``(when, text, newest)``: the step it was drawn at, its sparkline text and its
        newest cell's value (None for a gap). What the vCPU grid asks of its 192 series at each step, in one call
        (as one call per series they were half the grid's cost)."""
        step = history.pushed // STEP
        hid, clears = id(history), history.clears
        at, before = (hid, clears, step), (hid, clears, step - 1)
        keys = list(keys)
        if len(keys) < _TOGETHER:
            return self._each(history, keys, at, before)
        drawn = self._drawn
        if drawn and keys == self._keys:  # all of them drawn at the same step (``_each``)
            when = drawn[0][0]
            if when == at:
                return list(drawn)
            if when == before:
                news = newest_cells(history, keys)
                texts = map(itemgetter(1), drawn)
                if self.cells == 1:  # the vCPU strip: the newest cell is all there is
                    drawn = list(zip(repeat(at), _blocks(news, self.top or 1.0), news))
                else:
                    drawn = [(at, t[1:] + b, v) for t, b, v in zip(texts, _blocks(news, self.top or 1.0), news,
                                                                   strict=True)]
                self._kept.update(zip(keys, drawn, strict=True))
                self._drawn = drawn
                return list(drawn)
        out = self._each(history, keys, at, before)
        self._keys, self._drawn = keys, out
        return list(out)

    def _each(self, history: History, keys: list[Key], at: tuple[int, int, int], before: tuple[int, int, int]
              ) -> list[tuple[tuple[int, int, int], str, float | None]]:
        """``many`` one series at a time: those kept one step back moved on, the others computed afresh."""
        kept = self._kept
        top = self.top or 1.0
        series = history.series
        odd = history.pushed % 2
        out = []
        for key in keys:
            k = kept.get(key)
            if k is not None:
                when = k[0]
                if when == at:
                    out.append(k)
                    continue
                if when == before:  # one step on: drop the oldest cell, add the newest
                    if STEP == 2:
                        s = series(key)  # the mean of the newest complete pair of reports
                        n = len(s) - odd
                        x = s[n - 2] if n >= 2 else None
                        y = s[n - 1] if n >= 1 else None
                        newest = y if x is None else x if y is None else (x + y) / 2
                    else:
                        newest = stepped(history, key, 1)[0]
                    k = kept[key] = (at, k[1][1:] + _block(newest, top), newest)
                    out.append(k)
                    continue
            means = stepped(history, key, self.cells)
            k = kept[key] = (at, spark_text(means, self.cells, self.top), means[-1])
            out.append(k)
        return out


class _Kept:
    """One series of a ``StepCells``: its stepped ``values`` as of the step ``at`` (history id, clears, step), and
    its ``text`` as drawn at the step ``text_at`` on the scale ``top``."""

    __slots__ = ("at", "text", "text_at", "top", "values")

    def __init__(self, at: tuple[int, int, int], values: list[float | None]) -> None:
        self.at, self.values = at, values
        self.text_at: tuple[int, int, int] | None = None
        self.top = 0.0
        self.text = ""


def peak(*series: list[float | None]) -> float:
    """The largest value of the series, gaps left out, as the scale of a chart (1.0 when there is none, or it is
    0): in C, without a Python-level loop over a row's ~120 cells."""
    return max(cast("Iterator[float]", filter(_not_none, chain(*series))), default=None) or 1.0


_not_none = partial(is_not, None)


class StepCells:
    """Stepped history (``stepped``) of series drawn at a scale the caller picks, kept from one step to the next:
    when the history has moved on by one step, a series drops its oldest cell and gains the newest, and so does
    its text when its scale has not changed. Why: the latency rows (two 59-cell sparklines each at 200 columns)
    and the execution rows read ~2,000 values of history and drew ~2,000 cells at every step, a quarter of what
    a step costs beyond an ordinary update. Anything else (a clear, a seek, a jump of several steps, another
    width) computes them afresh. At a step, the series drawn at the step before move on together
    (``newest_cells``): one read of their newest reports, not a padded window per series."""

    def __init__(self, combine: Callable[[list[float]], float] = mean) -> None:
        self.combine = combine
        self._kept: dict[tuple[Key, int], _Kept] = {}
        self._at: tuple[int, int, int] | None = None

    def values(self, history: History, key: Key, cells: int) -> list[float | None]:
        """``stepped(history, key, cells, combine)``. The list is shared: do not change it."""
        step = history.pushed // STEP
        at = (id(history), history.clears, step)
        before = (at[0], at[1], step - 1)
        if at != self._at:  # a new step: what is older than the step before can only be computed afresh
            self._at = at
            kept_all = self._kept = {k: v for k, v in self._kept.items() if v.at == before}
            if kept_all:  # and every series drawn at the step before moves on now, their newest cells read at once
                news = newest_cells(history, [k for k, _ in kept_all], self.combine)
                for series, newest in zip(kept_all.values(), news, strict=True):
                    series.values = [*series.values[1:], newest]
                    series.at = at
        kept = self._kept.get((key, cells))
        if kept is not None:  # drawn at this step, or moved on to it above
            return kept.values
        vals = stepped(history, key, cells, self.combine)
        self._kept[(key, cells)] = _Kept(at, vals)
        return vals

    def text(self, key: Key, cells: int, top: float) -> str:
        """``spark_text(values, cells, top)`` of what ``values(history, key, cells)`` just returned (``top`` not
        None: the caller's scale)."""
        kept = self._kept[(key, cells)]
        if kept.text_at != kept.at or kept.top != top:
            moved = kept.text_at is not None and kept.text_at == (kept.at[0], kept.at[1], kept.at[2] - 1)
            kept.text = kept.text[1:] + _block(kept.values[-1], top or 1.0) if moved and kept.top == top \
                else spark_text(kept.values, cells, top)
            kept.text_at, kept.top = kept.at, top
        return kept.text

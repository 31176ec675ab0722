"""Fixed-width text cells for panels that draw rows as Segments.

Why cell widths and not ``len``: names from the data can hold wide (CJK) characters; a column must stay a column.
The text given here must already have passed ``textsafe.clean``: Segments are never parsed as markup, so a tag
like ``[red]boom`` shows literally.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from neuron_top import fmt
from neuron_top.snapshot import AppView
from neuron_top.textsafe import clean


def fit(text: str, width: int, align: str = "left") -> str:
    """``text`` cut (with an ellipsis) or padded to exactly ``width`` cells."""
    if width <= 0:
        return ""
    n = cell_len(text)
    if n > width:
        return set_cell_size(fmt.cut(text, width, cell_len), width)  # the one cut rule, measured as Rich draws
    pad = " " * (width - n)
    if align == "right":
        return pad + text
    if align == "center":
        left = len(pad) // 2
        return pad[:left] + text + pad[left:]
    return text + pad


def fit_left(text: str, width: int) -> str:
    """Like ``fit`` but keeps the end of the text (file names: the end is what tells them apart)."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return fit(text, width)
    out = ""
    for ch in reversed(text):
        if cell_len(out) + cell_len(ch) > width - 1:
            break
        out = ch + out
    return fit("…" + out, width)


def common_ends(texts: Sequence[str]) -> tuple[str, str]:
    """The prefix and the suffix all of ``texts`` share (empty for fewer than two different texts); they never
    overlap in the shortest text."""
    distinct = sorted(set(texts))
    if len(distinct) < 2:
        return "", ""
    prefix = _shared_start(distinct)
    suffix = _shared_start([t[::-1] for t in distinct])[::-1]
    room = min(len(t) for t in distinct) - len(prefix)
    return prefix, suffix[len(suffix) - max(room, 0):] if len(suffix) > room else suffix


def _shared_start(texts: Sequence[str]) -> str:
    """The characters every one of ``texts`` starts with (the first and last in sorted order bound the rest)."""
    lo, hi = min(texts), max(texts)
    n = next((i for i, (a, b) in enumerate(zip(lo, hi, strict=False)) if a != b), min(len(lo), len(hi)))
    return lo[:n]


def fit_distinct(text: str, width: int, ends: tuple[str, str]) -> str:
    """``fit_left`` for one of several names that share a beginning and an end (``common_ends``): the part that
    tells it from the others is kept, then as much of the shared end as fits. Model paths such as
    ``/tmp/neuroncc_compile_workdir/<hash>/model.MODULE_12+c7db2df4.neff`` all ended ``…7db2df4.neff`` when only
    their end was kept."""
    if cell_len(text) <= width:
        return fit(text, width)
    prefix, suffix = ends
    if not (prefix or suffix) or not text.startswith(prefix) or not text.endswith(suffix):
        return fit_left(text, width)
    middle = text[len(prefix):len(text) - len(suffix)]
    if cell_len(middle) + cell_len(suffix) + 1 <= width:
        return fit_left(text, width)  # the end kept holds the whole of what differs
    if cell_len(middle) + 2 <= width:
        return fit("…" + middle + "…", width)
    return fit("…" + middle, width)


def cell(text: str, width: int, style: Style | None = None, align: str = "left") -> Segment:
    return Segment(fit(text, width, align), style)


def used(segments: list[Segment]) -> int:
    """How many cells ``segments`` take."""
    return sum(cell_len(s.text) for s in segments)


def num(text: str, width: int, style: Style | None = None) -> Segment:
    """A right-aligned value with at least one space before it, so neighbouring columns never touch."""
    return Segment(" " + fit(text, width - 1, "right") if width > 1 else fit(text, width), style)


def label_width(apps: Iterable[AppView], least: int, most: int) -> int:
    """A column for app labels: as wide as the longest (plus a margin), between ``least`` and ``most``."""
    longest = max((cell_len(clean(a.label, 40)) for a in apps), default=0)
    return max(least, min(longest + 2, most))


def wrap_words(head: str, words: list[str], width: int, max_lines: int = 3) -> list[str]:
    """``head`` then the words, wrapped under it to ``width`` cells over at most ``max_lines`` lines; what does
    not fit becomes "+N more". Each line is exactly ``width`` cells."""
    indent = " " * cell_len(head)
    reserve = len(f"+{len(words)} more")
    lines: list[str] = []
    line = head
    for i, word in enumerate(words):
        last = len(lines) == max_lines - 1
        room = width - (reserve if last and i < len(words) - 1 else 0)
        if cell_len(line) + cell_len(word) > room and line not in (head, indent):
            if last:
                lines.append(fit(f"{line}+{len(words) - i} more", width))
                return lines
            lines.append(fit(line, width))
            line = indent
        line += word + " "
    lines.append(fit(line, width))
    return lines


def app_title(app: AppView) -> str:
    """What a panel's title says it shows: "all apps" or the app's label."""
    return "all apps" if app.is_all else clean(app.label, 40)

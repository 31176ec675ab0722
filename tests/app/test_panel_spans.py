"""Only changed cells are repainted: ``changed_spans`` finds them, and a panel update marks only those regions."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top.widgets.spans import changed_spans

RED, GREEN = Style(color="red"), Style(color="green")


def strip(*parts: tuple[str, Style]) -> Strip:
    return Strip([Segment(t, s) for t, s in parts])


def test_equal_strips_have_no_spans() -> None:
    a = strip(("abc", RED), ("def", GREEN))
    assert changed_spans(a, strip(("abc", RED), ("def", GREEN))) == []


def test_a_changed_value_is_narrowed_to_its_cells() -> None:
    a = strip(("ND0 ", RED), ("[ 90.8%]", GREEN), (" " * 30, RED), ("x", GREEN))
    b = strip(("ND0 ", RED), ("[ 91.3%]", GREEN), (" " * 30, RED), ("x", GREEN))
    assert changed_spans(a, b) == [(7, 8), (9, 10)]  # "0.8" -> "1.3": cells 7 and 9 (the writer bridges the ".")


def test_segment_boundaries_may_move() -> None:
    """A bar that grows by one cell: the filled run gets longer and the track shorter."""
    a = strip(("█" * 5, GREEN), ("─" * 5, RED))
    b = strip(("█" * 6, GREEN), ("─" * 4, RED))
    assert changed_spans(a, b) == [(5, 6)]


def test_a_style_change_marks_the_whole_piece() -> None:
    a = strip(("aaaa", RED), ("bbbb", GREEN))
    b = strip(("aaaa", GREEN), ("bbbb", GREEN))
    assert changed_spans(a, b) == [(0, 4)]


def test_nearby_changes_merge_and_far_ones_stay_apart() -> None:
    a = strip(("a" * 40, RED))
    b = strip(("b" + "a" * 3 + "b" + "a" * 30 + "b" + "a" * 4, RED))
    assert changed_spans(a, b, gap=6) == [(0, 5), (35, 36)]


def test_different_lengths_repaint_the_tail() -> None:
    assert changed_spans(strip(("abc", RED)), strip(("abcdef", RED))) == [(3, 6)]
    assert changed_spans(strip(("abcdef", RED)), strip(("abc", RED))) == [(3, 6)]


def test_wide_characters_repaint_the_whole_line() -> None:
    a = strip(("app 推理 1", RED))
    b = strip(("app 推理 2", RED))
    assert changed_spans(a, b) == [(0, a.cell_length)]


def test_measuring_a_line_keeps_textuals_cell_length() -> None:
    """The diff measures lines of one-cell characters itself and leaves the width in the strip: it must be the
    width Textual would find, for one-cell text, the ellipsis, and wide text alike."""
    for text in ("cpu ▁▂▃█ 12.5%", "llama3-70b-pret… tot", "app 推理 1", "ok"):
        fresh, measured = strip((text, RED)), strip((text, RED))
        changed_spans(measured, strip(("x" * 30, RED)))
        assert measured.cell_length == fresh.cell_length

"""Only changed cells are repainted: ``changed_spans`` finds them, and a panel update marks only those regions."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top.tui.render.spans import _differ, changed_spans

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


def test_the_character_mask_marks_exactly_the_characters_that_differ() -> None:
    """``_differ`` compares the texts as numbers: every kind of character the panels draw, characters outside
    the BMP (the fallback), and texts of different lengths (compared over the shorter)."""
    from operator import ne

    pairs = [("abc", "abd"), ("█▏─ 12%", "█▎─ 13%"), ("𝐀b𝐀", "𝐀c𝐁"), ("a𝐀", "ab"), ("", ""), ("abcdef", "abc"),
             ("…x", "…y"), ("\u0100\u0001", "\u0001\u0100")]  # bytes of one character swapped: still differ
    for a, b in pairs:
        want = [int(x) for x in map(ne, a, b)]
        assert [int(bool(x)) for x in _differ(a, b)] == want, (a, b)


def test_random_lines_against_a_cell_by_cell_comparison() -> None:
    """Against the obvious reference: expand both lines to (character, style) per cell and mark every cell that
    differs (past the shorter line's end too), then join marks closer than ``gap``. Every differing cell must be
    in a span; spans are sorted and ``gap`` apart; when no segment boundary moves they are exactly the
    reference's (a moved boundary between two equal styles may repaint a few unchanged cells: a cheap check)."""
    import random
    from itertools import pairwise

    def cells(s: Strip) -> list[tuple[str, Style | None]]:
        return [(ch, seg.style) for seg in s for ch in seg.text]

    def reference(a: Strip, b: Strip, gap: int) -> list[tuple[int, int]]:
        ca, cb = cells(a), cells(b)
        marks = [x for x in range(max(len(ca), len(cb)))
                 if x >= len(ca) or x >= len(cb) or ca[x][0] != cb[x][0] or ca[x][1] != cb[x][1]]
        spans: list[tuple[int, int]] = []
        for x in marks:
            if spans and x - spans[-1][1] < gap:
                spans[-1] = (spans[-1][0], x + 1)
            else:
                spans.append((x, x + 1))
        return spans

    rnd = random.Random(5)
    styles = [None, RED, GREEN, Style(color="red"), Style(bold=True)]  # one equal to RED but not RED itself

    def line() -> list[tuple[str, Style | None]]:
        return [("".join(rnd.choice("ab ─█▏…") for _ in range(rnd.randint(0, 6))), rnd.choice(styles))
                for _ in range(rnd.randint(0, 6))]

    exact = 0
    for _ in range(3000):
        a = line()
        kind = rnd.random()
        if kind < 0.3:
            b = line()
        elif kind < 0.6:  # same styles, boundaries moved (a bar's fill grew)
            text = "".join(t for t, _ in a)
            cuts = sorted(rnd.randint(0, len(text)) for _ in range(len(a) - 1))
            b = [(text[i:j], s) for (i, j), (_, s) in zip(pairwise([0, *cuts, len(text)]), a, strict=True)] if a else []
        else:  # same boundaries, some characters and styles changed
            b = [(t[:-1] + rnd.choice("ab█") if t and rnd.random() < 0.5 else t,
                  s if rnd.random() < 0.8 else rnd.choice(styles)) for t, s in a]
        gap = rnd.choice([1, 2, 4])
        got = changed_spans(strip(*a), strip(*b), gap)
        want = reference(strip(*a), strip(*b), gap)
        for lo, hi in want:
            assert all(any(x1 <= x < x2 for x1, x2 in got) for x in range(lo, hi)), (a, b, gap, got)
        assert all(x1 < x2 for x1, x2 in got)
        assert all(n[0] - p[1] >= gap for p, n in pairwise(got)), (got, gap)
        if [len(t) for t, _ in a] == [len(t) for t, _ in b]:
            assert got == want, (a, b, gap)
            exact += 1
    assert exact > 1000


async def test_grid_rows_are_drawn_as_the_strips_the_diff_read() -> None:
    """The core grid's and vCPU grid's rows, which change on most reports, reach the panel's edge on the panel's
    background as built (``Panel.padded``, ``Panel.ground``): drawing a changed one hands the writer that strip,
    not a copy made to pad it or to put its spacers on the background (a copy per changed line per report,
    taken apart again by the writer)."""
    from neuron_top.tui.widgets.core_history import CoreHistory
    from neuron_top.tui.widgets.cores import CoreGrid
    from neuron_top.tui.widgets.vcpu import VcpuGrid
    from tests.helpers import demo_snapshots, feed, make_app

    app = make_app(demo_snapshots("trn2.48xlarge", 7, 20))
    # 250x80: the overview shows the vCPU grid there (at 200x60 the NeuronCore history takes its place)
    async with app.run_test(size=(250, 80)) as pilot:
        await feed(pilot)
        for kind, first_row, least in ((CoreGrid, 2, 8), (VcpuGrid, 1, 8), (CoreHistory, 1, 5)):
            panel = app.screen.query_one(kind)
            rows = range(first_row, len(panel._strips))
            assert len(rows) >= least, kind
            width = panel.size.width
            for y in rows:
                built = panel._strips[y]
                assert panel._line(y) is built, (kind, y)
                assert built.cell_length == width
                assert all(seg.style is not None for seg in built), (kind, y)  # the default theme has a background

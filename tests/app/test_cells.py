"""Cell helpers the panels share."""

from __future__ import annotations

from neuron_top.tui.widgets.fixedwidth import fit, fit_left, wrap_words


def test_wrap_words_fits_and_counts_what_is_left() -> None:
    words = [str(n) for n in range(500, 532)]
    out = wrap_words(" idle (32): ", words, 40)
    assert len(out) == 3 and all(len(line) == 40 for line in out)
    shown = " ".join(out).split(":", 1)[1].split()
    more = int(shown[-2].lstrip("+"))
    assert shown[-1] == "more" and len(shown) - 2 + more == 32
    assert wrap_words(" idle (1): ", ["a"], 40) == [" idle (1): a".ljust(40)]
    assert wrap_words(" x: ", ["y" * 100], 20)[0].endswith("…")  # one word longer than the line


def test_fit_counts_cells_not_characters() -> None:
    assert fit("模型", 3) == "模…"  # two wide characters do not fit in three cells
    assert fit("ab", 4, "right") == "  ab"
    assert fit_left("/a/long/path/model.neff", 12) == "…/model.neff"


def test_the_header_cuts_by_cells_with_the_one_rule() -> None:
    """The header's own cut counted characters: a CJK instance name ran past the line by one cell a character."""
    from rich.cells import cell_len

    from neuron_top import fmt
    from neuron_top.tui.widgets.header import ellipsize

    for text in ("推論サーバー-本番-東京", "plain-name-that-is-long", "e\u0301te\u0301"):
        for width in range(0, 12):
            out = ellipsize(text, width)
            assert cell_len(out) <= width and out == fmt.cut(text, width, cell_len)
            assert out == text or out.endswith("…") or width == 0

"""Key names as the footer shows them, in the help too; a legend of symbols and units; plurals."""

from __future__ import annotations

import re

from textual.binding import Binding

from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.keys import binding_keys, key_name
from neuron_top.tui.screens.help import help_sections
from tests.helpers import demo_snapshots, feed, make_app, statics_text

RAW = re.compile(r"_sign|_mark|_bracket|^slash$|^comma$|full_stop|^escape$|^enter$|ctrl\+|^colon$")


def test_key_names_are_textuals_own_display() -> None:
    assert key_name("equals_sign") == "="
    assert key_name("question_mark") == "?"
    assert key_name("left_square_bracket") == "["
    assert key_name("ctrl+l") == "^l"
    assert key_name("escape") == "esc"
    assert key_name("shift+left") == "shift+←"
    assert binding_keys(Binding("plus,equals_sign", "zoom", "zoom in")) == "+ / ="
    assert binding_keys(Binding("f1", "x", "y", key_display="F1")) == "F1"
    app = NeuronTopApp(None)
    for b in NeuronTopApp.BINDINGS:  # the footer's own rule gives the same names
        assert isinstance(b, Binding)
        assert key_name(b.key) == app.get_key_display(b)


def test_the_help_has_no_raw_key_names_and_explains_the_symbols() -> None:
    sections = dict(help_sections(list(NeuronTopApp.BINDINGS)))
    for title, rows in sections.items():
        for keys, _ in rows:
            for k in keys.split(" / "):
                assert not RAW.search(k), (title, keys)
    assert ("1-9", "select tab n (1: all apps)") in sections["Dashboard"]
    legend = dict(sections["Symbols and units"])
    for symbol in ("-", "0%, 0.0/s", "err", "1.2ms*", "err/s", "bad/s", "done/s, werr/s, nerr/s",
                   "timeout, bad in, noqueue", "STALE", "NO DATA"):
        assert symbol in legend
    assert "not the same as 0" in legend["-"] and "per second" in legend["done/s, werr/s, nerr/s"]
    assert "errors by type" in legend["err/s"] and "did not complete cleanly" in legend["bad/s"]
    assert "counts in the last report" in legend["timeout, bad in, noqueue"]


def test_every_key_row_reads_in_lower_case_as_the_footer_does() -> None:
    """The memory tree's rows read "Up", "Page up", "Expand/collapse" among "up", "open core", "next layout"."""
    capitalised = [(title, keys, what) for title, rows in help_sections(list(NeuronTopApp.BINDINGS))
                   if title != "Symbols and units" for keys, what in rows
                   if what[:1].isupper() and not what.split()[0].isupper()]  # FLOPS, NC, ECC are names
    assert not capitalised, capitalised


async def test_the_help_screen_shows_human_names_and_the_legend() -> None:
    app = make_app(demo_snapshots("inf1.xlarge", 3, 5))
    async with app.run_test(size=(100, 40)) as pilot:
        await feed(pilot)
        await pilot.press("question_mark")
        shown = statics_text(app.screen, 100)
        assert "equals_sign" not in shown and "question_mark" not in shown
        assert "Symbols and units" in shown and "noqueue" in shown


def test_one_error_is_singular() -> None:
    from neuron_top.fmt import plural

    assert plural(1, "error") == "1 error" and plural(0, "error") == "0 errors"
    assert plural(12345, "line") == "12,345 lines" and plural(2, "child", "children") == "2 children"


def test_the_scrubbers_marks_do_not_read_as_keys() -> None:
    """The scrubber's legend (``x`` errors, ``z`` stall, ``- / +`` app stopped / started) was a section like the
    keys' under "Replay scrubber": pressed, ``-`` and ``+`` change the speed and ``z`` does nothing."""
    sections = help_sections(list(NeuronTopApp.BINDINGS))
    title, rows = next((t, r) for t, r in sections if t.startswith("Replay scrubber"))
    assert "not keys" in title
    assert ": (a key)" in dict(rows) and ":" not in dict(rows)  # the one key among them says so

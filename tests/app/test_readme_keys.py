"""The README's key tables and the help screen (`?`, generated from the bindings) name the same keys: every key
the help lists for the dashboard, replay, the timeline and the fleet is in the README's table for it, and every key
in those tables is bound. Needs Textual (the bindings live on the screens), not a running app."""

from __future__ import annotations

import re

import pytest

from neuron_top.tui.app import NeuronTopApp
from neuron_top.tui.screens.help import help_sections
from tests.readme import key_table

NAMED = {"ctrl+c": "^c", "ctrl+p": "^p", "ctrl+l": "^l", "ctrl+←": "^←", "ctrl+→": "^→", "enter": "⏎",
         "esc": "esc", "tab": "tab", "shift+tab": "shift+tab", "space": "space", "home": "home", "end": "end",
         "pgup": "pgup", "pgdn": "pgdn"}
"""README's words for keys -> the help's (tui/keys.py) names."""

ARROWS = set("↑↓←→")


def readme_keys(cell: str) -> set[str]:
    """The keys a README key cell names: each `code` span, and the key words written plainly (Enter, Ctrl+C,
    Home, ↑ ...)."""
    cell = cell.replace("`1`-`9`", "`1-9`").replace("Ctrl+← →", "Ctrl+← Ctrl+→")
    keys = set(re.findall(r"`([^`]+)`", cell))
    plain = re.sub(r"`[^`]+`", " ", cell)
    for word in re.split(r"[\s,()/]+", plain):
        name = NAMED.get(word.lower())
        if name:
            keys.add(name)
        elif word in ARROWS:
            keys.add(word)
    return {k for k in keys if not k.startswith("--")}


def help_keys(rows: list[tuple[str, str]]) -> set[str]:
    """The keys of help rows: 'q / ^c' -> {q, ^c}."""
    return {k.strip() for keys, _ in rows for k in keys.split(" / ")}


@pytest.fixture(scope="module")
def sections() -> dict[str, set[str]]:
    return {title: help_keys(rows) for title, rows in help_sections(list(NeuronTopApp.BINDINGS))}


def table_keys(section_prefix: str) -> set[str]:
    return set().union(*(readme_keys(row[0]) for row in key_table(section_prefix)))


EVERYWHERE = "Keys everywhere"

CASES = {
    # README section: (help sections whose keys it must list, help sections whose keys it may also list,
    #                  keys the help lists that the README says in words or leaves to "Keys everywhere")
    "Keys": (["Dashboard"], [EVERYWHERE, "App tabs", "NeuronCore grid"], set()),
    "Recording and replay": (["Replay (neuron-top replay FILE)"], [], {"="}),
    "System traces": (["Timeline (T, or neuron-top trace FILE)"], [], {"=", "shift+←", "shift+→", "home", "end", "esc"}),
    "Fleet view": (["Fleet (neuron-top fleet)"], ["Fleet heat map (h)"],
                   {"click a title", "double click a host"}),
}
"""`=` is `+` on a keyboard without shift; the timeline's "Shift for a page", "Home / End" and Esc (closes what is open, as
everywhere) are said in words."""


@pytest.mark.parametrize("readme_section", sorted(CASES))
def test_the_help_and_the_readme_name_the_same_keys(readme_section: str, sections: dict[str, set[str]]) -> None:
    must, may, in_words = CASES[readme_section]
    bound = set().union(*(sections[t] for t in must))
    documented = table_keys(readme_section)
    assert not bound - documented - in_words, (
        f"help lists keys the README's {readme_section!r} table does not: {sorted(bound - documented - in_words)}")
    allowed = bound | set().union(*(sections[t] for t in may))
    assert not documented - allowed, (
        f"README's {readme_section!r} table names keys the help does not list: {sorted(documented - allowed)}")


def test_every_symbol_the_readme_says_the_legend_explains_is_in_it() -> None:
    """README: "`?` ends with a legend of the symbols and units: ..." names each symbol; the help's legend has each."""
    from neuron_top.tui.screens.help import LEGEND
    from tests.readme import README

    text = README.read_text()
    start = text.index("`?` ends with a legend")
    said = re.findall(r"`([^`]+)`", text[start:text.index("\n\n", start)])[1:]  # [0] is `?` itself
    assert len(said) >= 12, said
    keys = set()
    for key, _ in LEGEND:
        for part in key.split(", "):
            keys |= {part, *part.split()}
    assert not set(said) - keys, f"the README says the legend explains {sorted(set(said) - keys)}; it does not"

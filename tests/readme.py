"""The README read as data, for the tests that hold its claims to the code: its sections, tables, usage lines and
the `--options` it names. Headless (no Textual), so tests/unit can use it."""

from __future__ import annotations

import re
from functools import cache

from tests.conftest import ROOT

README = ROOT / "README.md"


@cache
def sections() -> dict[str, str]:
    """Heading text (without the #s) -> the section's text up to the next heading of any level."""
    out: dict[str, str] = {}
    title, lines = "", []
    fenced = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,4} ", line):
            out[title] = "\n".join(lines)
            title, lines = line.lstrip("#").strip(), []
        else:
            lines.append(line)
    out[title] = "\n".join(lines)
    return out


def section(prefix: str) -> str:
    """The one section whose heading starts with ``prefix``."""
    found = [text for title, text in sections().items() if title.startswith(prefix)]
    assert len(found) == 1, f"README: {len(found)} sections start with {prefix!r}"
    return found[0]


def _cells(line: str) -> list[str]:
    """A table row's cells; a `|` inside backticks is text, not a cell edge."""
    cells, cell, code = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += ch
    cells.append(cell.strip())
    return cells


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each Markdown table in ``text``: (its head's cells, its body rows' cells)."""
    out: list[tuple[list[str], list[list[str]]]] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            out.append((_cells(block[0]), [_cells(row) for row in block[2:]]))
        block = []
    return out


def key_table(prefix: str) -> list[list[str]]:
    """The rows of the section's first table headed `key | action`."""
    for head, rows in tables(section(prefix)):
        if head[:2] == ["key", "action"]:
            return rows
    raise AssertionError(f"README: no key table in the section {prefix!r}")


def usage_lines() -> dict[str, list[str]]:
    """The synopsis blocks: command ("" for plain neuron-top, else the subcommand) -> its lines, continuation lines
    (indented, or `common:`) joined to the command they continue. A line naming two commands (`A ... / B ...`)
    is split between them."""
    out: dict[str, list[str]] = {}
    text = README.read_text()
    for block in re.findall(r"```\n(neuron-top .*?)```", text, re.S):
        command = None
        for line in block.splitlines():
            for part in line.split("  /  "):
                m = re.match(r"\s*neuron-top(?: (\w+))?(?= |$)", part)
                if m:
                    command = m.group(1) if m.group(1) in _COMMANDS else ""  # `neuron-top ... --export`: any
                assert command is not None, f"README: a usage line before any command: {line!r}"
                out.setdefault(command, []).append(part)
    return out


_COMMANDS = {"demo", "replay", "trace", "record", "export", "health", "fleet"}

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
"""A long option as the README writes it."""


def options(text: str) -> set[str]:
    return set(OPTION.findall(text))

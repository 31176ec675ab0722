"""The README's (and ARCHITECTURE's) checkable claims held to the code, class by class: every `--option` a usage line
or a written-out command gives a command exists in that command's parser, every option named exists somewhere, the
defaults it states are the parsers'; its exporter table is what the exporter serves (each family, with the labels
the table gives it, and no served family left out); every file and folder named exists; every panel has its key and
a row. The key tables against the help screen are in tests/app/test_readme_keys.py (they need Textual)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from neuron_top.cli.export_cmd import export_parser
from neuron_top.cli.fleet_cmd import fleet_parser
from neuron_top.cli.health_cmd import health_parser
from neuron_top.cli.main import demo_parser, main_parser, record_parser, replay_parser, trace_parser
from neuron_top.export import exposition
from neuron_top.sources.demo import generate
from tests.conftest import ROOT
from tests.readme import README, options, section, tables, usage_lines

PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "": main_parser, "demo": demo_parser, "replay": replay_parser, "trace": trace_parser, "record": record_parser,
    "export": export_parser, "health": health_parser, "fleet": fleet_parser,
}

FOREIGN = {"--port": "AWS's neuron-monitor-prometheus.py", "--path": "node_exporter's --path.rootfs",
           "--ignore": "pytest's", "--timestamps": "kubectl logs'"}
"""Options the README names that belong to other programs."""

SCRIPTS = {"--list", "--only"}
"""scripts/make_screenshots.py's options (checked against its own text below)."""


def parser_options(make: Callable[[], argparse.ArgumentParser]) -> set[str]:
    return {s for a in make()._actions for s in a.option_strings if s.startswith("--")}


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_option_of_a_usage_line_is_in_that_commands_parser(command: str) -> None:
    lines = usage_lines()
    assert command in lines, f"README has no usage line for neuron-top {command}"
    named = options("\n".join(lines[command]))
    assert named, lines[command]
    missing = named - parser_options(PARSERS[command])
    assert not missing, f"README's usage of neuron-top {command} names options its parser lacks: {sorted(missing)}"


def test_every_option_the_readme_names_exists() -> None:
    ours = set().union(*(parser_options(make) for make in PARSERS.values()))
    named = options(README.read_text()) - FOREIGN.keys()
    assert not named - ours - SCRIPTS, sorted(named - ours - SCRIPTS)
    script = (ROOT / "scripts" / "make_screenshots.py").read_text()
    assert all(f'"{o}"' in script for o in SCRIPTS & named)


# --- the exporter's table ----------------------------------------------------------------------------------------

INSTANCE = {"instance_name", "instance_id", "instance_type", "availability_zone", "region", "subnet_id"}


def expand(token: str) -> tuple[list[str], set[str]]:
    """`a_{x,y}_b` -> [a_x_b, a_y_b] (each brace in turn); `name{l1,l2}` -> ([name], {l1, l2}): a label list."""
    m = re.fullmatch(r"(\w*[a-z0-9])\{([\w,]+)\}", token)
    if m:
        return [m.group(1)], set(m.group(2).split(","))
    m = re.match(r"(\w*)\{([\w,]+)\}(.*)", token)
    if m:
        return [name for part in m.group(2).split(",") for name in expand(m.group(1) + part + m.group(3))[0]], set()
    return [token], set()


def readme_families() -> dict[str, tuple[set[str], set[str], str]]:
    """Sample name -> (the label names the table gives it beyond the instance labels, those it puts in brackets:
    `(+ runtime_tag)`, on some of the row's families only; the row's label cell)."""
    table = next(rows for head, rows in tables(section("Prometheus exporter")) if head == ["families", "labels"])
    out: dict[str, tuple[set[str], set[str], str]] = {}
    for name_cell, label_cell in table:
        if name_cell.startswith("all below"):
            continue
        own: list[str] = []
        m = re.match(r"(?:\(\+ `(?P<optional>[^`]*)`\) )?\+ `(?P<own>[^`]*)`(?P<alt>(?: / `[^`]*`)*)", label_cell)
        optional = {m.group("optional")} if m and m.group("optional") else set()
        if m:  # "+ `runtime_tag, neuroncore, memory_location="None"`": the row's extra labels
            own = [part.split("=")[0].strip() for part in m.group("own").split(",")]
        # "+ `runtime_tag, error_type` / `status_type`": the last label is the first family's, each `/` the next's
        alternatives = [own[-1], *re.findall(r"`([^`]*)`", m.group("alt"))] if m and m.group("alt") else []
        rows = [t for t in re.findall(r"`([^`]+)`", name_cell) if not t.startswith("_")]  # (+ `_created`): skip
        for i, token in enumerate(rows):
            labels = set(own[:-1]) | {alternatives[i]} if alternatives else set(own)
            names, listed = expand(token)
            for name in names:
                out[name] = (labels | listed, optional, label_cell)
    return out


@pytest.fixture(scope="module")
def served() -> dict[str, list[dict[str, str]]]:
    """Sample name -> each sample's labels, on three seeded trn2 reports (runtimes, device latency, hardware info,
    neuron_k8s_info's pods). A family declared with no sample (no metric-group error yet) maps to []."""
    text = exposition(generate("trn2.48xlarge", 7, 3))
    out: dict[str, list[dict[str, str]]] = {}
    for fam in text_string_to_metric_families(text):
        out.setdefault(fam.name, [])
        for s in fam.samples:
            out.setdefault(s.name, []).append(s.labels)
    return out


def test_the_readme_table_lists_families_and_their_labels() -> None:
    fams = readme_families()
    assert len(fams) > 30 and "neurontop_source_info" in fams and "execution_errors_total" in fams


def test_every_family_of_the_readme_table_is_served_with_its_labels(served: dict) -> None:
    for name, (labels, optional, cell) in readme_families().items():
        assert name in served, f"README's exporter table lists {name}; the exporter does not serve it"
        for sample in served[name]:
            have = set(sample)
            if name.startswith("neurontop_") and "no instance labels" in cell:
                assert not have & INSTANCE, (name, sample)
            else:
                assert have >= INSTANCE, f"{name} lacks instance labels: {sample}"
            assert labels <= have, f"{name}: the README says {sorted(labels)}, it has {sample}"
            extra = have - INSTANCE - labels - optional - {"ultraserver_id"}
            assert not extra, f"{name} carries labels the README's table does not give: {sorted(extra)}"


def test_every_served_family_is_in_the_readme_table(served: dict) -> None:
    listed = readme_families()
    ours = {n for n in served if not n.startswith(("process_", "python_")) and not n.endswith("_created")}
    # prometheus_client's parser names a counter's family without _total; its sample carries it
    ours = {n for n in ours if f"{n}_total" not in served}
    assert not ours - listed.keys(), f"served, but not in the README's exporter table: {sorted(ours - listed.keys())}"


# --- files and folders ---------------------------------------------------------------------------------------------

DOCS = ("README.md", "docs/ARCHITECTURE.md")
PLACES = ("", "neuron_top", "neuron_top/tui", *(f"neuron_top/{p}" for p in (
    "tui/screens", "tui/widgets", "tui/render", "sources", "recording", "trace", "fleet", "k8s", "export", "cli",
    "output")), "examples", "tests/unit")
"""Where a name the docs give may be: ARCHITECTURE's table names files relative to their folder's row."""
NOT_OURS = {"neuron-monitor-prometheus.py": "AWS's exporter", "system_profile.json": "neuron-explorer's output",
            "config.toml": "the user's settings file"}


def named_paths(text: str) -> set[str]:
    """`code` spans that name a file (an extension) or a folder (a slash inside or at the end), not rates
    (`err/s`), resources (`aws.amazon.com/neuron`), absolute or home paths."""
    out = set()
    for tok in re.findall(r"`([^`\s]+)`", text):
        if not re.fullmatch(r"[\w.+-]+(/[\w.+-]*)*", tok) or ("." in tok.split("/")[0].lstrip(".") and "/" in tok):
            continue  # placeholders (<pid>, *), paths from / or ~, and domains (aws.amazon.com/neuron)
        if re.search(r"\.(py|ya?ml|json|toml|md|proto|svg)$", tok) or tok.endswith("/") or (
                "/" in tok and not re.search(r"/(s|u|pod)$", tok)):
            out.add(tok)
    return out


@pytest.mark.parametrize("doc", DOCS)
def test_every_file_and_folder_the_docs_name_exists(doc: str) -> None:
    named = named_paths((ROOT / doc).read_text()) - NOT_OURS.keys()
    assert len(named) > 20
    missing = {p for p in named if not any((ROOT / place / p).exists() for place in PLACES)}
    assert not missing, f"{doc} names files that are not there: {sorted(missing)}"


# --- panels ----------------------------------------------------------------------------------------------------------


def test_every_panel_has_its_key_and_a_row_in_the_readme() -> None:
    """"Each panel has a key that hides or shows it: `C` NeuronCores, ..." names every panel of ``layouts.PANELS``
    by its key, and each name so given has a row in the panel table (ARCHITECTURE: add a row for a new panel)."""
    from neuron_top.layouts import PANELS

    text = section("Layouts and panels")
    said = " ".join(text[text.index("Each panel has a key"):text.index("cycles the layouts")].split())
    named = dict(re.findall(r"`([A-Z])` ([\w ]+?)(?= \(|,|\. |$)", said))
    assert named.keys() == {p.key for p in PANELS}, named
    rows = {row[0] for head, rows in tables(section("What you see")) if head[:1] == ["panel"] for row in rows}
    assert not set(named.values()) - rows, f"panels the key list names with no row: {set(named.values()) - rows}"


DEFAULTS = [
    # (command, option's dest, what the README says, the parser's default)
    ("demo", "instance", "the built-in simulator of a trn2.48xlarge", "trn2.48xlarge"),
    ("export", "listen", "it serves `/metrics` on `:8000` by default", ":8000"),
    ("health", "seconds", "it reads reports for `--for` seconds (12)", 12.0),
    ("fleet", "ecc_window", "for `--ecc-window` (15 min)", "15m"),
    ("fleet", "rate_window", "one-minute rates", "1m"),
]


@pytest.mark.parametrize(("command", "dest", "said", "default"), DEFAULTS)
def test_the_defaults_the_readme_gives_are_the_parsers(command: str, dest: str, said: str, default: object) -> None:
    assert said in " ".join(README.read_text().split()), f"the README no longer says {said!r}: update this test"
    parser = PARSERS[command]()
    assert parser.get_default(dest) == default, f"neuron-top {command}: {dest} defaults to {parser.get_default(dest)}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_written_out_in_the_docs_parses(doc: str) -> None:
    """A `neuron-top CMD ... --option` span in the prose (`neuron-top trace FILE --check`,
    `neuron-top demo --emit | neuron-top`) names only options of CMD's parser."""
    spans = [seg.strip() for span in re.findall(r"`(neuron-top[^`]*)`", (ROOT / doc).read_text())
             for seg in span.split("|")]
    checked = 0
    for seg in spans:
        m = re.match(r"neuron-top(?: (\w+))?", seg)
        command = m.group(1) if m and m.group(1) in PARSERS else ""
        if m and options(seg):
            assert options(seg) <= parser_options(PARSERS[command]), f"{doc}: {seg!r}"
            checked += 1
    assert checked or doc != "README.md"

"""The headless core must run without the TUI: importing it never pulls in textual or rich."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import neuron_top
from tests.conftest import ROOT

UI = "neuron_top.tui"
"""Everything Textual lives in this one package; every other module is the headless core."""


def core_modules() -> list[str]:
    mods = [m.name for m in pkgutil.walk_packages(neuron_top.__path__, "neuron_top.")]
    return sorted(m for m in mods if not (m == UI or m.startswith(UI + ".")) and m != "neuron_top.__main__")


def test_core_does_not_import_textual_or_rich() -> None:
    mods = core_modules()
    assert {"neuron_top.decode", "neuron_top.recording.index", "neuron_top.trace.loaders",
            "neuron_top.recording.player", "neuron_top.cli.main"} <= set(mods)
    code = ("import sys\n" + "".join(f"import {m}\n" for m in mods)
            + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
            + "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_import_contracts_name_every_core_module() -> None:
    """A new core module must be under the import-linter contracts, or the contracts would not hold it."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    top = {m.name for m in pkgutil.iter_modules(neuron_top.__path__, "neuron_top.")}
    core = top - {UI, "neuron_top.cli", "neuron_top.__main__"}
    for contract in contracts[:2]:
        assert set(contract["source_modules"]) == core, contract["name"]


UNIT = ROOT / "tests" / "unit"


def imported_names(path: Path, *, top_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in tree.body if top_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def ui_imports(path: Path, seen: set[Path], *, helper: bool = False) -> list[str]:
    """The textual, rich or TUI modules ``path`` imports, itself or through the test helpers it imports (a
    helper's imports at its top: one inside a helper's function, as ``make_app``'s, runs only when it is called)."""
    seen.add(path)
    bad = []
    for name in sorted(imported_names(path, top_only=helper)):
        if name.split(".")[0] in ("textual", "rich") or name == UI or name.startswith(UI + "."):
            bad.append(name)
        elif name.split(".")[0] == "tests":
            helper = ROOT.joinpath(*name.split("."))
            helper = helper / "__init__.py" if helper.is_dir() else helper.with_suffix(".py")
            if helper.exists() and helper not in seen:
                bad += [f"{name}: {b}" for b in ui_imports(helper, seen, helper=True)]
    return bad


def test_unit_tests_are_headless() -> None:
    """``tests/unit`` holds the core's tests: none imports textual, rich or the TUI, at the top or inside a test,
    nor through a helper (Pilot tests live in tests/app, the real program and real servers in tests/e2e)."""
    found = {path.name: bad for path in sorted(UNIT.glob("*.py")) if (bad := ui_imports(path, set()))}
    assert len(list(UNIT.glob("test_*.py"))) > 40
    assert found == {}

"""The headless core must run without the TUI: importing it never pulls in textual or rich."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

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

"""The headless core must run without the TUI: importing it never pulls in textual or rich."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

CORE = ["neuron_top", "neuron_top.schema", "neuron_top.decode", "neuron_top.snapshot", "neuron_top.history",
        "neuron_top.once", "neuron_top.view", "neuron_top.fmt", "neuron_top.textsafe", "neuron_top.cli",
        "neuron_top.sources.base"]


def test_core_does_not_import_textual_or_rich() -> None:
    code = ("import sys\n" + "".join(f"import {m}\n" for m in CORE)
            + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
            + "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

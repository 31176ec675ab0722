"""The panels' data helpers stay importable without the TUI (they are used by tests and could be by scripts)."""

from __future__ import annotations

import subprocess
import sys


def test_memtree_and_alerts_do_not_import_textual_or_rich() -> None:
    code = ("import sys, neuron_top.memtree, neuron_top.alerts; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


"""The sources and config are headless: importing them must not pull in textual or rich."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_sources_import_without_the_tui() -> None:
    code = (
        "import sys\n"
        "import neuron_top.config, neuron_top.sources.framing, neuron_top.sources.stream\n"
        "import neuron_top.sources.monitor, neuron_top.sources.host, neuron_top.sources.sysfs\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""

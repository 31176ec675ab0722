"""Start-up benchmarks run with bytecode in place, as any normal install has it."""

from __future__ import annotations

import compileall
from pathlib import Path


def compile_bytecode(root: Path) -> None:
    """Write neuron_top's .pyc files (pip compiles them at install time).

    This machine sets PYTHONDONTWRITEBYTECODE=1, so an editable checkout would otherwise recompile every module of
    ours on each start (~0.25 s here) while Textual's came precompiled: that measures the environment, not us."""
    compileall.compile_dir(str(root / "neuron_top"), quiet=1)

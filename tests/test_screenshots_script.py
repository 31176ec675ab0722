"""scripts/make_screenshots.py keeps working, and screenshots/ holds what it makes now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "make_screenshots.py"


def test_the_committed_screenshots_are_what_the_script_makes_now(tmp_path: Path) -> None:
    """Every shot, made into a temp dir, equals its SVG in screenshots/ byte for byte (the shots are
    deterministic: demo seeds, fixed sizes, UTC). A change to a screen that left the README's pictures behind
    fails here, with the command that makes them again."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in (ROOT / "screenshots").glob("*.svg"))
    assert made == committed, "screenshots/ and the script's shots differ: run python scripts/make_screenshots.py"
    svg = (tmp_path / "dashboard-80x24.svg").read_text()
    assert svg.lstrip().startswith("<svg")
    assert "NeuronCore" in svg and "ND15" in svg
    stale = [name for name in made
             if (tmp_path / name).read_bytes() != (ROOT / "screenshots" / name).read_bytes()]
    assert not stale, f"stale in screenshots/: {', '.join(stale)}; run python scripts/make_screenshots.py"


def test_only_makes_one_shot(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--only", "help", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["help.svg"]


def test_list_names_every_shot() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--list"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    names = {line.split()[0] for line in out.stdout.splitlines()}
    assert {"dashboard-200x60", "dashboard-120x40", "dashboard-80x24", "flops", "layout-cores", "core-detail",
            "app-detail", "help", "light-theme", "replay", "timeline"} <= names

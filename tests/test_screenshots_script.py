"""scripts/make_screenshots.py keeps working: one shot into a temp dir, and the list of shots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "make_screenshots.py"


def test_one_screenshot_into_a_temp_dir(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--only", "dashboard-80x24", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["dashboard-80x24.svg"]
    svg = (tmp_path / "dashboard-80x24.svg").read_text()
    assert svg.lstrip().startswith("<svg")
    assert "NeuronCore" in svg and "ND15" in svg


def test_list_names_every_shot() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--list"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    names = {line.split()[0] for line in out.stdout.splitlines()}
    assert {"dashboard-200x60", "dashboard-120x40", "dashboard-80x24", "flops", "layout-cores", "core-detail",
            "app-detail", "help", "light-theme", "replay", "timeline"} <= names

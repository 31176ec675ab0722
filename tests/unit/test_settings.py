"""The settings file (theme, layout, panels) and the layout presets: headless, no Textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from neuron_top.layouts import EXTRAS, PANEL_IDS, PANELS, PRESETS, LayoutState
from neuron_top.settings import Settings, SettingsStore, config_path, format_settings, parse_settings
from tests.conftest import ROOT


def test_the_path_follows_xdg_config_home_and_falls_back_to_home() -> None:
    assert config_path({"XDG_CONFIG_HOME": "/x/conf", "HOME": "/h"}) == Path("/x/conf/neuron-top/config.toml")
    assert config_path({"HOME": "/h"}) == Path("/h/.config/neuron-top/config.toml")
    # the XDG rule: a relative path is invalid and ignored
    assert config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path("/h/.config/neuron-top/config.toml")


def test_written_settings_read_back_and_nothing_else_is_left(tmp_path: Path) -> None:
    path = tmp_path / "neuron-top" / "config.toml"
    store = SettingsStore.open(path)
    assert store.settings == Settings() and store.problems == [] and store.writable
    state = LayoutState.preset("full").toggle("ecc")
    assert store.update(Settings(theme='my "odd" theme', layout=state.name).with_layout(state)) is None
    again = SettingsStore.open(path)
    assert again.problems == []
    assert again.settings.theme == 'my "odd" theme'
    assert again.settings.layout_state() == state
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # written atomically, no temp file left


def test_a_preset_is_saved_without_its_panels(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    store = SettingsStore.open(path)
    store.update(Settings().with_layout(LayoutState.preset("memory")))
    text = path.read_text()
    assert 'layout = "memory"' in text and "panels =" not in text
    assert SettingsStore.open(path).settings.layout_state() == LayoutState.preset("memory")


@pytest.mark.parametrize(("text", "problem"), [
    ("this is = not = toml", "not valid TOML"),
    (b"\xff\xfe\x00".decode("latin-1"), "cannot read"),
])
def test_a_broken_file_is_reported_skipped_and_never_written_over(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="latin-1")
    store = SettingsStore.open(path)
    assert store.settings == Settings() and not store.writable
    assert len(store.problems) == 1 and problem in store.problems[0] and str(path) in store.problems[0]
    why = store.update(Settings(theme="neuron-light"))
    assert why is not None and "not saved" in why
    assert path.read_text(encoding="latin-1") == text


def test_an_unreadable_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.mkdir()  # reading a directory fails
    store = SettingsStore.open(path)
    assert not store.writable and "cannot read" in store.problems[0]


def test_wrong_values_are_reported_and_the_rest_kept() -> None:
    settings, problems = parse_settings('theme = 3\nlayout = "huge"\npanels = ["cores", "bogus", "ecc"]\n'
                                        'colour = "on"\n')
    assert settings.theme is None and settings.layout is None
    assert settings.panels == ("cores", "ecc")
    assert settings.extra == (("colour", "on"),)
    assert len(problems) == 4
    assert any("theme" in p for p in problems) and any("'huge'" in p for p in problems)
    assert any("bogus" in p for p in problems) and any("'colour' (kept)" in p for p in problems)
    assert 'colour = "on"' in (format_settings(settings) or "")


def test_a_kept_value_that_cannot_be_written_back_stops_saving(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[colours]\nred = 1\n")
    store = SettingsStore.open(path)
    why = store.update(Settings(theme="x", extra=store.settings.extra))
    assert why is not None and "cannot write back" in why
    assert path.read_text() == "[colours]\nred = 1\n"


def test_presets_cycle_and_keys_make_a_custom_layout() -> None:
    state = LayoutState()
    assert state.name == "overview" and state.extras == EXTRAS["overview"]
    seen = [state.name]
    for _ in range(len(PRESETS)):
        state = state.next()
        seen.append(state.name)
    assert seen == [*PRESETS, "overview"]
    custom = LayoutState().toggle("latency", frozenset(PRESETS["overview"]) | {"latency"})
    assert custom.custom and "latency" not in custom.panels and custom.extras == ()
    assert custom.next() == LayoutState.preset("full")  # a preset again, with its own panels
    assert {p.id for p in PANELS} == set(PANEL_IDS) and len({p.key for p in PANELS}) == len(PANELS)
    assert all(set(panels) <= set(PANEL_IDS) for panels in PRESETS.values())


def test_the_layout_flag_is_checked(tmp_path: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "neuron_top", "demo", "--layout", "huge"], cwd=ROOT,
                         capture_output=True, timeout=60)
    assert bad.returncode == 2 and b"invalid choice: 'huge'" in bad.stderr
    from neuron_top.cli.main import demo_parser

    assert demo_parser().parse_args(["--layout", "cores"]).layout == "cores"

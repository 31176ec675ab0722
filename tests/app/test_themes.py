"""Theme files: every shipped theme loads; a broken file is reported and skipped, never fatal."""

from __future__ import annotations

from pathlib import Path

from neuron_top.tui.themes import load_themes
from tests.conftest import ROOT


def test_shipped_themes_load() -> None:
    ts = load_themes([ROOT / "themes"])
    assert ts.problems == []
    assert {"neuron-dark", "neuron-light", "neuron-16", "solarized-dark"} <= set(ts.themes)
    assert ts.ansi == {"neuron-16"} and not ts.themes["neuron-light"].dark


def test_broken_theme_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a-bad-colour.toml").write_text('name = "x"\nprimary = "reed"\n')
    (tmp_path / "b-not-toml.toml").write_text("name = [\n")
    (tmp_path / "c-unknown-key.toml").write_text('primary = "#fff"\nflavour = "mint"\n')
    (tmp_path / "d-good.toml").write_text('name = "good"\nprimary = "#ff9900"\n')
    ts = load_themes([tmp_path])
    assert list(ts.themes) == ["good"]
    assert len(ts.problems) == 3
    assert "primary" in ts.problems[0] and "not valid TOML" in ts.problems[1] and "flavour" in ts.problems[2]


async def test_app_survives_a_broken_theme(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bad.toml").write_text('primary = "not-a-colour"\n')
    monkeypatch.setenv("NEURON_TOP_THEMES", str(tmp_path))
    from tests.helpers import make_app

    app = make_app(theme="no-such-theme")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("bad.toml" in m for m in messages)
        assert any("unknown theme" in m for m in messages)
        assert app.theme == "neuron-dark"


def test_ansi_themes_define_what_textual_reads_in_ansi_mode(tmp_path: Path) -> None:
    """Without ``ansi-background`` Textual's Screen CSS fails and the app stops at start-up."""
    (tmp_path / "mine.toml").write_text('name = "mine"\nansi = true\ndark = false\nprimary = "ansi_blue"\n')
    ts = load_themes([ROOT / "themes", tmp_path])
    assert ts.themes["neuron-16"].variables["ansi-background"] == "ansi_black"
    assert ts.themes["mine"].variables["ansi-background"] == "ansi_white"
    assert "ansi-background" not in ts.themes["neuron-dark"].variables


def test_own_themes_are_found_beside_config_toml_under_xdg_config_home(tmp_path, monkeypatch) -> None:
    """config.toml follows $XDG_CONFIG_HOME but themes were looked up in ~/.config literally: a user with
    XDG_CONFIG_HOME set had settings in one place and themes ignored in it."""
    from neuron_top.settings import config_path
    from neuron_top.tui.themes import theme_dirs

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tmp_path / "xdg" / "neuron-top" / "themes" in theme_dirs()
    assert config_path().parent / "themes" in theme_dirs()
    assert not any(str(d).startswith(str(tmp_path / "home")) for d in theme_dirs())

"""Theme files (TOML) turned into Textual ``Theme`` objects.

Looked up in order: ``$NEURON_TOP_THEMES``, ``$XDG_CONFIG_HOME/neuron-top/themes`` (``~/.config/...`` when it is
unset: beside ``config.toml``), the repository's top-level
``themes/`` (a clone or editable install) and ``<prefix>/share/neuron-top/themes`` (a wheel install). A theme file
that cannot be read or has bad colours is reported once and skipped; it never stops the app.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.color import Color, ColorParseError
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.theme import Theme

from neuron_top.settings import config_path

_THEME_HAS_ANSI = "ansi" in getattr(Theme, "__dataclass_fields__", {})
"""Textual 8.2.5 added ``Theme(ansi=True)``: the theme's ANSI colours reach the terminal as they are. Before it,
only Textual's own "textual-ansi" theme did that; ``ThemeSet.install`` gives ours the same (``App.ansi_color``)."""

if TYPE_CHECKING:
    from textual.app import App

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_THEME = "neuron-dark"
OURS = "neuron-top"
STOCK = "Textual"
"""The command palette's two groups of themes: the files of ``theme_dirs`` (shipped and the user's), and the ones
Textual comes with."""
_COLOUR_KEYS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
                "surface", "panel", "boost")


def theme_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("NEURON_TOP_THEMES"):
        dirs.append(Path(os.environ["NEURON_TOP_THEMES"]))
    dirs.append(config_path().parent / "themes")  # beside config.toml: the same XDG rule
    dirs.append(Path(__file__).resolve().parents[2] / "themes")
    dirs.append(Path(sys.prefix) / "share" / "neuron-top" / "themes")
    return dirs


@dataclass
class ThemeSet:
    themes: dict[str, Theme] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """One line per theme file that was skipped, e.g. "themes/x.toml: error: 'reed' is not a colour"."""
    ansi: set[str] = field(default_factory=set)
    """The themes drawn in the terminal's own ANSI colours (``ansi = true`` in the file)."""

    def install(self, app: App, wanted: str) -> None:
        """Register the themes with ``app``, say which files were skipped, and switch to ``wanted`` (the default
        theme, with a warning, when there is no such theme)."""
        for t in self.themes.values():
            app.register_theme(t)
        for problem in self.problems:
            app.notify(problem, title="theme file skipped", severity="warning", timeout=8, markup=False)
        if not _THEME_HAS_ANSI and self.ansi:
            # An older Textual sets ``ansi_color`` on every theme change (True only for "textual-ansi"); the
            # signal comes after that, so an ANSI theme of ours turns the colour conversion off again.
            def follow(theme: Theme) -> None:
                app.ansi_color = theme.name in self.ansi or theme.name == "textual-ansi"

            app.theme_changed_signal.subscribe(app, follow)
        if wanted in app.available_themes:
            app.theme = wanted
        else:
            app.notify(f"unknown theme {wanted!r}; using {DEFAULT_THEME}", severity="warning", markup=False)
            app.theme = DEFAULT_THEME if DEFAULT_THEME in app.available_themes else "textual-dark"

    def groups(self, app: App) -> list[tuple[str, list[str]]]:
        """The app's themes as the command palette lists them: ours (``OURS``), then Textual's stock ones
        (``STOCK``), each in name order."""
        names = sorted(app.available_themes)
        return [(OURS, [n for n in names if n in self.themes]), (STOCK, [n for n in names if n not in self.themes])]

    def commands(self) -> type[Provider]:
        """A command palette provider of the themes, ours first and marked apart from Textual's stock ones (which
        Textual's own provider mixes with ours in one alphabetical list of twenty)."""
        themes = self

        class ThemeCommands(Provider):
            def _hits(self) -> list[tuple[str, str, str]]:
                app = self.app
                return [(f"{group}: {name}", name, f"{group} theme" + (" (in use)" if name == app.theme else ""))
                        for group, names in themes.groups(app) for name in names]

            def _set(self, name: str) -> None:
                self.app.theme = name

            async def discover(self) -> Hits:
                for text, name, note in self._hits():
                    yield DiscoveryHit(text, partial(self._set, name), text, note)

            async def search(self, query: str) -> Hits:
                matcher = self.matcher(query)
                for text, name, note in self._hits():
                    if (score := matcher.match(text)) > 0:
                        yield Hit(score, matcher.highlight(text), partial(self._set, name), text, note)

        return ThemeCommands

    def after(self, app: App) -> str:
        """The theme the ``t`` key switches to: the next of ours (of Textual's when none loaded), in name order."""
        names = sorted(self.themes) or sorted(app.available_themes)
        i = names.index(app.theme) if app.theme in names else -1
        return names[(i + 1) % len(names)]


def _check_colour(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a colour")
    if not value.startswith("ansi_"):
        try:
            Color.parse(value)
        except ColorParseError:
            raise ValueError(f"{value!r} is not a colour") from None
    return value


def load_theme(path: Path) -> Theme:
    """Parse one theme file; raises ValueError with a readable message."""
    return _load(path)[0]


def _load(path: Path) -> tuple[Theme, bool]:
    """The theme in ``path`` and whether it is drawn in the terminal's own ANSI colours."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    name = data.get("name") or path.stem
    if not isinstance(name, str):
        raise ValueError("name must be a string")
    if "primary" not in data:
        raise ValueError("primary colour missing")
    colours = {}
    for key in _COLOUR_KEYS:
        if key in data:
            try:
                colours[key] = _check_colour(data[key])
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ValueError("[variables] must map names to strings")
    unknown = set(data) - {*_COLOUR_KEYS, "name", "dark", "ansi", "variables"}
    if unknown:
        raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
    dark, ansi, variables = bool(data.get("dark", True)), bool(data.get("ansi", False)), dict(variables)
    if ansi:
        # Textual's own CSS reads these in ANSI mode (Screen:inline) and its ANSI themes define them; a theme
        # without them stops the app at start-up with "undefined variable '$ansi-background'".
        variables.setdefault("ansi-background", "ansi_black" if dark else "ansi_white")
        variables.setdefault("ansi-foreground", "ansi_white" if dark else "ansi_black")
    extra = {"ansi": ansi} if _THEME_HAS_ANSI else {}
    return Theme(name=name, dark=dark, variables=variables, **colours, **extra), ansi  # type: ignore[arg-type]


def load_themes(dirs: list[Path] | None = None) -> ThemeSet:
    out = ThemeSet()
    for d in dirs if dirs is not None else theme_dirs():
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.toml")):
            try:
                theme, ansi = _load(path)
            except ValueError as exc:
                out.problems.append(f"{path}: {exc}")
                continue
            out.themes.setdefault(theme.name, theme)
            if ansi and out.themes[theme.name] is theme:  # (a theme of the same name found earlier wins)
                out.ansi.add(theme.name)
    return out

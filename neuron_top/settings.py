"""What the user chose, remembered between runs: ``$XDG_CONFIG_HOME/neuron-top/config.toml`` (no UI imports).

```toml
theme = "neuron-dark"
layout = "overview"
panels = ["cores", "vcpu", "memory", "ecc", "apps"]   # only when the keys changed the layout's own
```

A file that cannot be read or holds wrong values is reported and skipped, never fatal; neuron-top then leaves it
alone (it does not write over a file the user has to fix). Keys it does not know are reported and kept.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from neuron_top.layouts import PANEL_IDS, PRESETS, LayoutState
from neuron_top.textsafe import clean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Settings", "SettingsStore", "config_path"]

_KNOWN = ("theme", "layout", "panels")


def config_path(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_CONFIG_HOME/neuron-top/config.toml``, or ``~/.config/neuron-top/config.toml`` when it is unset or
    not absolute (the XDG base directory rule)."""
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path(env.get("HOME") or Path.home()) / ".config"
    return root / "neuron-top" / "config.toml"


@dataclass(frozen=True, slots=True)
class Settings:
    theme: str | None = None
    layout: str | None = None
    panels: tuple[str, ...] | None = None
    """The panels shown when they differ from the layout's own; None: the layout's."""
    extra: tuple[tuple[str, object], ...] = ()
    """Top-level keys this version does not know, kept as they were."""

    def layout_state(self) -> LayoutState:
        state = LayoutState.preset(self.layout if self.layout in PRESETS else "overview")
        if self.panels is not None:
            state = LayoutState(state.name, frozenset(self.panels), custom=True)
        return state

    def with_layout(self, state: LayoutState) -> Settings:
        return replace(self, layout=state.name, panels=tuple(p for p in PANEL_IDS if p in state.panels)
                       if state.custom else None)


def parse_settings(text: str) -> tuple[Settings, list[str]]:
    """Settings from the file's text, and a line for each thing skipped. Raises ValueError when the text is not
    TOML at all."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    problems: list[str] = []
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        problems.append("theme: must be a string; ignored")
        theme = None
    layout = data.get("layout")
    if layout is not None and layout not in PRESETS:
        problems.append(f"layout: {clean(str(layout), 40)!r} is not one of {', '.join(PRESETS)}; ignored")
        layout = None
    panels = data.get("panels")
    if panels is not None:
        if not isinstance(panels, list) or not all(isinstance(p, str) for p in panels):
            problems.append("panels: must be a list of panel names; ignored")
            panels = None
        else:
            unknown = [p for p in panels if p not in PANEL_IDS]
            if unknown:
                problems.append(f"panels: unknown {', '.join(clean(p, 30) for p in unknown)} ignored "
                                f"(known: {', '.join(PANEL_IDS)})")
            panels = tuple(p for p in panels if p in PANEL_IDS)
    extra = tuple((k, v) for k, v in data.items() if k not in _KNOWN)
    for k, _ in extra:
        problems.append(f"unknown key {clean(k, 40)!r} (kept)")
    return Settings(theme, layout, panels, extra), problems


def _toml_value(value: object) -> str | None:
    """``value`` as TOML, for the simple values a config holds; None for anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string (\uXXXX escapes) is a valid TOML basic string
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return None


def format_settings(s: Settings) -> str | None:
    """The file's text for ``s``; None when a kept unknown key cannot be written back (a table, a date)."""
    lines = ["# neuron-top settings: written when you change the theme (t), the layout (l) or the panels"]
    for key, value in (("theme", s.theme), ("layout", s.layout),
                       ("panels", list(s.panels) if s.panels is not None else None), *s.extra):
        if value is None:
            continue
        text = _toml_value(value)
        if text is None:
            return None
        lines.append(f"{json.dumps(key) if not key.replace('_', '').replace('-', '').isalnum() else key} = {text}")
    return "\n".join(lines) + "\n"


@dataclass
class SettingsStore:
    """The settings file: read once at start, written (whole, atomically) on every change."""

    path: Path
    settings: Settings = field(default_factory=Settings)
    problems: list[str] = field(default_factory=list)
    """What was skipped while reading, one line each (shown to the user at start)."""
    writable: bool = True
    """False when the file could not be read as settings: it is left for the user to fix."""

    @classmethod
    def open(cls, path: Path | None = None) -> SettingsStore:
        path = path if path is not None else config_path()
        store = cls(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return store
        except (OSError, UnicodeDecodeError) as exc:
            store.problems.append(f"{path}: cannot read ({exc}); using the defaults and not writing it")
            store.writable = False
            return store
        try:
            store.settings, problems = parse_settings(text)
        except ValueError as exc:
            store.problems.append(f"{path}: {exc}; using the defaults and not writing it")
            store.writable = False
            return store
        store.problems += [f"{path}: {p}" for p in problems]
        return store

    def update(self, settings: Settings) -> str | None:
        """Remember ``settings`` and write the file; returns why it was not written (None: written or nothing
        changed)."""
        if settings == self.settings:
            return None
        self.settings = settings
        if not self.writable:
            return f"{self.path} has errors: settings not saved until it is fixed"
        text = format_settings(settings)
        if text is None:
            return f"{self.path} holds values neuron-top cannot write back: settings not saved"
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)  # a reader (another neuron-top starting) sees the old file or the new
            tmp = None
        except OSError as exc:
            return f"cannot save settings to {self.path}: {exc.strerror or exc}"
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        return None

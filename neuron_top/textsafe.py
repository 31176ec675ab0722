"""Make strings from the data safe to show.

Tags, model names, instance names and trace event names come from other programs. They must never reach the
terminal as control sequences: every C0/C1 control character (and DEL) is shown as a visible escape such as
``\\x1b``. Markup safety is the UI layer's job (it renders ``Text`` objects, never markup strings).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["clean", "escape_label_value"]

_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))}
# Bidi overrides can reorder what follows them on screen; show them too.
_CONTROL.update(
    {c: f"\\u{c:04x}" for c in (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069)}
)
_TABLE = str.maketrans(_CONTROL)


@lru_cache(maxsize=4096)
def clean(text: object, limit: int = 256) -> str:
    """Return ``text`` as a printable one-line string of at most ``limit`` characters (plus an ellipsis)."""
    s = text if isinstance(text, str) else str(text)
    if len(s) > limit:
        s = s[:limit] + "…"
    return s.translate(_TABLE)


def escape_label_value(value: str) -> str:
    r"""A string as a Prometheus label value or a PromQL string literal writes it: ``\``, ``"`` and newline
    escaped (the text format, OpenMetrics and PromQL agree on these three). The one escaper: the exporter's labels
    and the fleet's queries both use it.

    >>> print(escape_label_value('a "b" \\ c\nd'))
    a \"b\" \\ c\nd
    """
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", r"\\").replace('"', r"\"").replace("\n", r"\n")
    return value

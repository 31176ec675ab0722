"""Key names as people read them (``=`` not ``equals_sign``), the same in the help screen as in the footer.

Textual's own display helpers do the work (``textual.keys.format_key`` and the footer's ``App.get_key_display``
rules: ``^`` for Ctrl, ``+`` between modifiers), so the help and the footer always agree. Any screen may use it
(the timeline's help rows, the dashboard's).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.keys import format_key

__all__ = ["binding_keys", "key_name"]


def key_name(key: str) -> str:
    """One key as the footer shows it: ``equals_sign`` -> ``=``, ``ctrl+l`` -> ``^l``, ``shift+left`` ->
    ``shift+←``, ``escape`` -> ``esc``."""
    modifiers, name = Binding(key.strip(), "").parse_key()
    name = format_key(name)
    if "ctrl" in modifiers:
        modifiers.remove("ctrl")
        name = f"^{name}"
    return "+".join([*modifiers, name])


def binding_keys(binding: Binding) -> str:
    """All the keys of a binding (``"plus,equals_sign"``), named and joined: ``+ / =``; its ``key_display``
    when it has one."""
    if binding.key_display:
        return binding.key_display
    return " / ".join(key_name(k) for k in binding.key.split(",") if k.strip())

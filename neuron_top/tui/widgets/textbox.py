"""``TextBox``: Textual's ``Input`` whose editing keys act in the order they were typed.

Why: Textual's ``Input`` inserts a character where it receives the key, but any other key (Backspace, ←, Home,
Enter, PgUp for the picker's list...) is run as a binding only once the key has bubbled up to the app, after the
characters queued behind it. Keys that arrive in one read (typed fast, pasted, coalesced by ssh) therefore took
effect out of order: ``ab``, Backspace, ``x`` left ``ab`` in the filter box (``x`` was inserted, then Backspace
took it away), and ``a``, Home, ``x`` gave ``ax``. A ``TextBox`` looks the key's binding up where it receives the
key, as the app would (the focused widget's bindings first, then its screen's and the app's), and runs it there,
in turn with the characters.

A key some widget above handles by a ``key_<name>`` method (the screens' Escape) still bubbles up to it, as does a
key no binding takes. ``App._check_bindings`` is private Textual (see ``render/private.py``): without it, keys
go Textual's own way.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from neuron_top.tui.keys import run_binding

__all__ = ["TextBox"]


class TextBox(Input):
    async def _on_key(self, event: events.Key) -> None:
        # the app ran the priority bindings before it handed the key here
        if not event.is_printable and await run_binding(self, event, priority=False):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

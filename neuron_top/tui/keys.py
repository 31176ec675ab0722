"""Key names as people read them (``=`` not ``equals_sign``), the same in the help screen as in the footer.

Textual's own display helpers do the work (``textual.keys.format_key`` and the footer's ``App.get_key_display``
rules: ``^`` for Ctrl, ``+`` between modifiers), so the help and the footer always agree. Any screen may use it
(the timeline's help rows, the dashboard's).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.keys import format_key
from textual.message import Message
from textual.screen import Screen, ScreenResultCallbackType
from textual.widget import Widget
from textual.widgets import Input, TextArea

__all__ = ["binding_keys", "focus_now", "handle_now", "in_order", "key_name", "open_typing", "run_binding", "typing"]


def focus_now(widget: Widget) -> None:
    """Focus ``widget`` (a box the key just opened) before the next key is handled.

    ``Widget.focus`` queues the change behind the keys already received: typed fast, pasted, or arriving in one
    packet over ssh, ``/llama`` ran ``l`` (next layout), ``a`` (previous app) ... instead of typing into the
    filter, and ``/q`` quit."""
    widget.screen.set_focus(widget)


async def open_typing(app: App[Any], screen: Screen[Any], box: str,
                      callback: ScreenResultCallbackType[Any] | None = None) -> None:
    """Push ``screen`` and focus its text box (``box``, a selector) before the keys typed after the one that
    opened it are routed: ``ollama`` typed at once filters the picker by ``llama``.

    Await it from a priority binding's action: the app takes no other key off its queue until the screen is
    mounted (``push_screen``'s awaitable) and the box has the focus. Without it those keys went to the screen
    below (whose keys do nothing while another is on top) or to the new screen before it had a focused widget,
    and were lost."""
    await app.push_screen(screen, callback)
    focus_now(screen.query_one(box))


def handle_now(widget: Widget, message: Message) -> None:
    """Have ``widget``'s screen handle ``message`` (a panel's "open this" on Enter) now, in the key's own turn,
    instead of posting it: the screen it opens is then on top before the next key is routed.

    Posted, the message waited in the screen's queue while the app routed the keys typed with Enter (fast, pasted,
    one ssh read) to the screen underneath: Enter then ``/`` on the apps panel opened the dashboard's filter box,
    and the app's screen over it. A screen without a handler for it gets the message posted, as before."""
    handler = getattr(widget.screen, message.handler_name, None)
    if callable(handler):
        handler(message)
    else:
        widget.post_message(message)


async def in_order(app: App[Any], event: events.Key) -> bool:
    """Run the binding of a key the app has just received, now, and say whether one took it.

    Why: Textual runs a priority binding (``/``, ``o``, ``T``, Enter on the tabs) when the app receives its key,
    but forwards any other key to the focused widget, whose binding runs once the key has bubbled back up: later.
    Keys that arrive in one read (typed fast, pasted, coalesced by ssh) were then taken out of order: ``2`` Enter
    on the tabs opened the picker of "all" (Enter ran before ``2`` selected the app), ↓ Enter on the apps panel
    opened the app the cursor was on before ↓. Run here, every binding is taken in the order its key came, with
    the precedence Textual gives them (priority bindings first, then the focused widget's, its screen's, the
    app's). Left to Textual: a key for a text box (a ``TextBox`` keeps its own keys in order), a key some widget
    handles by a ``key_<name>`` method (the screens' Escape), a key no binding takes, and a key that came back
    up from a widget. ``App._check_bindings`` is private (``render/private.py``); without it, Textual's way."""
    if event.is_forwarded:
        return False
    screen = app.screen
    if event.key == "escape" and screen.maximized is not None:
        return False  # Textual's own: Escape minimizes
    focused = app.focused
    if typing(focused) or not await run_binding(focused or screen, event, priority=True):
        return False
    app.app_focus = True
    return True


async def run_binding(node: Widget, event: events.Key, priority: bool) -> bool:
    """Run the binding ``event``'s key has for ``node`` (the focused widget, else the screen) now, with Textual's
    precedence (priority bindings first when ``priority``, then ``node``'s, its screen's, the app's), and say
    whether one took it. False without running anything for a key some widget above handles by a ``key_<name>``
    method (the screens' Escape: it must bubble up to it), and on a Textual without ``App._check_bindings``
    (private, ``render/private.py``). ``in_order`` and ``TextBox`` share it."""
    check = getattr(node.app, "_check_bindings", None)
    if check is None:
        return False
    method = f"key_{event.name}"
    if any(hasattr(n, method) for n in node.ancestors_with_self):
        return False
    return bool((priority and await check(event.key, priority=True)) or await check(event.key))


def typing(widget: Widget | None) -> bool:
    """Whether ``widget`` (the focused one) takes text: a key there is a character, not a command.

    The keys that open a text box (``/``) are priority bindings, so that the box has the focus before the next
    key is routed (the app routes every key to the widget focused when it takes the key off its queue, before
    a plain binding runs): inside a text box they must give way, and ``/`` is typed."""
    return isinstance(widget, (Input, TextArea))


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

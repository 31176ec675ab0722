"""Every private Textual and Rich name the render engine uses, each with why, in one place.

Textual promises its public API; these names it does not (a leading underscore, a module whose name starts with
one, or an undocumented method). The engine uses them to send only the cells that changed and to skip work
Textual would do for nothing (see ``render/__init__.py``). How the dependency is kept honest:

* **Shape**, at start-up: ``missing(app)`` looks up every name listed with a ``check`` below on the running app's
  own objects. If one is gone or has other parameters, the app runs on Textual's public paths alone and says so
  in a notice (``TerminalApp``); it never fails to start because of them.
* **Meaning**, in CI: ``tests/app/test_render_engine.py`` draws known content through our writer and through
  Textual's own and compares the terminals (pyte) cell by cell, for full repaints and partial updates; the
  driver, filter and strip tests do the same for theirs. ``.ci/run`` runs them at both ends of the Textual range
  declared in ``pyproject.toml`` (6.4 behaves differently from 6.3 with the same names, which only such a test
  sees). To raise the upper bound: run ``.ci/run`` with the new version pinned in ``constraints.txt``.
* **Off switch**: ``--render textual`` or ``NEURON_TOP_RENDER=textual`` (``engine.render_mode``) runs the app on
  Textual's public paths only; ``Widget._size_updated`` is then passed through unchanged, and nothing below is read
  or called except the ``textual._compositor`` import, which is guarded.

The private modules are imported here, guarded, so a Textual without them still starts (engine off).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

try:
    from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate

    COMPOSITOR_MISSING = ""
except ImportError as exc:  # pragma: no cover - a Textual without it: the engine stays off
    COMPOSITOR_MISSING = f"textual._compositor: {exc}"

    class CompositorUpdate:  # type: ignore[no-redef]
        """Stand-in so the render modules import; never drawn (the engine is off)."""

        def render_segments(self, console: Any) -> str:
            return ""

    class ChopsUpdate(CompositorUpdate):  # type: ignore[no-redef]
        def __init__(self, chops: Any, spans: Any, chop_ends: Any) -> None:
            self.chops, self.spans, self.chop_ends = chops, spans, chop_ends

    class LayoutUpdate(CompositorUpdate):  # type: ignore[no-redef]
        def __init__(self, strips: Any, region: Any) -> None:
            self.strips, self.region = strips, region

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["PRIVATE", "ChopsUpdate", "CompositorUpdate", "LayoutUpdate", "Private", "missing"]


@dataclass(frozen=True)
class Private:
    """One private name: ``name`` (dotted, as a reader would look it up), the file that uses it, why, and where
    ``missing`` finds it at start-up (``check``: ``"class"`` = on the class named by ``name``, ``"app"`` = on the
    running app, ``"params"`` = a callable whose parameters must include ``params``; ``""`` = not checked at
    start-up: guarded where it is used, or covered by a meaning test only)."""

    name: str
    used_in: str
    why: str
    check: str = ""
    params: tuple[str, ...] = ()


PRIVATE: tuple[Private, ...] = (
    # --- the compositor's updates: what the terminal writer is given ---
    Private("textual._compositor", "frame_writer.py, paint.py, engine.py",
            "ChopsUpdate, LayoutUpdate, CompositorUpdate: the frames Textual hands App._display; the writer "
            "re-renders them, paint.py makes its own ChopsUpdate of the panels' changed cells"),
    Private("textual._compositor.ChopsUpdate.__init__", "paint.py, frame_writer.py",
            "chops (per line, x -> strip), spans (y, x1, x2), chop_ends: read by the writer, built by flush",
            "params", ("chops", "spans", "chop_ends")),
    Private("textual._compositor.LayoutUpdate.__init__", "frame_writer.py",
            "strips (per line, a list of strips) and region: a full repaint, narrowed to what differs from the "
            "terminal (6.3 and older passed one strip per line: same names, other meaning)",
            "params", ("strips", "region")),
    # --- keys (not the engine's: listed here so every private name is in one place) ---
    Private("textual.app.App._check_bindings", "keys.py (in_order), widgets/textbox.py",
            "the app and a text box run a key's binding when they receive the key, in turn with the keys typed "
            "with it (Textual runs a plain binding only after the key bubbles back up); guarded where used"),
    # --- the app: where a frame goes to the terminal ---
    Private("textual.app.App._display", "terminal.py, paint.py",
            "overridden: a frame after a dropped one is sent whole, frames go through the engine's writer in one "
            "write; paint.flush calls it to send the panels' cells without the compositor", "app"),
    Private("textual.app.App._filters", "terminal.py", "the line filters: ANSIToTruecolor swapped for "
            "QuickTruecolor", "app"),
    Private("textual.app.App._refresh_truecolor_filter", "terminal.py",
            "overridden: Textual makes a new ANSIToTruecolor when the terminal theme changes; swapped again", "app"),
    Private("textual.app.App._batch_count", "terminal.py, paint.py",
            "inside a batch Textual drops frames: the next is sent whole, paint goes through Widget.refresh", "app"),
    Private("textual.app.App._running", "paint.py", "direct writes only while the app runs", "app"),
    Private("textual.app.App._closed", "paint.py", "no direct writes once it closes", "app"),
    Private("textual.app.App._driver", "paint.py, terminal.py",
            "direct writes need a driver; its one_write gathers a frame's pieces", "app"),
    Private("textual.screen.Screen._compositor", "paint.py, terminal.py",
            "the screen's compositor: where widgets are, and a full update after a dropped frame"),
    Private("textual._compositor.Compositor.visible_widgets", "paint.py",
            "widget -> (region, clip), topmost first: is a panel visible and uncovered, so its cells can be "
            "written directly", "class"),
    Private("textual._compositor.Compositor.render_full_update", "terminal.py",
            "the whole screen after a dropped frame", "class"),
    Private("textual.widget.Widget._styles_cache", "paint.py",
            "the widget's cached lines: marked dirty for cells written directly, so a later repaint is current"),
    Private("textual._styles_cache.StylesCache.set_dirty", "paint.py", "(see Widget._styles_cache)", "class"),
    Private("textual.widget.Widget._size_updated", "widgets/panel.py, screens/dashboard.py",
            "overridden with layout=False: a panel that grew by a row asked for a second layout of the whole "
            "screen that found the same sizes (8-13 ms each)", "params",
            ("size", "virtual_size", "container_size", "layout")),
    # --- line filters ---
    Private("textual.filter.ANSIToTruecolor.truecolor_style", "paint.py",
            "the per-style conversion, asked once per new style: lines whose styles all map to themselves are "
            "passed through", "class"),
    Private("textual.filter.ANSIToTruecolor._terminal_theme", "paint.py",
            "the theme a filter was made with, to make QuickTruecolor with the same (guarded: getattr)"),
    # --- strips and styles: the writer's and the diff's raw material ---
    Private("textual.strip.Strip._cell_length", "spans.py",
            "the strip's cached width: read, and set when every character is known to be one cell (measuring "
            "a fresh 200-column strip segment by segment was ~10x slower)", "class"),
    Private("textual.strip.Strip._segments", "light.py",
            "set by LightStrip, read by the diff (iterating the strip costs a method call a strip)", "class"),
    Private("textual.strip.Strip.__slots__", "light.py",
            "the caches a Strip makes in __init__ (_render_cache, _link_ids, _cell_count and seven FIFOCache "
            "slots): LightStrip makes them when first read; any other set of slots and it is a plain Strip"),
    Private("textual.cache.FIFOCache._maxsize", "light.py", "each cache made with the size Strip gives it"),
    Private("textual.strip.Strip.render_ansi", "frame_writer.py",
            "undocumented: a style's SGR parameters when Rich has not cached them yet", "class"),
    Private("textual.strip.Strip.render_style", "frame_writer.py",
            "undocumented: a linked segment rendered as Textual does (rare)", "class"),
    Private("rich.style.Style._ansi", "frame_writer.py", "the style's cached SGR parameters (one attribute read a "
            "segment instead of a call)", "class"),
    Private("rich.style.Style._link", "frame_writer.py", "a linked segment: left to Textual's rendering", "class"),
    Private("rich.console.Console._color_system", "frame_writer.py",
            "the terminal's colour system, as Strip.render uses it", "app"),
    # --- the driver: the input thread ---
    Private("textual._xterm_parser.XTermParser", "driver.py",
            "the key parser the quiet input thread feeds (guarded import)"),
    Private("textual._xterm_parser.XTermParser._timeout_time", "driver.py",
            "when a pending escape sequence times out: the thread sleeps until then, not 0.1 s at a time"),
    Private("textual._xterm_parser.XTermParser.tick", "driver.py", "times out a lone Esc"),
    Private("textual._parser.ParseError", "driver.py", "what the parser raises at the end of input"),
    Private("textual._time.get_time", "driver.py", "the parser's clock, to compute the sleep"),
    Private("textual.drivers.linux_driver.LinuxDriver.run_input_thread", "driver.py",
            "overridden: the same loop with a blocking select (0.18% of a core saved)"),
    Private("textual.driver.Driver._debug", "driver.py", "passed to the parser as LinuxDriver does"),
    Private("textual.drivers.linux_driver.LinuxDriver.exit_event", "driver.py",
            "undocumented: set by disable_input; the thread stops on it"),
    Private("textual.drivers.linux_driver.LinuxDriver.fileno", "driver.py",
            "undocumented: the terminal's input descriptor"),
    Private("textual.driver.Driver.process_message", "driver.py",
            "undocumented: how the input thread hands an event to the app"),
    # --- the driver: a terminal that goes away ---
    Private("textual.drivers.linux_driver.LinuxDriver._sigcont_application", "driver.py",
            "overridden: the SIGCONT a hangup sends must not start application mode again (a second writer "
            "thread, which dies on the dead terminal and then blocks the app for ever)"),
    Private("textual.drivers.linux_driver.LinuxDriver._sigtstp_application", "driver.py",
            "run from the event loop instead of as a Python signal handler (its writes, between two bytecodes "
            "of a put on the writer queue, waited for that queue's lock for ever)", "class"),
    Private("textual.drivers.linux_driver.LinuxDriver._file", "driver.py",
            "the file the writer thread writes to, wrapped so that a write to a terminal that is gone is dropped "
            "(the failed write killed the writer thread, and the app then blocked on its full queue for ever)"),
)
"""The list. ``tests/app/test_render_engine.py`` checks that every name resolves at the installed Textual."""


def missing(app: App) -> str:
    """The first start-up-checked name (``PRIVATE``) that ``app``'s Textual lacks, as a short reason; "" when all
    are there."""
    if COMPOSITOR_MISSING:
        return COMPOSITOR_MISSING
    for p in PRIVATE:
        if not p.check:
            continue
        owner_path, attr = p.name.rsplit(".", 1)
        try:
            if p.check == "app":
                where: Any = app.console if owner_path == "rich.console.Console" else app
                found = hasattr(where, attr)
                if not found:
                    return f"{p.name} is gone"
                continue
            owner = resolve(owner_path)
            if not hasattr(owner, attr):
                return f"{p.name} is gone"
            if p.check == "params":
                params = set(inspect.signature(getattr(owner, attr)).parameters)
                if not set(p.params) <= params:
                    return f"{p.name} no longer takes {', '.join(sorted(set(p.params) - params))}"
        except (ImportError, AttributeError, ValueError, TypeError) as exc:
            return f"{p.name}: {exc}"
    return ""


def resolve(path: str) -> Any:
    """The object a dotted name stands for: the longest importable module prefix, then attributes."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)

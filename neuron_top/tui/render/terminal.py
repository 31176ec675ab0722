"""The app's terminal side: what keeps it cheap and right on a real terminal, whatever it shows.

``NeuronTopApp`` (app.py) is the wiring of data to screens; this base class holds the rest. At start-up (in
``__init__``, never on import) it installs the render engine for itself alone, unless the user switched it off
(``--render textual``, ``NEURON_TOP_RENDER=textual``) or this Textual lacks a private name it needs
(``private.missing``; the app then says so and runs on Textual's public paths):

* its frames go through the engine's writer (engine.py, frame_writer.py), in one write (driver.py's ``one_write``);
* the key reader sleeps until a key arrives (driver.py);
* the quick ANSI-to-truecolor filter (paint.py), and the panels' cells written without the compositor;
* light strips and the diff's shortcuts (light.py, spans.py).

Whatever the mode: the driver's protections for a terminal that goes away (driver.py's ``SafeLinuxDriver``), the
garbage collector's settings once start-up is done, and a cache of the widgets the app updates on every report.
SIGTERM, SIGHUP and SIGINT belong to the command line's exit policy (``cli/signals.py``), which asks the app to
exit as ``q`` does: the app installs no handler for them (asyncio's would replace the policy's).
"""

from __future__ import annotations

import contextlib
import gc
from typing import TypeVar
from weakref import WeakKeyDictionary

from rich.console import RenderableType
from rich.terminal_theme import TerminalTheme
from textual.app import App
from textual.driver import Driver
from textual.screen import Screen
from textual.widget import Widget

from neuron_top.tui.render import light
from neuron_top.tui.render.driver import driver_for
from neuron_top.tui.render.engine import RenderEngine, render_mode
from neuron_top.tui.render.paint import quicken_filters
from neuron_top.tui.render.private import CompositorUpdate, missing

__all__ = ["TerminalApp"]

W = TypeVar("W", bound=Widget)


class TerminalApp(App):
    """Textual's ``App`` with the render engine installed for this app at start-up.

    Args:
        render: ``fast`` (the engine), ``textual`` (Textual's public paths only), or None: ``$NEURON_TOP_RENDER``,
            else ``fast``.
    """

    def __init__(self, render: str | None = None) -> None:
        mode, note = render_mode(render)
        self._fast_wanted = mode == "fast"
        """Read by ``get_driver_class``, which Textual calls from ``App.__init__``."""
        super().__init__()
        self.render_notes: list[str] = [note] if note else []
        """What to tell the user about the render mode once the screen is up."""
        self.render_engine: RenderEngine | None = None
        """The engine, or None when Textual draws on its own (switched off, or this Textual lacks a name)."""
        if mode == "fast":
            why = missing(self)
            if why:
                self.render_notes.append(f"fast terminal path off: {why} in this Textual; drawing with Textual's "
                                         "own (--render textual hides this note)")
                self._fast_wanted = False
                self.driver_class = self.get_driver_class()  # the safe driver, as --render textual has
            else:
                self.render_engine = RenderEngine(report=self._engine_failed)
                quicken_filters(self._filters)
        light.use_engine_strips(self.render_engine is not None)
        self._frame_dropped = False
        self._found: WeakKeyDictionary[Screen, dict[type, list[Widget]]] = WeakKeyDictionary()

    def _engine_failed(self, reason: str) -> None:
        self.call_later(self.notify, reason, title="render", severity="warning", timeout=15, markup=False)

    def _on_screen(self, kind: type[W]) -> list[W]:
        """The current screen's widgets of one kind, looked up once per screen (a DOM query ran 1-2 times a
        second otherwise)."""
        screen = self.screen
        known = self._found.setdefault(screen, {})
        found = known.get(kind)
        if found is None or not all(w.is_attached for w in found):
            found = list(screen.query(kind))
            if found:
                known[kind] = found
        return found  # type: ignore[return-value]

    def get_driver_class(self) -> type[Driver]:
        default = super().get_driver_class()
        return driver_for(default, quiet=self._fast_wanted)

    def _refresh_truecolor_filter(self, theme: TerminalTheme) -> None:
        super()._refresh_truecolor_filter(theme)  # a new ANSIToTruecolor for the new terminal theme
        if self.render_engine is not None:
            quicken_filters(self._filters)

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        """Textual's, except that (with the engine) the first update after a dropped frame is a full one, the
        frame is written by the engine, and it goes to the writer thread as one write, synchronized-update
        brackets included (``one_write``, driver.py).

        Why: Textual drops a frame drawn during a batch but counts it as shown. At start-up the first full frame
        is drawn inside the batch that composes the app, so the terminal got only the regions repainted after it
        (the header without its title, the tab bar without "Apps", panel titles on a blank screen) until the first
        layout change repainted everything, a few hundred milliseconds later."""
        engine = self.render_engine
        if engine is None:
            super()._display(screen, renderable)
            return
        if renderable is not None:
            if self._batch_count:
                self._frame_dropped = True
            elif self._frame_dropped and screen is self.screen and not self.is_inline:
                self._frame_dropped = False
                full = getattr(screen._compositor, "render_full_update", None)
                if full is not None and isinstance(renderable, CompositorUpdate):
                    renderable = full()
            if not self.is_inline:
                renderable = engine.frame(renderable)
        one_write = getattr(self._driver, "one_write", None)  # the frame and its sync brackets as one write
        with one_write() if one_write is not None else contextlib.nullcontext():
            super()._display(screen, renderable)

    def settle_in(self) -> None:
        """Call from ``on_mount``: say how the app draws if it is not as asked, follow the terminal through Ctrl+Z
        and tune GC after the first frame."""
        for note in self.render_notes:
            self.notify(note, title="render", severity="warning", timeout=10, markup=False)
        # After Ctrl+Z and fg the terminal shows something else: the next full repaint must send every cell.
        # The resize that start-up sends may be drawn before this signal comes, against what the engine thought
        # the terminal showed: unchanged rows (the header) stayed blank. So repaint everything once more.
        self.app_resume_signal.subscribe(self, lambda _app: self.action_redraw())
        self.call_after_refresh(self._freeze_startup_objects)

    def forget_terminal(self) -> None:
        """The terminal may show something else than what was sent: the engine's next full repaint sends every
        cell (Textual's own always does)."""
        if self.render_engine is not None:
            self.render_engine.forget(self.console)

    def _freeze_startup_objects(self) -> None:
        """Move everything alive after start-up (Textual, the widgets) out of the collector's way: full
        collections then only walk report data. Measured in replay: 30-190 ms pauses became rare."""
        gc.collect()
        gc.freeze()
        # An update allocates tens of thousands of short-lived objects (segments, strips and their caches), freed
        # by reference counting; at the default threshold (700) the young generation was collected ~4 times an
        # update for nothing.
        gc.set_threshold(20_000, 10, 10)

    def on_resize(self) -> None:
        self.forget_terminal()  # the terminal may have cleared or reflowed its lines

    def action_redraw(self) -> None:
        """Send every cell again, as curses programs do on Ctrl+L (after another program wrote over the screen)."""
        self.forget_terminal()
        self.refresh(layout=True)

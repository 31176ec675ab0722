"""The app's terminal side: what keeps it cheap and right on a real terminal, whatever it shows.

``NeuronTopApp`` (app.py) is the wiring of data to screens; this base class holds the rest: the key reader that
sleeps until a key arrives and the frame written in one piece (ui/driver.py), the quick ANSI-to-truecolor filter
(widgets/paint.py), the writer's copy of the terminal (widgets/spans.py) forgotten whenever the terminal may show
something else, the garbage collector's settings once start-up is done, and a cache of the widgets the app
updates on every report.
"""

from __future__ import annotations

import contextlib
import gc
from typing import TypeVar
from weakref import WeakKeyDictionary

from rich.console import RenderableType
from rich.terminal_theme import TerminalTheme
from textual._compositor import CompositorUpdate
from textual.app import App
from textual.driver import Driver
from textual.screen import Screen
from textual.widget import Widget

from neuron_top.tui.render.driver import driver_for
from neuron_top.tui.render.paint import quicken_filters
from neuron_top.tui.render.spans import forget

W = TypeVar("W", bound=Widget)


class TerminalApp(App):
    def __init__(self) -> None:
        super().__init__()
        quicken_filters(self._filters)
        self._frame_dropped = False
        self._found: WeakKeyDictionary[Screen, dict[type, list[Widget]]] = WeakKeyDictionary()

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
        return driver_for(super().get_driver_class())

    def _refresh_truecolor_filter(self, theme: TerminalTheme) -> None:
        super()._refresh_truecolor_filter(theme)  # a new ANSIToTruecolor for the new terminal theme
        quicken_filters(self._filters)

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        """Textual's, except that the first update after a dropped frame is a full one, and that the frame goes to
        the writer thread as one write, synchronized-update brackets included (``one_write``, ui/driver.py).

        Why: Textual drops a frame drawn during a batch but counts it as shown. At start-up the first full frame
        is drawn inside the batch that composes the app, so the terminal got only the regions repainted after it
        (the header without its title, the tab bar without "Apps", panel titles on a blank screen) until the first
        layout change repainted everything, a few hundred milliseconds later."""
        if renderable is not None:
            if self._batch_count:
                self._frame_dropped = True
            elif self._frame_dropped and screen is self.screen and not self.is_inline:
                self._frame_dropped = False
                full = getattr(screen._compositor, "render_full_update", None)
                if full is not None and isinstance(renderable, CompositorUpdate):
                    renderable = full()
        one_write = getattr(self._driver, "one_write", None)  # the frame and its sync brackets as one write
        with one_write() if one_write is not None else contextlib.nullcontext():
            super()._display(screen, renderable)

    def settle_in(self) -> None:
        """Call from ``on_mount``: follow the terminal through Ctrl+Z and tune GC after the first frame."""
        # After Ctrl+Z and fg the terminal shows something else: the next full repaint must send every cell.
        self.app_resume_signal.subscribe(self, lambda _app: forget(self.console))
        self.call_after_refresh(self._freeze_startup_objects)

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
        forget(self.console)  # the terminal may have cleared or reflowed its lines

    def action_redraw(self) -> None:
        """Send every cell again, as curses programs do on Ctrl+L (after another program wrote over the screen)."""
        forget(self.console)
        self.refresh(layout=True)

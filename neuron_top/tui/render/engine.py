"""The render engine of one app: its frames go to the terminal through our writer, with Textual's as the fallback.

Nothing is replaced in Textual: ``TerminalApp._display`` hands each frame of its own app to ``RenderEngine.frame``,
which wraps it so that Textual's ``App._display`` calls our writer for it. Other apps in the process, and frames
of this one that are not Textual's compositor updates (an inline app's), are left as they are.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from weakref import WeakKeyDictionary

from rich.console import Console, RenderableType

from neuron_top.tui.render.frame_writer import Shadow, narrowed, write_chops, write_layout
from neuron_top.tui.render.paint import ExactChops
from neuron_top.tui.render.private import ChopsUpdate, CompositorUpdate, LayoutUpdate

__all__ = ["ENV", "MODES", "RenderEngine", "render_mode"]

MODES = ("fast", "textual")
"""``fast``: the render engine (default). ``textual``: Textual's public paths only, the off switch."""
ENV = "NEURON_TOP_RENDER"
"""The environment variable that chooses the mode when ``--render`` is not given."""


def render_mode(cli: str | None = None) -> tuple[str, str]:
    """The render mode to use and a note for the user ("" when none): ``cli`` (``--render``) first, then
    ``$NEURON_TOP_RENDER``, then ``fast``. An unknown value in the environment is named in the note and ignored
    (the command line's choices are checked by argparse)."""
    if cli:
        if cli not in MODES:
            raise ValueError(f"render mode {cli!r}: expected one of {', '.join(MODES)}")
        return cli, ""
    env = os.environ.get(ENV, "").strip().lower()
    if not env or env in MODES:
        return env or "fast", ""
    return "fast", f"{ENV}={env[:40]!r} is not one of {', '.join(MODES)}; using fast"


_UPDATES = (ChopsUpdate, LayoutUpdate)


class _Frame(CompositorUpdate):
    """One of Textual's compositor updates, drawn by the engine when Textual asks for its bytes."""

    __slots__ = ("engine", "update")

    def __init__(self, update: ChopsUpdate | LayoutUpdate, engine: RenderEngine) -> None:
        self.update = update
        self.engine = engine

    def render_segments(self, console: Console) -> str:
        return self.engine.render(self.update, console)


class RenderEngine:
    """One app's writer state: the terminal's cells as last sent (per console; an app has one), and whether the
    writer has failed (then Textual's own writes every frame, and ``report`` was told once).

    Args:
        report: called once with a one-line reason if our writer raises (a Textual it was not tested with);
            the frame and every later one are then written by Textual.
    """

    def __init__(self, report: Callable[[str], object] | None = None) -> None:
        self._shadows: WeakKeyDictionary[Console, Shadow] = WeakKeyDictionary()
        self._report = report
        self.failed = False
        """Our writer raised once: Textual's writes every frame from then on."""

    def frame(self, renderable: RenderableType) -> RenderableType:
        """What ``App._display`` should be given for ``renderable``: Textual's compositor updates wrapped so that
        the engine writes them; anything else as it is."""
        if self.failed or not isinstance(renderable, _UPDATES):
            return renderable
        return _Frame(renderable, self)  # type: ignore[return-value]  # a CompositorUpdate, as App._display takes

    def render(self, update: ChopsUpdate | LayoutUpdate, console: Console) -> str:
        """The bytes that bring the terminal behind ``console`` from what it shows to ``update``: ours, or
        Textual's if ours fails."""
        if not self.failed:
            try:
                return self._render(update, console)
            except Exception as exc:
                self.failed = True
                self._shadows.clear()
                if self._report is not None:
                    self._report(f"the fast terminal writer failed ({type(exc).__name__}: {exc}); "
                                 "Textual's own writes from now on")
        return update.render_segments(console)

    def _render(self, update: ChopsUpdate | LayoutUpdate, console: Console) -> str:
        shadow = self._shadows.get(console)
        if isinstance(update, LayoutUpdate):
            region = update.region
            if shadow is None or (shadow.width, shadow.height) != (region.right, region.bottom):
                shadow = self._shadows[console] = Shadow(region.right, region.bottom)
            return write_layout(update, console, shadow)
        exact = shadow is None or isinstance(update, ExactChops)
        return write_chops(update if exact else narrowed(update, shadow), console, shadow)  # type: ignore[arg-type]

    def forget(self, console: Console) -> None:
        """The terminal's content is no longer known (it was resized, or the app was suspended, or Ctrl+L): the
        next full repaint sends every cell."""
        self._shadows.pop(console, None)

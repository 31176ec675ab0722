"""Every shipped theme is readable: text drawn in each style against the background it is drawn on, as the
running app resolves them (WCAG 2 contrast ratio of relative luminances). Body text at least 4.5:1; other text
(titles, badges, the cursor, load colours) at least 3:1. ANSI colours are measured in Textual's own ANSI palette.

Also: the light theme draws dark text on its own white (it drew white text on the terminal's background)."""

from __future__ import annotations

import pytest
from rich.color import Color
from rich.style import Style

from neuron_top.tui.themes import load_themes
from neuron_top.tui.widgets.cores import CoreGrid
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.tabs import AppTabs
from tests.helpers import demo_snapshots, feed, make_app

THEMES = sorted(load_themes().themes)
BODY = {"panel--value", "panel--label", "header--text", "header--dim", "tabs--tab"}
"""Plain text: what most of the screen is."""
OTHER = {"panel--low", "panel--mid", "panel--high", "panel--bad", "panel--title", "panel--cursor",
         "panel--title-focus", "header--title", "header--state-ok", "header--state-warn", "header--state-bad",
         "header--warn", "header--alarm", "header--rec", "tabs--label", "tabs--selected", "tabs--error",
         "tabs--more"}
"""Text that stands out by colour; "dim" (no-data dots) and the bar track are decoration, not text."""
EXEMPT = {("neuron-16", "panel--title-focus"), ("neuron-16", "panel--bad")}
"""The terminal's text colour on an ANSI colour (the focused panel's title on blue, an uncorrected-ECC cell on
red): in 16 colours the palette decides (2.6:1 and 2.97:1 in Textual's ANSI palette, 7:1 and 4.4:1 in xterm's)."""


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_contrast_ratio_is_wcags() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)


async def measured(theme: str) -> dict[str, float]:
    """Each component style's contrast in ``theme``, as drawn (reverse video swaps the colours)."""
    app = make_app(demo_snapshots("trn2.48xlarge", 7, 3), theme=theme)
    async with app.run_test(size=(160, 50)) as pilot:
        await feed(pilot)
        palette = app.ansi_theme

        def rgb(c: Color | None, background: bool) -> tuple[int, int, int]:
            return tuple((c or Color.default()).get_truecolor(palette, foreground=not background))  # type: ignore[return-value]

        out = {}
        for widget, names in ((app.screen.query_one(CoreGrid), BODY | OTHER),
                              (app.screen.query_one(HeaderBar), BODY | OTHER),
                              (app.screen.query_one(AppTabs), BODY | OTHER)):
            prefix = {"CoreGrid": "panel", "HeaderBar": "header", "AppTabs": "tabs"}[type(widget).__name__]
            for name in names:
                if not name.startswith(prefix + "--"):
                    continue
                style: Style = widget.rich_style + widget.get_component_rich_style(name)
                fg, bg = rgb(style.color, False), rgb(style.bgcolor, True)
                if style.reverse:
                    fg, bg = rgb(style.bgcolor, True), rgb(style.color, False)
                out[name] = contrast(fg, bg)
        return out


@pytest.mark.parametrize("theme", THEMES)
async def test_every_shipped_theme_is_readable(theme: str) -> None:
    got = await measured(theme)
    assert set(got) == BODY | OTHER
    low = {n: round(r, 2) for n, r in got.items() if r < (4.5 if n in BODY else 3.0) and (theme, n) not in EXEMPT}
    assert not low, f"{theme}: too little contrast {low}"


async def test_the_light_theme_draws_dark_text_on_its_own_white() -> None:
    app = make_app(demo_snapshots("trn2.48xlarge", 7, 5), theme="neuron-light")
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        grid = app.screen.query_one(CoreGrid)
        for y in (0, 1, 2):
            for seg in grid.render_line(y):
                assert seg.style is not None and seg.style.bgcolor is not None, (y, seg)  # never the terminal's
                fg = seg.style.color.get_truecolor(foreground=True) if seg.style.color else None
                assert fg != (255, 255, 255) or seg.style.bgcolor.get_truecolor() != (255, 255, 255), seg
        value = grid.get_component_rich_style("panel--value")
        assert luminance(tuple(value.color.get_truecolor())) < 0.05  # type: ignore[arg-type,union-attr]
        assert value.bgcolor.get_truecolor() == (255, 255, 255)  # type: ignore[union-attr]

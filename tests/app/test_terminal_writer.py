"""What reaches the terminal: cell-level partial updates must leave it exactly as a full repaint would.

The updates are drawn by a ``RenderEngine`` (``ours``), as the app's ``TerminalApp`` draws its own; whether our
writer means what Textual's does is ``test_render_engine.py``'s question. A VT100 emulator (pyte) plays the part
of the terminal. Every update the app sends is fed to it, and the result
is compared, cell by cell (character, colours, bold, reverse), with a fresh terminal that was given one full
repaint of the final screen. This catches a span cropped one cell short, a colour left on after a move, or a
line feed in the wrong place — none of which a headless snapshot can see, because the headless driver writes
nothing.
"""

from __future__ import annotations

import random

import pyte
import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate
from textual.app import App
from textual.geometry import Region
from textual.strip import Strip

from neuron_top.tui.render.engine import RenderEngine
from neuron_top.tui.render.paint import WidgetChops
from tests.helpers import demo_snapshots, feed, make_app

W, H = 120, 40


def console(color_system: str = "256") -> Console:
    return Console(force_terminal=True, color_system=color_system, width=W, height=H,  # type: ignore[arg-type]
                   legacy_windows=False)


ENGINE = RenderEngine()
"""Draws every update of these tests; it keeps a shadow per console, and each test makes its own consoles."""


class _Ours:
    """An update drawn by ``ENGINE``: ``ours(update).render_segments(console)``."""

    def __init__(self, update: CompositorUpdate) -> None:
        self.update = update

    def render_segments(self, con: Console) -> str:
        return ENGINE.render(self.update, con)  # type: ignore[arg-type]


def ours(update: CompositorUpdate) -> _Ours:
    return _Ours(update)


def terminal() -> tuple[pyte.Screen, pyte.ByteStream]:
    screen = pyte.Screen(W, H)
    return screen, pyte.ByteStream(screen)


def cells(screen: pyte.Screen) -> list[list[tuple[str, str, str, bool, bool]]]:
    return [[(c.data, c.fg, c.bg, c.bold, c.reverse) for c in (screen.buffer[y][x] for x in range(screen.columns))]
            for y in range(screen.lines)]


def first_difference(a: pyte.Screen, b: pyte.Screen) -> str | None:
    for y, (ra, rb) in enumerate(zip(cells(a), cells(b), strict=True)):
        for x, (ca, cb) in enumerate(zip(ra, rb, strict=True)):
            if ca != cb:
                return f"row {y} col {x}: terminal has {ca}, a full repaint has {cb}\n{a.display[y]!r}\n{b.display[y]!r}"
    return None


def _random_line(rng: random.Random, styles: list[Style]) -> Strip:
    """A screen-wide line of random runs of narrow characters in random styles."""
    segs, n = [], 0
    while n < W:
        k = min(rng.randint(1, 15), W - n)
        segs.append(Segment("".join(rng.choice("ab █▁▂─.%0123") for _ in range(k)), rng.choice(styles)))
        n += k
    return Strip(segs)


def test_writer_sends_only_the_spans_and_crops_both_sides() -> None:
    red, green = Style(color="red"), Style(color="green")
    line = Strip([Segment("abcdef", red), Segment("ghijkl", green), Segment("mnopqr", red)])
    update = ours(ChopsUpdate([{0: line}], [(0, 8, 10)], [[18]]))
    out = update.render_segments(console())
    assert "ij" in out and "h" not in out and "k" not in out  # cells 8-9 only
    assert out.startswith("\x1b[1;9H")  # the cursor goes to the span, not to the start of the line


def test_the_writer_bridges_a_gap_only_when_that_is_cheaper_than_a_move() -> None:
    green, red = Style(color="green"), Style(color="red")
    line = Strip([Segment("[ 91.3%]", green), Segment("██─", green), Segment("x", red), Segment("ab", green)])

    def sent(*spans: tuple[int, int]) -> str:
        return ours(ChopsUpdate([{0: line}], [(0, a, b) for a, b in spans], [[line.cell_length]])).render_segments(
            console())

    assert "1.3" in sent((3, 4), (5, 6))  # one ASCII cell (1 byte) beats a move (3 bytes)
    assert sent((8, 9), (10, 11)).count("█") == 1  # a block character is 3 bytes, no cheaper than the move
    assert "\x1b[C" in sent((10, 11), (12, 13))  # the gap is red: a colour change each way costs more
    assert "x" not in sent((10, 11), (12, 13))


@pytest.mark.parametrize("colors", ["256", "truecolor"])
@pytest.mark.parametrize("grounded", [False, True], ids=["on the terminal's background", "on their own"])
def test_random_partial_updates_match_a_full_repaint(grounded: bool, colors: str) -> None:
    """Random spans of random styles. ``grounded``: every style carries a background (as the panels' do), so
    the writer's changes are mostly one colour at a time (only that colour is sent) with attribute changes and
    default colours mixed in."""
    rng = random.Random(5)
    styles = [Style(color=c, bold=b) for c in ("red", "green", "color(208)", "white") for b in (False, True)]
    styles.append(Style(color="black", bgcolor="yellow"))
    if grounded:
        styles = [s + Style(bgcolor=bg) for s in styles for bg in ("#0f1419", "#1f2630")]
        styles += [Style(color="#d8dee9", bgcolor="#0f1419", reverse=True), Style(color="#d8dee9", bgcolor="default"),
                   Style(color="default", bgcolor="#0f1419", underline=True), Style(bgcolor="#0f1419")]

    def random_line() -> Strip:
        return _random_line(rng, styles)

    old = [random_line() for _ in range(H)]
    screen, stream = terminal()
    stream.feed(ours(LayoutUpdate([[s] for s in old], Region(0, 0, W, H))).render_segments(console(colors)).encode())
    for _ in range(30):
        new = list(old)
        spans = []
        for y in rng.sample(range(H), 12):
            x1 = rng.randrange(W - 1)
            x2 = rng.randint(x1 + 1, min(W, x1 + 30))
            patch = random_line().crop(0, x2 - x1)
            new[y] = Strip.join([old[y].crop(0, x1), patch, old[y].crop(x2, W)])
            spans.append((y, x1, x2))
        spans.sort()
        cuts = [0, 40, 90]  # three "widgets" side by side
        chops = [{c: s for c, s in zip(cuts, new[y].divide([40, 90, W]), strict=True)} for y in range(H)]
        update = ChopsUpdate(chops, spans, [[40, 90, W]] * H)
        stream.feed(ours(update).render_segments(console(colors)).encode())
        old = new
    expected, estream = terminal()
    estream.feed(LayoutUpdate([[s] for s in old], Region(0, 0, W, H)).render_segments(console(colors)).encode())
    assert first_difference(screen, expected) is None


@pytest.mark.parametrize(("instance", "colors", "theme"), [("trn2.48xlarge", "256", None),
                                                            ("inf2.48xlarge", "256", None),
                                                            ("trn2.48xlarge", "standard", "neuron-16"),
                                                            ("inf2.48xlarge", "truecolor", "neuron-light")])
async def test_the_dashboard_on_a_terminal_matches_a_full_repaint(instance: str, colors: str, theme: str | None,
                                                                  monkeypatch) -> None:
    """The real dashboard, 30 reports, tab switches, a toast, the FLOPS view and a scrolled body, in a 256-colour,
    a 16-colour and a truecolour terminal: every byte it would write goes to the emulated terminal, which must
    end up showing exactly the final frame."""
    sent: list[str] = []
    con = console(colors)

    def capture(self: App, screen, renderable) -> None:
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            sent.append(renderable.render_segments(con))

    monkeypatch.setattr(App, "_display", capture)
    snaps = demo_snapshots(instance, 3, 40)
    app = make_app(theme=theme) if theme else make_app()
    async with app.run_test(size=(W, H), notifications=True) as pilot:
        await feed(pilot, snaps[:10])
        for i, s in enumerate(snaps[10:]):
            app.accept_snapshot(s)
            await pilot.pause()
            if i == 3:  # a drill-down and back: two full repaints, sent as what differs from the terminal
                app.open_app(app.latest.apps[0].pid)
            if i == 5:
                await pilot.press("escape")
            if i == 7:
                await pilot.press("ctrl+l")  # every cell again
            if i == 10:
                await pilot.press("d")  # the next app's tab
            if i == 15:
                app.notify("a toast over the panels: they repaint through Textual", timeout=60)
            if i == 20:
                await pilot.press("f")  # FLOPS
            if i == 25:  # the body scrolled: panels cut at the top and bottom edges
                app.screen.query_one("#body").scroll_to(y=7, animate=False)
        await pilot.pause()
        final = app.screen._compositor.render_update(full=True)
        full = final.render_segments(console(colors))  # a new terminal: every cell
    assert len(sent) > 20
    assert any(isinstance(u, str) and "\x1b[" in u for u in sent)
    screen, stream = terminal()
    for chunk in sent:
        stream.feed(chunk.encode())
    expected, estream = terminal()
    estream.feed(full.encode())
    assert first_difference(screen, expected) is None


def test_wide_characters_in_a_partly_updated_chop() -> None:
    """A tag in CJK inside a chop whose right part changes: the writer falls back to cell-aware cropping."""
    style = Style(color="green")
    before = Strip([Segment("app ", style), Segment("推理服务", Style(color="red")), Segment(" 10.0%" + " " * 100, style)])
    after = Strip([Segment("app ", style), Segment("推理服务", Style(color="red")), Segment(" 99.5%" + " " * 100, style)])
    screen, stream = terminal()
    stream.feed(ours(LayoutUpdate([[before]] + [[Strip.blank(W)]] * (H - 1), Region(0, 0, W, H)))
                .render_segments(console()).encode())
    stream.feed(ours(ChopsUpdate([{0: after}] + [{0: None}] * (H - 1), [(0, 2, 17)], [[W]] * H))
                .render_segments(console()).encode())
    expected, estream = terminal()
    estream.feed(LayoutUpdate([[after]] + [[Strip.blank(W)]] * (H - 1), Region(0, 0, W, H))
                 .render_segments(console()).encode())
    assert first_difference(screen, expected) is None
    assert "99.5" in screen.display[0]


def test_a_writer_failure_falls_back_to_textuals_own(monkeypatch) -> None:
    """A newer Textual whose private ChopsUpdate changed must cost bytes, never a traceback; the user is told once."""
    import neuron_top.tui.render.engine as engine_module

    def broken(*args):
        raise AttributeError("no such thing in this Textual")

    monkeypatch.setattr(engine_module, "write_chops", broken)
    told: list[str] = []
    engine = RenderEngine(report=told.append)
    line = Strip([Segment("abcdef", Style(color="red"))])
    update = ChopsUpdate([{0: line}], [(0, 2, 4)], [[6]])
    out = engine.render(update, console())
    assert "abcd" in out  # Textual's writer: from the chop's start to the span's end
    assert engine.failed and engine.frame(update) is update  # Textual's from now on, unwrapped
    engine.render(update, console())
    assert len(told) == 1 and "AttributeError" in told[0]


def _screen_lines(rng: random.Random, styles: list[Style]) -> list[Strip]:
    return [_random_line(rng, styles) for _ in range(H)]


def test_a_full_repaint_sends_only_the_cells_that_differ_from_the_terminal() -> None:
    rng = random.Random(11)
    styles = [Style(color="red"), Style(color="green", bold=True), Style(color="black", bgcolor="yellow")]
    first = _screen_lines(rng, styles)
    second = list(first)
    second[3] = Strip.join([first[3].crop(0, 50), Strip([Segment("CHANGED", styles[1])]), first[3].crop(57, W)])
    con = console()
    screen, stream = terminal()
    whole = ours(LayoutUpdate([[s] for s in first], Region(0, 0, W, H))).render_segments(con)
    stream.feed(whole.encode())
    again = ours(LayoutUpdate([[s] for s in second], Region(0, 0, W, H))).render_segments(con)
    stream.feed(again.encode())
    assert "CHANGED" in again and len(again) < 40 < len(whole) // 100  # seven cells, not 4,800
    expected, estream = terminal()
    estream.feed(LayoutUpdate([[s] for s in second], Region(0, 0, W, H)).render_segments(console()).encode())
    assert first_difference(screen, expected) is None
    assert ours(LayoutUpdate([[s] for s in second], Region(0, 0, W, H))).render_segments(con) == ""  # nothing differs
    ENGINE.forget(con)  # a resize, Ctrl+Z / fg, Ctrl+L: the terminal's content is unknown again
    assert len(ours(LayoutUpdate([[s] for s in second], Region(0, 0, W, H))).render_segments(con)) > len(whole) // 2


def test_the_shadow_compares_styles_by_value_not_by_object() -> None:
    """A repaint's lines hold the very Style objects the terminal was drawn with, or equal copies (Textual makes
    new ones for its own widgets): an equal copy is no change, a different style is, whatever the characters."""
    from neuron_top.tui.render.frame_writer import Shadow

    red, green = Style(color="red"), Style(color="green")
    shadow = Shadow(W, 1)
    shadow.changed(0, 0, Strip([Segment("a" * 40, red), Segment(" " * (W - 40), green)]))
    same = Strip([Segment("a" * 40, Style(color="red")), Segment(" " * (W - 40), Style(color="green"))])
    assert shadow.changed(0, 0, same) == []
    recoloured = Strip([Segment("a" * 10, red), Segment("a" * 5, green), Segment("a" * 25, Style(color="red")),
                        Segment(" " * (W - 40), green)])
    assert shadow.changed(0, 0, recoloured) == [(10, 15)]


def test_partial_and_full_repaints_mixed_on_one_terminal_match_a_full_repaint() -> None:
    """Random partial updates (three widgets side by side) with a full repaint every few, all through one console:
    what the writer remembers of the terminal must stay exact, or a full repaint would skip a cell it needs."""
    rng = random.Random(23)
    styles = [Style(color=c, bold=b) for c in ("red", "green", "color(208)") for b in (False, True)]
    con = console()
    old = _screen_lines(rng, styles)
    screen, stream = terminal()
    stream.feed(ours(LayoutUpdate([[s] for s in old], Region(0, 0, W, H))).render_segments(con).encode())
    for step in range(40):
        patch_lines = _screen_lines(rng, styles)
        new = list(old)
        spans = []
        for y in rng.sample(range(H), 10):
            x1 = rng.randrange(W - 1)
            x2 = rng.randint(x1 + 1, min(W, x1 + 30))
            new[y] = Strip.join([old[y].crop(0, x1), patch_lines[y].crop(x1, x2), old[y].crop(x2, W)])
            spans.append((y, x1, x2))
        if step % 5 == 4:  # a layout change: Textual sends the whole screen
            update: CompositorUpdate = ours(LayoutUpdate([[s] for s in new], Region(0, 0, W, H)))
        else:
            spans.sort()
            chops = [{c: s for c, s in zip((0, 40, 90), new[y].divide([40, 90, W]), strict=True)} for y in range(H)]
            update = ChopsUpdate(chops, spans, [[40, 90, W]] * H)
        stream.feed(ours(update).render_segments(con).encode())
        old = new
    expected, estream = terminal()
    estream.feed(LayoutUpdate([[s] for s in old], Region(0, 0, W, H)).render_segments(console()).encode())
    assert first_difference(screen, expected) is None


@pytest.mark.parametrize("keep", [None, 3])
def test_widget_lines_written_again_and_again_leave_the_shadow_exact(keep: int | None, monkeypatch) -> None:
    """The writer keeps a widget's newest line per place, not every cell it wrote (``Shadow.wrote``); Textual's
    updates drawn over part of a row come between. Lines are drawn from three variants per row, so cells often
    change back: a full repaint that trusted a stale shadow would then skip a cell the terminal shows wrong.
    ``keep``: the written ranges merged after that many (the default waits for minutes of updates)."""
    import neuron_top.tui.render.frame_writer as writer_module
    from neuron_top.tui.render.spans import changed_spans

    if keep is not None:
        monkeypatch.setattr(writer_module, "_KEEP_RANGES", keep)

    rng = random.Random(31)
    styles = [Style(color=c, bold=b) for c in ("red", "green", "color(208)") for b in (False, True)]
    con = console()
    variants = [[_random_line(rng, styles) for _ in range(3)] for _ in range(H)]
    shown = [variants[y][0] for y in range(H)]
    screen, stream = terminal()
    stream.feed(ours(LayoutUpdate([[s] for s in shown], Region(0, 0, W, H))).render_segments(con).encode())
    ends = [40, 90, W]  # three widgets side by side
    for step in range(80):
        new = list(shown)
        for y in rng.sample(range(H), 12):
            new[y] = rng.choice(variants[y])
        update: CompositorUpdate
        if step % 9 == 8:  # a layout change: the whole screen
            update = ours(LayoutUpdate([[s] for s in new], Region(0, 0, W, H)))
        elif step % 4 == 3:  # Textual's own update, cut elsewhere (a toast's edge)
            spans = sorted((y, 20, 70) for y in range(H) if new[y] is not shown[y])
            update = ChopsUpdate([dict(zip((0, 20, 70), new[y].divide([20, 70, W]), strict=True)) for y in range(H)],
                                 spans, [[20, 70, W]] * H)
        else:  # the panels: each widget's line and the cells where it differs from its line before
            spans = []
            for y in range(H):
                for x, a, b in zip((0, 40, 90), shown[y].divide(ends), new[y].divide(ends), strict=True):
                    spans += [(y, x + lo, x + hi) for lo, hi in changed_spans(a, b)]
            update = WidgetChops([dict(zip((0, 40, 90), new[y].divide(ends), strict=True)) for y in range(H)],
                                 sorted(spans), [ends] * H)
        stream.feed(ours(update).render_segments(con).encode())
        if not isinstance(update, ChopsUpdate) or isinstance(update, WidgetChops):
            shown = new
        else:  # only columns 20-70 were sent
            shown = [Strip.join([shown[y].crop(0, 20), new[y].crop(20, 70), shown[y].crop(70, W)])
                     for y in range(H)]
    final = [variants[y][rng.randrange(3)] for y in range(H)]
    stream.feed(ours(LayoutUpdate([[s] for s in final], Region(0, 0, W, H))).render_segments(con).encode())
    expected, estream = terminal()
    estream.feed(LayoutUpdate([[s] for s in final], Region(0, 0, W, H)).render_segments(console()).encode())
    assert first_difference(screen, expected) is None


async def test_ctrl_l_sends_every_cell_again(monkeypatch) -> None:
    """Another program wrote over the screen: Ctrl+L redraws it whole, although nothing changed."""
    sent: list[str] = []

    def capture(self: App, screen, renderable) -> None:
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            sent.append(renderable.render_segments(self.console))  # what the app knows of its terminal

    monkeypatch.setattr(App, "_display", capture)
    app = make_app()
    async with app.run_test(size=(W, H)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 5))
        sent.clear()
        app.refresh(layout=True)  # a full repaint of an unchanged screen: nothing to send
        await pilot.pause()
        quiet = sum(map(len, sent))
        sent.clear()
        await pilot.press("ctrl+l")
        await pilot.pause()
    assert quiet < 200
    screen, stream = terminal()
    stream.feed("".join(sent).encode())
    assert sum(1 for row in screen.display if row.strip()) > H // 2  # a blank terminal shows the dashboard again



async def test_a_resize_forgets_what_the_terminal_showed(monkeypatch) -> None:
    """After a resize the terminal may have cleared or reflowed its lines (even when the size comes back to what
    it was): the app forgets its copy, so the next full repaint sends every cell."""
    forgot: list[object] = []
    app = make_app()
    async with app.run_test(size=(W, H)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 5))
        monkeypatch.setattr(app.render_engine, "forget", forgot.append)
        await pilot.resize_terminal(W - 20, H)
        await pilot.pause()
    assert app.console in forgot


async def test_a_frame_dropped_in_a_batch_is_followed_by_a_full_one(monkeypatch) -> None:
    """Textual drops a frame drawn during a batch but counts it as shown. At start-up the first full frame is drawn
    inside the batch that composes the app, and the real demo then sent only the regions repainted after it (the
    header without its title, panel titles on a blank screen) until a layout change repainted everything. What
    is sent after a dropped frame must add up to the whole screen on a blank terminal."""
    sent: list[str] = []
    cons = [console()]

    def capture(self: App, screen, renderable) -> None:
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:  # as Textual: dropped in a batch
            sent.append(renderable.render_segments(cons[-1]))

    monkeypatch.setattr(App, "_display", capture)
    app = make_app()
    async with app.run_test(size=(W, H)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 2))
        with app.batch_update():  # what start-up does: a whole frame drawn, and dropped
            app._display(app.screen, app.screen._compositor.render_update(full=True))
        sent.clear()
        cons.append(console())  # a blank terminal from here on: the writer knows nothing it shows
        app.accept_snapshot(demo_snapshots("inf2.48xlarge", 3, 3)[2])  # then an ordinary partial update
        await pilot.pause()
        full = app.screen._compositor.render_update(full=True).render_segments(console())
    screen, stream = terminal()  # the terminal never got the dropped frame: blank
    stream.feed("".join(sent).encode())
    expected, estream = terminal()
    estream.feed(full.encode())
    assert "neuron-top" in screen.display[0]
    assert first_difference(screen, expected) is None

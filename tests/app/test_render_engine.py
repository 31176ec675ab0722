"""The render engine is contained and means what Textual means.

* Contained: importing any of our modules leaves Textual and Rich as they were, and so does running an app.
* Switchable: ``--render textual`` / ``NEURON_TOP_RENDER=textual`` runs the app on Textual's public paths, and
  the dashboard looks the same either way (the exported screen, and the bytes on an emulated terminal).
* Meaning: known content drawn through our writer and through Textual's own, into two emulated terminals (pyte),
  must leave them identical, cell by cell, for full repaints and partial updates. This is what fails when a Textual
  release keeps a private name but changes what it means (6.4 changed ``LayoutUpdate.strips`` so).
* Shape: every private name listed in ``render/private.py`` resolves at the installed Textual, and the start-up
  check finds nothing missing (so the engine is really on where we test it, not quietly off).

``.ci/run`` runs this file at both ends of the declared Textual range.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable

import pyte
import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate
from textual.app import App
from textual.geometry import Region
from textual.strip import Strip

from neuron_top.tui.render import light, private
from neuron_top.tui.render.engine import ENV, RenderEngine, render_mode
from tests.conftest import ROOT
from tests.helpers import demo_snapshots, feed, make_app

W, H = 100, 30
COLOUR_SYSTEMS = ("standard", "256", "truecolor")


def console(color_system: str = "256") -> Console:
    return Console(force_terminal=True, color_system=color_system, width=W, height=H,  # type: ignore[arg-type]
                   legacy_windows=False)


class Terminal:
    """An emulated terminal (pyte) of W x H."""

    def __init__(self, width: int = W, height: int = H) -> None:
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.ByteStream(self.screen)

    def feed(self, data: str) -> None:
        self.stream.feed(data.encode())

    def cells(self) -> list[list[tuple[object, ...]]]:
        s = self.screen
        return [[tuple(s.buffer[y][x]) for x in range(s.columns)] for y in range(s.lines)]


def difference(a: Terminal, b: Terminal) -> str | None:
    """The first cell where two terminals differ (character and every attribute pyte keeps), or None."""
    for y, (ra, rb) in enumerate(zip(a.cells(), b.cells(), strict=True)):
        for x, (ca, cb) in enumerate(zip(ra, rb, strict=True)):
            if ca != cb:
                return f"row {y} col {x}: ours {ca}, Textual's {cb}"
    return None


STYLES = [Style(color="red"), Style(color="green", bold=True), Style(color="color(208)", italic=True),
          Style(color="#3a7bd5", bgcolor="#101418"), Style(color="black", bgcolor="yellow", underline=True),
          Style(reverse=True), Style(strike=True, color="blue"), Style(dim=True), Style(), None]
TEXT = "ab █▁▂─.%0123xyz"


def random_line(rng: random.Random, width: int = W, wide: bool = False) -> Strip:
    """A line of random runs of characters in random styles, exactly ``width`` cells (CJK runs if ``wide``)."""
    segs, n = [], 0
    while n < width:
        if wide and width - n >= 2 and rng.random() < 0.15:
            segs.append(Segment("推", rng.choice(STYLES)))
            n += 2
            continue
        k = min(rng.randint(1, 12), width - n)
        segs.append(Segment("".join(rng.choice(TEXT) for _ in range(k)), rng.choice(STYLES)))
        n += k
    return Strip(segs)


def full_update(lines: list[Strip]) -> LayoutUpdate:
    return LayoutUpdate([[s] for s in lines], Region(0, 0, W, len(lines)))


# --- meaning: our writer against Textual's own --------------------------------------------------------------------


@pytest.mark.parametrize("colors", COLOUR_SYSTEMS)
@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_a_full_repaint_draws_what_textuals_draws(colors: str, wide: bool) -> None:
    rng = random.Random(3)
    lines = [random_line(rng, wide=wide) for _ in range(H)]
    ours, theirs = Terminal(), Terminal()
    ours.feed(RenderEngine().render(full_update(lines), console(colors)))
    theirs.feed(full_update(lines).render_segments(console(colors)))
    assert difference(ours, theirs) is None


@pytest.mark.parametrize("colors", COLOUR_SYSTEMS)
@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_partial_updates_and_repaints_draw_what_textuals_draw(colors: str, wide: bool) -> None:
    """From the same screen, the same updates: random spans over three side-by-side chops (some rows without a
    chop, spans that cross chop edges), with a full repaint every few. Our terminal must match Textual's after
    every update. The new lines differ from the old only inside the spans, as Textual's own updates do."""
    rng = random.Random(17 + wide)
    engine, con = RenderEngine(), console(colors)  # one console: the engine follows what its terminal shows
    old = [random_line(rng, wide=wide) for _ in range(H)]
    ours, theirs = Terminal(), Terminal()
    ours.feed(engine.render(full_update(old), con))
    theirs.feed(full_update(old).render_segments(console(colors)))
    cuts, ends = (0, 30, 70), [30, 70, W]
    for step in range(24):
        new = list(old)
        if step % 6 == 5:  # a layout change: the whole screen (mostly as it was), through the shadow
            for y in rng.sample(range(H), 5):
                new[y] = random_line(rng, wide=wide)
            update: CompositorUpdate = full_update(new)
        else:
            spans = []
            for y in sorted(rng.sample(range(H), 8)):
                x1 = rng.randrange(W - 1)
                x2 = rng.randint(x1 + 1, min(W, x1 + 40))
                patch = random_line(rng, wide=wide)
                if wide:  # a span edge inside a wide character: Textual sends whole chops then; so do we
                    x1, x2 = 0, W
                new[y] = Strip.join([old[y].crop(0, x1), patch.crop(x1, x2), old[y].crop(x2, W)]) \
                    if not wide else patch
                spans.append((y, x1, x2))
            chops = [dict(zip(cuts, new[y].divide(ends), strict=True)) if y % 7 else {0: None} for y in range(H)]
            chop_ends = [ends if y % 7 else [W] for y in range(H)]
            spans = [s for s in spans if s[0] % 7]
            if not spans:
                continue
            for y in range(H):
                if not y % 7:
                    new[y] = old[y]
            update = ChopsUpdate(chops, spans, chop_ends)
        ours.feed(engine.render(update, con))  # type: ignore[arg-type]
        theirs.feed(update.render_segments(console(colors)))
        assert difference(ours, theirs) is None, f"after update {step}"
        old = new


def test_a_linked_segment_draws_what_textuals_draws() -> None:
    link = Style(color="cyan", link="https://example.com/a")
    line = Strip([Segment("see ", Style(color="red")), Segment("here", link), Segment(" " * (W - 8), None)])
    lines = [line] + [Strip([Segment(" " * W)])] * (H - 1)
    ours, theirs = Terminal(), Terminal()
    ours.feed(RenderEngine().render(full_update(lines), console()))
    theirs.feed(full_update(lines).render_segments(console()))
    assert difference(ours, theirs) is None
    update = ChopsUpdate([{0: line}] + [{0: None}] * (H - 1), [(0, 2, 6)], [[W]] * H)
    ours.feed(RenderEngine().render(update, console()))
    theirs.feed(update.render_segments(console()))
    assert difference(ours, theirs) is None


def test_a_chop_shorter_than_its_region_draws_what_textuals_draws() -> None:
    """Just after a resize Textual can send a chop narrower than the region its spans cover (the strip was cut
    for the old width). Two spans a cell apart beyond the strip's end made our writer fail (IndexError in
    ``_bridged``, seen entering a host from the fleet view after 80x24 -> 120x40); it must draw what Textual
    draws, and keep drawing."""
    lines = [Strip([Segment(" " * W)])] * H
    engine = RenderEngine()
    ours, theirs = Terminal(), Terminal()
    ours.feed(engine.render(full_update(lines), console()))
    theirs.feed(full_update(lines).render_segments(console()))
    short = Strip([Segment("abcdef", Style(color="red"))])  # 6 cells in a chop 0..W
    update = ChopsUpdate([{0: short}] + [{0: None}] * (H - 1), [(0, 0, 7), (0, 9, 12)], [[W]] * H)
    ours.feed(engine.render(update, console()))
    theirs.feed(update.render_segments(console()))
    assert not engine.failed
    assert difference(ours, theirs) is None


def test_light_strips_render_as_strips_do() -> None:
    """What the writer sends of a LightStrip (made light, as with the engine) is what Textual sends of a Strip."""
    before = light.engine_strips()
    light.use_engine_strips(True)
    try:
        rng = random.Random(9)
        for _ in range(20):
            segs = list(random_line(rng, wide=True))
            lite, plain = light.LightStrip(segs), Strip(segs)
            assert lite.render(console()) == plain.render(console())
            assert lite.crop(3, 40).render(console()) == plain.crop(3, 40).render(console())
    finally:
        light.use_engine_strips(before)


# --- shape: the private names -------------------------------------------------------------------------------------


async def test_every_private_name_resolves_and_the_start_up_check_passes() -> None:
    from textual.drivers.linux_driver import LinuxDriver
    from textual.filter import ANSIToTruecolor

    from neuron_top.tui.widgets.cores import CoreGrid

    app = make_app()
    async with app.run_test(size=(W, H)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 3))
        assert private.missing(app) == ""
        assert app.render_engine is not None  # the engine is on where we test it
        driver = LinuxDriver(app)
        instances: dict[str, object] = {
            "textual.app.App": app, "textual.screen.Screen": app.screen, "rich.console.Console": app.console,
            "textual.widget.Widget": app.screen.query_one(CoreGrid), "textual.driver.Driver": driver,
            "textual.drivers.linux_driver.LinuxDriver": driver,
            "textual.filter.ANSIToTruecolor": ANSIToTruecolor(app.ansi_theme),
        }
        from textual._xterm_parser import XTermParser

        instances["textual._xterm_parser.XTermParser"] = XTermParser(False)
        unresolved = []
        for p in private.PRIVATE:
            try:
                private.resolve(p.name)
                continue
            except AttributeError:
                pass
            owner, attr = p.name.rsplit(".", 1)
            if owner not in instances or not hasattr(instances[owner], attr):
                unresolved.append(p.name)
        assert unresolved == []
    assert len(private.PRIVATE) >= 30 and all(p.why for p in private.PRIVATE)


async def test_a_textual_without_a_private_name_runs_on_its_own_paths_and_says_so(monkeypatch) -> None:
    gone = private.Private("textual.app.App._no_such_name", "nowhere", "a test", "app")
    monkeypatch.setattr(private, "PRIVATE", (*private.PRIVATE, gone))
    app = make_app()
    assert app.render_engine is None
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 5))
        assert any("App._no_such_name" in str(n.message) for n in app._notifications)
        assert "neuron-top" in app.screen.query_one("HeaderBar").render_line(0).text


# --- contained: nothing of Textual's is replaced -----------------------------------------------------------------

_SNAPSHOT = r"""
import importlib, pkgutil, sys, asyncio
import textual, rich

def load_all(pkg):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        try:
            importlib.import_module(m.name)
        except Exception:
            pass

def code(value):
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))

def state():
    # behaviour only: functions, methods, properties and classes (counters and caches change on their own)
    out = {}
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] not in ("textual", "rich") or mod is None:
            continue
        for key, value in list(vars(mod).items()):
            if code(value):
                out[(name, key)] = id(value)
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    if code(member):
                        out[(name, key, attr)] = id(member)
    return out

def changed(before, after):
    return sorted(str(k) for k in before if k in after and before[k] != after[k])

load_all(textual); load_all(rich)
before = state()
import neuron_top.tui
for m in pkgutil.walk_packages(neuron_top.tui.__path__, "neuron_top.tui."):
    importlib.import_module(m.name)
print("import:", changed(before, state()))
from tests.helpers import demo_snapshots, feed, make_app
classes_before = {k: v for k, v in state().items() if len(k) == 3}

async def run():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 4))
        assert app.render_engine is not None
asyncio.run(run())
print("run:", changed(classes_before, {k: v for k, v in state().items() if len(k) == 3}))
"""


def test_importing_the_tui_and_running_the_app_leave_textual_and_rich_untouched() -> None:
    """Every Textual and Rich module loaded first; then every module of ``neuron_top.tui`` imported: no function,
    class or method of theirs may be replaced, in a module or a class. Then an app runs with the engine: no
    method of a class may be replaced either."""
    out = subprocess.run([sys.executable, "-c", _SNAPSHOT], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, ENV: ""})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "import: []" in out.stdout and "run: []" in out.stdout, out.stdout


# --- the off switch -----------------------------------------------------------------------------------------------


def test_the_mode_comes_from_the_command_line_then_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert render_mode(None) == ("fast", "")
    monkeypatch.setenv(ENV, "textual")
    assert render_mode(None) == ("textual", "")
    assert render_mode("fast") == ("fast", "")
    monkeypatch.setenv(ENV, "Textual ")
    assert render_mode(None) == ("textual", "")
    monkeypatch.setenv(ENV, "curses")
    mode, note = render_mode(None)
    assert mode == "fast" and "curses" in note and ENV in note


def test_every_screen_command_takes_render() -> None:
    from neuron_top.cli.fleet_cmd import fleet_parser
    from neuron_top.cli.main import demo_parser, main_parser, replay_parser, trace_parser

    assert main_parser().parse_args(["--render", "textual"]).render == "textual"
    assert demo_parser().parse_args(["--render", "fast"]).render == "fast"
    assert replay_parser().parse_args(["x.ndjson", "--render", "textual"]).render == "textual"
    assert trace_parser().parse_args(["t.json", "--render", "textual"]).render == "textual"
    assert fleet_parser().parse_args(["--ssh", "h1", "--render", "textual"]).render == "textual"
    assert main_parser().parse_args([]).render is None
    with pytest.raises(SystemExit):
        main_parser().parse_args(["--render", "curses"])


async def test_off_means_textuals_own_driver_filters_writer_and_strips(monkeypatch) -> None:
    from textual.filter import ANSIToTruecolor

    from neuron_top.tui.render.driver import QuietLinuxDriver
    from neuron_top.tui.render.paint import QuickTruecolor

    monkeypatch.setenv(ENV, "textual")
    app = make_app()
    assert app.render_engine is None and not light.engine_strips()
    assert app.get_driver_class() is not QuietLinuxDriver
    assert [type(f) for f in app._filters] == [ANSIToTruecolor]
    shown: list[object] = []
    monkeypatch.setattr(App, "_display", lambda self, screen, renderable: shown.append(renderable))
    async with app.run_test(size=(W, H)) as pilot:
        await feed(pilot, demo_snapshots("inf2.48xlarge", 3, 6))
        app.accept_snapshot(demo_snapshots("inf2.48xlarge", 3, 7)[6])
        await pilot.pause()
    assert shown and all(type(r) in (ChopsUpdate, LayoutUpdate) for r in shown if r is not None)
    on = make_app(render="fast")
    assert on.render_engine is not None and light.engine_strips()
    assert [type(f) for f in on._filters] == [QuickTruecolor]


async def test_a_bad_environment_value_is_shown_and_the_engine_stays_on(monkeypatch) -> None:
    monkeypatch.setenv(ENV, "curses")
    app = make_app()
    assert app.render_engine is not None
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        assert any("curses" in str(n.message) for n in app._notifications)


Scenario = Callable[..., object]


async def _drive(pilot, snaps) -> None:
    """The same session for both modes: reports, a drill-down and back, the FLOPS view, a scrolled body."""
    app = pilot.app
    await feed(pilot, snaps[:8])
    for i, s in enumerate(snaps[8:]):
        app.accept_snapshot(s)
        await pilot.pause()
        if i == 2:
            app.open_app(app.latest.apps[0].pid)
        if i == 4:
            await pilot.press("escape")
        if i == 6:
            await pilot.press("f")
        if i == 8:
            await pilot.press("d")
    await pilot.pause()


async def _both_modes(size: tuple[int, int]) -> dict[str, object]:
    """The same session with the engine and without: their exported screens, and for each the terminal that got
    every byte it sent, checked against Textual's own full repaint of its final screen."""
    snaps = demo_snapshots("trn2.48xlarge", 7, 20)
    screens, terminals, problems = [], [], []
    real_display = App._display
    for mode in ("fast", "textual"):
        sent: list[str] = []
        # The app's own colour system (the headless app's console is truecolor).
        con = Console(force_terminal=True, color_system="truecolor", width=size[0], height=size[1],
                      legacy_windows=False)

        def capture(self: App, screen, renderable, sent=sent, con=con) -> None:
            if isinstance(renderable, CompositorUpdate) and not self._batch_count:
                sent.append(renderable.render_segments(con))

        App._display = capture  # type: ignore[method-assign]
        try:
            app = make_app(render=mode)
            assert (app.render_engine is None) == (mode == "textual")
            async with app.run_test(size=size) as pilot:
                await _drive(pilot, snaps)
                screens.append(app.export_screenshot())
                if app.render_engine is not None and app.render_engine.failed:
                    problems.append("the engine fell back to Textual's writer")
                whole = app.screen._compositor.render_update(full=True).render_segments(
                    Console(force_terminal=True, color_system="truecolor", width=size[0], height=size[1],
                            legacy_windows=False))
        finally:
            App._display = real_display  # type: ignore[method-assign]
        term, expected = Terminal(*size), Terminal(*size)
        for chunk in sent:
            term.feed(chunk)
        expected.feed(whole)
        if (d := difference(term, expected)) is not None:  # every byte sent adds up to the final screen
            problems.append(f"{mode}: {d}")
        terminals.append(term)
    return {"screens_equal": screens[0] == screens[1], "between": difference(terminals[0], terminals[1]),
            "problems": problems}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_dashboard_looks_the_same_with_the_engine_off(size: tuple[int, int]) -> None:
    """The exported screen (what the snapshot tests compare) and the emulated terminal that got every byte are the
    same with ``--render textual`` as with the engine, after the same session.

    In a fresh interpreter: Rich keeps a Style's SGR codes and Textual a Strip's rendering for whichever colour
    system asked first, process-wide (``Style._ansi``, ``Strip.render``, the cached ``Strip.blank``), so an earlier
    test's 16-colour console would colour some cells of this one. A real app has one console."""
    code = ("import asyncio, json, sys\n"
            "from tests.app.test_render_engine import _both_modes\n"
            f"print(json.dumps(asyncio.run(_both_modes({size!r}))))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, ENV: ""})
    assert out.returncode == 0, out.stderr[-2000:]
    got = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert got["problems"] == []
    assert got["screens_equal"]
    assert got["between"] is None


# --- a widget painted twice before one flush ----------------------------------------------------------------------

SUMMARIES = [  # the fleet's summary line as three reports arriving together changed it (seen in tmux, busy CPU)
    " 5 hosts: 0 up, 0 stale, 1 down · util avg - p10 - · errors -/s · exec -/s · 1 need a look",
    " 5 hosts: 1 up, 0 stale, 1 down · util avg 67.8% p10 67.8% · errors 0/s · exec 58.0/s · 2 idle allocated cores",
    " 5 hosts: 2 up, 0 stale, 1 down · util avg 68.9% p10 68.0% · errors 0/s · exec 593.8/s · 3 idle allocated core",
    " 5 hosts: 3 up, 0 stale, 1 down · util avg 62.4% p10 53.1% · errors 0/s · exec 1016.7/s · 4 idle allocated cor",
]
SW = 120


def _summary_lines(text: str, styles: list[Style]) -> list[Strip]:
    """Line 0: ``text`` in one style (as the fleet header's summary); line 1: the same cut into 7-cell runs of
    alternating styles (as a table row)."""
    text = text.ljust(SW)[:SW]
    runs = [Segment(text[i:i + 7], styles[i // 7 % 2]) for i in range(0, SW, 7)]
    return [Strip([Segment(text, styles[0])]), Strip(runs)]


async def test_updates_painted_before_one_flush_all_reach_the_terminal(monkeypatch) -> None:
    """Three updates of a ``LineDiff`` widget painted before one flush go out as one frame, and the terminal
    that got every byte shows the last one. Without ``paint.merged`` the frame's spans for a line overlapped
    and went backwards; the writer cut a range short where the next began inside it and skipped cells, so the
    terminal kept ``p10 53.1rs -/s`` while the widget and the shadow held ``p10 53.1% · errors 0/s``."""
    from textual.app import ComposeResult

    from neuron_top.tui.render.paint import WidgetChops
    from neuron_top.tui.render.spans import LineDiff
    from neuron_top.tui.render.terminal import TerminalApp

    styles = [Style(color="#8a8f98", bgcolor="#202428"), Style(color="#e0e0e0", bgcolor="#202428", bold=True)]

    class Summary(LineDiff):
        DEFAULT_CSS = "Summary { height: 2; }"
        text = SUMMARIES[0]

        def draw_line(self, y: int) -> Strip:
            return _summary_lines(self.text, styles)[y]

        def show(self, text: str) -> None:
            self.text = text
            self.repaint_changed()

    class OneWidget(TerminalApp):
        def compose(self) -> ComposeResult:
            yield Summary()

    con = Console(force_terminal=True, color_system="truecolor", width=SW, height=4, legacy_windows=False)
    sent: list[str] = []
    kinds: list[str] = []

    def capture(self: App, screen, renderable) -> None:
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            kinds.append(type(getattr(renderable, "update", renderable)).__name__)
            sent.append(renderable.render_segments(con))

    monkeypatch.setattr(App, "_display", capture)
    app = OneWidget(render="fast")
    async with app.run_test(size=(SW, 4)) as pilot:
        summary = app.query_one(Summary)
        await pilot.pause()
        kinds.clear()
        for text in SUMMARIES[1:]:  # no await between: one flush for the three
            summary.show(text)
        await pilot.pause()
        assert kinds == [WidgetChops.__name__]  # the direct path, one frame
        whole = app.screen._compositor.render_update(full=True).render_segments(
            Console(force_terminal=True, color_system="truecolor", width=SW, height=4, legacy_windows=False))
    term, expected = Terminal(SW, 4), Terminal(SW, 4)
    for chunk in sent:
        term.feed(chunk)
    expected.feed(whole)
    assert "".join(term.screen.display[0]).rstrip() == SUMMARIES[-1]
    assert difference(term, expected) is None


def test_merged_spans_are_one_sorted_disjoint_entry_per_line() -> None:
    from neuron_top.tui.render.paint import merged

    a = [(1, [(10, 11), (43, 48), (53, 78)]), (3, [(0, 2)])]
    b = [(0, [(5, 6)]), (1, [(44, 45), (46, 47), (54, 55), (77, 90)])]
    assert merged(a, b) == [(0, [(5, 6)]), (1, [(10, 11), (43, 48), (53, 90)]), (3, [(0, 2)])]

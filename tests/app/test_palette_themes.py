"""The command palette's themes: neuron-top's own first and marked apart from Textual's stock ones (issue 32 item
10), and picking one applies it."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

from neuron_top.tui.themes import OURS, STOCK
from tests.helpers import demo_snapshots, feed, make_app, until


def options(app) -> list[str]:
    listing = app.screen.query_one(CommandList)
    return [str(listing.get_option_at_index(i).prompt).split("\n")[0] for i in range(listing.option_count)]


async def test_the_theme_command_lists_ours_apart_from_textuals() -> None:
    app = make_app(demo_snapshots("inf1.xlarge", 7, 2))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        ours = sorted(app._themes.themes)
        assert {"neuron-dark", "neuron-light", "neuron-16"} <= set(ours)
        app.action_change_theme()  # the palette's "Theme" command (ctrl+p, then Theme)
        await until(lambda: isinstance(app.screen, CommandPalette) and app.screen.query(CommandList)
                    and app.screen.query_one(CommandList).option_count >= len(app.available_themes))
        shown = options(app)
        assert shown[:len(ours)] == [f"{OURS}: {n}" for n in ours]  # ours first, in name order
        stock = shown[len(ours):]
        assert stock and all(s.startswith(f"{STOCK}: ") for s in stock) and f"{STOCK}: textual-dark" in stock
        assert not any(s.removeprefix(f"{STOCK}: ") in ours for s in stock)
        await pilot.press(*"light")  # a search keeps the labels: which "light" is whose
        await until(lambda: 0 < len(options(app)) < len(shown))
        got = options(app)
        assert f"{OURS}: neuron-light" in got and f"{STOCK}: textual-light" in got
        listing = app.screen.query_one(CommandList)
        listing.highlighted = got.index(f"{OURS}: neuron-light")
        await pilot.press("enter")
        await until(lambda: app.theme == "neuron-light")


async def test_keys_typed_right_after_ctrl_p_go_into_the_palettes_search() -> None:
    """``^p`` and a command's name arriving together (typed fast, pasted, one ssh read): the palette opened with
    an empty search, the letters routed before its box had the focus; ``l`` changed the dashboard's layout."""
    from textual import events
    from textual.command import CommandInput

    from tests.helpers import type_at_once

    app = make_app(demo_snapshots("inf1.xlarge", 7, 2))
    async with app.run_test(size=(120, 40)) as pilot:
        await feed(pilot)
        layout = app.layout_state
        app.post_message(events.Key("ctrl+p", None))
        type_at_once(app, "light!")
        await until(lambda: isinstance(app.screen, CommandPalette) and app.screen.query(CommandInput)
                    and app.screen.query_one(CommandInput).value.endswith("!"), what="the palette's search")
        assert app.screen.query_one(CommandInput).value == "light!"
        assert app.layout_state == layout

"""``LightStrip`` must be a Strip in every way Textual uses one, with its caches made only when asked for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from neuron_top.tui.render import light
from neuron_top.tui.render.light import LightStrip

RED = Style(color="red")


@pytest.fixture(autouse=True, params=[True, False], ids=["engine", "textual"])
def engine_strips(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Each test with the engine's light strips (what an app with the engine makes) and without."""
    before = light.engine_strips()
    light.use_engine_strips(request.param)
    yield request.param
    light.use_engine_strips(before)


def segments() -> list[Segment]:
    return [Segment("ab", RED), Segment("█▏─", None), Segment("xyz", Style(bold=True))]


def test_it_draws_and_answers_as_a_strip_does() -> None:
    plain, lite = Strip(segments()), LightStrip(segments())
    assert lite == plain
    assert lite.cell_length == plain.cell_length == 8
    assert lite.text == plain.text
    for _ in range(2):  # the second time from the caches made the first time
        assert list(lite.crop(1, 6)) == list(plain.crop(1, 6))
        assert list(lite.crop_extend(0, 12, RED)) == list(plain.crop_extend(0, 12, RED))
        assert [list(s) for s in lite.divide([3, 5])] == [list(s) for s in plain.divide([3, 5])]
        assert list(lite.apply_style(RED)) == list(plain.apply_style(RED))
        assert list(lite.extend_cell_length(10)) == list(plain.extend_cell_length(10))
    assert list(LightStrip(segments(), 8)) == segments()


def test_its_caches_are_made_when_first_read(engine_strips: bool) -> None:
    """On the tested Textual the light path is there (a Textual whose Strip changed shape gets a plain Strip),
    and taken while an app runs the render engine; without it a LightStrip is made by ``Strip.__init__``."""
    assert light._CACHES is not None and "_crop_cache" in light._CACHES
    assert light.engine_strips() is engine_strips
    lite = LightStrip(segments())
    if not engine_strips:
        assert all(_set(lite, name) for name in light._CACHES)
        return
    assert [name for name in light._CACHES if _set(lite, name)] == []
    lite.crop(0, 3)
    assert _set(lite, "_crop_cache") and not _set(lite, "_style_cache")
    try:
        lite.no_such_thing  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute must still be an AttributeError")


def _set(strip: Strip, slot: str) -> bool:
    """Whether the slot holds a value, without the fallback that would make it."""
    try:
        getattr(Strip, slot).__get__(strip)
    except AttributeError:
        return False
    return True


def test_what_the_diff_reads_of_a_light_strip_is_made_once() -> None:
    lite, plain = LightStrip(segments()), Strip(segments())
    first = light.pieces(lite)
    assert light.pieces(lite) is first  # kept: each line is diffed as the new one, then as the old one
    assert first == light.pieces(plain) == (["ab", "█▏─", "xyz"], "ab█▏─xyz", [RED, None, Style(bold=True)])
    assert light.pieces(plain) is not light.pieces(plain)


def test_characters_counts_from_the_kept_pieces_or_the_segments() -> None:
    wide = [Segment("推理", RED), Segment("ab", None)]
    for make in (Strip, LightStrip):
        assert light.characters(make(segments())) == 8
        assert light.characters(make(wide)) == 4  # characters, not cells (6): the writer's test for wide text
    lite = LightStrip(segments())
    light.pieces(lite)
    assert light.characters(lite) == 8

"""End-to-end: ``neuron-top trace`` on real traces in a real terminal (tmux), as a new user would run it."""

from __future__ import annotations

import shutil

import pytest

from tests.e2e.test_tmux import nt, term  # noqa: F401  (the fixture)
from tests.trace_helpers import real_trace

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (needed to drive a real terminal)"),
]


def test_two_ranks_at_the_end_area_help_and_quit(term) -> None:  # noqa: F811
    t = term(80, 24)
    ranks = [str(real_trace(f"hta_trace_filter_sampled_rank-{k}.json.gz")) for k in (0, 1)]
    t.start(nt("trace", *ranks, "--at", "end"))
    t.wait_for("2 files (one wall clock)")
    screen = t.wait_for("rank 0")
    assert "grouping: file (o)" in screen
    t.keys("a")
    t.wait_for("slices,")
    assert "count" in t.screen() and "total" in t.screen()
    t.keys("Escape", "Escape", "?")
    screen = t.wait_for("neuron-top keys")
    assert "Timeline (T, or neuron-top trace FILE)" in screen.split("neuron-top keys")[1].splitlines()[1]
    assert "greater_than_sign" not in screen
    t.keys("Escape")
    t.wait_for(lambda s: "neuron-top keys" not in s)
    t.keys("q")
    assert t.wait_exit() == 0


def test_a_trace_with_lost_events_says_so(term, tmp_path) -> None:  # noqa: F811
    p = tmp_path / "cut.json"
    p.write_text('[{"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":2,"du')
    t = term(100, 20)
    t.start(nt("trace", str(p)))
    t.wait_for("unreadable: 1 event could not be read")
    t.keys("q")
    assert t.wait_exit() == 0


def _tracks(screen: str, label_w: int) -> str:
    """The track area of a timeline screen: the lines under the axis and above the details, right of the labels."""
    lines = screen.splitlines()
    body = []
    for line in lines[2:]:
        if line.startswith("─" * 20):  # the details pane's top border
            break
        body.append(line[label_w + 1 :])
    return "\n".join(body)


def _details_title(screen: str) -> str:
    """The selected event's name (the first line of the details pane), or "" while the pane is not shown."""
    lines = screen.splitlines()
    k = next((i for i, line in enumerate(lines) if line.startswith("─" * 20)), None)
    return lines[k + 1].strip() if k is not None and k + 1 < len(lines) else ""


def test_walk_a_flow_chain_from_its_middle_each_end_in_view(term) -> None:  # noqa: F811
    """Issue 35's acceptance at 120x40 on Perfetto's flow v2 test trace: from OtherSlice (the middle of
    SenderA -> OtherSlice -> SomeSlice, SomeOtherSlice) to the source, every consumer and back, each drawn in the
    track area at the zoom the jump left (SenderA, 10 µs, is under a cell of the whole trace: zoomed in)."""
    t = term(120, 40)
    t.start(nt("trace", str(real_trace("perfetto_flow_events_json_v2.json"))))
    t.wait_for("grouping: CPU vs device (o)")
    t.keys("+", "+", "+", "+", "+", "+")  # zoomed far into the start: nothing of the chain in view
    t.wait_for("67.7 µs shown")
    t.keys("/")
    t.wait_for("search event names")
    t.keys("OtherSlice")
    t.wait_for("OtherSlice")
    t.keys("Enter")
    screen = t.wait_for(lambda s: _details_title(s) == "OtherSlice")
    assert "flows: 1 in (H), 2 out (L) · D lists them" in screen
    label_w = 24  # at 120 columns
    assert "→OtherSlice" in _tracks(screen, label_w)
    for key, name in (("H", "SenderA"), ("L", "OtherSlice"), ("L", "SomeSlice"), ("H", "OtherSlice"),
                      ("L", "SomeOtherSlice"), ("H", "OtherSlice")):
        t.keys(key)
        screen = t.wait_for(lambda s, name=name: _details_title(s) == name)
        assert name in _tracks(screen, label_w), f"{name} selected but not drawn in view:\n{screen}"
    t.keys("D")
    screen = t.wait_for("↓ downstream (L): 2")
    assert "SenderA" in screen and "SomeSlice" in screen and "SomeOtherSlice" in screen
    t.keys("Escape")  # (alone: ESC then q at once is Alt+q)
    t.wait_for(lambda s: "↓ downstream (L)" not in s)
    t.keys("q")
    assert t.wait_exit() == 0

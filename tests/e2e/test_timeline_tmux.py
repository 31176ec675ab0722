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

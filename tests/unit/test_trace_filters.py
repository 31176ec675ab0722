"""The Neuron filter syntax: cores "0,2,4" / "0-3", event types with groups and ^exclusions, instance ids."""

from __future__ import annotations

import pytest

from neuron_top.trace.filters import FilterError, Filters, parse_cores, parse_instances, parse_types
from neuron_top.trace.store import Track


def test_cores() -> None:
    assert parse_cores("0") == {0}
    assert parse_cores("0,2,4") == {0, 2, 4}
    assert parse_cores("0-3") == {0, 1, 2, 3}
    assert parse_cores(" 0-1, 8 ,") == {0, 1, 8}
    assert parse_cores("") is None


@pytest.mark.parametrize("bad", ["a", "3-1", "-1", "1-x", "0-100000"])
def test_bad_cores(bad: str) -> None:
    with pytest.raises(FilterError):
        parse_cores(bad)


def test_types_groups_and_exclusions() -> None:
    f = parse_types("hardware,^cc_exec_barrier")
    assert f is not None
    assert f.accepts("nc_exec_running") and f.accepts("cc_running")
    assert not f.accepts("cc_exec_barrier")
    assert not f.accepts("nrt_execute")  # software
    sw = parse_types("software,^model_load")
    assert sw is not None and sw.accepts("nrt_execute") and not sw.accepts("model_load")
    assert not sw.accepts("hw_notify")
    mix = parse_types("hardware,tensor_read,tensor_write")
    assert (
        mix is not None
        and mix.accepts("tensor_read")
        and mix.accepts("numerical_err")
        and not mix.accepts("nrt_load")
    )
    only_not = parse_types("^nrt_execute")
    assert only_not is not None and only_not.accepts("anything") and not only_not.accepts("nrt_execute")
    # neuron-det names carry details after a space: the type is the first word
    assert parse_types("sync_exec").accepts("sync_exec - /tmp/model.neff")  # type: ignore[union-attr]
    assert parse_types("") is None


def test_bad_types() -> None:
    with pytest.raises(FilterError):
        parse_types("^")
    with pytest.raises(FilterError):
        parse_types("a b")


def test_instances_and_tracks() -> None:
    assert parse_instances("i-abc123, i-def456") == {"i-abc123", "i-def456"}
    f = Filters.parse(cores="0-1", instances="i-abc123")
    assert f.active
    assert f.accepts_track(Track(0, (), "thread", core=1, instance="i-abc123"))
    assert not f.accepts_track(Track(0, (), "thread", core=2, instance="i-abc123"))
    assert not f.accepts_track(Track(0, (), "thread", core=1, instance="i-zzz"))
    assert not f.accepts_track(Track(0, (), "thread", core=None, instance="i-abc123"))
    assert not Filters().active and Filters().accepts_track(Track(0, (), "thread"))


def test_name_table_and_describe() -> None:
    f = Filters.parse(cores="0-3,8", types="hardware,^cc_running", instances="i-1")
    assert f.name_table(["cc_running", "nc_exec_running", "nrt_execute"]) == b"\x00\x01\x00"
    assert f.describe() == "NC 0-3,8; types hardware,^cc_running; instances i-1"

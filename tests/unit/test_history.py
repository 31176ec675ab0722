from __future__ import annotations

from neuron_top.history import History
from tests.conftest import DATA, load_snapshot


def test_series_stay_aligned_and_bounded() -> None:
    h = History(maxlen=5)
    snaps = [load_snapshot(DATA / "trn2_small.json", ts=float(i)) for i in range(7)]
    h.extend(snaps)
    assert len(h) == 5
    assert list(h.ts) == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert list(h.series(("core", 0))) == [91.5] * 5
    assert h.series(("vcpu", 0))[-1] == 80.0
    assert h.first is snaps[0]


def test_idle_latency_is_a_gap_and_late_series_are_padded() -> None:
    h = History(maxlen=10)
    h.push(load_snapshot(DATA / "trn2_small.json", ts=0.0))
    assert list(h.series(("lat", 5151, "total", "p50"))) == []  # idle: never a zero
    assert h.last(("lat", 4242, "total", "p99"), 3) == [None, None, 0.020]
    assert h.last(("nope",), 2) == [None, None]


def test_clear() -> None:
    h = History()
    h.push(load_snapshot(DATA / "trn2_small.json", ts=0.0))
    h.clear()
    assert len(h) == 0 and h.first is None and not list(h.keys())

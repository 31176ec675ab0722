"""wait_for_any: the interruptible sleep every source uses between reports and restarts."""

from __future__ import annotations

import threading

from neuron_top.sources.base import wait_for_any


def test_returns_true_at_once_when_an_event_is_already_set() -> None:
    a, b = threading.Event(), threading.Event()
    b.set()
    assert wait_for_any(3600, a, b) is True


def test_returns_false_after_the_timeout() -> None:
    assert wait_for_any(0.01, threading.Event(), threading.Event()) is False
    assert wait_for_any(0, threading.Event()) is False
    assert wait_for_any(0) is False


def test_wakes_when_the_second_event_is_set_from_another_thread() -> None:
    a, b = threading.Event(), threading.Event()
    timer = threading.Timer(0.05, b.set)
    timer.start()
    assert wait_for_any(3600, a, b) is True
    timer.join()

"""Which app is selected and which apps the tag filter lets through (no UI imports).

The tab bar, ``1``-``9``, ``a``/``d``, ``/`` and ``--tag`` all change this one object; every panel follows it.
"""

from __future__ import annotations

import re

from neuron_top.memtree import global_core
from neuron_top.snapshot import AppView, Snapshot, finite

__all__ = ["Selection", "app_cores"]


def app_cores(app: AppView, cores_per_device: int) -> list[int]:
    """The cores ``app`` owns, in index order: with memory, a model or load on them. Apps also report zeros for
    cores they do not own (seen in real output), so "reported" alone would list every core of the machine. The
    app screen's cells, and where the dashboard's core cursor starts for a selected app, follow this one rule."""
    owned = {i for i, cats in app.core_memory.items() if any(cats.values())}
    owned |= {c for m in app.models for s in m.subgraphs if (c := global_core(s, cores_per_device)) is not None}
    owned |= {i for i, c in app.cores.items() if (finite(c.neuroncore_utilization) or 0) > 0}
    return sorted(owned or app.cores)


class Selection:
    def __init__(self, tag: str | None = None) -> None:
        self.pid: int | None = None
        """The selected app's pid; None is the "all" tab."""
        self.pattern: re.Pattern[str] | None = re.compile(tag) if tag else None
        self.text = tag or ""
        """What the tab bar shows of the filter (with the error when the regex is invalid)."""

    def visible(self, snap: Snapshot | None) -> tuple[AppView, ...]:
        if snap is None:
            return ()
        if self.pattern is None:
            return snap.apps
        p = self.pattern
        return tuple(a for a in snap.apps if p.search(a.tag) or p.search(str(a.pid)))

    def settle(self, snap: Snapshot | None) -> None:
        """Fall back to "all" when the selected app is gone or filtered out."""
        if self.pid is not None and all(a.pid != self.pid for a in self.visible(snap)):
            self.pid = None

    def select(self, n: int, snap: Snapshot | None) -> None:
        """Tab ``n`` as numbered on screen: 1 is "all", 2.. the visible apps."""
        apps = self.visible(snap)
        if n == 1:
            self.pid = None
        elif 0 <= n - 2 < len(apps):
            self.pid = apps[n - 2].pid

    def step(self, step: int, snap: Snapshot | None) -> None:
        pids: list[int | None] = [None, *(a.pid for a in self.visible(snap))]
        i = pids.index(self.pid) if self.pid in pids else 0
        self.pid = pids[(i + step) % len(pids)]

    def set_filter(self, text: str) -> str | None:
        """Filter by a tag regex; returns the error for an invalid one (the previous filter stays in force)."""
        try:
            self.pattern = re.compile(text) if text else None
        except re.error as exc:
            self.text = f"{text} (invalid: {exc})"
            return str(exc)
        self.text = text
        return None

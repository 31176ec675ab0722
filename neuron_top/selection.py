"""Which app is selected and which apps the tag filter lets through (no UI imports).

The tab bar, ``1``-``9``, ``a``/``d``, ``/`` and ``--tag`` all change this one object; every panel follows it.
The filter matches an app's tag, its pid, and its Kubernetes pod and namespace.
"""

from __future__ import annotations

import re

from neuron_top.derived import owned_cores
from neuron_top.snapshot import AppView, Snapshot

__all__ = ["Selection", "app_cores", "matches", "narrow", "narrow_by_tag"]


def app_cores(app: AppView, cores_per_device: int) -> list[int]:
    """The cores ``app`` owns, in index order (``derived.owned_cores``, the one rule: ``Snapshot.cores_of`` keeps
    it per snapshot)."""
    return list(owned_cores(app.core_memory, lambda: app.models, app.core_stats, cores_per_device))

def narrow(snap: Snapshot, pattern: re.Pattern[str] | None, text: str) -> Snapshot:
    """``snap`` through the tag filter ``pattern`` (an app's tag or pid matches it; None: no filter), as
    ``Snapshot.narrowed`` makes it: what the dashboard, replay and ``--once`` all show. The app's pod matches too
    (its name, namespace, or ``namespace/pod``)."""
    if pattern is None:
        return snap
    return snap.narrowed(lambda a: matches(pattern, snap, a), text)


def matches(pattern: re.Pattern[str], snap: Snapshot, app: AppView) -> bool:
    """Whether the tag filter ``pattern`` selects ``app`` of ``snap``: the one rule (its tag, its pid, its pod's
    name, namespace or ``namespace/pod``)."""
    return bool(pattern.search(app.tag) or pattern.search(str(app.pid)) or _pod_matches(pattern, snap, app))


def narrow_by_tag(snap: Snapshot, tag: str | None) -> Snapshot:
    """``narrow`` by the ``--tag`` regex (checked by the command line before); None or "": every app."""
    return narrow(snap, re.compile(tag), tag) if tag else snap


def _pod_matches(p: re.Pattern[str], snap: Snapshot, app: AppView) -> bool:
    """The filter matches an app's pod too: its name, its namespace, or ``namespace/pod``."""
    ref = snap.app_pod(app)
    return ref is not None and bool(p.search(ref.name) or p.search(ref.pod) or p.search(ref.namespace))


class Selection:
    """Which app is shown and the tag filter (``/``): the tabs' state, kept across reports."""

    def __init__(self, tag: str | None = None) -> None:
        self.pid: int | None = None
        """The selected app's pid; None is the "all" tab."""
        self.pattern: re.Pattern[str] | None = re.compile(tag) if tag else None
        self.text = tag or ""
        """What the tab bar shows of the filter (with the error when the regex is invalid)."""
        self._narrowed: tuple[tuple[Snapshot, re.Pattern[str] | None], Snapshot] | None = None

    def narrow(self, snap: Snapshot) -> Snapshot:
        """``snap`` as the filter shows it (``narrow``): kept for the last snapshot and filter, since every
        panel, the tabs and the drill-downs ask for it on each update."""
        key = (snap, self.pattern)
        if self._narrowed is not None and self._narrowed[0][0] is snap and self._narrowed[0][1] == self.pattern:
            return self._narrowed[1]
        out = narrow(snap, self.pattern, self.pattern.pattern if self.pattern is not None else "")
        self._narrowed = (key, out)
        return out

    def visible(self, snap: Snapshot | None) -> tuple[AppView, ...]:
        if snap is None:
            return ()
        return self.narrow(snap).apps

    def settle(self, snap: Snapshot | None) -> None:
        """Fall back to "all" when the selected app is gone or filtered out."""
        if self.pid is not None and all(a.key != self.pid for a in self.visible(snap)):
            self.pid = None

    def select(self, n: int, snap: Snapshot | None) -> None:
        """Tab ``n`` as numbered on screen: 1 is "all", 2.. the visible apps."""
        apps = self.visible(snap)
        if n == 1:
            self.pid = None
        elif 0 <= n - 2 < len(apps):
            self.pid = apps[n - 2].key

    def step(self, step: int, snap: Snapshot | None) -> None:
        pids: list[int | None] = [None, *(a.key for a in self.visible(snap))]
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

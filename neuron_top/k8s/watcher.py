"""The background refresh of pod attribution: one thread asks the kubelet every ``interval`` seconds (10, as AWS's
own agent does: the kubelet rate-limits the API), backs off when it says RESOURCE_EXHAUSTED, and otherwise traces
the runtimes' pids through their cgroups. Readers call ``current()``, which never waits: it returns the last
``Attribution`` published (one reference, swapped whole).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable

from neuron_top.k8s.cgroup import pod_of_pid
from neuron_top.k8s.kubelet import DEFAULT_SOCKET, KubeletClient, KubeletError
from neuron_top.k8s.model import Attribution, PodRef, attribute
from neuron_top.sources.monitor import Backoff
from neuron_top.textsafe import clean

__all__ = ["INTERVAL", "PodWatcher", "on_kubernetes", "socket_path"]

INTERVAL = 10.0
"""Seconds between two questions to the kubelet."""


def on_kubernetes(host_root: str | None) -> bool:
    """Whether this looks like a Kubernetes node (or a pod on one): then a missing socket is worth saying."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) or os.path.isdir(
        os.path.join(host_root or "/", "var/lib/kubelet"))


def socket_path(socket: str | None, host_root: str | None) -> str:
    """``--kubelet-socket`` as given, else the kubelet's default path under ``--host-root``."""
    if socket:
        return socket
    return os.path.join(host_root, DEFAULT_SOCKET.lstrip("/")) if host_root else DEFAULT_SOCKET


class PodWatcher:
    """Keeps an ``Attribution`` fresh in a daemon thread.

    Args:
        socket: the kubelet's PodResources socket.
        host_root: where the host's ``/`` is (``/proc`` and ``/var/log`` are read under it).
        interval: seconds between refreshes.
        timeout: seconds one kubelet call may take.
        client: a ``KubeletClient`` (tests inject one); made from ``socket`` by default.
        announce_absent: say "kubelet socket absent" in the header; off on a machine that is no Kubernetes node,
            where the absence is the normal case and not news.
    """

    def __init__(self, socket: str = DEFAULT_SOCKET, host_root: str = "/", interval: float = INTERVAL,
                 timeout: float = 5.0, client: KubeletClient | None = None,
                 clock: Callable[[], float] = time.time, announce_absent: bool = True) -> None:
        self.announce_absent = announce_absent
        self.client = client or KubeletClient(socket, timeout)
        self.host_root = host_root or "/"
        self.interval = interval
        self.clock = clock
        self.backoff = Backoff(first=interval * 2, cap=interval * 16)
        self._current = Attribution()
        self._wanted: frozenset[int] = frozenset()
        self._by_pid: dict[int, PodRef | None] = {}
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._kubelet_ok = False
        self.refreshes = 0
        """Rounds done (tests wait on it)."""

    def current(self) -> Attribution:
        """The latest attribution; never blocks."""
        return self._current

    def want_pids(self, pids: Iterable[int]) -> None:
        """The runtimes of the latest report: new ones are traced through their cgroups at once when the kubelet is
        not the source."""
        new = frozenset(p for p in pids if p > 0)
        if new != self._wanted:
            grew = bool(new - self._wanted)
            self._wanted = new
            if grew and not self._kubelet_ok:
                self._wake.set()

    def settle(self, ask: bool = True) -> Attribution:
        """One round now, in this thread (``--once``; bounded by the call's deadline). Not with ``start``.
        ``ask`` False: the kubelet is not asked again; its last answer stands, else the cgroups of the pids
        wanted now are traced (``--once --record`` asked it before the report, whose pids it did not know)."""
        if not ask and self._kubelet_ok:
            return self._current
        return self.refresh(ask_kubelet=ask)[0]

    def start(self) -> PodWatcher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="neuron-top-pods", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread (at its next wake-up; a call in flight ends by its deadline); safe to call twice."""
        self._closed.set()
        self._wake.set()
        with contextlib.suppress(Exception):
            self.client.close()

    def refresh(self, ask_kubelet: bool = True) -> tuple[Attribution, float]:
        """One round: the kubelet (when ``ask_kubelet``), else the cgroups. Returns what was published and the
        seconds until the next round."""
        delay = self.interval
        note = ""
        if ask_kubelet:
            try:
                pods = self.client.list()
                try:
                    offered = self.client.allocatable()
                except KubeletError as exc:  # the list is still good: say what is missing
                    offered, note = None, f"allocatable unknown: {exc}"
            except KubeletError as exc:
                self._kubelet_ok = False
                note = "" if exc.code == "ABSENT" and not self.announce_absent else str(exc)
                if exc.code == "RESOURCE_EXHAUSTED":
                    delay = self.backoff.next()
                    note = f"kubelet rate limit: next try in {delay:g} s"
            else:
                self._kubelet_ok = True
                self.backoff.reset()
                att = attribute(pods, offered, note=note, ts=self.clock())
                self._publish(att)
                return att, delay
        else:
            note = self._current.note
        att = self._from_cgroups(note)
        self._publish(att)
        return att, delay

    def _from_cgroups(self, note: str) -> Attribution:
        wanted = self._wanted
        for pid in list(self._by_pid):
            if pid not in wanted:
                del self._by_pid[pid]
        for pid in wanted:
            if pid not in self._by_pid:
                self._by_pid[pid] = pod_of_pid(pid, self.host_root)
        pids = {p: r for p, r in self._by_pid.items() if r is not None}
        return Attribution("cgroup" if pids else "", note, pids=pids, ts=self.clock())

    def _publish(self, att: Attribution) -> None:
        self._current = att
        self.refreshes += 1

    def _run(self) -> None:
        next_ask = 0.0
        while not self._closed.is_set():
            now = time.monotonic()
            ask = now >= next_ask
            try:
                _, delay = self.refresh(ask_kubelet=ask)
            except Exception as exc:  # a bug here costs attribution, never the app
                self._publish(Attribution(note=f"attribution failed: {clean(repr(exc), 160)}"))
                delay = self.interval
            if ask:
                next_ask = now + delay
            self._wake.wait(max(0.0, next_ask - time.monotonic()))
            self._wake.clear()

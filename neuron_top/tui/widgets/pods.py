"""The pods screen's table: each Kubernetes pod holding NeuronCores, its cores, their utilization, the ones
allocated to it but idle, its apps; then the cores the node offers that no pod holds, and how attribution was
found (or why not). Everything comes from ``Snapshot.pod_usage`` and ``Snapshot.pods`` (the core); this draws.
Up and Down pick a pod, Enter opens its first app."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.k8s.model import PodUsage
from neuron_top.tui.render.light import LightStrip
from neuron_top.tui.widgets.fixedwidth import cell, fit, num
from neuron_top.tui.widgets.panel import Panel
from neuron_top.view import View

COLUMNS = (("NCs", 5), ("util", 7), ("idle", 6))
"""The number columns after the pod's name: (head, width)."""
NAME_MIN, NAME_MAX = 20, 60


class PodsPanel(Panel[None]):
    """One row per pod with Neuron cores."""

    TITLE = "Pods"
    BINDINGS = [
        Binding("up", "cursor(-1)", "up", show=False),
        Binding("down", "cursor(1)", "down", show=False),
        Binding("enter", "open", "open its app"),
    ]

    cursor: reactive[int] = reactive(0, repaint=False)
    """The row picked last; the pod it held (``_picked``) is what stays picked when pods come and go."""
    _picked: tuple[str, str] | None = None

    class OpenApp(Message):
        def __init__(self, pid: int) -> None:
            super().__init__()
            self.pid = pid

    def cache_extra(self) -> tuple[object, ...]:
        return (self.cursor, self._picked)

    def watch_cursor(self) -> None:
        self.refresh()

    def _usage(self) -> tuple[PodUsage, ...]:
        return self.view.snapshot.pod_usage if self.view is not None else ()

    def _row(self, usage: tuple[PodUsage, ...]) -> int:
        """The picked pod's row in this report: rows are by name, so a pod starting or ending above it moved it
        (Enter then opened the app of the pod that took its row). A pod that ended leaves its row picked."""
        for i, u in enumerate(usage):
            if u.ref.key == self._picked:
                return i
        return max(0, min(self.cursor, len(usage) - 1))

    def action_cursor(self, step: int) -> None:
        usage = self._usage()
        if usage:
            self.cursor = max(0, min(self._row(usage) + step, len(usage) - 1))
            self._picked = usage[self.cursor].ref.key

    def action_open(self) -> None:
        usage = self._usage()
        i = self._row(usage)
        if 0 <= i < len(usage) and usage[i].pids:
            self.post_message(self.OpenApp(usage[i].pids[0]))

    def build(self, view: View, width: int) -> list[Strip]:
        snap = view.snapshot
        pods, usage = snap.pods, snap.pod_usage
        idle = sum(len(u.idle) for u in usage)
        right = f"{fmt.plural(len(usage), 'pod')} · {idle} idle cores" if usage else ""
        lines: list[Strip] = [self.title_strip("Pods: NeuronCores, utilization, allocated but idle", width, right)]
        label, value, dim = self.style("label"), self.style("value"), self.style("dim")
        status = pods.status()
        if not usage:
            why = status or "pods: none (no Kubernetes pod holds a NeuronCore; --no-k8s turns this off)"
            lines.append(LightStrip([Segment(" " + fit(why, width - 1), dim)]))
            return lines
        if status:
            lines.append(LightStrip([Segment(" " + fit(status, width - 1), dim)]))
        fixed = sum(w for _, w in COLUMNS)
        name_w = max(NAME_MIN, min(NAME_MAX, max(len(u.ref.name) for u in usage) + 2, width - fixed - 20))
        rest = max(width - name_w - fixed - 1, 0)
        lines.append(LightStrip([cell(" pod", name_w, label), *(num(h, w, label) for h, w in COLUMNS),
                                 Segment(" "), cell("cores · idle · containers · apps", rest, label)]))
        cur = self._row(usage) if self.has_focus else -1
        for i, u in enumerate(usage):
            style = self.style("cursor") if i == cur else value
            detail = f"{fmt.core_ranges(u.cores) or '-'}"
            if u.idle:
                detail += f" · idle {fmt.core_ranges(u.idle)}"
            if u.containers:
                detail += f" · [{','.join(u.containers)}]"
            if u.pids:
                detail += " · pid " + ",".join(map(str, u.pids))
            idle_style = self.style("mid") if u.idle and i != cur else style
            lines.append(LightStrip([
                cell(" " + u.ref.name, name_w, style), num(str(len(u.cores)), COLUMNS[0][1], style),
                num(fmt.pct(u.util), COLUMNS[1][1], style), num(str(len(u.idle)), COLUMNS[2][1], idle_style),
                Segment(" "), cell(detail, rest, style if i == cur else dim)]))
        free = pods.free
        if free:
            lines.append(LightStrip([Segment(" " + fit(f"not allocated to any pod: {fmt.plural(len(free), 'core')} "
                                                         f"({fmt.core_ranges(free)})", width - 1), dim)]))
        return lines

"""The app tab bar: "all" plus one tab per Neuron application, like AWS neuron-top's bottom bar.

It scrolls to keep the selected tab in view (``‹ 12`` and ``40 ›`` count the tabs off either side); the first nine
tabs carry their number key, every tab is reached by ``a``/``d``, the arrows, a click or the ``o`` picker. The
right end says how many apps there are and the ``/`` filter in force, whatever the scroll."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import fmt
from neuron_top.fmt import plural
from neuron_top.snapshot import AppView
from neuron_top.tui.render.spans import LineDiff

LABEL_W = 6
"""" Apps " before the tabs."""


class AppTabs(LineDiff, can_focus=True):
    BINDINGS = [
        Binding("left", "move(-1)", "previous app", show=False),
        Binding("right", "move(1)", "next app", show=False),
        Binding("enter", "open", "open app"),  # what it opens takes the keys typed after it (keys.in_order)
    ]

    COMPONENT_CLASSES = {"tabs--label", "tabs--tab", "tabs--selected", "tabs--error", "tabs--more"}
    DEFAULT_CSS = """
    AppTabs { height: 1; background: $panel; }
    AppTabs > .tabs--label { color: $primary; text-style: bold; }
    AppTabs > .tabs--tab { color: $text-muted; }
    AppTabs > .tabs--selected { color: $primary; background: $panel; text-style: bold reverse; }
    AppTabs:focus > .tabs--selected { text-style: bold reverse underline; }
    AppTabs > .tabs--error { color: $text-error; }
    AppTabs > .tabs--more { color: $text-muted; text-style: bold; }
    """

    apps: reactive[tuple[AppView, ...]] = reactive(tuple, repaint=False)
    """The apps shown (already filtered)."""
    pods: reactive[dict[int, str]] = reactive(dict, repaint=False)
    """pid -> ``namespace/pod`` it runs in (set before ``apps``): the selected tab says ``>tag< ns/pod``."""
    selected: reactive[int | None] = reactive(None)
    """The selected pid, None for "all"."""
    filter_text: reactive[str] = reactive("")
    layout_name: reactive[str] = reactive("")
    """The layout shown (``l`` cycles them), said at the bar's right end."""
    _shown: tuple[tuple[str, int, bool, str], ...] | None
    """What the tabs showed of ``apps`` when last drawn for a new tuple."""

    def watch_apps(self, apps: tuple[AppView, ...]) -> None:
        """A new tuple arrives with every report and nearly always shows the same tabs: nothing to do then
        (drawing the bar and finding no change had cost as much as a panel). Otherwise repaint what differs."""
        shown = _tabs(apps, self.pods)
        if shown != self._shown:
            self._shown = shown
            self.repaint_changed()

    class Selected(Message):
        def __init__(self, pid: int | None, open_detail: bool = False) -> None:
            super().__init__()
            self.pid = pid
            self.open_detail = open_detail

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, int | None]] = []
        self._first = 0
        self._styles: dict[tuple[str, str], Style] = {}
        """The first tab drawn (the bar scrolls to keep the selected one in view)."""
        self._shown = None

    def _style(self, name: str) -> Style:
        """Resolved where drawn (a partial style leaves an "auto" colour white) and cached per theme."""
        key = (name, self.app.theme)
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = self.rich_style if name == "base" else self.get_component_rich_style(
                f"tabs--{name}")
        return style

    def draw_line(self, y: int) -> Strip:
        width = self.size.width
        tabs = [("all", None, False), *((label, pid, err) for label, pid, err, _ in _tabs(self.apps, self.pods))]
        texts = []
        for n, (label, pid, _) in enumerate(tabs, start=1):
            key = f"[{n}]" if n <= 9 else ""
            sel = pid == self.selected
            pod = self.pods.get(pid) if sel and pid is not None else None
            texts.append(f" {key}{'>' if sel else ' '}{label}{'<' if sel else ' '}" + (f"{_cut(pod)} " if pod else ""))
        right = (f" {plural(len(self.apps), 'app')}" + (f" · filter /{self.filter_text}/" if self.filter_text else "")
                 + (f" · {self.layout_name} layout" if self.layout_name else ""))
        right = fmt.cut(right, width // 2, cell_len)  # the filter is typed text: any width
        room = max(width - LABEL_W - cell_len(right), 0)
        first, last = self._window(texts, room)
        segs = [Segment(" Apps ", self._style("label"))]
        x = LABEL_W
        self._spans = []
        if first:
            more = f"‹{first} "
            segs.append(Segment(more, self._style("more")))
            self._spans.append((x, x + len(more), tabs[first - 1][1]))
            x += len(more)
        for i in range(first, last):
            label, pid, err = tabs[i]
            text = texts[i]
            style = self._style("selected" if pid == self.selected else "error" if err else "tab")
            segs.append(Segment(text, style))
            self._spans.append((x, x + len(text), pid))
            x += len(text)
        if last < len(tabs):
            more = f" {len(tabs) - last}›"
            segs.append(Segment(more, self._style("more")))
            self._spans.append((x, x + len(more), tabs[last][1]))
            x += len(more)
        segs.append(Segment(" " * max(width - x - len(right), 0), self._style("base")))
        segs.append(Segment(right, self._style("label" if self.filter_text else "tab")))
        return Strip(segs).crop_extend(0, width, self._style("base"))

    def _window(self, texts: list[str], room: int) -> tuple[int, int]:
        """The tabs [first, last) drawn in ``room`` cells: from the first one shown last time, moved as little as
        needed to keep the selected tab in view (with room kept for the ‹ › counts)."""
        pids = self._pids()
        sel = pids.index(self.selected) if self.selected in pids else 0
        first = min(self._first, max(len(texts) - 1, 0))

        def fits(a: int, b: int) -> bool:
            marks = (len(f"‹{a} ") if a else 0) + (len(f" {len(texts) - b}›") if b < len(texts) else 0)
            return sum(len(t) for t in texts[a:b]) + marks <= room

        def end(a: int) -> int:
            b = a
            while b < len(texts) and fits(a, b + 1):
                b += 1
            return max(b, a + 1) if a < len(texts) else a

        if sel < first:
            first = sel
        while first < sel and end(first) <= sel:
            first += 1
        while first > 0 and end(first - 1) == len(texts) and fits(first - 1, len(texts)):
            first -= 1  # room to spare at the end (the bar grew, an app went): show more on the left
        self._first = first
        return first, end(first)

    def _pids(self) -> list[int | None]:
        return [None, *(a.key for a in self.apps)]

    def action_move(self, step: int) -> None:
        pids = self._pids()
        i = pids.index(self.selected) if self.selected in pids else 0
        self.post_message(self.Selected(pids[(i + step) % len(pids)]))

    async def action_open(self) -> None:
        """Enter: the selected app's screen; on "all", the app picker, to open the one chosen. Either is open
        before the next key is routed (the app's actions, awaited): a name typed right after Enter fills the
        picker's filter, and a key meant for the app's screen is not taken by the dashboard under it."""
        if self.selected is None:
            await self.run_action("app.pick_app(True)")
        else:
            await self.run_action(f"app.open_app({self.selected})")

    def on_click(self, event: Click) -> None:
        for start, end, pid in self._spans:
            if start <= event.x < end:
                self.post_message(self.Selected(pid, open_detail=pid == self.selected and pid is not None))
                return


POD_W = 32
"""Cells of a pod's name in the selected tab (the rest is cut with "…"; the apps panel and the pods screen show it
whole). Only the selected tab names its pod: on every tab it halved how many tabs fit."""


def _cut(pod: str) -> str:
    return pod if len(pod) <= POD_W else pod[:POD_W - 1] + "…"


def _tabs(apps: tuple[AppView, ...], pods: dict[int, str]) -> tuple[tuple[str, int, bool, str], ...]:
    """What the bar shows of each app: its label, its key (the selection), whether it has an error, its pod."""
    return tuple((a.label, a.key, bool(a.error), pods.get(a.pid, "")) for a in apps)

"""The two header lines: what machine, what hardware, where data comes from and how fresh it is."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import __version__, fmt
from neuron_top.session import SourceStatus
from neuron_top.snapshot import Snapshot
from neuron_top.textsafe import clean
from neuron_top.tui.render.spans import LineDiff


class HeaderBar(LineDiff):
    COMPONENT_CLASSES = {"header--title", "header--state-ok", "header--state-warn", "header--state-bad",
                         "header--dim"}
    DEFAULT_CSS = """
    HeaderBar { height: 2; background: $panel; color: $text; }
    HeaderBar > .header--title { color: $text; background: $primary; text-style: bold; }
    HeaderBar > .header--state-ok { color: $text; background: $success; text-style: bold; }
    HeaderBar > .header--state-warn { color: $text; background: $warning; text-style: bold; }
    HeaderBar > .header--state-bad { color: $text; background: $error; text-style: bold; }
    HeaderBar > .header--dim { color: $text-muted; }
    """

    snapshot: reactive[Snapshot | None] = reactive(None, repaint=False)
    source: reactive[SourceStatus] = reactive(SourceStatus, repaint=False)
    now: reactive[float] = reactive(0.0, repaint=False)
    """Set once a second by the app so the age of the last report moves without a timer here."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._styles: dict[tuple[str, str], Style] = {}
        self._shown: tuple[object, ...] | None = None
        """``_says`` of what ``show`` last repainted."""

    def show(self, snapshot: Snapshot | None, source: SourceStatus, now: float) -> None:
        """All three at once, with one repaint (each watcher would redraw and diff both lines), and none when
        what the lines say is the same: every report brings a new snapshot and a new report time, and the clock
        ticks every second, but the machine, the source and "updated 0s ago" rarely change."""
        if snapshot is self.snapshot and source == self.source and now == self.now:
            return
        self.set_reactive(HeaderBar.snapshot, snapshot)
        self.set_reactive(HeaderBar.source, source)
        self.set_reactive(HeaderBar.now, now)
        shown = self._says(snapshot, source, now)
        if shown != self._shown:
            self._shown = shown
            self.repaint_changed()

    @staticmethod
    def _says(snap: Snapshot | None, src: SourceStatus, now: float) -> tuple[object, ...]:
        """Everything ``draw_line`` takes from its inputs, as cheap values (width and theme repaint anyway)."""
        machine = None if snap is None else (snap.instance, snap.hardware, snap.has_neuron, snap.device_count,
                                             snap.core_count, len(snap.group_statuses))
        return (src.name, src.state, src.message, src.skipped, src.paused, src.position, _age(src, now), machine)

    def watch_snapshot(self) -> None:
        self.repaint_changed()

    def watch_source(self) -> None:
        self.repaint_changed()

    def watch_now(self) -> None:
        self.repaint_changed()

    def _style(self, name: str) -> Style:
        """A component style, cached per theme: reading one walks the DOM, and the header is drawn twice a
        second."""
        key = (name, self.app.theme)
        style = self._styles.get(key)
        if style is None:
            if len(self._styles) > 64:  # themes cycled through many times
                self._styles.clear()
            style = self._styles[key] = (self.rich_style if name == "base" else
                                         self.get_component_rich_style(f"header--{name}", partial=True))
        return style

    def _state_style(self, src: SourceStatus) -> Style:
        s = src.state.lower()
        if s in ("live", "replay", "demo"):
            return self._style("state-ok")
        if s in ("ended", "restarting", "starting"):
            return self._style("state-warn")
        return self._style("state-bad")

    def draw_line(self, y: int) -> Strip:
        w = self.size.width
        snap, src = self.snapshot, self.source
        if y == 0:
            segs = [Segment(f" neuron-top {__version__} ", self._style("title"))]
            state = src.state.upper() + (" · PAUSED" if src.paused else "")
            segs.append(Segment(f" {state} ", self._state_style(src)))
            text = f" {clean(src.name, 60)}"
            if src.message:
                text += f" · {clean(src.message, 80)}"
            if src.position:
                text += f" · {src.position}"
            age = _age(src, self.now)
            if age is not None:
                text += f" · updated {age} ago"
            if src.skipped:
                text += f" · skipped {src.skipped}"
            if snap is not None and snap.group_statuses:
                text += f" · {len(snap.group_statuses)} group errors"
            segs.append(Segment(text))
            return Strip(segs).crop_extend(0, w, self._style("base"))
        if snap is None:
            waiting = Strip([Segment(" waiting for the first report…", self._style("dim"))])
            return waiting.crop_extend(0, w, self._style("base"))
        inst, hw = snap.instance, snap.hardware
        parts = [clean(x, 40) for x in (inst.instance_name, inst.instance_id, inst.instance_type) if x]
        az = inst.instance_availability_zone or inst.instance_region
        if az:
            parts.append(clean(az, 30))
        if snap.has_neuron:
            lnc = f" LNC={hw.logical_neuroncore_config}" if hw.logical_neuroncore_config else ""
            dev = clean(hw.neuron_device_type or "neuron", 20)
            ver = f" {clean(hw.neuroncore_version, 8)}" if hw.neuroncore_version else ""
            mem = (f" · {fmt.human_bytes(hw.neuron_device_memory_size)}/device"
                   if hw.neuron_device_memory_size else "")
            parts.append(f"{snap.device_count}x {dev} · {snap.core_count} NeuronCores{ver}{lnc}{mem}")
        else:
            parts.append("no Neuron devices: neuron-monitor / the Neuron driver was not found")
        return Strip([Segment(" " + " · ".join(parts), self._style("dim"))]).crop_extend(0, w, self._style("base"))


def _age(src: SourceStatus, now: float) -> str | None:
    """How long ago the last report came, as the header says it; None before the first."""
    return None if src.last_report is None else fmt.duration(max(now - src.last_report, 0.0))

"""The two header lines: what machine, what hardware, where data comes from and how fresh it is.

The state itself (STALE, NO DATA, the exit status, the ECC mark) is decided in the core (``Session.shown``); this
only says it, each thing once, cut with "…" to the width."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip

from neuron_top import __version__, fmt
from neuron_top.fmt import plural
from neuron_top.session import SourceStatus
from neuron_top.snapshot import Snapshot
from neuron_top.sources.base import last_line
from neuron_top.sources.stream import describe_exit
from neuron_top.textsafe import clean
from neuron_top.tui.render.spans import LineDiff


class HeaderBar(LineDiff):
    COMPONENT_CLASSES = {"header--title", "header--state-ok", "header--state-warn", "header--state-bad",
                         "header--dim", "header--text", "header--warn", "header--alarm", "header--rec"}
    # Badges are the state's colour in reverse video: on a 16-colour terminal the text is then the terminal's own
    # background, readable whatever its palette; in a truecolour theme it is the header's background.
    DEFAULT_CSS = """
    HeaderBar { height: 2; background: $panel; color: $text; }
    HeaderBar > .header--title { color: $primary; background: $panel; text-style: bold reverse; }
    HeaderBar > .header--state-ok { color: $success; background: $panel; text-style: bold reverse; }
    HeaderBar > .header--state-warn { color: $warning; background: $panel; text-style: bold reverse; }
    HeaderBar > .header--state-bad { color: $error; background: $panel; text-style: bold reverse; }
    HeaderBar > .header--dim { color: $text-muted; }
    HeaderBar > .header--text { color: $text; }
    HeaderBar > .header--warn { color: $text-warning; }
    HeaderBar > .header--alarm { color: $error; background: $panel; text-style: bold reverse; }
    HeaderBar > .header--rec { color: $text-error; text-style: bold; }
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
                                             snap.core_count, len(snap.group_statuses), snap.pods.status())
        return (src.name, src.state, src.message, src.detail, src.skipped, src.paused, src.position, src.exit_status,
                src.uncorrected, src.source_filter, src.recording, _age(src, now), machine)

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
                                         self.get_component_rich_style(f"header--{name}"))
        return style

    def draw_line(self, y: int) -> Strip:
        w = self.size.width
        snap, src = self.snapshot, self.source
        if y == 0:
            segs = [Segment(text, self._style(style)) for text, style in status_line(snap, src, self.now, w)]
            return Strip(segs).crop_extend(0, w, self._style("base"))
        if snap is None:
            waiting = Strip([Segment(" waiting for the first report…", self._style("dim"))])
            return waiting.crop_extend(0, w, self._style("base"))
        line = machine_line(snap, w)
        return Strip([Segment(line, self._style("dim"))]).crop_extend(0, w, self._style("base"))


def machine_line(snap: Snapshot, width: int) -> str:
    """The header's second line: the instance, then the hardware, as fields joined by " · ". Too long, it is cut
    at field boundaries, never inside a number: the least needed fields go first (the instance id, the AZ, the
    name, the device memory), each run of dropped fields shown as "…"; the layout itself goes last."""
    inst, hw = snap.instance, snap.hardware
    fields: list[tuple[str, int]] = [(clean(inst.instance_name or "", 40), 5), (clean(inst.instance_id or "", 40), 2),
                                     (clean(inst.instance_type or "", 40), 8)]
    az = inst.instance_availability_zone or inst.instance_region
    if az:
        fields.append((clean(az, 30), 3))
    if snap.has_neuron:
        lnc = f" LNC={hw.logical_neuroncore_config}" if hw.logical_neuroncore_config else ""
        ver = f" {clean(hw.neuroncore_version, 8)}" if hw.neuroncore_version else ""
        fields.append((f"{snap.layout_text()}{ver}{lnc}", 9))
        if hw.neuron_device_memory_size:
            fields.append((f"{fmt.human_bytes(hw.neuron_device_memory_size)}/device", 4))
    else:
        fields.append((snap.no_devices, 9))
    pods = snap.pods.status()
    if pods:
        fields.append((pods, 6))
    return fit_fields([(t, p) for t, p in fields if t], width, words=pods)


def fit_fields(fields: list[tuple[str, int]], width: int, words: str = "") -> str:
    """`` a · b · c`` in ``width`` cells: the lowest-priority fields are left out (a run of them shows as "…")
    until the rest fits; the last one standing is cut with "…" if it alone is too long. ``words``, a field of
    text without figures (the pods' note), is cut with "…" to the room left rather than left out while at least
    ``MIN_CUT`` of it shows: at 120 columns "pods: none (kubelet socket absent: ...)" was never seen."""
    fields = list(fields)
    keep = [True] * len(fields)

    def line() -> str:
        out: list[str] = []
        for (text, _), k in zip(fields, keep, strict=True):
            if k:
                out.append(text)
            elif not out or out[-1] != "…":
                out.append("…")
        return " " + " · ".join(out)

    text = line()
    while cell_len(text) > width and sum(keep) > 1:
        drop = min((i for i in range(len(fields)) if keep[i]), key=lambda i: (fields[i][1], -i))
        field, prio = fields[drop]
        room = cell_len(field) - (cell_len(text) - width)
        if words and field == words and room >= MIN_CUT:
            fields[drop] = (ellipsize(field, room), prio)  # the note cut, not left out
        else:
            keep[drop] = False
        text = line()
    return ellipsize(text, width)


STATE_STYLE = {"live": "state-ok", "replay": "state-ok", "demo": "state-ok", "starting": "state-warn",
               "ended": "state-warn", "restarting": "state-warn", "stale": "state-warn", "no data": "state-warn"}
"""The badge's colour by state; anything else (failed) is "state-bad"."""


def ellipsize(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with "…" as its last when it does not fit."""
    return fmt.cut(text, width, cell_len)  # by cells: a CJK tag is two a character


def status_line(snap: Snapshot | None, src: SourceStatus, now: float, width: int) -> list[tuple[str, str]]:
    """The header's first line as (text, style name) pieces that fit ``width``.

    Fixed pieces first: the title, the state badge (with the exit status), the sticky ECC mark and the recording
    indicator. Then what is said about the source, each thing once (a piece another piece already contains is
    left out: a command's name is in "reports from CMD"), most important first; the age and counts stay on the
    line and the message is cut with "…" before they would go."""
    title = f" neuron-top {__version__} " if width >= 100 else " neuron-top "
    state = src.state
    badge = state.upper()
    if src.exit_text and state in ("ended", "failed", "restarting"):
        badge += f" {src.exit_text}"
    if src.paused:
        badge += " · PAUSED"
    fixed: list[tuple[str, str]] = [(title, "title"), (f" {badge} ", STATE_STYLE.get(state, "state-bad"))]
    if src.uncorrected:
        devs = ",".join(f"ND{d}" for d in src.uncorrected[:4]) + ("…" if len(src.uncorrected) > 4 else "")
        fixed.append((" ", "base"))
        fixed.append((f" ECC! {devs} (E) ", "alarm"))
    if src.recording:
        fixed.append((" ", "base"))
        # a paused recording's why and count come first and need the room (the rest of the line can wait)
        fixed.append((f" ● {clean(src.recording, max(40, width - 40))} ", "rec"))
    # what is said: (text, style, priority: the lowest goes first when the line is full)
    said: list[tuple[str, str, int]] = []
    message = clean(src.message, 160)
    if src.exit_status is not None and message:
        message = message.replace(f" {describe_exit(src.exit_status)}", "")  # the badge says it
    if state == "no data":
        said.append((f"no valid report yet, {plural(src.skipped, 'line')} skipped", "warn", 9))
    said.append((clean(src.name, 60), "text", 3))
    said.append((message, "text", 4))
    if state in ("failed", "restarting", "ended") and src.detail:
        said.append((last_line(src.detail, 120), "warn", 5))
    if src.position:
        said.append((src.position, "text", 8))
    if src.source_filter:
        said.append((f"source filter: tag_filter {clean(src.source_filter, 40)}", "warn", 7))
    age = _age(src, now)
    if age is not None:
        if state == "stale":
            every = fmt.duration(src.expected or 0) if (src.expected or 0) >= 1 else f"{src.expected or 0:.1f}s"
            said.append((f"no report for {age} (expected every {every})", "warn", 10))
        else:
            said.append((f"updated {age} ago", "text", 10))
    if src.skipped and state != "no data":
        said.append((f"{plural(src.skipped, 'line')} skipped", "text", 6))
    if snap is not None and snap.group_statuses:
        said.append((f"{plural(len(snap.group_statuses), 'group error')} (E)", "warn", 6))
    said = _once(said)
    room = width - sum(len(t) for t, _ in fixed)
    said = _fit(said, room)
    out = list(fixed)
    for i, (text, style, _) in enumerate(said):
        out.append((" · " if i else " ", "text"))
        out.append((text, style))
    return out


def _once(parts: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """``parts`` without empty ones and without one whose text another part holds (a command's name is in
    "reports from CMD"). A warning stays even then: a command's last line on stderr may be a word of the command."""
    texts = [t for t, _, _ in parts]
    out = []
    for i, (text, style, prio) in enumerate(parts):
        if not text or (style != "warn" and any(text in other and (other != text or j < i)
                                               for j, other in enumerate(texts) if j != i)):
            continue
        out.append((text, style, prio))
    return out


MIN_CUT = 12
"""A piece is cut with "…" down to this many cells before it is left out."""


def _fit(parts: list[tuple[str, str, int]], room: int) -> list[tuple[str, str, int]]:
    """``parts`` (joined by " · " after one leading space) fitted into ``room`` cells: the lowest-priority piece
    is cut with "…", then left out, until the rest fits."""
    parts = list(parts)

    def used() -> int:
        return sum(len(t) for t, _, _ in parts) + 3 * max(len(parts) - 1, 0) + (1 if parts else 0)

    while parts and used() > room:
        i = min(range(len(parts)), key=lambda k: (parts[k][2], -k))
        text, style, prio = parts[i]
        over = used() - room
        if len(text) - over >= MIN_CUT:
            parts[i] = (ellipsize(text, len(text) - over), style, prio)
        else:
            del parts[i]
    return parts


def _age(src: SourceStatus, now: float) -> str | None:
    """How long ago the last report came, as the header says it; None before the first."""
    return None if src.last_report is None else fmt.duration(max(now - src.last_report, 0.0))

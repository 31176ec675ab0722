"""The timeline pane: captured system traces (neuron-det, Neuron Explorer, PyTorch/JAX profilers) in the terminal.

Built from a loaded ``TraceStore`` or from paths (loaded in a worker thread; the screen says "loading" meanwhile;
several files become one timeline). The keys are in ``BINDINGS`` (and so in the help screen): zoom, pan, lines,
select, step through a line's events, first/last event, the first error or hang, fit the selection, grouping,
search, filters, errors, the hang list, flows (L and H along a chain, D the flow list), the clock of the axis,
area selection with its summary, and a replay playhead. ``Esc`` closes what is open, one thing at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from neuron_top.fmt import cut_parts, plural, wrap_parts
from neuron_top.textsafe import clean
from neuron_top.trace.aggregate import AggRow, aggregate
from neuron_top.trace.check import lost_line
from neuron_top.trace.columns import format_at, format_duration, format_exact, what_it_holds
from neuron_top.trace.filters import FilterError, Filters
from neuron_top.trace.loaders import TraceError, load_traces
from neuron_top.trace.metrics import Index, Metrics, attach, build_metrics, parse_offset, shift
from neuron_top.trace.model import GROUPING_LABELS, TimelineModel
from neuron_top.trace.store import TraceStore
from neuron_top.trace.timeparse import is_wall_clock
from neuron_top.tui.keys import focus_now, typing
from neuron_top.tui.messages import WallTime
from neuron_top.tui.widgets.textbox import TextBox
from neuron_top.tui.widgets.tracks import Timeline

TICK = 0.05
"""Seconds between playhead steps while the replay plays (the one timer, only while playing)."""


class TraceLoaded(Message):
    """The worker finished loading (posted from the loader thread)."""

    def __init__(self, store: TraceStore | None, error: str = "", metrics: Metrics | None = None) -> None:
        super().__init__()
        self.store = store
        self.error = error
        self.metrics = metrics


def parse_filter_text(text: str) -> Filters:
    """``nc=0-3 type=hardware,^cc_exec inst=i-abc`` (keys: nc/core/cores, type/types, inst/instance/instances).

    A bare value made of digits, commas and dashes is a NeuronCore filter.
    """
    cores = types = insts = ""
    for tok in text.split():
        key, sep, val = tok.partition("=")
        k = key.lower()
        if not sep:
            if all(c.isdigit() or c in ",-" for c in tok):
                cores = tok
                continue
            if tok.startswith("i-"):
                insts = tok
                continue
            types = tok
            continue
        if k in ("nc", "core", "cores"):
            cores = val
        elif k in ("type", "types", "event", "events"):
            types = val
        elif k in ("inst", "instance", "instances"):
            insts = val
        else:
            raise FilterError(f"unknown filter {key!r}: use nc=, type= or inst=")
    return Filters.parse(cores, types, insts)


def filter_text(f: Filters) -> str:
    parts = []
    if f.cores is not None:
        parts.append("nc=" + f.describe().split(";")[0].removeprefix("NC "))
    if f.types is not None:
        t = f.types
        names = (
            (["hardware"] if t.hardware else []) + (["software"] if t.software else []) + sorted(t.include)
        )
        parts.append("type=" + ",".join(names + [f"^{x}" for x in sorted(t.exclude)]))
    if f.instances is not None:
        parts.append("inst=" + ",".join(sorted(f.instances)))
    return " ".join(parts)


def _us(ns: int) -> str:
    """Nanoseconds as microseconds, exactly (epoch nanoseconds exceed a float's digits), without trailing zeros."""
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(ns), 1000)
    return f"{sign}{q}" + (f".{r:03d}".rstrip("0") if r else "")


FILTER_HINT = (
    "nc=0-3,8 NeuronCores · type=nrt_execute,hardware,^cc_exec event types (hardware/software groups, "
    "^ excludes) · inst=i-abc instances · a bare 0-3 is cores · Enter applies, empty clears, Esc cancels"
)


FLOW_LIST_MAX = 200
"""Flow ends listed per direction (a v2 fan-out can have thousands; the count says how many more)."""

MIN_TRACK_LINES = 8
"""Lines the tracks keep when the details and the area summary are open under them."""


class _InfoLine(Static):
    """The trace's one-line summary, cut to its width by whole parts (``fmt.cut_parts``): wrapped by words, the
    line's second row was hidden and the first ended in a stray "·" at 80 columns, and cut by characters it could
    end inside a number ("900 µ"). ``lost`` (what the loader skipped) leads and is never cut away."""

    _parts: list[str] = []
    _lost: Text | None = None

    def show(self, parts: list[str], lost: Text | None = None) -> None:
        self._parts, self._lost = parts, lost
        self.refresh()

    def render(self) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        width = self.content_size.width
        if self._lost is not None:
            line.append_text(self._lost)
            width -= self._lost.cell_len
        line.append(cut_parts(self._parts, max(width, 1), measure=cell_len))
        return line


class TimelineScreen(Screen[None]):
    """The system-trace timeline, a second pane of the app."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,equals_sign", "zoom(2)", "zoom in"),
        Binding("minus", "zoom(0.5)", "zoom out"),
        Binding("0", "fit", "fit the whole trace"),
        Binding("left,h", "pan(-0.25)", "pan left"),
        Binding("right,l", "pan(0.25)", "pan right"),
        Binding("shift+left", "pan(-1)", "page left"),
        Binding("shift+right", "pan(1)", "page right"),
        Binding("home", "start", "to the trace start"),
        Binding("end", "end", "to the trace end"),
        Binding("up,k", "line(-1)", "line up"),
        Binding("down,j", "line(1)", "line down"),
        Binding("pageup", "line(-10)", "ten lines up"),
        Binding("pagedown", "line(10)", "ten lines down"),
        Binding("enter", "select", "select the event at the cursor"),
        Binding("comma,ctrl+left", "step(-1)", "previous event on this line"),
        Binding("full_stop,ctrl+right", "step(1)", "next event on this line"),
        Binding("g", "first", "first event"),
        Binding("G", "last", "last event"),
        Binding("exclamation_mark", "first_problem", "first error or unfinished event"),
        Binding("F", "fit_selected", "fit the selected event"),
        Binding("o", "grouping", "grouping"),
        Binding("slash", "search", "search", priority=True),  # the box focused before the keys typed after it
        Binding("greater_than_sign", "match(1)", "next match"),
        Binding("less_than_sign", "match(-1)", "previous match"),
        Binding("f", "filters", "filters (nc= type= inst=)", priority=True),
        Binding("e", "error(1)", "next error"),
        Binding("E", "error(-1)", "previous error"),
        Binding("u", "hangs", "unfinished (hang) list"),
        Binding("L", "flow(1)", "follow a flow downstream (again: its next consumer)"),
        Binding("H", "flow(0)", "follow a flow upstream (again: its next source)"),
        Binding("D", "flow_list", "flows of the selected slice: upstream, downstream, chain source"),
        Binding("c", "clock", "axis: from the trace start / the trace's clock"),
        Binding("m", "mark", "mark an area edge (twice: the area's summary)"),
        Binding("a", "area_window", "summary of the visible window"),
        Binding("space", "area_track", "mark this track for the area"),
        Binding("O", "metrics_offset", "metrics: shift them (when the clocks cannot be matched)", priority=True),
        Binding("r", "play", "play/pause replay"),
        Binding("s", "speed(2)", "replay faster"),
        Binding("S", "speed(0.5)", "replay slower"),
        Binding("R", "stop", "remove playhead"),
        Binding("escape", "clear", "close / clear"),
    ]
    DEFAULT_CSS = """
    TimelineScreen { layout: vertical; }
    TimelineScreen #trace-info { height: 1; background: $panel; color: $text; padding: 0 1; }
    TimelineScreen #trace-body { height: 1fr; }
    TimelineScreen #trace-side { width: 44; display: none; background: $panel; }
    TimelineScreen #trace-side.-visible { display: block; }
    TimelineScreen #trace-hangs { height: 1fr; display: none; }
    TimelineScreen #trace-hangs.-visible { display: block; }
    TimelineScreen #trace-flows { height: 1fr; display: none; }
    TimelineScreen #trace-flows.-visible { display: block; }
    TimelineScreen #trace-replay { height: auto; max-height: 50%; display: none; padding: 0 1; }
    TimelineScreen #trace-replay.-visible { display: block; }
    TimelineScreen #trace-details { height: auto; max-height: 12; display: none; background: $panel;
                                    padding: 0 1; border-top: solid $primary; }
    TimelineScreen #trace-details.-visible { display: block; }
    TimelineScreen #trace-agg-box { height: auto; max-height: 14; display: none; background: $panel;
                                    border-top: solid $primary; }
    TimelineScreen #trace-agg-box.-visible { display: block; }
    TimelineScreen #trace-agg-title { height: 1; padding: 0 1; }
    TimelineScreen #trace-agg { height: auto; max-height: 12; }
    TimelineScreen #trace-empty { height: 1fr; content-align: center middle; color: $text-muted; }
    TimelineScreen Input { dock: bottom; height: 1; border: none; padding: 0 1; display: none; }
    TimelineScreen Input:focus { border: none; }
    TimelineScreen Input.-visible { display: block; }
    TimelineScreen #trace-filter-box { dock: bottom; height: auto; display: none; }
    TimelineScreen #trace-filter-box.-visible { display: block; }
    TimelineScreen #trace-filter-box Input { dock: none; }
    TimelineScreen #trace-filter-hint { height: auto; padding: 0 1; background: $panel; color: $text-muted; }
    TimelineScreen #trace-status { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    TimelineScreen #trace-loading { height: 1fr; content-align: center middle; color: $text-muted; }
    """

    def __init__(
        self,
        source: TraceStore | str | Path | Sequence[str | Path],
        *,
        clock: Callable[[], float] = time.monotonic,
        at: str = "start",
        metrics: str | Path | Index | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.store: TraceStore | None = source if isinstance(source, TraceStore) else None
        self.paths: list[Path] = (
            [] if isinstance(source, TraceStore) else [Path(source)] if isinstance(source, (str, Path))
            else [Path(p) for p in source]
        )
        self.path = self.paths[0] if self.paths else None
        self.at = at
        """Where the view opens: "start" (the whole trace) or "end" (the last events, close up)."""
        self.metrics_source = metrics
        """A recording (path, or the replay's index) whose metrics are drawn beside the trace."""
        self.metrics: Metrics | None = None
        self._following = False
        self._sent_playhead: int | None = None
        self._wall: float | None = None
        """The replay's moment (unix seconds), kept while the trace loads: the timeline opens there."""
        self.area_rows: list[AggRow] = []
        self._details_of: tuple[int | None, int | None] = (None, None)
        """(event, counter) the details show, to draw them again at a new width."""
        self.model: TimelineModel | None = None
        self.clock = clock
        self.matches: list[int] = []
        self.match_text = ""
        self.speed = 1.0
        """Trace nanoseconds per wall nanosecond while playing."""
        self.playing = False
        self._timer: Timer | None = None
        self._last_tick = 0.0
        self.error = ""
        self.title = "trace"
        self.sub_title = ""

    # -- building -----------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield _InfoLine(id="trace-info")
        with Horizontal(id="trace-body"):
            if self.store is None:
                yield Static("loading trace…", id="trace-loading")
            else:
                yield from self._body(self.store)
            with Vertical(id="trace-side"):
                yield OptionList(id="trace-hangs")
                yield OptionList(id="trace-flows")
                yield Static(id="trace-replay")
        yield Static(id="trace-details")
        with Vertical(id="trace-agg-box"):
            yield Static(id="trace-agg-title")
            yield DataTable(id="trace-agg", cursor_type="row", zebra_stripes=True)
        yield TextBox(
            placeholder="search event names (Enter: first match; < > previous/next)", id="trace-search"
        )
        yield TextBox(placeholder="metrics offset: +2.5s, -300ms, 1500us (moves the metric tracks)", id="trace-offset")
        with Vertical(id="trace-filter-box"):
            yield Static(Text(FILTER_HINT), id="trace-filter-hint")
            yield TextBox(placeholder="filters, e.g. nc=0-3 type=hardware,^cc_exec inst=i-abc123", id="trace-filter")
        yield Static(id="trace-status")

    def _body(self, store: TraceStore) -> ComposeResult:
        """The timeline, or (a file with nothing to draw) what the file holds instead."""
        if not len(store) and not store.counters:
            yield Static(Text(clean(what_it_holds(store) or "no trace events", 400)), id="trace-empty")
            return
        self.model = TimelineModel(self.store)  # type: ignore[arg-type]
        yield Timeline(self.model, id="timeline")

    def on_mount(self) -> None:
        if self.store is None:
            self._load()
        else:
            if self.metrics_source is not None and self.metrics is None:
                self.metrics = self._metrics_for(self.store)
                if self.model is not None:
                    self.model.rebuild()
                    self.timeline.model_changed()
            self._ready()

    @work(thread=True, exclusive=True, exit_on_error=False, group="trace-load", description="load trace")
    def _load(self) -> None:
        worker = get_current_worker()
        try:  # given up when the app quits: else its exit waited for the rest of a large file to load
            store = load_traces(self.paths, cancelled=lambda: worker.is_cancelled)
        except TraceError as e:
            self.post_message(TraceLoaded(None, str(e)))
            return
        self.post_message(TraceLoaded(store, metrics=self._metrics_for(store)))

    def _metrics_for(self, store: TraceStore) -> Metrics | None:
        """The recording's counter tracks, added to the store before it is shown (in the loading thread)."""
        if self.metrics_source is None:
            return None
        try:
            m = build_metrics(store, self.metrics_source)
        except OSError as e:
            return Metrics(note=f"metrics: cannot read {self.metrics_source}: {e.strerror or e}")
        attach(store, m)
        return m

    async def on_trace_loaded(self, message: TraceLoaded) -> None:
        loading = self.query("#trace-loading")
        if message.store is None:
            self.error = message.error
            for w in loading:
                w.update(Text(clean(message.error, 400)))  # type: ignore[attr-defined]
            self._update_info()
            return
        self.store = message.store
        self.metrics = message.metrics
        await loading.remove()
        await self.query_one("#trace-body").mount_all(list(self._body(self.store)), before="#trace-side")
        self._ready()

    def _ready(self) -> None:
        self._update_info()
        if self.metrics is not None and self.metrics.note:
            self.notify(clean(self.metrics.note, 300), title="metrics", timeout=8,
                        severity="information" if self.metrics.matched else "warning")
        if self.model is None:  # nothing to draw
            return
        tl = self.query_one(Timeline)
        tl.focus()
        self.speed = max(tl.model.store.span / 10e9, 1e-6)  # the whole trace plays in ~10 s
        if self.at == "end":
            tl.show_end()
        if self._wall is not None:  # beside a replay: one playhead, at the replay's position
            self.follow_wall_time(self._wall)
        self._update_status()

    # -- helpers ------------------------------------------------------------------------------------------------
    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def _update_info(self) -> None:
        info = self.query_one("#trace-info", _InfoLine)
        label = GROUPING_LABELS.get(self.model.grouping, "") if self.model else ""
        if self.store is None:
            name = self.path.name if self.path else "trace"
            info.show([clean(f"{name}: {self.error or 'loading…'}", 300)])
            self.title = f"trace {clean(name)}"
            return
        st = self.store
        name = st.shown_name
        self.title = f"trace {clean(name)}"
        self.sub_title = f"grouping: {label}"
        files = st.metadata.get("files")
        if files:
            name = f"{files} files ({st.metadata.get('alignment', '')})"
        parts = [clean(name, 200), st.format_label, plural(len(st), "event"), plural(st.drawn_tracks, "track"),
                 format_duration(st.span)]
        if self.model and self.model.filters.active:  # before the grouping, which the status line says too
            parts.append(clean(f"filter: {self.model.filters.describe()}", 300))
        if label:
            parts.append(f"grouping: {label}")
        lost = Text(clean(lost_line(st), 200) + " · ", style="bold reverse") if st.lost else None
        info.show(parts, lost)

    def _update_status(self) -> None:
        if self.model is None:
            return
        tl = self.timeline
        st = self.model.store
        parts = [
            f"grouping: {GROUPING_LABELS[self.model.grouping]} (o)",
            f"errors: {len(self.model.errors())} (e/E)",
            f"unfinished: {len(self.model.unfinished())} (u)",
        ]
        if self.match_text:
            parts.append(f"/{self.match_text}: {len(self.matches)} matches (< >)")
        if tl.playhead is not None:
            state = "playing" if self.playing else "paused"
            parts.append(
                f"replay {state} @ +{format_duration(tl.playhead - st.t_min)} ×{self.speed:.3g} (r s/S)"
            )
        else:
            parts.append("replay: r")
        if tl.mark is not None:
            parts.append(f"area from +{format_at(tl.mark - st.t_min, max((tl.t1 - tl.t0) // 100, 1))}: m at the other end")
        elif tl.area is not None:
            parts.append(f"area {format_duration(tl.area[1] - tl.area[0])} (Esc clears)")
        if self.metrics is not None and self.metrics.counters:
            parts.append("metrics " + ("on the wall clock" if self.metrics.matched else "placed by hand (O)"))
        self.query_one("#trace-status", Static).update(Text(clean(" │ ".join(parts), 400)))

    def on_timeline_selected(self, message: Timeline.Selected) -> None:
        if self.query_one("#trace-flows").has_class("-visible"):
            self._fill_flows()
        details = self.query_one("#trace-details", Static)
        if message.counter is not None:
            details.update(self._counter_details(message.counter, message.sample))
            details.add_class("-visible")
        elif message.event is None:
            details.remove_class("-visible")
        else:
            details.update(self._event_details(message.event))
            details.add_class("-visible")
        self._details_of = (message.event, message.counter)

    def _event_details(self, ev: int) -> Text:
        st = self.model.store  # type: ignore[union-attr]
        info = st.info(ev)
        tr = info.track
        t = Text()
        t.append(clean(info.name, 300), style="bold")
        if info.error:
            t.append("  ERROR ", style="bold reverse")
        if info.unfinished:
            t.append("  UNFINISHED: never ended, a hang? ", style="bold reverse")
        t.append("\n")
        where = f"{tr.process} / {tr.label}"
        if info.core is not None and tr.label != f"NC {info.core}":
            where += f" · NC {info.core}"
        if tr.instance and tr.instance not in tr.process:
            where += f" · {tr.instance}"
        t.append(clean(where, 300) + "\n")
        parts = [
            f"start +{format_exact(info.start - st.t_min)} ({_us(info.start)} µs)",
            f"duration {format_exact(info.dur)}",
            f"phase {clean(info.phase)}",
            f"cat {clean(info.cat, 60) or '-'}",
        ]
        # broken between whole parts at the width drawn at (on_resize draws them again): by words, 80 columns
        # put "cat" at one line's end and its value under it
        t.append("\n".join(wrap_parts(parts, max(self.size.width - 2, 20), measure=cell_len)) + "\n")
        flows = self._flow_summary(ev)
        if flows:
            t.append(flows + "\n")
        for k, v in list(info.args.items())[:24]:
            t.append(f"  {clean(k, 60)}: ", style="bold")
            t.append(clean(v if isinstance(v, str) else repr(v), 200) + "\n")
        t.rstrip()
        return t

    def _counter_details(self, counter: int, sample: int | None) -> Text:
        st = self.model.store  # type: ignore[union-attr]
        c = st.counters[counter]
        t = Text()
        t.append(clean(c.name, 200), style="bold")
        if sample is None:
            t.append("\nno sample at this time")
            return t
        t.append(
            f"\n+{format_duration(c.ts[sample] - st.t_min)}: {c.val[sample]:,.6g} {clean(c.unit)}".rstrip()
        )
        if c.breakdown is not None and sample < len(c.breakdown):
            total = c.val[sample] or 1.0
            for cat, v in sorted(c.breakdown[sample].items(), key=lambda kv: -kv[1]):
                t.append(f"\n  {clean(cat, 60)}: {v:,.6g} {clean(c.unit)} ({100 * v / total:.1f}%)")
        return t

    def _ensure(self) -> Timeline:
        if self.model is None:
            raise SkipAction()
        return self.timeline

    # -- actions ------------------------------------------------------------------------------------------------
    def action_zoom(self, factor: float) -> None:
        tl = self._ensure()
        tl.zoom(factor, tl.key_anchor())

    def action_pan(self, fraction: float) -> None:
        self._ensure().pan(fraction)

    def action_fit(self) -> None:
        self._ensure().fit()

    def action_start(self) -> None:
        self._ensure().go_start()

    def action_end(self) -> None:
        self._ensure().go_end()

    def action_line(self, delta: int) -> None:
        self._ensure().move_cursor(delta)

    def action_select(self) -> None:
        self._ensure().select_at_cursor()

    def action_step(self, direction: int) -> None:
        self._ensure().step_on_line(direction > 0)

    def action_grouping(self) -> None:
        tl = self._ensure()
        assert self.model is not None
        self.model.cycle_grouping()
        tl.model_changed()
        if tl.selected is not None:
            tl.select(tl.selected)
        self._update_info()
        self._update_status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys that open a box (``/``, ``f``, ``O``: priority bindings, so the box has the focus before the
        keys typed after them) are characters in a text box (``typing``)."""
        return not (action in ("search", "filters", "metrics_offset") and typing(self.focused))

    def action_search(self) -> None:
        self._ensure()
        box = self.query_one("#trace-search", Input)
        box.add_class("-visible")
        box.value = self.match_text
        focus_now(box)

    def action_filters(self) -> None:
        self._ensure()
        box = self.query_one("#trace-filter", Input)
        box.add_class("-visible")
        self.query_one("#trace-filter-box").add_class("-visible")
        assert self.model is not None
        box.value = filter_text(self.model.filters)
        focus_now(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        box = event.input
        if box.id == "trace-search":
            self._apply_search(event.value)
        elif box.id == "trace-offset":
            if not self._apply_offset(event.value):
                return
        elif box.id == "trace-filter":
            try:
                filters = parse_filter_text(event.value)
            except FilterError as e:
                self.notify(str(e), severity="error", title="filter")
                return
            assert self.model is not None
            self.model.set_filters(filters)
            self.timeline.model_changed()
            if self.match_text:
                self.matches = self.model.search(self.match_text)
                self.timeline.set_matches(self.matches)
            self._update_info()
            self._update_status()
            if self.timeline.area is not None:
                self._show_area()
        self._close_input(box)

    def _close_input(self, box: Input) -> None:
        box.remove_class("-visible")
        self.query_one("#trace-filter-box").remove_class("-visible")
        self.timeline.focus()

    def _apply_search(self, text: str) -> None:
        assert self.model is not None
        self.match_text = text.strip()
        self.matches = self.model.search(self.match_text) if self.match_text else []
        tl = self.timeline
        tl.set_matches(self.matches)
        if self.matches:
            self._jump(self.matches, forward=True)
        elif self.match_text:
            self.notify(f"no event name contains {clean(self.match_text, 60)!r}", severity="warning")
        self._update_status()

    def _jump(self, events: list[int], forward: bool) -> None:
        tl = self.timeline
        assert self.model is not None
        ev = self.model.step(
            events, tl.selected if tl.selected in events else None, tl.cursor_time(), forward
        )
        if ev is not None:
            tl.select(ev)

    def action_match(self, direction: int) -> None:
        self._ensure()
        if not self.matches:
            self.notify("no search matches: / to search", severity="information")
            return
        self._jump(self.matches, direction > 0)

    def action_error(self, direction: int) -> None:
        self._ensure()
        assert self.model is not None
        errs = self.model.errors()
        if not errs:
            self.notify("no error events", severity="information")
            return
        self._jump(errs, direction > 0)

    def action_hangs(self) -> None:
        self._ensure()
        assert self.model is not None
        side = self.query_one("#trace-side")
        hangs = self.query_one("#trace-hangs", OptionList)
        if self._close_side(hangs):
            return
        st = self.model.store
        hangs.clear_options()
        events = self.model.unfinished()
        if not events:
            hangs.add_option(Option(Text("no unfinished events"), id="none", disabled=True))
        for ev in events:
            core = st.core_of(ev)
            label = Text(clean(st.name_of(ev), 60), style="bold")
            label.append(f"\n  {'NC ' + str(core) if core is not None else clean(st.track_of(ev).label, 30)}")
            label.append(f" @ +{format_duration(st.start[ev] - st.t_min)}")
            hangs.add_option(Option(label, id=f"ev{ev}"))
        hangs.add_class("-visible")
        side.add_class("-visible")
        hangs.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        oid = event.option.id or ""
        if oid.startswith("ev"):
            self._go_to(int(oid[2:]))
            if event.option_list.id == "trace-flows":  # walking a chain: the list now shows the new slice's
                event.option_list.focus()
            else:
                self.timeline.focus()

    def _flow_summary(self, ev: int) -> str:
        """The details' flow line: how many flows come in and go out, and the keys that walk them."""
        assert self.model is not None
        fm = self.model.store.flows
        n_in, n_out = len(fm.incoming(ev)), len(fm.outgoing(ev))
        if not n_in and not n_out:
            return ""
        within = fm.outgoing(ev).count(ev)
        parts = []
        if n_in - within:
            parts.append(f"{n_in - within} in (H)")
        if n_out - within:
            parts.append(f"{n_out - within} out (L)")
        if within:
            parts.append(f"{within} within this slice")
        hidden = self.model.hidden_flow_ends(ev)
        if hidden:
            parts.append(f"{hidden} hidden by the filters")
        return "flows: " + ", ".join(parts) + " · D lists them"

    def action_flow(self, downstream: int) -> None:
        """``L`` downstream, ``H`` upstream: to the next slice along the flow; pressed again on a slice with
        several, the next of them in turn (L, H, L from a slice with two consumers reaches both)."""
        tl = self._ensure()
        assert self.model is not None
        if tl.selected is None:
            self.notify("select an event first (Enter or click)", severity="information")
            return
        ev = tl.selected
        target, k, n = self.model.follow_flow(ev, bool(downstream))
        if target is None:
            other = self.model.flow_ends(ev, not downstream)
            if not self.model.store.flows.incoming(ev) and not self.model.store.flows.outgoing(ev):
                msg = "this event has no flow"
            elif downstream:
                msg = "the end of the chain: no flow leaves this slice" + (" (H goes upstream)" if other else "")
            else:
                msg = "the source of the chain: no flow arrives here" + (" (L goes downstream)" if other else "")
            self.notify(msg, severity="information", timeout=3)
            return
        self._go_to(target)
        if n > 1:
            way = "downstream" if downstream else "upstream"
            key = "L" if downstream else "H"
            self.notify(f"{way} {k} of {n} ({key} again from there: the next; D lists them)", timeout=3)

    def _go_to(self, ev: int) -> None:
        """Select ``ev`` and bring it into view (the flow list follows the selection)."""
        self.timeline.select(ev)

    def action_flow_list(self) -> None:
        """``D``: the selected slice's flows, upstream and downstream, and its chain's source; Enter jumps."""
        self._ensure()
        box = self.query_one("#trace-flows", OptionList)
        if self._close_side(box):
            return
        if self.timeline.selected is None:
            self.notify("select an event first (Enter or click)", severity="information")
            return
        self._fill_flows()
        box.add_class("-visible")
        self._side_visibility()
        focus_now(box)

    def _fill_flows(self) -> None:
        assert self.model is not None
        m = self.model
        st = m.store
        box = self.query_one("#trace-flows", OptionList)
        box.clear_options()
        ev = self.timeline.selected
        if ev is None:
            box.add_option(Option(Text("no event selected"), disabled=True))
            return
        title = Text("flows of ", style="bold")
        title.append(clean(st.name_of(ev), 60))
        box.add_option(Option(title, disabled=True))
        source, steps = m.chain_source(ev)
        if steps > 1:
            box.add_option(self._flow_option("⇤ chain source: ", source, f" ({steps} flows up)"))
        for label, downstream in (("↑ upstream (H)", False), ("↓ downstream (L)", True)):
            ends = m.flow_ends(ev, downstream)
            box.add_option(Option(Text(f"{label}: {len(ends)}", style="bold"), disabled=True))
            for e in ends[:FLOW_LIST_MAX]:
                box.add_option(self._flow_option("  ", e))
            if len(ends) > FLOW_LIST_MAX:
                box.add_option(Option(Text(f"  … {len(ends) - FLOW_LIST_MAX} more"), disabled=True))
        within = st.flows.outgoing(ev).count(ev)
        if within:
            box.add_option(Option(Text(f"{within} flow(s) with both ends in this slice"), disabled=True))
        box.highlighted = next((k for k in range(box.option_count) if not box.get_option_at_index(k).disabled), None)

    def _flow_option(self, head: str, ev: int, tail: str = "") -> Option:
        st = self.model.store  # type: ignore[union-attr]
        label = Text(head)
        label.append(clean(st.name_of(ev), 60), style="bold")
        label.append(tail)
        label.append(f"\n    {clean(st.track_of(ev).label, 24)} @ +{format_exact(st.start[ev] - st.t_min)}")
        return Option(label, id=f"ev{ev}")

    def action_metrics_offset(self) -> None:
        self._ensure()
        if self.metrics is None or not self.metrics.counters:
            self.notify("no metrics beside this trace: open it with --metrics REC (or neuron-top replay REC --trace)",
                        severity="information")
            return
        box = self.query_one("#trace-offset", Input)
        box.add_class("-visible")
        box.value = ""
        focus_now(box)

    def _apply_offset(self, text: str) -> bool:
        assert self.metrics is not None and self.model is not None
        try:
            delta = parse_offset(text)
        except ValueError:
            self.notify(f"not an offset: {clean(text, 40)!r} (e.g. +2.5s, -300ms)", severity="error")
            return False
        shift(self.model.store, self.metrics, delta)
        self.timeline.model_changed()
        self.notify(clean(self.metrics.note, 200), timeout=4)
        return True

    # -- the link with the replay (one wall clock) ------------------------------------------------------------
    def follow_wall_time(self, unix: float) -> None:
        """The replay moved: put the playhead at the same moment (when the trace's clock maps to wall time). Kept
        while the trace loads, so the timeline opens at the replay's position, not at the trace's start."""
        self._wall = unix
        if self.model is None or self.metrics is None or not self.metrics.counters:
            return
        t = self.metrics.trace_time(unix)
        self._sent_playhead = t  # it came from there: no need to tell it back
        self._following = True
        try:
            self.timeline.set_playhead(t)
            self._show_replay()
            self._update_status()
        finally:
            self._following = False

    def on_timeline_changed(self, message: Timeline.Changed) -> None:
        self._update_status()
        tl = self.timeline
        if (
            tl.playhead is not None
            and tl.playhead != self._sent_playhead
            and not self._following
            and self.metrics is not None
            and self.metrics.counters
        ):
            self._sent_playhead = tl.playhead
            self.post_message(WallTime(self.metrics.unix_time(tl.playhead), self))

    def action_first(self) -> None:
        tl = self._ensure()
        ev = tl.edge_event(last=False)
        if ev is not None:
            tl.select(ev)

    def action_last(self) -> None:
        tl = self._ensure()
        ev = tl.edge_event(last=True)
        if ev is not None:
            tl.select(ev)

    def action_first_problem(self) -> None:
        """``!``: the first error or unfinished (hang) event in time."""
        tl = self._ensure()
        assert self.model is not None
        st = self.model.store
        events = sorted(set(self.model.errors()) | set(self.model.unfinished()), key=lambda e: (st.start[e], e))
        if not events:
            self.notify("no errors and no unfinished events", severity="information")
            return
        tl.select(events[0])
        tl.fit_event(events[0])

    def action_fit_selected(self) -> None:
        tl = self._ensure()
        if tl.selected is None:
            self.notify("select an event first (Enter, a click, g/G or !)", severity="information")
            return
        tl.fit_event(tl.selected)

    def action_clock(self) -> None:
        tl = self._ensure()
        tl.set_absolute(not tl.absolute)
        st = tl.model.store
        if not tl.absolute:
            what = "from the trace start"
        elif is_wall_clock(st.t_min):
            what = "the trace's wall clock (time of day)"
        else:
            what = "the trace's own clock"
        self.notify(f"axis times: {what}", timeout=3)

    # -- area selection ---------------------------------------------------------------------------------------------
    def action_mark(self) -> None:
        """``m`` at one end of the area, ``m`` again at the other (at the playhead, else the window centre)."""
        tl = self._ensure()
        t = tl.cursor_time() if tl.selected is None or tl.mark is not None else tl.model.store.start[tl.selected]
        if tl.mark is None:
            tl.set_area(tl.area, mark=t)
            at = format_at(t - tl.model.store.t_min, max((tl.t1 - tl.t0) // 100, 1))
            self.notify(f"area from +{at}: move, then m at the other end", timeout=4)
            return
        a, b = sorted((tl.mark, t))
        if a == b:
            b = a + 1
        tl.set_area((a, b))
        self._show_area()

    def action_area_window(self) -> None:
        tl = self._ensure()
        tl.set_area((tl.t0, tl.t1))
        self._show_area()

    def action_area_track(self) -> None:
        tl = self._ensure()
        if tl.toggle_area_track() is None:
            self.notify("put the cursor on a track's line to mark it", severity="information")
            return
        if tl.area is not None:
            self._show_area()

    def on_timeline_area_selected(self, message: Timeline.AreaSelected) -> None:
        self._show_area()

    def _show_area(self) -> None:
        """The summary of the marked area: slice names by total time; Enter jumps to the longest instance."""
        tl = self.timeline
        assert self.model is not None and tl.area is not None
        st = self.model.store
        t0, t1 = tl.area
        tracks = tl.area_tracks or {ln.track for ln in self.model.lines if ln.kind == "row"}
        rows = aggregate(st, t0, t1, sorted(tracks), self.model.names_ok)
        self.area_rows = rows
        box = self.query_one("#trace-agg-box")
        title = self.query_one("#trace-agg-title", Static)
        n = sum(r.count for r in rows)
        where = f"{len(tl.area_tracks)} marked tracks" if tl.area_tracks else "all tracks"
        res = max((t1 - t0) // 100, 1)
        title.update(
            Text(
                f"{n} slices, {len(rows)} names in {format_duration(t1 - t0)} (+{format_at(t0 - st.t_min, res)}"
                f" to +{format_at(t1 - st.t_min, res)}) · {where} · Enter: the longest · Esc",
                style="bold",
            )
        )
        table = self.query_one("#trace-agg", DataTable)
        table.clear(columns=True)
        for col in ("count", "total", "average", "max", "name"):  # the numbers first: names can be long
            table.add_column(col, key=col)
        for k, r in enumerate(rows[:500]):
            table.add_row(
                Text(str(r.count), justify="right"),
                Text(format_duration(r.total), justify="right"),
                Text(format_duration(r.avg), justify="right"),
                Text(format_duration(r.max), justify="right"),
                Text(clean(r.name, 200)),
                key=str(k),
            )
        box.add_class("-visible")
        self._fit_panels()
        if rows:
            table.focus()
        self._update_status()

    def on_resize(self) -> None:
        self._fit_panels()
        event, counter = self._details_of
        if event is not None and counter is None:  # its lines were broken for the old width
            self.query_one("#trace-details", Static).update(self._event_details(event))

    def _fit_panels(self) -> None:
        """The details and the area summary under the tracks leave the tracks at least ``MIN_TRACK_LINES`` lines:
        at 80x24 their usual 12 + 14 lines would hide every track (and the event Enter jumps to)."""
        budget = max(6, self.size.height - 2 - MIN_TRACK_LINES)  # 2: the info and status lines
        both = self.query_one("#trace-agg-box").has_class("-visible")
        details = min(12, budget // 2 if both else budget)
        agg = max(4, min(14, budget - details))
        self.query_one("#trace-details").styles.max_height = details
        self.query_one("#trace-agg-box").styles.max_height = agg
        self.query_one("#trace-agg").styles.max_height = agg - 2  # its border and title

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        k = int(event.row_key.value or 0)
        if 0 <= k < len(self.area_rows):
            tl = self.timeline
            ev = self.area_rows[k].longest
            tl.select(ev)
            tl.fit_event(ev)
            tl.focus()

    # -- replay -------------------------------------------------------------------------------------------------
    def action_play(self) -> None:
        tl = self._ensure()
        if tl.playhead is None and self._wall is not None and self.metrics is not None and self.metrics.counters:
            self.follow_wall_time(self._wall)  # beside a replay: play on from its position, never from the start
        if tl.playhead is None or tl.playhead >= tl.model.store.t_max:
            tl.set_playhead(tl.t0)
        self.playing = not self.playing
        if self.playing:
            self._last_tick = self.clock()
            if self._timer is None:
                self._timer = self.set_interval(TICK, self.tick, name="trace-replay")
            else:
                self._timer.resume()
        elif self._timer is not None:
            self._timer.pause()
        self._show_replay()
        self._update_status()

    def action_speed(self, factor: float) -> None:
        self._ensure()
        self.speed = min(max(self.speed * factor, 1e-9), 1e9)
        self._update_status()

    def action_stop(self) -> None:
        tl = self._ensure()
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        tl.set_playhead(None)
        self.query_one("#trace-replay").remove_class("-visible")
        self._side_visibility()
        self._update_status()

    def tick(self) -> None:
        """Advance the playhead by the wall time since the last tick times the speed (clock injected for tests)."""
        if not self.playing or self.model is None:
            return
        now = self.clock()
        dt = max(now - self._last_tick, 0.0)
        self._last_tick = now
        tl = self.timeline
        st = self.model.store
        t = (tl.playhead if tl.playhead is not None else tl.t0) + int(dt * 1e9 * self.speed)
        if t >= st.t_max:
            t = st.t_max
            self.playing = False
            if self._timer is not None:
                self._timer.pause()
        tl.set_playhead(t)
        self._show_replay()
        self._update_status()

    def active_at(self, t: int) -> list[tuple[str, list[str]]]:
        """Per NeuronCore (or per track when the trace has no cores), the nested events active at ``t``."""
        assert self.model is not None
        st = self.model.store
        out: dict[str, list[str]] = {}
        tracks = [st.tracks[ln.track] for ln in self.model.lines if ln.kind == "row" and ln.row == 0]
        with_core = [tr for tr in tracks if tr.core is not None]
        use = sorted(with_core, key=lambda tr: (tr.core, tr.id)) if with_core else tracks
        for tr in use[:64]:
            key = f"NC {tr.core}" if tr.core is not None else tr.label
            names = out.setdefault(key, [])
            for r in range(len(tr.rows)):
                ev = self.model.row_index(tr.id, r).at(t)
                if ev is not None:
                    names.append(st.name_of(ev))
        return list(out.items())

    def _show_replay(self) -> None:
        tl = self.timeline
        panel = self.query_one("#trace-replay", Static)
        if tl.playhead is None:
            return
        st = tl.model.store
        text = Text(f"at +{format_duration(tl.playhead - st.t_min)}\n", style="bold")
        for key, names in self.active_at(tl.playhead):
            text.append(f"{clean(key, 24)}: ", style="bold")
            text.append((clean(" > ".join(names), 200) if names else "idle") + "\n")
        text.rstrip()
        panel.update(text)
        panel.add_class("-visible")
        self._side_visibility()

    def _close_side(self, panel: Widget) -> bool:
        """Close a side panel (the hang list, the flow list) if it is open, the keys back on the tracks."""
        if not panel.has_class("-visible"):
            return False
        panel.remove_class("-visible")
        self._side_visibility()
        self.timeline.focus()
        return True

    def _side_visibility(self) -> None:
        side = self.query_one("#trace-side")
        shown = any(self.query_one(w).has_class("-visible") for w in ("#trace-hangs", "#trace-flows", "#trace-replay"))
        side.set_class(shown, "-visible")

    def action_clear(self) -> None:
        """Esc: close an input, then the hang list, the area summary (then the area), the selection, the search;
        otherwise let the app have Esc."""
        if self.model is None:
            raise SkipAction()
        for box in self.query(Input):
            if box.has_class("-visible"):
                self._close_input(box)
                return
        tl = self.timeline
        agg = self.query_one("#trace-agg-box")
        if agg.has_class("-visible"):
            agg.remove_class("-visible")
            self._fit_panels()
            tl.focus()
            return
        if tl.area is not None or tl.mark is not None or tl.area_tracks:
            tl.area_tracks = frozenset()
            tl.set_area(None)
            self._update_status()
            return
        if self._close_side(self.query_one("#trace-flows")) or self._close_side(self.query_one("#trace-hangs")):
            return
        if tl.selected is not None or self.query_one("#trace-details").has_class("-visible"):
            tl.select(None)
            return
        if self.match_text:
            self.match_text = ""
            self.matches = []
            tl.set_matches([])
            self._update_status()
            return
        raise SkipAction()

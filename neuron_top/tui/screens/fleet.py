"""The fleet screen: many hosts in one table (or heat map), drilling into one host's dashboard.

``FleetScreen`` holds what every fleet has: the latest frame, how it is arranged (sort, filter, group, trouble
first, heat map), the cursor (kept by host, so re-sorting or coming back from a host keeps it), recording, and
the drill-down. Where the rows come from is a subclass's business: ``PromFleetScreen`` polls Prometheus in a
worker; ``SshFleetScreen`` applies each host's feed events to that host's session (a ``SessionFleet``) and makes
rows from the sessions; the fleet replay screen reads recorded frames.

A drill-down shows one host in the ordinary dashboard: the app is told to show that host's session
(``show_session``); Esc comes back and the app shows what it showed before.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from neuron_top.feed import Feed
from neuron_top.fleet.apps import APP_COLUMNS, AppRow, app_cells, host_filter
from neuron_top.fleet.frame import FleetFrame
from neuron_top.fleet.record import FleetRecorder
from neuron_top.fleet.rows import FleetRow
from neuron_top.fleet.table import COLUMNS, GROUPS, arrange, compile_filter, summarize
from neuron_top.session import Session
from neuron_top.sources.base import Source
from neuron_top.sources.stream import StopEvent
from neuron_top.textsafe import clean
from neuron_top.tui.keys import focus_now, typing
from neuron_top.tui.messages import FleetRefreshed, HostEvent
from neuron_top.tui.session_host import FleetHost
from neuron_top.tui.widgets.fleet_header import FleetHeader, ViewState
from neuron_top.tui.widgets.fleet_table import FleetTable
from neuron_top.tui.widgets.heatmap import HEAT_COLUMNS, HeatMap
from neuron_top.tui.widgets.textbox import TextBox

SORTS = tuple(c.key for c in COLUMNS)
FILTER_HINT = "filter: Enter keeps it, Esc clears it"


class FleetScreen(Screen):
    """The table of hosts. Subclasses feed it frames (``apply_frame``) and give a host's session to drill into."""

    BINDINGS = [
        Binding("s", "sort(1)", "sort"),
        Binding("S", "sort(-1)", "sort by the previous column", show=False),
        Binding("r", "reverse", "reverse the order", show=False),
        Binding("exclamation_mark", "trouble", "trouble first"),
        Binding("slash", "filter", "filter", priority=True),  # the box focused before the keys typed after it
        Binding("b", "group", "group by"),
        Binding("h", "heat", "heat map"),
        Binding("a", "apps", "apps"),
        Binding("c", "heat_column", "heat map: colour by the next column", show=False),
        Binding("e", "problems", "show failed queries in full", show=False),
        Binding("p", "pause", "pause the table (data keeps coming)", show=False),
    ]
    DEFAULT_CSS = """
    FleetScreen #fleet-filter-bar { height: auto; display: none; background: $panel; }
    FleetScreen #fleet-filter-bar.-visible { display: block; }
    FleetScreen #fleet-filter { height: 1; border: none; padding: 0 1; }
    FleetScreen #fleet-filter-hint { height: 1; padding: 0 1; color: $text-muted; }
    FleetScreen #fleet-filter-bar.-error #fleet-filter-hint { color: $error; text-style: bold; }
    FleetScreen #fleet-heat { display: none; }
    FleetScreen.-heat #fleet-heat { display: block; }
    FleetScreen.-heat #fleet-table { display: none; }
    FleetScreen #fleet-apps { display: none; height: 1fr; }
    FleetScreen.-apps #fleet-apps { display: block; }
    FleetScreen.-apps #fleet-table, FleetScreen.-apps #fleet-heat { display: none; }
    """

    def __init__(self, *, recorder: FleetRecorder | None = None, labels: tuple[str, ...] = (),
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.frame: FleetFrame | None = None
        self.recorder = recorder
        self.clock = clock
        self.sort = "host"
        self.reverse = False
        self.filter_text = ""
        self.pattern: re.Pattern[str] | None = None
        self.group: str | None = None
        self.groups: tuple[str | None, ...] = (None, *GROUPS, *(f"label:{n}" for n in labels))
        self.trouble_first = False
        self.heat: str | None = None
        self.heat_column = "util"
        self.paused = False
        self.show_apps = False
        """The apps view (``a``): one row per runtime tag across hosts instead of the hosts."""
        self.cursor_key: str | None = None
        self.drilled: str | None = None
        """The host whose dashboard is open, if any."""
        self._stops: list[threading.Event] = []
        self._feeds: dict[str, tuple[Feed, threading.Event]] = {}
        """Drill-down feeds by host (their worker threads stop when the event is set)."""
        self._drill_sessions: dict[str, Session] = {}
        """The sessions those feeds fill."""
        self._ticker: Timer | None = None
        self._apps: list[AppRow] = []

    @property
    def host(self) -> FleetHost:
        return cast(FleetHost, self.app)

    def compose(self) -> ComposeResult:
        yield FleetHeader(id="fleet-header")
        yield from self.compose_top()
        yield FleetTable(id="fleet-table")
        yield HeatMap(id="fleet-heat")
        yield DataTable(id="fleet-apps", cursor_type="row", zebra_stripes=False)
        # In the layout above the footer, not docked: a prompt docked to the bottom was drawn under the footer
        # (invisible while it held the keyboard), as the replay's go-to prompt once was.
        with Vertical(id="fleet-filter-bar"):
            yield TextBox(placeholder="regex over names and labels, e.g. trn2|cluster=blue", id="fleet-filter")
            yield Static(FILTER_HINT, id="fleet-filter-hint", markup=False)
        yield from self.compose_bottom()
        yield Footer()

    def compose_top(self) -> ComposeResult:
        """Extra widgets under the header (the replay scrubber)."""
        yield from ()

    def compose_bottom(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        apps = self.query_one("#fleet-apps", DataTable)
        for title, width in APP_COLUMNS:
            apps.add_column(title, width=width, key=title)
        if self.show_apps:
            self.show_apps = False
            self.action_apps()
        self.query_one(FleetTable).focus()
        self._ticker = self.set_interval(1.0, self._tick)
        self.start()
        self.redraw()

    def on_unmount(self) -> None:
        self.stop()

    # --- what subclasses provide ---
    def start(self) -> None:
        """Begin getting frames."""

    def stop(self) -> None:
        """Stop every worker this screen started and the sources they read (the app is leaving)."""
        for ev in self._stops:
            ev.set()
        for key in list(self._feeds):
            self.leave_host(key)
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None

    def host_session(self, key: str) -> Session | None:
        """The session to show for ``key`` (None: there is none, and ``open_refused`` says why)."""
        return None

    def open_refused(self, key: str) -> str:
        return "this fleet has no per-host dashboard"

    def leave_host(self, key: str) -> None:
        """The host's dashboard closed: stop its drill-down feed, if it has its own."""
        got = self._feeds.pop(key, None)
        self._drill_sessions.pop(key, None)
        if got is not None:
            feed, stop = got
            stop.set()
            feed.close()

    def live_command(self, row: FleetRow) -> Source | None:
        """A live ssh stream of ``row``'s host (``l``), or None (``notify`` has said why)."""
        self.notify("no --ssh-template given: start with --ssh-template 'ssh {instance_id} neuron-monitor'",
                    severity="warning", timeout=6, markup=False)
        return None

    # --- feeding a host's session from its own source (drill-downs) ---
    def feed_host(self, key: str, source: Source) -> Session:
        """A new session for ``key``, fed by ``source`` in a worker (its events posted as ``HostEvent``)."""
        self.leave_host(key)
        session = self._drill_sessions[key] = Session(source.name)
        feed = Feed(source)
        stop = StopEvent()
        self._feeds[key] = (feed, stop)
        self._stops.append(stop)
        post = self.post_message
        self.run_worker(lambda: feed.run(lambda ev: post(HostEvent(key, ev)), stop), thread=True,
                        exit_on_error=False, group=f"host-{key}", description=f"reading {clean(key, 40)}")
        return session

    def apply_host_event(self, message: HostEvent) -> Session | None:
        """Apply a drill-down's event to its session; subclasses with sessions of their own override it."""
        session = self._drill_sessions.get(message.host)
        if session is None:
            return None
        update = session.apply(message.event)
        if self.host.session is session:
            self.host.react(update)
        return session

    def on_host_event(self, message: HostEvent) -> None:
        self.apply_host_event(message)

    # --- frames in ---
    def on_fleet_refreshed(self, message: FleetRefreshed) -> None:
        self.apply_frame(message.frame)

    def apply_frame(self, frame: FleetFrame, record: bool = True) -> None:
        if record and self.recorder is not None:
            try:
                self.recorder.write(frame)
            except OSError as exc:
                self.notify(f"recording stopped: {clean(exc.strerror or exc)}", severity="error", markup=False)
                self.recorder.close()
                self.recorder = None
        if self.paused:
            return
        problems_before = {(p.name, p.message) for p in self.frame.problems} if self.frame is not None else set()
        self.frame = frame
        new = [p for p in frame.problems if (p.name, p.message) not in problems_before]
        if new and frame.state != "unreachable":
            self.notify("; ".join(f"{p.name}: {p.message}" for p in new[:3]),
                        title="the server warned" if all(p.warning for p in new) else "query failed",
                        severity="warning", timeout=8, markup=False)
        self.redraw()

    def view_state(self) -> ViewState:
        return ViewState(self.sort, self.reverse, self.filter_text, self.group, self.trouble_first,
                         self.heat_column if self.heat else None, self.paused)

    def redraw(self) -> None:
        """Arrange the rows as asked and hand them to the table or map and the header."""
        rows = self.frame.rows if self.frame is not None else []
        lines = arrange(rows, sort=self.sort, reverse=self.reverse, pattern=self.pattern, group=self.group,
                        trouble_first=self.trouble_first)
        shown = [ln for ln in lines if isinstance(ln, FleetRow)]
        widget = self._active()
        widget.empty = (f"no host matches /{clean(self.filter_text, 40)}/ (/ changes the filter)" if rows and not shown
                        else "no hosts yet")
        widget.show(lines, self.sort, self.reverse, self.cursor_key)
        if widget.current is not None:
            self.cursor_key = widget.current.key
        if self.show_apps:
            self._show_apps()
        self._header(summarize(shown))

    # --- the apps view ---
    def want_apps(self, on: bool) -> None:
        """The apps view was opened or closed: a source that asks for apps only when shown is told here."""

    def action_apps(self) -> None:
        self.show_apps = not self.show_apps
        self.set_class(self.show_apps, "-apps")
        self.want_apps(self.show_apps)
        self.redraw()
        (self.query_one("#fleet-apps", DataTable) if self.show_apps else self._active()).focus()

    def _show_apps(self) -> None:
        table = self.query_one("#fleet-apps", DataTable)
        apps = (self.frame.apps if self.frame is not None else None)
        at = table.cursor_row
        keep = self._apps[at].tag if 0 <= at < len(self._apps) else None
        self._apps = list(apps or [])
        table.clear()
        for a in self._apps:  # tags come from the data: Text cells, never markup
            table.add_row(*(Text(c, justify="left" if i == 0 else "right") for i, c in enumerate(app_cells(a))))
        if not self._apps:
            table.add_row(Text("asking for the apps..." if apps is None else "no runtimes reported"),
                          *("",) * (len(APP_COLUMNS) - 1))
        tags = [a.tag for a in self._apps]
        if keep in tags:
            table.move_cursor(row=tags.index(keep))

    @on(DataTable.RowSelected, "#fleet-apps")
    def _app_chosen(self, event: DataTable.RowSelected) -> None:
        """Enter on an app: the hosts it runs on (the filter set to them; / changes it, Esc in it clears it)."""
        if not 0 <= event.cursor_row < len(self._apps):
            return
        app = self._apps[event.cursor_row]
        self.filter_text = host_filter(app)
        self.pattern = compile_filter(self.filter_text)
        self.action_apps()
        self.notify(f"hosts running {clean(app.tag, 60)}: {len(app.hosts)} (/ changes the filter)", timeout=5,
                    markup=False)

    def _header(self, summary=None) -> None:  # type: ignore[no-untyped-def]
        header = self.query_one(FleetHeader)
        header.show(self.frame, summary if summary is not None else header.summary, self.view_state(),
                    self.clock())

    def _tick(self) -> None:
        """Once a second: the header's "refreshed Ns ago"."""
        if self.is_current:
            self._header()

    def _active(self) -> FleetTable:
        return self.query_one(HeatMap) if self.heat else self.query_one(FleetTable)

    # --- drilling ---
    def on_fleet_table_moved(self, message: FleetTable.Moved) -> None:
        self.cursor_key = message.key
        table = message.table
        if table is not None and table.moved_to == message.key:
            table.moved_to = None  # heard: from now on the screen's key is the cursor's (the other view's too)

    def on_fleet_table_open(self, message: FleetTable.Open) -> None:
        self.open_host(message.key)

    def action_open_host(self, key: str) -> None:
        """Enter on a host (``FleetTable.action_open``)."""
        self.open_host(key)

    def on_fleet_table_sort_by(self, message: FleetTable.SortBy) -> None:
        if message.column == self.sort:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = message.column, False
        self.redraw()

    def open_host(self, key: str, session: Session | None = None, title: str = "") -> None:
        """Show ``key``'s dashboard (its session); Esc comes back here with the cursor where it was."""
        from neuron_top.tui.screens.fleet_host import FleetHostScreen

        session = session or self.host_session(key)
        if session is None:
            self.notify(self.open_refused(key), severity="warning", timeout=6, markup=False)
            return
        self.cursor_key = key
        self.drilled = key
        before = self.host.show_session(session)
        row = self._row(key)

        def back(_: object = None) -> None:
            self.host.show_session(before)
            self.drilled = None
            self.leave_host(key)
            self._active().focus()
            self.redraw()

        live = (lambda: self._go_live(key)) if row is not None else None
        self.host.open_screen(FleetHostScreen(title or clean(key, 60), live=live, on_close=back,
                                              layout=self.host.layout_state))

    def _row(self, key: str) -> FleetRow | None:
        if self.frame is None:
            return None
        return next((r for r in self.frame.rows if r.key == key), None)

    def _go_live(self, key: str) -> None:
        row = self._row(key)
        if row is None:
            return
        source = self.live_command(row)
        if source is None:
            return
        self.open_host(key, self.feed_host(key, source), title=f"{clean(key, 40)} (live over ssh)")

    def action_live(self) -> None:
        row = self._active().current
        if row is not None:
            self._go_live(row.key)

    # --- arranging ---
    def action_sort(self, step: int) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + step) % len(SORTS)]
        self.reverse = False
        self.redraw()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self.redraw()

    def action_trouble(self) -> None:
        """Troubled hosts first, and the cursor on the worst of them (the point of asking)."""
        self.trouble_first = not self.trouble_first
        if self.trouble_first:
            self.cursor_key = None
            self._active().cursor = 0
            self._active().moved_to = None  # this key, not a move before it, says where the cursor goes
        self.redraw()

    def action_group(self) -> None:
        self.group = self.groups[(self.groups.index(self.group) + 1) % len(self.groups)]
        self.redraw()

    def action_heat(self) -> None:
        self.heat = None if self.heat else self.heat_column
        self.set_class(self.heat is not None, "-heat")
        heat = self.query_one(HeatMap)
        heat.heat = self.heat_column
        self.redraw()
        self._active().focus()

    def action_heat_column(self) -> None:
        self.heat_column = HEAT_COLUMNS[(HEAT_COLUMNS.index(self.heat_column) + 1) % len(HEAT_COLUMNS)]
        self.query_one(HeatMap).heat = self.heat_column
        if not self.heat:
            self.heat = self.heat_column
            self.set_class(True, "-heat")
        self.redraw()
        self._active().focus()

    def action_pause(self) -> None:
        self.paused = not self.paused
        self._header()

    def action_problems(self) -> None:
        if self.frame is None or not self.frame.problems:
            self.notify("no errors in the last refresh", timeout=3)
            return
        text = "\n\n".join((f"{p.name}: {p.message}\nquery: {p.query}" if p.name else p.message)
                           for p in self.frame.problems)
        self.notify(text, title="errors", severity="warning", timeout=30, markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` in a text box (the filter's own regex) is a character (``typing``)."""
        return not (action == "filter" and typing(self.focused))

    def action_filter(self) -> None:
        self.query_one("#fleet-filter-bar").add_class("-visible")
        box = self.query_one("#fleet-filter", Input)
        box.value = self.filter_text
        focus_now(box)

    @on(Input.Changed, "#fleet-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        try:
            pattern = compile_filter(event.value)
        except re.error as exc:
            self._filter_hint(f"invalid regex: {exc} (the last good filter stays)")
            return
        self._filter_hint(None)
        self.filter_text, self.pattern = event.value, pattern
        self.redraw()

    def _filter_hint(self, error: str | None) -> None:
        self.query_one("#fleet-filter-bar").set_class(error is not None, "-error")
        self.query_one("#fleet-filter-hint", Static).update(FILTER_HINT if error is None else error)

    @on(Input.Submitted, "#fleet-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.query_one("#fleet-filter-bar").remove_class("-visible")
        self._active().focus()

    def key_escape(self) -> None:
        bar = self.query_one("#fleet-filter-bar")
        if bar.has_class("-visible"):
            self.query_one("#fleet-filter", Input).value = ""
            bar.remove_class("-visible")
            self._active().focus()
        elif self.show_apps:
            self.action_apps()  # back to the hosts

    def _run(self, body: Callable[[threading.Event], Any], name: str) -> threading.Event:
        """A thread worker running ``body(stop)``; ``stop`` is set when the screen goes."""
        stop = StopEvent()
        self._stops.append(stop)
        self.run_worker(lambda: body(stop), thread=True, exit_on_error=False, group=name, description=name)
        return stop


__all__ = ["FleetScreen"]

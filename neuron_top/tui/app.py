"""The Textual app: wiring only. Data comes from the collector as messages; screens draw ``View`` values. What
keeps it cheap on a real terminal is in its base class (ui/terminal.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from textual import events, work
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input

from neuron_top.feed import PodSource, RecordingError, SkippedInput, StatusChanged
from neuron_top.history import History
from neuron_top.layouts import PANELS, LayoutState
from neuron_top.recording.player import ReplayController
from neuron_top.recording.writer import RecordingWriter
from neuron_top.selection import Selection
from neuron_top.session import Session, SourceStatus, Update
from neuron_top.settings import Settings, SettingsStore
from neuron_top.snapshot import AppView, Snapshot
from neuron_top.sources.base import Source
from neuron_top.tui.age import AgeClock
from neuron_top.tui.collector import Collector, FeedSink
from neuron_top.tui.keys import focus_now, in_order, open_typing, typing
from neuron_top.tui.messages import InputSkipped, RecordingFailed, ReportArrived, SourceChanged, WallTime
from neuron_top.tui.render.terminal import TerminalApp
from neuron_top.tui.screens.dashboard import DashboardScreen
from neuron_top.tui.screens.problems import ProblemsScreen
from neuron_top.tui.themes import DEFAULT_THEME, load_themes
from neuron_top.tui.widgets.header import HeaderBar
from neuron_top.tui.widgets.tabs import AppTabs
from neuron_top.view import View

DASHBOARD_ACTIONS = frozenset({"flops", "physical", "expand_all", "filter", "tab", "select", "pick_app", "layout",
                               "panel", "sort_apps", "reverse_apps", "precise", "by_pod"})
"""App actions that change what the dashboard shows: only while it is on top (``check_action``)."""
TYPED_OPENERS = frozenset({"filter", "pick_app", "timeline"})
"""Priority bindings on printable keys (``/``, ``o``, ``T``): what they open takes the keys typed with them (in one
read: fast, pasted, over ssh) because they act before the next key is routed; in a text box they are characters."""
SKIP_HEADER_EVERY = 0.25
"""Seconds between two header updates for skipped input alone."""


class NeuronTopApp(TerminalApp):
    TITLE = "neuron-top"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),  # as in btop, htop, nvitop, neuron-top
        Binding("question_mark", "help", "help"),
        Binding("p", "pause", "pause"),
        Binding("f", "flops", "FLOPS"),
        Binding("v", "physical", "v3d cores", show=False),
        Binding("x", "expand_all", "expand/collapse the memory tree", show=False),
        Binding("l", "layout", "next layout"),
        *[Binding(p.key, f"panel('{p.id}')", f"show/hide {p.name}", show=False) for p in PANELS],
        Binding("slash", "filter", "filter", priority=True),  # the box focused before the keys typed after it
        Binding("a", "tab(-1)", "prev app", show=False),
        Binding("d", "tab(1)", "next app", show=False),
        Binding("t", "next_theme", "theme", show=False),
        Binding("T", "timeline", "timeline", priority=True),  # the keys typed after it go to the timeline
        Binding("E", "problems", "problems"),
        Binding("o", "pick_app", "pick app", priority=True),  # the picker's box focused before the keys after it
        Binding("full_stop", "precise", "two decimals in the core grid (56.81%)", show=False),
        Binding("s", "sort_apps", "sort apps by the next column", show=False),
        Binding("S", "reverse_apps", "reverse the apps' order", show=False),
        Binding("P", "pods", "pods holding NeuronCores", show=False),
        Binding("b", "by_pod", "cores by pod", show=False),
        Binding("ctrl+l", "redraw", "redraw the screen", show=False),
        *[Binding(str(n), f"select({n})", "select tab n (1: all apps)", show=False) for n in range(1, 10)],
    ]

    def __init__(self, source: Source | None, *, theme: str | None = None, tag: str | None = None,
                 recorder: object | None = None, history: int = 600, demo: bool = False,
                 replay: ReplayController | None = None, replay_name: str = "",
                 traces: list[str] | None = None, clock: Callable[[], float] = time.monotonic,
                 notes: list[str] | None = None, exporter: FeedSink | None = None,
                 source_filter: str | None = None, trace_at: str = "start", trace_metrics: str | None = None,
                 settings: SettingsStore | None = None, layout: str | None = None,
                 first_screen: Callable[[], Screen] | None = None, render: str | None = None,
                 pods: PodSource | None = None) -> None:
        super().__init__(render=render)
        self.clock = clock
        self._notes = notes or []
        """Injected so tests (and snapshots) see a fixed "updated Ns ago"."""
        self.source = source
        self.replay = replay
        self.replay_name = replay_name
        self.traces = traces or []
        self.trace_at = trace_at
        self.trace_metrics = trace_metrics
        """``trace --metrics REC``: a recording drawn beside the trace (a replay's own recording needs no flag)."""
        self.collector = (Collector(source, self.post_message, recorder, sink=exporter,  # type: ignore[arg-type]
                                    pods=pods) if source is not None else None)
        """``exporter`` (``--export``): the Prometheus exporter, fed every event on the collector's thread."""
        self._recorder = recorder if isinstance(recorder, RecordingWriter) and source is not None else None
        """The recording (``--record``), for the header's indicator (the feed drops it once a write fails)."""
        self.session = Session(getattr(source, "name", "") or replay_name,
                               "demo" if demo else "replay" if replay is not None else "starting",
                               history=history, clock=clock)
        """The one source this app shows: its history, latest snapshots and status."""
        if source_filter:
            self.session.set_status(source_filter=source_filter)
        self.local_pids = type(source).__name__ in ("MonitorSource", "HostCollector")
        """The reports' pids are processes on this machine (neuron-monitor or the built-in collector run here):
        the app screen then shows each runtime's process (``procinfo``)."""
        command = getattr(source, "command", None)
        if isinstance(command, str):
            self.session.set_status(command=command)
        self.tick = 0
        self.flops = False
        self.physical = False
        self.by_pod = False
        """``b``: the core grid coloured by pod."""
        self.paused = False
        self.precise = False
        """Two decimals in the core grid (``.``)."""
        self.apps_sort: tuple[str, bool] = ("pid", False)
        """The apps table's order: ``s`` moves to the next column, ``S`` reverses."""
        self._frozen: tuple[Snapshot | None, Snapshot | None, History] | None = None
        """While paused: (latest, prev, history) as they were when ``p`` was pressed (``current_view``)."""
        # The look goes through the message queue, where Textual handles what goes wrong.
        self._age = AgeClock(lambda: self.call_later(self._tick_clock))
        self.demo = demo
        self.selection = Selection(tag)
        self._skip_timer: Timer | None = None
        self._skip_pending = False
        self._themes = load_themes()
        self.settings = settings
        """The settings file (theme, layout, panels), or None: nothing read or written (tests)."""
        saved = settings.settings if settings is not None else Settings()
        self._wanted_theme = theme or saved.theme or DEFAULT_THEME
        self._theme_picked = False
        """The user changed the theme while the app ran (t, the palette): remember it. The theme it started with
        (``--theme``, for this run, as ``--layout``) is not written over the remembered one."""
        self._started_theme = ""
        self.layout_state = LayoutState.preset(layout) if layout is not None else saved.layout_state()
        """The dashboard's layout: ``--layout``, else the one remembered, else the overview."""
        self._save_problem = ""
        self._first_screen = first_screen
        """Makes the screen to start on instead of the dashboard (the fleet view)."""
        self._exit_loop: asyncio.AbstractEventLoop | None = None
        self._pending_exit: int | None = None

    # --- exit ---
    def request_exit(self, code: int) -> None:
        """Exit as after ``q``, with status ``code``; safe to call from a signal handler or another thread.

        Before the event loop runs (a signal during start-up), the exit happens as soon as the app is mounted."""
        loop = self._exit_loop
        if loop is None or loop.is_closed():
            self._pending_exit = code
            return
        loop.call_soon_threadsafe(self.exit, None, code)

    # --- start-up ---
    async def on_event(self, event: events.Event) -> None:
        """Keys: every binding taken in the order its key came (``keys.in_order``)."""
        if isinstance(event, events.Key) and await in_order(self, event):
            return
        await super().on_event(event)

    def on_mount(self) -> None:
        self._exit_loop = asyncio.get_running_loop()
        if self._pending_exit is not None:
            self.exit(None, self._pending_exit)
            return
        for note in [*self._notes, *(self.settings.problems if self.settings is not None else ())]:
            self.notify(note, title="config", severity="warning", timeout=10, markup=False)
        self._themes.install(self, self._wanted_theme)
        self._started_theme = self.theme
        self.theme_changed_signal.subscribe(self, lambda _theme: self._theme_changed())
        if self.replay is not None:
            from neuron_top.tui.screens.replay import ReplayScreen

            screen = ReplayScreen(self.replay, self.replay_name)
            screen.layout_state = self.layout_state
            self.push_screen(screen)
        elif self._first_screen is not None:
            self.push_screen(self._first_screen())
        else:
            self.push_screen(DashboardScreen(layout=self.layout_state))
        if self.traces:
            self.open_traces(self.traces, show=self.source is None and self.replay is None)
        self.settle_in()
        if self.collector is not None:
            self.collect()

    @work(thread=True, exclusive=True, exit_on_error=False, group="collector", description="reading reports")
    def collect(self) -> None:
        assert self.collector is not None
        self.collector.run()

    def on_unmount(self) -> None:
        if self.collector is not None:
            self.collector.close()

    # --- the session's state, read by screens ---
    @property
    def history(self) -> History:
        return self.session.history

    @property
    def latest(self) -> Snapshot | None:
        return self.session.latest

    @property
    def prev(self) -> Snapshot | None:
        return self.session.prev

    @property
    def source_line(self) -> SourceStatus:
        return self.session.status

    # --- data in: every message from the worker is a feed event applied to the session ---
    def on_report_arrived(self, message: ReportArrived) -> None:
        self.accept_snapshot(message.snapshot)

    def accept_snapshot(self, snap: Snapshot, publish: bool = True) -> None:
        """Every snapshot, live or replayed, comes through here: the session, ECC alerts, then the screen."""
        self.react(self.session.accept(snap), publish)

    def react(self, update: Update, publish: bool = True) -> None:
        """Show what applying an event to the session changed: an alert, a notice, the header, the panels."""
        devs = update.uncorrected
        if devs:
            where = ", ".join(f"ND{d}" for d in devs[:8]) + (f" and {len(devs) - 8} more" if len(devs) > 8 else "")
            self.notify(f"uncorrected ECC error on {where}", title="ECC", severity="error", timeout=30)
        if update.notice:
            self.notify(update.notice, title=update.title, markup=False, severity=update.severity,  # type: ignore[arg-type]
                        timeout=10 if update.status else 15)
        if update.snapshot:
            if self.replay is None:
                self._age.report_came()
            if publish and not self.paused:
                self.publish()
                return
        if update.status:
            self._update_header()

    def show_session(self, session: Session) -> Session:
        """Show ``session`` from now on (the fleet view drills into one host); returns the one shown before."""
        before, self.session = self.session, session
        self.publish()
        self._update_header()
        return before

    def set_position(self, text: str) -> None:
        """Replay: where we are, for the header."""
        self.session.set_status(position=text)
        self._update_header()

    def on_input_skipped(self, message: InputSkipped) -> None:
        """Counted at once; the header says the count at most every ``SKIP_HEADER_EVERY`` seconds: a flood of
        garbage brings a message per chunk read (dozens a second), and drawing the header for each cost more
        than reading the flood."""
        for item in message.items:
            self.session.apply(SkippedInput(item, message.total))
        if self._skip_timer is None:
            self._update_header()
            self._skip_timer = self.set_timer(SKIP_HEADER_EVERY, self._skip_header_due)
        else:
            self._skip_pending = True

    def _skip_header_due(self) -> None:
        self._skip_timer = None
        if self._skip_pending:
            self._skip_pending = False
            self._update_header()
            self._skip_timer = self.set_timer(SKIP_HEADER_EVERY, self._skip_header_due)

    def on_source_changed(self, message: SourceChanged) -> None:
        self.react(self.session.apply(StatusChanged(message.status)))

    def on_recording_failed(self, message: RecordingFailed) -> None:
        self.react(self.session.apply(RecordingError(message.reason)))

    def _tick_clock(self) -> None:
        """The header's "updated Ns ago", every second while no report comes (not while paused)."""
        if not self.paused and self.source_line.last_report is not None:
            self._update_header()
            self._age.again()

    # --- data out ---
    def visible_apps(self) -> tuple[AppView, ...]:
        return self.selection.visible(self.shown_latest)

    @property
    def shown_latest(self) -> Snapshot | None:
        """The report on screen: the latest, or while paused the one shown when ``p`` was pressed."""
        return self._frozen[0] if self.paused and self._frozen is not None else self.latest

    @property
    def pid(self) -> int | None:
        return self.selection.pid

    @property
    def tag_text(self) -> str:
        return self.selection.text

    def current_view(self) -> View | None:
        """What the screens draw: the latest report, or while paused the one shown when ``p`` was pressed (with
        the history as it was then), so a drill-down opened, a tab chosen or a screen closed while paused shows
        the paused data, not newer."""
        frozen = self._frozen if self.paused else None
        latest, prev, history = frozen if frozen is not None else (self.latest, self.prev, self.history)
        if latest is None:
            return None
        self.selection.settle(latest)
        return View(self.selection.narrow(latest), history, self.tick, self.pid, self.flops, self.physical,
                    history.first, prev, frozen=frozen is not None, sort=self.apps_sort, precise=self.precise,
                    by_pod=self.by_pod)

    def publish(self) -> None:
        if not self.screen_stack:  # a report arriving during shutdown
            return
        self.tick += 1
        view = self.current_view()
        if view is None:
            return
        for screen in self.screen_stack:
            if hasattr(screen, "view"):
                screen.view = view
        snap = view.snapshot
        pods = {pid: ref.name for pid, ref in snap.pods.apps.items()}
        for t in self._on_screen(AppTabs):
            t.pods = pods
            t.apps = self.visible_apps()
            t.selected = self.pid
            t.filter_text = self.tag_text
            t.layout_name = self.layout_state.name + ("*" if self.layout_state.custom else "")
        self._update_header()

    def _update_header(self) -> None:
        if self._recorder is not None:  # the recording indicator: file, reports written, what went wrong
            text = self._recorder.state().text
            if text != self.session.status.recording:
                self.session.set_status(recording=text)
        now = self.clock()
        shown = self.session.shown(now)
        for h in self._on_screen(HeaderBar):
            h.show(self.latest, shown, now)
        screen = self.screen  # the problems list is only on its own screen: no DOM query per report for it
        if isinstance(screen, ProblemsScreen) and screen.body.is_attached:
            screen.body.show(self.session, now)

    def refresh_status(self) -> None:
        self._update_header()

    # --- actions ---
    def action_pause(self) -> None:
        self.paused = not self.paused
        self.session.set_status(paused=self.paused)
        # Paused: the data as it is now, kept apart from the session, which goes on taking reports.
        self._frozen = (self.latest, self.prev, self.history.frozen_copy()) if self.paused else None
        self.publish()  # the panels' titles say "PAUSED", or the data catches up
        if not self.paused:
            self._age.again()  # the age counts on (a source that ended while paused sends nothing more)
        self._update_header()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The dashboard's view keys act only while a dashboard (live or replay) is on top: in a drill-down screen
        ``f``, ``v``, ``d`` or ``5`` changed the dashboard behind it, unseen. A screen that means something by
        one of these keys binds it itself (its footer shows it); elsewhere the key does nothing. ``/`` in a text
        box is a character (``typing``), and so are ``o`` and ``T``."""
        if action in TYPED_OPENERS and typing(self.focused):
            return False
        return action not in DASHBOARD_ACTIONS or isinstance(self.screen, DashboardScreen)

    def action_flops(self) -> None:
        self.toggle_flops()

    def toggle_flops(self) -> None:
        self.flops = not self.flops
        self.publish()

    def action_by_pod(self) -> None:
        """``b``: colour the core grid by pod (with a legend), or back to load colours."""
        self.by_pod = not self.by_pod
        self.publish()

    def action_pods(self) -> None:
        """``P``: the pods holding NeuronCores, their utilization and idle cores."""
        from neuron_top.tui.screens.detail import PodsScreen

        if not isinstance(self.screen, PodsScreen):
            self.open_screen(PodsScreen())

    def action_physical(self) -> None:
        from neuron_top.output.cells import physical_columns

        snap = self.shown_latest
        if not self.physical and snap is not None and not physical_columns(snap):
            self.notify("no physical cores to show: this report has no v3d data (trn2 with LNC=2 has)", timeout=4,
                        markup=False)
            return
        self.physical = not self.physical
        self.publish()

    def action_expand_all(self) -> None:
        screen = self.screen
        if isinstance(screen, DashboardScreen):
            screen.expand_tree()

    def action_layout(self) -> None:
        """``l``: the next preset, with its own panels."""
        self._set_layout(self.layout_state.next())
        self.notify(f"layout: {self.layout_state.name}", timeout=2, markup=False)

    def action_panel(self, panel: str) -> None:
        """A panel key: hide the panel, or show it where the layout puts it."""
        screen = self.screen
        if not isinstance(screen, DashboardScreen):
            return
        state = screen.toggle_panel(panel)
        self._set_layout(state)
        info = next(p for p in PANELS if p.id == panel)
        self.notify(f"{info.name} {'shown' if state.shown(panel) else 'hidden'} ({info.key} toggles)", timeout=2,
                    markup=False)

    def _set_layout(self, state: LayoutState) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, DashboardScreen):
                screen.apply_layout(state)
        self.layout_changed(state)

    def layout_changed(self, state: LayoutState) -> None:
        self.layout_state = state
        self._save()
        for t in self._on_screen(AppTabs):
            t.layout_name = state.name + ("*" if state.custom else "")

    def _theme_changed(self) -> None:
        self._theme_picked = self._theme_picked or self.theme != self._started_theme
        if self._theme_picked:
            self._save()

    def _save(self) -> None:
        """Remember the theme and the layout (``settings``); say once why they could not be saved."""
        if self.settings is None:
            return
        saved = self.settings.settings
        problem = self.settings.update(replace(saved.with_layout(self.layout_state),
                                               theme=self.theme if self._theme_picked else saved.theme))
        if problem and problem != self._save_problem:
            self.notify(problem, title="config", severity="warning", timeout=8, markup=False)
        self._save_problem = problem or ""

    def action_precise(self) -> None:
        self.precise = not self.precise
        self.publish()

    def action_sort_apps(self) -> None:
        from neuron_top.output.cells import APP_SORTS

        key = APP_SORTS[(APP_SORTS.index(self.apps_sort[0]) + 1) % len(APP_SORTS)]
        self.apps_sort = (key, key not in ("pid", "app"))  # numbers: largest first; names: A-Z
        self.notify(f"apps sorted by {key}", timeout=2, markup=False)
        self.publish()

    def action_reverse_apps(self) -> None:
        self.apps_sort = (self.apps_sort[0], not self.apps_sort[1])
        self.publish()

    def action_select(self, n: int) -> None:
        self.selection.select(n, self.shown_latest)
        self.publish()

    def action_tab(self, step: int) -> None:
        self.selection.step(step, self.shown_latest)
        self.publish()

    def select_pid(self, pid: int | None) -> None:
        self.selection.pid = pid
        self.publish()

    def on_app_tabs_selected(self, message: AppTabs.Selected) -> None:
        self.select_pid(message.pid)
        if message.open_detail and message.pid is not None:
            self.open_app(message.pid)

    def action_filter(self) -> None:
        box = self.screen.query(Input).filter("#filter")
        for inp in box:
            inp.add_class("-visible")
            inp.value = self.tag_text
            focus_now(inp)

    def set_filter(self, text: str) -> str | None:
        error = self.selection.set_filter(text)
        self.publish()
        return error

    def search_themes(self) -> None:
        """The palette's "Theme" command: neuron-top's themes first, apart from Textual's stock ones."""
        from textual.command import CommandPalette

        self.push_screen(CommandPalette(providers=[self._themes.commands()], placeholder="Search for themes…"))

    def action_next_theme(self) -> None:
        self.theme = self._themes.after(self)
        self.notify(f"theme: {self.theme}", timeout=2, markup=False)  # the name comes from a theme file

    async def action_pick_app(self, open_chosen: bool = False) -> None:
        """Any app by name, however many there are (the tab bar shows a few of 300); ``open_chosen``: its screen
        opens too (Enter on the "all" tab). The keys typed with ``o`` go into its filter (``open_typing``)."""
        from neuron_top.tui.screens.picker import ALL, AppPicker

        def chosen(result: int | str | None) -> None:
            if result is not None:
                self.select_pid(None if result == ALL else int(result))
                if open_chosen and result != ALL:
                    self.open_app(int(result))

        await open_typing(self, AppPicker(self.visible_apps(), self.pid), "#picker-filter", chosen)

    def action_problems(self) -> None:
        """What went wrong, in full: ECC, the source, metric-group errors, skipped input."""
        from neuron_top.tui.screens.problems import ProblemsScreen

        if not isinstance(self.screen, ProblemsScreen):
            self.open_screen(ProblemsScreen())

    def action_help(self) -> None:
        from neuron_top.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def open_traces(self, paths: list[str], show: bool) -> None:
        """Load system traces (in a worker) into the timeline pane, all of them on one time axis; ``show``
        switches to it. In replay, the recording's metrics go beside them and the playheads follow each other."""
        from neuron_top.tui.screens.timeline import TimelineScreen

        metrics = self.trace_metrics if self.replay is None else self.replay.index
        timeline = TimelineScreen(paths, at=self.trace_at, metrics=metrics)
        self.install_screen(timeline, name="timeline")
        c = self.replay
        if c is not None and len(c.index) and c.index.wallclock:  # one playhead: it opens at the replay's position
            timeline.follow_wall_time(c.index.timestamp(min(c.position, len(c.index) - 1)))
        if show:
            self.push_screen("timeline")

    def on_wall_time(self, message: WallTime) -> None:
        """The replay and the timeline follow each other's moment (each screen offers ``follow_wall_time``)."""
        screens = list(self.screen_stack)
        if self.is_screen_installed("timeline"):
            screens.append(self.get_screen("timeline"))
        for screen in dict.fromkeys(screens):
            if screen is not message.origin and hasattr(screen, "follow_wall_time"):
                screen.follow_wall_time(message.unix)

    def action_timeline(self) -> None:
        if not self.is_screen_installed("timeline"):
            self.notify("no trace loaded: start with --trace FILE or neuron-top trace FILE", timeout=4)
            return
        if self.screen is self.get_screen("timeline"):
            if self.source is None and self.replay is None and self.session.latest is None:
                # `neuron-top trace FILE`: behind the timeline is a dashboard that no report will ever fill
                self.notify("the trace alone: no metrics here (neuron-top --trace FILE, or replay REC --trace FILE, "
                            "has the dashboard too)", timeout=4)
                return
            self.pop_screen()
        else:
            self.push_screen("timeline")

    def open_app(self, pid: int) -> None:
        from neuron_top.tui.screens.app_detail import AppScreen

        self.open_screen(AppScreen(pid))

    def action_open_app(self, pid: int) -> None:
        """Enter on an app's tab (``AppTabs.action_open``)."""
        self.open_app(pid)

    def pop_screen(self) -> AwaitComplete:
        """Back to the screen below, whose header then says the status as it is now (it was not drawn while
        covered: an ECC mark acknowledged above, a source that failed meanwhile)."""
        done = super().pop_screen()
        self.call_after_refresh(self._update_header)
        return done

    def open_screen(self, screen: Screen[Any]) -> None:
        """Push a drill-down screen and give it the current view at once (it then follows updates)."""
        self.push_screen(screen)
        screen.view = self.current_view()  # type: ignore[attr-defined]
        self.call_after_refresh(self._update_header)  # its header exists once it is mounted

"""The help screen: every key, collected from the bindings themselves so it cannot drift from them.

The section of the screen it was opened from comes first (the timeline's keys when opened in the timeline).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from neuron_top.tui.keys import binding_keys

EXTRA = [
    ("Keys everywhere", [("tab / shift+tab", "move between panels"), ("^p", "command palette (Theme: neuron-top's themes first, then Textual's; keys)"),
                         ("esc", "back / close"), ("mouse", "click a core, device, tab, tree row or breadcrumb step")]),
    ("Replay scrubber: its marks (symbols drawn on the bar, not keys)", [
        ("E", "uncorrected ECC (most severe first: a cell shows its worst marker)"),
        ("x", "execution errors start"), ("v", "a host went down or stale (fleet recordings)"),
        ("- / +", "app stopped / started"),
        ("z", "utilization collapsed to 0%"), ("!", "a metric group starts failing"),
        ("┊", "a gap without data (held 1.5 s at most when played), or the recorded clock going back"),
        ("e", "corrected ECC (e hides them)"),
        (": (a key)", "go to 123 · 03:00 (the next one) · 2026-01-01 03:00:00 · +90s / -2m · 50%: the last report at or "
              "before the time; past an end: that end, said"),
        ("since start", "ECC counts, ECC! and the executions panel's since start row ('so far' when narrow) "
                        "are the whole recording's up to the position, after any move; under a filter (/) the "
                        "row counts the apps it selects"),
    ]),
]

LEGEND = [
    ("-", "not reported: the report has no value here (not the same as 0)"),
    ("0%, 0.0/s", "reported, and zero"),
    ("·····", "a bar or history with no data at that point"),
    ("[   ·]", "core grid: a core only apps not shown use (filtered out by /, or other than the selected app)"),
    ("MEM 58.7/96G", "core grid: the device's memory used (by the shown apps) of its size; - not reported"),
    ("[bad!]", "an absurd value in the report (utilization below 0 or far above 100): not averaged"),
    ("err", "reported as failed: the runtime or its metric group sent an error (E says which and why)"),
    ("idle", "latency: the app ran nothing in the period"),
    ("1.2ms*", "device latency (time on the device only), shown where the report has no total latency"),
    ("err/s", "errors by type (the runtime's error summary) per second; one execution can raise several"),
    ("bad/s", "executions that did not complete cleanly (completed with errors, timed out, bad input, not "
              "queued) per second"),
    ("done/s, werr/s, nerr/s", "rates: executions completed, completed with errors, completed with numerical "
                               "errors, per second (the report's count / its period)"),
    ("timeout, bad in, noqueue", "counts in the last report: executions that timed out, had bad input, could "
                                 "not be queued"),
    ("errors (panel title)", "execution errors counted in the last report"),
    ("ECC c/u", "corrected / uncorrected ECC events: since start, and in the last report"),
    ("TF, GB", "teraFLOPS (10^12 per second); bytes in powers of 1024"),
    ("LIVE, DEMO, REPLAY", "reports are arriving (or replayed)"),
    ("STALE", "no report for 3 of the reports' own periods: the data on screen is old"),
    ("NO DATA", "input arrives but none of it is a valid report (see E)"),
    ("ENDED, FAILED exit N", "the source stopped; its exit status (E lists its stderr)"),
    ("ECC! NDn (E)", "an uncorrected ECC error not yet acknowledged (E, then a)"),
    ("● REC FILE N", "recording to FILE (--record), N reports written; REC PAUSED on a full disk (retried; "
                     "the reports lost are counted), REC STOPPED and why when a write failed otherwise"),
    ("[n], ‹12, 40›", "tab keys 1-9; tabs scrolled off the bar (a/d or o reach them)"),
    ("pods: kubelet|cgroup|…", "how each core's Kubernetes pod was found (the kubelet's PodResources API, the "
                               "runtime's cgroup, neuron-monitor's neuron_k8s_info), or why not"),
    ("tag · pod", "a tab's app and the pod it runs in; / matches pod and namespace names too"),
    ("idle (pods)", "cores allocated to a pod that no runtime uses, or that ran at most 1%"),
]
"""What the symbols and units on screen mean: the help's last section."""

KEYS_MAX = 24
"""The help's key column at most: a longer key (a legend's symbols) wraps within it."""

FLEET_EXTRA = [("click a title", "sort by that column (again: reverse)"), ("double click a host", "open it")]
FLEET_APPS = [("a / --apps", "one row per runtime tag across hosts: hosts, cores, util, exec/s, bad/s, p99"),
              ("⏎", "the hosts it runs on (the filter is set to them; / changes it)"), ("esc / a", "back to the hosts")]
FLEET_REPLAY = [("the replay keys", "as in Replay; ⏎ says a recording has each host's row, not its reports"),
                ("space / p", "play/pause (the live fleet's p pauses the table)")]


def binding_rows(bindings: Sequence[Binding | tuple[str, ...]]) -> list[tuple[str, str]]:
    """(keys, description) for each binding that has a description, keys named as the footer names them."""
    rows: list[tuple[str, str]] = []
    for item in bindings:
        b = item if isinstance(item, Binding) else Binding(item[0], item[1], item[2] if len(item) > 2 else "")
        if not b.description:
            continue
        keys = binding_keys(b)
        if rows and rows[-1][1] == b.description:  # 1 ... 9 with one meaning: one row, "1-9"
            first = rows[-1][0].split("-")[0]
            rows[-1] = (f"{first}-{keys}" if f"{first}{keys}".isdigit() else f"{rows[-1][0]} / {keys}",
                        b.description)
            continue
        rows.append((keys, b.description))
    return rows


def help_sections(
    app_bindings: Sequence[Binding | tuple[str, ...]], first: object = None
) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every section of the help; ``app_bindings`` are the running app's own (passed in: this module is imported
    by the app). ``first``: the screen the help was opened from; its section leads."""
    from neuron_top.tui.screens.app_detail import AppScreen
    from neuron_top.tui.screens.detail import DetailScreen, PodsScreen
    from neuron_top.tui.screens.fleet import FleetScreen
    from neuron_top.tui.screens.fleet_host import FleetHostScreen
    from neuron_top.tui.screens.fleet_pods import PodFleetScreen
    from neuron_top.tui.screens.fleet_replay import FleetReplayScreen
    from neuron_top.tui.screens.fleet_sources import PromFleetScreen
    from neuron_top.tui.screens.picker import AppPicker
    from neuron_top.tui.screens.problems import ProblemsScreen
    from neuron_top.tui.screens.replay import ReplayScreen
    from neuron_top.tui.screens.timeline import TimelineScreen
    from neuron_top.tui.widgets.app_cores import AppCoresPanel
    from neuron_top.tui.widgets.apps import AppsPanel
    from neuron_top.tui.widgets.cores import CoreGrid
    from neuron_top.tui.widgets.device_detail import DeviceDetail
    from neuron_top.tui.widgets.fleet_table import FleetTable
    from neuron_top.tui.widgets.heatmap import HeatMap
    from neuron_top.tui.widgets.memory import MemoryTree
    from neuron_top.tui.widgets.pods import PodsPanel
    from neuron_top.tui.widgets.tabs import AppTabs

    sections: list[tuple[type | None, str, list[tuple[str, str]]]] = [
        (None, "Dashboard", binding_rows(app_bindings)),
        (None, "App tabs", binding_rows(AppTabs.BINDINGS)),
        (None, "NeuronCore grid", binding_rows(CoreGrid.BINDINGS)),
        (None, "Apps panel", binding_rows(AppsPanel.BINDINGS)),
        (None, "Memory tree", binding_rows(MemoryTree.BINDINGS)),
        (AppPicker, "App picker (o)", [*binding_rows(AppPicker.BINDINGS), ("type", "filter by name, tag or pid"),
                                       ("⏎", "select")]),
        (AppScreen, "App screen (⏎ on a tab)",
         binding_rows(AppScreen.BINDINGS) + binding_rows(AppCoresPanel.BINDINGS)),
        (DetailScreen, "Core / device screens",
         binding_rows(DetailScreen.BINDINGS) + binding_rows(DeviceDetail.BINDINGS)),
        (PodsScreen, "Pods (P)", binding_rows(PodsScreen.BINDINGS) + binding_rows(PodsPanel.BINDINGS)),
        (ProblemsScreen, "Problems (E)", binding_rows(ProblemsScreen.BINDINGS)),
        (ReplayScreen, "Replay (neuron-top replay FILE)", binding_rows(ReplayScreen.BINDINGS)),
        (TimelineScreen, "Timeline (T, or neuron-top trace FILE)", binding_rows(TimelineScreen.BINDINGS)),
        (FleetScreen, "Fleet (neuron-top fleet)",
         binding_rows([*FleetTable.BINDINGS, *FleetScreen.BINDINGS, *PromFleetScreen.BINDINGS]) + FLEET_EXTRA),
        (None, "Fleet heat map (h)", binding_rows(HeatMap.BINDINGS)),
        (None, "Fleet apps (a)", FLEET_APPS),
        (FleetHostScreen, "Fleet host (⏎ on a host)", binding_rows(FleetHostScreen.BINDINGS)),
        (PodFleetScreen, "Fleet by pod (fleet --by pod)",
         [*binding_rows(PodFleetScreen.BINDINGS), ("↑ ↓", "move between pods")]),
        (FleetReplayScreen, "Fleet replay (neuron-top replay FLEET.jsonl)", FLEET_REPLAY),
    ]
    lead = [k for k, (cls, _, _) in enumerate(sections) if cls is not None and isinstance(first, cls)]
    if lead:
        sections.insert(0, sections.pop(lead[-1]))  # the most specific class (replay is a dashboard too)
    return [(title, rows) for _, title, rows in sections] + [*EXTRA, ("Symbols and units", LEGEND)]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: 90%; border: round $primary;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]
    """q and ? close it too."""

    def compose(self) -> ComposeResult:
        stack = self.app.screen_stack
        below = stack[-2] if len(stack) > 1 and stack[-1] is self else stack[-1] if stack else None
        self.sections = help_sections(list(type(self.app).BINDINGS), below)
        # The key column is as wide as the longest key (at most KEYS_MAX), the same in every section; the section
        # titles stand on lines of their own (in the key column, "Fleet replay (neuron-top replay FLEET.jsonl)"
        # made it 46 wide).
        keys_w = min(max((len(k) for _, rows in self.sections for k, _ in rows), default=4), KEYS_MAX)
        with VerticalScroll():
            yield Static(Text("neuron-top keys  (Esc closes)", style="bold"))
            for i, (title, rows) in enumerate(self.sections):
                table = Table.grid(padding=(0, 2))
                table.add_column(style="bold", width=keys_w)
                table.add_column()
                for keys, desc in rows:
                    table.add_row(Text(keys), Text(desc))
                yield Static(Text(f"\n{title}" if i else title, style="bold underline"))
                yield Static(table)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.app.pop_screen()

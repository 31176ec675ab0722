"""What went wrong, in full, one key (``E``) from any screen: the header can only say that something did.

Listed: uncorrected ECC errors since the mark was last acknowledged (``a`` acknowledges: the header's mark goes),
the source's state with its exit status and the last lines of its stderr, every metric-group error of the latest
report (neuron-monitor's ``error`` strings, and what the decoder had to drop), and skipped input by reason with
a sample. Everything from the data is drawn as plain text.
"""

from __future__ import annotations

from typing import cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from neuron_top import fmt
from neuron_top.session import Session
from neuron_top.textsafe import clean
from neuron_top.tui.screens.detail import ROOT, DrillScreen
from neuron_top.tui.session_host import SessionHost
from neuron_top.view import View

STDERR_SHOWN = 12
"""Last lines of a source's stderr listed."""


def problems_text(session: Session, now: float) -> Text:
    """The screen's body for ``session`` at ``now`` (headless: tests read it)."""
    st = session.shown(now)
    out = Text()

    def head(title: str) -> None:
        if out:
            out.append("\n")
        out.append(title + "\n", style="bold underline")

    def row(text: str, style: str = "") -> None:
        out.append("  " + text + "\n", style=style)

    head("Uncorrected ECC errors")
    if st.uncorrected:
        totals = session.history.ecc_totals
        for d in st.uncorrected:
            t = totals.get(d)
            counts = f"DRAM {t.mem_uncorrected:,}, SRAM {t.sram_uncorrected:,} since start" if t is not None else ""
            row(f"ND{d}: uncorrected ECC error{'; ' + counts if counts else ''}", "bold red")
        row("memory on these devices returned wrong data; check `neuron-ls` and the instance's health "
            "(press a to acknowledge: the header's ECC! mark goes until the next one)")
    else:
        row("none since the last acknowledgement")

    head("Source")
    row(f"{clean(st.name, 120) or '-'}: {st.state.upper()}" + (f" ({st.exit_text})" if st.exit_text else ""))
    if st.command:
        row(f"command: {clean(st.command, 4000)}")
    if st.message:
        row(clean(st.message, 300))
    if st.last_end and st.last_end != st.message and st.last_end_at is not None:
        row(f"last ended {fmt.duration(max(0.0, now - st.last_end_at))} ago:")
        row("  " + clean(st.last_end, 300))  # a line of its own: at 120 columns it fits unwrapped
    if session.replaying:  # where it is: a count of the reports played said "9 received" at report 300/300
        row(st.position or "no report yet")
    else:
        row(f"{fmt.plural(st.reports, 'report')} received"
            + (f", one expected every {fmt.period(st.expected)}" if st.expected and st.state in ("live", "stale")
               else "")
            + (f"; started again {fmt.plural(st.restarts, 'time')}" if st.restarts else ""))
    detail = [ln for ln in st.detail.splitlines() if ln.strip()]
    if detail:
        row(f"last {fmt.plural(min(len(detail), STDERR_SHOWN), 'line')} of its stderr:")
        for ln in detail[-STDERR_SHOWN:]:
            row("  " + clean(ln, 300), "dim")

    groups = session.latest.group_statuses if session.latest is not None else ()
    head(f"Metric-group errors in the latest report ({len(groups)})")
    if not groups:
        row("none" if session.latest is not None else "no report yet")
    for g in groups:
        row(f"{clean(g.where, 80)}: {clean(g.error, 300)}")

    head(f"Skipped input ({fmt.plural(st.skipped, 'item')})")
    if not session.skip_reasons:
        row("none")
    for reason, (count, sample) in sorted(session.skip_reasons.items(), key=lambda kv: -kv[1][0]):
        row(f"{clean(reason, 120)}: {count:,}" + (f"  e.g. {clean(sample, 100)!r}" if sample else ""))
    return out


class ProblemsBody(Static):
    """The list; the app hands it the session when the header changes (``show``)."""

    def show(self, session: Session, now: float) -> None:
        self.update(problems_text(session, now))


class ProblemsScreen(DrillScreen):
    BINDINGS = [
        Binding("escape,E", "back", "back"),
        Binding("a", "acknowledge", "acknowledge ECC"),
    ]

    def __init__(self, trail: tuple[str, ...] = (ROOT,)) -> None:
        super().__init__(trail, "problems")
        self.body = ProblemsBody()

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="drill-body"):
            yield self.body

    def on_mount(self) -> None:
        self.refresh_body()

    @property
    def view(self) -> View | None:
        return None

    @view.setter
    def view(self, view: View | None) -> None:
        """A new report: the group errors may have changed."""
        if self.is_mounted:
            self.refresh_body()

    def refresh_body(self) -> None:
        host = cast(SessionHost, self.app)
        self.body.show(host.session, host.session.clock())

    def action_acknowledge(self) -> None:
        host = cast(SessionHost, self.app)
        devices = host.session.acknowledge()
        self.app.notify("ECC mark acknowledged" if devices else "no ECC mark to acknowledge", timeout=3)
        host.refresh_status()
        self.refresh_body()

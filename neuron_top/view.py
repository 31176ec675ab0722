"""What the dashboard widgets draw: one immutable value, replaced on every update (no UI imports).

Widgets receive a ``View`` through a reactive and never ask where the data came from: live, replay and demo
produce the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from neuron_top.history import ExecTotals, History
from neuron_top.snapshot import AppView, Snapshot

__all__ = ["View"]


@dataclass(frozen=True, slots=True)
class View:
    snapshot: Snapshot
    history: History
    """Shared, append-only from the UI thread; ``tick`` tells widgets it moved."""
    tick: int
    pid: int | None = None
    """The selected app (None: all apps)."""
    flops: bool = False
    """Show FLOPS instead of utilization."""
    physical: bool = False
    """Show trn2 v3d physical cores instead of logical ones."""
    first: Snapshot | None = None
    """The first snapshot of the session (ECC since start)."""
    prev: Snapshot | None = None
    """The previous snapshot (ECC since the previous report)."""
    frozen: bool = False
    """Paused (``p``): the data as it was when paused; the panels' titles say so."""
    precise: bool = False
    """Two decimals in the core grid's utilization cells (``.``), as AWS neuron-top shows them."""
    sort: tuple[str, bool] = ("pid", False)
    """The apps table's order (``s``/``S``): a key of ``output.cells.APP_SORTS`` and whether descending."""
    by_pod: bool = False
    """Colour the core grid by the pod holding each core (``b``), with a legend."""

    @property
    def app(self) -> AppView:
        return self.snapshot.app(self.pid)

    @property
    def since_start(self) -> ExecTotals | None:
        """Executions since the start of the recording (replay; None live) of the apps shown: those the tag
        filter selects, in every report so far, when the snapshot is filtered (``ExecTotals.filter`` says whose
        they are)."""
        t = self.history.exec_totals
        return None if t is None else t.of(self.snapshot.filter)

    def with_(self, **changes: object) -> View:
        return replace(self, **changes)  # type: ignore[arg-type]

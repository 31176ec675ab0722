"""System traces: loaders, the columnar event store, per-column summaries, filters and headless checks.

Headless (no textual/rich). The public API the CLI and the app use:

* ``load_trace(path) -> TraceStore`` (raises ``TraceError`` with a one-line message),
* ``run_check(paths, out) -> int`` and ``run_summary(paths, out) -> int`` for ``neuron-top trace FILE --check``
  / ``--summary``,
* ``TimelineModel`` (grouping, filters, navigation, search) and ``Filters`` for the timeline screen.
"""

from neuron_top.trace.check import run_check, run_summary
from neuron_top.trace.filters import FilterError, Filters
from neuron_top.trace.loaders import TraceError, load_trace, sniff_format
from neuron_top.trace.model import GROUPINGS, TimelineModel
from neuron_top.trace.store import TraceStore

__all__ = [
    "GROUPINGS",
    "FilterError",
    "Filters",
    "TimelineModel",
    "TraceError",
    "TraceStore",
    "load_trace",
    "run_check",
    "run_summary",
    "sniff_format",
]

"""neuron-top: a terminal dashboard for AWS Neuron accelerators, and the headless library under it.

The package root is the headless core: nothing imported from here pulls in textual or rich. The names below are
the public API (see ``examples/`` and ``docs/ARCHITECTURE.md``); each is imported when first used, so
``import neuron_top`` stays cheap for the command line.

Reading reports, from any source (the simulator here, handing reports out as fast as they are read; this runs
as a doctest in the suite)::

    >>> from neuron_top import DemoSource, Feed, Report
    >>> feed = Feed(DemoSource("trn2.48xlarge", seed=1, count=3, sleep=lambda seconds: None))
    >>> snaps = [event.snapshot for event in feed.events() if isinstance(event, Report)]
    >>> feed.close()
    >>> len(snaps), snaps[0].core_count, snaps[0].instance.instance_type
    (3, 64, 'trn2.48xlarge')
    >>> util = snaps[-1].all.core_stats.util  # NeuronCore index -> utilization % (None: not reported)
    >>> all(u is None or 0.0 <= u <= 100.0 for u in util.values())
    True

Writing a source: a class with ``name`` and ``items(stop)`` that yields ``Status``, ``RawReport`` and ``Skipped``
(``State`` names the source's state; ``docs/ARCHITECTURE.md``, "How to add a source")::

    >>> import threading
    >>> from neuron_top import RawReport, State, Status
    >>> class OneReport:
    ...     name = "one report"
    ...     def items(self, stop):
    ...         yield Status(State.LIVE, "started")
    ...         yield RawReport(b'{"neuron_runtime_data": []}', 1767225600.0)
    ...         yield Status(State.ENDED, "done")
    ...     def close(self):
    ...         pass
    >>> [type(e).__name__ for e in Feed(OneReport()).events()]
    ['StatusChanged', 'Report', 'StatusChanged']

* Sources (``neuron_top.sources``): ``choose_live_source`` (what plain ``neuron-top`` reads), ``MonitorSource``,
  ``CommandSource``, ``StreamSource``, ``HostCollector``, ``DemoSource``, ``RecordingSource``; all implement
  ``Source``, yielding ``Status`` (a ``State`` and why), ``RawReport`` and ``Skipped``.
* The feed (``neuron_top.feed``): ``Feed`` turns a source into ``Report``, ``SkippedInput``, ``StatusChanged``
  and ``RecordingError`` events; a ``Session`` (``neuron_top.session``) holds one source's state.
* Snapshots (``neuron_top.snapshot``): ``Snapshot`` (one decoded report), ``AppView`` (one app, or all),
  ``snapshot_from`` (bytes to ``Snapshot``), ``History`` (bounded series for sparklines).
* Recordings (``neuron_top.recording``): ``RecordingWriter``, ``open_recording``, ``ReplayController`` (seek, pace,
  markers), ``Marker``.
* Traces (``neuron_top.trace``): ``load_trace``, ``TraceStore``, ``TraceError``.
* Output (``neuron_top.output``): ``text`` and ``as_json`` (what ``--once`` and ``--json`` print), ``SourceInfo``;
  ``Exporter`` (``neuron_top.export``): the Prometheus exposition, fed by a ``Feed``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # sources, and what a source yields
    "Source": "neuron_top.sources.base",
    "State": "neuron_top.sources.base",
    "Status": "neuron_top.sources.base",
    "RawReport": "neuron_top.sources.base",
    "Skipped": "neuron_top.sources.base",
    "choose_live_source": "neuron_top.sources.live",
    "MonitorSource": "neuron_top.sources.monitor",
    "CommandSource": "neuron_top.sources.stream",
    "StreamSource": "neuron_top.sources.stream",
    "HostCollector": "neuron_top.sources.host",
    "DemoSource": "neuron_top.sources.demo",
    "RecordingSource": "neuron_top.recording.index",
    # the feed and the session
    "Feed": "neuron_top.feed",
    "FeedEvent": "neuron_top.feed",
    "Report": "neuron_top.feed",
    "SkippedInput": "neuron_top.feed",
    "StatusChanged": "neuron_top.feed",
    "RecordingError": "neuron_top.feed",
    "Session": "neuron_top.session",
    # snapshots
    "Snapshot": "neuron_top.snapshot",
    "AppView": "neuron_top.snapshot",
    "snapshot_from": "neuron_top.snapshot",
    "DecodeError": "neuron_top.decode",
    "History": "neuron_top.history",
    # recordings
    "RecordingWriter": "neuron_top.recording.writer",
    "open_recording": "neuron_top.recording.index",
    "ReplayController": "neuron_top.recording.player",
    "Marker": "neuron_top.recording.player",
    # traces
    "load_trace": "neuron_top.trace",
    "TraceStore": "neuron_top.trace",
    "TraceError": "neuron_top.trace",
    # output
    "text": "neuron_top.output.text",
    "as_json": "neuron_top.output.text",
    "SourceInfo": "neuron_top.output.text",
    "Exporter": "neuron_top.export",
    # Kubernetes pods
    "PodWatcher": "neuron_top.k8s.watcher",
    "PodMap": "neuron_top.k8s.model",
}

__all__ = [
    "AppView",
    "CommandSource",
    "DecodeError",
    "DemoSource",
    "Exporter",
    "Feed",
    "FeedEvent",
    "History",
    "HostCollector",
    "Marker",
    "MonitorSource",
    "PodMap",
    "PodWatcher",
    "RawReport",
    "RecordingError",
    "RecordingSource",
    "RecordingWriter",
    "ReplayController",
    "Report",
    "Session",
    "Skipped",
    "SkippedInput",
    "Snapshot",
    "Source",
    "SourceInfo",
    "State",
    "Status",
    "StatusChanged",
    "StreamSource",
    "TraceError",
    "TraceStore",
    "__version__",
    "as_json",
    "choose_live_source",
    "load_trace",
    "open_recording",
    "snapshot_from",
    "text",
]

if TYPE_CHECKING:
    from neuron_top.decode import DecodeError
    from neuron_top.export import Exporter
    from neuron_top.feed import Feed, FeedEvent, RecordingError, Report, SkippedInput, StatusChanged
    from neuron_top.history import History
    from neuron_top.k8s.model import PodMap
    from neuron_top.k8s.watcher import PodWatcher
    from neuron_top.output.text import SourceInfo, as_json, text
    from neuron_top.recording.index import RecordingSource, open_recording
    from neuron_top.recording.player import Marker, ReplayController
    from neuron_top.recording.writer import RecordingWriter
    from neuron_top.session import Session
    from neuron_top.snapshot import AppView, Snapshot, snapshot_from
    from neuron_top.sources.base import RawReport, Skipped, Source, State, Status
    from neuron_top.sources.demo import DemoSource
    from neuron_top.sources.host import HostCollector
    from neuron_top.sources.live import choose_live_source
    from neuron_top.sources.monitor import MonitorSource
    from neuron_top.sources.stream import CommandSource, StreamSource
    from neuron_top.trace import TraceError, TraceStore, load_trace


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neuron_top' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

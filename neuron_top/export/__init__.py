"""neuron-top as a Prometheus exporter (no UI imports): the exposition, its HTTP server, and the health check.

``exposition`` turns a sequence of reports into the text a scrape returns; ``Exporter`` is the same fed live by
the feed loop; ``serve`` puts it behind ``/metrics``.
"""

from neuron_top.export.exposition import (
    CONTENT_TYPE_OPENMETRICS,
    CONTENT_TYPE_TEXT,
    Exporter,
    ExportOptions,
    escape_label_value,
    exposition,
)

__all__ = [
    "CONTENT_TYPE_OPENMETRICS",
    "CONTENT_TYPE_TEXT",
    "ExportOptions",
    "Exporter",
    "escape_label_value",
    "exposition",
]

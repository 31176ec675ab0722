"""Events worth a notification (no UI imports).

neuron-monitor's ECC counts are the events of each report's period (its Prometheus exporter adds them to
counters), so an uncorrected count above zero in a report is a new event, announced once with that report.
"""

from __future__ import annotations

from neuron_top.snapshot import Snapshot

__all__ = ["new_uncorrected"]


def new_uncorrected(cur: Snapshot) -> list[int]:
    """Devices with uncorrected ECC events (DRAM + SRAM) in this report, in index order."""
    return [e.device for e in cur.ecc if e.uncorrected > 0]

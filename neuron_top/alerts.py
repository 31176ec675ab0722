"""Events worth a notification, found by comparing two snapshots (no UI imports).

The app calls these once per report with the previous snapshot, so each event is announced once: a count that
stays high is not news, a count that rises is.
"""

from __future__ import annotations

from .snapshot import Snapshot


def new_uncorrected(prev: Snapshot | None, cur: Snapshot) -> list[int]:
    """Devices whose uncorrected ECC count (DRAM + SRAM) rose since ``prev``, in index order.

    Without a previous snapshot (the first report), or for a device ``prev`` did not list, the baseline is zero:
    uncorrected errors already present when monitoring starts are announced once too. A count that went down
    (a driver reload resets the counters) is not an event.
    """
    before = {e.device: e.uncorrected for e in (prev.ecc if prev is not None else ())}
    return [e.device for e in cur.ecc if e.uncorrected > before.get(e.device, 0)]

"""Test helper: run a source's items() in a thread the way the collector does, and close it from outside."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from neuron_top.sources.base import Item, Source


class Running:
    """``source.items`` consumed by a background thread into ``got``."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.got: list[Item] = []
        self.thread = threading.Thread(target=lambda: self.got.extend(source.items(threading.Event())))
        self.thread.start()

    def wait_for(self, predicate: Callable[[Item], bool], timeout: float = 30.0) -> None:
        """Until an item matching ``predicate`` arrived (a generous bound, never a timing assertion)."""
        deadline = time.monotonic() + timeout
        while not any(predicate(i) for i in list(self.got)):
            assert time.monotonic() < deadline, "the source produced nothing in time"
            time.sleep(0.01)

    def close(self) -> bool:
        """close() from this thread; True when the reading thread then ended."""
        self.source.close()
        self.thread.join(10)
        return not self.thread.is_alive()

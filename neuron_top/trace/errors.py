"""The one error trace loading raises."""

from __future__ import annotations

__all__ = ["LoadCancelled", "TraceError"]


class TraceError(Exception):
    """A trace file that cannot be read at all; the message is one line, fit for a terminal."""


class LoadCancelled(TraceError):
    """The load was given up (the app quitting while a large trace loads): raised between two batches."""

"""The one error trace loading raises."""

from __future__ import annotations

__all__ = ["TraceError"]


class TraceError(Exception):
    """A trace file that cannot be read at all; the message is one line, fit for a terminal."""

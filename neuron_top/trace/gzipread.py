"""A gzip file read up to where it was cut.

A trace written gzip-compressed by a profiler that was killed (or copied while being written) ends inside its
deflate stream. Python's ``gzip`` then raises at the end and every byte before the cut is lost with it, though
the JSON loader reads a cut plain-text trace up to its last whole event. ``GzipReader`` hands over all that
decompresses and says, in ``cut``, what was lost. The members are walked by the recordings' ``Inflater`` (the one
reader of concatenated members, of zero padding after them, and of damage, read on past at the next member as
``zcat`` does).
"""

from __future__ import annotations

from types import TracebackType
from typing import IO

from neuron_top.recording.inflate import Damage, Inflater

__all__ = ["GzipReader"]

_CHUNK = 1 << 16


class GzipReader:
    """``read`` over a gzip file (one or several members) that goes on, instead of raising, where the compressed
    data ends early or turns corrupt after some output; ``cut`` then says why. Nothing decompressed at all still
    raises ``EOFError``: that file holds nothing to read."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.cut = ""
        """Empty, or what of the data could not be read."""
        self._inf = Inflater("gzip")
        self._data = b""
        self._at = 0
        self._eof = False
        self._given = 0

    def read(self, size: int = -1) -> bytes:
        while not self._eof and (size < 0 or len(self._data) - self._at < size):
            self._fill()
        end = len(self._data) if size < 0 else self._at + size
        out = self._data[self._at : end]
        self._at += len(out)
        if not out and not self._given and self.cut:
            raise EOFError(self.cut)
        self._given += len(out)
        return out

    def _fill(self) -> None:
        raw = self.raw.read(_CHUNK)
        pieces = list(self._inf.feed(raw) if raw else self._inf.end())
        if not raw:
            self._eof = True
            if self._inf.open_member and not self.cut:
                self.cut = "the gzip data ends early (the file was cut): what follows the cut is missing"
        new = [p for p in pieces if isinstance(p, bytes)]
        for d in (p for p in pieces if isinstance(p, Damage)):
            self.cut = self.cut or f"{d.why}: {d.text.split(': ', 1)[0]} could not be read"
        if new:
            self._data, self._at = self._data[self._at :] + b"".join(new), 0

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> GzipReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

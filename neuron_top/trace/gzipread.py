"""A gzip file read up to where it was cut.

A trace written gzip-compressed by a profiler that was killed (or copied while being written) ends inside its
deflate stream. Python's ``gzip`` then raises at the end and every byte before the cut is lost with it, though
the JSON loader reads a cut plain-text trace up to its last whole event. ``GzipReader`` hands over all that
decompresses and says, in ``cut``, that the file ended early.
"""

from __future__ import annotations

import zlib
from types import TracebackType
from typing import IO

__all__ = ["GzipReader"]

_CHUNK = 1 << 16


class GzipReader:
    """``read`` over a gzip file (one or several members) that stops, instead of raising, where the compressed data
    ends early or turns corrupt after some output; ``cut`` then says why. Nothing decompressed at all still raises
    (``EOFError`` / ``zlib.error``): that file holds nothing to read."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.cut = ""
        """Empty, or why the data ended before its end-of-stream marker."""
        self._d = zlib.decompressobj(31)
        self._in = b""
        self._done = False
        self._given = 0

    def read(self, size: int = -1) -> bytes:
        out: list[bytes] = []
        have = 0
        while not self._done and (size < 0 or have < size):
            if self._d.eof:  # the end of one member: another may follow, or zero padding (as gzip skips it)
                rest = (self._d.unused_data + self._in).lstrip(b"\0")
                while not rest:
                    more = self.raw.read(_CHUNK)
                    if not more:
                        break
                    rest = more.lstrip(b"\0")
                if not rest:
                    self._done = True
                    break
                self._d, self._in = zlib.decompressobj(31), rest
            if not self._in:
                self._in = self.raw.read(_CHUNK)
                if not self._in:
                    tail = self._d.flush()
                    if not (self._given or have or tail):
                        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
                    out.append(tail)
                    have += len(tail)
                    self.cut = "the gzip data ends early (the file was cut): what follows the cut is missing"
                    self._done = True
                    break
            try:
                chunk = self._d.decompress(self._in, max(size - have, 0))
            except zlib.error as e:
                if not (self._given or have):
                    raise
                self.cut = f"corrupt gzip data ({e}): what follows is missing"
                self._done = True
                break
            self._in = self._d.unconsumed_tail
            out.append(chunk)
            have += len(chunk)
        data = b"".join(out)
        self._given += len(data)
        return data

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> GzipReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

"""Decompress concatenated gzip members or zstd frames as bytes arrive, and recover past a damaged one as ``zcat``
does (no UI imports).

A recording compressed by ``neuron-top --record x.gz`` is one gzip member (zstd frame) per recording session: the
recorder starts a new one each time it is started on the same file. A recorder killed with SIGKILL leaves its
member without an end, and the next session's member follows right after it; two recorders writing one file
interleave their blocks. A plain decompressor stops at the first such break and everything after it (often all of
the file) is lost. Here:

* every member is read, one after another;
* at a break the output up to the exact bad byte is kept (the recorder flushes a block after every report, so that
  is every complete report of the cut member), a newline ends a cut line, and reading goes on at the next member
  header. A member simply cut short (the next header is the bad byte) loses nothing and is only counted (``cut``);
  bytes skipped between the bad byte and the next header are reported as a ``Damage``.

Finding the bad byte: gzip's decompressor can be copied, so the chunk that failed is fed again from a copy made
before it, in small pieces and then byte by byte. zstd's cannot: with random access to the input (a file) the
member is decompressed again from its start up to the failing chunk (only on damage: a cost of one member's
decompression per break); without it (a pipe) the failing chunk's output is lost.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from neuron_top.textsafe import clean

__all__ = ["GZIP_MAGIC", "MAGIC", "ZSTD_MAGIC", "Damage", "Inflater", "LastMember", "compression_of", "last_member",
           "recover"]

GZIP_MAGIC = b"\x1f\x8b\x08"  # with the method byte (deflate): what every gzip member starts with
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAGIC = {"gzip": GZIP_MAGIC, "zstd": ZSTD_MAGIC, "xz": b"\xfd7zXZ\x00", "bzip2": b"BZh"}
"""What each member (frame, stream) of a compression the recordings are read in starts with: gzip and zstd
(what ``--record`` writes), and xz and bzip2 as ``logrotate`` or a user may leave them (the standard library's)."""
MAX_OUT = 16 << 20
"""Cap on bytes inflated from one gzip step (a decompression bomb must not fill memory)."""
PIECE = 4096
"""Bytes fed at a time while looking for where a member broke."""
READ = 1 << 20


def compression_of(head: bytes) -> str | None:
    """The compression a file starting with ``head`` (its first 6 bytes or more) is in, None for plain text: the
    one rule for a recording, a rotated file and a pipe."""
    return next((kind for kind, magic in MAGIC.items() if head.startswith(magic)), None)


@dataclass(frozen=True, slots=True)
class Damage:
    """Compressed bytes ``[start, end)`` that could not be read (``end`` is where the next member starts, or -1
    while none has been found yet)."""

    start: int
    end: int
    why: str

    @property
    def text(self) -> str:
        size = f"{self.end - self.start} bytes" if self.end >= 0 else "the rest"
        return f"{size} from byte {self.start}: {self.why}"


class Inflater:
    """Feed compressed bytes in order (``feed``); get decompressed bytes and ``Damage`` notes back, in order.

    ``pread(size, offset)`` reads the compressed input again (a file); None for a pipe (see the module docstring).
    """

    def __init__(self, kind: str, pread: Callable[[int, int], bytes] | None = None) -> None:
        self.kind = kind
        self.magic = MAGIC[kind]
        self._pread = pread
        self.pos = 0
        """Offset of the next compressed byte to feed."""
        self.member_start = 0
        self.members = 0
        """Members (frames) begun so far."""
        self.damaged = 0
        """Breaks where bytes were lost."""
        self.cut = 0
        """Members cut short (a recorder killed) with the next one right after: nothing lost."""
        self._obj: Any = self._new()
        self._started = False
        self._searching: int | None = None
        """While looking for the next member after a break: where the damage began."""
        self._search_from = 0
        self._bad = 0
        self._why = ""
        self._tail = b""
        self._last = b"\n"
        """The last byte of output, to end a cut line before the next member's first report."""

    def _new(self) -> Any:
        if self.kind == "gzip":
            return zlib.decompressobj(31)
        if self.kind == "xz":
            import lzma

            return lzma.LZMADecompressor(lzma.FORMAT_XZ)
        if self.kind == "bzip2":
            import bz2

            return bz2.BZ2Decompressor()
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj()

    # -- feeding ---------------------------------------------------------------------------------------------------

    def feed(self, data: bytes) -> Iterator[bytes | Damage]:
        """What ``data`` (the next compressed bytes) decompresses to; ``Damage`` where a member broke."""
        window = self._tail + data  # a few bytes of the last chunk: a header may straddle two chunks
        wbase = self.pos - len(self._tail)
        self.pos += len(data)
        self._tail = window[-16:]
        cur = self.pos - len(data)
        while cur < self.pos:
            if self._searching is not None:
                k = window.find(self.magic, max(self._search_from, wbase) - wbase)
                if k < 0:
                    self._search_from = max(self._search_from, self.pos - len(self.magic) + 1)
                    return
                found = wbase + k
                if found > self._searching:  # bytes between the bad one and the next header: lost
                    yield Damage(self._searching, found, self._why)
                else:  # the next member starts right at the break: a member cut short, nothing lost
                    self.cut += 1
                    self.damaged -= 1
                self._searching = None
                self._begin(found)
                cur = found
            piece = window[cur - wbase :]
            if not self._started:
                if not piece.strip(b"\0"):
                    return  # zero padding after the last member
                self._started = True
                self.members += 1
            saved = self._obj.copy() if self.kind == "gzip" else None
            try:
                outs = self._inflate(self._obj, piece)
            except Exception as exc:  # zlib.error / zstandard.ZstdError / LZMAError / OSError: a break in this member
                yield from self._break(piece, cur, saved, exc)
                # Look for the next member from a little before the bad byte (a header is a few bytes long and the
                # decoder may have read into it), never at the broken member's own header.
                self._searching = self._bad
                self._search_from = max(self.member_start + 1, self._bad - len(self.magic))
                continue
            for out in outs:
                yield from self._out(out)
            if not self._obj.eof:
                return
            cur = self.pos - len(self._obj.unused_data)
            self._begin(cur)

    @property
    def open_member(self) -> bool:
        """A member has begun and not ended (at the end of the input: the data was cut inside it)."""
        return self._started and self._searching is None

    def end(self) -> Iterator[Damage]:
        """At the end of the input: a break whose next member never came is reported."""
        if self._searching is not None:
            yield Damage(self._searching, -1, self._why)
            self._searching = None

    # -- inside ----------------------------------------------------------------------------------------------------

    def _begin(self, at: int) -> None:
        self._obj = self._new()
        self._started = False
        self.member_start = at

    def _inflate(self, obj: Any, data: bytes) -> list[bytes]:
        if self.kind != "gzip":
            return [obj.decompress(data)]
        outs = [obj.decompress(data, MAX_OUT)]
        while obj.unconsumed_tail:
            outs.append(obj.decompress(obj.unconsumed_tail, MAX_OUT))
        return outs

    def _out(self, out: bytes) -> Iterator[bytes]:
        if out:
            self._last = out[-1:]
            yield out

    def _break(self, data: bytes, base: int, saved: Any, exc: Exception) -> Iterator[bytes]:
        """Yield the output of ``data`` (at offset ``base``) up to the bad byte, and note where that is (``_bad``)."""
        self.damaged += 1
        self._why = f"corrupt {self.kind} data ({clean(str(exc), 80)})"
        state = saved if saved is not None else self._replay_to(base)
        off = 0
        if state is not None:  # else zstd from a pipe: this chunk's output is lost
            size = PIECE
            while off < len(data):
                piece = data[off : off + size]
                before = state.copy() if self.kind == "gzip" else None
                try:
                    outs = self._inflate(state, piece)
                except Exception:
                    if size == 1:
                        break
                    state = before if before is not None else self._replay_to(base + off)
                    if state is None:
                        break
                    size = 1  # the bad byte is in this piece: go byte by byte
                    continue
                for out in outs:
                    yield from self._out(out)
                off += len(piece)
                if state.eof:  # cannot happen before the bad byte; stop rather than read past an end
                    break
        self._bad = base + off
        if self._last != b"\n":
            self._last = b"\n"
            yield b"\n"  # a cut line must not swallow the next member's first report

    def _replay_to(self, offset: int) -> Any:
        """zstd: a decompressor fed the current member from its start up to ``offset`` (output dropped)."""
        if self._pread is None:
            return None
        obj = self._new()
        at = self.member_start
        while at < offset:
            chunk = self._pread(min(READ, offset - at), at)
            if not chunk:
                return None
            obj.decompress(chunk)
            at += len(chunk)
        return obj


@dataclass(frozen=True, slots=True)
class LastMember:
    """Where a compressed file's last member (frame) starts, and whether it is whole."""

    start: int
    whole: bool


def last_member(kind: str, pread: Callable[[int, int], bytes], size: int) -> LastMember | None:
    """Find the last gzip member / zstd frame of a compressed file of ``size`` bytes (decompressing it all, output
    dropped). None when a member before the last one is damaged (nothing to repair safely at the end)."""
    obj: Any = Inflater(kind)._new()
    start = pos = 0
    fed = False
    while pos < size:
        chunk = pread(min(READ, size - pos), pos)
        if not chunk:
            break
        data, base = chunk, pos
        pos += len(chunk)
        while data:
            if not fed and not data.strip(b"\0"):
                return LastMember(start, True)  # zero padding after the last member
            fed = True
            try:
                if kind == "gzip":
                    obj.decompress(data, MAX_OUT)
                    while obj.unconsumed_tail:
                        obj.decompress(obj.unconsumed_tail, MAX_OUT)
                else:
                    obj.decompress(data)
            except Exception:  # zlib.error / zstandard.ZstdError: a break
                return LastMember(start, False) if _no_member_after(kind, pread, start, size) else None
            if not obj.eof:
                break
            rest = obj.unused_data
            start = base + len(data) - len(rest)
            base, data = start, rest
            obj, fed = Inflater(kind)._new(), False
    return LastMember(start, not fed or bool(obj.eof))


def _no_member_after(kind: str, pread: Callable[[int, int], bytes], start: int, size: int) -> bool:
    """Whether no member header follows the one at ``start`` (the break is in the last member)."""
    magic = MAGIC[kind]
    at = start + 1
    while at < size:
        chunk = pread(min(READ, size - at), at)
        if magic in chunk:
            return False
        at += max(len(chunk) - len(magic), 1)
    return True


def recover(kind: str, data: bytes) -> bytes:
    """What a cut member (its compressed bytes) decompresses to, up to where it breaks or ends."""
    inf = Inflater(kind, lambda size, at: data[at:at + size])
    out = bytearray()
    for piece in inf.feed(data):
        if isinstance(piece, bytes):
            out += piece
        if inf.damaged or inf._searching is not None:
            break
    return bytes(out)

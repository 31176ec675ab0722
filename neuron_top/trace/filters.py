"""Filters in the syntax Neuron users already know from capture and ``neuron-explorer view``.

* NeuronCores: ``"0"``, ``"0,2,4"``, ``"0-3"`` (and mixes: ``"0-3,8"``).
* Event types: ``"model_load,nrt_execute"``; the groups ``hardware`` and ``software``; ``^`` excludes
  (``"hardware,^cc_exec"``). Only exclusions means "everything but".
* Instance ids: ``"i-abc123,i-def456"``.

An event's type is its name up to the first space (neuron-det names carry details: ``sync_exec - <neff>``).
"""

from __future__ import annotations

from dataclasses import dataclass

from neuron_top.fmt import core_ranges
from neuron_top.trace.store import HARDWARE_EVENTS, Track

__all__ = [
    "FilterError", "Filters", "TypeFilter", "event_type", "parse_cores", "parse_instances", "parse_types",
]


class FilterError(ValueError):
    """A filter string that does not parse; the message says which part."""


def parse_cores(text: str) -> frozenset[int] | None:
    """``"0,2,4"`` / ``"0-3"`` -> the set of cores; empty text -> None (no filter)."""
    text = text.strip()
    if not text:
        return None
    cores: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise FilterError(f"bad NeuronCore {part!r}: use 0,2,4 or 0-3") from None
        if a < 0 or b < a or b - a > 4096:
            raise FilterError(f"bad NeuronCore range {part!r}")
        cores.update(range(a, b + 1))
    return frozenset(cores)


def event_type(name: str) -> str:
    """The type a filter matches an event by: its name's first word."""
    return name.split(" ", 1)[0]


@dataclass(frozen=True)
class TypeFilter:
    include: frozenset[str]
    exclude: frozenset[str]
    hardware: bool
    software: bool

    def accepts(self, name: str) -> bool:
        t = event_type(name)
        if t in self.exclude:
            return False
        if not self.include and not self.hardware and not self.software:
            return True
        if t in self.include:
            return True
        hw = t in HARDWARE_EVENTS
        return (self.hardware and hw) or (self.software and not hw)


def parse_types(text: str) -> TypeFilter | None:
    """``"hardware,^cc_exec"`` -> a TypeFilter; empty text -> None."""
    text = text.strip()
    if not text:
        return None
    inc: set[str] = set()
    exc: set[str] = set()
    hw = sw = False
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        neg = part.startswith("^")
        name = part[1:].strip() if neg else part
        if not name or any(c.isspace() for c in name):
            raise FilterError(f"bad event type {part!r}")
        if neg:
            exc.add(name)
        elif name == "hardware":
            hw = True
        elif name == "software":
            sw = True
        else:
            inc.add(name)
    return TypeFilter(frozenset(inc), frozenset(exc), hw, sw)


def parse_instances(text: str) -> frozenset[str] | None:
    """A comma-separated list of instance ids from the filter bar, as a set; None when empty (all)."""
    parts = frozenset(p.strip() for p in text.split(",") if p.strip())
    return parts or None


@dataclass(frozen=True)
class Filters:
    """The three filters together; ``None`` fields filter nothing."""

    cores: frozenset[int] | None = None
    types: TypeFilter | None = None
    instances: frozenset[str] | None = None

    @classmethod
    def parse(cls, cores: str = "", types: str = "", instances: str = "") -> Filters:
        return cls(parse_cores(cores), parse_types(types), parse_instances(instances))

    @property
    def active(self) -> bool:
        return self.cores is not None or self.types is not None or self.instances is not None

    def accepts_track(self, track: Track) -> bool:
        if self.cores is not None and track.core not in self.cores:
            return False
        return self.instances is None or track.instance in self.instances

    def name_table(self, strings: list[str]) -> bytes:
        """One byte per interned string: 1 if events of that name pass the type filter."""
        if self.types is None:
            return b"\x01" * len(strings)
        acc = self.types.accepts
        return bytes(1 if acc(s) else 0 for s in strings)

    def describe(self) -> str:
        parts = []
        if self.cores is not None:
            parts.append("NC " + core_ranges(self.cores))
        if self.types is not None:
            t = self.types
            names = (
                (["hardware"] if t.hardware else [])
                + (["software"] if t.software else [])
                + sorted(t.include)
            )
            names += [f"^{x}" for x in sorted(t.exclude)]
            parts.append("types " + ",".join(names))
        if self.instances is not None:
            parts.append("instances " + ",".join(sorted(self.instances)))
        return "; ".join(parts)


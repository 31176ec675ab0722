"""Trace timestamps to integer nanoseconds: the one rule every phase of every trace goes through.

Chrome trace times are microseconds written as JSON numbers (or numeric strings), often with a fraction:
``1712195495519689.047`` (PyTorch/Kineto epoch microseconds with nanoseconds). A double holds ~16 significant
digits, so that value read as a float is off by up to ~125 ns, and two events written with the same text but
converted by different arithmetic (a slice start, a flow point) could land 1 ns apart. So:

* a number is converted from its decimal text: digits, not a float; a fraction beyond nanoseconds is rounded to
  the nearest nanosecond, ties to even (what ``round`` does);
* a float is used only when it is provably exact: ``|t| < SAFE_US`` microseconds, where the nearest double times
  1000 is within a quarter nanosecond of the decimal value, so rounding it gives the decimal value's own
  nanosecond (times up to ~12 days from the clock's zero: neuron-det's and most Chrome traces). The loader reads
  larger times (epoch clocks) from the text.
"""

from __future__ import annotations

import re
from array import array
from itertools import repeat
from operator import add, eq, itemgetter, mul, sub
from typing import Any

import numpy as np

__all__ = [
    "EPOCH_NS",
    "SAFE_US",
    "NeedsText",
    "decimal_ns",
    "float_start_end",
    "floats_need_text",
    "floats_need_text_array",
    "is_wall_clock",
    "ns_array",
    "ns_list",
    "plain_decimals_array",
    "start_end_arrays",
    "start_end_ns",
    "three_decimals_array",
    "three_decimals_raw",
    "to_ns",
]

SAFE_US = 1 << 40
"""Microsecond floats below this convert exactly (error <= 0.25 ns before rounding)."""

EPOCH_NS = 946_684_800 * 10**9
"""2000-01-01 in Unix nanoseconds: a trace whose times are past this is on a wall clock (Kineto, neuron-explorer)."""


def is_wall_clock(t_ns: int) -> bool:
    """Whether a time in nanoseconds reads as a date (2000-2100): a wall clock, not a monotonic one."""
    return EPOCH_NS <= t_ns < 4_102_444_800 * 10**9  # before 2100


_POW = [10**k for k in range(40)]
_FOURTH_LAST = itemgetter(slice(-4, -3))
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?", re.ASCII)


def decimal_ns(text: str) -> int:
    """Decimal microseconds (``"-12.5"``, ``"1712195495519689.047"``, ``"1.5e3"``) -> nanoseconds, exactly.

    Raises ValueError for anything that is not a finite decimal number.
    """
    m = _DECIMAL.fullmatch(text.strip())
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"not a number: {text[:40]!r}")
    sign, whole, frac, exp_text = m.groups()
    neg = sign == "-"
    frac = frac or ""
    exp = int(exp_text) if exp_text else 0
    digits = int(whole + frac or "0")
    shift = exp + 3 - len(frac)  # value in ns = digits * 10**shift
    ns: int
    if abs(shift) > 39:
        if digits == 0 or shift < 0:
            return 0
        raise ValueError(f"timestamp out of range: {text!r}")
    if shift >= 0:
        ns = digits * _POW[shift]
    else:
        q, r = divmod(digits, _POW[-shift])
        half = _POW[-shift] // 2
        ns = q + (1 if r > half or (r == half and q & 1) else 0)
    return -ns if neg else ns


def to_ns(v: Any) -> int:
    """One timestamp (int, float, or decimal text) -> nanoseconds; ValueError/TypeError when it is none."""
    t = type(v)
    if t is int:
        return v * 1000  # type: ignore[no-any-return]
    if t is str:
        return decimal_ns(v)
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("not a finite timestamp")
        if -SAFE_US < v < SAFE_US:
            return round(v * 1000.0)  # type: ignore[no-any-return]
        return decimal_ns(repr(v))  # the shortest text that reads back as this float: the best there is
    raise TypeError("no timestamp")


def ns_list(vals: list[Any]) -> list[int]:
    """A batch of timestamps -> nanoseconds, by the same rule as ``to_ns``, at C speed for the common shapes.

    Raises ValueError/TypeError when any value is not a timestamp (the caller then goes event by event).
    """
    types = set(map(type, vals))
    if types == {int}:
        return list(map(mul, vals, repeat(1000)))
    if types <= {int, float} and max(vals) < SAFE_US and min(vals) > -SAFE_US:
        return list(map(round, map(mul, vals, repeat(1000.0))))
    if types == {str}:
        got = _three_decimals(vals)
        if got is not None:
            return got
        bulk = plain_decimals_array(vals)
        if bulk is not None:
            return bulk.tolist()  # type: ignore[no-any-return]
    elif types == {int, str}:  # Kineto: integer durations among 3-decimal ones
        return [v * 1000 if type(v) is int else _ns3(v) for v in vals]
    return list(map(to_ns, vals))


def _ns3(v: str) -> int:
    """``"123.456"`` -> 123456 (the common Kineto shape), else the general rule."""
    if v[-4:-3] == "." and v.count(".") == 1 and v.isascii() and "_" not in v:
        return int(v.replace(".", ""))
    return decimal_ns(v)


def _three_decimals(vals: list[str]) -> list[int] | None:
    """Decimal texts that all have exactly three digits after the point (microseconds with nanoseconds, as Kineto
    and neuron-det write them): the nanoseconds are the digits without the point. None when they do not."""
    if not all(map(eq, map(_FOURTH_LAST, vals), repeat("."))):
        return None
    joined = "".join(vals)
    if not joined.isascii() or "_" in joined:  # int() would take other digits and underscores; JSON has none
        return None
    digits = list(map(str.replace, vals, repeat("."), repeat("")))
    try:
        return list(map(int, digits))  # ValueError on anything but digits (and a leading sign)
    except ValueError:
        return None


class NeedsText(ValueError):
    """Raised by ``start_end_ns(exact_only=True)`` when the float fast path does not apply."""


def start_end_ns(ts: list[Any], durs: list[Any], exact_only: bool = False) -> tuple[list[int], list[int]]:
    """Starts and ends of complete (X) events in nanoseconds; ValueError when a duration is negative.

    ``exact_only``: raise ``NeedsText`` instead of taking the slow path (the caller first checks whether floats
    out of the exact range mean the batch must be read as text).

    Numbers (ints or floats) well inside the exact range, ends below ``SAFE_US / 2`` so that the float sum adds at
    most 0.12 ns of error: the end is the sum rounded once, which for up to three decimals is exactly start +
    duration (an int converts to a float exactly there). Anything else: start + duration, each by ``ns_list``.
    """
    try:
        lo, hi, dlo, dhi = min(ts), max(ts), min(durs), max(durs)  # TypeError: None or text among them
        fast = lo > -SAFE_US and hi + dhi < SAFE_US // 2 and dlo >= 0
    except TypeError:
        fast = False
    if fast:  # (and far inside the int64 columns: no range check needed)
        starts = list(map(round, map(mul, ts, repeat(1000.0))))
        return starts, list(map(round, map(mul, map(add, ts, durs), repeat(1000.0))))
    if exact_only:
        raise NeedsText("the float fast path does not apply")
    starts = ns_list(ts)
    ends = list(map(add, starts, ns_list(durs)))
    if min(map(sub, ends, starts), default=0) < 0:
        raise ValueError("negative duration")
    return starts, ends


def floats_need_text(vals: list[Any]) -> bool:
    """Whether a batch decoded with floats has one a float cannot convert exactly (read the text instead)."""
    try:
        if max(vals) < SAFE_US and min(vals) > -SAFE_US:
            return False
    except TypeError:  # None or strings among them: the per-event path deals with those
        return any(type(v) is float and not -SAFE_US < v < SAFE_US for v in vals)
    return float in set(map(type, vals))


# -- the same rule, a batch at a time, as int64 arrays (the loader's fast paths) ----------------------------------

_DIGITS_DOT_COMMA = b"0123456789.,"


def _floats(vals: list[Any]) -> np.ndarray | None:
    """The values as float64 when every one is an int or a float (None otherwise)."""
    try:
        return np.frombuffer(array("d", vals), np.float64)
    except (TypeError, OverflowError):  # text or None among them, or an int beyond any float
        return None


def three_decimals_array(vals: list[Any]) -> np.ndarray | None:
    """Decimal texts that all read ``digits.ddd`` (microseconds with nanoseconds, as Kineto writes its epoch
    times) -> their nanoseconds, the digits without the point, read in one C pass. None when any text has
    another shape (a sign, an exponent, another count of decimals, more than 19 digits): the caller then takes
    the text one value at a time. The checks are on the joined text's bytes, where every point and separator is.
    """
    try:
        joined = ",".join(vals)
    except TypeError:
        return None
    if not joined.isascii():
        return None
    return _three_decimals_bytes(joined.encode(), len(vals))


def three_decimals_raw(vals: list[Any]) -> np.ndarray | None:
    """``three_decimals_array`` for the raw JSON texts of numbers (bytes-like, e.g. ``msgspec.Raw``); None when
    any is not a ``digits.ddd`` number (a string, null, another shape) or not bytes at all."""
    try:
        joined = b",".join(vals)
    except TypeError:
        return None
    return _three_decimals_bytes(joined, len(vals))


def _three_decimals_bytes(raw: bytes, n: int) -> np.ndarray | None:
    if not n or raw.translate(None, _DIGITS_DOT_COMMA):
        return None
    a = np.frombuffer(raw, np.uint8)
    dots = np.flatnonzero(a == 46)
    commas = np.flatnonzero(a == 44)
    if len(dots) != n or len(commas) != n - 1:
        return None
    ends = np.append(commas, len(raw))
    starts = np.concatenate(([0], commas + 1))
    if (dots != ends - 4).any() or (dots <= starts).any():  # three decimals, and a digit before the point
        return None
    lengths = ends - starts
    longest = int(lengths.max())
    if longest > 20 or (longest == 20 and (a[starts[lengths == 20]] > 56).any()):  # 19 digits: below 9e18
        return None
    try:
        out = np.fromstring(raw.replace(b".", b""), dtype=np.int64, sep=",")
    except ValueError:
        return None
    return out if len(out) == n else None


def ns_array(vals: list[Any]) -> np.ndarray:
    """``ns_list`` as an int64 array, with its common shapes in whole-array passes (integers, floats in the exact
    range, ``digits.ddd`` text). ValueError/TypeError as ``ns_list``; OverflowError beyond int64."""
    try:
        ints = np.frombuffer(array("q", vals), np.int64)
    except (TypeError, OverflowError):
        ints = None
    if ints is not None:
        if len(ints) and max(-int(ints.min()), int(ints.max())) >= (1 << 63) // 1000:
            raise OverflowError("timestamp out of range")
        return ints * 1000
    f = _floats(vals)
    if f is not None and len(f) and f.min() > -SAFE_US and f.max() < SAFE_US:
        return np.rint(f * 1000.0).astype(np.int64)
    got = three_decimals_array(vals)
    if got is None:
        got = plain_decimals_array(vals)
    if got is not None:
        return got
    return np.array(ns_list(vals), np.int64)


def plain_decimals_array(vals: list[Any]) -> np.ndarray | None:
    """Unsigned decimal texts with any number of decimals up to nine (``"1234.5"``, ``"4458676522690.6553"``,
    Fuchsia's 4-7 decimals), at most 15 digits before the point: exact nanoseconds as ``decimal_ns`` rounds them
    (half to even), in whole-array integer passes. None when any text has another shape (the exact path then)."""
    if not vals or set(map(type, vals)) != {str}:
        return None
    parts = [v.partition(".") for v in vals]
    whole = [p[0] for p in parts]
    frac = [p[2] for p in parts]
    digits = "".join(whole) + "".join(frac)
    if not (digits.isascii() and digits.isdigit()) or min(map(len, whole)) == 0:
        return None
    if max(map(len, whole)) > 15 or max(map(len, frac)) > 9:
        return None
    w = np.array(whole, dtype=np.str_).astype(np.int64)
    f9 = np.array([d.ljust(9, "0") for d in frac], dtype=np.str_).astype(np.int64)  # units of 1e-9 us
    q, r = np.divmod(f9, 1_000_000)  # q: whole nanoseconds of the fraction; r: the rest, in 1e-6 ns
    up = (r > 500_000) | ((r == 500_000) & (q % 2 == 1))
    out: np.ndarray = w * 1000 + q + up
    return out


def float_start_end(ts: list[Any], durs: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """``start_end_ns``'s float case as int64 arrays: numbers (ints or floats) well inside the exact range, the
    end the float sum rounded once (see ``start_end_ns``). None when it does not apply."""
    t = _floats(ts)
    d = _floats(durs) if t is not None else None
    if t is None or d is None or not len(t):
        return None
    if t.min() > -SAFE_US and t.max() + d.max() < SAFE_US // 2 and d.min() >= 0:
        return np.rint(t * 1000.0).astype(np.int64), np.rint((t + d) * 1000.0).astype(np.int64)
    return None


def start_end_arrays(ts: list[Any], durs: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``start_end_ns`` as int64 arrays (the same numbers): the float case, else start + duration, each by
    ``ns_array``. ValueError for a negative duration, OverflowError beyond int64."""
    got = float_start_end(ts, durs)
    if got is not None:
        return got
    starts = ns_array(ts)
    durs_ns = ns_array(durs)
    if len(durs_ns) and durs_ns.min() < 0:
        raise ValueError("negative duration")
    if len(starts) and int(starts.max()) + int(durs_ns.max()) >= 1 << 63:
        raise OverflowError("end out of range")
    return starts, starts + durs_ns


def floats_need_text_array(vals: list[Any]) -> bool:
    """``floats_need_text`` with one conversion instead of min/max over the list."""
    f = _floats(vals)
    if f is None:
        return floats_need_text(vals)
    if not len(f) or (f.min() > -SAFE_US and f.max() < SAFE_US):
        return False
    return float in set(map(type, vals))

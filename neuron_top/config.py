"""The neuron-monitor configuration file: parse, validate, and answer "how often is each group collected".

neuron-top reads the same file it hands to neuron-monitor (``-c FILE``) for two reasons: to catch mistakes with a
message naming the bad key (neuron-monitor itself just exits), and to pace the built-in collector the same way.

Rules (neuron-monitor user guide, "JSON objects and fields in the configuration file"):

* ``period`` may sit on the root, on a ``neuron_runtimes`` entry, or on a metric object; the nearest one wins and
  the default is 5 s. A period is a duration string such as ``"1s"``, ``"500ms"``, ``"2m"``; neuron-monitor is a Go
  program, so Go's duration syntax is accepted (``"1m30s"``, ``"1.5s"``, units ns, us/µs, ms, s, m, h).
* ``neuron_runtimes[]`` has an optional ``tag_filter`` regex and ``metrics[]`` of runtime-level types;
  ``system_metrics[]`` lists system-level types.
* Unknown keys are kept as warnings, not errors: newer neuron-monitor versions may add some.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from neuron_top.textsafe import clean

__all__ = [
    "DEFAULT_PERIOD", "RUNTIME_METRICS", "SYSTEM_METRICS", "ConfigError", "Metric", "MonitorConfig",
    "RuntimeSelection", "default_config", "format_period", "load_config", "parse_config", "parse_period",
]

DEFAULT_PERIOD = 5.0
"""Seconds; what neuron-monitor uses where no period is given (and with no config file at all)."""

RUNTIME_METRICS = ("neuroncore_counters", "memory_used", "neuron_runtime_vcpu_usage", "execution_stats")
SYSTEM_METRICS = ("vcpu_usage", "memory_info", "neuron_hw_counters")

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PERIOD_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_ROOT_KEYS = {"period", "neuron_runtimes", "system_metrics"}
_RUNTIME_KEYS = {"period", "tag_filter", "metrics"}
_METRIC_KEYS = {"period", "type"}


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the key path, e.g. ``system_metrics[2].period``."""


def parse_period(text: object, where: str = "period") -> float:
    """Seconds from a duration string such as ``"1s"``, ``"500ms"``, ``"2m"`` or ``"1m30s"``."""
    if not isinstance(text, str):
        raise ConfigError(
            f'{where}: {_show(text)} is not a period like "1s" or "500ms" (it must be a string)'
        )
    s = text.strip()
    pos = 0
    total = 0.0
    while pos < len(s):
        m = _PERIOD_PART.match(s, pos)
        if m is None:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not s or pos != len(s):
        raise ConfigError(f'{where}: {_show(text)} is not a period like "1s" or "500ms"')
    if total <= 0:
        raise ConfigError(f"{where}: {_show(text)} must be longer than zero")
    return total


def format_period(seconds: float) -> str:
    """The shortest duration string for ``seconds`` (``"500ms"``, ``"2s"``, ``"1.5s"``)."""
    if seconds < 1 and round(seconds * 1000, 6) == int(round(seconds * 1000, 6)):
        return f"{round(seconds * 1000)}ms"
    return f"{seconds:g}s"


@dataclass(frozen=True, slots=True)
class Metric:
    type: str
    period: float
    """Effective seconds (its own, else its parent's, else the root's, else 5)."""
    period_text: str | None = None
    """The period as written on this metric object, if it had one."""


@dataclass(frozen=True, slots=True)
class RuntimeSelection:
    """One ``neuron_runtimes`` entry: which applications (by tag regex) and which runtime-level groups."""

    tag_filter: str | None
    metrics: tuple[Metric, ...]
    period_text: str | None = None
    pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def matches(self, tag: str) -> bool:
        """Whether an application tagged ``tag`` is monitored by this entry (Go's regexp: unanchored search)."""
        return self.pattern is None or self.pattern.search(tag) is not None


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    period: float = DEFAULT_PERIOD
    period_text: str | None = None
    neuron_runtimes: tuple[RuntimeSelection, ...] = ()
    system_metrics: tuple[Metric, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """Things that were accepted but look wrong (unknown keys, duplicate groups)."""
    path: str | None = field(default=None, compare=False)

    def group_periods(self) -> dict[str, float]:
        """Effective period of every enabled metric group. A runtime group listed in several entries is collected
        at the shortest of their periods."""
        periods: dict[str, float] = {}
        for metric in (*(m for r in self.neuron_runtimes for m in r.metrics), *self.system_metrics):
            periods[metric.type] = min(periods.get(metric.type, metric.period), metric.period)
        return periods

    def base_period(self) -> float:
        """How often a report is due: the shortest group period (the root period when nothing is enabled)."""
        return min(self.group_periods().values(), default=self.period)

    def tag_matches(self, tag: str) -> bool:
        """Whether any runtime entry monitors an application tagged ``tag``."""
        return any(r.matches(tag) for r in self.neuron_runtimes)

    def source_filter(self) -> str | None:
        """The ``tag_filter`` regexes that leave applications out at the source, joined with ``|``; None when
        nothing is left out (no runtime entry, or one without a filter: it monitors every application). What
        neuron-monitor drops this way never reaches us: the header says it is in force, apart from ``/``."""
        filters = [r.tag_filter for r in self.neuron_runtimes]
        if not filters or any(f is None for f in filters):
            return None
        unique = list(dict.fromkeys(f for f in filters if f is not None))
        return unique[0] if len(unique) == 1 else "|".join(f"(?:{f})" for f in unique)

    def with_tag_filter(self, regex: str) -> MonitorConfig:
        """A copy whose runtime entries all use ``regex`` (the ``--tag`` flag). Raises ConfigError if invalid."""
        pattern = _compile(regex, "--tag")
        runtimes = self.neuron_runtimes or default_config(self.period).neuron_runtimes
        return replace(
            self, neuron_runtimes=tuple(replace(r, tag_filter=regex, pattern=pattern) for r in runtimes)
        )

    def to_json(self) -> bytes:
        """The config as neuron-monitor reads it (to hand neuron-monitor a modified copy, e.g. with ``--tag``)."""
        doc: dict[str, Any] = {"period": self.period_text or format_period(self.period)}

        def metric(m: Metric) -> dict[str, str]:
            return {"type": m.type, **({"period": m.period_text} if m.period_text else {})}

        doc["neuron_runtimes"] = [
            {
                **({"tag_filter": r.tag_filter} if r.tag_filter is not None else {}),
                **({"period": r.period_text} if r.period_text else {}),
                "metrics": [metric(m) for m in r.metrics],
            }
            for r in self.neuron_runtimes
        ]
        doc["system_metrics"] = [metric(m) for m in self.system_metrics]
        return json.dumps(doc, indent=2).encode() + b"\n"


def default_config(period: float = DEFAULT_PERIOD) -> MonitorConfig:
    """What neuron-monitor does without a config file: every group, every application, every ``period`` s."""
    return MonitorConfig(
        period=period,
        neuron_runtimes=(RuntimeSelection(".*", tuple(Metric(t, period) for t in RUNTIME_METRICS)),),
        system_metrics=tuple(Metric(t, period) for t in SYSTEM_METRICS),
    )


def load_config(path: str | Path) -> MonitorConfig:
    """Read and validate a config file; any problem (missing file, bad JSON, bad key) is a ConfigError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{clean(str(p))}: cannot read: {exc.strerror or exc}") from None
    config = parse_config(data, source=str(p))
    return replace(config, path=str(p))


def parse_config(data: bytes | str | Mapping[str, Any], source: str = "config") -> MonitorConfig:
    """Validate a config given as JSON text or an already decoded object."""
    if isinstance(data, (bytes, str)):
        if isinstance(data, bytes) and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{clean(source)}: not valid JSON: {clean(exc)}") from None
    else:
        doc = data
    warnings: list[str] = []
    root = _object(doc, "(root)")
    _unknown(root, _ROOT_KEYS, "", warnings)
    root_period_text = _period_text(root, "period")
    period = parse_period(root_period_text, "period") if root_period_text is not None else DEFAULT_PERIOD

    runtimes: list[RuntimeSelection] = []
    for i, entry in enumerate(_array(root.get("neuron_runtimes"), "neuron_runtimes")):
        where = f"neuron_runtimes[{i}]"
        obj = _object(entry, where)
        _unknown(obj, _RUNTIME_KEYS, where + ".", warnings)
        rt_period_text = _period_text(obj, where + ".period")
        rt_period = parse_period(rt_period_text, where + ".period") if rt_period_text is not None else period
        tag = obj.get("tag_filter")
        pattern = None
        if tag is not None:
            if not isinstance(tag, str):
                raise ConfigError(f"{where}.tag_filter: {_show(tag)} is not a regex string")
            pattern = _compile(tag, where + ".tag_filter")
        metrics = _metrics(obj.get("metrics"), where + ".metrics", rt_period, RUNTIME_METRICS, warnings)
        runtimes.append(RuntimeSelection(tag, metrics, rt_period_text, pattern))
    system = _metrics(root.get("system_metrics"), "system_metrics", period, SYSTEM_METRICS, warnings)
    return MonitorConfig(period, root_period_text, tuple(runtimes), system, tuple(warnings))


# -- helpers ----------------------------------------------------------------------------------------------


def _metrics(
    value: object, where: str, inherited: float, allowed: tuple[str, ...], warnings: list[str]
) -> tuple[Metric, ...]:
    out: list[Metric] = []
    seen: set[str] = set()
    for j, entry in enumerate(_array(value, where)):
        here = f"{where}[{j}]"
        obj = _object(entry, here)
        _unknown(obj, _METRIC_KEYS, here + ".", warnings)
        kind = obj.get("type")
        if kind is None:
            raise ConfigError(f'{here}: missing "type" (one of {", ".join(allowed)})')
        if not isinstance(kind, str) or kind not in allowed:
            other = SYSTEM_METRICS if allowed is RUNTIME_METRICS else RUNTIME_METRICS
            hint = (
                f"; it is a {'system' if other is SYSTEM_METRICS else 'runtime'}-level group and belongs in "
                f"{'system_metrics' if other is SYSTEM_METRICS else 'neuron_runtimes[].metrics'}"
                if kind in other
                else f" (expected one of {', '.join(allowed)})"
            )
            raise ConfigError(f"{here}.type: {_show(kind)} is not a {_level(allowed)} metric group{hint}")
        if kind in seen:
            warnings.append(f"{here}.type: {kind} is listed twice; the shortest period is used")
        seen.add(kind)
        text = _period_text(obj, here + ".period")
        out.append(
            Metric(kind, parse_period(text, here + ".period") if text is not None else inherited, text)
        )
    return tuple(out)


def _level(allowed: tuple[str, ...]) -> str:
    return "runtime-level" if allowed is RUNTIME_METRICS else "system-level"


def _period_text(obj: Mapping[str, Any], where: str) -> str | None:
    value = obj.get("period")
    if value is None:
        return None
    parse_period(value, where)  # raises with the path
    return str(value)


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected an object {{...}}, got {_kind(value)}")
    return value


def _array(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected an array [...], got {_kind(value)}")
    return value


def _unknown(obj: Mapping[str, Any], known: set[str], prefix: str, warnings: list[str]) -> None:
    for key in obj:
        if key not in known:
            warnings.append(f"{prefix}{clean(key, 60)}: unknown key, ignored")


def _compile(regex: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ConfigError(f"{where}: {_show(regex)} is not a valid regex: {clean(exc)}") from None


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _show(value: object) -> str:
    """A value quoted as JSON would, made printable and short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return clean(text, 80)

"""One host's dashboard from Prometheus: its series read back into neuron-monitor reports (no UI imports).

Why a report: the dashboard, its panels, history, alerts and recording all read neuron-monitor reports through the
one feed loop. A ``Source`` that turns the host's series into the same JSON lets every panel work unchanged on a
host seen only through Prometheus. What the exporter does not publish (per-vCPU usage, loaded models, device
latency from AWS's exporter, k8s pods) is simply absent from the report, and the panels say "no data" as they do for any report
without it.

Two queries per refresh, whatever the host: every gauge of the host as it is, and the counters' increase over the
rate window. neuron-monitor reports per-period counts, so the counters become counts over a period as long as the
window (the dashboard divides by the period: its rates are the window's average rate). On a server that caps an
answer's series (CloudWatch: 500; a trn1.32xlarge with its runtimes has ~600 gauges, a 128-core trn2 more), once the
gauges' answer reaches the cap they are asked family by family, a family still at the cap split by runtime, then
by core (``answer_in_parts``, the fleet's split). The counters are a few per runtime and device (~150 series).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import msgspec

from neuron_top.fleet.promql import Answer, PromClient, PromError, Sample, answer_in_parts
from neuron_top.fleet.queries import CORE_MEMORY as _CORE_MEMORY
from neuron_top.fleet.queries import (
    HOST_GAUGES,
    PART,
    QuerySet,
    host_family,
    host_queries,
    host_runtimes,
    label,
    matcher,
    runtime_tag,
)
from neuron_top.fmt import plural
from neuron_top.sources.base import Item, RawReport, State, Status, pause
from neuron_top.textsafe import clean

__all__ = ["PromHostSource", "report_from_series", "window_seconds"]

_INSTANCE = (("instance_id", "instance_id"), ("instance_name", "instance_name"),
             ("instance_type", "instance_type"), ("availability_zone", "instance_availability_zone"),
             ("region", "instance_region"), ("subnet_id", "subnet_id"))
_ENCODE = msgspec.json.Encoder().encode
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def window_seconds(text: str) -> float:
    """``"1m"`` -> 60.0 (the PromQL durations the query set uses: a number and one unit)."""
    unit = text[-1:]
    return float(text[:-1]) * _UNITS[unit] if unit in _UNITS and text[:-1] else float(text)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _put_max(d: dict[str, Any], key: str, value: float) -> None:
    """A value that two scrape targets of one host may both report: the larger wins (they are copies)."""
    old = d.get(key)
    d[key] = value if old is None or value > old else old


def report_from_series(gauges: list[Sample], counters: list[Sample], *, period: float, window: float,
                       ts: float | None = None) -> dict[str, Any]:
    """A neuron-monitor report (as a dict) from one host's gauge samples and counter increases."""
    runtimes: dict[str, dict[str, Any]] = {}

    def rt(tag: str) -> dict[str, Any]:
        r = runtimes.get(tag)
        if r is None:
            r = runtimes[tag] = {"cores": {}, "mem": {}, "used": {}, "vcpu": {}, "lat": {}, "dlat": {}, "err": {},
                                 "exec": {}}
        return r

    report: dict[str, Any] = {}
    system: dict[str, Any] = {}
    memory_info: dict[str, Any] = {}
    vcpu: dict[str, float] = {}
    for s in gauges:
        m = s.metric
        name = m.get("__name__", "")
        v = s.number
        if v is None:
            continue
        tag = m.get("runtime_tag", "")
        if name == "neuroncore_utilization_ratio":
            _put_max(rt(tag)["cores"], m.get("neuroncore", ""), v * 100.0)
        elif name.startswith("neuroncore_memory_usage_"):
            cat = name.removeprefix("neuroncore_memory_usage_")
            if cat in _CORE_MEMORY:
                _put_max(rt(tag)["mem"].setdefault(m.get("neuroncore", ""), {}), cat, v)
        elif name == "neuron_runtime_memory_used_bytes":
            _put_max(rt(tag)["used"], m.get("memory_location", ""), v)
        elif name == "neuron_runtime_vcpu_usage_ratio":
            _put_max(rt(tag)["vcpu"], m.get("usage_type", ""), v * 100.0)
        elif name == "execution_latency_seconds":
            _put_max(rt(tag)["lat"], m.get("percentile", ""), v)
        elif name == "neurontop_execution_device_latency_seconds":  # neuron-top export only: AWS's has none
            _put_max(rt(tag)["dlat"], m.get("percentile", ""), v)
        elif name == "instance_info":
            report["instance_info"] = {field: m[label] for label, field in _INSTANCE if label in m}
        elif name == "neuron_hardware_info":
            report["neuron_hardware_info"] = {k: _int(m.get(k)) for k in (
                "neuron_device_count", "neuroncore_per_device_count", "neuron_device_memory_size")
                if _int(m.get(k)) is not None}
        elif name == "system_vcpu_usage_ratio":
            _put_max(vcpu, m.get("usage_type", ""), v * 100.0)
        elif name.startswith("system_") and name.endswith("_bytes"):
            memory_info[name.removeprefix("system_")] = int(v)
    devices: dict[int, dict[str, int]] = {}
    for s in counters:
        m = s.metric
        v = s.number
        if v is None:
            continue
        n = round(max(v, 0.0))
        family = m.get(PART, "")
        if family == "hardware_ecc_events_total":
            idx = _int(m.get("neuron_device_index"))
            if idx is not None and 0 <= idx < 4096:
                d = devices.setdefault(idx, {"neuron_device_index": idx})
                d[m.get("event_type", "")] = max(d.get(m.get("event_type", ""), 0), n)
        elif family == "execution_errors_total":
            _put_max(rt(m.get("runtime_tag", ""))["err"], m.get("error_type", ""), n)
        elif family == "execution_status_total":
            _put_max(rt(m.get("runtime_tag", ""))["exec"], m.get("status_type", ""), n)
    if memory_info:
        system["memory_info"] = {"period": period, **memory_info, "error": ""}
    if vcpu:
        user, sys_ = vcpu.get("user", 0.0), vcpu.get("system", 0.0)
        system["vcpu_usage"] = {"period": period, "error": "",
                                "average_usage": {"user": user, "system": sys_,
                                                  "idle": max(0.0, 100.0 - user - sys_)}}
    if devices:
        system["neuron_hw_counters"] = {"period": window, "error": "",
                                        "neuron_devices": [devices[i] for i in sorted(devices)]}
    if system:
        report["system_data"] = system
    report["neuron_runtime_data"] = [_runtime(tag, r, i, period, window)
                                     for i, (tag, r) in enumerate(sorted(runtimes.items()))]
    if ts is not None:
        report["neuron_top"] = {"ts": ts}
    return report


def _runtime(tag: str, r: dict[str, Any], i: int, period: float, window: float) -> dict[str, Any]:
    pid = int(tag) if tag.isascii() and tag.isdigit() and len(tag) < 10 else 1_000_000 + i
    out: dict[str, Any] = {}
    if r["cores"]:
        out["neuroncore_counters"] = {"period": period, "error": "", "neuroncores_in_use": {
            k: {"neuroncore_utilization": v} for k, v in r["cores"].items()}}
    if r["used"] or r["mem"]:
        used: dict[str, Any] = {k: int(v) for k, v in r["used"].items() if k in ("host", "neuron_device")}
        if r["mem"]:
            used["usage_breakdown"] = {"neuroncore_memory_usage": {
                k: {c: int(v) for c, v in cats.items()} for k, cats in r["mem"].items()}}
        out["memory_used"] = {"period": period, "error": "", "neuron_runtime_used_bytes": used}
    if r["vcpu"]:
        out["neuron_runtime_vcpu_usage"] = {"period": period, "error": "", "vcpu_usage": dict(r["vcpu"])}
    if r["err"] or r["exec"] or r["lat"] or r["dlat"]:
        # latency only for a runtime that executed within the window: AWS's exporter keeps a stopped runtime's
        # last percentiles, which neuron-monitor reports as null (and the fleet's p99 leaves out)
        ran = any(v > 0 for v in r["exec"].values())
        out["execution_stats"] = {"period": window, "error": "", "error_summary": dict(r["err"]),
                                  "execution_summary": dict(r["exec"]),
                                  "latency_stats": {"total_latency": (dict(r["lat"]) or None) if ran else None,
                                                    "device_latency": (dict(r["dlat"]) or None) if ran else None}}
    return {"pid": pid, "neuron_runtime_tag": runtime_tag(tag) or None, "error": "", "report": out}


class EccCounts:
    """The ECC answer (each device's counter value) turned into counts per refresh: the dashboard adds a report's
    ECC counts up ("since start"), so the first report carries the whole value and each later one what it grew
    by. The drill-down then says what the fleet row and the alert say, also for an event older than the counter's
    first scrape (a one-minute increase, as before, said 0)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, str], int] = {}

    def per_refresh(self, report: dict[str, Any]) -> None:
        hw = report.get("system_data", {}).get("neuron_hw_counters")
        if hw is None:
            return
        for dev in hw["neuron_devices"]:
            for event, n in list(dev.items()):
                if event == "neuron_device_index":
                    continue
                key = (dev["neuron_device_index"], event)
                dev[event] = max(0, n - self.seen.get(key, 0))
                self.seen[key] = max(n, self.seen.get(key, 0))


class PromHostSource:
    """Reports for one host (``qs.by`` = ``key``), made from Prometheus every ``interval`` seconds.

    A refresh that fails says why (``RESTARTING``, with the retry delay) and is tried again; the dashboard keeps
    its last data meanwhile. A host with no series at all is said so, and looked for again.
    """

    def __init__(self, client: PromClient, qs: QuerySet, key: str, *, interval: float = 2.0,
                 sleep: Callable[[float], object] | None = None, clock: Callable[[], float] = time.time,
                 limit: int | None = None) -> None:
        self.client = client
        self.qs = qs
        self.key = key
        self.limit = limit
        """The server's cap on an answer's series (``--series-limit``; CloudWatch: 500), None: no cap."""
        self._by_family = False
        """The gauges' answer reached the cap: asked family by family from then on."""
        self.interval = interval
        self.name = clean(f"{qs.by}={key} via prometheus", 80)
        self._queries = host_queries(qs, key)
        self._window = window_seconds(qs.rate_window)
        self._sleep = sleep
        self._clock = clock
        self._closed = threading.Event()
        self._ecc = EccCounts()

    def items(self, stop: threading.Event) -> Iterator[Item]:
        yield Status(State.STARTING, f"asking {self.client.display} for {clean(self.key, 60)}")
        live: bool | None = False
        """True while reports flow; None while the host has no series (said once)."""
        delay = self.interval
        while not (stop.is_set() or self._closed.is_set()):
            started = time.monotonic()
            try:
                gauges = self._gauges()
                counters = self.client.query(self._queries[1])
            except PromError as exc:
                live = False
                delay = min(delay * 2, 60.0) if delay > self.interval else self.interval * 2
                yield Status(State.RESTARTING, f"{clean(exc.message, 200)}; retrying in {delay:g} s",
                             detail=clean(exc.query, 2000))
                pause(delay, self._sleep, stop, self._closed)
                continue
            delay = self.interval
            if not gauges:
                if live is not None:  # said once per spell without data
                    yield Status(State.STARTING, f"no series for {self.qs.by}={clean(self.key, 60)} now; "
                                 "looking again")
                live = None
            else:
                now = self._clock()
                report = report_from_series(gauges, counters, period=self.interval, window=self._window)
                self._ecc.per_refresh(report)
                if not live:
                    live = True
                    yield Status(State.LIVE, self.client.display + self._shared_tags(report))
                yield RawReport(_ENCODE(report), ts=now)
            pause(max(0.0, self.interval - (time.monotonic() - started)), self._sleep, stop, self._closed)

    def _shared_tags(self, report: dict[str, Any]) -> str:
        """A note when the host's exporter counts more runtimes than the report has tags: AWS's families keep one
        series a runtime tag (the last runtime's), so runtimes sharing a tag are one app here, while the fleet's
        row counts them all and reads the exporter's own per-core utilization. Asked once, as the host goes live."""
        tags = len(report.get("neuron_runtime_data", []))
        try:
            got = self.client.query(host_runtimes(self.qs, self.key))
        except PromError:
            return ""
        n = round(got[0].number or 0) if got else 0
        if n <= tags:
            return ""
        return f" · {plural(n, 'runtime')}, {plural(tags, 'tag')}: AWS's series show one a tag"

    def _gauges(self) -> list[Sample]:
        """Every gauge of the host: one query, or family by family once an answer reached the server's cap."""
        if not self._by_family:
            got = self.client.query(self._queries[0])
            if self.limit is None or len(got) < self.limit:
                return got
            self._by_family = True
        assert self.limit is not None
        out: list[Sample] = []
        for family in HOST_GAUGES:
            def make(shard: str, family: str = family) -> str:
                return host_family(replace(self.qs, shard=shard), self.key, family)

            def values(shard: str, by: str, family: str = family) -> tuple[Answer, int]:
                inside = replace(self.qs, shard=shard).sel(family, matcher(self.qs.by, self.key))
                return self.client.answer(f"count by ({label(by)}) ({inside})"), 1

            part = self.client.answer(make(self.qs.shard))
            if len(part.samples) >= self.limit:
                part, _ = answer_in_parts(self.client, self.limit, make, values, ("runtime_tag", "neuroncore"),
                                          f"split by runtime_tag, then neuroncore ({family})", shard=self.qs.shard)
            out.extend(part.samples)
        return out

    def close(self) -> None:
        self._closed.set()

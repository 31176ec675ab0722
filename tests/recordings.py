"""Recordings made the ways people make them, for the replay, ``--summary`` and follow tests.

Every report starts as a real one (``tests/fixtures/neuron-monitor/trn1n_32xlarge_cwagent_test_2024_line.json``,
a trn1n.32xlarge with 16 devices), trimmed to one runtime, one loaded model and eight vCPUs so a day of reports stays small, then
varied: utilization and memory move with time, and a ``Plan`` plants what a test needs:

* a period from 1 s to 300 s with millisecond jitter (``period``, ``jitter``);
* holes (``holes``: neuron-monitor down for a while);
* ECC events, corrected and uncorrected, on any device at any time (``ecc``), and a steady trickle of corrected
  ECC across devices (``corrected_every``), as a busy machine has;
* error bursts (``bursts``: failed executions in every report of a span);
* executions of any outcome in a span (``executions``: completed with an error, timed out, ...);
* a metric group failing for a span (``group_errors``);
* time going back (``back``: the clock steps back at a time, or ``cat live.jsonl live.jsonl.1``).

``write`` makes a file (plain, ``.gz``, ``.zst``, stamped as ``--record`` writes or raw); ``cut`` chops a file
mid-write; ``rotate_mv`` and ``rotate_copytruncate`` rotate one as logrotate does; ``fleet`` makes a fleet
recording with hosts going down and ECC/errors on some hosts.
"""

from __future__ import annotations

import calendar
import copy
import gzip
import json
import os
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "neuron-monitor" / "trn1n_32xlarge_cwagent_test_2024_line.json"
T0 = float(calendar.timegm((2026, 1, 1, 0, 0, 0)))
"""2026-01-01 00:00:00 UTC: every plan starts here unless told otherwise."""
PID = 457402
DEVICES = 16
_ECC_FIELDS = {"mem_corrected": "mem_ecc_corrected", "mem_uncorrected": "mem_ecc_uncorrected",
               "sram_corrected": "sram_ecc_corrected", "sram_uncorrected": "sram_ecc_uncorrected"}


def base_report() -> dict:
    """The fixture, trimmed: one runtime, eight vCPUs, every device's ECC at zero, no errors."""
    doc = json.loads(FIXTURE.read_text())
    rt = doc["neuron_runtime_data"][0]
    rt["pid"] = PID
    rt["neuron_runtime_tag"] = "bert"
    doc["neuron_runtime_data"] = [rt]
    ex = rt["report"]["execution_stats"]
    for k in ex["error_summary"]:
        ex["error_summary"][k] = 0
    for k in ex["execution_summary"]:
        ex["execution_summary"][k] = 0
    rt["report"]["neuron_runtime_vcpu_usage"]["error"] = ""  # the publisher's machine had no such pid
    mem = rt["report"]["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]
    mem["neuroncore_memory_usage"] = dict(list(mem["neuroncore_memory_usage"].items())[:4])
    models = rt["report"]["memory_used"].get("loaded_models")
    if isinstance(models, list):
        rt["report"]["memory_used"]["loaded_models"] = models[:1]
    vcpu = doc["system_data"]["vcpu_usage"]
    vcpu["usage_data"] = dict(list(vcpu["usage_data"].items())[:8])
    for d in doc["system_data"]["neuron_hw_counters"]["neuron_devices"]:
        for f in _ECC_FIELDS.values():
            d[f] = 0
    return doc


@dataclass
class Plan:
    """What a recording holds. Times (``at``, spans) are seconds from its start."""

    seconds: float = 600.0
    """Length of the recording."""
    period: float = 60.0
    jitter: float = 0.0
    """Each report's time moves by up to this many seconds either way (0.003 = ms jitter)."""
    start: float = T0
    holes: list[tuple[float, float]] = field(default_factory=list)
    """(at, length): no reports from ``at`` for ``length`` seconds."""
    ecc: list[tuple[float, int, str, int]] = field(default_factory=list)
    """(at, device, "mem_corrected" | "mem_uncorrected" | "sram_corrected" | "sram_uncorrected", count): in the
    report at or right after ``at``."""
    corrected_every: float = 0.0
    """Every this many seconds, one corrected ECC event on a device chosen in turn (0: none)."""
    bursts: list[tuple[float, float, int]] = field(default_factory=list)
    """(from, to, failed): every report in ``[from, to)`` has ``failed`` failed executions."""
    group_errors: list[tuple[float, float, str]] = field(default_factory=list)
    """(from, to, error): the system's memory_info group reports ``error`` in ``[from, to)``."""
    back: list[tuple[float, float]] = field(default_factory=list)
    """(at, seconds): from ``at`` on, the recorded clock reads ``seconds`` less (a clock stepped back)."""
    completed: int = 100
    """Executions completed cleanly in each report."""
    executions: list[tuple[float, float, str, int]] = field(default_factory=list)
    """(from, to, outcome, count): every report in ``[from, to)`` has ``count`` more executions of ``outcome`` (a
    key of neuron-monitor's ``execution_summary``: "completed", "timed_out", ...)."""
    seed: int = 1


def times(plan: Plan) -> list[tuple[float, float]]:
    """(seconds from the start as planned, recorded time) of each report, in file order."""
    rnd = random.Random(plan.seed)
    out: list[tuple[float, float]] = []
    k = 0
    while True:
        t = k * plan.period
        if t > plan.seconds:
            break
        k += 1
        if any(at <= t < at + length for at, length in plan.holes):
            continue
        jit = rnd.uniform(-plan.jitter, plan.jitter) if plan.jitter else 0.0
        shift = sum(s for at, s in plan.back if t >= at)
        out.append((t, round(plan.start + t + jit - shift, 3)))
    return out


def reports(plan: Plan) -> Iterator[tuple[float, dict]]:
    """(recorded time, report) for each report of the plan, in file order. The report is the same dict each
    time, changed in place: serialize it before taking the next."""
    base = base_report()
    ts = times(plan)
    planted: dict[int, list[tuple[int, str, int]]] = {}
    for at, dev, what, count in plan.ecc:
        k = next((i for i, (rel, _) in enumerate(ts) if rel >= at), None)
        if k is not None:
            planted.setdefault(k, []).append((dev, what, count))
    next_corrected = plan.corrected_every
    turn = 0
    doc = copy.deepcopy(base)
    for k, (rel, t) in enumerate(ts):
        rt = doc["neuron_runtime_data"][0]
        rep = rt["report"]
        ex = rep["execution_stats"]
        ex["period"] = plan.period
        outcomes = ex["execution_summary"]
        for key in outcomes:
            outcomes[key] = 0
        outcomes["completed"] = plan.completed
        for a, b, key, n in plan.executions:
            if a <= rel < b:
                outcomes[key] = outcomes.get(key, 0) + n
        failed = sum(n for a, b, n in plan.bursts if a <= rel < b)
        util = 40.0 + 30.0 * ((k % 17) / 16.0)
        for c in (rep["neuroncore_counters"].get("neuroncores_in_use") or {}).values():
            if isinstance(c, dict) and "neuroncore_utilization" in c:
                c["neuroncore_utilization"] = util
        devs = doc["system_data"]["neuron_hw_counters"]["neuron_devices"]
        ex["error_summary"]["generic"] = 0
        for d in devs:
            for f in _ECC_FIELDS.values():
                d[f] = 0
        doc["system_data"]["memory_info"]["error"] = ""
        for dev, what, count in planted.get(k, []):
            devs[dev][_ECC_FIELDS[what]] += count
        if plan.corrected_every:
            while rel >= next_corrected:
                devs[turn % DEVICES]["mem_ecc_corrected"] += 1
                turn += 1
                next_corrected += plan.corrected_every
        ex["error_summary"]["generic"] = failed
        for a, b, err in plan.group_errors:
            if a <= rel < b:
                doc["system_data"]["memory_info"]["error"] = err
        yield t, doc


def lines(plan: Plan, *, stamped: bool = True) -> Iterator[bytes]:
    """Each report as one line, as ``--record`` writes it (or raw neuron-monitor output, without our key)."""
    for t, doc in reports(plan):
        if stamped:
            doc["neuron_top"] = {"ts": t}
        yield json.dumps(doc, separators=(",", ":")).encode() + b"\n"


def write(path: Path, plan: Plan, *, stamped: bool = True) -> Path:
    """The plan as a recording: ``.gz`` and ``.zst`` by the name (one member/frame per report, as the writer's
    flushes leave it readable), else plain lines."""
    data = list(lines(plan, stamped=stamped))
    name = str(path)
    if name.endswith(".gz"):
        path.write_bytes(b"".join(gzip.compress(x) for x in data))
    elif name.endswith(".zst"):
        import zstandard

        c = zstandard.ZstdCompressor()
        path.write_bytes(b"".join(c.compress(x) for x in data))
    else:
        path.write_bytes(b"".join(data))
    return path


def cut(path: Path, keep: float | int) -> Path:
    """Chop a file as a crash (or a copy of a file being written) leaves it: ``keep`` bytes, or that fraction."""
    size = path.stat().st_size
    n = int(size * keep) if isinstance(keep, float) else keep
    with path.open("r+b") as f:
        f.truncate(n)
    return path


def rotate_mv(path: Path) -> Path:
    """logrotate's default: the file moves to ``NAME.1``; the writer goes on in a new file at the old name."""
    old = path.with_name(path.name + ".1")
    os.replace(path, old)
    return old


def rotate_copytruncate(path: Path) -> Path:
    """logrotate's ``copytruncate``: a copy to ``NAME.1``, then the file cut to nothing in place."""
    old = path.with_name(path.name + ".1")
    shutil.copyfile(path, old)
    with path.open("r+b") as f:
        f.truncate(0)
    return old


def fleet(path: Path, *, hosts: int = 4, seconds: float = 600.0, period: float = 10.0,
          down: list[tuple[str, float, float]] | None = None,
          uncorrected: list[tuple[str, float]] | None = None,
          errors: list[tuple[str, float, float, float]] | None = None) -> Path:
    """A fleet recording (``neuron-top fleet --record``): ``hosts`` rows named ``host0``.. per refresh.

    ``down``: (host, from, to) the host is down; ``uncorrected``: (host, at) one uncorrected ECC event from then
    on (the row's ECC window holds it); ``errors``: (host, from, to, rate) errors per second in the span."""
    from neuron_top.fleet.frame import FleetFrame
    from neuron_top.fleet.record import FleetRecorder
    from neuron_top.fleet.rows import DOWN, UP, FleetRow

    rec = FleetRecorder(path)
    try:
        k = 0
        while k * period <= seconds:
            rel = k * period
            rows = []
            for h in range(hosts):
                key = f"host{h}"
                is_down = any(n == key and a <= rel < b for n, a, b in down or ())
                unc = 1.0 if any(n == key and at <= rel for n, at in uncorrected or ()) else 0.0
                err = sum(r for n, a, b, r in errors or () if n == key and a <= rel < b)
                rows.append(FleetRow(key=key, devices=16, cores=32, util=50.0, util_max=80.0, mem_used=8e9,
                                     mem_total=5.12e11, exec_rate=100.0, err_rate=err, p99=0.02,
                                     ecc_corrected=0.0, ecc_uncorrected=unc, status=DOWN if is_down else UP))
            rec.write(FleetFrame(ts=T0 + rel, source="prometheus http://127.0.0.1:9090", rows=rows))
            k += 1
    finally:
        rec.close()
    return path

"""The simulated machine: apps, vCPUs, host memory, ECC, and the assembly of one report per tick.

Time is simulated, never read from a clock: report ``i`` is at ``i * tick`` seconds of demo time, where ``tick``
is the shortest group period. Like neuron-monitor, a report is written whenever any group is due and carries every
group; a group that is not due repeats its last data (with its last ``period``). Counts (executions, errors, ECC
events) are per captured period, so they accumulate between refreshes.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from neuron_top.schema import RUNTIME_GROUPS, SYSTEM_GROUPS
from neuron_top.sources.demo.profiles import GiB, InstanceProfile
from neuron_top.sources.demo.workload import App, encode, happenings, r2

__all__ = ["GROUPS", "K8S_GROUP", "VcpuUsage", "World", "resolve_periods"]

K8S_GROUP = "neuron_k8s_info"
GROUPS = RUNTIME_GROUPS + SYSTEM_GROUPS + (K8S_GROUP,)

_ECC_KEYS = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected",
             "mem_ecc_repairable_uncorrected")
# Events per device per second. Corrected ones are routine; uncorrected ones are rare (but see World.first_events).
_ECC_RATES = {"mem_ecc_corrected": 0.0012, "sram_ecc_corrected": 0.0004, "mem_ecc_uncorrected": 0.00002,
              "sram_ecc_uncorrected": 0.00001, "mem_ecc_repairable_uncorrected": 0.00002}
_EPS = 1e-9


class VcpuUsage(msgspec.Struct):
    """One vCPU's entry in ``usage_data``: a Struct, not a dict, because msgspec builds and encodes it about twice
    as fast (192 per report on the big instances) and the JSON is the same."""

    user: float
    nice: int
    system: float
    idle: float
    io_wait: float
    """0 (an int, as neuron-monitor writes it) on most vCPUs."""
    irq: int
    soft_irq: float


MIN_PERIOD = 0.01
MAX_PERIOD = 600.0
"""The demo's periods, in seconds: 100 reports a second to one every 10 minutes (what people record at)."""


def resolve_periods(periods: Mapping[str, float] | None, default: float) -> dict[str, float]:
    """Group -> period in seconds. Unlisted groups use ``default``; a period <= 0 turns the group off; unknown names
    are ignored. A period outside ``MIN_PERIOD``..``MAX_PERIOD`` raises ``ValueError``."""
    _check_period(default, "the demo period")
    out = dict.fromkeys(GROUPS, float(default))
    for name, value in (periods or {}).items():
        if name in out:
            out[name] = float(value)
            if value > 0:
                _check_period(value, f"the period of {name}")
    return {k: v for k, v in out.items() if v > 0}


def _check_period(value: float, what: str) -> None:
    if not MIN_PERIOD <= value <= MAX_PERIOD:  # NaN fails too
        raise ValueError(f"{what} must be between {MIN_PERIOD:g} s and {MAX_PERIOD:g} s (10 min), got {value!r}")


class World:
    """Everything that moves. ``report()`` returns the next report for ``apps.encode``.

    Mostly dicts and lists, but the per-core and per-vCPU entries are Structs and the big parts that rarely change
    (memory breakdowns, loaded models, k8s maps) are kept encoded as ``msgspec.Raw``: the JSON is the same as for
    plain dicts at a fraction of the cost. Decode the encoded report to get plain objects.
    """

    def __init__(self, profile: InstanceProfile, seed: int, periods: Mapping[str, float] | None = None,
                 period: float = 1.0, tag_filter: str | re.Pattern[str] | None = None) -> None:
        self.profile = profile
        self.seed = seed
        self.periods = resolve_periods(periods, period)
        self.tick = min(self.periods.values()) if self.periods else float(period)
        try:
            self.tag_filter = re.compile(tag_filter) if isinstance(tag_filter, str) else tag_filter
        except re.error as exc:
            raise ValueError(f"invalid tag filter {tag_filter!r}: {exc}") from None
        # Separate streams so that enabling a group or changing its period never changes another's story.
        self.rng = random.Random(f"{seed}|{profile.instance_type}|world")
        self.cpu_rng = random.Random(f"{seed}|{profile.instance_type}|cpu")
        self.jitter_rng = random.Random(f"{seed}|{profile.instance_type}|jitter")
        self.apps = [App(spec, profile, seed) for spec in profile.apps]
        self.index = 0
        self.t = 0.0
        self.last: dict[str, float] = {}
        """Group -> demo time of its last refresh."""
        self.cache: dict[str, Any] = {}
        self.ecc_pending = [dict.fromkeys(_ECC_KEYS, 0) for _ in range(profile.device_count)]
        rng = self.rng
        # Guarantee the rare events show up within a few minutes of any seed: a corrected one early, an
        # uncorrected one later; after that only the rates above.
        self.first_events = [
            (rng.uniform(3.0, 20.0), rng.randrange(profile.device_count), "mem_ecc_corrected"),
            (rng.uniform(25.0, 60.0), rng.randrange(profile.device_count), "sram_ecc_corrected"),
            (rng.uniform(60.0, 180.0), rng.randrange(profile.device_count), "mem_ecc_uncorrected"),
        ]
        self.other_memory = profile.host_memory * 0.012 + 1.0 * GiB
        self.vcpu_user = [0.0] * profile.vcpus
        self.vcpu_sys = [0.0] * profile.vcpus
        self.app_cpu: dict[int, tuple[float, float]] = {}
        self.instance_id = f"i-0de{rng.getrandbits(56):014x}"
        # Constant for the whole run: built once, shared by every report.
        self.instance_info = self._instance_info()
        self.hardware_info = self._hardware_info()
        self._vcpu_keys = [str(j) for j in range(profile.vcpus)]
        self._ecc_chances = [(key, rate * self.tick) for key, rate in _ECC_RATES.items()]
        """Per device and tick, the chance of each ECC event (every tick is ``self.tick`` long)."""
        self._runtime_groups = [g for g in RUNTIME_GROUPS if g in self.periods]
        self._k8s_key: tuple[int, ...] = ()
        self._k8s_info = (msgspec.Raw(), msgspec.Raw())
        """The encoded k8s core and device maps, for the apps and runs in ``_k8s_key``."""
        for app in self.apps:  # the first report already shows the apps that were running before the demo
            app.step(0.0, self.tick)
        self._cpu_step()

    # --- simulation -----------------------------------------------------------------------------------------

    def advance(self) -> None:
        """Move to the next tick."""
        self.index += 1
        self.t = self.index * self.tick
        dt = self.tick
        for app in self.apps:
            app.step(self.t, dt)
        self._ecc_step()
        self._cpu_step()
        self.other_memory = max(0.5 * GiB, self.other_memory + self.rng.gauss(0.0, 0.004) * GiB * math.sqrt(dt))

    def _ecc_step(self) -> None:
        rng = self.rng
        events: list[tuple[int, str]] = []
        while self.first_events and self.first_events[0][0] <= self.t:
            _, dev, key = self.first_events.pop(0)
            events.append((dev, key))
        random = rng.random
        for dev in range(self.profile.device_count):
            for key, chance in self._ecc_chances:
                events.extend([(dev, key)] * happenings(random, chance))
        for dev, key in events:
            if key == "mem_ecc_repairable_uncorrected" and not self.profile.repairable_ecc:
                continue
            self.ecc_pending[dev][key] += rng.choice((1, 1, 1, 2, 3)) if key.endswith("_corrected") else 1
            uncorrected = not key.endswith("_corrected")
            for app in self.apps:
                if dev in app.devices:
                    app.ecc_event(uncorrected)

    def _cpu_step(self) -> None:
        """Per-vCPU busy time: a little background everywhere plus each app's threads on its vCPU range."""
        random, n = self.cpu_rng.random, self.profile.vcpus
        user = [0.4 + 1.2 * random() for _ in range(n)]
        system = [0.2 + 0.6 * random() for _ in range(n)]
        self.app_cpu = {}
        for app in self.apps:
            cpu_busy = app.cpu_busy
            if cpu_busy <= 0.0:
                continue
            first, count = app.spec.vcpus
            count = min(count, n)
            au = asys = 0.0
            for k in range(count):
                j = (first + k) % n
                busy = cpu_busy * (0.55 + 0.9 * random())
                if busy > 95.0:
                    busy = 95.0
                u, s = busy * 0.82, busy * 0.18
                user[j] += u
                system[j] += s
                au += u
                asys += s
            self.app_cpu[id(app)] = (au / n, asys / n)
        self.vcpu_user, self.vcpu_sys = user, system

    # --- reports --------------------------------------------------------------------------------------------

    def _period(self, group: str, since: float | None) -> float:
        """The captured period as neuron-monitor writes it: the elapsed time, a little late."""
        base = self.periods[group] if since is None else max(self.t - since, self.tick)
        return round(base * (1.0 + self.jitter_rng.uniform(-0.00005, 0.0004)), 9)

    def _due(self, group: str) -> bool:
        if group not in self.periods:
            return False
        last = self.last.get(group)
        return last is None or self.t - last >= self.periods[group] - _EPS

    def report(self) -> dict[str, Any]:
        """The report for the current tick (call ``advance`` between reports)."""
        due = {g: self._due(g) for g in GROUPS}
        report: dict[str, Any] = {"neuron_runtime_data": self._runtimes(due)}
        system: dict[str, Any] = {}
        for group in SYSTEM_GROUPS:
            if group not in self.periods:
                continue
            if due[group]:
                render = _SYSTEM_RENDERERS[group]
                self.cache[group] = render(self, self._period(group, self.last.get(group)))
            system[group] = self.cache[group]
        report["system_data"] = system
        report["instance_info"] = self.instance_info
        report["neuron_hardware_info"] = self.hardware_info
        if self.profile.k8s and K8S_GROUP in self.periods:
            if due[K8S_GROUP]:
                self.cache[K8S_GROUP] = self._render_k8s(self._period(K8S_GROUP, self.last.get(K8S_GROUP)))
            report[K8S_GROUP] = self.cache[K8S_GROUP]
        for g, is_due in due.items():
            if is_due:
                self.last[g] = self.t
        return report

    def _runtimes(self, due: dict[str, bool]) -> list[dict[str, Any]]:
        out = []
        for app in self.apps:
            if not app.visible or (self.tag_filter is not None and not self.tag_filter.search(app.spec.tag)):
                continue
            report: dict[str, Any] = {}
            exiting = app.state == "exiting"
            for group in self._runtime_groups:
                cached = app.cache.get(group)
                if cached is None or due[group] or exiting:
                    since = cached[1] if cached else None
                    period = self._period(group, since)
                    if group == "neuron_runtime_vcpu_usage":
                        data = app.render_neuron_runtime_vcpu_usage(period, *self.app_cpu.get(id(app), (0.0, 0.0)))
                    else:
                        data = _RUNTIME_RENDERERS[group](app, period)
                    cached = (data, self.t)
                    app.cache[group] = cached
                report[group] = cached[0]
            out.append({"pid": app.pid, "address": "", "neuron_runtime_tag": app.spec.tag, "error": "",
                        "report": report})
        return out

    def _render_neuron_hw_counters(self, period: float) -> dict[str, Any]:
        devices = []
        keys = _ECC_KEYS if self.profile.repairable_ecc else _ECC_KEYS[:4]
        for i, pending in enumerate(self.ecc_pending):
            devices.append({"neuron_device_index": i, **{k: pending[k] for k in keys}})
        self.ecc_pending = [dict.fromkeys(_ECC_KEYS, 0) for _ in self.ecc_pending]
        return {"period": period, "neuron_devices": devices, "error": ""}

    def _render_vcpu_usage(self, period: float) -> dict[str, Any]:
        # The hottest loop of the simulator (one entry per vCPU, 192 on the big instances): r2() is inlined as
        # int(x * 100.0 + 0.5) / 100.0 and the two draws per vCPU (I/O wait, soft IRQ) are taken up front, in the
        # same order.
        random = self.cpu_rng.random
        draws = [random() for _ in range(2 * len(self.vcpu_user))]
        usage: dict[str, Any] = {}
        tu = ts = ti = tio = tsoft = 0.0
        for key, u, s, r, r_soft in zip(self._vcpu_keys, self.vcpu_user, self.vcpu_sys, draws[0::2], draws[1::2],
                                        strict=True):
            io = int(r * 1.5 * 100.0 + 0.5) / 100.0 if r < 0.2 else 0  # a little I/O wait on a fifth of the vCPUs
            soft = int(r_soft * 0.15 * 100.0 + 0.5) / 100.0
            busy = u + s + io + soft
            if busy > 99.9:  # min(1.0, 99.9 / busy) without the call; u * 1.0 is u
                scale = 99.9 / busy
                u, s = u * scale, s * scale
            u, s = int(u * 100.0 + 0.5) / 100.0, int(s * 100.0 + 0.5) / 100.0
            idle = 100.0 - u - s - io - soft
            idle = int(idle * 100.0 + 0.5) / 100.0 if idle > 0.0 else 0.0
            usage[key] = VcpuUsage(u, 0, s, idle, io, 0, soft)
            tu += u
            ts += s
            ti += idle
            tio += io
            tsoft += soft
        n = max(1, len(usage))
        average = {"user": r2(tu / n), "nice": 0, "system": r2(ts / n), "idle": r2(ti / n),
                   "io_wait": r2(tio / n), "irq": 0, "soft_irq": r2(tsoft / n)}
        busy_cpus = (tu + ts) / 100.0
        switches = int((1_500 + 2_600 * busy_cpus) * max(period, 0.01) * (0.95 + 0.1 * random()))
        return {"period": period, "average_usage": average, "usage_data": usage,
                "context_switch_count": max(0, switches), "error": ""}

    def _render_memory_info(self, period: float) -> dict[str, Any]:
        apps = sum(sum(a.host_memory().values()) for a in self.apps if a.visible)
        used = min(int(self.other_memory) + apps, self.profile.host_memory - GiB // 4)
        return {"period": period, "memory_total_bytes": self.profile.host_memory - self.profile.host_memory // 64,
                "memory_used_bytes": used // 4096 * 4096, "swap_total_bytes": 0, "swap_used_bytes": 0, "error": ""}

    def _render_k8s(self, period: float) -> dict[str, Any]:
        # Pods change only when an app starts or stops (a new run is a new pod): rebuild (and encode) only then.
        key = tuple(app.run_no if app.visible else 0 for app in self.apps)
        if key != self._k8s_key:
            cores, devices = self._k8s_maps()
            self._k8s_key, self._k8s_info = key, (msgspec.Raw(encode(cores)), msgspec.Raw(encode(devices)))
        raw_cores, raw_devices = self._k8s_info
        return {"period": period, "neuroncores_k8s_info": raw_cores, "neurondevices_k8s_info": raw_devices,
                "error": ""}

    def _k8s_maps(self) -> tuple[dict[str, Any], dict[str, Any]]:
        cores: dict[str, Any] = {}
        devices: dict[str, Any] = {}
        for app in self.apps:
            if not app.visible:
                continue
            entry = app.k8s_entry()
            for c in app.cores:
                cores[str(c)] = entry
            for d in app.devices:
                devices.setdefault(str(d), entry)  # a device shared by two pods shows the first
        return (dict(sorted(cores.items(), key=lambda kv: int(kv[0]))),
                dict(sorted(devices.items(), key=lambda kv: int(kv[0]))))

    def _instance_info(self) -> dict[str, Any]:
        p = self.profile
        return {
            "instance_name": "neuron-top-demo",
            "instance_id": self.instance_id,
            "instance_type": p.instance_type,
            "instance_availability_zone": p.az,
            "instance_availability_zone_id": p.az_id,
            "instance_region": p.region,
            "ami_id": "ami-0de0000000000demo",
            "subnet_id": "subnet-0de00demo",
            "error": "",
        }

    def _hardware_info(self) -> dict[str, Any]:
        p = self.profile
        return {
            "neuron_device_type": p.device_type,
            "neuron_device_version": p.device_version,
            "neuroncore_version": p.core_version,
            "neuron_device_count": p.device_count,
            "neuron_device_memory_size": p.device_memory,
            "neuroncore_per_device_count": p.cores_per_device,
            "logical_neuroncore_config": p.lnc,
            "error": "",
        }


_SYSTEM_RENDERERS: dict[str, Callable[[World, float], dict[str, Any]]] = {
    group: getattr(World, f"_render_{group}") for group in SYSTEM_GROUPS
}
_RUNTIME_RENDERERS: dict[str, Callable[[App, float], dict[str, Any]]] = {
    group: getattr(App, f"render_{group}") for group in RUNTIME_GROUPS if group != "neuron_runtime_vcpu_usage"
}

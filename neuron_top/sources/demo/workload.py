"""One simulated Neuron application: its life cycle, its load, and its runtime metric groups.

An app is off, loading (memory grows, models appear one by one), running, or exiting (reported once more with
the vCPU error a real monitor shows when /proc/<pid> vanished, then gone, its cores free). Its activity ``level``
(0..1, the utilisation of its cores) follows the shape of its kind; everything else derives from the level:
FLOPS, executions per period, latency percentiles, vCPU use. Each app draws from its own ``random.Random`` so the
other apps, the tag filter and the group periods never change its story.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import msgspec

from neuron_top.sources.demo.profiles import AppSpec, InstanceProfile, MiB

__all__ = [
    "CORE_MEMORY", "DAY", "ERROR_KINDS", "HOST_MEMORY", "OUTCOMES", "PERCENTILES", "App", "CoreCounters",
    "PhysicalCore", "r2",
]

PERCENTILES = ("p0", "p1", "p25", "p50", "p75", "p99", "p100")
ERROR_KINDS = ("generic", "numerical", "transient", "model", "runtime", "hardware")
OUTCOMES = ("completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input",
            "failed_to_queue")
CORE_MEMORY = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
HOST_MEMORY = ("application_memory", "constants", "dma_buffers", "tensors")

encode = msgspec.json.Encoder().encode
"""The simulator's one JSON encoder: reports, and the parts of them that are kept encoded between ticks."""

DAY = 600.0
"""Length of one simulated "day" of inference traffic, seconds: long enough to look slow, short enough to see."""

# Rare execution errors, per second of running.
_ERROR_RATES: dict[str, float] = {"generic": 0.0008, "model": 0.0004, "runtime": 0.0004}
_NUMERICAL_RATE = {"train": 0.004, "serve": 0.0003, "batch": 0.001, "dev": 0.004}
_INCORRECT_INPUT_RATE = {"train": 0.0, "serve": 0.003, "batch": 0.0005, "dev": 0.01}
_CONTAINER = {"train": "trainer", "serve": "server", "batch": "worker", "dev": "jupyter"}


class CoreCounters(msgspec.Struct, omit_defaults=True):
    """One core's entry in ``neuroncores_in_use``; the fields a profile does not report stay None and are left out.

    A Struct rather than a dict because there is one per core per tick: msgspec builds and encodes it about twice
    as fast, and the JSON is the same.
    """

    neuroncore_utilization: float
    flops: int | None = None
    effective_flops: int | None = None
    v3d: dict[str, PhysicalCore] | None = None


class PhysicalCore(msgspec.Struct):
    """A physical core behind a logical one, in ``v3d``."""

    neuroncore_utilization: float


OU_TAU = 25.0
"""Seconds: how fast the apps' load wander returns to its mean."""
OU_SIGMA = 0.07
"""Its noise per square-root second."""
EULER_MAX_DT = 5.0
"""Up to this step (the periods recordings, tests and screenshots use) the wander takes the Euler step it always
has, so those reports stay byte for byte what they were; beyond it the exact step."""


def ou_step(x: float, dt: float, noise: float) -> float:
    """The wander ``x`` after ``dt`` seconds, ``noise`` a standard normal draw.

    Why not always Euler: ``x - x*dt/tau`` multiplies ``x`` by ``1 - dt/tau``, which is below -1 once ``dt`` passes
    ``2*tau`` (50 s): the wander then doubled in size every report and ``exp`` of it overflowed after about twenty
    reports of a 60 s demo. The exact step is a decay by ``exp(-dt/tau)`` plus noise of the stationary spread, so
    any period (0.01 s to 10 min) keeps it bounded."""
    if dt <= EULER_MAX_DT:
        return x + (-x * dt / OU_TAU + OU_SIGMA * math.sqrt(dt) * noise)  # the same float operations as ever
    decay = math.exp(-dt / OU_TAU)
    return x * decay + OU_SIGMA * math.sqrt(OU_TAU / 2.0 * (1.0 - decay * decay)) * noise


BERNOULLI_MAX = 0.5
"""Expected events per step up to which one draw decides whether one event happens (as at the usual periods)."""


def happenings(random: Callable[[], float], expected: float) -> int:
    """How many of a rare event happen in one step where ``expected`` are expected.

    At the usual periods ``expected`` is far below 1 and one draw decides (one event or none, the draws the demo
    always made, so its reports stay the same). At long periods (a 10-minute demo expects several) a Poisson
    count: a single draw would cap every count at 1 and make every report carry every kind of error."""
    if expected <= BERNOULLI_MAX:
        return 1 if random() < expected else 0
    limit, k, p = math.exp(-expected), 0, random()  # Knuth: multiply uniforms until below e^-expected
    while p > limit:
        k += 1
        p *= random()
    return k


def _clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def r2(x: float) -> float:
    """Round a non-negative percentage to 2 decimals, like neuron-monitor's; faster than round() (it adds up)."""
    return int(x * 100.0 + 0.5) / 100.0


def _align(n: float, to: int = 64) -> int:
    return int(n) // to * to


class App:
    """The state of one app; ``step`` advances it, the ``render_*`` methods build its metric groups."""

    def __init__(self, spec: AppSpec, profile: InstanceProfile, seed: int) -> None:
        self.spec = spec
        self.profile = profile
        self.rng = random.Random(f"{seed}|{profile.instance_type}|{spec.tag}|{spec.first_core}")
        rng = self.rng
        self.cores = tuple(range(spec.first_core, spec.first_core + spec.cores))
        self.devices = tuple(sorted({c // profile.cores_per_device for c in self.cores}))
        self.pid = rng.randint(2_000, 400_000)
        self.state = "off"
        self.t_state = 0.0
        self.load_time = 1.0
        self.stop_at: float | None = None
        self.next_start = 0.0
        self.level = 0.0
        self.overflow = 0.0
        self.ou = 0.0
        self.phase = rng.random()
        self.step_len = rng.uniform(5.0, 8.0)
        self.next_ckpt = rng.uniform(40.0, 120.0)
        self.ckpt_end = -1.0
        self.burst_end = -1.0
        self.burst_gain = 1.0
        self.dip_end = -1.0
        self.cpu_busy = 0.0
        self.pending_errors = dict.fromkeys(ERROR_KINDS, 0)
        self.pending_outcomes = dict.fromkeys(OUTCOMES, 0)
        self.exec_acc = 0.0
        self.cache: dict[str, tuple[dict[str, Any], float]] = {}
        self._level_step = getattr(self, f"_level_{spec.kind}")
        # Report keys are fixed per app: formatted once, not per core and tick.
        self._core_keys = [str(c) for c in self.cores]
        self._physical_keys = [[f"nc_v3.{c * profile.lnc + j}" for j in range(profile.lnc)] for c in self.cores]
        zero = dict.fromkeys(("neuroncore_utilization", *profile.flops_keys), 0)
        self._zero_cores = {str(c): zero for c in range(profile.core_count)} if profile.zero_fill else {}
        self._memory_key: tuple[int, str, float] | None = None
        self._memory_parts: tuple[dict[str, int], msgspec.Raw, msgspec.Raw] = ({}, msgspec.Raw(), msgspec.Raw())
        self.run_no = 0
        self._load_progress = 0.0
        self.ever_ran = spec.start == (0.0, 0.0)
        self._new_run_identity()
        if spec.start == (0.0, 0.0):
            self.state = "running"
            self.t_state = -rng.uniform(300.0, 3_000.0)  # started long before the demo: warm-up is over
            if spec.run is not None:
                self.stop_at = rng.uniform(*spec.run)
        else:
            self.next_start = rng.uniform(*spec.start)

    # --- life cycle -----------------------------------------------------------------------------------------

    @property
    def visible(self) -> bool:
        """Whether the app shows in neuron_runtime_data this tick."""
        return self.state != "off"

    @property
    def progress(self) -> float:
        """Loading progress 0..1; 1 once running."""
        return 1.0 if self.state in ("running", "exiting") else 0.0 if self.state == "off" else self._load_progress

    def _new_run_identity(self) -> None:
        """Per run: a new pid, fresh model uuids/ids/names and the per-core memory this load will reach."""
        rng, spec = self.rng, self.spec
        if self.run_no:
            self.pid += rng.randint(40, 6_000)
        self.run_no += 1
        self.models: list[dict[str, Any]] = []
        model_id = 10_001
        for m in spec.models:
            x = f"{rng.getrandbits(128):032x}"
            name = m.name.format(n=rng.randrange(10**17, 10**19), h=f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}")
            sizes = {
                "constants": _align(m.constants * rng.uniform(0.985, 1.015)),
                "model_code": _align(m.code * rng.uniform(0.97, 1.03)),
            }
            self.models.append({"name": name, "uuid": f"{rng.getrandbits(128):032x}", "model_id": model_id,
                                "spec": m, "sizes": sizes})
            model_id += rng.choice((1, 1, 2, 3))
        self.core_gain = [1.0 + rng.uniform(-0.03, 0.02) for _ in self.cores]
        skews = [rng.uniform(-0.08, 0.08) for _ in self.cores]
        # Physical core j of a logical one runs at u * (1 + skew) for even j, u * (1 - skew) for odd j.
        self.physical_gain = [[(key, 1.0 + (1.0 if j % 2 == 0 else -1.0) * skew) for j, key in enumerate(keys)]
                              for keys, skew in zip(self._physical_keys, skews, strict=True)]
        self.effective = rng.uniform(0.86, 0.97)
        self.runtime_memory = _align(rng.uniform(0.5, 2.0) * MiB)
        # Like a Deployment's pod: <name>-<replica set hash>-<5 random characters>.
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        self.pod = "-".join((spec.tag, "".join(rng.choice(alphabet) for _ in range(10)),
                             "".join(rng.choice(alphabet) for _ in range(5))))
        self.host_tensors = 256 * 1024 * len(self.cores) if spec.kind == "serve" else 0

    def step(self, t: float, dt: float) -> None:
        """Advance the life cycle and the load to time ``t``."""
        spec, rng = self.spec, self.rng
        if self.state == "exiting":
            self.state = "off"
            self.next_start = t + rng.uniform(*spec.pause)
            self.level = 0.0
            self.cache.clear()
        if self.state == "off" and t >= self.next_start:
            if self.ever_ran:
                self._new_run_identity()
            self.ever_ran = True
            self.state = "loading"
            self.t_state = t
            self.load_time = rng.uniform(*spec.load)
            self.cache.clear()
            if spec.run is not None:
                self.stop_at = None
        elif self.state == "loading" and t - self.t_state >= self.load_time:
            self.state = "running"
            self.t_state = t
            if spec.run is not None:
                self.stop_at = t + rng.uniform(*spec.run)
        elif self.state == "running" and self.stop_at is not None and t >= self.stop_at:
            self.state = "exiting"
            self.level = 0.0
            self.cpu_busy = 0.0
            return
        if self.state == "loading":
            self._load_progress = _clamp((t - self.t_state) / self.load_time, 0.0, 1.0)
            self.level = 0.0
            self.cpu_busy = _clamp(spec.cpu * 1.4 + 10.0, 0.0, 95.0)
            return
        if self.state != "running":
            self.level = 0.0
            self.cpu_busy = 0.0
            return
        # Ornstein-Uhlenbeck wander shared by all kinds: slow, mean-reverting, never a jump.
        self.ou = ou_step(self.ou, dt, rng.gauss(0.0, 1.0))
        self._level_step(t, dt)
        self._errors(dt)
        rate = spec.rate * self.level / (spec.util / 100.0) if spec.util else 0.0
        self.exec_acc += max(0.0, rate * dt * (1.0 + 0.06 * rng.gauss(0.0, 1.0)))
        share = self.level / (spec.util / 100.0) if spec.util else 0.0
        self.cpu_busy = _clamp(spec.cpu * (0.25 + 0.75 * min(share, 1.3)) * (1 + 0.1 * rng.gauss(0, 1)), 0, 100)

    def _level_train(self, t: float, dt: float) -> None:
        since = t - self.t_state
        warm = _clamp(since / 25.0, 0.0, 1.0)
        if t >= self.next_ckpt and self.ckpt_end < self.next_ckpt:
            self.ckpt_end = t + self.rng.uniform(8.0, 14.0)
        if t < self.ckpt_end:  # checkpoint: the cores wait for the host to write
            self.level = 0.012 + 0.01 * self.rng.random()
            if t + dt >= self.ckpt_end:
                self.next_ckpt = self.ckpt_end + self.rng.uniform(150.0, 260.0)
            return
        ph = ((since / self.step_len) + self.phase) % 1.0
        comm = 0.4 if ph >= 0.72 else 1.0  # gradient all-reduce at the end of each step
        target = self.spec.util / 100.0 * (1.0 + self.ou * 0.5) * comm * (0.3 + 0.7 * warm)
        if warm < 1.0:
            target *= 0.75 + 0.5 * self.rng.random()  # first steps: compile cache misses, uneven
        self.level = _clamp(target, 0.0, 0.995)

    def _level_serve(self, t: float, dt: float) -> None:
        rng = self.rng
        wave = 0.5 - 0.5 * math.cos(2.0 * math.pi * (t / DAY + self.phase))
        if t >= self.burst_end and rng.random() < dt / 60.0:
            self.burst_end = t + rng.uniform(5.0, 20.0)
            self.burst_gain = rng.uniform(1.3, 1.9)
        burst = self.burst_gain if t < self.burst_end else 1.0
        demand = (0.45 + 0.9 * wave) * math.exp(self.ou) * burst
        demand *= _clamp((t - self.t_state) / 10.0, 0.05, 1.0)  # a new replica takes traffic gradually
        want = self.spec.util / 100.0 * demand
        self.level = _clamp(want, 0.0, 0.99)
        self.overflow = max(0.0, want - 1.1)  # the queue absorbs a mild excess as latency

    def _level_batch(self, t: float, dt: float) -> None:
        rng = self.rng
        if t >= self.dip_end and rng.random() < dt / 30.0:
            self.dip_end = t + rng.uniform(1.0, 3.0)  # next shard of input being read
        base = self.spec.util / 100.0 * (1.0 + 0.25 * self.ou)
        if t < self.dip_end:
            base *= 0.1
        self.level = _clamp(base * _clamp((t - self.t_state) / 6.0, 0.2, 1.0), 0.0, 0.995)

    def _level_dev(self, t: float, dt: float) -> None:
        rng = self.rng
        if t >= self.burst_end and rng.random() < dt / 25.0:
            self.burst_end = t + rng.uniform(3.0, 12.0)
        self.level = self.spec.util / 100.0 * rng.uniform(0.6, 1.0) if t < self.burst_end else 0.0

    def _errors(self, dt: float) -> None:
        """Rare failures; the serving overload turns into queue rejections and timeouts."""
        rng, kind = self.rng, self.spec.kind
        if self.level <= 0.0:
            return
        for name, rate in _ERROR_RATES.items():
            k = happenings(rng.random, rate * dt)
            self.pending_errors[name] += k
            self.pending_outcomes["completed_with_err"] += k
        k = happenings(rng.random, _NUMERICAL_RATE[kind] * dt)
        self.pending_errors["numerical"] += k
        self.pending_outcomes["completed_with_num_err"] += k
        self.pending_outcomes["incorrect_input"] += happenings(rng.random, _INCORRECT_INPUT_RATE[kind] * dt)
        if self.overflow > 0.0:
            self.pending_outcomes["failed_to_queue"] += int(self.overflow * self.spec.rate * dt * 0.6 + rng.random())
            if rng.random() < min(1.0, self.overflow * 3.0) * dt:
                self.pending_outcomes["timed_out"] += 1

    def ecc_event(self, uncorrected: bool) -> None:
        """An ECC event on one of this app's devices: corrected ones are transient, uncorrected fail an execution."""
        if self.state != "running":
            return
        if uncorrected:
            self.pending_errors["hardware"] += 1
            self.pending_outcomes["completed_with_err"] += 1
        else:
            self.pending_errors["transient"] += 1

    # --- metric groups --------------------------------------------------------------------------------------

    def core_utils(self) -> list[float]:
        """This tick's utilisation of each of the app's cores, percent."""
        if self.level <= 0.0:
            return [0.0] * len(self.cores)
        gauss = self.rng.gauss
        base = self.level * 100.0
        return [min(max(base * gain + gauss(0.0, 1.2), 0.0), 100.0) for gain in self.core_gain]

    def render_neuroncore_counters(self, period: float) -> dict[str, Any]:
        # Runs for every core of every app each tick: r2() is inlined as int(x * 100.0 + 0.5) / 100.0.
        p = self.profile
        in_use: dict[str, Any] = dict(self._zero_cores)
        flops_keys = p.flops_keys
        with_flops, with_effective = "flops" in flops_keys, "effective_flops" in flops_keys
        peak, mfu, effective, random = p.peak_flops, self.spec.mfu, self.effective, self.rng.random
        physical = p.lnc > 1
        flops: int | None = None
        effective_flops: int | None = None
        v3d: dict[str, PhysicalCore] | None = None
        for key, u, gains in zip(self._core_keys, self.core_utils(), self.physical_gain, strict=True):
            if flops_keys:
                all_flops = int(u / 100.0 * peak * mfu * (1.0 + 0.02 * random()))
                flops = all_flops if with_flops else None
                effective_flops = int(all_flops * effective) if with_effective else None
            if physical:  # the physical cores behind a logical one; their mean is the logical utilisation
                v3d = {}
                for k, gain in gains:
                    v = u * gain
                    v3d[k] = PhysicalCore(int((v if v < 100.0 else 100.0) * 100.0 + 0.5) / 100.0)
            in_use[key] = CoreCounters(int(u * 100.0 + 0.5) / 100.0, flops, effective_flops, v3d)
        return {"period": period, "neuroncores_in_use": in_use, "error": ""}

    def render_execution_stats(self, period: float) -> dict[str, Any]:
        completed = int(self.exec_acc)
        self.exec_acc -= completed
        outcomes = dict(self.pending_outcomes)
        outcomes["completed"] = completed
        errors = dict(self.pending_errors)
        self.pending_errors = dict.fromkeys(ERROR_KINDS, 0)
        self.pending_outcomes = dict.fromkeys(OUTCOMES, 0)
        latency: dict[str, Any] = {"total_latency": None, "device_latency": None}
        if completed > 0:
            latency = self._latencies(completed)
        return {"period": period, "error_summary": errors, "execution_summary": outcomes, "latency_stats": latency,
                "error": ""}

    def _latencies(self, n: int) -> dict[str, Any]:
        """Ordered percentiles that rise with load; total = device + host overhead (both ordered, so total >= device)."""
        rng, spec = self.rng, self.spec
        rho = _clamp(self.level, 0.0, 0.97)
        p50 = spec.latency * (1.0 + 0.25 * rho) * (1.0 + 0.03 * rng.gauss(0.0, 1.0))
        tail = 1.15 + 1.6 * rho * rho + (0.6 if spec.kind == "train" else 0.0)
        mult = [0.8, 0.86, 0.95, 1.0, 1.06, tail, tail * rng.uniform(1.05, 1.5)]
        dev = []
        prev = 0.0
        random = rng.random
        for m in mult:  # jitter each step up, never down: order is kept
            x = p50 * m * (1.0 + 0.01 * random())
            if x > prev:
                prev = x
            dev.append(prev)
        queue = spec.latency * (0.08 + (0.35 * rho / (1.0 - rho) if spec.kind == "serve" else 0.02))
        over = [queue * m for m in (0.5, 0.6, 0.85, 1.0, 1.2, 2.5, 4.0)]
        if n == 1:
            dev = [dev[3]] * 7
            over = [over[3]] * 7
        elif n < 100:  # too few samples for p1 to differ from p0
            dev[1], over[1] = dev[0], over[0]
        total = [d + o for d, o in zip(dev, over, strict=True)]
        return {"total_latency": {k: round(v, 9) for k, v in zip(PERCENTILES, total, strict=True)},
                "device_latency": {k: round(v, 9) for k, v in zip(PERCENTILES, dev, strict=True)}}

    def core_memory(self) -> dict[str, int]:
        """Device bytes per core by category, growing while models load and then steady."""
        p = self.progress
        n = len(self.models)
        done = p * n
        constants = code = 0
        for i, m in enumerate(self.models):
            frac = _clamp(done - i, 0.0, 1.0)
            constants += int(m["sizes"]["constants"] * frac)
            code += int(m["sizes"]["model_code"] * (1.0 if frac > 0 else 0.0))
        spec = self.spec
        return {
            "constants": _align(constants),
            "model_code": code,
            "model_shared_scratchpad": spec.scratchpad if p > 0.0 else 0,
            "runtime_memory": self.runtime_memory if p > 0.0 else 0,
            "tensors": _align(spec.tensors * _clamp((p - 0.85) / 0.15, 0.0, 1.0)),
        }

    def host_memory(self) -> dict[str, int]:
        """Host bytes by category (shared with the last ``memory_used``: do not modify)."""
        return self._memory()[0]

    def _memory(self) -> tuple[dict[str, int], msgspec.Raw, msgspec.Raw]:
        """Host memory, and ``neuron_runtime_used_bytes`` and ``loaded_models`` already encoded.

        They depend only on the run, the state and the load progress, so they are rebuilt only when one of those
        changes (every tick while loading, then once): steady apps would otherwise rebuild a subgraph per core
        and model every tick. Kept as JSON because they are more than half of a trn2.48xlarge report, which the
        encoder would otherwise walk again every tick.
        """
        key = (self.run_no, self.state, self.progress)
        if key != self._memory_key:
            self._memory_key = key
            self._memory_parts = self._build_memory()
        return self._memory_parts

    def _build_memory(self) -> tuple[dict[str, int], msgspec.Raw, msgspec.Raw]:
        prof = self.profile
        per_core = self.core_memory()
        host = self._host_memory()
        cores_mem: dict[str, Any] = {}
        if prof.zero_fill:
            zero = dict.fromkeys(CORE_MEMORY, 0)
            cores_mem = {str(c): zero for c in range(prof.core_count)}
        for key in self._core_keys:
            cores_mem[key] = per_core
        device_total = sum(per_core.values()) * len(self.cores)
        used = {
            "host": sum(host.values()),
            "neuron_device": device_total,
            "usage_breakdown": {"host": host, "neuroncore_memory_usage": cores_mem},
        }
        return host, msgspec.Raw(encode(used)), msgspec.Raw(encode(self._loaded_models()))

    def _host_memory(self) -> dict[str, int]:
        p = self.progress
        loaded = sum(1 for i in range(len(self.models)) if p * len(self.models) >= i + 1)
        return {
            "application_memory": _align(self.spec.host_memory * (0.25 + 0.75 * p), 4096),
            "constants": 0,
            "dma_buffers": (1 + loaded) * len(self.cores) * 2 * MiB,
            "tensors": self.host_tensors if p >= 1.0 else 0,
        }

    def render_memory_used(self, period: float) -> dict[str, Any]:
        _, used, models = self._memory()
        return {"period": period, "neuron_runtime_used_bytes": used, "loaded_models": models, "error": ""}

    def _loaded_models(self) -> list[dict[str, Any]]:
        prof = self.profile
        n = len(self.models)
        out = []
        for i, m in enumerate(self.models):
            if self.progress * n < i + 1:
                break  # models appear once loaded
            spec = m["spec"]
            dev = {"constants": m["sizes"]["constants"], "model_code": m["sizes"]["model_code"], "runtime_memory": 0,
                   "tensors": 0}
            host = {"application_memory": spec.host, "constants": 0, "dma_buffers": 524288, "tensors": 0}
            used = {"host": sum(host.values()), "neuron_device": sum(dev.values()),
                    "usage_breakdown": {"host": host, "neuron_device": dev}}
            subgraphs: dict[str, Any] = {}
            for k, core in enumerate(self.cores):
                local = core % prof.cores_per_device
                sg: dict[str, Any] = {"memory_used_bytes": used, "neuroncore_index": local,
                                      "neuron_device_index": core // prof.cores_per_device}
                if prof.subgraph_core_key:
                    sg[prof.subgraph_core_key] = f"nc_{prof.subgraph_core_key}.{local}"
                subgraphs[f"sg_{k:02d}"] = sg
            out.append({"name": m["name"], "uuid": m["uuid"], "model_id": m["model_id"],
                        "is_running": bool(spec.running and self.state == "running"), "subgraphs": subgraphs})
        return out

    def render_neuron_runtime_vcpu_usage(self, period: float, user: float, system: float) -> dict[str, Any]:
        error = f"open /proc/{self.pid}/stat: no such file or directory" if self.state == "exiting" else ""
        if error:
            user = system = 0.0
        return {"period": period, "vcpu_usage": {"user": r2(user), "system": r2(system)}, "error": error}

    def k8s_entry(self) -> dict[str, Any]:
        return {"pod_name": self.pod, "namespace": self.spec.namespace, "container_name": [_CONTAINER[self.spec.kind]]}

"""Decode + snapshot of a trn2.48xlarge-size report vs stdlib json + a dict walk, measured in the same run.

    python benchmarks/bench_decode.py [--repeat 15] [--number 100] [--held 600]

``--held N`` also times a full ``gc.collect()`` while N decoded snapshots are alive (ten minutes of 1 Hz history,
as replay keeps): what a gen-2 collection costs the UI thread.

Both paths produce what a dashboard frame needs: per-app core maps (int keys), the all-apps per-core merge,
per-vCPU usage sorted by CPU, ECC per device and per-app memory totals. Prints medians and the ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from neuron_top.decode import decode_report
from neuron_top.snapshot import Snapshot, snapshot_from
from neuron_top.sources.demo import trn2_benchmark_report


def ours(data: bytes) -> object:
    report, _ = decode_report(data)
    return ours_frame(Snapshot(report, 0.0))


def ours_frame(s: Snapshot) -> object:
    return (s.all.cores, s.vcpus, s.ecc, [a.used_bytes for a in s.apps], s.device_count)


def stdlib(data: bytes) -> object:
    d = json.loads(data)
    apps = []
    merged: dict[int, float] = {}
    for rt in d.get("neuron_runtime_data") or ():
        rep = rt.get("report") or {}
        nc = (rep.get("neuroncore_counters") or {}).get("neuroncores_in_use") or {}
        cores = {int(k): v for k, v in nc.items()}
        for i, c in cores.items():
            merged[i] = merged.get(i, 0.0) + (c.get("neuroncore_utilization") or 0.0)
        used = (rep.get("memory_used") or {}).get("neuron_runtime_used_bytes") or {}
        apps.append((rt.get("pid"), cores, (used.get("host", 0), used.get("neuron_device", 0))))
    sysd = d.get("system_data") or {}
    vc = (sysd.get("vcpu_usage") or {}).get("usage_data") or {}
    vcpus = sorted((int(k), v) for k, v in vc.items())
    ecc = sorted(((x.get("neuron_device_index"), x) for x in (sysd.get("neuron_hw_counters") or {})
                  .get("neuron_devices") or ()), key=lambda t: t[0])
    hw = d.get("neuron_hardware_info") or {}
    return (merged, vcpus, ecc, apps, hw.get("neuron_device_count"))


def bench(fn, data: bytes, repeat: int, number: int) -> float:
    times = timeit.repeat(lambda: fn(data), repeat=repeat, number=number)
    return statistics.median(times) / number


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=100)
    ap.add_argument("--held", type=int, default=0, help="also time gc.collect() with this many snapshots alive")
    args = ap.parse_args()
    data = trn2_benchmark_report(seed=0)
    d = json.loads(data)
    rts = d["neuron_runtime_data"]
    print(f"report: {len(data) / 1024:.0f} KB, {len(rts)} runtimes, "
          f"{d['neuron_hardware_info']['neuron_device_count']} devices, "
          f"{len(d['system_data']['vcpu_usage']['usage_data'])} vCPUs")
    # Interleave short runs of both so they share the machine's noise; the ratio is taken per pair.
    ours_t, std_t = [], []
    for _ in range(args.repeat):
        ours_t.append(bench(ours, data, 3, args.number))
        std_t.append(bench(stdlib, data, 3, args.number))
    ours_ms, std_ms = statistics.median(ours_t) * 1e3, statistics.median(std_t) * 1e3
    ratio = statistics.median(s / o for o, s in zip(ours_t, std_t, strict=True))
    print(f"msgspec decode + Snapshot : {ours_ms:.3f} ms/report (median of {args.repeat} interleaved runs)")
    print(f"json.loads + dict walk    : {std_ms:.3f} ms/report (median)")
    print(f"speed-up                  : {ratio:.2f}x (median of the per-run ratios)")
    if args.held:
        held = [snapshot_from(data, float(i)) for i in range(args.held)]
        for s in held:
            ours_frame(s)
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            gc.collect()
            times.append(time.perf_counter() - t0)
        print(f"gc.collect() with {len(held)} snapshots alive: {statistics.median(times) * 1e3:.1f} ms (median of 7), "
              f"{len(gc.get_objects())} objects tracked")


if __name__ == "__main__":
    main()

"""Benchmark reading recordings: index build time, random seek latency and memory, on a ~1 GB recording.

The recording is generated into a temporary directory (deleted afterwards) from one synthetic trn2.48xlarge-size
report line (~120 KB: 64 logical NeuronCores with their physical cores, several runtimes, 16 devices, 192 vCPUs)
repeated with a varying ``neuron_top.ts``. Indexing is compared with the plainest way to find lines in Python,
``for line in f`` over the same file in the same run (medians of several runs, page cache warm for both).

    python benchmarks/bench_recording.py                 # ~1 GB, the figures in BENCHMARKS.md
    python benchmarks/bench_recording.py --size-mb 100   # a quick run
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neuron_top.recording.index import RecordingIndex
from neuron_top.recording.writer import RecordingWriter


def trn2_report(target: int = 120_000, rng: random.Random | None = None) -> bytes:
    """A report shaped like trn2.48xlarge output (LNC=2), grown with runtimes until about ``target`` bytes.

    With ``rng``, utilisation and flops vary like live data (so compression ratios are realistic)."""
    r = rng.random if rng else lambda: 0.5
    cores = {str(c): {"neuroncore_utilization": round(100 * r(), 6), "flops": int(1e12 * r()),
                      "effective_flops": int(1e12 * r()),
                      "v3d": {f"nc_v3.{2 * c + k}": {"neuroncore_utilization": round(100 * r(), 6)}
                              for k in (0, 1)}}
             for c in range(64)}
    mem_cores = {str(c): {"constants": 193986816, "model_code": 176285056, "model_shared_scratchpad": 0,
                          "runtime_memory": 1048576, "tensors": 20971520} for c in range(64)}
    lat = {f"p{p}": 0.011 + p / 1e6 for p in (0, 1, 25, 50, 75, 99, 100)}

    def runtime(pid: int) -> dict:
        return {"pid": pid, "address": "", "neuron_runtime_tag": f"llama-70b-shard-{pid}", "error": "",
                "report": {
                    "neuroncore_counters": {"period": 1.000113182, "neuroncores_in_use": cores, "error": ""},
                    "execution_stats": {"period": 1.000613214,
                                        "error_summary": dict.fromkeys(("generic", "numerical", "transient",
                                                                        "model", "runtime", "hardware"), 0),
                                        "execution_summary": {"completed": 123, "completed_with_err": 0,
                                                              "completed_with_num_err": 0, "timed_out": 0,
                                                              "incorrect_input": 0, "failed_to_queue": 0},
                                        "latency_stats": {"total_latency": lat, "device_latency": lat},
                                        "error": ""},
                    "memory_used": {"period": 1.00001, "neuron_runtime_used_bytes": {
                        "host": 6997643264, "neuron_device": 12519788544,
                        "usage_breakdown": {"host": {"application_memory": 6996594688, "constants": 0,
                                                     "dma_buffers": 1048576, "tensors": 0},
                                            "neuroncore_memory_usage": mem_cores}}, "error": ""},
                    "neuron_runtime_vcpu_usage": {"period": 1.00001, "vcpu_usage": {"user": 42.5, "system": 3.1},
                                                  "error": ""}}}

    report = {
        "neuron_runtime_data": [],
        "system_data": {
            "neuron_hw_counters": {"period": 1.0, "neuron_devices": [
                {"neuron_device_index": d, "mem_ecc_corrected": 0, "mem_ecc_uncorrected": 0,
                 "sram_ecc_corrected": 0, "sram_ecc_uncorrected": 0} for d in range(16)], "error": ""},
            "vcpu_usage": {"period": 1.0, "average_usage": {"user": 12.0, "nice": 0.0, "system": 2.0,
                                                            "idle": 85.0, "io_wait": 0.5, "irq": 0.0,
                                                            "soft_irq": 0.5},
                           "usage_data": {str(c): {"user": 12.0 + c / 100, "nice": 0.0, "system": 2.0,
                                                   "idle": 85.0, "io_wait": 0.5, "irq": 0.0, "soft_irq": 0.5}
                                          for c in range(192)},
                           "context_switch_count": 123456, "error": ""},
            "memory_info": {"period": 1.0, "memory_total_bytes": 2164195004416, "memory_used_bytes": 412316860416,
                            "swap_total_bytes": 0, "swap_used_bytes": 0, "error": ""}},
        "instance_info": {"instance_name": "bench", "instance_id": "i-0011223344556677a",
                          "instance_type": "trn2.48xlarge", "instance_availability_zone": "us-east-2b",
                          "instance_availability_zone_id": "use2-az2", "instance_region": "us-east-2",
                          "ami_id": "ami-0011223344556677b", "subnet_id": "subnet-112233ee", "error": ""},
        "neuron_hardware_info": {"neuron_device_type": "trainium2", "neuron_device_version": "v4",
                                 "neuroncore_version": "v3d", "neuron_device_count": 16,
                                 "neuron_device_memory_size": 103079215104, "neuroncore_per_device_count": 4,
                                 "logical_neuroncore_config": 2, "error": ""},
    }
    pid = 1000
    while len(json.dumps(report, separators=(",", ":"))) < target:
        report["neuron_runtime_data"].append(copy.deepcopy(runtime(pid)))
        pid += 1
    return json.dumps(report, separators=(",", ":")).encode()


def generate(path: Path, size_mb: int) -> int:
    line = trn2_report()
    body = line[:-1] + b',"neuron_top":{"ts":'
    target, written, n, ts = size_mb << 20, 0, 0, 1_763_000_000.0
    with path.open("wb", buffering=16 << 20) as f:
        while written < target:
            out = b"%s%.6f}}\n" % (body, ts)
            f.write(out)
            written += len(out)
            n += 1
            ts += 1.0 + random.random() * 0.01
    return n


def baseline_lines(path: Path) -> int:
    n = 0
    with path.open("rb") as f:
        for _line in f:
            n += 1
    return n


def build_index(path: Path) -> RecordingIndex:
    ix = RecordingIndex(path)
    ix.wait()
    return ix


def median_time(fn, runs: int) -> tuple[float, object, float]:  # type: ignore[no-untyped-def]
    """Median wall time, the last result, and the median CPU time of the whole process (all threads).

    CPU time is reported next to wall time because this machine is shared: when other jobs hold the cores,
    wall time grows but CPU time barely does."""
    times, cpu, result = [], [], None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if isinstance(result, RecordingIndex):
            result.close()
    return statistics.median(times), result, statistics.median(cpu)


def rss_kb(field: str = "VmRSS") -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_during(fn) -> tuple[object, int, int]:  # type: ignore[no-untyped-def]
    """Run ``fn`` while sampling RSS and anonymous RSS; return its result and the peaks (KiB)."""
    peaks = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peaks[0] = max(peaks[0], rss_kb("VmRSS"))
            peaks[1] = max(peaks[1], rss_kb("RssAnon"))
            time.sleep(0.002)

    t = threading.Thread(target=sample)
    t.start()
    try:
        result = fn()
    finally:
        done.set()
        t.join()
    return result, peaks[0], peaks[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024, help="size of the generated recording (default 1024)")
    ap.add_argument("--runs", type=int, default=5, help="runs per timing (median)")
    ap.add_argument("--seeks", type=int, default=2000, help="random seeks to time")
    ap.add_argument("--compressed-mb", type=int, default=64,
                    help="size of the gz/zst recordings to time (0 to skip; they are slower by design)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-recording-"))
    try:
        path = tmp / "bench.ndjson"
        t0 = time.perf_counter()
        count = generate(path, args.size_mb)
        size = path.stat().st_size
        line_kb = size / count / 1024
        print(f"generated {size / 2**20:.0f} MiB, {count} reports of {line_kb:.0f} KiB "
              f"in {time.perf_counter() - t0:.1f} s")
        baseline_lines(path)  # warm the page cache for both contenders

        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        base_t, base_n, base_cpu = median_time(lambda: baseline_lines(path), args.runs)
        idx_t, _, idx_cpu = median_time(lambda: build_index(path), args.runs)
        assert base_n == count
        print(f"index build: median {idx_t * 1000:.0f} ms wall ({size / idx_t / 1e9:.1f} GB/s), "
              f"{idx_cpu * 1000:.0f} ms CPU; baseline `for line in f`: median {base_t * 1000:.0f} ms wall, "
              f"{base_cpu * 1000:.0f} ms CPU; index is {base_t / idx_t:.1f}x faster "
              f"(target <= {0.5 * size / 2**30 * 1000:.0f} ms for this size)")

        rss0, anon0 = rss_kb("VmRSS"), rss_kb("RssAnon")
        ix, peak, peak_anon = peak_during(lambda: build_index(path))
        assert isinstance(ix, RecordingIndex) and len(ix) == count
        held, held_anon = rss_kb("VmRSS") - rss0, rss_kb("RssAnon") - anon0
        print(f"memory: RSS before {rss0 / 1024:.0f} MiB; peak during indexing +{(peak - rss0) / 1024:.0f} MiB "
              f"(anonymous +{(peak_anon - anon0) / 1024:.0f} MiB); holding the index +{held / 1024:.1f} MiB "
              f"(anonymous +{held_anon / 1024:.1f} MiB); arrays {3 * 8 * count / 1024:.0f} KiB")

        rng = random.Random(7)
        lat = []
        for _ in range(args.seeks):
            i = rng.randrange(count)
            t1 = time.perf_counter()
            data = ix.get(i)
            lat.append(time.perf_counter() - t1)
            assert data.startswith(b"{") and data.endswith(b"}}")
        lat.sort()
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        tl = []
        for _ in range(args.seeks):
            t = ix.timestamp(0) + rng.random() * (ix.timestamp(count - 1) - ix.timestamp(0))
            t1 = time.perf_counter()
            ix.get(ix.find_time(t))
            tl.append(time.perf_counter() - t1)
        tl.sort()
        print(f"seek+read one report (get, page cache warm): median {statistics.median(lat) * 1e3:.3f} ms, "
              f"p99 {p99 * 1e3:.3f} ms; find_time+get: median {statistics.median(tl) * 1e3:.3f} ms, "
              f"p99 {tl[int(len(tl) * 0.99)] * 1e3:.3f} ms")
        ix.close()

        if args.compressed_mb:
            vrng = random.Random(1)
            n = max(1, (args.compressed_mb << 20) // len(trn2_report()))
            lines = [trn2_report(rng=vrng) for _ in range(n)]
            raw = sum(len(x) + 40 for x in lines)
            for ext in ("zst", "gz"):
                cpath = tmp / f"bench.ndjson.{ext}"
                t1 = time.perf_counter()
                with RecordingWriter(cpath, fsync_interval=float("inf")) as w:
                    for k, line in enumerate(lines):
                        w.write(line, ts=1_763_000_000.0 + k)
                wt = time.perf_counter() - t1
                ct, _, _ = median_time(lambda p=cpath: build_index(p), 1)
                print(f"{ext}: {n} reports ({raw / 2**20:.0f} MiB raw, {cpath.stat().st_size / 2**20:.1f} MiB "
                      f"on disk): write {wt * 1000 / n:.2f} ms/report; index (inflate to spool + scan) "
                      f"{ct * 1000:.0f} ms = {raw / ct / 1e6:.0f} MB/s uncompressed")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

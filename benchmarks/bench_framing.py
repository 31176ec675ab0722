"""How fast the ReportFramer cuts a stream, against the floor of a bare ``bytes.split`` measured in the same run.

Run: python benchmarks/bench_framing.py   (a few seconds; prints medians of 7 runs and ratios)
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from neuron_top.sources.framing import ReportFramer


def synthetic_report(runtimes: int = 8, cores: int = 32, cpus: int = 128) -> dict[str, object]:
    """A report shaped like a busy trn1.32xlarge (~100 KB as one line)."""
    cpu = {"user": 12.5, "nice": 0, "system": 3.25, "idle": 84.25, "io_wait": 0, "irq": 0, "soft_irq": 0}
    return {
        "neuron_runtime_data": [
            {
                "pid": 1000 + r,
                "neuron_runtime_tag": f"app_{r}",
                "error": "",
                "report": {
                    "neuroncore_counters": {
                        "period": 1.0,
                        "neuroncores_in_use": {
                            str(c): {"neuroncore_utilization": 42.5, "flops": 123456789, "effective_flops": 1}
                            for c in range(cores)
                        },
                        "error": "",
                    }
                },
            }
            for r in range(runtimes)
        ],
        "system_data": {
            "vcpu_usage": {
                "period": 1.0,
                "average_usage": cpu,
                "usage_data": {str(i): cpu for i in range(cpus)},
            }
        },
    }


def median_seconds(fn: Callable[[], object], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def frame_all(data: bytes, chunk: int) -> int:
    framer = ReportFramer()
    n = 0
    for i in range(0, len(data), chunk):
        n += len(framer.feed(data[i : i + chunk]))
    return n + len(framer.finish())


def main() -> None:
    report = synthetic_report()
    line = json.dumps(report, separators=(",", ":")).encode() + b"\n"
    pretty = json.dumps(report, indent=2).encode() + b"\n"
    reports = 50
    lines, prettys = line * reports, pretty * reports
    assert frame_all(lines, 65536) == reports and frame_all(prettys, 65536) == reports
    floor = median_seconds(lambda: lines.split(b"\n"))
    rows = [
        ("one per line, 64 KiB reads", len(lines), median_seconds(lambda: frame_all(lines, 65536))),
        ("one per line, 4 KiB reads", len(lines), median_seconds(lambda: frame_all(lines, 4096))),
        ("pretty-printed, 64 KiB reads", len(prettys), median_seconds(lambda: frame_all(prettys, 65536))),
    ]
    print(
        f"report: {len(line) / 1024:.0f} KiB as a line, {len(pretty) / 1024:.0f} KiB pretty; {reports} reports"
    )
    print(f"{'baseline bytes.split':32} {len(lines) / floor / 1e6:8.0f} MB/s")
    for name, size, seconds in rows:
        print(
            f"{name:32} {size / seconds / 1e6:8.0f} MB/s  {seconds / reports * 1e3:7.3f} ms/report"
            f"  {seconds / floor * len(lines) / size:6.1f}x baseline time per byte"
        )


if __name__ == "__main__":
    main()

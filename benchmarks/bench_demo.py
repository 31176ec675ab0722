"""How long the simulator takes per report, against the cost of just encoding that report (same run).

    python benchmarks/bench_demo.py [--reports N]      (from the repository root)

The demo produces one report per second, so anything well under a few milliseconds is invisible; the ratio
says how much of it is simulation rather than JSON encoding. "Encode only" encodes the report as plain JSON
objects (decoded from the simulator's bytes): the simulator keeps parts of its reports pre-encoded, so encoding
what ``World.report()`` returns would understate it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a plain script from anywhere

from neuron_top.schema import Report
from neuron_top.sources.demo import INSTANCE_TYPES, World, trn2_benchmark_report
from neuron_top.sources.demo.profiles import PROFILES


def _median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=60)
    n = ap.parse_args().reports
    encode = msgspec.json.Encoder().encode
    print(f"{'instance':16} {'KB':>6} {'simulate+encode ms':>19} {'encode only ms':>15} {'ratio':>6}")
    for instance in INSTANCE_TYPES:
        world = World(PROFILES[instance], 0)

        def step(world: World = world) -> bytes:
            world.advance()
            return encode(world.report())

        size = len(step()) / 1000
        full = _median_ms(step, n)
        plain = msgspec.json.decode(step())
        enc = _median_ms(lambda plain=plain: encode(plain), n)
        print(f"{instance:16} {size:6.0f} {full:19.2f} {enc:15.3f} {full / enc:6.1f}")
    data = trn2_benchmark_report(0)
    decoder = msgspec.json.Decoder(Report)
    typed = _median_ms(lambda: decoder.decode(data), n)
    base = _median_ms(lambda: json.loads(data), n)
    print(f"trn2_benchmark_report: {len(data) / 1000:.0f} KB; msgspec->Report {typed:.2f} ms, json.loads {base:.2f} ms, "
          f"ratio {typed / base:.2f}")


if __name__ == "__main__":
    main()

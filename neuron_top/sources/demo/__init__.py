"""The built-in simulator behind ``neuron-top demo``: reports in the exact neuron-monitor JSON format.

Four instance profiles (``PROFILES``) with the real hardware shape; apps that load, run, burst, fail now and then
and come and go; rare ECC events. Fully deterministic for a seed: time is simulated, the clock only paces.
"""

from neuron_top.sources.demo.profiles import INSTANCE_TYPES, PROFILES, AppSpec, InstanceProfile, ModelSpec
from neuron_top.sources.demo.source import (
    BATCH,
    DemoSource,
    emit_main,
    generate,
    iter_reports,
    trn2_benchmark_report,
)
from neuron_top.sources.demo.world import GROUPS, World

__all__ = [
    "BATCH",
    "GROUPS",
    "INSTANCE_TYPES",
    "PROFILES",
    "AppSpec",
    "DemoSource",
    "InstanceProfile",
    "ModelSpec",
    "World",
    "emit_main",
    "generate",
    "iter_reports",
    "trn2_benchmark_report",
]

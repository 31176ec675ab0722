"""Instance profiles for the simulator, as data.

Hardware facts are the published ones (device counts, cores per device, device memory, vCPUs, host memory, rough
peak BF16/FP16 FLOPS per NeuronCore). The apps are invented but shaped like real workloads: one long training job
that spans many devices, a few inference services, a batch job that comes and goes, an idle notebook.

Shapes that differ between real neuron-monitor versions are chosen per profile so the demo exercises both:
older runtimes list every core of the machine in every runtime (zeros for cores it does not own), newer output
lists only the runtime's cores; inf1 reports no FLOPS, inf2 (runtime 2.30) only ``effective_flops``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["INSTANCE_TYPES", "PROFILES", "AppSpec", "GiB", "InstanceProfile", "Kind", "MiB", "ModelSpec"]

GiB = 1 << 30
MiB = 1 << 20

Kind = Literal["train", "serve", "batch", "dev"]
"""How an app's load moves: training steps, a diurnal wave of requests, flat-out batches, or mostly idle."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One NEFF the app loads; it gets one subgraph per core the app owns."""

    name: str
    """A name template: ``{n}`` becomes a random number, ``{h}`` a short hex string (drawn once per load)."""
    constants: int
    """Device bytes per core (weights)."""
    code: int
    """Device bytes per core of executable code."""
    host: int = 20480
    """Host bytes per subgraph (application_memory)."""
    running: bool = True
    """Whether the model is started once loaded (``is_running``)."""


@dataclass(frozen=True, slots=True)
class AppSpec:
    """A simulated Neuron application: where it runs, what it loads, how its load moves and when it lives."""

    tag: str
    kind: Kind
    first_core: int
    cores: int
    models: tuple[ModelSpec, ...]
    tensors: int
    """Device bytes per core for tensors (activations, KV cache), allocated at the end of loading."""
    scratchpad: int
    util: float
    """Typical steady utilisation, percent (serving: at the middle of the daily wave)."""
    mfu: float
    """Achieved FLOPS as a fraction of peak at 100% utilisation."""
    latency: float
    """Typical p50 device latency of one execution, seconds."""
    rate: float
    """Executions per second at the typical utilisation."""
    host_memory: int
    vcpus: tuple[int, int]
    """First vCPU and how many vCPUs its threads mostly run on."""
    cpu: float
    """Typical busy percent on those vCPUs."""
    start: tuple[float, float] = (0.0, 0.0)
    """First start, seconds of demo time (a range drawn from the seed); (0, 0) = already running at the start."""
    run: tuple[float, float] | None = None
    """How long each run lasts (a range), None = forever."""
    pause: tuple[float, float] = (20.0, 40.0)
    """How long the cores stay free before the app starts again."""
    load: tuple[float, float] = (4.0, 10.0)
    """Model load time range, seconds (memory grows during it)."""
    namespace: str = "default"
    """Kubernetes namespace, when the profile reports neuron_k8s_info."""


@dataclass(frozen=True, slots=True)
class InstanceProfile:
    instance_type: str
    device_type: str
    device_version: str
    core_version: str
    device_count: int
    cores_per_device: int
    """NeuronCores per device as neuron-monitor counts them (logical cores when LNC > 1)."""
    lnc: int
    """Physical cores behind each logical core; > 1 adds the ``v3d`` breakdown."""
    device_memory: int
    vcpus: int
    host_memory: int
    peak_flops: float
    """Peak FLOPS of one (logical) NeuronCore."""
    flops_keys: tuple[str, ...]
    zero_fill: bool
    """List every core of the machine in every runtime (zeros for cores it does not own), like older runtimes."""
    k8s: bool
    """Report neuron_k8s_info (apps run as pods)."""
    repairable_ecc: bool
    """Report mem_ecc_repairable_uncorrected (newer drivers)."""
    subgraph_core_key: str | None
    """Newer runtimes add e.g. ``"v2": "nc_v2.0"`` inside subgraphs; the key, or None."""
    region: str
    az: str
    az_id: str
    apps: tuple[AppSpec, ...]

    @property
    def core_count(self) -> int:
        return self.device_count * self.cores_per_device


_TRAIN_NEFF = "/tmp/neuroncc_compile_workdir/{h}/model.MODULE_{n}+c7db2df4.neff"

_INF1 = InstanceProfile(
    instance_type="inf1.xlarge",
    device_type="inferentia",
    device_version="v1",
    core_version="v1",
    device_count=1,
    cores_per_device=4,
    lnc=1,
    device_memory=8 * GiB,
    vcpus=4,
    host_memory=8 * GiB,
    peak_flops=16e12,
    flops_keys=(),
    zero_fill=True,
    k8s=False,
    repairable_ecc=False,
    subgraph_core_key=None,
    region="us-east-1",
    az="us-east-1d",
    az_id="use1-az6",
    apps=(
        AppSpec(
            tag="bert-base-inf", kind="serve", first_core=0, cores=2,
            models=(ModelSpec("1.13.5.0+7dcf000a6-/opt/models/bert-base-uncased/neff", 210 * MiB, 14 * MiB),),
            tensors=24 * MiB, scratchpad=0, util=45, mfu=0.05, latency=0.0032, rate=260,
            host_memory=int(1.1 * GiB), vcpus=(0, 2), cpu=35,
        ),
        AppSpec(
            tag="resnet50-inf", kind="serve", first_core=2, cores=1,
            models=(ModelSpec("1.13.5.0+7dcf000a6-/opt/models/resnet50/neff", 98 * MiB, 9 * MiB),),
            tensors=12 * MiB, scratchpad=0, util=35, mfu=0.08, latency=0.0041, rate=85,
            host_memory=int(0.9 * GiB), vcpus=(2, 1), cpu=25,
        ),
        AppSpec(
            tag="yolo-batch", kind="batch", first_core=3, cores=1,
            models=(ModelSpec("1.13.5.0+7dcf000a6-/opt/models/yolov5s/neff", 61 * MiB, 6 * MiB),),
            tensors=48 * MiB, scratchpad=0, util=93, mfu=0.06, latency=0.0125, rate=74,
            host_memory=int(1.2 * GiB), vcpus=(3, 1), cpu=60,
            start=(5.0, 12.0), run=(40.0, 70.0), pause=(20.0, 35.0), load=(3.0, 6.0),
        ),
    ),
)

_INF2_APPS = (
    AppSpec(
        tag="llama-70b-serve", kind="serve", first_core=0, cores=16,
        models=(
            ModelSpec("/var/models/llama-3.1-70b/tp16/context_encoding_model/model.neff", int(8.2 * GiB), 190 * MiB),
            ModelSpec("/var/models/llama-3.1-70b/tp16/token_generation_model/model.neff", 48 * MiB, 120 * MiB),
        ),
        tensors=int(4.5 * GiB), scratchpad=int(1.1 * GiB), util=62, mfu=0.2, latency=0.034, rate=28,
        host_memory=22 * GiB, vcpus=(0, 32), cpu=18, load=(8.0, 14.0), namespace="inference",
    ),
    AppSpec(
        tag="mistral-7b-serve", kind="serve", first_core=16, cores=2,
        models=(
            ModelSpec("/var/models/mistral-7b/tp2/context_encoding_model/model.neff", int(3.4 * GiB), 96 * MiB),
            ModelSpec("/var/models/mistral-7b/tp2/token_generation_model/model.neff", 32 * MiB, 64 * MiB),
        ),
        tensors=6 * GiB, scratchpad=512 * MiB, util=55, mfu=0.18, latency=0.014, rate=70,
        host_memory=6 * GiB, vcpus=(32, 8), cpu=15, namespace="inference",
    ),
    AppSpec(
        tag="bert-base-inf", kind="serve", first_core=18, cores=2,
        models=(ModelSpec("/var/models/bert-base-uncased/bs8/model.neff", 220 * MiB, 18 * MiB),),
        tensors=96 * MiB, scratchpad=0, util=40, mfu=0.06, latency=0.0024, rate=330,
        host_memory=int(1.4 * GiB), vcpus=(40, 4), cpu=30, namespace="inference",
    ),
    AppSpec(
        tag="sdxl-batch", kind="batch", first_core=20, cores=2,
        models=(
            ModelSpec("/var/models/sdxl-1.0/text_encoder/model.neff", int(1.3 * GiB), 40 * MiB),
            ModelSpec("/var/models/sdxl-1.0/unet/model.neff", int(4.8 * GiB), 210 * MiB),
            ModelSpec("/var/models/sdxl-1.0/vae_decoder/model.neff", 160 * MiB, 30 * MiB),
        ),
        tensors=2 * GiB, scratchpad=768 * MiB, util=94, mfu=0.3, latency=0.21, rate=4.5,
        host_memory=9 * GiB, vcpus=(44, 8), cpu=45,
        start=(6.0, 12.0), run=(45.0, 75.0), pause=(20.0, 40.0), namespace="batch",
    ),
    AppSpec(
        tag="whisper-large-inf", kind="serve", first_core=22, cores=1,
        models=(
            ModelSpec("/var/models/whisper-large-v3/encoder/model.neff", int(1.2 * GiB), 60 * MiB),
            ModelSpec("/var/models/whisper-large-v3/decoder/model.neff", int(1.7 * GiB), 80 * MiB),
        ),
        tensors=int(1.5 * GiB), scratchpad=256 * MiB, util=48, mfu=0.12, latency=0.048, rate=16,
        host_memory=4 * GiB, vcpus=(52, 4), cpu=20, namespace="inference",
    ),
    AppSpec(
        tag="notebook-dev", kind="dev", first_core=23, cores=1,
        models=(ModelSpec(_TRAIN_NEFF, 450 * MiB, 35 * MiB, running=False),),
        tensors=256 * MiB, scratchpad=0, util=70, mfu=0.1, latency=0.009, rate=40,
        host_memory=3 * GiB, vcpus=(56, 2), cpu=8, namespace="dev",
    ),
)

_INF2 = InstanceProfile(
    instance_type="inf2.48xlarge",
    device_type="inferentia2",
    device_version="v3",
    core_version="v2",
    device_count=12,
    cores_per_device=2,
    lnc=1,
    device_memory=32 * GiB,
    vcpus=192,
    host_memory=768 * GiB,
    peak_flops=95e12,
    flops_keys=("effective_flops",),
    zero_fill=False,
    k8s=True,
    repairable_ecc=False,
    subgraph_core_key="v2",
    region="us-east-2",
    az="us-east-2b",
    az_id="use2-az2",
    apps=_INF2_APPS,
)

_TRN1 = InstanceProfile(
    instance_type="trn1.32xlarge",
    device_type="trainium",
    device_version="v2",
    core_version="v2",
    device_count=16,
    cores_per_device=2,
    lnc=1,
    device_memory=32 * GiB,
    vcpus=128,
    host_memory=512 * GiB,
    peak_flops=95e12,
    flops_keys=("flops", "effective_flops"),
    zero_fill=True,
    k8s=False,
    repairable_ecc=False,
    subgraph_core_key="v2",
    region="us-west-2",
    az="us-west-2d",
    az_id="usw2-az4",
    apps=(
        AppSpec(
            tag="llama3-8b-finetune", kind="train", first_core=0, cores=24,
            models=(
                ModelSpec(_TRAIN_NEFF, int(1.9 * GiB), 280 * MiB),
                ModelSpec(_TRAIN_NEFF, 320 * MiB, 60 * MiB),
            ),
            tensors=int(8.5 * GiB), scratchpad=int(1.5 * GiB), util=86, mfu=0.38, latency=0.071, rate=12,
            host_memory=48 * GiB, vcpus=(0, 48), cpu=50,
        ),
        AppSpec(
            tag="gpt2-eval-harness", kind="batch", first_core=24, cores=4,
            models=(ModelSpec(_TRAIN_NEFF, 380 * MiB, 90 * MiB),),
            tensors=2 * GiB, scratchpad=512 * MiB, util=91, mfu=0.22, latency=0.052, rate=60,
            host_memory=7 * GiB, vcpus=(48, 16), cpu=40,
            start=(5.0, 12.0), run=(40.0, 70.0), pause=(20.0, 35.0),
        ),
        AppSpec(
            tag="llama-7b-serve", kind="serve", first_core=28, cores=2,
            models=(
                ModelSpec("/var/models/llama-2-7b/tp2/context_encoding_model/model.neff", int(3.3 * GiB), 92 * MiB),
                ModelSpec("/var/models/llama-2-7b/tp2/token_generation_model/model.neff", 30 * MiB, 60 * MiB),
            ),
            tensors=6 * GiB, scratchpad=512 * MiB, util=52, mfu=0.16, latency=0.016, rate=60,
            host_memory=6 * GiB, vcpus=(64, 8), cpu=15,
        ),
        AppSpec(
            tag="notebook-dev", kind="dev", first_core=30, cores=2,
            models=(ModelSpec(_TRAIN_NEFF, 600 * MiB, 40 * MiB, running=False),),
            tensors=512 * MiB, scratchpad=0, util=75, mfu=0.12, latency=0.011, rate=30,
            host_memory=4 * GiB, vcpus=(72, 2), cpu=8,
        ),
    ),
)

_TRN2 = InstanceProfile(
    instance_type="trn2.48xlarge",
    device_type="trainium2",
    device_version="v4",
    core_version="v3d",
    device_count=16,
    cores_per_device=4,
    lnc=2,
    device_memory=96 * GiB,
    vcpus=192,
    host_memory=2048 * GiB,
    peak_flops=167e12,
    flops_keys=("flops", "effective_flops"),
    zero_fill=False,
    k8s=True,
    repairable_ecc=True,
    subgraph_core_key=None,
    region="us-east-2",
    az="us-east-2c",
    az_id="use2-az3",
    apps=(
        AppSpec(
            tag="llama3-70b-pretrain", kind="train", first_core=0, cores=32,
            models=(
                ModelSpec(_TRAIN_NEFF, int(4.4 * GiB), 290 * MiB),
                ModelSpec(_TRAIN_NEFF, 600 * MiB, 52 * MiB),
                ModelSpec(_TRAIN_NEFF, 0, 80 * MiB, running=False),
            ),
            tensors=int(9.5 * GiB), scratchpad=2 * GiB, util=88, mfu=0.42, latency=0.062, rate=14,
            host_memory=38 * GiB, vcpus=(0, 64), cpu=55, namespace="training",
        ),
        AppSpec(
            tag="llama-70b-serve", kind="serve", first_core=32, cores=16,
            models=(
                ModelSpec("/var/models/llama-3.1-70b/tp16/context_encoding_model/model.neff", int(8.2 * GiB), 210 * MiB),
                ModelSpec("/var/models/llama-3.1-70b/tp16/token_generation_model/model.neff", 50 * MiB, 120 * MiB),
                ModelSpec("/var/models/llama-3.1-70b/tp16/fused_speculation_model/model.neff", 160 * MiB, 70 * MiB),
            ),
            tensors=10 * GiB, scratchpad=int(1.5 * GiB), util=62, mfu=0.2, latency=0.021, rate=45,
            host_memory=22 * GiB, vcpus=(64, 32), cpu=20, load=(8.0, 14.0), namespace="inference",
        ),
        AppSpec(
            tag="mistral-7b-serve", kind="serve", first_core=48, cores=4,
            models=(
                ModelSpec("/var/models/mistral-7b/tp4/context_encoding_model/model.neff", int(1.7 * GiB), 96 * MiB),
                ModelSpec("/var/models/mistral-7b/tp4/token_generation_model/model.neff", 32 * MiB, 64 * MiB),
            ),
            tensors=12 * GiB, scratchpad=1 * GiB, util=55, mfu=0.18, latency=0.012, rate=80,
            host_memory=8 * GiB, vcpus=(96, 12), cpu=15, namespace="inference",
        ),
        AppSpec(
            tag="bert-base-inf", kind="serve", first_core=52, cores=2,
            models=(ModelSpec("/var/models/bert-base-uncased/bs16/model.neff", 220 * MiB, 18 * MiB),),
            tensors=128 * MiB, scratchpad=0, util=40, mfu=0.05, latency=0.0021, rate=380,
            host_memory=int(1.4 * GiB), vcpus=(108, 4), cpu=30, namespace="inference",
        ),
        AppSpec(
            tag="sdxl-batch", kind="batch", first_core=54, cores=4,
            models=(
                ModelSpec("/var/models/sdxl-1.0/text_encoder/model.neff", int(0.7 * GiB), 40 * MiB),
                ModelSpec("/var/models/sdxl-1.0/unet/model.neff", int(2.4 * GiB), 210 * MiB),
                ModelSpec("/var/models/sdxl-1.0/vae_decoder/model.neff", 80 * MiB, 30 * MiB),
            ),
            tensors=3 * GiB, scratchpad=768 * MiB, util=94, mfu=0.31, latency=0.12, rate=8,
            host_memory=9 * GiB, vcpus=(112, 16), cpu=45,
            start=(6.0, 12.0), run=(45.0, 75.0), pause=(20.0, 40.0), namespace="batch",
        ),
        AppSpec(
            tag="embedding-svc", kind="serve", first_core=58, cores=2,
            models=(ModelSpec("/var/models/bge-large-en/bs32/model.neff", 640 * MiB, 24 * MiB),),
            tensors=256 * MiB, scratchpad=0, util=35, mfu=0.07, latency=0.0046, rate=150,
            host_memory=2 * GiB, vcpus=(128, 4), cpu=20, namespace="inference",
        ),
        AppSpec(
            tag="eval-harness", kind="batch", first_core=60, cores=2,
            models=(ModelSpec(_TRAIN_NEFF, int(1.1 * GiB), 75 * MiB),),
            tensors=2 * GiB, scratchpad=256 * MiB, util=90, mfu=0.25, latency=0.048, rate=40,
            host_memory=5 * GiB, vcpus=(132, 8), cpu=35,
            run=(25.0, 45.0), pause=(15.0, 35.0), namespace="batch",
        ),
        AppSpec(
            tag="notebook-dev", kind="dev", first_core=62, cores=2,
            models=(ModelSpec(_TRAIN_NEFF, 900 * MiB, 40 * MiB, running=False),),
            tensors=1 * GiB, scratchpad=0, util=75, mfu=0.12, latency=0.011, rate=30,
            host_memory=4 * GiB, vcpus=(140, 2), cpu=8, namespace="dev",
        ),
    ),
)

# The one-device sizes people start on: the big profiles' hardware on one device, with a workload that fits it.
def _moved(apps: tuple[AppSpec, ...], tag: str, first_core: int, cores: int, vcpus: tuple[int, int]) -> AppSpec:
    """A big profile's app, the same workload on a one-device size's cores and vCPUs."""
    return replace(next(a for a in apps if a.tag == tag), first_core=first_core, cores=cores, vcpus=vcpus)


_INF2_1 = replace(
    _INF2, instance_type="inf2.xlarge", device_count=1, vcpus=4, host_memory=16 * GiB,
    apps=(_moved(_INF2_APPS, "bert-base-inf", 0, 1, (0, 2)), _moved(_INF2_APPS, "sdxl-batch", 1, 1, (2, 2))),
)

_TRN1_1 = replace(
    _TRN1, instance_type="trn1.2xlarge", device_count=1, vcpus=8, host_memory=32 * GiB,
    apps=(
        AppSpec(
            tag="bert-large-finetune", kind="train", first_core=0, cores=1,
            models=(
                ModelSpec(_TRAIN_NEFF, int(0.7 * GiB), 120 * MiB),
                ModelSpec(_TRAIN_NEFF, 160 * MiB, 40 * MiB),
            ),
            tensors=int(6.5 * GiB), scratchpad=1 * GiB, util=84, mfu=0.35, latency=0.048, rate=18,
            host_memory=10 * GiB, vcpus=(0, 4), cpu=50,
        ),
        _moved(_TRN1.apps, "gpt2-eval-harness", 1, 1, (4, 4)),
    ),
)

_TRN2_1 = replace(
    _TRN2, instance_type="trn2.3xlarge", device_count=1, vcpus=12, host_memory=128 * GiB,
    apps=(
        replace(_moved(_INF2_APPS, "mistral-7b-serve", 0, 2, (0, 6)), tensors=12 * GiB, scratchpad=1 * GiB,
                rate=80, latency=0.012, host_memory=8 * GiB),
        _moved(_TRN2.apps, "eval-harness", 2, 2, (6, 6)),
    ),
)

PROFILES: dict[str, InstanceProfile] = {p.instance_type: p for p in (_INF1, _INF2_1, _INF2, _TRN1_1, _TRN1, _TRN2_1,
                                                                     _TRN2)}
"""Instance type -> profile; the keys are what ``neuron-top demo --instance`` accepts."""

INSTANCE_TYPES: tuple[str, ...] = tuple(PROFILES)

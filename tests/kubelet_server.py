"""A real gRPC server speaking the kubelet's PodResources v1 contract on a unix socket in a temp dir.

The messages come from ``neuron_top/k8s/podresources.proto`` compiled here with grpcio-tools (protobuf's own
encoder), so the hand decoder in ``neuron_top/k8s/wire.py`` is tested against the real thing. What the server
answers is set on it between calls: pods, what the node offers, an error code, a delay, padding.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import threading
import time
from concurrent import futures
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

PROTO = Path(__file__).resolve().parent.parent / "neuron_top" / "k8s" / "podresources.proto"


@lru_cache(maxsize=1)
def compiled() -> tuple[ModuleType, ModuleType]:
    """(podresources_pb2, podresources_pb2_grpc), generated into a temp dir once per process."""
    protoc = pytest.importorskip("grpc_tools.protoc")
    out = tempfile.mkdtemp(prefix="neuron-top-proto-")
    rc = protoc.main(["protoc", f"-I{PROTO.parent}", f"--python_out={out}", f"--grpc_python_out={out}", PROTO.name])
    assert rc == 0, "protoc failed on podresources.proto"
    sys.path.insert(0, out)
    try:
        return importlib.import_module("podresources_pb2"), importlib.import_module("podresources_pb2_grpc")
    finally:
        sys.path.remove(out)


def pod(name: str, namespace: str, *containers: tuple[str, dict[str, list[str]]], claims: list[str] = (),
        pad: int = 0) -> Any:
    """A PodResources: containers as (name, {resource: ids}); ``claims`` are DRA devices of the first container
    (driver neuron.aws.com); ``pad`` adds that many cpu ids (bulk, to pass 4 MiB)."""
    pb2, _ = compiled()
    out = pb2.PodResources(name=name, namespace=namespace)
    for i, (cname, resources) in enumerate(containers):
        c = out.containers.add(name=cname)
        for resource, ids in resources.items():
            c.devices.add(resource_name=resource, device_ids=ids)
        c.cpu_ids.extend(range(2**40, 2**40 + pad))  # 6 bytes each, packed
        if i == 0 and claims:
            dr = c.dynamic_resources.add(claim_name=f"{name}-claim", claim_namespace=namespace)
            for d in claims:
                dr.claim_resources.add(driver_name="neuron.aws.com", pool_name="node-1", device_name=d)
    return out


class FakeKubelet:
    """The server; ``pods``, ``offered``, ``error``, ``delay`` may be changed between calls."""

    def __init__(self, path: str) -> None:
        import grpc

        pb2, pb2_grpc = compiled()
        self.path = path
        self.pods: list[Any] = []
        self.offered: dict[str, list[str]] | None = {}
        self.error: Any = None
        """A grpc.StatusCode every call answers with."""
        self.delay = 0.0
        self.calls = 0
        self.released = threading.Event()
        fake = self

        class Servicer(pb2_grpc.PodResourcesListerServicer):
            def List(self, request: Any, context: Any) -> Any:
                fake._enter(context)
                return pb2.ListPodResourcesResponse(pod_resources=fake.pods)

            def GetAllocatableResources(self, request: Any, context: Any) -> Any:
                fake._enter(context)
                if fake.offered is None:
                    context.abort(grpc.StatusCode.UNIMPLEMENTED, "not served")
                out = pb2.AllocatableResourcesResponse()
                for r, ids in fake.offered.items():
                    out.devices.add(resource_name=r, device_ids=ids)
                return out

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                                  options=[("grpc.max_send_message_length", 64 * 1024 * 1024)])
        pb2_grpc.add_PodResourcesListerServicer_to_server(Servicer(), self.server)
        self.server.add_insecure_port("unix://" + path)
        self.server.start()
        deadline = time.monotonic() + 5
        while not os.path.exists(path):
            assert time.monotonic() < deadline, "server socket did not appear"
            time.sleep(0.01)

    def _enter(self, context: Any) -> None:
        self.calls += 1
        if self.delay:
            self.released.wait(self.delay)
        if self.error is not None:
            context.abort(self.error, f"fake {self.error.name}")

    def stop(self) -> None:
        self.released.set()
        self.server.stop(None)

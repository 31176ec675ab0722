"""The few PodResources messages neuron-top reads, decoded by hand from protobuf's wire format (no protobuf import).

Why by hand: generated ``_pb2`` modules are tied to the protobuf release that generated them (protobuf 5+ checks
the runtime version at import and refuses an older one), and a dynamic descriptor pool depends on protobuf's
Python API, which changed across 3.x, 4.x and 5.x. The wire format itself has not changed since 2008: varints and
length-delimited fields. Reading five message types from it is ~80 lines, works with any protobuf (or none:
grpcio itself does not need it), and unknown or newer fields are skipped as protobuf skips them. The contract is
``podresources.proto`` beside this file; the tests compile it with grpcio-tools and serve real messages, so this
decoder is checked against protobuf's own encoder.
"""

from __future__ import annotations

from collections.abc import Iterator

from neuron_top.k8s.model import Claim, Container, Pod

__all__ = ["WireError", "decode_allocatable", "decode_list", "fields"]


class WireError(ValueError):
    """The bytes are not a protobuf message of the expected shape."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise WireError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """Every (field number, value) of one message, in order: an int for varint and fixed fields, bytes for
    length-delimited ones (strings, sub-messages, packed repeated numbers)."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, i = _varint(buf, i)
            yield number, value
        elif kind == 2:
            size, i = _varint(buf, i)
            if i + size > n:
                raise WireError("truncated field")
            yield number, buf[i:i + size]
            i += size
        elif kind in (1, 5):
            width = 8 if kind == 1 else 4
            if i + width > n:
                raise WireError("truncated field")
            yield number, int.from_bytes(buf[i:i + width], "little")
            i += width
        else:
            raise WireError(f"unsupported wire type {kind}")


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise WireError("a string field holds a number")
    return value.decode("utf-8", "replace")


def _msg(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise WireError("a message field holds a number")
    return value


def _devices(buf: bytes) -> tuple[str, tuple[str, ...]]:
    """ContainerDevices: resource_name = 1, device_ids = 2 (topology = 3 is not read)."""
    name, ids = "", []
    for number, value in fields(buf):
        if number == 1:
            name = _text(value)
        elif number == 2:
            ids.append(_text(value))
    return name, tuple(ids)


def _claim(buf: bytes) -> Claim:
    """ClaimResource: driver_name = 2, pool_name = 3, device_name = 4 (cdi_devices = 1 is not read)."""
    got = {2: "", 3: "", 4: ""}
    for number, value in fields(buf):
        if number in got:
            got[number] = _text(value)
    return Claim(got[2], got[3], got[4])


def _dynamic(buf: bytes) -> tuple[str, list[Claim]]:
    """DynamicResource: claim_name = 2, claim_namespace = 3, claim_resources = 4 (field 1 was removed)."""
    name, claims = "", []
    for number, value in fields(buf):
        if number == 2:
            name = _text(value)
        elif number == 4:
            claims.append(_claim(_msg(value)))
    return name, claims


def _container(buf: bytes) -> Container:
    """ContainerResources: name = 1, devices = 2, dynamic_resources = 5 (cpu_ids and memory are not read)."""
    name, devices, claims = "", [], []
    for number, value in fields(buf):
        if number == 1:
            name = _text(value)
        elif number == 2:
            devices.append(_devices(_msg(value)))
        elif number == 5:
            claims.extend(_dynamic(_msg(value))[1])
    return Container(name, tuple(devices), tuple(claims))


def _pod(buf: bytes) -> Pod:
    """PodResources: name = 1, namespace = 2, containers = 3."""
    name = namespace = ""
    containers = []
    for number, value in fields(buf):
        if number == 1:
            name = _text(value)
        elif number == 2:
            namespace = _text(value)
        elif number == 3:
            containers.append(_container(_msg(value)))
    return Pod(name, namespace, tuple(containers))


def decode_list(buf: bytes) -> tuple[Pod, ...]:
    """ListPodResourcesResponse: pod_resources = 1. Raises ``WireError``."""
    return tuple(_pod(_msg(v)) for number, v in fields(buf) if number == 1)


def decode_allocatable(buf: bytes) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """AllocatableResourcesResponse: devices = 1, as (resource name, device ids). Raises ``WireError``."""
    return tuple(_devices(_msg(v)) for number, v in fields(buf) if number == 1)

"""A client of the kubelet's PodResources API (v1) over its unix socket: ``List`` and ``GetAllocatableResources``.

grpcio is an optional dependency (``pip install neuron-top[k8s]``): it is imported when a client is made, and
its absence is a ``KubeletError`` with that advice, never an import error. The messages are decoded by
``wire.py`` (no generated code, no protobuf). Every call has a deadline, so a slow kubelet costs one refresh of
the background watcher and never the screen.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

from neuron_top.k8s.model import Pod
from neuron_top.k8s.wire import WireError, decode_allocatable, decode_list
from neuron_top.textsafe import clean

__all__ = ["DEFAULT_SOCKET", "MAX_REPLY", "KubeletClient", "KubeletError"]

DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
MAX_REPLY = 256 * 1024 * 1024
"""Largest reply accepted: gRPC's default is 4 MiB, which a node with many pods (each with its cpu ids and memory)
can pass."""
LIST = "/v1.PodResourcesLister/List"
ALLOCATABLE = "/v1.PodResourcesLister/GetAllocatableResources"
INSTALL_HINT = "grpc not installed: pip install neuron-top[k8s]"


class KubeletError(Exception):
    """The kubelet could not be asked. ``code`` is the gRPC status name ("UNAVAILABLE", "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", ...) or "ABSENT", "NOT_SOCKET", "NO_GRPC", "BAD_REPLY"; ``str()`` is the line
    the header shows."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _empty(_: object) -> bytes:
    return b""  # both requests are empty messages


def _raw(data: bytes) -> bytes:
    return data


class KubeletClient:
    """One channel to the kubelet's socket, opened on first use.

    Args:
        path: the socket (``--kubelet-socket``).
        timeout: seconds each call may take.
    """

    def __init__(self, path: str = DEFAULT_SOCKET, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout
        self._channel: Any = None
        self._grpc: Any = None
        self._allocatable_missing = False

    def _call(self, method: str) -> bytes:
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            raise KubeletError("ABSENT", f"kubelet socket absent: {clean(self.path)}") from None
        if not os.access(self.path, os.R_OK | os.W_OK):
            raise KubeletError("PERMISSION_DENIED", f"permission denied: {clean(self.path)} (run as root, or mount "
                               "the socket into the container)")
        if not stat.S_ISSOCK(mode):  # connecting to it says "connection refused", as to a kubelet that is down
            what = "a directory" if stat.S_ISDIR(mode) else "not a socket"
            raise KubeletError("NOT_SOCKET", f"kubelet socket: {clean(self.path)} is {what} (the socket is "
                               "kubelet.sock in /var/lib/kubelet/pod-resources/)")
        if self._grpc is None:
            # gRPC's C core logs to file descriptor 2 (a kubelet that restarts: "I1129 ... Got goaway"), which the
            # dashboard shares with the terminal: written over the screen. Its failures reach the header as
            # KubeletError; GRPC_VERBOSITY set by the user still wins.
            os.environ.setdefault("GRPC_VERBOSITY", "NONE")
            try:
                import grpc  # type: ignore[import-untyped]
            except ImportError:
                raise KubeletError("NO_GRPC", INSTALL_HINT) from None
            self._grpc = grpc
        grpc = self._grpc
        if self._channel is None:
            self._channel = grpc.insecure_channel(
                "unix://" + os.path.abspath(self.path),
                options=[("grpc.max_receive_message_length", MAX_REPLY), ("grpc.enable_retries", 0)])
        call = self._channel.unary_unary(method, request_serializer=_empty, response_deserializer=_raw)
        try:
            return call(b"", timeout=self.timeout)  # type: ignore[no-any-return]
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            name = code.name if code is not None else "UNKNOWN"
            detail = (exc.details() if hasattr(exc, "details") else "") or ""
            raise KubeletError(name, _explain(name, detail, self.path, self.timeout)) from None

    def list(self) -> tuple[Pod, ...]:
        """Every pod on the node with its containers' devices. Raises ``KubeletError``."""
        data = self._call(LIST)
        try:
            return decode_list(data)
        except WireError as exc:
            raise KubeletError("BAD_REPLY", f"kubelet reply not understood: {exc}") from None

    def allocatable(self) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
        """What the node offers, as (resource, ids); None when this kubelet does not serve it (older ones, or the
        KubeletPodResourcesGetAllocatable gate off). Raises ``KubeletError`` for other failures."""
        if self._allocatable_missing:
            return None
        try:
            data = self._call(ALLOCATABLE)
        except KubeletError as exc:
            if exc.code == "UNIMPLEMENTED":
                self._allocatable_missing = True
                return None
            raise
        try:
            return decode_allocatable(data)
        except WireError as exc:
            raise KubeletError("BAD_REPLY", f"kubelet reply not understood: {exc}") from None

    def close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()


_OS_ERROR = re.compile(r"\berror: ([A-Za-z][A-Za-z ]{2,60})\s*$")
"""The operating system's reason at the end of gRPC's connect failure ("... connect failed: addr: unix:PATH
error: Connection refused")."""


def _explain(code: str, raw: str, path: str, timeout: float) -> str:
    """The header's line for a failed call; ``raw`` is gRPC's detail as it came."""
    detail = clean(raw, 160) or code.lower()
    if code == "UNAVAILABLE":
        if "ermission denied" in raw:
            return f"permission denied: {clean(path)}"
        m = _OS_ERROR.search(raw)
        if m:  # gRPC's whole sentence names the socket twice before it: cut to 160, the reason was lost
            return f"kubelet unavailable: {m.group(1).lower()}: {clean(path)} (is the kubelet running?)"
        return f"kubelet unavailable: {detail}"
    if code == "PERMISSION_DENIED":
        return f"kubelet refused: permission denied ({detail})"
    if code == "RESOURCE_EXHAUSTED":
        return "kubelet rate limit: backing off"
    if code == "DEADLINE_EXCEEDED":
        return f"kubelet did not answer in {timeout:g} s"
    return f"kubelet: {code.lower()}: {detail}"

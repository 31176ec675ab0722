"""Read the Neuron driver's sysfs tree (``/sys/devices/virtual/neuron_device``) and ``neuron-ls --json-output``.

Driver 2.31 reorganised the tree and moved nodes, so nothing here hard-codes a layout: each device directory is
walked once, every file is indexed by its path relative to its device or core, and a value is looked up by a path
suffix (``stats/hardware/mem_ecc_uncorrected`` or just ``mem_ecc_uncorrected``). A counter can be a plain file or a
directory with ``total``/``present``; both are accepted. Every read is tolerant: a missing, unreadable or
non-numeric node gives None, never an exception.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "MAX_DEPTH", "MAX_FILES", "SYSFS_ROOT", "Device", "LsFacts", "NeuronSysfs", "SysfsNode",
    "find_neuron_ls", "global_core_index", "lazy_once", "parse_neuron_ls", "read_int", "read_text",
    "run_neuron_ls", "sum_known",
]

SYSFS_ROOT = Path("/sys/devices/virtual/neuron_device")
MAX_DEPTH = 8
MAX_FILES = 20_000
"""Per device: a bound on the walk, in case a future tree grows unexpectedly (or loops)."""
_SKIP_DIRS = {"power", "subsystem", "driver", "device", "firmware_node"}
_DEVICE_DIR = re.compile(r"neuron(\d+)$")
_CORE_DIR = re.compile(r"neuron_core(\d+)$")


def read_int(path: Path | None) -> int | None:
    """The integer in a sysfs node (first field of a comma list); None if absent or not a number."""
    text = read_text(path)
    if text is None:
        return None
    head = text.split(",", 1)[0].strip()
    try:
        return int(head, 0)
    except ValueError:
        return None


def read_text(path: Path | None) -> str | None:
    """A sysfs file's text, stripped, or None when it cannot be read."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None


@dataclass
class SysfsNode:
    """A device or core directory: its files indexed by path relative to it (posix strings)."""

    index: int
    path: Path
    files: dict[str, Path] = field(default_factory=dict)
    _cache: dict[tuple[str, ...], Path | None] = field(default_factory=dict, repr=False)

    def find(self, *suffixes: str, avoid: str | None = None) -> Path | None:
        """The first file whose relative path ends with one of ``suffixes`` (tried in order; the shortest match
        wins within one suffix). Paths containing ``avoid`` are used only when nothing else matches."""
        key = (*suffixes, avoid or "")
        if key in self._cache:
            return self._cache[key]
        found: Path | None = None
        for suffix in suffixes:
            matches = [rel for rel in self.files if rel == suffix or rel.endswith("/" + suffix)]
            if avoid is not None:
                preferred = [rel for rel in matches if avoid not in rel.split("/")]
                matches = preferred or matches
            if matches:
                found = self.files[min(matches, key=lambda r: (r.count("/"), r))]
                break
        self._cache[key] = found
        return found

    def counter(self, name: str) -> int | None:
        """A cumulative counter that is either ``.../name`` or ``.../name/total``."""
        return read_int(self.find(f"{name}/total", name))


@dataclass
class Device(SysfsNode):
    cores: list[SysfsNode] = field(default_factory=list)


def _walk(base: Path, skip_core_dirs: bool) -> tuple[dict[str, Path], list[tuple[int, Path]]]:
    """Index the files under ``base``; core directories are returned separately instead of descended into."""
    files: dict[str, Path] = {}
    cores: list[tuple[int, Path]] = []
    base_str = str(base)
    for dirpath, dirnames, filenames in os.walk(base_str, onerror=lambda e: None):
        rel_dir = os.path.relpath(dirpath, base_str)
        depth = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        keep = []
        for d in dirnames:
            m = _CORE_DIR.match(d)
            if m and skip_core_dirs:
                cores.append((int(m.group(1)), Path(dirpath, d)))
            elif d not in _SKIP_DIRS and depth < MAX_DEPTH:
                keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir.replace(os.sep, '/')}/{name}"
            files[rel] = Path(dirpath, name)
            if len(files) >= MAX_FILES:
                return files, cores
    return files, cores


class NeuronSysfs:
    """The devices and cores under ``root``, discovered by walking (rediscovered when the device list changes)."""

    def __init__(self, root: Path = SYSFS_ROOT) -> None:
        self.root = Path(root)
        self._names: tuple[str, ...] | None = None
        self._devices: list[Device] = []

    def _device_names(self) -> tuple[str, ...]:
        try:
            return tuple(sorted(n for n in os.listdir(self.root) if _DEVICE_DIR.match(n)))
        except OSError:
            return ()

    def devices(self) -> list[Device]:
        names = self._device_names()
        if names != self._names:
            self._names = names
            self._devices = [self._scan(name) for name in names]
            self._devices.sort(key=lambda d: d.index)
        return self._devices

    def present(self) -> bool:
        return bool(self.devices())

    def _scan(self, name: str) -> Device:
        m = _DEVICE_DIR.match(name)
        index = int(m.group(1)) if m else 0
        path = self.root / name
        files, core_dirs = _walk(path, skip_core_dirs=True)
        device = Device(index, path, files)
        for core_index, core_path in sorted(core_dirs):
            core_files, _ = _walk(core_path, skip_core_dirs=False)
            device.cores.append(SysfsNode(core_index, core_path, core_files))
        return device

    def cores_per_device(self) -> int | None:
        devices = self.devices()
        if not devices:
            return None
        first = devices[0]
        return read_int(first.find("core_count")) or (len(first.cores) or None)

    def driver_version(self) -> str | None:
        return read_text(self.root.parent.parent.parent / "module" / "neuron" / "version")


# -- neuron-ls ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LsFacts:
    """What ``neuron-ls --json-output`` tells about the hardware."""

    device_count: int
    cores_per_device: int | None = None
    memory_size: int | None = None
    logical_neuroncore_config: int | None = None


def find_neuron_ls() -> str | None:
    """The ``neuron-ls`` executable (``PATH``, then ``/opt/aws/neuron/bin``), or None."""
    found = shutil.which("neuron-ls")
    if found:
        return found
    fallback = Path("/opt/aws/neuron/bin/neuron-ls")
    return str(fallback) if os.access(fallback, os.X_OK) else None


def run_neuron_ls(exe: str | None = None, timeout: float = 5.0) -> bytes | None:
    """neuron-ls's JSON output, trying the current flag then the Neuron 2.34 one; None when it is absent or fails."""
    exe = exe or find_neuron_ls()
    if exe is None:
        return None
    for flags in (["--json-output"], ["--output-format", "json"]):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(
                [exe, *flags], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
            )
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout
    return None


def parse_neuron_ls(data: bytes | None) -> LsFacts | None:
    """Facts from neuron-ls JSON (an array of devices, or an object holding one); None if unusable."""
    if not data:
        return None
    try:
        doc: Any = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    if isinstance(doc, dict):  # newer output wraps the device list with instance fields
        doc = next((v for v in doc.values() if isinstance(v, list)), None)
    if not isinstance(doc, list):
        return None
    devices = [d for d in doc if isinstance(d, dict)]
    if not devices:
        return None

    def first_int(key: str) -> int | None:
        for d in devices:
            v = d.get(key)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    return LsFacts(
        device_count=len(devices),
        cores_per_device=first_int("nc_count"),
        memory_size=first_int("memory_size"),
        logical_neuroncore_config=first_int("logical_neuroncore_config"),
    )


def lazy_once(fn: Callable[[], bytes | None]) -> Callable[[], bytes | None]:
    """Call ``fn`` the first time only (neuron-ls is slow and the hardware does not change)."""
    box: list[bytes | None] = []

    def once() -> bytes | None:
        if not box:
            box.append(fn())
        return box[0]

    return once


def global_core_index(device_index: int, core_index: int, cores_per_device: int | None) -> int:
    """NeuronCore keys in reports are global: device index x cores per device + core index."""
    return device_index * (cores_per_device or 1) + core_index


def sum_known(values: Iterable[int | None]) -> int | None:
    """The sum of the values that are not None, or None when none is known."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None

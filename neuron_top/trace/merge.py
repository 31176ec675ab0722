"""Several trace files on one timeline: each file's tracks become one group, its times shifted onto one clock.

When every file is on a wall clock (Kineto's ``baseTimeNanoseconds`` or epoch times, neuron-explorer's epoch
nanoseconds) they share that clock exactly: ranks of one job line up as they ran. Otherwise (neuron-det and other
monotonic clocks, which do not compare across machines) each file is aligned at its start, and the store says
so in ``metadata["alignment"]`` for the screen to show.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import replace
from itertools import repeat
from operator import add
from pathlib import Path

import numpy as np

from neuron_top.trace.flowbind import FlowMap
from neuron_top.trace.store import TraceStore

__all__ = ["file_label", "merge_stores"]

_NDET_LOG = re.compile(r"([^/\s]+\.txt)\b")


def file_label(store: TraceStore, path: str) -> str:
    """A file's group name: its ``distributedInfo.rank``, the neuron-det log it came from, else the file name."""
    rank = store.metadata.get("rank")
    if rank:
        return f"rank {rank}"
    if store.format == "neuron-det":
        logs = {m.group(1) for tr in store.tracks for m in [_NDET_LOG.search(tr.process)] if m}
        if len(logs) == 1:
            return logs.pop()
    name = Path(path).name
    for ext in (".gz", ".json"):
        name = name.removesuffix(ext)
    return name or path


def merge_stores(stores: list[TraceStore], labels: list[str]) -> TraceStore:
    """One store holding all of ``stores`` (columns concatenated, ids renumbered), on one time axis."""
    offsets = [st.wall_offset for st in stores]
    wall = all(o is not None for o in offsets)
    if wall:
        shifts = [o or 0 for o in offsets]  # every time becomes Unix nanoseconds
        alignment = "one wall clock"
    else:
        base = stores[0].t_min
        shifts = [base - st.t_min for st in stores]
        alignment = "aligned at their starts: their clocks do not compare"
    out = TraceStore()
    flow_a: list[np.ndarray] = []
    flow_b: list[np.ndarray] = []
    out.path = ", ".join(st.path for st in stores)
    formats = sorted({st.format for st in stores})
    out.format = formats[0] if len(formats) == 1 else "+".join(formats)
    smap: dict[str, int] = {}
    for st, label, shift in zip(stores, labels, shifts, strict=True):
        d, t0, c0 = len(out.start), len(out.tracks), len(out.counters)
        remap = []
        for s in st.strings:
            k = smap.get(s)
            if k is None:
                k = smap[s] = len(out.strings)
                out.strings.append(s)
            remap.append(k)
        out.start += array("q", map(add, st.start, repeat(shift)))
        out.end += array("q", map(add, st.end, repeat(shift)))
        out.dur += st.dur
        out.orig += array("i", map(add, st.orig, repeat(d)))
        out.name += array("i", map(remap.__getitem__, st.name))
        out.cat += array("i", map(remap.__getitem__, st.cat))
        out.track += array("i", map(add, st.track, repeat(t0)))
        out.flags += st.flags
        out.phase += st.phase
        blob = len(out.args_blob)
        out.args_off += array("q", map(add, st.args_off[1:], repeat(blob)))
        out.args_blob = bytearray(out.args_blob) + st.args_blob
        for tr in st.tracks:
            out.tracks.append(
                replace(
                    tr,
                    id=tr.id + t0,
                    key=(label, *tr.key),
                    rows=[(lo + d, hi + d) for lo, hi in tr.rows],
                    mips=[None] * len(tr.rows),
                    file=label,
                )
            )
        for c in st.counters:
            out.counters.append(
                replace(c, id=c.id + c0, key=(label, *c.key), ts=array("q", map(add, c.ts, repeat(shift))), file=label)
            )
        flow_a.append(st.flows.a + d)
        flow_b.append(st.flows.b + d)
        out.flow_count += st.flow_count
        out.unfinished += [e + d for e in st.unfinished]
        out.errors += [e + d for e in st.errors]
        for why, n in st.problems.items():
            out.problems[f"{label}: {why}"] += n
        out.phase_counts.update(st.phase_counts)
        out.lost += st.lost
        for why, n in st.lost_reasons.items():
            out.lost_reasons[f"{label}: {why}"] += n
        out.unread += [f"{label}: {u}" for u in st.unread]
        for what, n in st.not_shown.items():
            out.not_shown[f"{label}: {what}"] = n
    if flow_a:
        out.flows = FlowMap(np.concatenate(flow_a), np.concatenate(flow_b))
    present = [(st.t_min + sh, st.t_max + sh) for st, sh in zip(stores, shifts, strict=True) if len(st) or st.counters]
    out.t_min = min((a for a, _ in present), default=0)
    out.t_max = max((b for _, b in present), default=0)
    out.metadata = {"files": str(len(stores)), "alignment": alignment, "labels": "\n".join(labels)}
    versions = {st.metadata.get("profile_schema_version", "") for st in stores}
    if len(versions) == 1 and "" not in versions:  # one Neuron Explorer profile schema for all: still said
        out.metadata["profile_schema_version"] = versions.pop()
    if wall:
        out.metadata["wall_offset"] = "0"
    return out

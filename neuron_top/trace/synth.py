"""A deterministic neuron-det-like trace generator (benchmarks, snapshot tests, demos).

It mimics what neuron-det writes: one process per log file (named after the log, with the instance id and the
replica groups), one thread per NeuronCore, ``nrt_execute > sync_exec - <neff> > nc_exec > cc_op_exec`` nesting,
``cc_exec_barrier > cc_barrier_recv`` before collective executions, an occasional numerical error (``ret``
1003) and, at the end, begins that never end (the hang signal).
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from typing import IO

__all__ = ["iter_events", "trace_text", "write_trace"]

_NEFFS = (
    "/tmp/neuroncc_compile_workdir/model_a/graph.neff",
    "/tmp/neuroncc_compile_workdir/model_b/graph.neff",
)


def iter_events(
    n_events: int,
    cores: int = 8,
    processes: int = 1,
    seed: int = 1,
    hang: bool = True,
    force_error: bool = False,
) -> Iterator[str]:
    """Yield about ``n_events`` JSON event objects (as text) in a neuron-det-like layout.

    ``force_error`` makes NeuronCore 1's second execution fail (ret 1003 and a numerical_error event), so even
    a tiny trace has an error to find.
    """
    rnd = random.Random(seed)
    out = 0
    for p in range(processes):
        pid = 4000 + p
        inst = f"i-0{p:x}{seed:06x}abcdef"[:19]
        name = f"/tmp/ndet_20240101_{pid}_{inst}.txt - (GIDs: [0..{cores * processes - 1}])"
        yield f'{{"name":"process_name","ph":"M","pid":{pid},"tid":0,"args":{{"name":"{name}"}}}}'
        for nc in range(cores):
            yield f'{{"name":"thread_name","ph":"M","pid":{pid},"tid":{nc},"args":{{"name":"{nc}"}}}}'
    per_core = max(1, n_events // (cores * processes))
    for p in range(processes):
        pid = 4000 + p
        for nc in range(cores):
            t = 1_000_000.0 + nc * 37.0
            exec_id = 0
            made = 0
            gid = p * cores + nc
            while made < per_core and out < n_events:
                exec_id += 1
                cc = exec_id % 4 == 0
                nexec = 6 if cc else 3
                total = rnd.randint(900, 1500) + (400 if cc else 0)
                neff = _NEFFS[exec_id % 2]
                yield _x(
                    "nrt_execute", t, total, pid, nc, f'"gid":{gid},"nc":{nc},"exec_id":{exec_id},"ret":0'
                )
                yield _x(f"sync_exec - {neff}", t + 20, total - 40, pid, nc, f'"exec_id":{exec_id}')
                inner = t + 40
                if cc:
                    yield _x("cc_exec_barrier", inner, 300, pid, nc, f'"gid":{gid}')
                    yield _x(f"cc_barrier_recv ({gid}->{gid + 1})", inner + 10, 250, pid, nc, f'"gid":{gid}')
                    inner += 320
                err = rnd.random() < 0.0005 or (force_error and nc == 1 and exec_id == 2)
                yield _x(
                    "nc_exec",
                    inner,
                    total - 120 - (inner - t),
                    pid,
                    nc,
                    f'"nd":{nc // 2},"nc":{nc},"exec_id":{exec_id}' + (',"ret":1003' if err else ""),
                )
                step = (total - 200 - (inner - t)) / max(1, nexec - 3)
                for k in range(nexec - 3):
                    yield _x("cc_op_exec", inner + 10 + k * step, step * 0.6, pid, nc, f'"op":{k}')
                if err:
                    yield _x(
                        "numerical_error",
                        inner + 50,
                        10,
                        pid,
                        nc,
                        f'"nd":{nc // 2},"nc":{nc},"exec_id":{exec_id}',
                    )
                    made += 1
                made += nexec
                out += nexec + (1 if err else 0)
                t += total + rnd.randint(50, 400)
            if hang and nc == cores - 1 and p == processes - 1:
                yield f'{{"name":"nrt_execute","cat":"nrt_execute","ph":"B","ts":{t:.3f},"pid":{pid},"tid":{nc},"args":{{"gid":{gid},"nc":{nc},"exec_id":{exec_id + 1}}}}}'
                yield f'{{"name":"nc_exec","cat":"nc_exec","ph":"B","ts":{t + 40:.3f},"pid":{pid},"tid":{nc},"args":{{"nc":{nc},"exec_id":{exec_id + 1}}}}}'


def _x(name: str, ts: float, dur: float, pid: int, tid: int, args: str) -> str:
    cat = name.split(" ", 1)[0]
    return (
        f'{{"name":"{name}","cat":"{cat}","ph":"X","ts":{ts:.3f},"dur":{dur:.3f},'
        f'"pid":{pid},"tid":{tid},"args":{{{args}}}}}'
    )


def write_trace(
    f: IO[str],
    n_events: int,
    cores: int = 8,
    processes: int = 1,
    seed: int = 1,
    hang: bool = True,
    force_error: bool = False,
) -> None:
    """Write a Chrome JSON array, one event per line (as neuron-det does)."""
    f.write("[\n")
    first = True
    for ev in iter_events(n_events, cores, processes, seed, hang, force_error):
        if not first:
            f.write(",\n")
        f.write(ev)
        first = False
    f.write("\n]\n")


def trace_text(
    n_events: int,
    cores: int = 4,
    processes: int = 1,
    seed: int = 1,
    hang: bool = True,
    force_error: bool = False,
) -> str:
    """A synthetic Chrome trace of ``n_events`` events as one JSON text (seeded; ``hang`` leaves one unfinished)."""
    buf = io.StringIO()
    write_trace(buf, n_events, cores, processes, seed, hang, force_error)
    return buf.getvalue()

"""The Prometheus fleet: every refresh, the fixed query set in parallel, then one row per host (no UI imports).

Faults and what the user sees:

* the server is down or slow (every query fails the same way): the last rows stay, aging, their status judged
  as if their series had gone (stale, then down); the frame says why and when the next try is; tries back off
  (2, 4, 8 ... 60 s) and snap back to the refresh interval after a success;
* one query fails (a server-side error, an old Prometheus without a function): its columns are blank and the
  frame carries the error with the query's text;
* what changes slowly (labels, hardware, memory and runtimes, vCPU, one-minute execution rates, a p99, the ECC
  window, hosts long gone) is asked once every ``SLOW_EVERY`` refreshes, in turns (one or two a refresh), and all
  of it when a new host shows up, its last answer used in between; status and the NeuronCores' utilization are
  asked every refresh. Prometheus's cost is per
  series read (a few microseconds each, one core per query): at 256 trn2 hosts a full refresh costs it ~0.9 s of
  CPU, one of status and utilization ~0.3 s;
* a host vanishes from every answer: its last row stays, as down, for ``keep`` seconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import msgspec

from neuron_top.fleet.apps import apps_from_answer, apps_query
from neuron_top.fleet.frame import FleetFrame, Problem
from neuron_top.fleet.promql import PromClient, PromError, Sample
from neuron_top.fleet.queries import PART, SLOW_EVERY, FleetQuery, QuerySet
from neuron_top.fleet.rows import (
    DOWN,
    SCRAPE_FAILS,
    UP,
    FleetRow,
    Thresholds,
    from_answers,
    status_for,
    with_status,
)
from neuron_top.sources.base import Backoff
from neuron_top.textsafe import clean

__all__ = ["PromFleet"]

_FIGURES = tuple(f for f in FleetRow.__struct_fields__
                 if f not in ("key", "status", "age", "scraped", "note", "targets"))
"""What a row that went stale keeps from its last answer."""
WORKERS = 4
"""Queries in flight at once: every query of a fast refresh at once (a Prometheus with the cores to spare answers
them side by side), few enough not to crowd it."""
KEEP = 3600.0
"""Seconds a host that vanished from every answer stays listed (as down)."""


class PromFleet:
    """Polls one Prometheus for a fleet. ``refresh`` blocks (run it in one worker thread).

    Args:
        client: the server (``PromClient``).
        queries: what to ask (``QuerySet``).
        thresholds: when a host is stale and down.
        clock: Unix time, injected for tests.
    """

    def __init__(self, client: PromClient, queries: QuerySet, *, thresholds: Thresholds | None = None,
                 clock: Callable[[], float] = time.time, keep: float = KEEP) -> None:
        self.client = client
        self.qs = queries
        self.queries = queries.queries()
        self.thresholds = thresholds or Thresholds()
        self.clock = clock
        self.keep = keep
        self.backoff = Backoff(first=2.0, cap=60.0)  # between failed refreshes
        self.apps = False
        """Ask the apps view's one query too (``fleet.apps``): set while the apps view is shown, or ``--apps``."""
        self.source = f"prometheus {client.display}"
        self._rows: dict[str, FleetRow] = {}
        self._last_ok: float | None = None
        self._ok_names: set[str] = set()
        """The queries that answered in the refresh under way."""
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="promql")
        self._closed = threading.Event()
        self.start_over()

    def due(self) -> list[FleetQuery]:
        """The queries this refresh asks: every fast one, and the slow ones in turns (each once in ``SLOW_EVERY``
        refreshes, spread so no refresh asks them all); every one at the first refresh and right after a host
        showed up that they do not know; a slow one without an answer (it failed) at once."""
        slow = [q for q in self.queries if q.slow]
        if self._count == 0 or self._new_hosts:
            return list(self.queries)
        slot = self._count % SLOW_EVERY
        asked = [q for i, q in enumerate(slow) if i % SLOW_EVERY == slot or q.name not in self._kept]
        return [q for q in self.queries if not q.slow or q in asked]

    def refresh(self) -> FleetFrame:
        """Ask the queries due (in parallel) and make the frame."""
        start = self.clock()
        t0 = time.perf_counter()
        due = self.due()
        futures = {q.name: self._pool.submit(self._ask, q.expr) for q in due}
        apps_asked = self._pool.submit(self._ask, apps_query(self.qs)) if self.apps else None
        answers: dict[str, object] = {name: f.result() for name, f in futures.items()}
        apps_answer = apps_asked.result() if apps_asked is not None else None
        elapsed = time.perf_counter() - t0
        failures = {n: a for n, a in answers.items() if isinstance(a, PromError)}
        self._ok_names = {n for n in answers if n not in failures}
        problems = [Problem(message=e.message, name=n, query=e.query) for n, e in failures.items()]
        if isinstance(apps_answer, PromError):
            problems.append(Problem(message=apps_answer.message, name="apps", query=apps_answer.query))
        n = len(due)
        if len(failures) == n and any(e.whole for e in failures.values()):
            return self._unreachable(start, elapsed, problems)
        if len(failures) == n and all(e.kind in ("http", "response") for e in failures.values()):
            # every query met an HTTP error or an answer that is not the API's JSON: the URL is not a Prometheus
            # query API (an exporter's port, a wrong path), which is the server as a whole, not n query faults
            display = self.client.display
            answer = failures[due[0].name].message.replace(f" from {display}", "")
            problems = [Problem(message=f"{display} is not a Prometheus query API (/api/v1/query: {answer}); "
                                        "--prometheus takes the server's base URL, e.g. http://prometheus:9090")]
            return self._unreachable(start, elapsed, problems)
        self._count += 1
        for q in self.queries:  # slow answers: kept from when they were asked, and used until asked again
            if not q.slow:
                continue
            got = answers.get(q.name)
            if isinstance(got, list):
                self._kept[q.name] = (start, got)
            elif isinstance(got, PromError):
                self._kept.pop(q.name, None)
            elif q.name in self._kept:
                answers[q.name] = _aged_answer(q.name, *self._kept[q.name], start)
        self._new_hosts = _unknown_hosts(self.qs.by, answers)
        seen = answers.get("seen")
        if isinstance(seen, list) and any(s.metric.get(PART) == "scrape_down" for s in seen):
            # one more request, only while some host's scrape fails: Prometheus's own words for why (if that
            # fails too, the row still says up == 0)
            with contextlib.suppress(PromError):
                answers["scrape_errors"] = self.client.scrape_errors()
        rows = from_answers(self.qs, self.queries, answers, self.thresholds)
        since = start - self._last_ok if self._last_ok is not None else 0.0
        fresh = {r.key: self._aged(r, since) for r in rows}
        for key, old in self._rows.items():  # hosts gone from every answer: keep them, as down
            if key not in fresh:
                aged = with_status([old], self.thresholds, since)[0]
                if aged.age is None or aged.age <= self.keep:
                    fresh[key] = _down(aged)
        self._rows = fresh
        self._last_ok = start
        self.backoff.reset()
        apps = apps_from_answer(self.qs, apps_answer) if isinstance(apps_answer, list) else None
        return FleetFrame(ts=start, source=self.source, rows=list(fresh.values()),
                          state="partial" if problems else "ok", problems=problems,
                          queries=n + (apps_asked is not None), elapsed=elapsed, apps=apps)

    def start_over(self) -> None:
        """The next refresh asks every query (as the first one does)."""
        self._count = 0
        self._kept: dict[str, tuple[float, list[Sample]]] = {}
        """Slow queries' last answers and when they were asked."""
        self._new_hosts = False

    def _aged(self, row: FleetRow, since: float) -> FleetRow:
        """A host that is not current (its scrapes fail): its last known figures stay (Prometheus no longer
        answers with series that went stale), its data ages from the last refresh on, and the time since it was
        last scraped is at most what it was then plus the time since: the "gone" subquery sees samples only at
        its 10 s steps, so its own figure can be 10 s too old; the smaller of the two is the better bound."""
        old = self._rows.get(row.key)
        if row.status == UP or old is None:
            return row
        kept: dict[str, object] = {
            f: getattr(old, f) for f in _FIGURES if _missing(getattr(row, f)) and not _missing(getattr(old, f))}
        if "seen" in self._ok_names:
            last = old.scraped if old.scraped is not None else old.age
            if last is not None and (row.scraped is None or row.scraped > last + since):
                kept["scraped"] = last + since
                if not (row.status == DOWN and row.note.startswith(SCRAPE_FAILS)):  # up == 0 is down now
                    kept["status"] = status_for(last + since, False, self.thresholds)
            if old.age is not None:
                kept["age"] = max(old.age + since, row.age or 0.0)
        return msgspec.structs.replace(row, **kept) if kept else row

    def _unreachable(self, start: float, elapsed: float, problems: list[Problem]) -> FleetFrame:
        since = start - self._last_ok if self._last_ok is not None else 0.0
        rows = with_status(self._rows.values(), self.thresholds, since)
        retry = self.backoff.next()
        first = problems[0]
        self.start_over()  # when it answers again, ask everything
        return FleetFrame(ts=start, source=self.source, rows=rows, state="unreachable",
                          problems=[Problem(message=first.message)], queries=len(self.due()), elapsed=elapsed,
                          retry_in=retry)

    def next_delay(self, interval: float, frame: FleetFrame) -> float:
        """Seconds to wait before the next refresh: the interval, or the back-off after a failed one."""
        if frame.retry_in is not None:
            return max(interval, frame.retry_in)
        return max(0.0, interval - frame.elapsed)

    def _ask(self, expr: str) -> object:
        if self._closed.is_set():
            return PromError("unreachable", "stopped", expr)
        try:
            return self.client.query(expr)
        except PromError as exc:
            return exc
        except Exception as exc:  # a client bug costs this query, never the refresh loop
            return PromError("response", f"could not read the answer: {clean(repr(exc), 200)}", expr)

    def run(self, emit: Callable[[FleetFrame], object], stop: threading.Event, interval: float = 2.0) -> None:
        """Refresh until ``stop``: the worker thread's body."""
        while not stop.is_set() and not self._closed.is_set():
            frame = self.refresh()
            emit(frame)
            stop.wait(self.next_delay(interval, frame))

    def close(self) -> None:
        self._closed.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()


def _aged_answer(name: str, asked: float, samples: list[Sample], now: float) -> list[Sample]:
    """A kept answer, used ``now``: ages (the "gone" query's values) have grown by the time since it was asked."""
    if name != "gone" or now <= asked:
        return samples
    dt = now - asked
    return [Sample(s.metric, (s.value[0] + dt, repr(v + dt) if (v := s.number) is not None else s.value[1]))
            for s in samples]


def _unknown_hosts(by: str, answers: dict[str, object]) -> bool:
    """Whether "seen" names a host the (kept) info answer does not: then the slow queries are due next time."""
    seen, info = answers.get("seen"), answers.get("info")
    if not isinstance(seen, list) or not isinstance(info, list):
        return False
    known = {s.metric.get(by, "") for s in info}
    return any(s.metric.get(by, "") not in known for s in seen if s.metric.get(PART) == "now")


def _missing(value: object) -> bool:
    return value is None or value == "" or value == {}


GONE = "no longer in any answer"


def _down(row: FleetRow) -> FleetRow:
    note = row.note if row.note.startswith(GONE) else GONE + (f"; {row.note}" if row.note else "")
    return msgspec.structs.replace(row, status=DOWN, note=note)

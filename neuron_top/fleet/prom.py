"""The Prometheus fleet: every refresh, the fixed query set in parallel, then one row per host (no UI imports).

Faults and what the user sees:

* the server is down or slow (every query fails the same way): the last rows stay, aging, their status judged
  as if their series had gone (stale, then down); the frame says why and when the next try is; tries back off
  (2, 4, 8 ... 60 s) and snap back to the refresh interval after a success. A refresh that does not know the
  server answers (the first, and each try after a failed one) asks one query alone first (the rules' probe, else
  the first query) and stops there when it fails as a whole (refused, timed out, 401/403): one request, not 11;
* the server refuses every query (a ``--match`` or ``--by`` it cannot read, an overloaded server's 503): the
  same, with the first error and its query;
* one query fails (a server-side error, an old Prometheus without a function): its columns are blank and the
  frame carries the error with the query's text;
* what changes slowly (labels, hardware, memory and runtimes, vCPU, one-minute execution rates, a p99, the ECC
  window, hosts long gone) is asked once every ``SLOW_EVERY`` refreshes, in turns (one or two a refresh), and all
  of it when a new host shows up, its last answer used in between; status and the NeuronCores' utilization are
  asked every refresh. After the first refresh the slow ones are asked once status and utilization have answered,
  in the background (``background``): a refresh does not wait for them, the next one uses their answers.
  Prometheus's cost is per series read (a few microseconds each, one core per query): at 256 trn2 hosts a full
  refresh of the raw series costs it ~0.9 s of CPU, one of status and utilization ~0.3 s; the recording rules
  leave a few series per host;
* a host scraped while a refresh's queries are under way: every query of a refresh (the background's and the
  parts of a split one too) is evaluated at one instant, the refresh's start on the server's clock (read from the
  first refresh's answers, and again every ``PROBE_EVERY`` refreshes), so no host is up in one answer and
  missing from another;
* a host vanishes from every answer: its last row stays, as down, for ``keep`` seconds;
* the server warns (Thanos's ``partial_response``: a store did not answer): the answer is used, the warning shown
  with the query's name, and the frame is "partial".

What the engine offers, found out as it goes (each said in the header, ``FleetFrame.notes``):

* the recording rules of ``deploy/prometheus/neuron-top.recording.yml``: asked (``rules_probe``) at the first
  refresh, every ``PROBE_EVERY`` refreshes and after the server was unreachable; when they have series, the per-core queries read them instead
  ("recording rules"), else the raw series ("raw series");
* a cap on the series of one answer (CloudWatch: 500): an answer that reaches ``limit`` may be cut, so that query
  is asked again in parts, one per value of a label (``shard_by``: the availability zone, then the instance type
  within a zone still too big), and the parts merged; it is asked in parts from then on.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import msgspec

from neuron_top.fleet.apps import apps_from_answer, apps_query
from neuron_top.fleet.frame import FleetFrame, Problem
from neuron_top.fleet.promql import Answer, PromClient, PromError, Sample, answer_in_parts
from neuron_top.fleet.queries import PART, SLOW_EVERY, FleetQuery, QuerySet, label
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
BACKGROUND_WORKERS = 2
"""Slow queries in flight at once in the background (one or two are due a refresh)."""
KEEP = 3600.0
"""Seconds a host that vanished from every answer stays listed (as down)."""
PROBE_EVERY = 60
"""Refreshes between two asks whether the recording rules have series (rules loaded or removed meanwhile)."""
SHARD_BY = ("availability_zone", "instance_type")
"""Labels an answer too big for the server's cap is split by, in turn (``--shard-by`` gives others)."""


@dataclass(frozen=True, slots=True)
class _Asked:
    """One query's outcome: its answer (the parts merged) or why not, the requests it took, how it was split."""

    result: Answer | PromError
    requests: int = 1
    split: str = ""
    sent: float = 0.0
    """When it was asked and answered (``PromFleet.clock``): the middle of the two is when the server evaluated it,
    give or take half the round trip."""
    answered: float = 0.0


class PromFleet:
    """Polls one Prometheus for a fleet. ``refresh`` blocks (run it in one worker thread).

    Args:
        client: the server (``PromClient``).
        queries: what to ask (``QuerySet``).
        thresholds: when a host is stale and down.
        clock: Unix time, injected for tests.
        rules: "auto" (the recording rules when the server has their series), "off" (the raw series always).
        limit: the server's cap on the series of one answer (CloudWatch: 500); None: no cap.
        shard_by: the labels a capped answer is split by, in turn.
    """

    def __init__(self, client: PromClient, queries: QuerySet, *, thresholds: Thresholds | None = None,
                 clock: Callable[[], float] = time.time, keep: float = KEEP, rules: str = "auto",
                 limit: int | None = None, shard_by: tuple[str, ...] = SHARD_BY, background: bool = True) -> None:
        self.client = client
        self.background = background
        """Slow queries after the first refresh are asked once the fast ones have answered, without waiting for
        them: their answers are used from the next refresh on (they are kept for ``SLOW_EVERY`` refreshes anyway).
        A refresh then costs the server status and utilization only; the slow work runs in the pause between
        refreshes. False: every query due is waited for (tests that count what each refresh asks)."""
        self._pending: dict[str, tuple[float, Future[_Asked]]] = {}
        """Slow queries asked in the background and not yet used: when asked, and the answer to come."""
        self.raw = replace(queries, rules=False)
        self.qs = self.raw
        self.queries = self.qs.queries()
        self.rules = rules
        self.limit = limit
        self.shard_by = shard_by
        self._split: set[str] = set()
        """Queries whose answer reached the cap: asked in parts from then on."""
        self._values: dict[tuple[str, str], Answer] = {}
        """A refresh's answers of "which values has this label" (per part and label), shared by its queries."""
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
        self._later = ThreadPoolExecutor(max_workers=BACKGROUND_WORKERS, thread_name_prefix="promql-later")
        """The background's own workers: slow answers still under way never hold up status and utilization."""
        self._closed = threading.Event()
        self._skew: float | None = None
        """The server's clock minus ours (seconds), from an answer asked without a time: every query of a refresh
        is then evaluated at one instant of the server's, the refresh's start (a host scraped between two of them
        is not up in one answer and missing from the other)."""
        self._new_hosts = False
        """"seen" named a host the kept answers do not know: the next refresh asks everything."""
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
        if self._count % PROBE_EVERY == 0:  # the first refresh, and now and then (a clock stepped): found again
            self._skew = None
        at = start + self._skew if self._skew is not None else None
        probed, refused = self._probe_rules(at) if self._count % PROBE_EVERY == 0 and self.rules == "auto" \
            else (None, None)
        self._values = {}
        everything = self._count == 0 or self._new_hosts
        later = [q for q in self.due() if q.slow and self.background and not everything]
        due = [q for q in self.due() if q not in later]
        alone: dict[str, _Asked] = {}
        if probed is None and self._count == 0:  # not known to answer: one query alone first, as the probe is
            alone[due[0].name] = self._ask(due[0], at)
            first = alone[due[0].name].result
            refused = first if isinstance(first, PromError) and first.whole else None
        if refused is not None:  # down, or refusing us: the other queries would only fail the same way
            return self._unreachable(start, time.perf_counter() - t0, [Problem(message=refused.message)],
                                     probed or 1)
        # the background answers that came in since the last refresh (one still under way stays pending)
        landed = {name: (when, f.result()) for name, (when, f) in self._pending.items() if f.done()}
        for name in landed:
            del self._pending[name]
        futures = {q.name: self._pool.submit(self._ask, q, at) for q in due if q.name not in alone}
        apps_asked = self._pool.submit(self._ask, FleetQuery("apps", apps_query(self.qs), ()), at) if self.apps \
            else None
        asked = {**alone, **{name: f.result() for name, f in futures.items()}}
        if at is None:
            self._skew = _skew(asked.get("seen"))
        for q in later:  # now that status and utilization have answered; not twice at once
            if q.name not in self._pending:
                self._pending[q.name] = (start, self._later.submit(self._ask, q, at))
        answers: dict[str, object] = {
            n: a.result.samples if isinstance(a.result, Answer) else a.result for n, a in asked.items()}
        apps_result = apps_asked.result().result if apps_asked is not None else None
        apps_answer = apps_result.samples if isinstance(apps_result, Answer) else apps_result
        elapsed = time.perf_counter() - t0
        failures = {n: a for n, a in answers.items() if isinstance(a, PromError)}
        self._ok_names = {n for n in answers if n not in failures}
        problems = [Problem(message=e.message, name=n, query=e.query) for n, e in failures.items()]
        problems += [Problem(message=a.result.message, name=n, query=a.result.query) for n, (_, a) in landed.items()
                     if isinstance(a.result, PromError)]
        exprs = {q.name: q.expr for q in self.queries}
        warned = [Problem(message=w, name=n, query=exprs.get(n, ""), warning=True)
                  for n, a in [*asked.items(), *((n, a) for n, (_, a) in landed.items())]
                  if isinstance(a.result, Answer) for w in a.result.warnings]
        if isinstance(apps_answer, PromError):
            problems.append(Problem(message=apps_answer.message, name="apps", query=apps_answer.query))
        n = sum(a.requests for a in asked.values()) + sum(a.requests for _, a in landed.values()) + (probed or 0)
        if len(failures) == len(due) and any(e.whole for e in failures.values()):
            return self._unreachable(start, elapsed, [Problem(message=problems[0].message)], n)
        if len(failures) == len(due) and all(e.kind in ("http", "response") for e in failures.values()):
            # every query met an HTTP error or an answer that is not the API's JSON: the URL is not a Prometheus
            # query API (an exporter's port, a wrong path), which is the server as a whole, not n query faults
            display = self.client.display
            answer = failures[due[0].name].message.replace(f" from {display}", "")
            problems = [Problem(message=f"{display} is not a Prometheus query API (/api/v1/query: {answer}); "
                                        "--prometheus takes the server's base URL, e.g. http://prometheus:9090")]
            return self._unreachable(start, elapsed, problems, n)
        if len(failures) == len(due):
            # the server refused every query (a --match regex or a --by label it cannot read, an overloaded
            # server's 503): nothing answered, as when it is down; one fault, said once with its query
            said = problems[0]
            problems = [Problem(message=f"every query failed; the first, {said.name}: {said.message}",
                                query=said.query)]
            return self._unreachable(start, elapsed, problems, n)
        notes = ["recording rules" if self.qs.rules else "raw series"]
        splits = sorted({a.split for a in [*asked.values(), *(a for _, a in landed.values())] if a.split})
        if splits:
            notes.append(f"answers over {self.limit} series split by " + "; ".join(splits))
        self._count += 1
        for name, (when, a) in landed.items():  # kept from when they were asked, as the others
            if isinstance(a.result, Answer):
                self._kept[name] = (when, a.result.samples)
            else:
                self._kept.pop(name, None)
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
                          state="partial" if problems or warned else "ok", problems=problems + warned,
                          queries=n + (apps_asked is not None), elapsed=elapsed, apps=apps, notes=notes)

    def start_over(self) -> None:
        """The next refresh asks every query (as the first one does)."""
        self._count = 0
        self._kept: dict[str, tuple[float, list[Sample]]] = {}
        """Slow queries' last answers and when they were asked."""
        self._new_hosts = False
        self._split = set()
        for _, f in self._pending.values():  # not started yet: not asked at all
            f.cancel()
        self._pending = {}  # answers still to come are not used (the next refresh asks everything)

    def _probe_rules(self, at: float | None) -> tuple[int, PromError | None]:
        """Whether the recording rules have series for this fleet (then the queries read them); a failed probe
        reads the raw series. Returns the requests it took (1, or 2 when the ECC rule had no series) and the error
        when the server as a whole failed it (``PromError.whole``: down, too slow, refusing us)."""
        requests = 1
        refused = None
        try:
            parts = {s.metric.get(PART) for s in self.client.query(self.raw.rules_probe(), at)}
            found = parts == {"rules", "ecc"}
            if parts == {"rules"}:  # an older rules file, or no ECC counter to record
                requests += 1
                found = bool(self.client.query(self.raw.ecc_probe(), at))
        except PromError as exc:
            found = False
            refused = exc if exc.whole else None
        self.qs = replace(self.raw, rules=found)
        self.queries = self.qs.queries()
        return requests, refused

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

    def _unreachable(self, start: float, elapsed: float, problems: list[Problem], asked: int) -> FleetFrame:
        """The frame of a refresh that no query answered (``problems``: why, in one; ``asked``: the queries it
        took to know)."""
        since = start - self._last_ok if self._last_ok is not None else 0.0
        rows = with_status(self._rows.values(), self.thresholds, since)
        retry = self.backoff.next()
        self.start_over()  # when it answers again, ask everything
        return FleetFrame(ts=start, source=self.source, rows=rows, state="unreachable", problems=problems[:1],
                          queries=asked, elapsed=elapsed, retry_in=retry)

    def next_delay(self, interval: float, frame: FleetFrame) -> float:
        """Seconds to wait before the next refresh: the interval, or the back-off after a failed one."""
        if frame.retry_in is not None:
            return max(interval, frame.retry_in)
        return max(0.0, interval - frame.elapsed)

    def _ask(self, q: FleetQuery, at: float | None) -> _Asked:
        """Query ``q`` evaluated at ``at`` (the server's clock; None: when it arrives), in parts past the cap."""
        if self._closed.is_set():
            return _Asked(PromError("unreachable", "stopped", q.expr))
        sent = self.clock()
        try:
            if q.name not in self._split:
                got = self.client.answer(q.expr, at)
                if self.limit is None or len(got.samples) < self.limit:
                    return _Asked(got, sent=sent, answered=self.clock())
                self._split.add(q.name)
                requests = 1
            else:
                requests = 0
            parts: list[int] = []
            got, more = self._in_parts(self.qs, q.name, self.shard_by, parts, at)
            labels = ", then ".join(self.shard_by[:max(parts, default=1)])
            return _Asked(got, requests + more, f"{labels} ({len(parts)} parts)", sent, self.clock())
        except PromError as exc:
            return _Asked(exc)
        except Exception as exc:  # a client bug costs this query, never the refresh loop
            return _Asked(PromError("response", f"could not read the answer: {clean(repr(exc), 200)}", q.expr))

    def _in_parts(self, qs: QuerySet, name: str, by: tuple[str, ...], parts: list[int],
                  at: float | None) -> tuple[Answer, int]:
        """Query ``name`` of ``qs`` asked once per value of ``by[0]`` (each part still at the cap split by the next
        label), the answers merged (``answer_in_parts``): every host is in one part, so no series is in two.
        Returns the answer and the requests it took; ``parts`` gets each part's depth (how many labels split
        it). The values of a label come from ``instance_info``, asked once a refresh for all the queries."""

        def make(shard: str) -> str:
            return next(q.expr for q in replace(qs, shard=shard).queries() if q.name == name)

        def values(shard: str, by: str) -> tuple[Answer, int]:
            got = self._values.get((shard, by))
            if got is not None:
                return got, 0
            # two queries splitting at once may both ask: the same answer twice, no harm
            got = self._values[shard, by] = self.client.answer(
                f"count by ({label(by)}) ({replace(qs, shard=shard).sel('instance_info')})", at)
            return got, 1

        assert self.limit is not None
        return answer_in_parts(self.client, self.limit, make, values, by,
                               f"split by {', '.join(self.shard_by)}: give --shard-by LABEL (a label that "
                               "splits the fleet finer)", shard=qs.shard, depth=parts, at=at)

    def run(self, emit: Callable[[FleetFrame], object], stop: threading.Event, interval: float = 2.0) -> None:
        """Refresh until ``stop``: the worker thread's body."""
        while not stop.is_set() and not self._closed.is_set():
            frame = self.refresh()
            emit(frame)
            stop.wait(self.next_delay(interval, frame))

    def close(self) -> None:
        self._closed.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._later.shutdown(wait=False, cancel_futures=True)
        self.client.close()


def _skew(seen: _Asked | None) -> float | None:
    """The server's clock minus ours, from an answer evaluated when it arrived (its samples carry that time)."""
    if seen is None or not isinstance(seen.result, Answer) or not seen.result.samples:
        return None
    return seen.result.samples[0].value[0] - (seen.sent + seen.answered) / 2


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

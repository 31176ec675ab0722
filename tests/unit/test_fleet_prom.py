"""The Prometheus poller's own rules, with a stand-in client: which queries a refresh asks (fast every time, slow
every few refreshes or when a new host shows up), what it keeps between asks, and the last rows kept while the
server is down."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from neuron_top.fleet.prom import PromFleet
from neuron_top.fleet.promql import Answer, PromClient, PromError, Sample
from neuron_top.fleet.queries import PART, SLOW_EVERY, QuerySet
from neuron_top.fleet.rows import STALE, UP, Thresholds
from tests.fleet_support import free_port


def s(value: float, **labels: str) -> Sample:
    return Sample(labels, (0.0, str(value)))


class Client:
    """Answers by query name; ``fail`` names the queries that fail this time, ``down`` makes every one fail."""

    display = "http://prometheus.test:9090"

    def __init__(self, qs: QuerySet) -> None:
        self.names = {q.expr: q.name for q in qs.queries()}
        self.hosts = ["i-1"]
        self.fail: set[str] = set()
        self.down = False
        self.asked: list[list[str]] = []
        self.requests = 0

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        name = self.names[expr]
        self.requests += 1
        self.asked[-1].append(name)
        if self.down:
            raise PromError("unreachable", "cannot reach http://prometheus.test:9090: connection refused", expr)
        if name in self.fail:
            raise PromError("query", "bad_data: boom", expr)
        answers = {
            "seen": [s(1, instance_id=h, **{PART: "now"}) for h in self.hosts],
            "gone": [s(1, instance_id=h) for h in self.hosts],
            "info": [s(1, instance_id=h, instance_type="trn2.48xlarge") for h in self.hosts],
            "util": [s(0.5, instance_id=h) for h in self.hosts],
        }
        return answers.get(name, [])

    def answer(self, expr: str, at: float | None = None) -> Answer:
        return Answer(self.query(expr))

    def close(self) -> None:
        pass


def poller(clock: list[float] | None = None) -> tuple[PromFleet, Client]:
    qs = QuerySet()
    client = Client(qs)
    t = clock if clock is not None else [1000.0]
    fleet = PromFleet(client, qs, thresholds=Thresholds(30, 120), clock=lambda: t[0],  # type: ignore[arg-type]
                      rules="off", background=False)  # each refresh waits for what it asks: countable
    return fleet, client


def refresh(fleet: PromFleet, client: Client):  # type: ignore[no-untyped-def]
    client.asked.append([])
    return fleet.refresh()


FAST = {"seen", "util", "busiest"}


def test_slow_queries_in_turns_and_their_answers_kept_between() -> None:
    fleet, client = poller()
    frames = [refresh(fleet, client) for _ in range(3 * SLOW_EVERY + 1)]
    assert len(client.asked[0]) == 11  # everything at first
    later = client.asked[1:]
    assert all(set(a) >= FAST and len(a) <= 5 for a in later)  # status and utilization every time, 1-2 more
    slow = {q.name for q in fleet.queries if q.slow}
    for i in range(len(later) - SLOW_EVERY + 1):  # every slow query once in any SLOW_EVERY refreshes in a row
        window = [n for a in later[i:i + SLOW_EVERY] for n in a if n not in FAST]
        assert sorted(window) == sorted(slow)
    assert not any({"executions", "ecc"} <= set(a) for a in later)  # the two dearest in turns apart
    assert all(f.rows[0].instance_type == "trn2.48xlarge" for f in frames)  # from the kept info answer
    assert [f.queries for f in frames] == [len(a) for a in client.asked]
    fleet.close()


def test_a_new_host_brings_the_slow_queries_forward() -> None:
    fleet, client = poller()
    refresh(fleet, client)
    refresh(fleet, client)
    client.hosts.append("i-2")
    refresh(fleet, client)  # "seen" names i-2, which the kept info does not know
    frame = refresh(fleet, client)
    assert len(client.asked[0]) == 11 and len(client.asked[3]) == 11
    assert len(client.asked[1]) < 11 and len(client.asked[2]) < 11
    assert {r.key: r.instance_type for r in frame.rows} == {"i-1": "trn2.48xlarge", "i-2": "trn2.48xlarge"}
    fleet.close()


def test_a_failed_slow_query_is_asked_again_at_once() -> None:
    fleet, client = poller()
    client.fail = {"info"}
    first = refresh(fleet, client)
    assert first.state == "partial" and first.problems[0].name == "info"
    assert first.rows[0].instance_type == ""  # blank, not made up
    client.fail = set()
    second = refresh(fleet, client)
    assert "info" in client.asked[1] and second.rows[0].instance_type == "trn2.48xlarge"
    fleet.close()


def test_a_kept_gone_answer_ages() -> None:
    t = [1000.0]
    fleet, client = poller(t)
    refresh(fleet, client)
    client.hosts = []  # every series of i-1 went stale: only the kept "gone" answer knows it
    t[0] += 4.0
    frame = refresh(fleet, client)
    [row] = frame.rows
    assert row.status == STALE and row.scraped is not None and row.scraped >= 4.0
    fleet.close()


def test_server_down_keeps_rows_and_asks_everything_when_back() -> None:
    t = [1000.0]
    fleet, client = poller(t)
    assert refresh(fleet, client).rows[0].status == UP
    client.down = True
    t[0] += 10
    down = refresh(fleet, client)
    assert down.state == "unreachable" and down.retry_in == 2.0 and down.rows[0].util == 50.0
    assert down.rows[0].status == STALE and "connection refused" in down.problems[0].message
    client.down = False
    t[0] += 2
    back = refresh(fleet, client)
    assert back.state == "ok" and len(client.asked[-1]) == 11 and back.rows[0].status == UP
    fleet.close()


@pytest.mark.parametrize("rules", ["auto", "off"])
def test_a_server_that_is_down_is_asked_one_query_not_eleven(rules: str) -> None:
    """The first refresh asked all 11 queries of a server refusing connections (each tried twice, 24 requests,
    ~410 ms); the first refused one says it all: the rules' probe, or the first query alone when there is none."""
    client = PromClient(f"http://127.0.0.1:{free_port()}", timeout=1)
    fleet = PromFleet(client, QuerySet(), rules=rules)
    frames = [fleet.refresh() for _ in range(2)]  # the first, and the retry after the back-off
    fleet.close()
    assert [f.state for f in frames] == ["unreachable"] * 2 and [f.retry_in for f in frames] == [2.0, 4.0]
    assert "connection refused" in frames[0].problems[0].message and len(frames[0].problems) == 1
    assert client.requests == 4  # one query a refresh, tried again once (PromClient's retry), and no more
    assert [f.queries for f in frames] == [1, 1] and frames[0].cost.startswith("1 query in ")


def test_a_server_that_goes_down_mid_session_is_asked_one_query_a_retry() -> None:
    fleet, client = poller()
    refresh(fleet, client)
    client.down = True
    refresh(fleet, client)  # the refresh that finds it down asks what is due, in parallel
    retry = refresh(fleet, client)
    assert retry.state == "unreachable" and client.asked[-1] == ["seen"]
    client.down = False
    assert refresh(fleet, client).state == "ok" and len(client.asked[-1]) == 11  # then everything, at once
    fleet.close()


def test_a_server_that_refuses_every_query_is_one_fault_with_its_query() -> None:
    """A --match regex the server cannot read (or an overloaded server's 503 for each query): 11 errors of the
    same words and 0 hosts, "partial", and fleet --once exited 0; nothing answered, as when the server is down."""
    fleet, client = poller()
    client.fail = {q.name for q in fleet.queries}
    first = refresh(fleet, client)
    assert first.state == "unreachable" and first.retry_in == 2.0 and not first.rows
    [problem] = first.problems
    assert problem.message == "every query failed; the first, seen: bad_data: boom"
    assert problem.query == next(q.expr for q in fleet.queries if q.name == "seen")
    client.fail = set()
    assert refresh(fleet, client).rows[0].status == UP
    client.fail = {q.name for q in fleet.queries}
    later = refresh(fleet, client)  # the rows stay, aging, as while the server is down
    assert later.state == "unreachable" and later.rows[0].util == 50.0 and len(later.problems) == 1
    fleet.close()


def test_the_queries_of_a_refresh_are_the_same_for_1_16_and_256_hosts() -> None:
    """The scale acceptance: what a refresh asks depends on the refresh, never on the host count (the real-server
    version, 2 and 8 hosts, is in tests/e2e/test_fleet_prometheus.py; benchmarks/bench_fleet.py times 256)."""
    asked = {}
    for n in (1, 16, 256):
        fleet, client = poller()
        client.hosts = [f"i-{k:03d}" for k in range(n)]
        frames = [refresh(fleet, client) for _ in range(2 * SLOW_EVERY + 1)]
        assert len(frames[-1].rows) == n
        # which queries each refresh asked; their order is the threads' (a background one can finish first)
        asked[n] = ([sorted(a) for a in client.asked], client.requests)
    assert asked[1] == asked[16] == asked[256]
    per_refresh = [len(a) for a in asked[256][0]]
    assert per_refresh[0] == 11 and max(per_refresh[1:]) <= 5, per_refresh


def test_the_recording_rules_are_used_when_they_have_series_and_asked_about_again_later() -> None:
    from neuron_top.fleet.prom import PROBE_EVERY
    from neuron_top.fleet.queries import RULES

    qs = QuerySet()
    client = Client(qs)
    loaded = [False]
    probe, ecc_probe = qs.rules_probe(), qs.ecc_probe()
    for q in QuerySet(rules=True).queries():
        client.names.setdefault(q.expr, q.name)
    plain = client.query

    def query(expr: str, at: float | None = None) -> list[Sample]:
        if expr in (probe, ecc_probe):
            client.asked[-1].append("probe")
            return [s(30, **{PART: "rules"}), s(30, **{PART: "ecc"})] if loaded[0] and expr == probe else []
        return plain(expr)

    client.query = query  # type: ignore[method-assign]
    fleet = PromFleet(client, qs, thresholds=Thresholds(30, 120), clock=lambda: 1000.0,  # type: ignore[arg-type]
                      background=False)
    frame = refresh(fleet, client)
    assert frame.notes == ["raw series"] and client.asked[0].count("probe") == 1 and frame.queries == 12
    loaded[0] = True  # the rules are loaded while the view runs: seen at the next probe
    for _ in range(PROBE_EVERY - 1):
        frame = refresh(fleet, client)
        assert frame.notes == ["raw series"] and "probe" not in client.asked[-1]
    frame = refresh(fleet, client)
    assert frame.notes == ["recording rules"] and client.asked[-1].count("probe") == 1
    frame = refresh(fleet, client)
    assert RULES["util"] in next(q.expr for q in fleet.queries if q.name == "util")


def test_the_raw_ecc_counters_are_probed_only_when_the_rules_have_no_ecc_series() -> None:
    """``absent(hardware_ecc_events_total)`` reads every raw ECC counter (~1 s of Prometheus's time at 1,000 trn2
    hosts, most of a first refresh): asked only when the rules are there without the ECC rule (an older rules
    file, or a fleet without ECC counters)."""
    qs = QuerySet()
    probe, ecc_probe = qs.rules_probe(), qs.ecc_probe()
    assert "hardware_ecc_events_total" not in probe and "hardware_ecc_events_total" in ecc_probe
    cases = {  # the probe's parts, whether the fleet has raw ECC counters -> rules read, probe requests
        "this file": ({"rules", "ecc"}, True, True, 1),
        "older file": ({"rules"}, True, False, 2),
        "no ECC counters": ({"rules"}, False, True, 2),
        "no rules": (set(), True, False, 1),
        "only an ECC rule": ({"ecc"}, True, False, 1),
    }
    for case, (parts, counters, rules, requests) in cases.items():
        client = Client(qs)
        for q in QuerySet(rules=True).queries():
            client.names.setdefault(q.expr, q.name)
        plain = client.query
        probed: list[str] = []

        def query(expr: str, at: float | None = None, parts: set[str] = parts, counters: bool = counters, probed: list[str] = probed,
                  plain: Callable[[str], list[Sample]] = plain) -> list[Sample]:
            if expr == probe:
                probed.append("rules")
                return [s(1, **{PART: p}) for p in sorted(parts)]
            if expr == ecc_probe:
                probed.append("ecc")
                return [] if counters else [s(1)]
            return plain(expr)

        client.query = query  # type: ignore[method-assign]
        fleet = PromFleet(client, qs, clock=lambda: 1000.0, background=False)  # type: ignore[arg-type]
        frame = refresh(fleet, client)
        assert (frame.notes[0] == "recording rules") is rules, case
        assert len(probed) == requests and frame.queries == 11 + requests, (case, probed)


class Held(Client):
    """A client whose slow queries wait for ``release`` (a slow server); the fast ones answer at once."""

    def __init__(self, qs: QuerySet) -> None:
        super().__init__(qs)
        self.slow = {q.name for q in qs.queries() if q.slow}
        self.release = threading.Event()
        self.started: list[str] = []
        self.lock = threading.Lock()
        self.instance_type = "inf2.xlarge"

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        name = self.names[expr]
        if name in self.slow:
            with self.lock:
                self.started.append(name)
            assert self.release.wait(10)
            with self.lock:  # not counted in the refresh under way (another thread): the background's own
                if name in self.fail:
                    raise PromError("query", "bad_data: boom", expr)
                return [s(1, instance_id=h, instance_type=self.instance_type) for h in self.hosts] \
                    if name == "info" else []
        return super().query(expr)


def wait_until(test, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 10
    while not test():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_slow_queries_after_the_first_refresh_do_not_hold_a_refresh_up() -> None:
    t = [1000.0]
    qs = QuerySet()
    client = Held(qs)
    fleet = PromFleet(client, qs, thresholds=Thresholds(30, 120), clock=lambda: t[0],  # type: ignore[arg-type]
                      rules="off")
    client.release.set()  # the first refresh waits for everything (the rows are whole at once)
    client.asked.append([])
    first = fleet.refresh()
    assert first.rows[0].instance_type == "inf2.xlarge" and len(client.started) == 8
    client.release.clear()
    client.started.clear()
    # the slow ones are asked after the fast ones, and not waited for: the rows keep the kept answers
    for _ in range(SLOW_EVERY):
        client.asked.append([])
        frame = fleet.refresh()
        assert set(client.asked[-1]) == FAST and frame.rows[0].instance_type == "inf2.xlarge"
        t[0] += 2
    wait_until(lambda: len(client.started) >= 1, "a slow query asked in the background")
    assert set(client.started) <= {q.name for q in fleet.queries if q.slow}
    asked_while_held = list(client.started)
    assert len(asked_while_held) == len(set(asked_while_held))  # one still under way is not asked again
    pending = len(fleet._pending)
    assert pending == 8  # each slow query once in SLOW_EVERY refreshes, none asked twice
    # once answered, used by the next refresh (the host's type changed meanwhile: the new answer shows)
    client.instance_type = "trn1.2xlarge"
    client.release.set()
    wait_until(lambda: not any(not f.done() for _, f in fleet._pending.values()), "the background answers")
    client.asked.append([])
    frame = fleet.refresh()
    assert frame.state == "ok" and frame.rows[0].instance_type == "trn1.2xlarge"
    assert frame.queries == 3 + pending  # the background's requests counted where they are used
    fleet.close()


def test_a_background_answer_that_failed_is_shown_and_asked_again() -> None:
    qs = QuerySet()
    client = Held(qs)
    fleet = PromFleet(client, qs, thresholds=Thresholds(30, 120), clock=lambda: 1000.0,  # type: ignore[arg-type]
                      rules="off")
    client.release.set()
    client.asked.append([])
    fleet.refresh()
    client.fail = {"info"}
    for _ in range(SLOW_EVERY):  # info's turn comes: asked in the background, fails
        client.asked.append([])
        fleet.refresh()
    wait_until(lambda: all(f.done() for _, f in fleet._pending.values()), "the background answers")
    client.asked.append([])
    frame = fleet.refresh()
    assert frame.state == "partial" and [p.name for p in frame.problems] == ["info"]
    assert frame.rows[0].instance_type == ""  # blank, not the old answer made up
    client.fail = set()
    client.started.clear()
    client.asked.append([])
    fleet.refresh()  # asked again at once (in the background)
    wait_until(lambda: "info" in client.started, "info asked again")
    fleet.close()


def test_starting_over_drops_the_background_queries_not_asked_yet() -> None:
    qs = QuerySet()
    client = Held(qs)
    fleet = PromFleet(client, qs, clock=lambda: 1000.0, rules="off")  # type: ignore[arg-type]
    client.release.set()
    client.asked.append([])
    fleet.refresh()
    client.release.clear()
    client.started.clear()
    for _ in range(SLOW_EVERY):  # every slow query waiting in the background, two of them under way
        client.asked.append([])
        fleet.refresh()
    waiting = [f for _, f in fleet._pending.values()]
    wait_until(lambda: len(client.started) == 2, "two under way")
    fleet.start_over()  # the server was unreachable: the next refresh asks everything, waited for
    client.release.set()
    assert len(waiting) == 8 and sum(f.cancelled() for f in waiting) == 6
    fleet.close()


class Clocked(Client):
    """A server whose clock is 500 s ahead of ours: its answers carry the time they were evaluated at."""

    def __init__(self, qs: QuerySet, now: list[float]) -> None:
        super().__init__(qs)
        self.now = now
        self.ats: list[tuple[str, float | None]] = []
        self.lock = threading.Lock()

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        with self.lock:
            self.ats.append((self.names[expr], at))
        t = at if at is not None else self.now[0] + 500
        return [Sample(x.metric, (t, x.value[1])) for x in super().query(expr)]

    def answer(self, expr: str, at: float | None = None) -> Answer:
        return Answer(self.query(expr, at))


def test_every_query_of_a_refresh_is_evaluated_at_one_instant_of_the_servers_clock() -> None:
    """Each query used to be evaluated when it arrived: a host scraped between two of a refresh's queries was up in
    one answer and missing from the other. After the first refresh (asked as they arrive, the server's clock read
    from its answer) every query of a refresh, the background's included, is asked at the refresh's start on the
    server's clock; the clock is read again every ``PROBE_EVERY`` refreshes."""
    from neuron_top.fleet.prom import PROBE_EVERY

    qs = QuerySet()
    now = [1000.0]
    client = Clocked(qs, now)
    fleet = PromFleet(client, qs, clock=lambda: now[0], rules="off")  # type: ignore[arg-type]
    for i in range(PROBE_EVERY + 2):
        client.ats.clear()
        refresh(fleet, client)
        wait_until(lambda: all(f.done() for _, f in fleet._pending.values()), "the background's answers")
        names = {n for n, _ in client.ats}
        ats = {at for _, at in client.ats}
        assert names >= FAST, (i, names)
        if i % PROBE_EVERY == 0:
            assert ats == {None}, (i, ats)
        else:
            assert ats == {now[0] + 500}, (i, ats)
            assert names - FAST, (i, names)  # slow queries in the background: at the same instant
        now[0] += 2.0
    fleet.close()

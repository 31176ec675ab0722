"""A node health verdict from a window of reports, for node-problem-detector (no UI imports).

``HealthCheck`` is fed the feed's events for a while (or a whole recording) and gives what an NPD custom plugin
must print and return: exit 0 (OK), 1 (a problem) or 2 (unknown), and one line of text. The rules, each one
switchable and tunable from a TOML file (``[health]`` table, see ``deploy/node-problem-detector/``):

* uncorrected ECC: any uncorrected DRAM or SRAM event in the window (AWS's helm chart marks the node unhealthy
  for the same);
* error rate: the share of executions that did not complete cleanly, over every runtime and report, above
  ``max_error_rate`` once at least ``min_executions`` ran;
* hang: a runtime that holds device memory (a model is loaded) with every one of its cores at 0% for at least
  ``hang_seconds`` while its executions time out or fail to queue. Work is asked of it and nothing runs; a
  loaded service or notebook that simply has no work is idle, not hung, and is not reported;
* metric-group errors: neuron-monitor reported an ``error`` for a group (or a runtime) in the last report;
* errors by type (a runtime's ``error_summary``, the dashboard's ``err/s`` and ``replay --summary``'s "execution
  errors") are not a rule of their own: a runtime may count thousands while every execution completes. An OK
  verdict names them in a note, so the line never reads as if there were none;
* devices missing: fewer devices in the hardware counters than ``neuron_hardware_info`` says the machine has;
* neuron-monitor not starting: no report at all while the source failed or was restarted (1); no report and
  nothing known (the source ended, or no Neuron hardware in the reports) is 2.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, fields
from pathlib import Path

from neuron_top.feed import FeedEvent, Report, SourceTally
from neuron_top.fmt import plural
from neuron_top.snapshot import Snapshot
from neuron_top.sources.base import State
from neuron_top.textsafe import clean

__all__ = ["OK", "PROBLEM", "UNKNOWN", "HealthCheck", "HealthRules", "RulesError", "load_rules"]

OK, PROBLEM, UNKNOWN = 0, 1, 2
"""node-problem-detector's custom plugin exit codes."""


class RulesError(ValueError):
    """The rules file is not valid (one line for the user)."""


@dataclass(frozen=True, slots=True)
class HealthRules:
    uncorrected_ecc: bool = True
    max_error_rate: float = 0.05
    """Share of executions not completed cleanly above which the node has a problem (1.0 turns it off)."""
    min_executions: int = 20
    """Fewer executions than this in the window say nothing about the error rate."""
    hang_seconds: float = 10.0
    """How long a loaded runtime's cores must all stay at 0% (a negative value turns the rule off)."""
    group_errors: bool = True
    missing_devices: bool = True


def load_rules(path: str | Path) -> HealthRules:
    """Rules from the ``[health]`` table of a TOML file; keys not given keep their defaults."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RulesError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: not valid TOML: {clean(str(exc), 120)}") from None
    table = data.get("health", {})
    if not isinstance(table, dict):
        raise RulesError(f"{path}: [health] must be a table")
    known = {f.name: f for f in fields(HealthRules)}
    values: dict[str, object] = {}
    for key, value in table.items():
        if key not in known:
            raise RulesError(f"{path}: unknown rule {clean(key, 40)!r} (known: {', '.join(known)})")
        want = type(getattr(HealthRules(), key))
        ok = isinstance(value, bool) if want is bool else (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value))
        if not ok:
            raise RulesError(f"{path}: {key} must be {'true or false' if want is bool else 'a number'}")
        values[key] = want(value)
    return HealthRules(**values)  # type: ignore[arg-type]


@dataclass
class _Runtime:
    label: str
    zero_since: float | None = None
    stuck: int = 0
    """Executions that timed out or failed to queue since its cores went to 0%."""


class HealthCheck:
    """Fed ``FeedEvent`` values; ``verdict`` gives (exit code, message line)."""

    def __init__(self, rules: HealthRules | None = None, source: str = "the source") -> None:
        self.rules = rules or HealthRules()
        self.source = source
        self.reports = 0
        self.tally = SourceTally()
        """The source's state, last message, skipped input and restarts, counted as the dashboard counts them."""
        self.first_ts: float | None = None
        self.last: Snapshot | None = None
        self.uncorrected: dict[int, int] = {}
        self.executions = 0
        self.failed = 0
        self.errors: dict[str, int] = {}
        """Errors by type over the window (``AppRates.errors``, summed as ``error_count`` sums them)."""
        self.runtimes: dict[int, _Runtime] = {}
        self.hung: dict[int, str] = {}

    def apply(self, event: FeedEvent) -> None:
        if isinstance(event, Report):
            self._report(event.snapshot)
        else:
            self.tally.apply(event)

    def _report(self, snap: Snapshot) -> None:
        self.reports += 1
        self.last = snap
        if self.first_ts is None:
            self.first_ts = snap.ts
        for e in snap.ecc:
            if e.uncorrected:
                self.uncorrected[e.device] = self.uncorrected.get(e.device, 0) + e.uncorrected
        seen: set[int] = set()
        for app in snap.apps:
            if app.error:
                continue
            summary = app.exec_summary
            self.executions += app.rates.ran or 0
            self.failed += app.rates.bad_count or 0  # bad/s's rule: derived.unclean_count
            for kind, n in app.rates.errors.items():
                if n:
                    self.errors[kind] = self.errors.get(kind, 0) + n
            seen.add(app.pid)
            rt = self.runtimes.get(app.pid)
            if rt is None:
                rt = self.runtimes[app.pid] = _Runtime(clean(app.label, 40))
            utils = [c.neuroncore_utilization for c in app.cores.values() if c.neuroncore_utilization is not None]
            loaded = app.used_bytes[1] > 0
            if utils and loaded and max(utils) <= 0:
                if rt.zero_since is None:
                    rt.zero_since, rt.stuck = snap.ts, 0
                rt.stuck += summary.get("timed_out", 0) + summary.get("failed_to_queue", 0)
                limit = self.rules.hang_seconds
                if limit >= 0 and snap.ts - rt.zero_since >= limit and rt.stuck:
                    self.hung[app.pid] = f"{rt.label} (pid {app.pid}, {rt.stuck} executions timed out or not queued)"
            else:
                rt.zero_since = None
                self.hung.pop(app.pid, None)
        for pid in set(self.runtimes) - seen:
            del self.runtimes[pid]
            self.hung.pop(pid, None)

    def verdict(self) -> tuple[int, str]:
        """(exit code, one line): what node-problem-detector records for this run."""
        snap = self.last
        if snap is None:
            why = clean(self.tally.cause, 160) or "no report"
            said = f"; its last output: {self.tally.last_words}" if self.tally.last_words else ""
            if self.tally.restarts or self.tally.state is State.FAILED:
                return PROBLEM, _line(f"PROBLEM: neuron-monitor does not start: {why}{said}")
            return UNKNOWN, _line(f"UNKNOWN: no report from {clean(self.source, 60)}: {why}{said}")
        if not snap.has_neuron:
            return UNKNOWN, "UNKNOWN: no Neuron devices or runtimes in the reports"
        r = self.rules
        problems: list[str] = []
        if r.uncorrected_ecc and self.uncorrected:
            devs = ", ".join(f"device {d} ({n})" for d, n in sorted(self.uncorrected.items()))
            problems.append(f"uncorrected ECC errors on {devs}")
        if self.executions >= max(1, r.min_executions) and self.failed / self.executions > r.max_error_rate:
            problems.append(f"{self.failed / self.executions:.0%} of {self.executions} executions failed")
        if self.hung:
            problems.append(f"runtime hung (cores at 0% for >= {r.hang_seconds:g} s while loaded): "
                            + ", ".join(sorted(self.hung.values())))
        notes: list[str] = []
        details = [g for g in snap.group_statuses if g.detail]
        if details:
            notes.append(f"neuron-monitor cannot open /proc/<pid> of {plural(len(details), 'runtime')} "
                         "(a container without hostPID: no per-runtime vCPU)")
        if r.group_errors:
            errs = [g for g in snap.group_statuses if not g.detail]
            if errs:
                first = errs[0]
                more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
                problems.append(f"neuron-monitor error in {clean(first.where, 60)}: {clean(first.error, 80)}{more}")
        if r.missing_devices:
            expected = snap.hardware.neuron_device_count
            present = len(snap.ecc)
            if isinstance(expected, int) and present and present < expected:
                problems.append(f"{expected - present} of {expected} Neuron devices missing")
        if problems:
            return PROBLEM, _line("PROBLEM: " + "; ".join(problems))
        if self.errors:
            kinds = sorted(self.errors.items(), key=lambda kv: (-kv[1], kv[0]))
            named = ", ".join(f"{clean(k, 20)} {n:,}" for k, n in kinds[:3]) + (", ..." if len(kinds) > 3 else "")
            clean_runs = (f"{self.failed:,} of {self.executions:,} executions did not complete cleanly"
                          if self.failed else f"all {self.executions:,} executions completed cleanly")
            notes.insert(0, f"runtimes reported {sum(self.errors.values()):,} errors ({named}); {clean_runs}")
        span = (snap.ts - self.first_ts) if self.first_ts is not None else 0.0
        skipped = f", {self.tally.skipped} bad input skipped" if self.tally.skipped else ""
        note = "; note: " + "; ".join(notes) if notes else ""
        return OK, _line(f"OK: {plural(snap.device_count, 'Neuron device')}, {plural(len(snap.apps), 'runtime')}, "
                         f"{plural(self.reports, 'report')} over {span:.0f} s{skipped}{note}")


MAX_MESSAGE = 200
"""node-problem-detector's ``max_output_length`` in the sample plugin config: a longer line is cut by NPD."""


def _line(text: str) -> str:
    """The verdict cut to ``MAX_MESSAGE`` characters (with an ellipsis) so NPD keeps its end marker readable."""
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"

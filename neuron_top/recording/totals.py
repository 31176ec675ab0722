"""Counts "since start" at any report of a recording: ECC per device, executions by outcome, failed executions
and errors (no UI imports).

neuron-monitor reports the events of each period, so a count since the start of a recording at report ``i`` is a
sum over reports ``0..i``. The replay screen's history holds only the reports around the position (a seek
rebuilds it from a window), so its sums forget everything before the window. These totals are kept instead
from the one pass that decodes every report anyway (the marker scan, ``ReplayController.scan_markers``): every
``EVERY`` reports it stores the running sums, and a position is answered from the stored sums before it plus
at most ``EVERY - 1`` reports decoded again (the brief decode, ~0.06 ms each). Memory: one small record per
``EVERY`` reports.

The same pass keeps each app's executions and errors (``AppTotals``), so that the counts of the apps a tag filter
selects are exact too (``ReplayController.since_start``); a filter can change at any time, so they are kept for
every app, not for one filter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from neuron_top.derived import NO_EXECUTIONS, add_executions
from neuron_top.recording.markers import Facts
from neuron_top.snapshot import DeviceEcc

__all__ = ["EVERY", "AppKey", "AppTotals", "RunningTotals", "Totals"]

AppKey = tuple[int, str]
"""An app as ``Facts.apps`` keys it: (pid, tag)."""

EVERY = 64
"""Reports between two stored running sums."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Counts over reports ``0..reports-1`` of a recording."""

    reports: int = 0
    ecc: dict[int, DeviceEcc] = field(default_factory=dict)
    """Per device, ECC events summed (as ``History.ecc_totals``)."""
    failed: int = 0
    """Executions that did not complete cleanly (``bad/s``'s count), summed over apps (``Facts.apps``)."""
    errors: int = 0
    """Errors of every type (``err/s``'s count), summed over apps (``Facts.apps``)."""
    executions: tuple[int | None, ...] = NO_EXECUTIONS
    """Executions per ``derived.EXEC_TYPES`` outcome, summed over apps (``Facts.executions``); None: no report
    so far gave that outcome (not reported is not zero)."""

    def plus(self, facts: Facts | None) -> Totals:
        """These totals and one more report (``None``: a report that did not decode, counted as nothing)."""
        if facts is None:
            return Totals(self.reports + 1, self.ecc, self.failed, self.errors, self.executions)
        ecc = self.ecc
        if any(e.corrected or e.uncorrected for e in facts.ecc) or len(ecc) < len(facts.ecc):
            ecc = dict(ecc)
            for e in facts.ecc:
                t = ecc.get(e.device)
                ecc[e.device] = e if t is None else t.plus(e)
        apps = facts.apps.values()
        execs = self.executions if facts.executions is NO_EXECUTIONS else \
            add_executions(self.executions, facts.executions)
        return Totals(self.reports + 1, ecc, self.failed + sum(a[2] for a in apps),
                      self.errors + sum(a[3] for a in apps), execs)

    def joined(self, later: Totals) -> Totals:
        """These totals and those of the reports right after them (``later``: a scan of the next part, as
        ``--summary`` splits a recording over worker processes)."""
        ecc = dict(self.ecc)
        for d, e in later.ecc.items():
            t = ecc.get(d)
            ecc[d] = e if t is None else t.plus(e)
        return Totals(self.reports + later.reports, ecc, self.failed + later.failed, self.errors + later.errors,
                      add_executions(self.executions, later.executions))

    @property
    def uncorrected_devices(self) -> tuple[int, ...]:
        """Devices with an uncorrected ECC event so far (what the header's ``ECC!`` names)."""
        return tuple(d for d, e in sorted(self.ecc.items()) if e.uncorrected)


@dataclass(frozen=True, slots=True)
class AppTotals:
    """One app's counts over reports ``0..i`` of a recording."""

    executions: tuple[int | None, ...] = NO_EXECUTIONS
    """Per ``derived.EXEC_TYPES`` outcome, as ``Totals.executions``."""
    errors: int = 0
    """Errors of every type, as ``Totals.errors``."""
    last: int = -1
    """The last report (0-based, up to ``i``) the app was in: where a filter that matches on its pod looks it up."""


def _apps_plus(apps: dict[AppKey, AppTotals], facts: Facts | None, i: int) -> None:
    """``apps`` (changed in place) with report ``i``'s facts added."""
    if facts is None:
        return
    outcomes = facts.outcomes
    for key, a in facts.apps.items():
        t = apps.get(key)
        outs = outcomes.get(key)
        if t is None:
            apps[key] = AppTotals(outs or NO_EXECUTIONS, a[3], i)
        else:
            apps[key] = AppTotals(t.executions if outs is None else add_executions(t.executions, outs),
                                  t.errors + a[3], i)


class RunningTotals:
    """Running sums fed one report at a time, in order, by one thread (the scan); read from another.

    Args:
        facts: the facts of report ``i`` (decoded again for a position between two stored sums); None when
            report ``i`` does not decode.
    """

    def __init__(self, facts: Callable[[int], Facts | None]) -> None:
        self._facts = facts
        self._marks: list[Totals] = [Totals()]
        """``_marks[k]``: the totals of reports ``0..k*EVERY-1``."""
        self._cur = Totals()
        self._apps: dict[AppKey, AppTotals] = {}
        self._app_marks: list[dict[AppKey, AppTotals]] = [{}]
        """``_app_marks[k]``: each app's totals over reports ``0..k*EVERY-1`` (as ``_marks``)."""
        self.covered = 0
        """Reports added so far: ``at(i)`` is known for ``i < covered``."""

    def add(self, facts: Facts | None) -> None:
        """Report number ``covered`` (the next one)."""
        _apps_plus(self._apps, facts, self._cur.reports)
        self._cur = self._cur.plus(facts)
        if self._cur.reports % EVERY == 0:
            self._app_marks.append(dict(self._apps))
            self._marks.append(self._cur)
        self.covered = self._cur.reports  # last: a reader only asks below it

    def at(self, i: int) -> Totals | None:
        """Totals of reports ``0..i`` (inclusive), or None while the scan has not reached report ``i``."""
        if not 0 <= i < self.covered:
            return None
        k = (i + 1) // EVERY
        t = self._marks[k]
        for j in range(k * EVERY, i + 1):
            t = t.plus(self._facts(j))
        return t

    def apps_at(self, i: int) -> dict[AppKey, AppTotals] | None:
        """Each app's totals over reports ``0..i`` (inclusive), or None while the scan has not reached report
        ``i``. Summed over the apps, they are ``at(i)``'s executions and errors."""
        if not 0 <= i < self.covered:
            return None
        k = (i + 1) // EVERY
        apps = dict(self._app_marks[k])
        for j in range(k * EVERY, i + 1):
            _apps_plus(apps, self._facts(j), j)
        return apps

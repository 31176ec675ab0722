"""End-to-end: the header's state in a real terminal at 120x40 and 80x24, from the command line: LIVE, then
STALE when reports stop, then RESTARTING with the command's exit status and its stderr (a failed ``--command`` is
started again with back-off, as neuron-monitor is); garbage on stdin says so."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.conftest import DATA
from tests.e2e.test_tmux import PY, pytestmark, term  # noqa: F401  (the fixture and the skip marks)

STALLS = """\
import sys, time
report = open({report!r}, "rb").read().replace(b"\\n", b"")
for _ in range(4):
    sys.stdout.buffer.write(report + b"\\n")
    sys.stdout.flush()
    time.sleep(0.3)
time.sleep(6)  # reports stop: the header turns STALE (3 s at the least)
print("ssh: connection to trn2-node-17 closed by remote host", file=sys.stderr)
sys.exit(3)
"""


def test_live_then_stale_then_restarting_with_the_exit_status_in_the_header(term, tmp_path: Path) -> None:  # noqa: F811
    script = tmp_path / "stalls.py"
    script.write_text(STALLS.format(report=str(DATA / "trn2_small.json")))
    t = term(120, 40)
    t.start(f"{PY} -m neuron_top --command {shlex.quote(f'{PY} {script}')}")
    first = t.wait_for(" LIVE ").splitlines()[0]
    assert first.count(str(script)) <= 1  # the command is said once
    stale = t.wait_for(" STALE ").splitlines()[0]
    assert "no report for" in stale
    failed = t.wait_for(" RESTARTING exit 3 ").splitlines()[0]  # for the back-off's 2 s
    assert "ssh: connection to trn2-node" in failed and "updated" in failed  # stderr, cut with …
    t.keys("E")
    problems = t.wait_for("Metric-group errors")
    # Still waiting (RESTARTING) or running again (STARTING), the screen says how it ended: the Source line's exit
    # status, or "last ended ... ago:" over the message. The message itself may sit under the toasts on the right
    # (CI's long venv and temp paths put "exited with status 3" there); its text is checked headless in
    # tests/app/test_header.py::test_the_problems_screen_still_says_why_a_restarted_command_ended.
    assert "RESTARTING (exit 3)" in problems or "last ended" in problems, problems
    t.keys("q")
    assert t.wait_exit() == 0


def test_garbage_on_stdin_says_no_valid_report_and_quits(term) -> None:  # noqa: F811
    t = term(80, 24)
    t.start(f"yes 'Warning: Permanently added trn2-node-17 (ED25519) to the list of known hosts.' | "
            f"{PY} -m neuron_top")
    line = t.wait_for("lines skipped").splitlines()[0]
    assert " NO DATA " in line and "no valid report yet, " in line and len(line.rstrip()) <= 80
    t.keys("q")
    assert t.wait_exit() in (0, 141)  # the shell reports the pipeline's last status; yes may get SIGPIPE first

"""The command line, headless modes: exit codes and one-line messages, never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_top.cli.main import main
from neuron_top.recording.writer import RecordingWriter
from tests.conftest import ROOT
from tests.helpers import T0
from tests.trace_helpers import TRACES


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "neuron_top", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=60)


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert "neuron-top" in capsys.readouterr().out


def test_demo_once_text_and_json(capfdbinary) -> None:
    assert main(["demo", "--once", "--seed", "3", "--instance", "inf1.xlarge"]) == 0
    out = capfdbinary.readouterr().out.decode()
    assert "[DEMO]" in out and "inf1.xlarge" in out and "\x1b" not in out
    assert main(["demo", "--json", "--seed", "3", "--instance", "inf1.xlarge"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert doc["source"]["state"] == "demo" and doc["device_count"] == 1


def test_pipe_once_reads_stdin_and_counts_garbage() -> None:
    emitted = run("demo", "--emit", "--count", "2", "--period", "0.05", "--seed", "1").stdout
    p = run("--once", stdin=b"garbage line\n" + emitted)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "source: stdin" in out and "skipped: 1 bad input" in out


def test_replay_from_a_pipe_names_it_stdin_everywhere() -> None:
    """``replay -`` said "source: -" in --once and --json ("stdin" on the screen and in --summary)."""
    emitted = run("demo", "--emit", "--count", "2", "--period", "0.05", "--seed", "1").stdout
    once = run("replay", "-", "--once", stdin=emitted)
    assert once.returncode == 0, once.stderr
    assert once.stdout.decode().splitlines()[0].startswith("neuron-top ") and "source: stdin [REPLAY]" in \
        once.stdout.decode()
    doc = json.loads(run("replay", "-", "--json", stdin=emitted).stdout)
    assert doc["source"]["name"] == "stdin"


def test_empty_pipe_is_a_one_line_error() -> None:
    p = run("--once", stdin=b"")
    assert p.returncode == 2
    assert p.stderr.decode().count("\n") == 1 and "no report from stdin" in p.stderr.decode()


def test_replay_once_at_start_and_end(tmp_path: Path, capfdbinary) -> None:
    emitted = run("demo", "--emit", "--count", "5", "--period", "0.05", "--seed", "2").stdout.splitlines()
    path = tmp_path / "run.jsonl"
    w = RecordingWriter(path)
    for i, line in enumerate(emitted):
        w.write(line, T0 + i)
    w.close()
    assert main(["replay", str(path), "--once"]) == 0
    assert "report 5/5" in capfdbinary.readouterr().out.decode()
    assert main(["replay", str(path), "--json", "--start", "2"]) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert doc["source"]["position"].startswith("report 2/5 at 2026-01-01 ") and doc["ts"] == T0 + 1


@pytest.mark.parametrize("args, message", [
    (["replay", "/nonexistent.jsonl", "--once"], "cannot open /nonexistent.jsonl"),
    (["demo", "--tag", "[", "--once"], "not a valid regex"),
    (["trace", "/nonexistent.json", "--check"], "nonexistent"),
    # a negative history passed the parser and the dashboard died at start: "internal error: ValueError(...)"
    (["demo", "--history", "-5"], "--history: -5 is below 0"),
    (["demo", "--emit", "--count", "-1"], "--count: -1 is below 0"),  # it emitted nothing, and said nothing
    (["fleet", "--ssh", "h", "--history", "-1"], "--history: -1 is below 0"),
    (["fleet", "--ssh", "h", "--once", "--timeout", "-1"], "--timeout must be above 0"),  # was an empty row
    # said "...; restarting in 1 s" (--once restarts nothing) and not why: the child's last line on stderr
    (["--command", "sh -c 'echo usage: x >&2; echo x: error: no such flag >&2; exit 3'", "--once"],
     "exited with status 3 after 0 reports; its last output: x: error: no such flag"),
    # a table of nothing but its "HOST" heading
    (["fleet", "--ssh", "h", "--once", "--width", "-5"], "--width: -5 is below 0"),
    (["fleet", "--ssh", "h", "--once", "--width", "12"], "--width: 12 columns is too narrow for the table (at least 40)"),
    # "one of type, zone, region, status", while the help offers label:NAME (it needs --label NAME)
    (["fleet", "--prometheus", "http://127.0.0.1:1", "--group", "label:cluster", "--once"],
     "--group 'label:cluster': a label group needs --label cluster too\n"),
    (["fleet", "--ssh", "h", "--group", "label:cluster", "--once"],
     "--group 'label:cluster': a label group needs --label cluster too (with --prometheus: instance_info's labels)"),
    # the hosts' table's options did nothing with --by pod|namespace, and said nothing
    (["fleet", "--prometheus", "http://127.0.0.1:1", "--by", "pod", "--once", "--apps", "--sort", "util"],
     "--sort, --apps: for the hosts' table; with --by pod the rows are pods, by the cores they hold"),
    (["fleet", "--prometheus", "http://127.0.0.1:1", "--by", "namespace", "--filter", "x"],
     "--filter: for the hosts' table; with --by namespace the rows are namespaces"),
])
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    p = run(*args)
    assert p.returncode == 2, p
    err = p.stderr.decode()
    assert message in err and "Traceback" not in err


def test_fleet_once_records_its_refresh(tmp_path: Path, capsys) -> None:
    """``fleet --once --record FILE`` printed the table and wrote no file (the dashboard's --once records)."""
    from tests.conftest import REPORTS

    host = str(REPORTS / "inf1_xlarge_single_runtime.json")
    path = tmp_path / "fleet.jsonl"
    assert main(["fleet", "--ssh", host, "--command", "sh -c 'cat \"$0\"' {host}", "--once", "--record",
                 str(path)]) == 0
    printed = capsys.readouterr().out
    [line] = path.read_bytes().splitlines()
    assert json.loads(line)["frame"]["rows"][0]["key"] == host and "1 host: 1 up" in printed
    assert main(["replay", str(path), "--once"]) == 0
    assert "refresh 1/1" in capsys.readouterr().out


def test_bad_config_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "monitor.conf"
    cfg.write_text(json.dumps({"period": "1s", "system_metrics": [{"type": "vcpu_usage", "period": "2x"}]}))
    p = run("-c", str(cfg), "--once")
    assert p.returncode == 2
    assert 'system_metrics[0].period: "2x"' in p.stderr.decode()


def test_trace_check_exit_codes() -> None:
    unclosed = TRACES / "catapult_main_thread_has_unclosed_slices.json.gz"
    p = run("trace", str(unclosed), "--check")
    assert p.returncode == 1 and p.stdout.decode().count("(B)") == 4
    p = run("trace", str(TRACES / "catapult_simple_trace.json"), "--summary")
    assert p.returncode == 0 and "phases:" in p.stdout.decode()


def test_record_says_why_its_command_keeps_failing(tmp_path: Path) -> None:
    """``record --command`` printed "... exited with status 3 after 0 reports; restarting in 1 s" at every restart,
    never what the command said; now its last line on stderr follows."""
    cmd = "sh -c 'echo x: error: no such flag >&2; exit 3'"
    p = subprocess.Popen([sys.executable, "-m", "neuron_top", "record", str(tmp_path / "r.jsonl"), "--command", cmd],
                         cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr is not None
        line = p.stderr.readline()  # the first restart: 1 s after the first run
        assert "exited with status 3 after 0 reports; restarting in 1 s (its last output: x: error: no such flag)" \
            in line, line
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)


@pytest.mark.parametrize("args", [["--once"], ["export"], ["health"], ["record", "r.jsonl"]])
@pytest.mark.parametrize(("command", "said"), [("", "an empty command"), ("  ", "an empty command"),
                                              ('ssh host "neuron-monitor', "No closing quotation")])
def test_a_command_that_cannot_run_is_a_usage_error(args: list[str], command: str, said: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``--command ""`` (an unset variable in a script) started the source and failed at once: "no report from :
    cannot parse command : empty command", or a dashboard saying FAILED. Now the command line says why."""
    argv = ["record", str(tmp_path / args[1])] if args[0] == "record" else args
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--command", command])
    assert exc.value.code == 2
    out = capsys.readouterr()
    assert said in out.err + out.out

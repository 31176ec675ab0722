"""``neuron-top trace FILE --check`` / ``--summary``: neuron-det's report lines and exit statuses."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from neuron_top.trace import run_check, run_summary
from neuron_top.trace.check import check_lines
from neuron_top.trace.loaders import load_trace
from tests.trace_helpers import DATA, real_trace, write_events, x


def _check(paths: list[Path]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_check(paths, out, err)
    return code, out.getvalue(), err.getvalue()


def test_clean_trace(tmp_path: Path) -> None:
    code, out, err = _check([write_events(tmp_path, [x("nrt_execute", 0, 5, ret=0)])])
    assert (code, out, err) == (0, "no errors detected\n", "")


def test_errors_and_hangs_in_neuron_det_form() -> None:
    code, out, _ = _check([DATA / "trace_small.json"])
    assert code == 1
    assert out.splitlines() == [
        "nrt_execute (B) NC 3 @ 1001538.0 - 1006165.0: {'gid': 3, 'nc': 3, 'exec_id': 2}",
        "nc_exec (B) NC 3 @ 1001578.0 - 1006165.0: {'nc': 3, 'exec_id': 2}",
        "nc_exec (X) NC 1 @ 1001594.0 - 1002426.0: {'nd': 0, 'nc': 1, 'exec_id': 2, 'ret': 1003}",
        "numerical_error (X) NC 1 @ 1001644.0 - 1001654.0: {'nd': 0, 'nc': 1, 'exec_id': 2}",
    ]


def test_numerical_error_line_like_the_neuron_det_guide(tmp_path: Path) -> None:
    ev = x("numerical_error", 11762897.0, 143526.0, tid=0, nd=0, nc=0, exec_id=0)
    code, out, _ = _check([write_events(tmp_path, [ev])])
    assert code == 1
    assert out == "numerical_error (X) NC 0 @ 11762897.0 - 11906423.0: {'nd': 0, 'nc': 0, 'exec_id': 0}\n"


def test_unknown_core_and_hostile_names(tmp_path: Path) -> None:
    ev = {"ph": "B", "name": "\x1b[2Jhang", "ts": 1, "pid": "p", "tid": "t", "args": {"k": "\x07"}}
    code, out, _ = _check([write_events(tmp_path, [ev])])
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert out.startswith("\\x1b[2Jhang (B) NC ? @ 1.0 - 1.0:")


def test_unreadable_file_is_exit_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("garbage")
    code, out, err = _check([bad])
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "not a trace" in err


def test_several_files(tmp_path: Path) -> None:
    ok = write_events(tmp_path, [x("a", 0, 1)], "ok.json")
    code, out, _ = _check([ok, DATA / "trace_small.json"])
    assert code == 1
    assert out.count("== ") == 2 and "no errors detected" in out


def test_epoch_nanoseconds_print_exactly(tmp_path: Path) -> None:
    import json

    p = tmp_path / "system_profile.json"
    p.write_text(
        json.dumps(
            {
                "trace_events": [
                    {
                        "name": "nrt_execute",
                        "timestamp": 1729888371056597613,
                        "duration": 1000,
                        "group": "nrt-nc-002",
                        "ret": 5,
                    }
                ]
            }
        )
    )
    (line,) = check_lines(load_trace(p))
    assert line.startswith("nrt_execute (X) NC 2 @ 1729888371056597.6 - 1729888371056598.6: ")


def test_summary(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    events = [x("a", 0, 5), x("b", 1, -1), {"ph": "E", "ts": 9, "pid": 1, "tid": 1}]
    assert run_summary([write_events(tmp_path, events)], out, err) == 0
    text = out.getvalue()
    assert "1 event on 1 track," in text  # not "1 events on 1 tracks"
    assert "phases: E 1, X 2" in text
    assert "negative duration: 1" in text and "E without begin: 1" in text
    assert "pid 1 / 1 [cpu]: 1 event, 1 row" in text


def test_summary_of_global_instants_names_no_empty_process(tmp_path: Path) -> None:
    """Kineto's global ("s": "g") instants have no process: the line read "   / global [cpu]"."""
    out = io.StringIO()
    events = [x("a", 0, 5), {"ph": "i", "s": "g", "name": "Iteration Start", "ts": 2, "pid": "", "tid": ""}]
    run_summary([write_events(tmp_path, events)], out)
    lines = out.getvalue().splitlines()
    assert "  global [cpu]: 1 event, 1 row" in lines


def test_summary_of_unreadable(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_summary([tmp_path / "missing.json"], out, err) == 2
    assert "cannot read" in err.getvalue()


def test_summary_of_a_trace_with_lost_events_exits_2_as_the_check_does(tmp_path: Path) -> None:
    """A trace cut inside its second event: ``--check`` exited 2 (events lost), ``--summary`` 0 after saying "1
    event could not be read"."""
    path = tmp_path / "cut.json"
    path.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, '
                    '{"ph": "X", "name": "b", "ts": "x"')
    out = io.StringIO()
    assert run_summary([path], out) == 2 and run_check([path], io.StringIO()) == 2
    assert out.getvalue().startswith("unreadable: 1 event could not be read")
    whole = write_events(tmp_path, [x("a", 0, 5)])
    assert run_summary([whole], io.StringIO()) == 0


def test_check_real_unclosed_slices() -> None:
    code, out, _ = _check([real_trace("catapult_main_thread_has_unclosed_slices.json.gz")])
    assert code == 1 and len(out.splitlines()) == 4
    assert all(" (B) NC ? @ " in line for line in out.splitlines())


def test_check_real_clean_trace() -> None:
    code, out, _ = _check([real_trace("catapult_x_event_trace.json.gz")])
    assert (code, out) == (0, "no errors detected\n")


def test_a_reader_that_left_does_not_turn_the_verdict_into_0(tmp_path: Path) -> None:
    """``set -o pipefail; neuron-top trace T --check | head -1``: the reader left before the report was written
    (EPIPE) and the command exited 0, so a trace with hangs passed CI. The verdict stands, with nothing on stderr;
    a second, unreadable file after the pipe closed still counts."""
    bad = tmp_path / "bad.json"
    bad.write_text("garbage")
    hangs = str(DATA / "trace_small.json")
    for args, want in (([hangs, "--check"], 1), ([hangs, "--summary"], 0), ([hangs, str(bad), "--summary"], 2)):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the first line
        try:
            done = subprocess.run([sys.executable, "-m", "neuron_top", "trace", *args], stdout=w,
                                  stderr=subprocess.PIPE, text=True, timeout=60, check=False)
        finally:
            os.close(w)
        assert done.returncode == want, (args, done.stderr)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_summary_counts_the_tracks_it_lists() -> None:
    """A Chrome thread holding only async ends and flow ends (drawn on other tracks) has a track and no rows: the
    summary said "on 10 tracks" over nine, and the timeline header "10 tracks" over nine rows' names."""
    out = io.StringIO()
    run_summary([real_trace("catapult_multiple_input_latency.json.gz")], out)
    lines = out.getvalue().splitlines()
    listed = lines[lines.index("tracks:") + 1:next(i for i, ln in enumerate(lines) if ln.startswith("errors:"))]
    assert " events on 9 tracks, " in lines[0] and len(listed) == 9


def test_a_trace_on_standard_input_or_from_a_pipe(tmp_path: Path) -> None:
    """``zcat trace.json.gz | neuron-top trace - --check`` said "-: cannot read: No such file or directory", and
    ``neuron-top trace <(zcat trace.json.gz)`` "File or stream is not seekable" (the loaders read a file twice)."""
    small = (DATA / "trace_small.json").read_bytes()
    cmd = [sys.executable, "-m", "neuron_top", "trace"]
    done = subprocess.run([*cmd, "-", "--check"], input=small, capture_output=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout.decode().startswith("nrt_execute (B) NC 3"), done.stderr
    done = subprocess.run([*cmd, "-", "--summary"], input=b"garbage", capture_output=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.decode().startswith("stdin: not a trace file")
    done = subprocess.run([*cmd, "-"], input=small, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2 and b"is for --check and --summary" in done.stderr  # the keyboard is there

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    import threading

    def write() -> None:
        with open(fifo, "wb") as w:
            w.write(small)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    code, out, err = _check([fifo])
    writer.join(10)
    assert code == 1 and out.startswith("nrt_execute (B) NC 3") and err == ""


def test_events_whose_time_cannot_be_read_are_lost_not_clean(tmp_path: Path) -> None:
    """Epoch nanoseconds written as microseconds put every ts out of range: every event was dropped, counted
    only among the "problems", and --check said "no errors detected", exit 0, over a hang it never saw."""
    events = [x("a", 1.7e18, 1000), {"ph": "B", "name": "hang", "ts": 1.7e18 + 2000, "pid": 1, "tid": 1},
              x("b", 5, "soon")]
    code, out, _ = _check([write_events(tmp_path, events)])
    assert code == 2
    assert out.splitlines()[0] == (
        "unreadable: 3 events could not be read (X with a bad dur: 1, event without a valid ts: 2)")
    text = io.StringIO()
    run_summary([write_events(tmp_path, events)], text)
    assert "nothing to draw: no event could be read" in text.getvalue() and "other events" not in text.getvalue()


def test_a_trace_from_a_pipe_is_named_by_its_path_not_its_last_part() -> None:
    """``neuron-top trace <(zcat t.json.gz) --summary`` named the trace "63" (the last part of /dev/fd/63), on its
    first line and as the timeline's title: a name that names nothing."""
    from neuron_top.trace.store import TraceStore

    st = TraceStore()
    for path, shown in (("/dev/fd/63", "/dev/fd/63"), ("/proc/self/fd/5", "/proc/self/fd/5"), ("stdin", "stdin"),
                        ("/data/run1/trace.json", "trace.json"), ("", "trace")):
        st.path = path
        assert st.shown_name == shown
    done = subprocess.run(["bash", "-c", f'"{sys.executable}" -m neuron_top trace <(cat "$0") --summary',
                           str(DATA / "trace_small.json")], capture_output=True, timeout=60, check=False)
    assert done.stdout.decode().startswith("/dev/fd/"), done.stderr

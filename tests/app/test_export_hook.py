"""``--export`` on the dashboard: the collector's thread feeds the exporter every event it posts to the app, and
``run_tui`` serves it (a busy port stops before the screen starts)."""

from __future__ import annotations

import argparse
import io
import os
import socket

import pytest

from neuron_top.cli.common import UsageError, run_tui
from neuron_top.export import Exporter, ExportOptions
from neuron_top.sources.demo import generate
from neuron_top.sources.stream import StreamSource
from neuron_top.tui.collector import Collector


def test_collector_feeds_the_exporter_what_it_posts() -> None:
    data = b"\n".join(generate("inf1.xlarge", 1, 3)) + b"\nnot a report\n"
    posted = []
    exporter = Exporter(ExportOptions(process_metrics=False))
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    collector = Collector(StreamSource(os.fdopen(r, "rb", buffering=0), "stdin"), posted.append, sink=exporter)
    collector.run()
    text = exporter.render().decode()
    assert "neurontop_reports_total 3.0" in text and "neurontop_input_skipped_total 1.0" in text
    assert "neuroncore_utilization_ratio{" in text
    assert len(posted) >= 5  # 3 reports, the skip, the status changes


def test_export_on_a_busy_port_stops_before_the_screen() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        ns = argparse.Namespace(export=f"127.0.0.1:{port}", theme=None, tag=None, history=600, trace=None)
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{port}: address already in use"):
            run_tui(StreamSource(io.BytesIO(b""), "stdin"), ns)


def test_export_with_a_replay_is_refused() -> None:
    ns = argparse.Namespace(export="127.0.0.1:0", theme=None, tag=None, history=600, trace=None)
    with pytest.raises(UsageError, match="not a replay"):
        run_tui(None, ns, replay=object())


@pytest.mark.parametrize("fleet", [False, True], ids=["reports", "fleet"])
def test_replay_with_export_is_one_line_before_any_screen(tmp_path, capsys, fleet: bool) -> None:
    """``neuron-top replay FILE --export PORT``: a fleet recording's screen used to start and ignore --export."""
    from neuron_top.cli.main import main
    from neuron_top.fleet.record import encode_frame
    from neuron_top.sources.demo import generate
    from tests.fleet_support import demo_frame

    rec = tmp_path / "run.jsonl"
    rec.write_bytes(encode_frame(demo_frame(3)) + b"\n" if fleet else b"\n".join(generate("inf1.xlarge", 1, 2)) + b"\n")
    assert main(["replay", str(rec), "--export", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--export serves live reports" in err[0] and "not a replay" in err[0]

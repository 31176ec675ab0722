

def test_reports_run_together_on_one_line_are_recorded_one_per_line(tmp_path) -> None:
    from neuron_top.recording.writer import RecordingWriter

    path = tmp_path / "r.jsonl"
    w = RecordingWriter(path, clock=lambda: 5.0)
    assert w.write(b'{"a":1}{"b":2}', 1.0)
    assert w.write(b'{"c":3} {"d":', 2.0)  # the whole one is kept, the cut-off one counted
    assert not w.write(b'{"e":4}xx{"f":5}', 3.0)
    w.close()
    lines = path.read_bytes().splitlines()
    assert [ln.split(b',"neuron_top"')[0] for ln in lines] == [b'{"a":1', b'{"b":2', b'{"c":3']
    assert w.skipped == 2

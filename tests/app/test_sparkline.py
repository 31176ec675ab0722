from neuron_top.tui.widgets.sparkline import chart_rows, spark_text


def test_gaps_are_spaces_never_zeros() -> None:
    assert spark_text([None, 0.0, 100.0], 4) == "  ▁█"
    assert spark_text([5.0, 10.0], 2, top=None) == "▄█"


def test_values_outside_the_scale_are_clamped() -> None:
    assert spark_text([-5.0, 49.9, 100.0, 150.0], 4) == "▁▄██"


def test_chart_rows() -> None:
    rows = chart_rows([100.0, None, 50.0], 3, 2)
    assert rows == ["█  ", "█ █"]

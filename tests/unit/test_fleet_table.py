"""The fleet table's rules: sort by any column (missing last), filter, group, trouble first, the summary line, and
label values shown literally."""

from __future__ import annotations

import pytest

from neuron_top.fleet.rows import DOWN, STALE, UP, FleetRow
from neuron_top.fleet.table import (
    COLUMNS,
    Group,
    arrange,
    column,
    compile_filter,
    events,
    fit_columns,
    percentile,
    sort_rows,
    summarize,
    text_table,
    trouble,
)

ROWS = [
    FleetRow(key="i-a", instance_type="trn2.48xlarge", zone="us-east-2a", util=80.0, err_rate=0.0, status=UP,
             age=1.0, labels={"cluster": "blue"}),
    FleetRow(key="i-b", instance_type="trn1.32xlarge", zone="us-east-2b", util=None, status=STALE, age=70.0),
    FleetRow(key="i-c", instance_type="trn2.48xlarge", zone="us-east-2b", util=10.0, idle=4, status=UP, age=2.0,
             labels={"cluster": "green"}),
    FleetRow(key="i-d", instance_type="inf2.48xlarge", zone="us-east-2a", util=50.0, ecc_uncorrected=1.0,
             ecc_corrected=0.0, status=UP, age=1.0),
    FleetRow(key="i-e", instance_type="trn2.48xlarge", zone="us-east-2a", util=30.0, err_rate=2.5, status=DOWN,
             age=400.0),
]


def keys(lines) -> list[str]:  # type: ignore[no-untyped-def]
    return [ln.key for ln in lines if isinstance(ln, FleetRow)]


@pytest.mark.parametrize("col", [c.key for c in COLUMNS])
@pytest.mark.parametrize("reverse", [False, True])
def test_every_column_sorts_with_missing_values_last(col: str, reverse: bool) -> None:
    out = sort_rows(ROWS, col, reverse)
    assert sorted(r.key for r in out) == sorted(r.key for r in ROWS)
    column = next(c for c in COLUMNS if c.key == col)
    values = [column.value(r) for r in out]
    present = [v for v in values if v is not None]
    assert values[: len(present)] == present  # every None after every value
    assert present == sorted(present, reverse=column.numeric != reverse)  # type: ignore[type-var]


def test_sort_by_utilization_highest_first() -> None:
    assert keys(sort_rows(ROWS, "util")) == ["i-a", "i-d", "i-e", "i-c", "i-b"]
    assert keys(sort_rows(ROWS, "util", reverse=True)) == ["i-c", "i-e", "i-d", "i-a", "i-b"]


def test_trouble_first_orders_by_how_bad() -> None:
    assert [trouble(r) for r in ROWS] == [(), ("stale",), ("idle cores",), ("uncorrected ECC",), ("down", "bad executions")]
    assert keys(sort_rows(ROWS, "host", trouble_first=True)) == ["i-d", "i-e", "i-b", "i-c", "i-a"]


def test_filter_searches_names_and_labels() -> None:
    assert keys(arrange(ROWS, pattern=compile_filter("trn2"))) == ["i-a", "i-c", "i-e"]
    assert keys(arrange(ROWS, pattern=compile_filter("cluster=gr"))) == ["i-c"]
    assert keys(arrange(ROWS, pattern=compile_filter("US-EAST-2B"))) == ["i-b", "i-c"]  # case-insensitive


def test_group_by_type_with_headings() -> None:
    lines = arrange(ROWS, sort="util", group="type")
    heads = [(g.value, g.hosts, g.troubled) for g in lines if isinstance(g, Group)]
    assert heads == [("inf2.48xlarge", 1, 1), ("trn1.32xlarge", 1, 1), ("trn2.48xlarge", 3, 2)]
    assert keys(lines) == ["i-d", "i-b", "i-a", "i-e", "i-c"]
    by_label = arrange(ROWS, group="label:cluster")
    assert [g.value for g in by_label if isinstance(g, Group)] == ["blue", "green", ""]


def test_summary_line() -> None:
    s = summarize(ROWS)
    assert (s.hosts, s.up, s.stale, s.down) == (5, 3, 1, 1)
    assert s.util == pytest.approx((80 + 10 + 50) / 3)  # down hosts do not count
    assert s.util_p10 == pytest.approx(percentile([10, 50, 80], 0.1))
    assert (s.err_rate, s.ecc_hosts, s.idle_cores, s.troubled) == (2.5, 1, 4, 4)
    assert s.text().startswith("5 hosts: 3 up, 1 stale, 1 down · util avg 46.7% p10 18.0% · bad 2.5/s")
    big = summarize([*ROWS] * 20)  # 100 hosts: what the issue asks of the line fits an 80-column terminal
    assert " · bad 50.0/s" in big.text()[:79] and big.text().index("bad") < big.text().index("exec")
    assert summarize(ROWS[:1]).text().startswith("1 host: ")  # not "1 hosts"


def test_percentile() -> None:
    assert percentile([], 0.1) is None
    assert percentile([5.0], 0.1) == 5.0
    assert percentile([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 0.1) == pytest.approx(10.0)


def test_event_counts_are_whole() -> None:
    assert [events(x) for x in (None, 0.0, 0.3, 1.23, 4.9)] == ["?", "0", "1", "1", "5"]


def test_every_figure_fits_its_column_whole() -> None:
    """A trn2 host weeks into its exporter: 123,456 corrected ECC events and 1,568 uncorrected. The ECC cell was
    "123456/1568" in 8 cells, cut to "123456/…" on screen: the uncorrected count, the one that matters, gone."""
    assert column("ecc").text(FleetRow(key="i", ecc_corrected=123456.0, ecc_uncorrected=3.0)) == "123k/3"
    assert column("ecc").text(FleetRow(key="i", ecc_corrected=1568.0, ecc_uncorrected=12.0)) == "1.6k/12"
    r = FleetRow(key="i-0123456789abcdef0", devices=16, cores=128, util=100.0, util_max=100.0, busy=128, idle=128,
                 mem_used=1.5e12, mem_total=1.6e12, vcpu=100.0, vcpus=192, exec_rate=123456.0, err_rate=98765.0,
                 p99=12.5, ecc_corrected=123456.0, ecc_uncorrected=1568.0, apps=128, status=STALE, age=3 * 86400.0)
    for col in COLUMNS:
        assert len(col.text(r)) <= col.width, (col.key, col.text(r))
    assert column("ecc").text(r) == "123k/2k"


def test_blank_cells_for_missing_figures() -> None:
    r = FleetRow(key="i-x")
    texts = {c.key: c.text(r) for c in COLUMNS}
    assert texts["host"] == "i-x" and texts["status"] == "up"
    assert all(v == "" for k, v in texts.items() if k not in ("host", "status"))


def test_columns_fit_by_priority() -> None:
    narrow = [c.key for c in fit_columns(78)]
    assert narrow[0] == "host" and "util" in narrow and "status" in narrow and "ecc" in narrow
    assert len(fit_columns(300)) == len(COLUMNS)
    assert sum(c.width + 1 for c in fit_columns(78)) <= 78


def test_untrusted_label_values_show_literally() -> None:
    evil = FleetRow(key="i-\x1b[31mred", name="[bold]x[/bold]", instance_type="trn2\x07", note="\x1b]0;pwned\x07")
    text = "\n".join(text_table([evil], 300))
    assert "\x1b" not in text and "\x07" not in text
    assert "i-\\x1b[31mred" in text and "trn2\\x07" in text and "[bold]x[/bold]" in text


def test_cells_are_cut_by_terminal_cells_not_characters() -> None:
    """One cut rule (``fmt.cut``): a CJK host name takes two cells a character; cutting it by ``len`` made the
    row wider than the table (the fleet's own copy counted characters)."""
    from neuron_top import fmt
    from neuron_top.fleet.table import pad

    for text, width in (("推論サーバー01", 8), ("host-a", 4), ("推論", 4), ("abc", 6), ("推論サ", 5)):
        for right in (False, True):
            out = pad(text, width, right)
            assert fmt.cells(out) == width, (text, width, out)
    assert pad("推論サーバー01", 8, False) == "推論サ… "


def test_the_summary_line_drops_whole_parts_to_fit_never_cutting_a_number() -> None:
    """At 80 columns the fleet header's summary was cut in a number: "exec 1" for "exec 1,297/s"."""
    from neuron_top.fleet.table import Summary

    s = Summary(hosts=40, up=38, stale=1, down=1, util=35.1, util_p10=6.8, exec_rate=1297.0, err_rate=3.5,
                ecc_hosts=1, idle_cores=50, troubled=31)
    whole = s.text()
    assert s.text(len(whole)) == whole and s.text(None) == whole
    for width in (79, 100, 60, len(whole) - 1):
        line = s.text(width)
        assert len(line) <= width and line.endswith(" · …"), (width, line)
        kept = line.removesuffix(" · …").split(" · ")
        assert kept == whole.split(" · ")[:len(kept)]  # whole parts, most important first
    assert s.text(79) == "40 hosts: 38 up, 1 stale, 1 down · util avg 35.1% p10 6.8% · bad 3.5/s · …"
    assert s.text(20) == "40 hosts: 38 up, 1 …"  # not even the first part fits: cut, marked

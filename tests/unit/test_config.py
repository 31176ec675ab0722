"""neuron-monitor config: periods, tag filters, metric types, error messages that name the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuron_top.config import (
    DEFAULT_PERIOD,
    ConfigError,
    default_config,
    format_period,
    load_config,
    parse_config,
    parse_period,
)
from tests.conftest import GUIDE

GUIDE_EXAMPLE = {
    "period": "1s",
    "neuron_runtimes": [
        {
            "tag_filter": ".*",
            "metrics": [
                {"type": "neuroncore_counters"},
                {"type": "memory_used"},
                {"type": "neuron_runtime_vcpu_usage"},
                {"type": "execution_stats"},
            ],
        }
    ],
    "system_metrics": [
        {"type": "vcpu_usage"},
        {"type": "memory_info"},
        {"period": "2s", "type": "neuron_hw_counters"},
    ],
}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("500ms", 0.5),
        ("2m", 120.0),
        ("1m30s", 90.0),
        ("1.5s", 1.5),
        ("250us", 0.00025),
        ("1h", 3600.0),
    ],
)
def test_periods(text: str, seconds: float) -> None:
    assert parse_period(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["2x", "", "s", "1", "-1s", "1s2", "1 s", "0s"])
def test_bad_periods_are_rejected(bad: str) -> None:
    with pytest.raises(ConfigError):
        parse_period(bad)


def test_format_period_round_trips() -> None:
    for seconds in (0.5, 1.0, 2.0, 1.5, 0.25, 120.0):
        assert parse_period(format_period(seconds)) == pytest.approx(seconds)


def test_guide_example_gives_effective_periods() -> None:
    config = parse_config(json.dumps(GUIDE_EXAMPLE))
    assert config.group_periods() == {
        "neuroncore_counters": 1.0,
        "memory_used": 1.0,
        "neuron_runtime_vcpu_usage": 1.0,
        "execution_stats": 1.0,
        "vcpu_usage": 1.0,
        "memory_info": 1.0,
        "neuron_hw_counters": 2.0,
    }
    assert config.base_period() == 1.0
    assert config.warnings == ()


def test_runtime_entry_period_applies_to_its_metrics_and_nearest_wins() -> None:
    config = parse_config(
        {
            "neuron_runtimes": [
                {
                    "period": "3s",
                    "metrics": [{"type": "memory_used"}, {"type": "execution_stats", "period": "10s"}],
                }
            ],
            "system_metrics": [{"type": "memory_info"}],
        }
    )
    periods = config.group_periods()
    assert periods["memory_used"] == 3.0
    assert periods["execution_stats"] == 10.0
    assert periods["memory_info"] == DEFAULT_PERIOD  # no root period: the default


def test_tag_filter_is_a_regex_search() -> None:
    config = parse_config({"neuron_runtimes": [{"tag_filter": "^train_", "metrics": []}]})
    assert config.tag_matches("train_bert")
    assert not config.tag_matches("infer_1")
    assert parse_config({"neuron_runtimes": [{"metrics": []}]}).tag_matches("anything")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {
                "system_metrics": [
                    {"type": "vcpu_usage"},
                    {"type": "memory_info"},
                    {"type": "neuron_hw_counters", "period": "2x"},
                ]
            },
            'system_metrics[2].period: "2x" is not a period like "1s" or "500ms"',
        ),
        ({"period": 5}, "period: 5 is not a period"),
        (
            {"neuron_runtimes": [{"tag_filter": "(", "metrics": []}]},
            'neuron_runtimes[0].tag_filter: "(" is not a valid regex',
        ),
        (
            {"neuron_runtimes": [{"metrics": [{"type": "memory_usd"}]}]},
            'neuron_runtimes[0].metrics[0].type: "memory_usd" is not a runtime-level metric group (expected one of',
        ),
        (
            {"neuron_runtimes": [{"metrics": [{"type": "vcpu_usage"}]}]},
            "it is a system-level group and belongs in system_metrics",
        ),
        ({"system_metrics": [{"type": "memory_used"}]}, "belongs in neuron_runtimes[].metrics"),
        ({"system_metrics": [{}]}, 'system_metrics[0]: missing "type"'),
        ({"system_metrics": {"type": "vcpu_usage"}}, "system_metrics: expected an array"),
        ([], "(root): expected an object"),
        ({"neuron_runtimes": [{"period": "fast", "metrics": []}]}, 'neuron_runtimes[0].period: "fast"'),
    ],
)
def test_errors_name_the_key_path(doc: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(json.dumps(doc))
    assert message in str(info.value)


def test_unknown_keys_are_warnings_not_errors() -> None:
    config = parse_config(
        {"period": "1s", "k8s_info": True, "system_metrics": [{"type": "vcpu_usage", "x": 1}]}
    )
    assert config.warnings == ("k8s_info: unknown key, ignored", "system_metrics[0].x: unknown key, ignored")


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "m.conf"
    bad.write_text('{"period": "1s",')
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.conf")


def test_untrusted_text_in_errors_is_printable() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"period": "\x1b[2J"})
    assert "\x1b" not in str(info.value)


def test_with_tag_filter_and_to_json_round_trip() -> None:
    config = parse_config(GUIDE_EXAMPLE).with_tag_filter("^bert$")
    again = parse_config(config.to_json())
    assert [r.tag_filter for r in again.neuron_runtimes] == ["^bert$"]
    assert again.group_periods() == parse_config(GUIDE_EXAMPLE).group_periods()
    with pytest.raises(ConfigError, match="--tag"):
        config.with_tag_filter("[")
    # no runtime entries: --tag adds the default one
    assert default_config().with_tag_filter("x").neuron_runtimes[0].metrics
    assert parse_config({"system_metrics": []}).with_tag_filter("x").tag_matches("x")


def test_default_config_is_every_group_every_5_seconds() -> None:
    periods = default_config().group_periods()
    assert len(periods) == 7 and set(periods.values()) == {5.0}


def test_example_config_loads() -> None:
    config = load_config(GUIDE / "monitor.conf.example.json")
    assert config.group_periods()["neuron_hw_counters"] == 2.0
    assert config.base_period() == 1.0


def test_source_filter_is_what_the_runtime_entries_leave_out() -> None:
    from neuron_top.config import parse_config

    def cfg(runtimes: str):
        return parse_config(('{"neuron_runtimes": ' + runtimes + '}').encode())

    assert cfg("[]").source_filter() is None
    assert cfg('[{"metrics": []}]').source_filter() is None  # no filter: every application
    assert cfg('[{"tag_filter": "^bert"}]').source_filter() == "^bert"
    assert cfg('[{"tag_filter": "^bert"}, {"tag_filter": "^bert"}]').source_filter() == "^bert"
    assert cfg('[{"tag_filter": "a"}, {"tag_filter": "b"}]').source_filter() == "(?:a)|(?:b)"
    assert cfg('[{"tag_filter": "a"}, {"metrics": []}]').source_filter() is None  # the second takes every app

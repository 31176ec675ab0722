"""The public API's examples run: every ``>>>`` example in the public modules' docstrings (the package's own
headline example first), so an example that stops working fails the suite instead of a new user."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("neuron_top", "neuron_top.derived", "neuron_top.output.cells", "neuron_top.fmt", "neuron_top.textsafe",
           "neuron_top.recording.markers", "neuron_top.snapshot", "neuron_top.sources.base", "neuron_top.feed",
           "neuron_top.session", "neuron_top.k8s.model", "neuron_top.fleet.queries",
           "neuron_top.fleet.table")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output)"


def test_the_headline_example_is_a_doctest() -> None:
    import neuron_top

    examples = doctest.DocTestFinder().find(neuron_top, "neuron_top")[0].examples
    assert len(examples) >= 8 and any("DemoSource" in e.source for e in examples)


def test_the_types_a_source_needs_are_public() -> None:
    import neuron_top
    from neuron_top.sources import base

    for name in ("Source", "State", "Status", "RawReport", "Skipped"):
        assert name in neuron_top.__all__ and getattr(neuron_top, name) is getattr(base, name)

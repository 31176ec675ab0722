"""The ``neuron-top`` command line: ``main`` parses the arguments and runs a command (headless unless it shows
the TUI)."""

from neuron_top.cli.main import main

__all__ = ["main"]

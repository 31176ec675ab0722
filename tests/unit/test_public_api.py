"""The core is a library: ``neuron_top`` exports its entry points, every core module says what it exports
(``__all__``), and what it exports is documented; the public entry points with Args and Returns."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys

import neuron_top
from tests.conftest import ROOT
from tests.unit.test_import_hygiene import core_modules

NOT_DOCUMENTABLE = {"__version__", "FeedEvent"}  # a string and a type alias


def test_the_package_exports_its_entry_points_lazily_and_without_the_tui() -> None:
    """``import neuron_top`` loads nothing else (the command line stays fast); each name loads its module on
    first use; none of them pulls in textual or rich."""
    assert set(neuron_top.__all__) == {"__version__", *neuron_top._EXPORTS}
    code = ("import sys, neuron_top\n"
            "print(sorted(m for m in sys.modules if m.startswith('neuron_top')))\n"
            "for name in neuron_top.__all__:\n"
            "    getattr(neuron_top, name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    first, ui = out.stdout.splitlines()
    assert first == "['neuron_top']"
    assert ui == "[]"
    for name, module in neuron_top._EXPORTS.items():
        assert getattr(neuron_top, name) is getattr(importlib.import_module(module), name)
    assert "Feed" in dir(neuron_top)


def test_the_entry_points_document_their_arguments_and_results() -> None:
    missing = []
    for name in sorted(set(neuron_top.__all__) - NOT_DOCUMENTABLE):
        obj = getattr(neuron_top, name)
        doc = inspect.getdoc(obj) or ""
        if not doc:
            missing.append(f"{name}: no docstring")
        elif inspect.isfunction(obj):
            sig = inspect.signature(obj)
            if sig.parameters and "Args:" not in doc:
                missing.append(f"{name}: no Args")
            if sig.return_annotation not in (None, "None") and "Returns:" not in doc:
                missing.append(f"{name}: no Returns")
        elif inspect.isclass(obj):
            generated = dataclasses.is_dataclass(obj) or issubclass(obj, Exception) or \
                getattr(obj, "_is_protocol", False)  # fields documented as attributes; a protocol's methods
            init = obj.__dict__.get("__init__")
            if not generated and init is not None and len(inspect.signature(init).parameters) > 1 \
                    and "Args:" not in doc:
                missing.append(f"{name}: no Args")
    assert missing == []


def test_every_core_module_says_what_it_exports_and_documents_it() -> None:
    no_all, unknown, undocumented = [], [], []
    for module_name in core_modules():
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            if not module_name.endswith(("__init__",)) and module.__file__ and not module.__file__.endswith(
                    "__init__.py"):
                no_all.append(module_name)
            continue
        for name in exported:
            if not hasattr(module, name):
                unknown.append(f"{module_name}.{name}")
                continue
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module_name \
                    and not (obj.__doc__ or "").strip():
                undocumented.append(f"{module_name}.{name}")
    assert no_all == []
    assert unknown == []
    assert undocumented == []

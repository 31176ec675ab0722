"""One recording ``Index`` protocol with the whole surface: the readers use it, not ``getattr`` with defaults."""

from __future__ import annotations

import re
from pathlib import Path

from neuron_top.recording import index as index_module
from neuron_top.recording.index import Index, RecordingIndex, SpooledIndex
from tests.list_index import ListIndex

ROOT = Path(__file__).resolve().parents[2] / "neuron_top"
READERS = ["tui/screens/transport.py", "tui/screens/replay.py", "tui/screens/fleet_replay.py",
           "recording/player.py", "recording/incident.py", "trace/metrics.py", "cli/replay_cmd.py",
           "fleet/record.py"]


def members() -> set[str]:
    return {k for k in vars(Index) if not k.startswith("_") or k == "__len__"} | set(Index.__annotations__)


def test_every_reader_uses_the_protocol_not_getattr() -> None:
    for rel in READERS:
        text = (ROOT / rel).read_text()
        found = re.findall(r"(?:getattr|hasattr)\((?:self\.)?(?:c\.|controller\.)?(?:idx|index)\b", text)
        assert not found, f"{rel}: {found}"


def test_the_implementations_and_the_test_stand_in_have_the_whole_surface() -> None:
    for cls in (RecordingIndex, SpooledIndex, ListIndex):
        missing = {m for m in members() if not hasattr(cls, m) and m not in _instance_attrs(cls)}
        assert not missing, f"{cls.__name__} lacks {missing}"


def test_there_is_one_index_protocol() -> None:
    """The three partial ones (player, incident, trace.metrics) are the one in recording.index."""
    from neuron_top.recording import incident, player
    from neuron_top.trace import metrics

    assert player.Index is index_module.Index and metrics.Index is index_module.Index
    assert not hasattr(incident, "_Index")


def _instance_attrs(cls: type) -> set[str]:
    """Attributes set in ``__init__``/``_empty`` (instances have them, the class does not)."""
    import inspect

    names: set[str] = set()
    for klass in cls.__mro__:
        for fn in ("__init__", "_empty"):
            f = klass.__dict__.get(fn)
            if inspect.isfunction(f):
                names |= set(re.findall(r"self\.(\w+)\s*(?::[^=]+)?=", inspect.getsource(f)))
    return names

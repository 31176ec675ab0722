"""A runtime's local process details (nvitop's habit): command line, user, start time, RSS."""

from __future__ import annotations

import os
import sys
import time

from neuron_top.procinfo import process_info


def test_our_own_process_is_described() -> None:
    info = process_info(os.getpid())
    assert info is not None
    assert "pytest" in info.cmdline or os.path.basename(sys.executable) in info.cmdline
    assert info.rss > 0 and info.started <= time.time()
    text = info.describe()
    assert text.startswith(f"user {info.user} · started ") and " ago) · RSS " in text


def test_no_such_process_and_pid_0_are_none() -> None:
    assert process_info(0) is None and process_info(-1) is None
    assert process_info(2**22 + 12345) is None

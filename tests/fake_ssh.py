#!/usr/bin/env python3
"""A local stand-in for ``ssh HOST COMMAND`` in the fleet's ssh-mode tests.

``fake_ssh.py [-o OPT]... HOST neuron-monitor`` runs ``neuron-top demo --emit`` here, as if neuron-monitor ran on
HOST: the instance type and seed come from the host's name (``trn2-3`` is a trn2.48xlarge with seed 3), so each
host is a different machine. Hosts named ``bad*`` fail the way ssh does when it cannot connect (a message on
stderr, exit status 255); ``flaky*`` hosts send a few reports and then drop the connection; ``mute*`` hosts
connect and never send a report (a neuron-monitor that hangs at start); ``garbage*`` hosts print lines that are not
reports, one every 0.1 s, for ever (a login banner, the wrong command). ``FAKE_SSH_PERIOD``
sets the demo's period (seconds between reports).
"""

from __future__ import annotations

import os
import sys
import time

KINDS = {"trn2": "trn2.48xlarge", "trn1": "trn1.32xlarge", "inf2": "inf2.48xlarge", "inf1": "inf1.xlarge"}


def main(argv: list[str]) -> int:
    args = list(argv)
    while args and args[0] == "-o":  # ssh options such as -o BatchMode=yes
        args = args[2:]
    if len(args) < 2:
        print("usage: fake_ssh.py HOST COMMAND", file=sys.stderr)
        return 255
    host, command = args[0], args[1:]
    if host.startswith("bad"):
        print(f"ssh: connect to host {host} port 22: Connection refused", file=sys.stderr, flush=True)
        return 255
    if command != ["neuron-monitor"]:
        print(f"bash: {command[0]}: command not found", file=sys.stderr)
        return 127
    if host.startswith("mute"):
        time.sleep(3600)
        return 0
    if host.startswith("garbage"):
        for i in range(36000):
            print(f"Welcome to {host}! line {i} of the message of the day", flush=True)
            time.sleep(0.1)
        return 0
    kind, _, num = host.partition("-")
    instance = KINDS.get(kind, "inf2.48xlarge")
    seed = int(num) if num.isdigit() else sum(host.encode())
    period = os.environ.get("FAKE_SSH_PERIOD", "1")
    demo = [sys.executable, "-m", "neuron_top", "demo", "--emit", "--instance", instance, "--seed", str(seed),
            "--period", period]
    if host.startswith("flaky"):
        demo += ["--count", "3"]
    os.execv(sys.executable, demo)
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

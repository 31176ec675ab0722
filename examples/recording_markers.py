"""Read a recording and list its markers: the reports where something happened (an ECC error, an app that started
or stopped, a stall, execution errors, a failing metric group), as the replay screen's ``[`` and ``]`` jump to.

    python examples/recording_markers.py run.ndjson.zst      # from neuron-top --record FILE or neuron-top record
    zcat run.ndjson.gz | python examples/recording_markers.py - --kind ecc --kind error

Only the headless library is used (``neuron_top``): no Textual.
"""

from __future__ import annotations

import argparse
import sys
import time

from neuron_top import ReplayController, open_recording
from neuron_top.recording.markers import MARKER_KINDS, kinds_named


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="a recording (.ndjson, .gz, .zst), or - for stdin")
    names = sorted({n for k in MARKER_KINDS for n in (k.family, k.name)})
    p.add_argument("--kind", action="append", choices=names, metavar="KIND",
                   help=f"only markers of this kind ({', '.join(names)}; ecc is both ECC kinds, app both app "
                        "kinds); repeatable")
    args = p.parse_args(argv)
    wanted = {k for word in args.kind or () for k in kinds_named(word)}

    try:
        index = open_recording(args.file)
    except OSError as exc:
        print(f"cannot open {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        index.wait()  # the index is built in a background thread; wait for the whole file
        if len(index) == 0:
            print(f"no reports in {args.file} ({index.skipped} bad lines skipped)", file=sys.stderr)
            return 1
        replay = ReplayController(index)
        replay.scan_markers()  # decodes every report once, comparing each with the one before
        start = index.timestamp(0)
        for marker in replay.markers:
            if wanted and marker.kind not in wanted:
                continue
            at = index.timestamp(marker.index)
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) if at > 1e9 else f"+{at - start:.0f}s"
            print(f"report {marker.index + 1:>6}  {when}  {marker.kind:<11}  {marker.text}")
        print(f"{len(replay.markers)} markers in {len(index)} reports"
              + (f", {index.skipped} bad lines skipped" if index.skipped else ""), file=sys.stderr)
    finally:
        index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run one import contender once, for an instruction count under callgrind.

Wall-clock ratios on a shared machine move by tens of percent from run to run;
instruction counts do not. Count the recording's generation alone, then with the
contender, and subtract:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/import_once.py anthropic 100000 course

CONTENDER is ``none`` (generation only), ``course`` or ``floor``.
"""

from __future__ import annotations

import argparse
import gc

import import_recordings as bench

RECORDINGS = {
    "openai-chat": bench.chat_recording,
    "openai-responses": bench.responses_recording,
    "anthropic": bench.anthropic_recording,
}
CONTENDERS = {"none": None, "course": bench.course_import, "floor": bench.floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("format", choices=sorted(RECORDINGS))
    parser.add_argument("events", type=int)
    parser.add_argument("contender", choices=sorted(CONTENDERS))
    args = parser.parse_args()
    data = RECORDINGS[args.format](args.events)
    gc.collect()
    contender = CONTENDERS[args.contender]
    if contender is not None:
        contender(data)


if __name__ == "__main__":
    main()

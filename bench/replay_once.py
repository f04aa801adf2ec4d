"""Run one replay workload once with one implementation, for an instruction count.

Wall-clock ratios on a shared machine move by tens of percent from run to run;
instruction counts do not. Count the workload's generation alone, then with the
implementation, and subtract:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/replay_once.py long course --scale 0.1

IMPL is ``none`` (generation only), ``course``, ``baseline``, ``msgspec`` or ``floor``.
``--construct-only`` stops after construction (streaming is the difference).
``bench/count.py`` runs every pair and prints the table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("course") is None:
    sys.path.append(str(ROOT))  # this checkout's ``course``, unless one is importable

from impls import IMPLEMENTATIONS  # noqa: E402
from measure import _consume  # noqa: E402
from workloads import WORKLOAD_NAMES, build  # noqa: E402

CONTENDERS = {"none": None, **{impl.name: impl for impl in IMPLEMENTATIONS}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=WORKLOAD_NAMES)
    parser.add_argument("impl", choices=sorted(CONTENDERS))
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--construct-only", action="store_true")
    args = parser.parse_args()
    workload = build(args.workload, args.scale)
    fixture = workload.fixture()
    requests = [f"req-{index}" for index in range(workload.response_count)]
    gc.collect()  # the input is tracked, as a user's is: never frozen
    impl = CONTENDERS[args.impl]
    if impl is None:
        return
    made = [impl.request(request) for request in requests]

    async def replay() -> None:
        adapter = impl.construct(fixture)
        if not args.construct_only:
            await _consume(impl, adapter, made)

    asyncio.run(replay())


if __name__ == "__main__":
    main()

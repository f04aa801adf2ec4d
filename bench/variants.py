"""Collecting ``faults.variants``: what a test suite pays at collection, per variant.

The issue's workload: 10 responses of 102 records (a start, 100 text deltas, an end)
give 2,050 version-1 variants. Collecting them (``list(faults.variants(fixture))``:
the adapter's check of the fixture, one replay, one private copy, the faults) is timed
in CPU time (``time.process_time``), the median of several runs, each after
``gc.collect()`` with the collector enabled. Each variant's fixture is made when it is
read, so reading one is timed apart: that cost is paid by the test that reads it.

A line per size shows the collection's linearity: the time per variant stays flat as
responses grow (a collection that copied the fixture per variant grew with the
square). The version-2 line adds ``stall=1`` on the same fixture (length-after-k,
refused, content-filter, rate-limited, overloaded and stall-at-k variants).

Usage::

    python bench/variants.py            # 9 runs per line
    python bench/variants.py --quick    # 3 runs per line (a smoke run)
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

from course import faults

TARGET_MS = 50.0
"""Issue 23's target for collecting the 2,050 variants."""


def text_fixture(responses: int, deltas: int) -> dict[str, object]:
    """``responses`` responses of a start, ``deltas`` text deltas and an end each."""
    made: list[object] = []
    for number in range(responses):
        response_id = f"response-{number:03d}"
        records: list[object] = [
            {"type": "response_start", "responseId": response_id, "role": "assistant"}
        ]
        records += [{"type": "text_delta", "text": f"word {k} "} for k in range(deltas)]
        records.append(
            {
                "type": "response_end",
                "responseId": response_id,
                "stopReason": "stop",
                "usage": {"inputTokens": 10, "outputTokens": deltas},
            }
        )
        made.append({"records": records})
    return {"schemaVersion": 1, "responses": made}


def collect(fixture: dict[str, object], stall: int | None = None) -> list[faults.Fault]:
    return list(faults.variants(fixture, stall=stall))


def cpu_seconds(work: Callable[[], object], runs: int) -> float:
    """The median CPU time of ``runs`` calls of ``work``, each after ``gc.collect()``."""
    times: list[float] = []
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 runs per line")
    args = parser.parse_args()
    runs = 3 if args.quick else 9

    print(f"python {sys.version.split()[0]}; CPU time, median of {runs} runs per line")
    print(f"{'workload':<34} {'variants':>8} {'collect':>10} {'per variant':>12}")
    headline = 0.0
    for deltas in (10, 50, 100, 200):
        fixture = text_fixture(10, deltas)
        count = len(list(faults.variants(fixture)))
        seconds = cpu_seconds(partial(collect, fixture), runs)
        if deltas == 100:
            headline = seconds
        label = f"10 responses x {deltas + 2} records"
        print(f"{label:<34} {count:>8,} {seconds * 1e3:>7.1f} ms {seconds / count * 1e6:>9.1f} us")

    fixture = text_fixture(10, 100)
    count = len(list(faults.variants(fixture, stall=1)))
    seconds = cpu_seconds(partial(collect, fixture, stall=1), runs)
    label = "the same, stall=1 (version 2)"
    print(f"{label:<34} {count:>8,} {seconds * 1e3:>7.1f} ms {seconds / count * 1e6:>9.1f} us")

    found = list(faults.variants(fixture))
    read = cpu_seconds(lambda: [fault.fixture for fault in found[:50]], runs) / 50
    print(f"reading one variant's fixture (10 x 102 records): {read * 1e3:.2f} ms")

    verdict = "meets" if headline <= TARGET_MS / 1e3 else "misses"
    print(f"2,050 variants in {headline * 1e3:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")
    return 0 if headline <= TARGET_MS / 1e3 else 1


if __name__ == "__main__":
    raise SystemExit(main())

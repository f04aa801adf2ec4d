"""``load_fixture`` against ``json.loads`` on fixture files of about 10 MB each.

For each shape of ``bench/workloads.py`` (long text streams, many small responses, many
tool calls with nested arguments), writes one fixture file (indented as a person or
``json.dump(..., indent=2)`` would), then times, interleaved in one process:

- ``json.loads``: reading the file and ``json.loads`` of its text, the baseline;
- ``load_fixture``: what the adapter's users call (strict, fast path);
- ``positioned``: reading the file and the positioned parser alone, what loading cost
  before the fast path (it now runs only to locate an error);
- ``locate all``: finding every response's line and column in the text already read
  (what ``course-fixture validate`` adds to print its ``file:line:col`` for each one).

Each figure is the median of several runs, each after ``gc.collect()``, with the
collector enabled as in real use, timed in CPU seconds of this process
(``time.process_time``), so that other work on a shared machine moves the figures less.
Ratios are against ``json.loads`` in the same run.

Usage::

    python bench/load.py            # ~10 MB per file, 7 runs each
    python bench/load.py --quick    # ~1 MB per file, 3 runs (a smoke run)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from workloads import build

from course import load_fixture
from course._json_text import TextPositions, parse_positioned

SHAPES = {
    # workload name: its scale for a file of about 10 MB
    "long": 0.25,
    "wide": 0.6,
    "tools": 0.6,
}


def write_fixture(directory: Path, name: str, scale: float) -> tuple[Path, int]:
    workload = build(name, scale)
    fixture = {"schemaVersion": 1, "responses": [{"records": r} for r in workload.responses]}
    path = directory / f"{name}.json"
    path.write_text(json.dumps(fixture, indent=2), encoding="utf-8")
    return path, workload.response_count


def cpu_seconds(run: Callable[[], object]) -> float:
    """CPU seconds of one run, after ``gc.collect()``."""
    gc.collect()
    start = time.process_time()
    run()
    return time.process_time() - start


def locate_every_response(path: Path, count: int) -> None:
    text = path.read_text(encoding="utf-8")
    positions = TextPositions(text)
    for index in range(count):
        offset = positions.offset(f"/responses/{index}")
        assert offset is not None
        positions.line_and_column(offset)


def row(path: Path, count: int, runs: int) -> list[str]:
    """The baseline's median time, then each contender's median time over it."""
    contenders: dict[str, Callable[[], object]] = {
        "json.loads": lambda: json.loads(path.read_text(encoding="utf-8")),
        "load_fixture": lambda: load_fixture(path),
        "positioned": lambda: parse_positioned(path.read_text(encoding="utf-8")),
        "locate all": lambda: locate_every_response(path, count),
    }
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for _ in range(runs):  # interleaved, so drift hits every contender alike
        for label, run in contenders.items():
            times[label].append(cpu_seconds(run))
    base = statistics.median(times["json.loads"])
    cells = [f"{base * 1000:,.0f} ms"]
    for label in list(contenders)[1:]:
        cells.append(f"{statistics.median(times[label]) / base:.2f}x")
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="~1 MB files, 3 runs each")
    args = parser.parse_args()
    factor, runs = (0.1, 3) if args.quick else (1.0, 7)
    print(
        f"CPython {sys.version.split()[0]}; median of {runs} runs each, interleaved; "
        "ratios against json.loads in the same run"
    )
    print()
    print("| file | size | json.loads | load_fixture | positioned | locate all |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as directory:
        for name, scale in SHAPES.items():
            path, count = write_fixture(Path(directory), name, scale * factor)
            size = path.stat().st_size / 1e6
            print(f"| {name} | {size:.1f} MB | " + " | ".join(row(path, count, runs)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Instruction counts (callgrind) of every implementation on every workload, net of generation.

Wall-clock ratios on a shared machine move by tens of percent from run to run;
instruction counts do not. For each workload this runs ``bench/replay_once.py`` under
``valgrind --tool=callgrind``: once generating the workload only (``none``), then per
implementation constructing only, then constructing and streaming everything. Each
figure is a run minus the ``none`` run, so construction plus streaming is end to end.
The collector's share is the instructions spent inside CPython's ``gc_collect_main``
(inclusive), over the implementation's own.

Usage::

    python bench/count.py                          # every workload at scale 0.1
    python bench/count.py --workloads wide tools --impls course msgspec
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from impls import IMPLEMENTATIONS
from workloads import WORKLOAD_NAMES

BENCH = Path(__file__).resolve().parent
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.MULTILINE)
# Inclusive counts of the collector's entry points: every collection, those that
# ``gc.collect()`` asks for, and the one at interpreter shutdown.
_COLLECTIONS = ("gc_collect_main", "gc_collect", "_PyGC_CollectNoFail")


@dataclass(frozen=True)
class Count:
    """One callgrind run: every instruction, and those inside the cyclic collector."""

    total: int
    collector: int

    def __sub__(self, other: Count) -> Count:
        return Count(self.total - other.total, self.collector - other.collector)


def count(*arguments: str) -> Count:
    """Run ``replay_once.py`` with ``arguments`` under callgrind."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                str(BENCH / "replay_once.py"),
                *arguments,
            ],
            check=True,
            capture_output=True,
        )
        text = Path(out).read_text(encoding="utf-8", errors="replace")
        match = _TOTAL.search(text)
        if match is None:
            raise RuntimeError("callgrind wrote no total")
        annotated = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    every, asked, at_exit = (_inclusive(annotated, name) for name in _COLLECTIONS)
    # The collector's own runs, triggered by allocations: neither asked for nor at exit.
    return Count(int(match[1]), every - asked - at_exit)


def _inclusive(annotated: str, function: str) -> int:
    """A function's inclusive count in ``callgrind_annotate --inclusive=yes`` output."""
    found = re.search(rf"^\s*([\d,]+) \(.*:{function} \[", annotated, re.MULTILINE)
    return int(found[1].replace(",", "")) if found else 0


def _m(instructions: int) -> str:
    return f"{instructions / 1e6:,.1f} M"


def main(argv: list[str] | None = None) -> int:
    names = [impl.name for impl in IMPLEMENTATIONS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", default="0.1")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOAD_NAMES, default=WORKLOAD_NAMES)
    parser.add_argument("--impls", nargs="+", choices=names, default=names)
    args = parser.parse_args(argv)
    print(
        "| workload | implementation | construction | streaming | end to end "
        "| collector's share | course vs it |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for workload in args.workloads:
        scale = ("--scale", args.scale)
        none = count(workload, "none", *scale)
        totals: dict[str, Count] = {}
        rows: list[tuple[str, Count, Count]] = []
        for impl in args.impls:
            built = count(workload, impl, *scale, "--construct-only") - none
            whole = count(workload, impl, *scale) - none
            totals[impl] = whole
            rows.append((impl, built, whole))
        for impl, built, whole in rows:
            share = whole.collector / whole.total if whole.total else 0.0
            versus = f"{whole.total / totals['course'].total:.2f}x" if "course" in totals else "-"
            print(
                f"| {workload} | {impl} | {_m(built.total)} | {_m(whole.total - built.total)} "
                f"| {_m(whole.total)} | {share:.0%} | {versus} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark ``course`` against a pydantic baseline, a msgspec peer and the floor; write the tables.

Usage (from anywhere; pydantic and msgspec are in the ``dev`` and ``bench`` extras)::

    .venv/bin/python bench/run.py                 # full run (minutes): bench/RESULTS.md
    .venv/bin/python bench/run.py --update-readme # also the README's bench block
    .venv/bin/python bench/run.py --quick         # a tenth of the size: prints only

First checks that the baseline, the msgspec peer and the floor produce what ``course``
produces (``equivalence.py``); exits 2 if they do not. ``--check-targets`` exits 1 when a
target is missed. Raw samples go to ``bench/.results/`` (ignored by git).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if importlib.util.find_spec("course") is None:
    sys.path.append(str(ROOT))  # this checkout's ``course``, unless one is importable

from equivalence import check_equivalence  # noqa: E402
from impls import IMPLEMENTATIONS  # noqa: E402
from measure import first_chunk_times, peak_memory, timed_run  # noqa: E402
from report import FirstChunk, Results, WorkloadResult, machine, render, targets  # noqa: E402
from workloads import WORKLOAD_NAMES, build, source_records  # noqa: E402

import course  # noqa: E402

README = ROOT / "README.md"
RESULTS = BENCH / "RESULTS.md"
RAW = BENCH / ".results"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


@dataclasses.dataclass(frozen=True)
class Mode:
    name: str
    scale: float
    runs: int
    first_chunk_sizes: tuple[int, ...]
    first_chunk_trials: int


FULL = Mode("full size", 1.0, 7, (1_000, 10_000, 100_000), 301)
QUICK = Mode("quick (a tenth of the full size)", 0.1, 5, (1_000, 100_000), 101)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure_workload(name: str, mode: Mode) -> WorkloadResult:
    # The input stays tracked by the collector, as a user's fixture is: never frozen.
    workload = build(name, mode.scale)
    result = WorkloadResult(name, workload.description, workload.record_count)
    for impl in IMPLEMENTATIONS:
        result.samples[impl.name] = []
    for run in range(mode.runs):
        shift = run % len(IMPLEMENTATIONS)
        for impl in IMPLEMENTATIONS[shift:] + IMPLEMENTATIONS[:shift]:
            result.samples[impl.name].append(timed_run(impl, workload))
    for impl in IMPLEMENTATIONS:
        result.peak_bytes[impl.name] = peak_memory(impl, workload)
    del workload
    tenth = build(name, mode.scale / 10)
    result.tenth_records = tenth.record_count
    for impl in IMPLEMENTATIONS:
        result.tenth_totals[impl.name] = []
    for run in range(mode.runs):
        shift = run % len(IMPLEMENTATIONS)
        for impl in IMPLEMENTATIONS[shift:] + IMPLEMENTATIONS[:shift]:
            result.tenth_totals[impl.name].append(timed_run(impl, tenth).total)
    return result


def measure_first_chunk(mode: Mode) -> list[FirstChunk]:
    found = []
    for size in mode.first_chunk_sizes:
        records = source_records(size)
        found.append(
            FirstChunk(size, first_chunk_times(IMPLEMENTATIONS, records, mode.first_chunk_trials))
        )
    return found


def _course_version() -> str:
    """Where the measured ``course`` comes from, and its commit if it is a checkout."""
    package = Path(course.__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(package), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(package), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"`course` from {package}"
    return f"`course` at commit {commit}{' with uncommitted changes' if dirty else ''}"


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def replace_between_markers(text: str, body: str) -> str | None:
    """``text`` with what lies between the bench markers replaced, or ``None``."""
    start = text.find(START)
    end = text.find(END, start + len(START)) if start != -1 else -1
    if start == -1 or end == -1:
        return None
    return f"{text[: start + len(START)]}\n{body}\n{text[end:]}"


def _raw(results: Results) -> dict[str, object]:
    return {
        "mode": results.mode,
        "machine": results.machine,
        "date": results.date,
        "workloads": [
            {
                "name": w.name,
                "records": w.records,
                "samples": {
                    impl: [dataclasses.asdict(sample) for sample in samples]
                    for impl, samples in w.samples.items()
                },
                "peak_bytes": w.peak_bytes,
                "tenth_records": w.tenth_records,
                "tenth_totals": w.tenth_totals,
            }
            for w in results.workloads
        ],
        "first_chunk": [{"records": c.records, "times": c.times} for c in results.first_chunk],
    }


RESULTS_HEADER = """\
# Benchmark results

Generated by `python bench/run.py`; do not edit by hand. How it measures:

- **Implementations**, in one process, on the same inputs: `course`; the *baseline*, what
  a user would build instead (pydantic v2, strict, `extra="forbid"`, frozen models, a
  discriminated union on `type`, `copy.deepcopy` for the snapshot, the same ordering,
  terminal and usage-alias rules: `bench/baseline_pydantic.py`); the *msgspec peer*, the
  same contract with msgspec (frozen `Struct`s, `msgspec.convert` into the struct each
  record's `type` names, `forbid_unknown_fields`, `copy.deepcopy` for the snapshot:
  `bench/baseline_msgspec.py`); and the *floor*, an async generator yielding one tiny
  frozen object per record with no copy and no check (`bench/floor.py`). Before timing,
  `bench/equivalence.py` checks that both peers yield the same chunks and responses as
  `course` and fail the same broken records the same way.
- **Workloads** are generated in code (`bench/workloads.py`), deterministic, with usage
  aliases mixed camel and snake across responses.
- **End-to-end** is construction plus streaming every response: iterating every chunk,
  then `result()`, in CPU time (`time.process_time`). Records/s is all records (starts
  and ends included) over that time. Ratios compare medians from the same run. The
  input stays tracked by the garbage collector, as a user's fixture is (never
  `gc.freeze()`), and the collector's share of each figure (`gc.callbacks`) is given
  beside it. `bench/count.py` gives the same comparison in callgrind instruction counts,
  which the machine's load does not move.
- **Peak memory** is `tracemalloc`'s peak over construction and streaming, in a run of
  its own, above what was allocated before construction (the input is not counted).
- **Time to first chunk**: a fresh async source (an async generator that never
  suspends) and adapter per trial; the clock runs from `stream()` to the chunk of the
  first text delta, the source's second record. The floor yields an object for the
  start record too, so it is timed to its second object: every implementation has
  then pulled the same two records from the source.
- **Linearity**: end-to-end time on the workload vs the same shape with a tenth of the
  records (the target applies to `course`; the floor's and the baseline's ratios show how
  much of any growth is the machine's: caches and the garbage collector).

"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a tenth of the size; prints only")
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help=f"replace the README's text between {START} and {END} (full runs only)",
    )
    parser.add_argument(
        "--check-targets", action="store_true", help="exit 1 if any target is missed"
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="where a full run writes its tables (default: bench/RESULTS.md)",
    )
    parser.add_argument(
        "--workloads",
        nargs="+",
        choices=WORKLOAD_NAMES,
        default=list(WORKLOAD_NAMES),
        help="measure only these workloads",
    )
    args = parser.parse_args(argv)
    if args.quick and args.update_readme:
        parser.error("--update-readme takes a full run's figures, not --quick's")
    if sys.flags.dev_mode or sys.gettrace() is not None:
        _log("warning: dev mode or a tracer is on; figures will be slow")
    mode = QUICK if args.quick else FULL
    load = _load()
    if load > 0.5:
        _log(f"warning: load average {load:.2f} before starting; other work skews figures")

    problems = check_equivalence()
    if problems:
        _log("The baseline is not equivalent to course:\n  " + "\n  ".join(problems))
        return 2

    results = Results(
        mode=mode.name,
        runs=mode.runs,
        first_chunk_trials=mode.first_chunk_trials,
        machine=f"{machine()}; {_course_version()}; load average {load:.2f} at start",
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
    )
    for name in args.workloads:
        _log(f"measuring {name} ...")
        results.workloads.append(measure_workload(name, mode))
    _log("measuring time to first chunk ...")
    results.first_chunk = measure_first_chunk(mode)

    body = render(results)
    print(body)
    RAW.mkdir(exist_ok=True)
    raw_name = "quick.json" if args.quick else "full.json"
    (RAW / raw_name).write_text(json.dumps(_raw(results), indent=1), encoding="utf-8")
    if not args.quick:
        args.results.write_text(RESULTS_HEADER + body + "\n", encoding="utf-8")
        _log(f"wrote {args.results}")
    if args.update_readme:
        text = README.read_text(encoding="utf-8") if README.exists() else ""
        updated = replace_between_markers(text, body)
        if updated is None:
            _log(f"warning: README.md has no {START} ... {END} markers; left it unchanged")
        else:
            README.write_text(updated, encoding="utf-8")
            _log("updated README.md between the bench markers")
    missed = [target for target in targets(results) if not target.met]
    if missed:
        _log(f"{len(missed)} target(s) missed: " + "; ".join(t.label for t in missed))
    return 1 if args.check_targets and missed else 0


if __name__ == "__main__":
    sys.exit(main())

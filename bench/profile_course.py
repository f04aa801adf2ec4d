"""Profile ``course`` (or another implementation) on each workload with cProfile.

Usage::

    python bench/profile_course.py                      # every workload, full size
    python bench/profile_course.py long tools --scale 0.1 --top 25
    python bench/profile_course.py --impl baseline wide

Prints, per workload, the functions with the most own time (``tottime``), then the
most cumulative time. cProfile's overhead inflates small functions, so read it for
where the time goes, and confirm any change with ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib.util
import io
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("course") is None:
    sys.path.append(str(ROOT))  # this checkout's ``course``, unless one is importable

from impls import IMPLEMENTATIONS, Implementation  # noqa: E402
from measure import _consume  # noqa: E402
from workloads import WORKLOAD_NAMES, Workload, build  # noqa: E402


async def _run(impl: Implementation, workload: Workload, profiler: cProfile.Profile) -> None:
    fixture = workload.fixture()
    requests = [impl.request(f"req-{index}") for index in range(workload.response_count)]
    profiler.enable()
    adapter = impl.construct(fixture)
    await _consume(impl, adapter, requests)
    profiler.disable()


def profile(impl: Implementation, workload: Workload, top: int) -> str:
    profiler = cProfile.Profile()
    gc.collect()
    asyncio.run(_run(impl, workload, profiler), debug=False)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cProfile an implementation per workload")
    parser.add_argument("workloads", nargs="*", help=f"any of {', '.join(WORKLOAD_NAMES)}")
    parser.add_argument("--impl", default="course", choices=[i.name for i in IMPLEMENTATIONS])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    impl = next(i for i in IMPLEMENTATIONS if i.name == args.impl)
    unknown = set(args.workloads) - set(WORKLOAD_NAMES)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    for name in args.workloads or WORKLOAD_NAMES:
        workload = build(name, args.scale)
        print(f"=== {impl.name} on {name}: {workload.description} ===")
        print(profile(impl, workload, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

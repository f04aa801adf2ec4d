"""Figures to markdown: the results tables, the targets, and the machine they came from."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from measure import Sample

__all__ = [
    "FirstChunk",
    "Results",
    "Target",
    "WorkloadResult",
    "machine",
    "render",
    "targets",
]

PEER = "msgspec"
"""The peer the speed and memory targets are judged against (issue 23)."""
SPEED_TARGET = 1.2
"""End-to-end speed at least this multiple of the peer's, on every workload."""
CONSTRUCTION_TARGETS = ("wide", "tools")
"""Workloads whose construction must be at least as fast as each deepcopy peer's."""
DEEPCOPY_PEERS = ("baseline", "msgspec")
MEMORY_TARGET = 1.0
"""Peak memory at most this multiple of the peer's, on every workload."""
FIRST_CHUNK_TARGET = 2.5
"""Time to the first chunk at most this multiple of the floor's."""
FIRST_CHUNK_GROWTH = 1.5
"""The largest source's time to first chunk at most this multiple of the smallest's.

Flat means "does not grow with the records still to come"; 1.5 leaves room for noise
in a median of a few microseconds.
"""
LINEARITY_TARGET = 11.0
"""Ten times the records at most this many times the end-to-end time."""


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown CPU"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """Platform, CPU model, cores and Python, in one line."""
    try:
        pydantic = f", pydantic {version('pydantic')}"
    except PackageNotFoundError:
        pydantic = ""
    return (
        f"{platform.platform()}; {_cpu_model()}, {os.cpu_count()} cores; "
        f"{platform.python_implementation()} {platform.python_version()}{pydantic}"
    )


@dataclass
class WorkloadResult:
    name: str
    description: str
    records: int
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    peak_bytes: dict[str, int] = field(default_factory=dict)
    # End-to-end seconds on the same workload with a tenth of the records.
    tenth_records: int = 0
    tenth_totals: dict[str, list[float]] = field(default_factory=dict)

    def construct(self, impl: str) -> float:
        return statistics.median(s.construct for s in self.samples[impl])

    def stream(self, impl: str) -> float:
        return statistics.median(s.stream for s in self.samples[impl])

    def total(self, impl: str) -> float:
        return statistics.median(s.total for s in self.samples[impl])

    def collector_share(self, impl: str, phase: str = "total") -> float:
        """The collector's share of a phase (``construct``, ``stream`` or ``total``),
        from the medians of both."""
        samples = self.samples[impl]
        spent = statistics.median(
            getattr(s, "collector" if phase == "total" else f"{phase}_collector") for s in samples
        )
        whole = statistics.median(getattr(s, phase) for s in samples)
        return spent / whole if whole else 0.0

    def rate(self, impl: str) -> float:
        return self.records / self.total(impl)

    def linearity(self, impl: str = "course") -> float:
        """End-to-end time with all the records over the time with a tenth of them."""
        return self.total(impl) / statistics.median(self.tenth_totals[impl])


@dataclass
class FirstChunk:
    records: int
    times: dict[str, list[float]]

    def median(self, impl: str) -> float:
        return statistics.median(self.times[impl])


@dataclass
class Results:
    mode: str
    runs: int
    first_chunk_trials: int
    machine: str
    date: str
    workloads: list[WorkloadResult] = field(default_factory=list)
    first_chunk: list[FirstChunk] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    label: str
    measured: str
    met: bool
    note: str


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} us"


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x"


def _target(label: str, ratio: float, wanted: float, at_least: bool, gap: str) -> Target:
    met = ratio >= wanted if at_least else ratio <= wanted
    note = "" if met else f"needs {(wanted / ratio if at_least else ratio / wanted):.2f}x {gap}"
    return Target(label, _times(ratio), met, note)


def targets(results: Results) -> list[Target]:
    """Every target of issue 23, judged on this run's medians."""
    found: list[Target] = []
    for result in results.workloads:
        if PEER not in result.samples:
            continue
        ratio = result.rate("course") / result.rate(PEER)
        found.append(
            _target(
                f"{result.name}: end-to-end >= {SPEED_TARGET:g}x the {PEER} peer's speed",
                ratio,
                SPEED_TARGET,
                True,
                "faster",
            )
        )
    for result in results.workloads:
        if result.name not in CONSTRUCTION_TARGETS:
            continue
        for peer in DEEPCOPY_PEERS:
            if peer in result.samples:
                ratio = result.construct(peer) / result.construct("course")
                found.append(
                    _target(
                        f"{result.name}: construction at least the {peer}'s speed",
                        ratio,
                        1.0,
                        True,
                        "faster",
                    )
                )
    for result in results.workloads:
        if not result.peak_bytes.get(PEER):
            continue
        share = result.peak_bytes["course"] / result.peak_bytes[PEER]
        found.append(
            _target(
                f"{result.name}: peak memory <= {MEMORY_TARGET:g}x the {PEER} peer's",
                share,
                MEMORY_TARGET,
                False,
                "less",
            )
        )
    for chunk in results.first_chunk:
        ratio = chunk.median("course") / chunk.median("floor")
        found.append(
            _target(
                f"first chunk, {chunk.records:,}-record source: <= {FIRST_CHUNK_TARGET:g}x the "
                "floor's time",
                ratio,
                FIRST_CHUNK_TARGET,
                False,
                "faster",
            )
        )
    if len(results.first_chunk) >= 2:
        smallest, largest = results.first_chunk[0], results.first_chunk[-1]
        growth = largest.median("course") / smallest.median("course")
        found.append(
            Target(
                f"first chunk does not grow: {largest.records:,} vs {smallest.records:,} records "
                f"<= {FIRST_CHUNK_GROWTH:g}x",
                _times(growth),
                growth <= FIRST_CHUNK_GROWTH,
                "",
            )
        )
    for result in results.workloads:
        if not result.tenth_totals:
            continue
        ratio = result.linearity()
        found.append(
            Target(
                f"{result.name}: 10x the records <= {LINEARITY_TARGET:g}x the time",
                _times(ratio),
                ratio <= LINEARITY_TARGET,
                "",
            )
        )
    return found


def render(results: Results) -> str:
    """The whole results section as markdown (no trailing markers)."""
    impls = ("course", "baseline", "msgspec", "floor")
    lines = [
        f"Measured {results.date} on {results.machine}.",
        f"Mode: {results.mode}; medians of {results.runs} end-to-end runs per implementation "
        "(interleaved), CPU time, each after `gc.collect()`, collector enabled and the input "
        "tracked (never frozen); in parentheses, the collector's share of each figure; peak "
        "memory from a separate `tracemalloc` run; first chunk: median of "
        f"{results.first_chunk_trials} trials. Regenerate with `.venv/bin/python bench/run.py "
        "--update-readme` (see `bench/RESULTS.md` for method).",
        "",
        "| workload | implementation | construction | streaming | end-to-end | records/s "
        f"| speed vs {PEER} | speed vs floor | peak memory | memory vs {PEER} |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for result in results.workloads:
        peer_rate, floor_rate = result.rate(PEER), result.rate("floor")
        for impl in impls:
            peak = result.peak_bytes.get(impl)
            memory_share = (
                _times(peak / result.peak_bytes[PEER])
                if peak is not None and result.peak_bytes.get(PEER)
                else "-"
            )
            share = result.collector_share
            lines.append(
                f"| {result.name} | {impl} "
                f"| {_ms(result.construct(impl))} ({share(impl, 'construct'):.0%}) "
                f"| {_ms(result.stream(impl))} ({share(impl, 'stream'):.0%}) "
                f"| {_ms(result.total(impl))} ({share(impl):.0%}) "
                f"| {result.rate(impl):,.0f} | {_times(result.rate(impl) / peer_rate)} "
                f"| {_times(result.rate(impl) / floor_rate)} "
                f"| {'-' if peak is None else _mib(peak)} | {memory_share} |"
            )
    lines += ["", "Workloads (records include each response's start and end):", ""]
    lines += [f"- `{w.name}`: {w.description}; {w.records:,} records." for w in results.workloads]
    if results.first_chunk:
        lines += [
            "",
            "Time to the first chunk from an async source (from `stream()` to the first "
            "text delta's chunk, the source's second record; the floor is timed to its "
            "object for that same record; the adapter is built beforehand):",
            "",
            "| source records | course | baseline | msgspec | floor | course vs floor |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for chunk in results.first_chunk:
            lines.append(
                f"| {chunk.records:,} | {_us(chunk.median('course'))} "
                f"| {_us(chunk.median('baseline'))} | {_us(chunk.median('msgspec'))} "
                f"| {_us(chunk.median('floor'))} "
                f"| {_times(chunk.median('course') / chunk.median('floor'))} |"
            )
    linear = [w for w in results.workloads if w.tenth_totals]
    if linear:
        lines += [
            "",
            "Linearity (end-to-end medians; time with all the records over the time with a "
            "tenth of them, so 10.00x is exactly linear):",
            "",
            "| workload | records | course | course ratio | baseline ratio | floor ratio |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for result in linear:
            lines.append(
                f"| {result.name} | {result.tenth_records:,} -> {result.records:,} "
                f"| {_ms(statistics.median(result.tenth_totals['course']))} -> "
                f"{_ms(result.total('course'))} | {_times(result.linearity())} "
                f"| {_times(result.linearity('baseline'))} "
                f"| {_times(result.linearity('floor'))} |"
            )
    caveat = "" if results.mode == "full size" else " (set for the full size: indicative only here)"
    lines += ["", f"Targets{caveat}:", "", "| target | measured | met |", "| --- | ---: | --- |"]
    for target in targets(results):
        verdict = "yes" if target.met else f"**no** ({target.note})" if target.note else "**no**"
        lines.append(f"| {target.label} | {target.measured} | {verdict} |")
    return "\n".join(lines)

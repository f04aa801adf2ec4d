"""Before anything is timed: the baseline must produce what ``course`` produces.

On small versions of every workload, the baseline's chunks and responses must equal
``course``'s ``to_dict()`` output exactly, and the floor must yield one object per
record. On a table of broken responses, the baseline must fail with the same code,
at the same record, after the same chunks, as ``course`` does: the same ordering,
terminal and usage-alias rules, so the comparison is between equals.
"""

from __future__ import annotations

import asyncio
from typing import Any

from baseline_pydantic import BaselineAdapter, BaselineError, chunk_dict, response_dict
from floor import FloorAdapter
from workloads import WORKLOAD_NAMES, build, make_source

from course import CourseModelRequest, FixtureProviderAdapter, FixtureProviderError

__all__ = ["BROKEN", "BROKEN_V2", "check_equivalence"]

_START = {"type": "response_start", "responseId": "r", "role": "assistant"}
_TEXT = {"type": "text_delta", "text": "hi"}
_TOOL = {"type": "tool_call", "id": "c", "name": "add", "arguments": {"a": 1}}
_END_STOP = {
    "type": "response_end",
    "responseId": "r",
    "stopReason": "stop",
    "usage": {"inputTokens": 1, "output_tokens": 2},
}
_END_TOOL = {**_END_STOP, "stopReason": "tool_call"}


def _end(**changes: object) -> dict[str, object]:
    return {**_END_STOP, **changes}


BROKEN: dict[str, list[object]] = {
    "text before start": [_TEXT, _START, _END_STOP],
    "end before start": [_END_STOP],
    "second start": [_START, _TEXT, _START, _END_STOP],
    "second start, malformed": [_START, {"type": "response_start"}],
    "unknown type": [_START, {"type": "image_delta", "data": 1}],
    "unknown type before start": [{"type": "nope"}],
    "not an object": [_START, 5],
    "no type": [_START, {"text": "x"}],
    "type not a string": [_START, {"type": 3}],
    "unknown key": [_START, {"type": "text_delta", "text": "x", "extra": 1}],
    "text not a string": [_START, {"type": "text_delta", "text": None}],
    "empty response id": [{"type": "response_start", "responseId": "", "role": "assistant"}],
    "wrong role": [{"type": "response_start", "responseId": "r", "role": "user"}],
    "arguments null": [_START, {**_TOOL, "arguments": None}],
    "empty tool name": [_START, {**_TOOL, "name": ""}],
    "duplicate tool id": [_START, _TOOL, _TOOL, _END_TOOL],
    "usage both aliases": [
        _START,
        _end(usage={"inputTokens": 1, "input_tokens": 1, "outputTokens": 2}),
    ],
    "usage bool count": [_START, _end(usage={"inputTokens": True, "outputTokens": 2})],
    "usage negative": [_START, _end(usage={"inputTokens": -1, "outputTokens": 2})],
    "usage too large": [_START, _end(usage={"inputTokens": 2**53, "outputTokens": 2})],
    "usage unknown key": [_START, _end(usage={"inputTokens": 1, "outputTokens": 2, "x": 0})],
    "usage missing count": [_START, _end(usage={"inputTokens": 1})],
    "usage missing": [_START, {k: v for k, v in _END_STOP.items() if k != "usage"}],
    "end id not a string": [_START, _end(responseId=7)],
    "end id mismatch": [_START, _end(responseId="other")],
    "end id mismatch and stop mismatch": [_START, _TOOL, _end(responseId="other")],
    "bad stop reason": [_START, _end(stopReason="length")],
    "stop with tool calls": [_START, _TOOL, _END_STOP],
    "tool_call without tool calls": [_START, _TEXT, _END_TOOL],
    "transport error": [_START, _TEXT, {"type": "transport_error", "message": "boom"}],
    "transport error, null code": [
        _START,
        {"type": "transport_error", "message": "boom", "code": None},
    ],
    "text after terminal": [_START, _END_STOP, _TEXT],
    "end after terminal": [_START, _END_STOP, _END_STOP],
    "non-object after terminal": [_START, _END_STOP, 5],
    "start after terminal": [_START, _END_STOP, _START],
    "missing terminal": [_START, _TEXT],
    "empty response": [],
}
"""Broken responses, each judged by both implementations."""

_THINK = {"type": "thinking_delta", "text": "hm"}
_SIGN = {"type": "thinking_signature", "signature": "s"}
_END_LENGTH = _end(stopReason="length")

BROKEN_V2: dict[str, list[object]] = {
    "signature without a delta": [_START, _SIGN, _END_LENGTH],
    "signature after text": [_START, _THINK, _TEXT, _SIGN, _END_LENGTH],
    "second signature": [_START, _THINK, _SIGN, _SIGN, _END_LENGTH],
    "empty signature": [_START, _THINK, {**_SIGN, "signature": ""}],
    "thinking before start": [_THINK, _START, _END_LENGTH],
    "cache above input": [
        _START,
        _end(usage={"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 2}),
    ],
    "reasoning above output": [
        _START,
        _end(usage={"inputTokens": 1, "outputTokens": 2, "reasoning_tokens": 3}),
    ],
    "cache both aliases": [
        _START,
        _end(
            usage={
                "inputTokens": 9,
                "outputTokens": 2,
                "cacheWriteTokens": 1,
                "cache_write_tokens": 1,
            }
        ),
    ],
    "stop with tool calls": [_START, _TOOL, _END_STOP],
    "bad stop reason": [_START, _end(stopReason="toolCall")],
}
"""Broken version-2 responses (as far as the thinking workload goes), judged by both."""


async def _course(fixture: dict[str, object], count: int) -> list[tuple[list[Any], Any]]:
    adapter = FixtureProviderAdapter(fixture)
    out: list[tuple[list[Any], Any]] = []
    for index in range(count):
        stream = adapter.stream(CourseModelRequest(f"req-{index}"))
        chunks: list[Any] = []
        outcome: Any
        try:
            async for chunk in stream:
                chunks.append(chunk.to_dict())
            outcome = (await stream.result()).to_dict()
        except FixtureProviderError as error:
            outcome = (error.code.value, error.record_index)
        out.append((chunks, outcome))
    return out


async def _baseline(fixture: dict[str, object], count: int) -> list[tuple[list[Any], Any]]:
    adapter = BaselineAdapter(fixture)
    out: list[tuple[list[Any], Any]] = []
    for index in range(count):
        stream = adapter.stream(f"req-{index}")
        chunks: list[Any] = []
        outcome: Any
        try:
            async for chunk in stream:
                chunks.append(chunk_dict(chunk))
            outcome = response_dict(await stream.result())
        except BaselineError as error:
            outcome = (error.code, error.record_index)
        out.append((chunks, outcome))
    return out


async def _floor(fixture: dict[str, object], count: int) -> int:
    adapter = FloorAdapter(fixture)
    items = 0
    for _ in range(count):
        async for _chunk in adapter.stream():
            items += 1
    return items


def _same_failure(course: Any, baseline: Any) -> bool:
    if not isinstance(course, tuple):
        return bool(course == baseline)
    code, record_index = course
    # ``course`` gives no record index for a missing terminal; the baseline does.
    return bool(
        isinstance(baseline, tuple)
        and baseline[0] == code
        and (record_index is None or baseline[1] == record_index)
    )


def check_equivalence(scale: float = 0.002) -> list[str]:
    """Every difference found (an empty list means equivalent)."""
    problems: list[str] = []
    for name in WORKLOAD_NAMES:
        workload = build(name, scale)
        count = workload.response_count
        course = asyncio.run(_course(workload.fixture(), count))
        baseline = asyncio.run(_baseline(workload.fixture(), count))
        if course != baseline:
            problems.append(f"{name}: the baseline's chunks or responses differ from course's")
        floor_items = asyncio.run(_floor(workload.fixture(), count))
        if floor_items != workload.record_count:
            problems.append(f"{name}: the floor yielded {floor_items} objects")
    cases = [(1, label, records) for label, records in BROKEN.items()]
    cases += [(2, label, records) for label, records in BROKEN_V2.items()]
    for version, label, records in cases:
        for from_source in (False, True):
            for_course: object = make_source(records) if from_source else records  # type: ignore[arg-type]
            for_baseline: object = make_source(records) if from_source else records  # type: ignore[arg-type]
            ((course_chunks, course_outcome),) = asyncio.run(
                _course({"schemaVersion": version, "responses": [{"records": for_course}]}, 1)
            )
            ((baseline_chunks, baseline_outcome),) = asyncio.run(
                _baseline({"schemaVersion": version, "responses": [{"records": for_baseline}]}, 1)
            )
            where = f"{label} (v{version}, {'source' if from_source else 'list'})"
            if course_chunks != baseline_chunks:
                problems.append(f"{where}: different chunks before the failure")
            if not _same_failure(course_outcome, baseline_outcome):
                problems.append(
                    f"{where}: course {course_outcome!r}, baseline {baseline_outcome!r}"
                )
    return problems

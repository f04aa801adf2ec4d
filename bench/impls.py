"""The four implementations under one small interface, so one harness times them all.

Each gives: ``construct(fixture)`` (the adapter), ``request(id)`` (what ``open``
takes, built outside the timed region), ``open(adapter, request)`` (the next
response's stream: an async iterator), ``finish(stream)`` (its terminal result, or
``None`` for the floor, which has none) and ``close(stream)`` (stop it early).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from baseline_msgspec import MsgspecAdapter, MsgspecStream
from baseline_pydantic import BaselineAdapter, BaselineStream
from floor import FloorAdapter

from course import CourseModelRequest, CourseModelStream, FixtureProviderAdapter

__all__ = ["BASELINE", "COURSE", "FLOOR", "IMPLEMENTATIONS", "MSGSPEC", "Implementation"]


@dataclass(frozen=True, slots=True)
class Implementation:
    name: str
    construct: Callable[[dict[str, object]], Any]
    request: Callable[[str], Any]
    open: Callable[[Any, Any], AsyncIterator[Any]]
    finish: Callable[[Any], Awaitable[object]] | None
    close: Callable[[Any], Awaitable[None]]
    # The floor yields an object for ``response_start`` too; the others start with the
    # first text delta's chunk. Time to first chunk waits for that same record.
    yields_start: bool = False


def _course_open(adapter: FixtureProviderAdapter, request: CourseModelRequest) -> CourseModelStream:
    return adapter.stream(request)


async def _course_finish(stream: CourseModelStream) -> object:
    return await stream.result()


async def _course_close(stream: CourseModelStream) -> None:
    await stream.aclose()


def _baseline_open(adapter: BaselineAdapter, request: str) -> BaselineStream:
    return adapter.stream(request)


async def _baseline_finish(stream: BaselineStream) -> object:
    return await stream.result()


async def _baseline_close(stream: BaselineStream) -> None:
    await stream.aclose()


def _msgspec_open(adapter: MsgspecAdapter, request: str) -> MsgspecStream:
    return adapter.stream(request)


async def _msgspec_finish(stream: MsgspecStream) -> object:
    return await stream.result()


async def _msgspec_close(stream: MsgspecStream) -> None:
    await stream.aclose()


def _floor_open(adapter: FloorAdapter, request: object) -> AsyncIterator[object]:
    return adapter.stream()


async def _floor_close(stream: Any) -> None:
    await stream.aclose()


def _identity(request_id: str) -> str:
    return request_id


COURSE = Implementation(
    "course",
    FixtureProviderAdapter,
    CourseModelRequest,
    _course_open,
    _course_finish,
    _course_close,
)
BASELINE = Implementation(
    "baseline",
    BaselineAdapter,
    _identity,
    _baseline_open,
    _baseline_finish,
    _baseline_close,
)
MSGSPEC = Implementation(
    "msgspec",
    MsgspecAdapter,
    _identity,
    _msgspec_open,
    _msgspec_finish,
    _msgspec_close,
)
FLOOR = Implementation(
    "floor", FloorAdapter, _identity, _floor_open, None, _floor_close, yields_start=True
)

IMPLEMENTATIONS = (COURSE, BASELINE, MSGSPEC, FLOOR)

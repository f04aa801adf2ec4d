"""The floor: the least work an adapter could do, for reference only.

An async generator per response yields one tiny frozen object per record, with no
copy and no check of any kind: no snapshot at construction, no parsing, no order
rules, no response. Nothing real can be faster while still handing each record to
the consumer as its own immutable value, so every figure is also read as a ratio to
this one.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["FloorAdapter", "FloorChunk"]


@dataclass(frozen=True, slots=True)
class FloorChunk:
    """The tiny frozen value yielded for each record (the record itself, unchecked)."""

    record: object


async def _from_list(records: list[object]) -> AsyncIterator[FloorChunk]:
    for record in records:
        yield FloorChunk(record)


async def _from_source(records: AsyncIterable[object]) -> AsyncIterator[FloorChunk]:
    async for record in records:
        yield FloorChunk(record)


class FloorAdapter:
    """Keeps the caller's response list as it is; ``stream()`` walks the next one."""

    __slots__ = ("_next", "_responses")

    def __init__(self, fixture: dict[str, object]) -> None:
        self._responses: list[dict[str, object]] = fixture["responses"]  # type: ignore[assignment]
        self._next = 0

    def stream(self) -> AsyncIterator[FloorChunk]:
        records = self._responses[self._next]["records"]
        self._next += 1
        if type(records) is list:
            return _from_list(records)
        return _from_source(records)  # type: ignore[arg-type]

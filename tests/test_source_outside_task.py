"""An async source's step needs an asyncio *task*, not only a running loop.

A stream driven by hand from an event-loop callback (the loop runs, no task does) gets
the same ``TypeError`` naming asyncio as under trio, before the source is touched, and
stays as it was: a task can still stream it to its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from course import CourseModelRequest, FixtureProviderAdapter

from .helpers import end, start, text


def test_a_source_step_from_a_loop_callback_is_a_type_error_naming_asyncio() -> None:
    pulls: list[int] = []

    async def source() -> AsyncIterator[object]:
        for record in (start("r"), text("hi"), end("r")):
            pulls.append(1)
            yield record

    async def main() -> None:
        stream = FixtureProviderAdapter(
            {"schemaVersion": 1, "responses": [{"records": source()}]}
        ).stream(CourseModelRequest("req-1"))
        outcome: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

        def from_a_callback() -> None:  # the loop runs; no task does
            step = stream.__anext__()
            try:
                step.send(None)
            except BaseException as exc:
                outcome.set_result(exc)
            else:  # pragma: no cover  (the failure this test exists for)
                step.close()
                outcome.set_result(None)

        asyncio.get_running_loop().call_soon(from_a_callback)
        error = await outcome
        assert type(error) is TypeError
        assert "asyncio" in str(error)
        assert pulls == []  # the source was never touched
        assert not stream._settled
        assert [chunk.to_dict()["text"] async for chunk in stream] == ["hi"]
        assert (await stream.result()).response_id == "r"

    asyncio.run(main())


@pytest.mark.parametrize("how", ["anext", "result"])
def test_a_source_step_outside_any_loop_is_a_type_error_naming_asyncio(how: str) -> None:
    async def source() -> AsyncIterator[object]:
        yield start("r")  # pragma: no cover  (never pulled)

    stream = FixtureProviderAdapter(
        {"schemaVersion": 1, "responses": [{"records": source()}]}
    ).stream(CourseModelRequest("req-1"))
    step = stream.__anext__() if how == "anext" else stream.result()
    with pytest.raises(TypeError, match="asyncio"):
        step.send(None)
    assert not stream._settled

"""Whatever interrupts a stream, and whenever, it settles once and both paths agree.

Hypothesis draws a response (array records or a source whose steps complete at once,
wait a loop turn, or wait on an event), who reads it (a consumer, ``result()`` in a
second task, or both), and what happens at a random loop turn (an abort with any
reason, ``aclose()`` from another task, a cancelled consumer, a cancelled ``result()``
task, or nothing). Whatever was drawn:

- every task finishes within a bounded number of loop turns;
- the consumer got a prefix of the response's chunks, in order;
- the stream ends complete, or as ``PROVIDER_ABORTED`` (the records are valid), and
  iteration and ``result()`` report the same error object;
- nothing interrupted means complete;
- the source is claimed at most once, cleaned up at most once, and cleaned up exactly
  once if it was stopped early;
- no task is left behind and no task keeps a cancellation request it did not make.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

from hypothesis import given
from hypothesis import strategies as st

from course import (
    AbortController,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import end, fixture, run, start, text

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")
TURN_LIMIT = 200

Step = Literal["inline", "turn", "event"]
Interruption = Literal["abort", "aclose", "cancel-consumer", "cancel-result", "none"]


@dataclass
class Source:
    """A class source whose steps behave as drawn; counts what is asked of it."""

    records: list[object]
    steps: list[Step]
    aiter_calls: int = 0
    pulls: int = 0
    closes: int = 0
    exhausted: bool = False
    events: list[asyncio.Event] = field(default_factory=list)

    def __aiter__(self) -> Source:
        self.aiter_calls += 1
        return self

    async def __anext__(self) -> object:
        index = self.pulls
        self.pulls += 1
        step = self.steps[index % len(self.steps)]
        if step == "turn":
            await asyncio.sleep(0)
        elif step == "event":
            event = asyncio.Event()
            asyncio.get_running_loop().call_soon(event.set)
            await event.wait()
        if index >= len(self.records):
            self.exhausted = True
            raise StopAsyncIteration
        return self.records[index]

    async def aclose(self) -> None:
        self.closes += 1


@dataclass(frozen=True)
class Scenario:
    texts: int
    steps: list[Step] | None  # None: array records
    consumer: bool
    result_task: bool
    interruption: Interruption
    at_turn: int
    body_awaits: bool


scenarios = st.builds(
    Scenario,
    texts=st.integers(0, 5),
    steps=st.one_of(
        st.none(), st.lists(st.sampled_from(["inline", "turn", "event"]), min_size=1, max_size=4)
    ),
    consumer=st.booleans(),
    result_task=st.booleans(),
    interruption=st.sampled_from(["abort", "aclose", "cancel-consumer", "cancel-result", "none"]),
    at_turn=st.integers(0, 8),
    body_awaits=st.booleans(),
).filter(lambda s: s.consumer or s.result_task)

reasons = st.one_of(st.none(), st.text(max_size=10), st.integers(), st.builds(ValueError))


async def consume(
    stream: CourseModelStream, into: list[CourseModelChunk], awaits: bool, requests: list[int]
) -> None:
    try:
        async for chunk in stream:
            into.append(chunk)
            if awaits:
                await asyncio.sleep(0)
    finally:
        task = asyncio.current_task()
        assert task is not None
        requests.append(task.cancelling())  # cancellation requests left on this task


async def play(scenario: Scenario, reason: object) -> None:
    records: list[object] = [start(), *(text(str(n)) for n in range(scenario.texts)), end()]
    expected = [text_["text"] for text_ in records[1:-1]]  # type: ignore[index]
    source = None if scenario.steps is None else Source(records, scenario.steps)
    controller = AbortController()
    adapter = FixtureProviderAdapter(fixture(records if source is None else source))
    stream = adapter.stream(REQUEST, controller.signal)

    chunks: list[CourseModelChunk] = []
    requests: list[int] = []
    tasks: dict[str, asyncio.Task[object]] = {}
    if scenario.consumer:
        tasks["consumer"] = asyncio.create_task(
            consume(stream, chunks, scenario.body_awaits, requests)
        )
    if scenario.result_task:
        tasks["result"] = asyncio.create_task(stream.result())
    interrupted = False
    for turn in range(TURN_LIMIT):
        if turn == scenario.at_turn and not all(task.done() for task in tasks.values()):
            interrupted = scenario.interruption != "none"
            if scenario.interruption == "abort":
                controller.abort(reason)
            elif scenario.interruption == "aclose":
                tasks["closer"] = asyncio.create_task(stream.aclose())
            elif scenario.interruption == "cancel-consumer" and "consumer" in tasks:
                tasks["consumer"].cancel()
            elif scenario.interruption == "cancel-result" and "result" in tasks:
                tasks["result"].cancel()
            else:
                interrupted = False
        if all(task.done() for task in tasks.values()):
            break
        await asyncio.sleep(0)
    assert all(task.done() for task in tasks.values()), "a task was still pending"

    # The outcome, as result() reports it now; iteration agrees with it.
    try:
        response = await stream.result()
        error = None
    except FixtureProviderError as raised:
        response, error = None, raised
    assert stream._settled
    if error is None:
        assert response is not None and len(response.message.content) == scenario.texts
    else:
        assert error.code is Code.PROVIDER_ABORTED
        assert interrupted, "aborted though nothing interrupted it"
    for name, task in tasks.items():
        if task.cancelled():
            assert name == scenario.interruption.removeprefix("cancel-")
        elif name != "closer" and task.exception() is not None:
            assert task.exception() is error
    assert [chunk.to_dict()["text"] for chunk in chunks] == expected[: len(chunks)]
    if "consumer" in tasks:
        # Only our own cancel may be left on the consumer's task; the stream's
        # interruptions of its steps are taken back.
        cancelled = tasks["consumer"].cancelled()
        assert requests in (([], [1]) if cancelled else ([0],))  # [] : cancelled unstarted

    await stream.aclose()
    if source is not None:
        assert source.aiter_calls <= 1 and source.closes <= 1
        stopped_early = source.aiter_calls == 1 and not source.exhausted
        assert source.closes == (1 if stopped_early else 0)
    current = asyncio.current_task()
    assert current is not None and current.cancelling() == 0
    assert asyncio.all_tasks() == {current}


@given(scenario=scenarios, reason=reasons)
def test_any_interruption_at_any_turn_settles_once_and_both_paths_agree(
    scenario: Scenario, reason: object
) -> None:
    run(play(scenario, reason))

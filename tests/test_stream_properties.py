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
import itertools
import math
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
from .virtual_clock import clock, run_virtual

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


# -- schema version 2: delays, interrupted ------------------------------------------------------
# A delay is a step like a source's: whatever interrupts it settles the stream at once. On
# a virtual clock (``tests/virtual_clock.py``) the delays cost nothing and time is exact:
# the interruption comes at a drawn virtual time (during a delay, between two, or after
# the end), the stream must then settle without the clock moving on, and a stream left
# alone completes exactly when its delays add up to.

Delay = st.one_of(st.none(), st.sampled_from([0, 0.5, 1, 3600]), st.floats(0, 10))


@dataclass(frozen=True)
class DelayedScenario:
    delays: list[float | int | None]  # one per record: start, texts, end (None: no delay)
    steps: list[Step] | None  # None: array records
    consumer: bool
    result_task: bool
    interruption: Interruption
    at_time: float


delayed_scenarios = st.builds(
    DelayedScenario,
    delays=st.integers(0, 4).flatmap(
        lambda texts: st.lists(Delay, min_size=texts + 2, max_size=texts + 2)
    ),
    steps=st.one_of(
        st.none(), st.lists(st.sampled_from(["inline", "turn", "event"]), min_size=1, max_size=3)
    ),
    consumer=st.booleans(),
    result_task=st.booleans(),
    interruption=st.sampled_from(["abort", "aclose", "cancel-consumer", "cancel-result", "none"]),
    at_time=st.one_of(st.floats(0, 4000), st.sampled_from([0.0, 0.5, 1.0, 3600.0])),
).filter(lambda s: s.consumer or s.result_task)


def _delayed_records(delays: list[float | int | None]) -> list[object]:
    records: list[dict[str, object]] = [start(), *(text(str(n)) for n in range(len(delays) - 2))]
    records.append(end())
    for record, delay in zip(records, delays, strict=True):
        if delay is not None:
            record["delay"] = delay
    return list(records)


async def play_delayed(scenario: DelayedScenario, reason: object) -> None:
    loop = clock()
    records = _delayed_records(scenario.delays)
    total = sum(float(d) for d in scenario.delays if d is not None)
    source = None if scenario.steps is None else Source(records, scenario.steps)
    controller = AbortController()
    data = {"schemaVersion": 2, "responses": [{"records": records if source is None else source}]}
    stream = FixtureProviderAdapter(data).stream(REQUEST, controller.signal)
    chunks: list[CourseModelChunk] = []
    requests: list[int] = []
    tasks: dict[str, asyncio.Task[object]] = {}
    if scenario.consumer:
        tasks["consumer"] = asyncio.create_task(consume(stream, chunks, False, requests))
    if scenario.result_task:
        tasks["result"] = asyncio.create_task(stream.result())

    await asyncio.wait(tasks.values(), timeout=scenario.at_time)
    interrupted_at = loop.time()
    interrupted = scenario.interruption != "none" and not stream._settled
    if interrupted:
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
    # An abort, aclose(), or cancelling the one task that reads: the stream ends now.
    # At the very instant a delay ends, whether the record was judged first is open.
    ends = itertools.accumulate(float(d) for d in scenario.delays if d is not None)
    tie = any(math.isclose(interrupted_at, t, abs_tol=1e-9) for t in ends)
    only_reader = {"cancel-consumer": "result", "cancel-result": "consumer"}
    aborting = (
        interrupted
        and not tie
        and (
            scenario.interruption in ("abort", "aclose")
            or only_reader.get(scenario.interruption, "") not in tasks
        )
    )
    if aborting:
        # At once: a bounded number of loop turns, and the clock does not move.
        for _ in range(TURN_LIMIT):
            if all(task.done() for task in tasks.values()):
                break
            await asyncio.sleep(0)
        assert all(task.done() for task in tasks.values()), "an abort did not settle at once"
        assert loop.time() == interrupted_at, "the stream waited on after the abort"
    await asyncio.wait(tasks.values(), timeout=total + 10)
    assert all(task.done() for task in tasks.values()), "a task was still pending"

    try:
        response = await stream.result()
        error = None
    except FixtureProviderError as raised:
        response, error = None, raised
    if error is None:
        assert response is not None and len(response.message.content) == len(records) - 2
        assert not aborting, "an abort before the end, yet a response"
        assert math.isclose(loop.time(), total, abs_tol=1e-6), (
            "a stream left to finish settles when its delays add up"
        )
    else:
        assert error.code is Code.PROVIDER_ABORTED
        assert interrupted, "aborted though nothing interrupted it"
        assert interrupted_at <= total + 1e-6
    for name, task in tasks.items():
        if task.cancelled():
            assert name == scenario.interruption.removeprefix("cancel-")
        elif name != "closer" and task.exception() is not None:
            assert task.exception() is error
    expected = [str(n) for n in range(len(records) - 2)]
    assert [chunk.to_dict()["text"] for chunk in chunks] == expected[: len(chunks)]
    await stream.aclose()
    if source is not None:
        assert source.aiter_calls <= 1 and source.closes <= 1
        stopped_early = source.aiter_calls == 1 and not source.exhausted
        assert source.closes == (1 if stopped_early else 0)
    current = asyncio.current_task()
    assert current is not None and current.cancelling() == 0
    assert asyncio.all_tasks() == {current}


@given(scenario=delayed_scenarios, reason=reasons)
def test_any_interruption_at_any_virtual_time_settles_a_delayed_stream_at_once(
    scenario: DelayedScenario, reason: object
) -> None:
    run_virtual(play_delayed(scenario, reason))

"""Checkpoint 05, the focused test: the fixture provider adapter, end to end.

Run it alone, offline, with no credentials::

    .venv/bin/python -m pytest tests/test_05_provider_adapter.py

Read it top to bottom: first the round trip of the checked-in fixture
(``course/fixtures/provider-tool-roundtrip.json``) under a network guard, then one
section per line of the checkpoint's "Run the focused test" paragraph (output order,
tool ids, usage aliases, immutable snapshots, dangerous keys, inherited fields,
unknown and malformed events, error normalization, terminal cardinality, id and
stop-reason rules, finite exhaustion, cancellation, async-source cleanup, iterator
ownership), then the failure experiment and the schema version.

Every failure is checked the same way (``assert_failed``): its code, where it
happened (``response_index``, ``record_index``), that iteration delivered every
chunk produced before it, and that ``result()`` raises the very same error.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import json
import socket
import urllib.request
from collections import UserDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import NoReturn

import pytest

from course import (
    AbortController,
    CourseAssistantMessage,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelStream,
    CourseModelUsage,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    load_fixture,
    thaw,
)
from tests.helpers import (
    ROUNDTRIP_PATH,
    Outcome,
    collect,
    end,
    fixture,
    run,
    source_of,
    start,
    stream_one,
    text,
    tool,
)

Code = FixtureProviderErrorCode

ADD_CALL = CourseToolCallChunk("call-add-001", "add", {"left": 20, "right": 22}, 0)
SUM_TEXT = CourseTextDeltaChunk("The sum is 42.", 0)


# -- helpers of this module -----------------------------------------------------------


def assert_failed(
    outcome: Outcome,
    code: FixtureProviderErrorCode,
    *,
    response_index: int | None,
    record_index: int | None,
    chunks: Sequence[CourseModelChunk] = (),
) -> FixtureProviderError:
    """Both paths failed with ``code`` at that place, after delivering ``chunks``."""
    error = outcome.error
    assert error is not None, f"expected {code}, the stream completed: {outcome.response}"
    assert error.code is code, repr(error)
    assert outcome.result_error is error, "result() must raise the same error as iteration"
    assert outcome.response is None
    assert (error.response_index, error.record_index) == (response_index, record_index)
    assert outcome.chunks == list(chunks)
    return error


def completed(outcome: Outcome) -> CourseModelResponse:
    """The response of a stream that must have completed."""
    assert outcome.error is None, repr(outcome.error)
    assert outcome.result_error is None, repr(outcome.result_error)
    assert outcome.response is not None
    return outcome.response


def responses_of(data: object) -> list[object]:
    """The response list of a plain fixture (for editing copies)."""
    assert isinstance(data, dict)
    responses = data["responses"]
    assert isinstance(responses, list)
    return responses


def records_of(data: object, response_index: int) -> list[object]:
    """The record list of one response of a plain fixture (for editing copies)."""
    response = responses_of(data)[response_index]
    assert isinstance(response, dict)
    records = response["records"]
    assert isinstance(records, list)
    return records


def construction_error(data: object) -> FixtureProviderError:
    """The error the constructor raises for ``data`` (which must be invalid)."""
    with pytest.raises(FixtureProviderError) as caught:
        FixtureProviderAdapter(data)
    return caught.value


class RecordingSource:
    """A hand-written async record source that records how the adapter treats it.

    It yields ``records`` in order. With ``hold_at=n`` it blocks before giving record
    ``n`` (or before ending, if ``n == len(records)``) until ``release()``; the
    ``waiting`` event tells a test that it got there.
    """

    def __init__(
        self, records: Sequence[object], *, hold_at: int | None = None, fail_aclose: bool = False
    ) -> None:
        self.records = list(records)
        self.hold_at = hold_at
        self.fail_aclose = fail_aclose
        self.position = 0
        self.aiter_calls = 0
        self.aclose_calls = 0
        self.waiting = asyncio.Event()
        self._gate = asyncio.Event()

    def release(self) -> None:
        self._gate.set()

    def __aiter__(self) -> RecordingSource:
        self.aiter_calls += 1
        return self

    async def __anext__(self) -> object:
        if self.position == self.hold_at:
            self.waiting.set()
            await self._gate.wait()
        if self.position >= len(self.records):
            raise StopAsyncIteration
        record = self.records[self.position]
        self.position += 1
        return record

    async def aclose(self) -> None:
        self.aclose_calls += 1
        if self.fail_aclose:
            raise RuntimeError("cleanup failed")


# -- the network guard ----------------------------------------------------------------


class NetworkBlocked(RuntimeError):
    """Raised by every network entry point while ``network_guard()`` is active."""


NETWORK_ENTRY_POINTS: tuple[tuple[ModuleType, str], ...] = (
    (socket, "socket"),
    (socket, "create_connection"),
    (asyncio, "open_connection"),
    (urllib.request, "urlopen"),
)


@contextlib.contextmanager
def network_guard() -> Iterator[list[str]]:
    """Replace every network entry point by a function that raises, then restore them.

    Yields the list of attempted calls, so an attempt whose exception something
    swallowed still fails the test. Enter it inside the running event loop: the loop
    creates its own self-pipe socket when it starts, before any code under test runs.
    """
    attempts: list[str] = []

    def refuse(name: str) -> Callable[..., NoReturn]:
        def blocked(*args: object, **kwargs: object) -> NoReturn:
            attempts.append(name)
            raise NetworkBlocked(f"{name}() was called during an offline test")

        return blocked

    originals = [(module, name, getattr(module, name)) for module, name in NETWORK_ENTRY_POINTS]
    for module, name, _ in originals:
        setattr(module, name, refuse(f"{module.__name__}.{name}"))
    try:
        yield attempts
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


# -- the round trip of the checked-in fixture -----------------------------------------


async def roundtrip_offline() -> tuple[list[Outcome], list[int], list[str]]:
    """Load the fixture and make three calls, all under the network guard."""
    with network_guard() as attempts:
        adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
        counts = [adapter.call_count, adapter.pending]
        outcomes = []
        for request_id in ("req-tool", "req-text", "req-extra"):
            stream = adapter.stream(CourseModelRequest(request_id))
            counts += [adapter.call_count, adapter.pending]
            outcomes.append(await collect(stream))
    return outcomes, counts, attempts


def test_roundtrip_runs_with_every_network_entry_point_replaced() -> None:
    outcomes, _, attempts = run(roundtrip_offline())
    assert attempts == []
    assert [o.response.stop_reason if o.response else o.code for o in outcomes] == [
        "toolCall",
        "stop",
        "PROVIDER_EXHAUSTED",
    ]


def test_network_guard_refuses_every_entry_point_and_restores_them() -> None:
    originals = [getattr(module, name) for module, name in NETWORK_ENTRY_POINTS]

    async def attempt_everything() -> list[str]:
        # 127.0.0.1:9 fails fast even if the guard were broken: the test fails, never hangs.
        with network_guard() as attempts:
            with pytest.raises(NetworkBlocked):
                socket.socket()
            with pytest.raises(NetworkBlocked):
                socket.create_connection(("127.0.0.1", 9))
            with pytest.raises(NetworkBlocked):
                await asyncio.open_connection("127.0.0.1", 9)
            with pytest.raises(NetworkBlocked):
                urllib.request.urlopen("http://127.0.0.1:9/")  # noqa: ASYNC210  (refused at once)
        return attempts

    assert run(attempt_everything()) == [
        "socket.socket",
        "socket.create_connection",
        "asyncio.open_connection",
        "urllib.request.urlopen",
    ]
    assert [getattr(module, name) for module, name in NETWORK_ENTRY_POINTS] == originals


def test_network_guard_restores_entry_points_when_the_body_raises() -> None:
    original = socket.socket
    with pytest.raises(ZeroDivisionError), network_guard():
        assert socket.socket is not original
        _ = 1 / 0
    assert socket.socket is original


def test_roundtrip_first_call_yields_the_add_tool_call_and_settles_as_tool_call() -> None:
    outcomes, _, _ = run(roundtrip_offline())
    first = outcomes[0]
    assert first.chunks == [ADD_CALL]
    chunk = first.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert (chunk.type, chunk.id, chunk.name) == ("toolCall", "call-add-001", "add")
    assert thaw(chunk.arguments) == {"left": 20, "right": 22}
    response = completed(first)
    assert response == CourseModelResponse(
        request_id="req-tool",
        response_id="response-tool-001",
        message=CourseAssistantMessage(
            "message-response-tool-001",
            (CourseToolCallBlock("call-add-001", "add", {"left": 20, "right": 22}),),
        ),
        stop_reason="toolCall",
        usage=CourseModelUsage(input_tokens=12, output_tokens=8),
    )
    assert response.message.role == "assistant"


def test_roundtrip_second_call_yields_the_text_and_settles_as_stop_with_snake_usage() -> None:
    outcomes, _, _ = run(roundtrip_offline())
    second = outcomes[1]
    assert second.chunks == [SUM_TEXT]
    assert second.chunks[0].type == "textDelta"
    response = completed(second)
    assert response == CourseModelResponse(
        request_id="req-text",
        response_id="response-text-001",
        message=CourseAssistantMessage(
            "message-response-text-001", (CourseTextBlock("The sum is 42."),)
        ),
        stop_reason="stop",
        usage=CourseModelUsage(input_tokens=30, output_tokens=6),
    )


def test_roundtrip_third_call_is_exhausted_on_both_paths() -> None:
    outcomes, _, _ = run(roundtrip_offline())
    assert_failed(outcomes[2], Code.PROVIDER_EXHAUSTED, response_index=None, record_index=None)


def test_roundtrip_tracks_call_count_and_pending_as_each_call_is_made() -> None:
    _, counts, _ = run(roundtrip_offline())
    # (call_count, pending) before any call, then right after each stream() call.
    assert list(zip(counts[::2], counts[1::2], strict=True)) == [(0, 2), (1, 1), (2, 0), (3, 0)]


def test_roundtrip_output_carries_no_wire_vocabulary() -> None:
    outcomes, _, _ = run(roundtrip_offline())
    dumped = json.dumps([completed(o).to_dict() for o in outcomes[:2]])
    for wire_name in ("response_end", "tool_call", "input_tokens", "stop_reason", "text_delta"):
        assert wire_name not in dumped
    assert json.loads(dumped)[0]["stopReason"] == "toolCall"
    assert json.loads(dumped)[1]["usage"] == {"inputTokens": 30, "outputTokens": 6}


# -- output order and tool-call ids ---------------------------------------------------


def test_text_and_tool_chunks_keep_record_order_in_chunks_and_message() -> None:
    records = [
        start(),
        text("Let me "),
        tool("call-b", "mul", x=2),
        text(""),  # an empty delta is still a delta
        tool("call-a", "add", y=3),
        text("done."),
        end(stop_reason="tool_call"),
    ]
    outcome = stream_one(fixture(records))
    assert outcome.chunks == [
        CourseTextDeltaChunk("Let me ", 0),
        CourseToolCallChunk("call-b", "mul", {"x": 2}, 1),
        CourseTextDeltaChunk("", 2),
        CourseToolCallChunk("call-a", "add", {"y": 3}, 3),
        CourseTextDeltaChunk("done.", 4),
    ]
    assert completed(outcome).message.content == (
        CourseTextBlock("Let me "),
        CourseToolCallBlock("call-b", "mul", {"x": 2}),
        CourseTextBlock(""),
        CourseToolCallBlock("call-a", "add", {"y": 3}),
        CourseTextBlock("done."),
    )


def test_provider_tool_call_ids_survive_unchanged_without_synthesis() -> None:
    ids = ["call-add-001", "toolu_01A09q90qw90lq917835lq9", " spaced ", "ünïcødé-✓", "0"]
    records = [start(), *(tool(i, "add") for i in ids), end(stop_reason="tool_call")]
    outcome = stream_one(fixture(records))
    assert [c.id for c in outcome.chunks if isinstance(c, CourseToolCallChunk)] == ids
    content = completed(outcome).message.content
    assert [b.id for b in content if isinstance(b, CourseToolCallBlock)] == ids


def test_repeated_tool_call_id_is_a_duplicate_tool_call_after_the_first_chunk() -> None:
    records = [start(), tool("call-1", "add"), tool("call-1", "mul"), end(stop_reason="tool_call")]
    error = assert_failed(
        stream_one(fixture(records)),
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        response_index=0,
        record_index=2,
        chunks=[CourseToolCallChunk("call-1", "add", {}, 0)],
    )
    assert error.path == "/responses/0/records/2/id"


def test_chunks_are_delivered_while_the_source_is_still_open() -> None:
    source = RecordingSource([start(), text("early"), end()], hold_at=2)

    async def scenario() -> None:
        stream = FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("req-1"))
        assert await anext(stream) == CourseTextDeltaChunk("early", 0)
        assert source.position == 2  # read one record per step: nothing pulled ahead
        rest = asyncio.ensure_future(anext(stream))
        await source.waiting.wait()
        assert not rest.done()  # the source is still open, the chunk is already out
        source.release()
        with pytest.raises(StopAsyncIteration):
            await rest
        assert (await stream.result()).message.content == (CourseTextBlock("early"),)

    run(scenario())


# -- usage aliases --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"inputTokens": 5, "outputTokens": 7}, CourseModelUsage(5, 7)),
        ({"input_tokens": 5, "output_tokens": 7}, CourseModelUsage(5, 7)),
        ({"inputTokens": 5, "output_tokens": 7}, CourseModelUsage(5, 7)),
        ({"input_tokens": 5, "outputTokens": 7}, CourseModelUsage(5, 7)),
        ({"input_tokens": 0, "outputTokens": 2**53 - 1}, CourseModelUsage(0, 2**53 - 1)),
    ],
    ids=["camel", "snake", "camel-input-snake-output", "snake-input-camel-output", "bounds"],
)
def test_each_usage_alias_becomes_one_course_usage(
    usage: dict[str, object], expected: CourseModelUsage
) -> None:
    response = completed(stream_one(fixture([start(), end(usage=usage)])))
    assert response.usage == expected
    assert response.usage.to_dict() == {
        "inputTokens": expected.input_tokens,
        "outputTokens": expected.output_tokens,
    }


@pytest.mark.parametrize(
    ("usage", "path_tail"),
    [
        ({"inputTokens": 5, "input_tokens": 5, "outputTokens": 7}, "input_tokens"),
        ({"inputTokens": 5, "outputTokens": 7, "output_tokens": 7}, "output_tokens"),
        ({"inputTokens": None, "input_tokens": 5, "outputTokens": 7}, "input_tokens"),
        ({"inputTokens": 5, "outputTokens": 7, "output_tokens": None}, "output_tokens"),
    ],
    ids=["input-both", "output-both", "input-both-one-null", "output-both-one-null"],
)
def test_both_aliases_of_one_count_are_malformed_even_when_one_is_null(
    usage: dict[str, object], path_tail: str
) -> None:
    error = assert_failed(
        stream_one(fixture([start(), text("hi"), end(usage=usage)])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("hi", 0)],
    )
    assert error.path == f"/responses/0/records/2/usage/{path_tail}"


@pytest.mark.parametrize(
    "usage",
    [
        {"inputTokens": True, "outputTokens": 1},
        {"inputTokens": -1, "outputTokens": 1},
        {"inputTokens": 2**53, "outputTokens": 1},
        {"inputTokens": 1.0, "outputTokens": 1},
        {"inputTokens": "1", "outputTokens": 1},
        {"inputTokens": 1},
        {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        None,
    ],
    ids=["bool", "negative", "above-2**53-1", "float", "string", "missing", "unknown", "null"],
)
def test_bad_usage_is_malformed(usage: object) -> None:
    record = end()
    record["usage"] = usage
    assert_failed(
        stream_one(fixture([start(), record])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=1,
    )


# -- immutable snapshots --------------------------------------------------------------


def test_mutating_the_callers_fixture_after_construction_changes_nothing() -> None:
    data = load_fixture(ROUNDTRIP_PATH)
    adapter = FixtureProviderAdapter(data)
    first = records_of(data, 0)
    arguments = first[1]
    assert isinstance(arguments, dict)
    arguments["arguments"]["left"] = 999
    arguments["id"] = "call-forged"
    first.insert(0, {"type": "bogus"})
    records_of(data, 1).clear()
    responses_of(data).append({"records": []})
    assert isinstance(data, dict)
    data["schemaVersion"] = 2

    outcome = run(collect(adapter.stream(CourseModelRequest("req-1"))))
    assert outcome.chunks == [ADD_CALL]
    assert completed(outcome).stop_reason == "toolCall"
    assert completed(run(collect(adapter.stream(CourseModelRequest("req-2"))))).stop_reason == (
        "stop"
    )
    assert adapter.pending == 0


def test_emitted_values_are_frozen_and_content_is_a_tuple() -> None:
    outcome = run(
        collect(
            FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH)).stream(CourseModelRequest("req-1"))
        )
    )
    response = completed(outcome)
    frozen: list[tuple[object, str]] = [
        (outcome.chunks[0], "id"),
        (outcome.chunks[0], "arguments"),
        (response, "stop_reason"),
        (response.message, "id"),
        (response.message, "content"),
        (response.message.content[0], "name"),
        (response.usage, "input_tokens"),
    ]
    for value, attribute in frozen:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, attribute, "forged")
        with pytest.raises((AttributeError, TypeError)):
            value.__dict__  # noqa: B018  (slotted: no instance dict to write into)
    assert type(response.message.content) is tuple


def test_tool_arguments_are_read_only_all_the_way_down() -> None:
    nested = {"point": {"x": 1, "tags": ["a", {"deep": True}]}}
    records = [start(), tool("call-1", "plot", **nested), end(stop_reason="tool_call")]
    outcome = stream_one(fixture(records))
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    arguments = chunk.arguments
    # Read-only mappings, never dicts; not mappingproxy, whose __eq__ hands its dict out
    # and which cannot be copied or pickled (SPEC, "Public API").
    assert isinstance(arguments, Mapping) and not isinstance(arguments, dict)
    with pytest.raises(TypeError):
        arguments["point"] = 0  # type: ignore[index]
    point = arguments["point"]
    assert isinstance(point, Mapping) and not isinstance(point, dict)
    assert isinstance(point["tags"], tuple)
    with pytest.raises(TypeError):
        point["x"] = 2  # type: ignore[index]
    tags = point["tags"]
    assert isinstance(tags, tuple) and isinstance(tags[1], Mapping)
    with pytest.raises(TypeError):
        tags[1]["deep"] = False  # type: ignore[index]
    # thaw() gives a mutable copy; changing it changes nothing emitted.
    plain = thaw(arguments)
    assert plain == nested
    assert isinstance(plain, dict)
    plain["point"] = None
    assert thaw(chunk.arguments) == nested


# -- dangerous JSON keys --------------------------------------------------------------


def test_dangerous_keys_stay_ordinary_keys_in_tool_arguments() -> None:
    arguments: dict[str, object] = {
        "__proto__": {"polluted": True},
        "constructor": {"prototype": {"polluted": True}},
        "__class__": "str",
        "__dict__": {"id": "forged"},
        "__init__": None,
    }
    record = {"type": "tool_call", "id": "call-1", "name": "run", "arguments": arguments}
    outcome = stream_one(fixture([start(), record, end(stop_reason="tool_call")]))
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert type(chunk) is CourseToolCallChunk
    assert chunk.id == "call-1"
    assert thaw(chunk.arguments) == arguments
    assert list(chunk.arguments) == list(arguments)
    assert isinstance(chunk.arguments, Mapping) and not isinstance(chunk.arguments, dict)
    assert not hasattr(object, "polluted") and not hasattr({}, "polluted")
    block = completed(outcome).message.content[0]
    assert isinstance(block, CourseToolCallBlock)
    assert thaw(block.arguments) == arguments


def test_a_dangerous_key_on_a_record_is_an_unknown_field() -> None:
    record = {**tool("call-1"), "__proto__": {"id": "forged"}}
    error = assert_failed(
        stream_one(fixture([start(), record, end(stop_reason="tool_call")])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=1,
    )
    assert error.path == "/responses/0/records/1/__proto__"


# -- inherited fields -----------------------------------------------------------------


class InheritingDict(dict[str, object]):
    """A dict whose class supplies fields: Python's analogue of inherited properties."""

    type = "response_start"
    responseId = "r-1"  # the wire name, on purpose
    role = "assistant"


class InheritingList(list[object]):
    """A list subclass: not plain JSON, whatever it holds."""


class RecordLike:
    """An object whose record fields all come from its class, none from the instance."""

    type = "response_start"
    responseId = "r-1"
    role = "assistant"


def test_dict_subclass_record_is_an_invalid_fixture_at_construction() -> None:
    data = fixture([start(), InheritingDict(text("hidden")), end()])
    error = construction_error(data)
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert (error.response_index, error.record_index) == (0, 1)
    assert error.path == "/responses/0/records/1"


@pytest.mark.parametrize(
    "data",
    [
        InheritingDict({"schemaVersion": 1, "responses": []}),
        {"schemaVersion": 1, "responses": [InheritingDict(records=[])]},
        fixture([RecordLike(), end()]),
        fixture([UserDict(start()), end()]),
        fixture([start(), tool("call-1", "add", nested=InheritingDict(x=1))]),
        {"schemaVersion": 1, "responses": InheritingList([{"records": []}])},
        fixture(InheritingList([start(), end()])),
    ],
    ids=[
        "fixture-root",
        "response",
        "object-with-class-fields",
        "userdict",
        "in-arguments",
        "list-subclass-responses",
        "list-subclass-records",
    ],
)
def test_objects_with_inherited_fields_are_invalid_fixtures(data: object) -> None:
    assert construction_error(data).code is Code.PROVIDER_INVALID_FIXTURE


def test_inherited_fields_from_an_async_source_fail_through_the_stream() -> None:
    source = RecordingSource([start(), text("seen"), InheritingDict(type="text_delta", text="x")])

    async def scenario() -> Outcome:
        adapter = FixtureProviderAdapter(fixture(source))
        return await collect(adapter.stream(CourseModelRequest("req-1")))

    assert_failed(
        run(scenario()),
        Code.PROVIDER_INVALID_FIXTURE,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("seen", 0)],
    )
    assert source.aclose_calls == 1


# -- unknown and malformed events -----------------------------------------------------


def test_unknown_record_type_is_an_unknown_event_after_earlier_chunks() -> None:
    records = [start(), text("a"), {"type": "thinking_delta", "text": "hmm"}, end()]
    error = assert_failed(
        stream_one(fixture(records)),
        Code.PROVIDER_UNKNOWN_EVENT,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )
    assert error.path == "/responses/0/records/2/type"


def test_unknown_type_wins_over_missing_start() -> None:
    assert_failed(
        stream_one(fixture([{"type": "ping"}, start(), end()])),
        Code.PROVIDER_UNKNOWN_EVENT,
        response_index=0,
        record_index=0,
    )


@pytest.mark.parametrize(
    "record",
    ["text", 42, None, [text("nested")], {"text": "no type"}, {"type": 5}, {"type": None}],
    ids=["string", "number", "null", "list", "no-type", "int-type", "null-type"],
)
def test_non_object_or_untyped_record_is_malformed(record: object) -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), record, end()])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


@pytest.mark.parametrize(
    "record",
    [
        {"type": "text_delta", "text": None},
        {"type": "text_delta", "text": "a", "extra": 1},
        {"type": "tool_call", "id": "", "name": "add", "arguments": {}},
        {"type": "tool_call", "id": 7, "name": "add", "arguments": {}},
        {"type": "tool_call", "id": "c", "name": "", "arguments": {}},
        {"type": "tool_call", "id": "c", "name": "add", "arguments": None},
        {"type": "tool_call", "id": "c", "name": "add", "arguments": [1, 2]},
        {"type": "tool_call", "id": "c", "name": "add"},
        {"type": "response_end", "responseId": "r-1", "stopReason": "length", "usage": {}},
        {"type": "response_end", "responseId": 1, "stopReason": "stop", "usage": {}},
        {"type": "response_end", "responseId": "r-1", "stopReason": "stop"},
        {"type": "transport_error", "message": "x", "code": None},
        {"type": "transport_error"},
    ],
    ids=[
        "text-null",
        "text-extra-field",
        "tool-empty-id",
        "tool-int-id",
        "tool-empty-name",
        "tool-null-arguments",
        "tool-list-arguments",
        "tool-no-arguments",
        "end-unknown-stop-reason",
        "end-int-response-id",
        "end-no-usage",
        "transport-null-code",
        "transport-no-message",
    ],
)
def test_bad_payload_is_malformed(record: dict[str, object]) -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), record, end()])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


@pytest.mark.parametrize(
    "record",
    [
        {"type": "response_start", "responseId": "r-1", "role": "user"},
        {"type": "response_start", "responseId": "", "role": "assistant"},
    ],
    ids=["role-user", "empty-response-id"],
)
def test_bad_start_is_malformed(record: dict[str, object]) -> None:
    assert_failed(
        stream_one(fixture([record, end()])),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=0,
        record_index=0,
    )


@pytest.mark.parametrize(
    "record",
    [text("early"), tool("call-1"), end(), {"type": "text_delta", "bogus": True}],
    ids=["text", "tool", "end", "malformed-text"],
)
def test_content_before_the_start_is_missing_start_whatever_its_payload(
    record: dict[str, object],
) -> None:
    assert_failed(
        stream_one(fixture([record, start(), end()])),
        Code.PROVIDER_MISSING_START,
        response_index=0,
        record_index=0,
    )


def test_second_start_is_a_duplicate_start_whatever_its_payload() -> None:
    records = [start(), text("a"), {"type": "response_start", "role": "nobody"}, end()]
    assert_failed(
        stream_one(fixture(records)),
        Code.PROVIDER_DUPLICATE_START,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


def test_a_broken_response_is_parsed_only_when_it_streams() -> None:
    data = fixture([start(), text("fine"), end()], [42, "not a record"])
    adapter = FixtureProviderAdapter(data)  # construction never parses record meaning
    assert completed(run(collect(adapter.stream(CourseModelRequest("a"))))).stop_reason == "stop"
    assert_failed(
        run(collect(adapter.stream(CourseModelRequest("b")))),
        Code.PROVIDER_MALFORMED_EVENT,
        response_index=1,
        record_index=0,
    )


# -- error normalization --------------------------------------------------------------


def test_transport_error_becomes_a_course_code_and_its_message_stays_data() -> None:
    forged = {
        "type": "transport_error",
        "message": "PROVIDER_EXHAUSTED",
        "code": "PROVIDER_ABORTED",
    }
    error = assert_failed(
        stream_one(fixture([start(), text("partial"), forged, end()])),
        Code.PROVIDER_TRANSPORT_ERROR,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("partial", 0)],
    )
    assert "PROVIDER_EXHAUSTED" in error.message and "PROVIDER_ABORTED" in error.message


def test_transport_error_before_the_start_is_still_a_transport_error() -> None:
    assert_failed(
        stream_one(fixture([{"type": "transport_error", "message": "503"}, start(), end()])),
        Code.PROVIDER_TRANSPORT_ERROR,
        response_index=0,
        record_index=0,
    )


class FailingSource:
    """Yields one text record after the start, then raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.position = 0

    def __aiter__(self) -> FailingSource:
        return self

    async def __anext__(self) -> object:
        self.position += 1
        if self.position == 1:
            return start()
        if self.position == 2:
            return text("before the failure")
        raise self.error


@pytest.mark.parametrize(
    "raised",
    [
        RuntimeError("socket closed"),
        FixtureProviderError(Code.PROVIDER_EXHAUSTED, "forged by the source"),
    ],
    ids=["runtime-error", "forged-fixture-provider-error"],
)
def test_an_exception_from_a_source_becomes_invalid_fixture(raised: Exception) -> None:
    async def scenario() -> Outcome:
        adapter = FixtureProviderAdapter(fixture(FailingSource(raised)))
        return await collect(adapter.stream(CourseModelRequest("req-1")))

    error = assert_failed(
        run(scenario()),
        Code.PROVIDER_INVALID_FIXTURE,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("before the failure", 0)],
    )
    assert error is not raised
    assert error.__cause__ is raised


# -- terminal cardinality -------------------------------------------------------------


def test_records_ending_without_response_end_are_missing_terminal() -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), text("b")])),
        Code.PROVIDER_MISSING_TERMINAL,
        response_index=0,
        record_index=None,
        chunks=[CourseTextDeltaChunk("a", 0), CourseTextDeltaChunk("b", 1)],
    )


def test_an_empty_response_is_missing_terminal() -> None:
    assert_failed(
        stream_one(fixture([])),
        Code.PROVIDER_MISSING_TERMINAL,
        response_index=0,
        record_index=None,
    )


def test_second_response_end_is_a_duplicate_terminal_and_no_response_is_returned() -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), end(), end()])),
        Code.PROVIDER_DUPLICATE_TERMINAL,
        response_index=0,
        record_index=3,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


@pytest.mark.parametrize(
    "record",
    [text("late"), start(), {"type": "ping"}, "not an object", {"type": "transport_error"}],
    ids=["text", "start", "unknown-type", "non-object", "transport-error"],
)
def test_any_other_record_after_the_terminal_is_invalid_terminal(record: object) -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), end(), record])),
        Code.PROVIDER_INVALID_TERMINAL,
        response_index=0,
        record_index=3,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


def test_result_waits_for_the_source_to_end_after_the_terminal() -> None:
    source = RecordingSource([start(), end()], hold_at=2)

    async def scenario() -> None:
        stream = FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("req-1"))
        result = asyncio.ensure_future(stream.result())
        await source.waiting.wait()
        for _ in range(5):
            await asyncio.sleep(0)
        assert not result.done()  # response_end was read, but the source may still add more
        source.release()
        assert (await result).stop_reason == "stop"
        assert source.aclose_calls == 0  # the source ended on its own: nothing to clean up

    run(scenario())


# -- id and stop-reason rules ---------------------------------------------------------


def test_end_with_another_response_id_is_a_response_mismatch() -> None:
    error = assert_failed(
        stream_one(fixture([start("r-1"), text("a"), end("r-2")])),
        Code.PROVIDER_RESPONSE_MISMATCH,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )
    assert error.path == "/responses/0/records/2/responseId"


def test_response_mismatch_wins_over_stop_reason_mismatch() -> None:
    assert_failed(
        stream_one(fixture([start("r-1"), end("r-2", stop_reason="tool_call")])),
        Code.PROVIDER_RESPONSE_MISMATCH,
        response_index=0,
        record_index=1,
    )


def test_tool_call_stop_reason_without_tool_calls_is_a_stop_reason_mismatch() -> None:
    assert_failed(
        stream_one(fixture([start(), text("a"), end(stop_reason="tool_call")])),
        Code.PROVIDER_STOP_REASON_MISMATCH,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )


def test_stop_with_tool_calls_is_a_stop_reason_mismatch_after_the_tool_chunk() -> None:
    error = assert_failed(
        stream_one(fixture([start(), tool("call-1", "add"), end(stop_reason="stop")])),
        Code.PROVIDER_STOP_REASON_MISMATCH,
        response_index=0,
        record_index=2,
        chunks=[CourseToolCallChunk("call-1", "add", {}, 0)],
    )
    assert error.path == "/responses/0/records/2/stopReason"


# -- finite exhaustion ----------------------------------------------------------------


def test_an_empty_queue_is_exhausted_on_every_call_and_each_call_counts() -> None:
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": []})
    for call in (1, 2):
        outcome = run(collect(adapter.stream(CourseModelRequest(f"req-{call}"))))
        assert_failed(outcome, Code.PROVIDER_EXHAUSTED, response_index=None, record_index=None)
        assert (adapter.call_count, adapter.pending) == (call, 0)


def test_a_request_without_a_str_id_is_a_type_error_that_counts_no_call() -> None:
    adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
    with pytest.raises(TypeError):
        adapter.stream(CourseModelRequest(7))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        adapter.stream(CourseModelRequest("req-1"), signal=object())  # type: ignore[arg-type]
    assert (adapter.call_count, adapter.pending) == (0, 2)


# -- cancellation ---------------------------------------------------------------------


def test_a_pre_aborted_call_counts_but_keeps_the_response_for_a_retry() -> None:
    adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
    controller = AbortController()
    controller.abort("user pressed stop")
    aborted = run(collect(adapter.stream(CourseModelRequest("req-1"), controller.signal)))
    assert_failed(aborted, Code.PROVIDER_ABORTED, response_index=None, record_index=None)
    assert (adapter.call_count, adapter.pending) == (1, 2)

    retry = run(collect(adapter.stream(CourseModelRequest("req-1"))))
    assert retry.chunks == [ADD_CALL]
    assert completed(retry).response_id == "response-tool-001"
    assert (adapter.call_count, adapter.pending) == (2, 1)


def test_an_abort_between_chunks_fails_the_next_step_and_the_result() -> None:
    records = [start(), text("one"), text("two"), end()]
    controller = AbortController()

    async def scenario() -> tuple[list[CourseModelChunk], Outcome]:
        stream = FixtureProviderAdapter(fixture(records)).stream(
            CourseModelRequest("req-1"), controller.signal
        )
        first = [await anext(stream)]
        controller.abort()
        return first, await collect_rest(stream)

    first, rest = run(scenario())
    assert first == [CourseTextDeltaChunk("one", 0)]
    assert_failed(rest, Code.PROVIDER_ABORTED, response_index=0, record_index=None)


async def collect_rest(stream: CourseModelStream) -> Outcome:
    """Like ``collect``, for a stream whose consumer already took some chunks."""
    chunks: list[CourseModelChunk] = []
    error: FixtureProviderError | None = None
    try:
        while True:
            chunks.append(await anext(stream))
    except StopAsyncIteration:
        pass
    except FixtureProviderError as exc:
        error = exc
    try:
        return Outcome(chunks, await stream.result(), error, None)
    except FixtureProviderError as exc:
        return Outcome(chunks, None, error, exc)


def test_an_abort_interrupts_a_source_blocked_in_anext_and_cleans_it_up() -> None:
    source = RecordingSource([start(), text("one"), text("never"), end()], hold_at=2)
    controller = AbortController()

    async def scenario() -> tuple[CourseModelChunk, Outcome]:
        stream = FixtureProviderAdapter(fixture(source)).stream(
            CourseModelRequest("req-1"), controller.signal
        )
        first = await anext(stream)
        asyncio.get_running_loop().call_soon(controller.abort, "timeout")
        return first, await collect_rest(stream)  # blocks in the source until the abort

    first, rest = run(scenario())
    assert first == CourseTextDeltaChunk("one", 0)
    error = assert_failed(rest, Code.PROVIDER_ABORTED, response_index=0, record_index=None)
    assert "timeout" in error.message
    assert source.position == 2  # the held record was never given
    assert source.aclose_calls == 1


def test_closing_a_stream_between_chunks_fails_later_steps_and_the_result() -> None:
    records = [start(), text("one"), text("two"), end()]

    async def scenario() -> tuple[CourseModelChunk, Outcome]:
        stream = FixtureProviderAdapter(fixture(records)).stream(CourseModelRequest("req-1"))
        first = await anext(stream)
        await stream.aclose()
        return first, await collect_rest(stream)

    first, rest = run(scenario())
    assert first == CourseTextDeltaChunk("one", 0)
    assert_failed(rest, Code.PROVIDER_ABORTED, response_index=0, record_index=None)


def test_closing_a_complete_stream_keeps_its_response() -> None:
    async def scenario() -> CourseModelResponse:
        adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
        async with adapter.stream(CourseModelRequest("req-1")) as stream:
            assert [chunk async for chunk in stream] == [ADD_CALL]
        return await stream.result()

    assert run(scenario()).stop_reason == "toolCall"


def test_cancelling_the_consuming_task_propagates_and_cleans_up_the_source() -> None:
    source = RecordingSource([start(), text("one"), end()], hold_at=1)

    async def scenario() -> Outcome:
        stream = FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("req-1"))
        consumer = asyncio.ensure_future(collect(stream))
        await source.waiting.wait()
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer
        return await collect_rest(stream)

    assert_failed(run(scenario()), Code.PROVIDER_ABORTED, response_index=0, record_index=None)
    assert source.aclose_calls == 1


# -- async-source cleanup -------------------------------------------------------------


def test_a_source_is_claimed_only_when_its_response_is_first_pulled() -> None:
    source = RecordingSource([start(), end()])

    async def scenario() -> None:
        adapter = FixtureProviderAdapter(fixture(source))
        stream = adapter.stream(CourseModelRequest("req-1"))
        assert source.aiter_calls == 0
        assert (await stream.result()).stop_reason == "stop"
        assert source.aiter_calls == 1

    run(scenario())


def test_a_source_that_ends_normally_is_not_closed() -> None:
    source = RecordingSource([start(), text("a"), end()])

    async def scenario() -> Outcome:
        return await collect(
            FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("r"))
        )

    assert completed(run(scenario())).stop_reason == "stop"
    assert source.aclose_calls == 0


def test_a_source_stopped_by_a_bad_record_is_closed_once() -> None:
    source = RecordingSource([start(), text("a"), {"type": "ping"}, end()])

    async def scenario() -> Outcome:
        return await collect(
            FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("r"))
        )

    assert_failed(
        run(scenario()),
        Code.PROVIDER_UNKNOWN_EVENT,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )
    assert source.aclose_calls == 1
    assert source.position == 3  # the end record was never pulled


def test_a_source_left_by_async_with_is_closed_and_the_stream_aborted() -> None:
    source = RecordingSource([start(), text("a"), text("b"), end()])

    async def scenario() -> Outcome:
        async with FixtureProviderAdapter(fixture(source)).stream(
            CourseModelRequest("r")
        ) as stream:
            assert await anext(stream) == CourseTextDeltaChunk("a", 0)
        return await collect_rest(stream)

    assert_failed(run(scenario()), Code.PROVIDER_ABORTED, response_index=0, record_index=None)
    assert source.aclose_calls == 1


def test_a_failing_cleanup_never_replaces_the_error_that_caused_it() -> None:
    source = RecordingSource([start(), text("a"), {"type": "transport_error", "message": "x"}])
    source.fail_aclose = True

    async def scenario() -> Outcome:
        return await collect(
            FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("r"))
        )

    assert_failed(
        run(scenario()),
        Code.PROVIDER_TRANSPORT_ERROR,
        response_index=0,
        record_index=2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )
    assert source.aclose_calls == 1


def test_one_async_source_cannot_back_two_responses() -> None:
    shared = RecordingSource([start(), end()])
    error = construction_error(fixture(shared, shared))
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert error.response_index == 1
    assert shared.aiter_calls == 0


# -- iterator ownership ---------------------------------------------------------------


def test_a_second_consumer_is_refused_while_the_first_carries_on() -> None:
    async def scenario() -> tuple[FixtureProviderError, list[CourseModelChunk], Outcome]:
        stream = FixtureProviderAdapter(fixture([start(), text("a"), text("b"), end()])).stream(
            CourseModelRequest("req-1")
        )
        first_consumer = aiter(stream)
        taken = [await anext(first_consumer)]
        with pytest.raises(FixtureProviderError) as second:
            aiter(stream)
        return second.value, taken, await collect_rest(stream)

    refused, taken, rest = run(scenario())
    assert refused.code is Code.PROVIDER_STREAM_CONSUMED
    assert refused.response_index == 0
    assert taken + rest.chunks == [CourseTextDeltaChunk("a", 0), CourseTextDeltaChunk("b", 1)]
    assert completed(rest).stop_reason == "stop"


def test_result_is_not_a_consumer_so_later_iteration_yields_every_chunk() -> None:
    async def scenario() -> tuple[CourseModelResponse, list[CourseModelChunk]]:
        adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
        stream = adapter.stream(CourseModelRequest("req-1"))
        response = await stream.result()
        return response, [chunk async for chunk in stream]

    response, chunks = run(scenario())
    assert response.stop_reason == "toolCall"
    assert chunks == [ADD_CALL]


# -- the failure experiment -----------------------------------------------------------


def experiment_fixture() -> object:
    """The checked-in fixture's first response, copied, without its response_end."""
    data = copy.deepcopy(load_fixture(ROUNDTRIP_PATH))
    del responses_of(data)[1:]
    removed = records_of(data, 0).pop()
    assert isinstance(removed, dict) and removed["type"] == "response_end"
    return data


def test_experiment_without_response_end_delivers_the_tool_chunk_then_missing_terminal() -> None:
    data = experiment_fixture()
    # What is left is the start and the tool call, unchanged.
    assert records_of(data, 0) == records_of(load_fixture(ROUNDTRIP_PATH), 0)[:2]
    error = assert_failed(
        stream_one(data),
        Code.PROVIDER_MISSING_TERMINAL,
        response_index=0,
        record_index=None,
        chunks=[ADD_CALL],
    )
    assert error.path == "/responses/0/records"


def test_experiment_result_first_then_iteration_both_report_missing_terminal() -> None:
    async def scenario() -> tuple[FixtureProviderError, Outcome]:
        stream = FixtureProviderAdapter(experiment_fixture()).stream(CourseModelRequest("req-1"))
        with pytest.raises(FixtureProviderError) as first:
            await stream.result()
        return first.value, await collect(stream)

    from_result, outcome = run(scenario())
    assert from_result.code is Code.PROVIDER_MISSING_TERMINAL
    assert_failed(
        outcome,
        Code.PROVIDER_MISSING_TERMINAL,
        response_index=0,
        record_index=None,
        chunks=[ADD_CALL],
    )
    assert outcome.error is from_result


def test_experiment_tool_chunk_is_observed_before_the_source_ends() -> None:
    records = records_of(experiment_fixture(), 0)
    source = RecordingSource(records, hold_at=len(records))  # holds the end of the source

    async def scenario() -> tuple[CourseModelChunk, FixtureProviderError, FixtureProviderError]:
        stream = FixtureProviderAdapter(fixture(source)).stream(CourseModelRequest("req-1"))
        chunk = await anext(stream)
        next_step = asyncio.ensure_future(anext(stream))
        await source.waiting.wait()
        assert not next_step.done()  # the chunk came while the source was still open
        source.release()
        with pytest.raises(FixtureProviderError) as from_iteration:
            await next_step
        with pytest.raises(FixtureProviderError) as from_result:
            await stream.result()
        return chunk, from_iteration.value, from_result.value

    chunk, from_iteration, from_result = run(scenario())
    assert chunk == ADD_CALL
    assert from_iteration.code is Code.PROVIDER_MISSING_TERMINAL
    assert from_result is from_iteration
    assert source.aclose_calls == 0  # the source ended by itself


def test_experiment_restoring_response_end_settles_as_tool_call() -> None:
    data = experiment_fixture()
    records_of(data, 0).append(
        end("response-tool-001", "tool_call", {"inputTokens": 12, "outputTokens": 8})
    )
    outcome = stream_one(data)
    assert outcome.chunks == [ADD_CALL]
    response = completed(outcome)
    assert (response.stop_reason, response.usage) == ("toolCall", CourseModelUsage(12, 8))


# -- schema version -------------------------------------------------------------------


def test_schema_version_one_is_accepted() -> None:
    assert FixtureProviderAdapter({"schemaVersion": 1, "responses": []}).pending == 0


@pytest.mark.parametrize(
    "version", [True, 1.0, "1", 3, 0, None], ids=["true", "float", "string", "3", "0", "null"]
)
def test_any_other_schema_version_is_an_invalid_fixture(version: object) -> None:
    error = construction_error({"schemaVersion": version, "responses": []})
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert error.path == "/schemaVersion"
    assert (error.response_index, error.record_index) == (None, None)


@pytest.mark.parametrize(
    "data",
    [
        {"responses": []},
        {"schemaVersion": 1, "responses": [], "extra": True},
        {"schemaVersion": 1, "responses": ({"records": []},)},
        {"schemaVersion": 1, "responses": [{"records": ({"type": "x"},)}]},
        {"schemaVersion": 1, "responses": [{"records": [], "id": "r-1"}]},
        {"schemaVersion": 1, "responses": [{"records": iter([start(), end()])}]},
        [],
    ],
    ids=[
        "no-version",
        "unknown-key",
        "tuple-responses",
        "tuple-records",
        "response-unknown-key",
        "sync-iterator-records",
        "not-an-object",
    ],
)
def test_fixture_shape_outside_the_schema_is_an_invalid_fixture(data: object) -> None:
    assert construction_error(data).code is Code.PROVIDER_INVALID_FIXTURE


def test_async_generator_source_is_accepted_as_records() -> None:
    async def scenario() -> Outcome:
        adapter = FixtureProviderAdapter(fixture(source_of([start(), text("hi"), end()])))
        return await collect(adapter.stream(CourseModelRequest("req-1")))

    outcome = run(scenario())
    assert outcome.chunks == [CourseTextDeltaChunk("hi", 0)]
    assert completed(outcome).stop_reason == "stop"

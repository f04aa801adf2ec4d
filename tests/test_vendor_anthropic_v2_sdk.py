"""The ``anthropic`` format in schema version 2 against the official SDK, both ways.

- Each recording in ``tests/recordings/anthropic`` goes through the SDK's own accumulator
  (``messages.stream`` for a stream, ``messages.create`` for a whole message); its final
  message must agree with the version-2 replay of the import: the blocks (thinking with its
  signature, redacted thinking, text, tool calls, the cut call), the stop word, the model,
  the usage with its cache and thinking counts, and ``message_start``'s own usage.
- Generated version-2 fixtures are rendered as the version-2 server drives the renderer
  (``message_start`` once ``response_start`` is read), read by the SDK, and imported back
  (round trip, SPEC-V2 "Round trip in version 2").
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast

import anthropic
import pytest
from anthropic.types import Message, RawMessageStartEvent
from hypothesis import given, settings
from hypothesis import strategies as st
from jiter import from_json

from course import (
    CourseIncompleteToolCallBlock,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseRedactedThinkingBlock,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseToolCallBlock,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import Recording, import_recording
from course.vendors._anthropic import Renderer

from .strategies import sdk_arguments
from .vendor_helpers import RECORDINGS, anthropic_client

MODEL: Final = "claude-opus-4-7"  # the request's: the renderer's fallback
JSON: Final = "application/json"
Item = tuple[str, ...]

WORDS: Final = {
    "stop": ("end_turn", "stop_sequence"),
    "toolCall": ("tool_use",),
    "length": ("max_tokens", "model_context_window_exceeded"),
    "contentFilter": ("refusal",),
    "refusal": ("refusal",),
    "pauseTurn": ("pause_turn",),
}
"""SPEC-V2's anthropic column: each end's words, the first the one sent by default."""


# -- playing and rendering as the version-2 server does -----------------------------------


@dataclass
class Played:
    response: CourseModelResponse | None
    error: FixtureProviderError | None
    start_usage: CourseModelUsage | None
    streamed: bool
    """Whether ``response_start`` was read (so the server began streaming)."""


def fixture(records: Sequence[object]) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": [{"records": list(records)}]}


def play(records: Sequence[object]) -> Played:
    adapter = FixtureProviderAdapter(fixture(records))

    async def run() -> Played:
        stream = adapter.stream(CourseModelRequest(id="request-1"))._without_delays()
        await stream._until_start()
        streamed = stream.response_id is not None
        try:
            response = await stream.result()
        except FixtureProviderError as error:
            return Played(None, error, stream.start_usage, streamed)
        return Played(response, None, stream.start_usage, streamed)

    return asyncio.run(run())


def render(records: Sequence[object], model: str = MODEL) -> tuple[int, bytes]:
    """The status and body a version-2 server sends for a streaming request: the opening
    event once ``response_start`` is read, then a send per chunk."""
    adapter = FixtureProviderAdapter(fixture(records))
    renderer = Renderer(model)

    async def run() -> tuple[int, bytes]:
        stream = adapter.stream(CourseModelRequest(id="request-1"))._without_delays()
        await stream._until_start()
        if stream.response_id is None:  # failed before it began: an HTTP error
            try:
                await stream.result()
            except FixtureProviderError as error:
                return 500, json.dumps(renderer.error_body(error)).encode()
            raise AssertionError("a response without a start")
        # As the server does: the fixture's model and start usage, set before the opening.
        if stream.model is not None:
            renderer.model = stream.model
        renderer.start_usage = stream.start_usage
        renderer.follow(stream)
        parts = [renderer.open(stream.response_id)]
        try:
            async for chunk in stream:
                parts.append(renderer.chunk(chunk))
            parts.append(renderer.complete(await stream.result()))
        except FixtureProviderError as error:
            parts.append(renderer.fail(error))
        return 200, "".join(parts).encode()

    return asyncio.run(run())


def whole(records: Sequence[object]) -> dict[str, object]:
    response = play(records).response
    assert response is not None
    renderer = Renderer(MODEL)
    if response.model is not None:  # as the server does
        renderer.model = response.model
    return cast("dict[str, object]", renderer.whole(response))


@dataclass
class SdkStream:
    start: RawMessageStartEvent
    message: Message


def sdk_stream(body: bytes) -> SdkStream:
    """The SDK's ``message_start`` event and final message for a streamed body."""
    client = anthropic_client(body)
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        events = iter(stream)
        first = next(events)
        assert isinstance(first, RawMessageStartEvent)
        for _ in events:
            pass
        return SdkStream(first, stream.get_final_message())


def sdk_create(body: object) -> Message:
    client = anthropic_client(json.dumps(body).encode(), content_type=JSON)
    return client.messages.create(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    )


# -- the two views of a message -----------------------------------------------------------


def _arguments(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _merged(items: list[Item]) -> list[Item]:
    merged: list[Item] = []
    for item in items:
        if item[0] == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + item[1])
        else:
            merged.append(item)
    return [item for item in merged if item != ("text", "")]


def sdk_view(message: Message) -> list[Item]:
    """The blocks a fixture can hold (server tools and their results are not)."""
    items: list[Item] = []
    for block in message.content:
        if block.type == "text":
            items.append(("text", block.text))
        elif block.type == "tool_use":
            items.append(("tool", block.id, block.name, _arguments(block.input)))
        elif block.type == "thinking":
            items.append(("thinking", block.thinking, block.signature))
        elif block.type == "redacted_thinking":
            items.append(("redacted", block.data))
    return _merged(items)


def course_view(response: CourseModelResponse, *, streamed: bool = True) -> list[Item]:
    """What the SDK should hold: refusal text left out; a cut call as the SDK's partial
    parse of its fragments when streamed, left out of a whole message."""
    items: list[Item] = []
    for block in response.message.content:
        if isinstance(block, CourseTextBlock):
            items.append(("text", block.text))
        elif isinstance(block, CourseToolCallBlock):
            items.append(("tool", block.id, block.name, _arguments(thaw(block.arguments))))
        elif isinstance(block, CourseThinkingBlock):
            items.append(("thinking", block.text, block.signature or ""))
        elif isinstance(block, CourseRedactedThinkingBlock):
            items.append(("redacted", block.data))
        elif isinstance(block, CourseIncompleteToolCallBlock) and streamed:
            text = block.arguments_text.encode()
            partial = from_json(text, partial_mode=True) if text else {}
            items.append(("tool", block.id, block.name, _arguments(partial)))
    return _merged(items)


def sdk_usage(usage: anthropic.types.Usage) -> CourseModelUsage:
    """The SDK's usage in course's meaning: the cache counts are part of the input."""
    read, write = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
    details = usage.output_tokens_details
    return CourseModelUsage(
        usage.input_tokens + (read or 0) + (write or 0),
        usage.output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=None if details is None else details.thinking_tokens,
    )


def stop_word(response: CourseModelResponse) -> str:
    words = WORDS[response.stop_reason]
    provider = response.provider_stop_reason
    return provider if provider in words else words[0]


def assert_agree(message: Message, response: CourseModelResponse, *, streamed: bool) -> None:
    assert message.id == response.response_id
    assert message.model == (response.model or MODEL)
    assert sdk_view(message) == course_view(response, streamed=streamed)
    assert message.stop_reason == stop_word(response)
    assert sdk_usage(message.usage) == response.usage


def records_of(recording: Recording) -> list[dict[str, object]]:
    return cast("list[dict[str, object]]", thaw(recording.response)["records"])


# -- recordings: the SDK's accumulator and the version-2 import agree ---------------------

RECORDING_PATHS: Final = sorted((RECORDINGS / "anthropic").glob("*.*"))


@pytest.mark.parametrize("path", RECORDING_PATHS, ids=lambda path: path.name)
def test_the_sdk_and_the_version_2_import_agree_on_every_recording(path: Path) -> None:
    data = path.read_bytes()
    recording = import_recording(data, format="anthropic")
    played = play(records_of(recording))
    if played.response is not None:
        response = played.response
        if path.suffix == ".json":
            message = sdk_create(json.loads(data))
            assert_agree(
                message, response, streamed=True
            )  # its cut call is the message's last tool_use
            return
        sdk = sdk_stream(data)
        # The words are the recording's own: a successful import keeps them all.
        assert sdk.message.stop_reason == response.provider_stop_reason
        assert sdk.message.model == response.model
        assert sdk_view(sdk.message) == course_view(response)
        assert sdk_usage(sdk.message.usage) == response.usage
        assert sdk_usage(sdk.start.message.usage) == played.start_usage
        return
    error = played.error
    assert error is not None
    if recording.truncated:
        assert error.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL
        return
    assert error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk_stream(data)
    assert (info.value.type, info.value.api_message) == (
        error.transport_code,
        error.transport_message,
    )


def test_the_cut_call_is_the_sdk_s_partial_tool_use() -> None:
    data = (RECORDINGS / "anthropic" / "max_tokens.sse").read_bytes()
    played = play(records_of(import_recording(data)))
    assert played.response is not None
    block = played.response.message.content[-1]
    assert isinstance(block, CourseIncompleteToolCallBlock)
    message = sdk_stream(data).message
    assert message.stop_reason == "max_tokens"
    tool_use = message.content[-1]
    assert tool_use.type == "tool_use"
    assert (tool_use.id, tool_use.input) == (
        block.id,
        {"filename": "taxes.txt", "lines": ["# A GUIDE"]},
    )


# -- the renderer: what each version-2 field becomes --------------------------------------


def start(**fields: object) -> dict[str, object]:
    return {"type": "response_start", "responseId": "msg_1", "role": "assistant", **fields}


def end(stop_reason: str = "stop", **fields: object) -> dict[str, object]:
    usage = fields.pop("usage", {"inputTokens": 30, "outputTokens": 7})
    return {
        "type": "response_end",
        "responseId": "msg_1",
        "stopReason": stop_reason,
        "usage": usage,
        **fields,
    }


def events_of(body: bytes) -> list[dict[str, object]]:
    """The data of every event, as sent."""
    return [
        json.loads(block.split("\n")[1][len("data: ") :])
        for block in body.decode().split("\n\n")
        if block
    ]


@pytest.mark.parametrize(
    ("stop_reason", "provider", "word"),
    [
        ("stop", None, "end_turn"),
        ("stop", "stop_sequence", "stop_sequence"),
        ("stop", "max_tokens", "end_turn"),
        ("length", None, "max_tokens"),
        ("length", "model_context_window_exceeded", "model_context_window_exceeded"),
        ("content_filter", None, "refusal"),
        ("content_filter", "SAFETY", "refusal"),
        ("refusal", None, "refusal"),
        ("pause_turn", None, "pause_turn"),
        ("pause_turn", "paused", "pause_turn"),
    ],
)
def test_each_end_streams_and_answers_its_stop_word(
    stop_reason: str, provider: str | None, word: str
) -> None:
    fields = {} if provider is None else {"providerStopReason": provider}
    records = [start(), {"type": "text_delta", "text": "Hi"}, end(stop_reason, **fields)]
    assert sdk_stream(render(records)[1]).message.stop_reason == word
    assert sdk_create(whole(records)).stop_reason == word


def test_thinking_blocks_stream_with_their_signature_and_redacted_thinking_with_its_data() -> None:
    records = [
        start(),
        {"type": "thinking_delta", "text": "Let me "},
        {"type": "thinking_delta", "text": "think."},
        {"type": "thinking_signature", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking_delta", "text": "Unsigned."},
        {"type": "text_delta", "text": "42."},
        end(),
    ]
    expected = [
        ("thinking", "Let me think.", "sig-1"),
        ("redacted", "opaque=="),
        ("thinking", "Unsigned.", ""),
        ("text", "42."),
    ]
    body = render(records)[1]
    assert sdk_view(sdk_stream(body).message) == expected
    assert sdk_view(sdk_create(whole(records))) == expected
    kinds = [
        (event["type"], cast("dict[str, object]", event.get("delta", {})).get("type"))
        for event in events_of(body)
    ]
    assert kinds == [
        ("message_start", None),
        ("content_block_start", None),
        ("content_block_delta", "thinking_delta"),
        ("content_block_delta", "thinking_delta"),
        ("content_block_delta", "signature_delta"),
        ("content_block_stop", None),
        ("content_block_start", None),
        ("content_block_stop", None),
        ("content_block_start", None),
        ("content_block_delta", "thinking_delta"),
        ("content_block_stop", None),
        ("content_block_start", None),
        ("content_block_delta", "text_delta"),
        ("content_block_stop", None),
        ("message_delta", None),
        ("message_stop", None),
    ]
    assert events_of(body)[1]["content_block"] == {
        "type": "thinking",
        "thinking": "",
        "signature": "",
    }


def test_each_fragment_is_one_input_json_delta_and_a_cut_call_never_stops() -> None:
    records = [
        start(),
        {
            "type": "tool_call",
            "id": "toolu_1",
            "name": "add",
            "arguments": {"left": 1},
            "argumentFragments": ["", '{"left"', ": 1}"],
            "signature": "not sent",
        },
        {
            "type": "tool_call_incomplete",
            "id": "toolu_2",
            "name": "write",
            "argumentFragments": ['{"path": "a.txt", ', '"text": "Once up'],
        },
        end("length"),
    ]
    body = render(records)[1]
    events = events_of(body)
    deltas = [
        (event["index"], cast("dict[str, object]", event["delta"])["partial_json"])
        for event in events
        if event["type"] == "content_block_delta"
    ]
    assert deltas == [
        (0, ""),
        (0, '{"left"'),
        (0, ": 1}"),
        (1, '{"path": "a.txt", '),
        (1, '"text": "Once up'),
    ]
    assert [event["index"] for event in events if event["type"] == "content_block_stop"] == [0]
    assert "not sent" not in body.decode()
    message = sdk_stream(body).message
    assert message.stop_reason == "max_tokens"
    assert sdk_view(message) == [
        ("tool", "toolu_1", "add", '{"left": 1}'),
        ("tool", "toolu_2", "write", '{"path": "a.txt"}'),  # its partial parse
    ]
    # A whole message has no way to leave a call unfinished: the cut call is left out.
    assert sdk_view(sdk_create(whole(records))) == [("tool", "toolu_1", "add", '{"left": 1}')]
    imported = records_of(import_recording(body))
    assert imported[-2]["argumentFragments"] == records[2]["argumentFragments"]  # type: ignore[index]


def test_the_fixture_s_model_and_start_usage_open_the_stream() -> None:
    usage = {"inputTokens": 2060, "outputTokens": 1, "cacheReadTokens": 2048}
    records = [
        start(model="claude-sonnet-4-5-20250929", usage=usage),
        {"type": "text_delta", "text": "Hi"},
        end(usage={**usage, "outputTokens": 9, "reasoningTokens": 4}),
    ]
    body = render(records)[1]
    assert events_of(body)[0]["message"] == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 2048, "output_tokens": 1},
    }
    sdk = sdk_stream(body)
    assert sdk.start.message.usage.input_tokens == 12
    assert sdk.start.message.usage.cache_read_input_tokens == 2048
    assert sdk.message.model == "claude-sonnet-4-5-20250929"
    assert (sdk.message.usage.input_tokens, sdk.message.usage.cache_read_input_tokens) == (12, 2048)
    details = sdk.message.usage.output_tokens_details
    assert details is not None and details.thinking_tokens == 4
    assert sdk.message.usage.cache_creation_input_tokens is None  # not in the fixture


def test_a_refusal_s_text_is_left_out_and_its_end_says_refusal() -> None:
    records = [
        start(),
        {"type": "text_delta", "text": "I "},
        {"type": "refusal_delta", "text": "can't help with that."},
        {"type": "text_delta", "text": "won't."},
        end("refusal"),
    ]
    message = sdk_stream(render(records)[1]).message
    assert (sdk_view(message), message.stop_reason) == ([("text", "I won't.")], "refusal")


def test_without_a_start_usage_the_stream_opens_with_zero_counts() -> None:
    body = render([start(), end()])[1]
    usage = cast("dict[str, object]", events_of(body)[0]["message"])["usage"]
    assert usage == {"input_tokens": 0, "output_tokens": 0}


# -- the renderer: generated version-2 fixtures -------------------------------------------

_TEXT: Final = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_IDS: Final = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8)


@st.composite
def usages(draw: st.DrawFn, *, details: tuple[str, ...] | None = None) -> dict[str, int]:
    """A usage that keeps SPEC-V2's rules; ``details`` fixes which details it has."""
    if details is None:
        details = tuple(
            key
            for key in ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
            if draw(st.booleans())
        )
    total = draw(st.integers(0, 2**40))
    read = draw(st.integers(0, total)) if "cacheReadTokens" in details else None
    write = draw(st.integers(0, total - (read or 0))) if "cacheWriteTokens" in details else None
    output = draw(st.integers(0, 2**40))
    usage = {"inputTokens": total, "outputTokens": output}
    if read is not None:
        usage["cacheReadTokens"] = read
    if write is not None:
        usage["cacheWriteTokens"] = write
    if "reasoningTokens" in details:
        usage["reasoningTokens"] = draw(st.integers(0, output))
    return usage


def _split(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]


@st.composite
def responses(draw: st.DrawFn, *, round_trip: bool = False) -> list[object]:
    """One version-2 response the anthropic format can carry. ``round_trip`` keeps to the
    SPEC's round-trip conditions (no empty deltas but a lone one before a signature, no
    ``content_filter`` end, provider words of their end, a transport error with a code)."""
    stop = draw(
        st.sampled_from(
            ["stop", "tool_call", "length", "refusal", "pause_turn"]
            + ([] if round_trip else ["content_filter"])
        )
    )
    end_usage = draw(usages())
    begin: dict[str, object] = {
        "type": "response_start",
        "responseId": "msg_gen",
        "role": "assistant",
    }
    if draw(st.booleans()):
        begin["model"] = draw(_IDS)
    if draw(st.booleans()):
        # The SDK keeps a start's detail that the end lacks: the start has the end's.
        keys = tuple(key for key in end_usage if key not in ("inputTokens", "outputTokens"))
        begin["usage"] = draw(usages(details=keys))
    records: list[object] = [begin]
    text = _TEXT.filter(bool) if round_trip else _TEXT
    kinds = draw(
        st.lists(st.sampled_from(["text", "tool", "thinking", "redacted", "refusal"]), max_size=6)
    )
    if stop == "stop":
        kinds = [kind for kind in kinds if kind != "tool"]
    if stop == "tool_call" and "tool" not in kinds:
        kinds.append("tool")
    if stop != "refusal":
        kinds = [kind for kind in kinds if kind != "refusal"]
    ids = iter(range(100))
    for kind in kinds:
        if kind == "text":
            records.append({"type": "text_delta", "text": draw(text)})
        elif kind == "refusal":
            records.append({"type": "refusal_delta", "text": draw(text)})
        elif kind == "redacted":
            records.append({"type": "redacted_thinking", "data": draw(_IDS)})
        elif kind == "thinking":
            signed = draw(st.booleans())
            follows = cast("dict[str, object]", records[-1])["type"] == "thinking_delta"
            if signed and not follows and draw(st.booleans()):
                # A signature with no text: the one empty delta a round trip allows, when
                # it is its block's only one (a thinking delta before it would join it).
                deltas = [""]
            else:
                deltas = draw(st.lists(text, min_size=1, max_size=3))
            records.extend({"type": "thinking_delta", "text": delta} for delta in deltas)
            if signed:
                records.append({"type": "thinking_signature", "signature": draw(_IDS)})
        else:
            arguments = draw(sdk_arguments)
            call: dict[str, object] = {
                "type": "tool_call",
                "id": f"toolu_{next(ids)}",
                "name": draw(_IDS),
                "arguments": arguments,
            }
            if draw(st.booleans()):
                call["argumentFragments"] = _split(draw, json.dumps(arguments)) or [""]
            if draw(st.booleans()):
                call["signature"] = draw(_IDS)  # anthropic leaves it out
            records.append(call)
    if stop == "length" and draw(st.booleans()):
        partial = json.dumps(draw(sdk_arguments))
        partial = partial[: draw(st.integers(0, len(partial)))]  # a prefix, as the SDK needs
        records.append(
            {
                "type": "tool_call_incomplete",
                "id": "toolu_cut",
                "name": draw(_IDS),
                "argumentFragments": _split(draw, partial),
            }
        )
    if draw(st.integers(0, 4)) == 0:
        error: dict[str, object] = {"type": "transport_error", "message": draw(_TEXT)}
        if round_trip or draw(st.booleans()):
            error["code"] = draw(_IDS)
        records = records[: draw(st.integers(1, len(records)))]
        last = cast("dict[str, object]", records[-1])
        if round_trip and last == {"type": "thinking_delta", "text": ""}:
            records.pop()  # the error cut its signature off: no longer the allowed empty one
        if round_trip and last["type"] == "tool_call_incomplete":
            # Import drops a call still open at a provider error: it never comes back.
            records.pop()
        return [*records, error]
    final: dict[str, object] = {
        "type": "response_end",
        "responseId": "msg_gen",
        "stopReason": stop,
        "usage": end_usage,
    }
    normalized = {"tool_call": "toolCall", "content_filter": "contentFilter"}.get(stop, stop)
    normalized = "pauseTurn" if stop == "pause_turn" else normalized
    words = WORDS[normalized]
    if draw(st.booleans()):
        final["providerStopReason"] = draw(
            st.sampled_from(words) if round_trip else st.sampled_from(words) | _IDS
        )
    records.append(final)
    return records


@settings(max_examples=60)
@given(responses())
def test_a_generated_response_streams_to_the_sdk(records: list[object]) -> None:
    played = play(records)
    status, body = render(records)
    assert status == 200  # every generated response starts: the stream begins there
    if played.response is not None:
        sdk = sdk_stream(body)
        assert_agree(sdk.message, played.response, streamed=True)
        start_usage = sdk_usage(sdk.start.message.usage)
        assert start_usage == (played.start_usage or CourseModelUsage(0, 0))
        return
    error = played.error
    assert error is not None and error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk_stream(body)
    sdk_type = "api_error" if error.transport_code is None else error.transport_code
    assert (info.value.type, info.value.api_message) == (sdk_type, error.transport_message)


def _completes(records: list[object]) -> bool:
    return cast("dict[str, object]", records[-1])["type"] == "response_end"


@settings(max_examples=40)
@given(responses().filter(_completes))
def test_a_generated_response_as_a_whole_message_through_create(records: list[object]) -> None:
    played = play(records)
    assert played.response is not None
    assert_agree(sdk_create(whole(records)), played.response, streamed=False)


# -- round trip ---------------------------------------------------------------------------


def normalized(records: Sequence[object], imported: Sequence[dict[str, object]]) -> list[object]:
    """The fixture side as SPEC-V2 compares it with what comes back: what anthropic
    leaves out removed (refusal text, call signatures), and the optional fields the
    import side may add kept only where the fixture has them."""
    expected: list[object] = []
    for record in cast("Sequence[dict[str, object]]", records):
        if record["type"] == "refusal_delta":
            continue
        expected.append(
            {
                key: value
                for key, value in record.items()
                if key != "signature" or record["type"] != "tool_call"
            }
        )
    assert len(expected) == len(imported), (expected, imported)
    for want, got in zip(cast("list[dict[str, object]]", expected), imported, strict=True):
        for key in ("model", "providerStopReason", "argumentFragments", "usage"):
            if key not in want:
                got.pop(key, None)
        if got.get("type") == "response_end":
            usage = cast("dict[str, object]", got["usage"])
            for detail in ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens"):
                if detail not in cast("dict[str, object]", want["usage"]):
                    usage.pop(detail, None)
    return expected


@settings(max_examples=80)
@given(responses(round_trip=True))
def test_importing_what_the_renderer_streams_gives_back_the_version_2_records(
    records: list[object],
) -> None:
    status, body = render(records)
    assert status == 200
    recording = import_recording(body, format="anthropic")
    assert not recording.truncated
    imported = records_of(recording)
    assert imported == normalized(records, imported)
    assert dict(recording.ignored) == {}

"""Version-2 fixtures served for real to the official ``anthropic`` client.

One server on loopback, the SDK's three ways of asking (``messages.stream``,
``messages.create(stream=True)`` read event by event, ``messages.create``): what each
sees of the stop words, signed and redacted thinking, a cut call, the cache and thinking
counts and ``message_start``'s own usage. The renderer's field-by-field shapes are
``test_vendor_anthropic_v2_sdk.py``'s; this file proves the server carries them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import anthropic
import pytest
from anthropic.types import Message, MessageParam

from course.vendors import FixtureServer, serve

MODEL: Final = "claude-opus-4-7"
ASK: Final[list[MessageParam]] = [{"role": "user", "content": "Hi"}]
SIGNATURE: Final = "EqQBCkYIBxgCKkBzaWduZWQ="


def start(response_id: str, **fields: object) -> dict[str, object]:
    return {"type": "response_start", "responseId": response_id, "role": "assistant", **fields}


def end(response_id: str, stop: str, usage: dict[str, int], **fields: object) -> dict[str, object]:
    return {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": stop,
        "usage": usage,
        **fields,
    }


USAGE: Final = {"inputTokens": 3100, "outputTokens": 90, "cacheReadTokens": 2048}

RESPONSES: Final = {
    "thinking": [
        start("msg_t", model="claude-sonnet-4-5-20250929", usage={**USAGE, "outputTokens": 1}),
        {"type": "thinking_delta", "text": "Short answer."},
        {"type": "thinking_signature", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "text_delta", "text": "Paris."},
        end("msg_t", "stop", {**USAGE, "reasoningTokens": 40}),
    ],
    "max_tokens": [
        start("msg_m"),
        {"type": "text_delta", "text": "Writing it."},
        {
            "type": "tool_call_incomplete",
            "id": "toolu_cut",
            "name": "write_file",
            "argumentFragments": ['{"path": "a.txt", ', '"lines": ["one", "tw'],
        },
        end("msg_m", "length", {"inputTokens": 10, "outputTokens": 64}),
    ],
    "refusal": [
        start("msg_r"),
        {"type": "refusal_delta", "text": "I can't help with that."},
        end("msg_r", "refusal", {"inputTokens": 10, "outputTokens": 5}),
    ],
    "pause_turn": [
        start("msg_p"),
        {"type": "text_delta", "text": "Searching..."},
        end("msg_p", "pause_turn", {"inputTokens": 10, "outputTokens": 5}),
    ],
}


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FixtureServer]:
    """A server holding the named response three times: one per way of asking."""
    records = RESPONSES[request.param]
    fixture = {"schemaVersion": 2, "responses": [{"records": records}] * 3}
    with serve(fixture) as running:
        yield running


def asked_three_ways(server: FixtureServer) -> tuple[Message, list[object], Message]:
    """``messages.stream``'s final message, the raw events of ``create(stream=True)``,
    and ``create``'s message."""
    with anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0) as client:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=ASK) as stream:
            streamed = stream.get_final_message()
        events: list[object] = list(
            client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True)
        )
        whole = client.messages.create(model=MODEL, max_tokens=64, messages=ASK)
    return streamed, events, whole


@pytest.mark.parametrize("server", ["thinking"], indirect=True)
def test_signed_and_redacted_thinking_the_model_and_every_count(server: FixtureServer) -> None:
    streamed, events, whole = asked_three_ways(server)
    for message in (streamed, whole):
        assert message.model == "claude-sonnet-4-5-20250929"
        assert [block.type for block in message.content] == [
            "thinking",
            "redacted_thinking",
            "text",
        ]
        thinking, redacted = message.content[0], message.content[1]
        assert thinking.type == "thinking" and redacted.type == "redacted_thinking"
        assert (thinking.thinking, thinking.signature, redacted.data) == (
            "Short answer.",
            SIGNATURE,
            "opaque==",
        )
        usage = message.usage
        assert (usage.input_tokens, usage.cache_read_input_tokens) == (3100 - 2048, 2048)
        assert usage.output_tokens == 90
        assert usage.output_tokens_details is not None
        assert usage.output_tokens_details.thinking_tokens == 40
    first = events[0]
    assert isinstance(first, anthropic.types.RawMessageStartEvent)
    opening = first.message.usage  # what frameworks read at message_start: not zeros
    assert (opening.input_tokens, opening.cache_read_input_tokens, opening.output_tokens) == (
        3100 - 2048,
        2048,
        1,
    )


@pytest.mark.parametrize("server", ["max_tokens"], indirect=True)
def test_a_cut_call_is_left_open_in_a_max_tokens_stream(server: FixtureServer) -> None:
    streamed, events, whole = asked_three_ways(server)
    assert streamed.stop_reason == whole.stop_reason == "max_tokens"
    cut = streamed.content[-1]
    assert cut.type == "tool_use" and cut.id == "toolu_cut"
    assert cut.input == {"path": "a.txt", "lines": ["one"]}  # the SDK's partial parse
    stops = [event for event in events if getattr(event, "type", "") == "content_block_stop"]
    assert [getattr(event, "index", None) for event in stops] == [0]  # the text block only
    assert [block.type for block in whole.content] == ["text"]  # a message cannot hold it


@pytest.mark.parametrize(
    ("server", "word", "content"),
    [("refusal", "refusal", []), ("pause_turn", "pause_turn", ["text"])],
    indirect=["server"],
)
def test_refusal_and_pause_turn_are_their_own_stop_words(
    server: FixtureServer, word: str, content: list[str]
) -> None:
    streamed, _, whole = asked_three_ways(server)
    for message in (streamed, whole):
        assert message.stop_reason == word
        assert [block.type for block in message.content] == content


FRAGMENTS: Final = ["", '{"left": 20', ', "right": 22}']


def test_each_fragment_is_one_input_json_delta_on_the_wire() -> None:
    call = {
        "type": "tool_call",
        "id": "toolu_1",
        "name": "add",
        "arguments": {"left": 20, "right": 22},
        "argumentFragments": FRAGMENTS,
    }
    records = [
        start("msg_f"),
        call,
        end("msg_f", "tool_call", {"inputTokens": 1, "outputTokens": 2}),
    ]
    with (
        serve({"schemaVersion": 2, "responses": [{"records": records}]}) as server,
        anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0) as client,
    ):
        events = list(client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True))
    deltas = [
        getattr(getattr(event, "delta", None), "partial_json", None)
        for event in events
        if getattr(event, "type", "") == "content_block_delta"
    ]
    assert deltas == FRAGMENTS

"""Benchmark: importing recordings, against the SDKs' own accumulation and the floor.

Four recordings of 100,000 events each, generated in code: ``openai-chat``,
``openai-responses`` and ``anthropic`` streams (text deltas, then one tool call whose
arguments arrive in 50 fragments), and a thinking-heavy ``anthropic`` stream (a thinking
block of deltas and its signature, redacted thinking, a short text, the call, cache and
thinking counts: what schema version 2 imports and version 1 skipped). Each contender
starts from the recording's bytes:

- ``course``: ``course.vendors.import_recording(data)``, every check included;
- ``sdk``: what the official SDK does with the same bytes: its SSE decoder, its
  ``construct_type`` into the SDK's event models, then its stream accumulator
  (``ChatCompletionStreamState.handle_chunk`` for Chat, ``ResponseStreamState`` for
  Responses, ``accumulate_event`` for Anthropic);
- ``floor``: splitting the SSE text into events and ``json.loads`` of each event's
  data, which no importer written in Python can beat.

Times are CPU seconds of this process, medians of several runs, interleaved, each after
``gc.collect()``; figures are ratios against the floor measured in the same run.
Linearity compares 10,000 with 100,000 events, for ``course`` and for the floor: what
the floor loses at 100,000 events (caches, the collector) is the machine's, not the
importer's.

Usage: python bench/import_recordings.py [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from anthropic._models import construct_type as anthropic_construct
from anthropic._streaming import SSEDecoder as AnthropicDecoder
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from openai._models import construct_type as openai_construct
from openai._streaming import SSEDecoder as OpenAIDecoder
from openai._types import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from course.vendors import import_recording

_ARGUMENT_FRAGMENTS = 50
_SDK_RUNS = 2


def chat_recording(events: int) -> bytes:
    """An ``openai-chat`` stream of ``events`` events ending in one tool call."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    lines: list[str] = []

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        lines.append("data: " + json.dumps({**head, "choices": [choice], **extra}) + "\n\n")

    chunk({"role": "assistant", "content": ""})
    texts = events - _ARGUMENT_FRAGMENTS - 4
    for index in range(texts):
        chunk({"content": f"word {index} "})
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
    chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": '{"a": "'}}]})
    for index in range(_ARGUMENT_FRAGMENTS - 2):
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": f"x{index}"}}]})
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]})
    chunk({}, "tool_calls")
    usage = {"prompt_tokens": 10, "completion_tokens": events, "total_tokens": events + 10}
    lines.append("data: " + json.dumps({**head, "choices": [], "usage": usage}) + "\n\n")
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def anthropic_recording(events: int) -> bytes:
    """An ``anthropic`` stream of ``events`` events ending in one tool call."""
    lines: list[str] = []

    def event(data: dict[str, Any]) -> None:
        lines.append(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n")

    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "m"}
    event({"type": "message_start", "message": {**message, "content": [], "usage": usage}})
    event(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    texts = events - _ARGUMENT_FRAGMENTS - 7
    for index in range(texts):
        delta = {"type": "text_delta", "text": f"word {index} "}
        event({"type": "content_block_delta", "index": 0, "delta": delta})
    event({"type": "content_block_stop", "index": 0})
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    event({"type": "content_block_start", "index": 1, "content_block": block})
    fragments = ['{"a": "', *(f"x{i}" for i in range(_ARGUMENT_FRAGMENTS - 2)), '"}']
    for fragment in fragments:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        event({"type": "content_block_delta", "index": 1, "delta": delta})
    event({"type": "content_block_stop", "index": 1})
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    event({"type": "message_delta", "delta": stop, "usage": {"output_tokens": events}})
    event({"type": "message_stop"})
    return "".join(lines).encode()


def anthropic_thinking_recording(events: int) -> bytes:
    """A thinking-heavy ``anthropic`` stream of ``events`` events: nearly all of them
    thinking deltas, then the signature, redacted thinking, a short text and the call."""
    lines: list[str] = []

    def event(data: dict[str, Any]) -> None:
        lines.append(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n")

    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2048,
        "output_tokens": 1,
    }
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "m"}
    event({"type": "message_start", "message": {**message, "content": [], "usage": usage}})
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    event({"type": "content_block_start", "index": 0, "content_block": thinking})
    texts = 10
    thoughts = events - _ARGUMENT_FRAGMENTS - texts - 12
    for index in range(thoughts):
        delta = {"type": "thinking_delta", "thinking": f"step {index} "}
        event({"type": "content_block_delta", "index": 0, "delta": delta})
    signature = {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" * 4}
    event({"type": "content_block_delta", "index": 0, "delta": signature})
    event({"type": "content_block_stop", "index": 0})
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix" * 8}
    event({"type": "content_block_start", "index": 1, "content_block": redacted})
    event({"type": "content_block_stop", "index": 1})
    event(
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}
    )
    for index in range(texts):
        delta = {"type": "text_delta", "text": f"word {index} "}
        event({"type": "content_block_delta", "index": 2, "delta": delta})
    event({"type": "content_block_stop", "index": 2})
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    event({"type": "content_block_start", "index": 3, "content_block": block})
    fragments = ['{"a": "', *(f"x{i}" for i in range(_ARGUMENT_FRAGMENTS - 2)), '"}']
    for fragment in fragments:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        event({"type": "content_block_delta", "index": 3, "delta": delta})
    event({"type": "content_block_stop", "index": 3})
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    end_usage = {
        **usage,
        "output_tokens": events,
        "output_tokens_details": {"thinking_tokens": thoughts},
    }
    event({"type": "message_delta", "delta": stop, "usage": end_usage})
    event({"type": "message_stop"})
    return "".join(lines).encode()


def responses_recording(events: int) -> bytes:
    """An ``openai-responses`` stream of ``events`` events ending in one function call."""
    lines: list[str] = []

    def event(data: dict[str, Any]) -> None:
        data = {**data, "sequence_number": len(lines)}
        lines.append(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n")

    response = {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1,
        "status": "in_progress",
        "model": "m",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None,
    }
    event({"type": "response.created", "response": response})
    message = {"id": "msg_1", "type": "message", "status": "in_progress", "content": []}
    message["role"] = "assistant"
    event({"type": "response.output_item.added", "output_index": 0, "item": message})
    empty = {"type": "output_text", "annotations": [], "text": ""}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    event({"type": "response.content_part.added", **where, "part": empty})
    texts = [f"word {i} " for i in range(events - _ARGUMENT_FRAGMENTS - 7)]
    for text in texts:
        event({"type": "response.output_text.delta", **where, "delta": text, "logprobs": []})
    part = {"type": "output_text", "annotations": [], "text": "".join(texts)}
    done_message = {**message, "status": "completed", "content": [part]}
    event({"type": "response.output_item.done", "output_index": 0, "item": done_message})
    call = {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": ""}
    call |= {"call_id": "call_1", "name": "f"}
    event({"type": "response.output_item.added", "output_index": 1, "item": call})
    fragments = ['{"a": "', *(f"x{i}" for i in range(_ARGUMENT_FRAGMENTS - 2)), '"}']
    for fragment in fragments:
        delta = {"item_id": "fc_1", "output_index": 1, "delta": fragment}
        event({"type": "response.function_call_arguments.delta", **delta})
    done_call = {**call, "status": "completed", "arguments": "".join(fragments)}
    event({"type": "response.output_item.done", "output_index": 1, "item": done_call})
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": events,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": events + 10,
    }
    completed = {**response, "status": "completed", "output": [done_message, done_call]}
    event({"type": "response.completed", "response": {**completed, "usage": usage}})
    return "".join(lines).encode()


def floor(data: bytes) -> int:
    """Split the SSE text into events and ``json.loads`` every event's data."""
    count = 0
    for block in data.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
    return count


def course_import(data: bytes) -> int:
    recording = import_recording(data)
    return len(recording.response["records"])  # type: ignore[arg-type]


def openai_sdk(data: bytes) -> int:
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for sse in OpenAIDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        chunk = openai_construct(type_=ChatCompletionChunk, value=sse.json())
        state.handle_chunk(chunk)  # type: ignore[arg-type]
    return len(state.get_final_completion().choices)


def anthropic_sdk(data: bytes) -> int:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for sse in AnthropicDecoder().iter_bytes(iter([data])):
        event = anthropic_construct(type_=RawMessageStreamEvent, value=sse.json())
        snapshot = accumulate_event(
            event=event,  # type: ignore[arg-type]
            current_snapshot=snapshot,
            json_bufs=json_bufs,
        )
    return 0 if snapshot is None else len(snapshot.content)


def responses_sdk(data: bytes) -> int:
    state: ResponseStreamState[None] = ResponseStreamState(input_tools=omit, text_format=omit)
    for sse in OpenAIDecoder().iter_bytes(iter([data])):
        event = openai_construct(type_=ResponseStreamEvent, value=sse.json())
        state.handle_event(event)  # type: ignore[arg-type]
    return 0 if state._completed_response is None else len(state._completed_response.output)


def one_time(function: Callable[[bytes], int], data: bytes) -> float:
    """CPU seconds of this process: other processes' load on a shared machine moves it less."""
    gc.collect()
    start = time.process_time()
    function(data)
    return time.process_time() - start


def measure(runs: int, events: int) -> dict[str, dict[str, float]]:
    """Median seconds per contender, per format, interleaved run by run."""
    cases = {
        "openai-chat": (chat_recording(events), openai_sdk),
        "openai-responses": (responses_recording(events), responses_sdk),
        "anthropic": (anthropic_recording(events), anthropic_sdk),
        "anthropic-thinking": (anthropic_thinking_recording(events), anthropic_sdk),
    }
    results: dict[str, dict[str, float]] = {}
    for name, (data, sdk) in cases.items():
        contenders = {"course": course_import, "sdk": sdk, "floor": floor}
        samples: dict[str, list[float]] = {key: [] for key in contenders}
        for run in range(runs):
            for key, function in contenders.items():
                # The SDKs take seconds where the others take milliseconds: a few runs
                # of theirs are plenty.
                if key != "sdk" or run < _SDK_RUNS:
                    samples[key].append(one_time(function, data))
        results[name] = {key: statistics.median(values) for key, values in samples.items()}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args()
    runs = args.runs or (3 if args.quick else 7)
    full = measure(runs, 100_000)
    tenth = measure(runs * 3, 10_000)  # short runs are the noisier: more of them
    print(
        "| format | course | SDK accumulator | floor | course vs floor | SDK vs course | "
        "linearity (10x events) | floor's linearity |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, times in full.items():
        linear = times["course"] / tenth[name]["course"]
        floor_linear = times["floor"] / tenth[name]["floor"]
        print(
            f"| {name} | {times['course'] * 1e3:,.1f} ms | {times['sdk'] * 1e3:,.1f} ms | "
            f"{times['floor'] * 1e3:,.1f} ms | {times['course'] / times['floor']:.2f}x | "
            f"{times['sdk'] / times['course']:.2f}x | {linear:.2f}x | "
            f"{floor_linear:.2f}x |"
        )


if __name__ == "__main__":
    main()

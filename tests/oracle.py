"""A reference model of the adapter, written from the SPEC for clarity, not speed.

Given a plain-JSON fixture (as ``json.loads`` returns it), ``predict_fixture`` says
whether construction fails, and otherwise predicts each response: either the chunks and
the response (as ``to_dict()`` would give them), or the first error's code, its record
index and the chunks delivered before it. It shares no code with ``course/``: the point
is two implementations that must agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "INT_LIMIT",
    "MAX_DEPTH",
    "Completed",
    "Failed",
    "plain",
    "predict_fixture",
    "predict_response",
]

MAX_DEPTH = 256  # containers, counting the fixture root as 1
SAFE = 2**53 - 1
INT_LIMIT = 10**4300  # integers of at most 4,300 decimal digits (never str() them)


@dataclass(frozen=True)
class Completed:
    chunks: list[object]
    response: object


@dataclass(frozen=True)
class Failed:
    code: str
    record_index: int | None  # None: the source ended too early
    chunks: list[object]


Prediction = Completed | Failed


def plain(value: object, depth: int = 1) -> bool:
    """Plain JSON by exact type; ``depth`` is the level ``value`` would sit at."""
    if type(value) is dict:
        items = value.items()
        return depth <= MAX_DEPTH and all(type(k) is str and plain(v, depth + 1) for k, v in items)
    if type(value) is list:
        return depth <= MAX_DEPTH and all(plain(v, depth + 1) for v in value)
    if type(value) is int:
        return -INT_LIMIT < value < INT_LIMIT
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) in (str, bool)


def is_str(v: object) -> bool:
    return type(v) is str


def non_empty(v: object) -> bool:
    return type(v) is str and v != ""


def count(v: object) -> bool:
    return type(v) is int and 0 <= v <= SAFE


ALIASES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))


def usage_ok(v: object) -> bool:
    if type(v) is not dict or not set(v) <= {key for pair in ALIASES for key in pair}:
        return False
    for pair in ALIASES:
        present = [key for key in pair if key in v]  # presence, whatever the value
        if len(present) != 1 or not count(v[present[0]]):
            return False
    return True


# type -> {field: (required, check)}
Check = Callable[[object], bool]
PAYLOADS: dict[str, dict[str, tuple[bool, Check]]] = {
    "response_start": {
        "responseId": (True, non_empty),
        "role": (True, lambda v: type(v) is str and v == "assistant"),
    },
    "text_delta": {"text": (True, is_str)},
    "tool_call": {
        "id": (True, non_empty),
        "name": (True, non_empty),
        "arguments": (True, lambda v: type(v) is dict),
    },
    "response_end": {
        "responseId": (True, is_str),
        "stopReason": (True, lambda v: v in ("stop", "tool_call") and type(v) is str),
        "usage": (True, usage_ok),
    },
    "transport_error": {"message": (True, is_str), "code": (False, is_str)},
}


def payload_ok(record: dict[str, object], fields: dict[str, tuple[bool, Check]]) -> bool:
    if not set(record) - {"type"} <= set(fields):
        return False
    return all(
        check(record[name]) if name in record else not required
        for name, (required, check) in fields.items()
    )


def predict_response(records: list[object], request_id: str) -> Prediction:
    start_id: str | None = None
    response: object = None
    content: list[dict[str, object]] = []
    chunks: list[object] = []
    call_ids: set[str] = set()
    for i, record in enumerate(records):
        kind = record.get("type") if type(record) is dict else None
        if response is not None:  # rule 1: nothing may follow the terminal
            late = "DUPLICATE_TERMINAL" if kind == "response_end" else "INVALID_TERMINAL"
            return Failed("PROVIDER_" + late, i, chunks)
        code: str | None = None
        if type(kind) is not str:  # rule 2
            code = "MALFORMED_EVENT"
        elif kind not in PAYLOADS:  # rule 3
            code = "UNKNOWN_EVENT"
        elif start_id is None and kind in ("text_delta", "tool_call", "response_end"):
            code = "MISSING_START"  # rule 4
        elif start_id is not None and kind == "response_start":
            code = "DUPLICATE_START"
        elif type(record) is dict and not payload_ok(record, PAYLOADS[kind]):  # rule 5
            code = "MALFORMED_EVENT"
        if code is not None:
            return Failed("PROVIDER_" + code, i, chunks)
        assert type(record) is dict
        # Rule 6, and the normal course of things.
        if kind == "transport_error":
            return Failed("PROVIDER_TRANSPORT_ERROR", i, chunks)
        if kind == "response_start":
            start_id = record["responseId"]
        elif kind == "text_delta":
            chunks.append(
                {"type": "textDelta", "text": record["text"], "contentIndex": len(content)}
            )
            content.append({"type": "text", "text": record["text"]})
        elif kind == "tool_call":
            if record["id"] in call_ids:
                return Failed("PROVIDER_DUPLICATE_TOOL_CALL", i, chunks)
            call_ids.add(record["id"])
            block = {k: record[k] for k in ("id", "name", "arguments")}
            chunks.append({"type": "toolCall", **block, "contentIndex": len(content)})
            content.append({"type": "toolCall", **block})
        else:
            if record["responseId"] != start_id:
                return Failed("PROVIDER_RESPONSE_MISMATCH", i, chunks)
            if (record["stopReason"] == "tool_call") != bool(call_ids):
                return Failed("PROVIDER_STOP_REASON_MISMATCH", i, chunks)
            usage: dict[str, object] = record["usage"]
            response = {
                "requestId": request_id,
                "responseId": start_id,
                "message": {"id": f"message-{start_id}", "role": "assistant", "content": content},
                "stopReason": "toolCall" if record["stopReason"] == "tool_call" else "stop",
                "usage": {
                    "inputTokens": usage.get("inputTokens", usage.get("input_tokens")),
                    "outputTokens": usage.get("outputTokens", usage.get("output_tokens")),
                },
            }
    if response is None:
        return Failed("PROVIDER_MISSING_TERMINAL", None, chunks)
    return Completed(chunks, response)


def predict_fixture(fixture: object, request_ids: list[str]) -> list[Prediction] | None:
    """Each response's prediction, or ``None`` if construction must fail.

    ``request_ids[n]`` is the id of the request that streams response ``n``.
    """
    if type(fixture) is not dict or set(fixture) != {"schemaVersion", "responses"}:
        return None
    version, responses = fixture["schemaVersion"], fixture["responses"]
    if type(version) is not int or version != 1 or type(responses) is not list:
        return None
    for response in responses:
        if type(response) is not dict or set(response) != {"records"}:
            return None
        if type(response["records"]) is not list or not plain(response["records"], 4):
            return None
    return [
        predict_response(response["records"], request_id)
        for response, request_id in zip(responses, request_ids, strict=False)
    ]

"""A reference model of the adapter, written from the SPEC for clarity, not speed.

Given a plain-JSON fixture (as ``json.loads`` returns it), ``predict_fixture`` says
whether construction fails, and otherwise predicts each response: either the chunks and
the response (as ``to_dict()`` would give them), or the first error's code, its record
index, the JSON pointers it may name and the chunks delivered before it. Schema version 2
(``SPEC-V2.md``) adds record types, fields, meaning rules and ``delay``: the oracle says
when (on a clock that only delays move) each chunk and the outcome arrive, and never
sleeps. It shares no code with ``course/``: the point is two implementations that must
agree.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "CHUNK_KEYS",
    "CONTENT_TYPES",
    "INT_LIMIT",
    "MAX_DELAY",
    "MAX_DEPTH",
    "MAX_RETRY_AFTER",
    "PAYLOADS",
    "PAYLOADS_V2",
    "STOP_REASONS",
    "Completed",
    "Failed",
    "UsageCheck",
    "delay_of",
    "fragments_equal",
    "json_equal",
    "parse_fragments",
    "payload_ok",
    "payload_problems",
    "payloads",
    "plain",
    "pointer",
    "predict_fixture",
    "predict_response",
    "shape_ok",
    "unplain",
    "usage_problems",
]

MAX_DEPTH = 256  # containers, counting the fixture root as 1
SAFE = 2**53 - 1
INT_LIMIT = 10**4300  # integers of at most 4,300 decimal digits (never str() them)
MAX_DELAY = 3600
MAX_RETRY_AFTER = 86400

Parts = tuple[str | int, ...]
"""A JSON pointer as its parts, relative to something (``()`` is the thing itself)."""
Problems = list[Parts]
"""Where a payload is wrong: each a place the error's path may name."""


@dataclass(frozen=True)
class Completed:
    chunks: list[object]
    response: object
    chunk_times: list[float] = field(default_factory=list)
    """When each chunk arrives: the sum of the valid delays of its record and before."""
    time: float = 0.0
    """When the response is settled (the delays of every record read)."""
    start: object = None
    """``{"model": ..., "usage": ...}`` once a ``response_start`` was read, else ``None``."""


@dataclass(frozen=True)
class Failed:
    code: str
    record_index: int | None  # None: the source ended too early
    chunks: list[object]
    paths: frozenset[str] = frozenset()
    """The JSON pointers, relative to the response's records, the error may name."""
    chunk_times: list[float] = field(default_factory=list)
    time: float | None = 0.0
    """When the error is settled; ``None`` where the SPEC leaves it open."""
    start: object = None
    transport: object = None
    """For ``PROVIDER_TRANSPORT_ERROR``: message, code, status and retryAfter (a float)."""


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


def unplain(value: object, depth: int, at: Parts = ()) -> Problems:
    """Where ``value`` (at level ``depth``) is not plain JSON: each value of a wrong type,
    each object with a key that is not a ``str``, each container past the nesting limit."""
    if type(value) in (dict, list) and depth > MAX_DEPTH:
        return [at]
    if type(value) is dict:
        if not all(type(k) is str for k in value):
            return [at]
        return [p for k, v in value.items() for p in unplain(v, depth + 1, (*at, k))]
    if type(value) is list:
        return [p for i, v in enumerate(value) for p in unplain(v, depth + 1, (*at, i))]
    return [] if plain(value, depth) else [at]


def pointer(parts: Parts) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# -- field checks: each returns the places where the value is wrong ([] when right) ----------

Check = Callable[[object], Problems]


def _ok(condition: bool) -> Problems:
    return [] if condition else [()]


def is_str(v: object) -> Problems:
    return _ok(type(v) is str)


def non_empty(v: object) -> Problems:
    return _ok(type(v) is str and v != "")


def count(v: object) -> bool:
    return type(v) is int and 0 <= v <= SAFE


def _seconds(v: object, most: int) -> bool:
    """``int`` or ``float`` by exact type (never ``bool``), finite, 0 .. ``most``."""
    if type(v) is int:
        return 0 <= v <= most  # (math.isfinite of a huge int overflows)
    return type(v) is float and math.isfinite(v) and 0 <= v <= most


def delay_of(record: object, version: int) -> float:
    """How long the stream waits before judging ``record``: its ``delay`` if it is an
    object of a version-2 fixture whose ``delay`` is valid, else nothing."""
    if version != 2 or type(record) is not dict or "delay" not in record:
        return 0.0
    delay = record["delay"]
    return float(delay) if _seconds(delay, MAX_DELAY) else 0.0


ALIASES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))
DETAILS = (
    ("cacheReadTokens", "cache_read_tokens"),
    ("cacheWriteTokens", "cache_write_tokens"),
    ("reasoningTokens", "reasoning_tokens"),
)


def usage_problems(v: object, version: int = 1, *, sums: bool = True) -> Problems:
    """A usage object's problems: a count under both aliases (either may be named), a
    required one missing (the object), a count out of range (the count), an unknown key
    (the key), and in version 2 (unless ``sums`` is false) the sums (the object)."""
    if type(v) is not dict:
        return [()]
    pairs = ALIASES + (DETAILS if version == 2 else ())
    known = {alias for pair in pairs for alias in pair}
    problems: Problems = [(key,) for key in v if key not in known]
    counts: dict[str, int] = {}
    readable = True
    for pair in pairs:
        present = [alias for alias in pair if alias in v]  # presence, whatever the value
        if len(present) == 2:
            problems += [(pair[0],), (pair[1],)]
            readable = False
        elif not present:
            if pair in ALIASES:
                problems.append(())
                readable = False
            counts[pair[0]] = 0  # an absent detail reads as 0
        elif not count(v[present[0]]):
            problems.append((present[0],))
            readable = False
        else:
            counts[pair[0]] = v[present[0]]
    if version == 2 and readable and sums:
        cached = counts["cacheReadTokens"] + counts["cacheWriteTokens"]
        if cached > counts["inputTokens"] or counts["reasoningTokens"] > counts["outputTokens"]:
            problems.append(())
    return problems


@dataclass(frozen=True)
class UsageCheck:
    """The check of a ``usage`` field; ``shape_only`` leaves out the sums."""

    version: int

    def __call__(self, v: object, *, shape_only: bool = False) -> Problems:
        return usage_problems(v, self.version, sums=not shape_only)


_usage_v2 = UsageCheck(2)


def _fragments(*, allow_empty: bool) -> Check:
    def check(v: object) -> Problems:
        if type(v) is not list or (not v and not allow_empty):
            return [()]
        bad = [i for i, item in enumerate(v) if type(item) is not str]
        return [(), *((i,) for i in bad)] if bad else []

    return check


STOP_REASONS = {
    "stop": "stop",
    "tool_call": "toolCall",
    "length": "length",
    "content_filter": "contentFilter",
    "refusal": "refusal",
    "pause_turn": "pauseTurn",
}
V1_STOP_REASONS = ("stop", "tool_call")


def _choice(choices: tuple[str, ...]) -> Check:
    return lambda v: _ok(type(v) is str and v in choices)


def _delay(v: object) -> Problems:
    return _ok(_seconds(v, MAX_DELAY))


# type -> {field: (required, check)}
PAYLOADS: dict[str, dict[str, tuple[bool, Check]]] = {
    "response_start": {
        "responseId": (True, non_empty),
        "role": (True, lambda v: _ok(type(v) is str and v == "assistant")),
    },
    "text_delta": {"text": (True, is_str)},
    "tool_call": {
        "id": (True, non_empty),
        "name": (True, non_empty),
        "arguments": (True, lambda v: _ok(type(v) is dict)),
    },
    "response_end": {
        "responseId": (True, is_str),
        "stopReason": (True, _choice(V1_STOP_REASONS)),
        "usage": (True, UsageCheck(1)),
    },
    "transport_error": {"message": (True, is_str), "code": (False, is_str)},
}
"""Version 1: the five record types."""

_OPTIONAL_DELAY: dict[str, tuple[bool, Check]] = {"delay": (False, _delay)}
PAYLOADS_V2: dict[str, dict[str, tuple[bool, Check]]] = {
    "response_start": {
        **PAYLOADS["response_start"],
        "model": (False, non_empty),
        "usage": (False, _usage_v2),
        **_OPTIONAL_DELAY,
    },
    "text_delta": {**PAYLOADS["text_delta"], **_OPTIONAL_DELAY},
    "tool_call": {
        **PAYLOADS["tool_call"],
        "argumentFragments": (False, _fragments(allow_empty=False)),
        "signature": (False, non_empty),
        **_OPTIONAL_DELAY,
    },
    "tool_call_incomplete": {
        "id": (True, non_empty),
        "name": (True, non_empty),
        "argumentFragments": (True, _fragments(allow_empty=True)),
        **_OPTIONAL_DELAY,
    },
    "thinking_delta": {"text": (True, is_str), **_OPTIONAL_DELAY},
    "thinking_signature": {"signature": (True, non_empty), **_OPTIONAL_DELAY},
    "redacted_thinking": {"data": (True, non_empty), **_OPTIONAL_DELAY},
    "refusal_delta": {"text": (True, is_str), **_OPTIONAL_DELAY},
    "response_end": {
        "responseId": (True, is_str),
        "stopReason": (True, _choice(tuple(STOP_REASONS))),
        "usage": (True, _usage_v2),
        "providerStopReason": (False, non_empty),
        **_OPTIONAL_DELAY,
    },
    "transport_error": {
        **PAYLOADS["transport_error"],
        "status": (False, lambda v: _ok(type(v) is int and 400 <= v <= 599)),
        "retryAfter": (False, lambda v: _ok(_seconds(v, MAX_RETRY_AFTER))),
        **_OPTIONAL_DELAY,
    },
}
"""Version 2: the ten record types."""

CONTENT_TYPES = frozenset(
    {
        "text_delta",
        "tool_call",
        "tool_call_incomplete",
        "thinking_delta",
        "thinking_signature",
        "redacted_thinking",
        "refusal_delta",
    }
)

CHUNK_KEYS = {
    "textDelta": {"type", "text", "contentIndex"},
    "toolCall": {"type", "id", "name", "arguments", "contentIndex"},  # + signature when set
    "incompleteToolCall": {"type", "id", "name", "argumentsText", "contentIndex"},
    "thinkingDelta": {"type", "text", "contentIndex"},
    "thinkingSignature": {"type", "signature", "contentIndex"},
    "redactedThinking": {"type", "data", "contentIndex"},
    "refusalDelta": {"type", "text", "contentIndex"},
}


def payloads(version: int) -> dict[str, dict[str, tuple[bool, Check]]]:
    return PAYLOADS_V2 if version == 2 else PAYLOADS


# -- argumentFragments ------------------------------------------------------------------------


class _Refused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _Refused("duplicate key")
    return value


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows: non-finite, as Infinity
        raise _Refused("non-finite number")
    return value


def _constant(name: str) -> object:
    raise _Refused(name)  # NaN, Infinity, -Infinity


def parse_fragments(fragments: list[str]) -> tuple[bool, object]:
    """The fragments joined and read as strict JSON (``load_fixture``'s rules): ``(True,
    value)``, or ``(False, None)``. An empty concatenation stands for ``{}``."""
    text = "".join(fragments)
    if text == "":
        return True, {}
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_float=_finite,
            parse_constant=_constant,
        )
    except (ValueError, RecursionError):  # int past 4,300 digits: ValueError too
        return False, None
    return True, value


def json_equal(a: object, b: object) -> bool:
    """Equal as JSON: same keys (order ignored), arrays item by item, ``int`` only to
    ``int`` and ``float`` only to ``float`` (by value), ``true``/``false``/``null`` only
    to themselves."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        assert type(b) is dict
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if type(a) is list:
        assert type(b) is list
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def fragments_equal(fragments: list[str], arguments: object) -> bool:
    parsed, value = parse_fragments(fragments)
    return parsed and json_equal(value, arguments)


def payload_problems(
    record: dict[str, object],
    fields: dict[str, tuple[bool, Check]],
    *,
    shape_only: bool = False,
) -> Problems:
    """Rule 5 for one record: every place its payload is wrong. ``shape_only``: only
    what a JSON Schema can say (not the usage sums, nor fragments against arguments)."""
    problems: Problems = [(key,) for key in record if key != "type" and key not in fields]
    for name, (required, check) in fields.items():
        if name not in record:
            problems += [()] if required else []
        elif isinstance(check, UsageCheck):
            problems += [(name, *where) for where in check(record[name], shape_only=shape_only)]
        else:
            problems += [(name, *where) for where in check(record[name])]
    fragments = record.get("argumentFragments")
    if (
        not shape_only
        and record.get("type") == "tool_call"
        and "argumentFragments" in fields
        and "argumentFragments" in record
        and "arguments" in record
        and not _fragments(allow_empty=False)(fragments)
        and not fragments_equal(fragments, record["arguments"])  # type: ignore[arg-type]
    ):
        problems.append(("argumentFragments",))
    return problems


def payload_ok(record: dict[str, object], fields: dict[str, tuple[bool, Check]]) -> bool:
    return not payload_problems(record, fields)


# -- one response -------------------------------------------------------------------------------


def _usage_dict(usage: dict[str, object]) -> dict[str, object]:
    """Normalized usage, as ``to_dict()`` gives it: each detail only when present."""
    out: dict[str, object] = {}
    names = (*ALIASES, *DETAILS)
    for camel, snake in names:
        if camel in usage or snake in usage:
            out[camel] = usage[camel] if camel in usage else usage[snake]
    return out


@dataclass
class _State:
    version: int
    request_id: str
    start_id: str | None = None
    start: object = None
    response: object = None
    content: list[dict[str, object]] = field(default_factory=list)
    chunks: list[object] = field(default_factory=list)
    chunk_times: list[float] = field(default_factory=list)
    call_ids: set[str] = field(default_factory=set)
    calls: bool = False  # a complete tool call was read
    incomplete: bool = False  # a tool_call_incomplete was read: no content may follow
    refused: bool = False  # a refusal_delta was read
    thinking: int | None = None  # the index of the open thinking block
    time: float = 0.0

    def emit(self, chunk: dict[str, object], block: dict[str, object] | None) -> None:
        """One chunk; ``block`` is a new block (``None``: the chunk adds to the last)."""
        if block is not None:
            self.content.append(block)
        chunk["contentIndex"] = len(self.content) - 1
        self.chunks.append(chunk)
        self.chunk_times.append(self.time)

    def failed(self, code: str, index: int | None, *places: Parts) -> Failed:
        paths = frozenset(pointer(() if index is None else (index, *p)) for p in places or [()])
        return Failed(
            "PROVIDER_" + code, index, self.chunks, paths, self.chunk_times, self.time, self.start
        )


def _judge(state: _State, i: int, record: object) -> Failed | None:
    """Rules 1 to 6 for record ``i``; the state moves on if it is accepted."""
    version = state.version
    kinds = payloads(version)
    kind = record.get("type") if type(record) is dict else None
    if state.response is not None:  # rule 1: nothing may follow the terminal
        late = "DUPLICATE_TERMINAL" if kind == "response_end" else "INVALID_TERMINAL"
        return state.failed(late, i)
    if type(record) is not dict or "type" not in record:  # rule 2
        return state.failed("MALFORMED_EVENT", i)
    if type(kind) is not str:
        return state.failed("MALFORMED_EVENT", i, ("type",))
    if kind not in kinds:  # rule 3
        return state.failed("UNKNOWN_EVENT", i, ("type",))
    content = kind in CONTENT_TYPES
    if state.start_id is None and (content or kind == "response_end"):  # rule 4
        return state.failed("MISSING_START", i)
    if state.start_id is not None and kind == "response_start":
        return state.failed("DUPLICATE_START", i)
    problems = payload_problems(record, kinds[kind])  # rule 5
    if problems:
        return state.failed("MALFORMED_EVENT", i, *problems)
    return _mean(state, i, kind, record)


def _mean(state: _State, i: int, kind: str, record: dict[str, object]) -> Failed | None:
    """Rule 6, in the SPEC's order, then the normal course of things."""
    if kind == "transport_error":
        failure = state.failed("TRANSPORT_ERROR", i)
        retry_after = record.get("retryAfter")
        transport = {
            "message": record["message"],
            "code": record.get("code"),
            "status": record.get("status"),
            "retryAfter": None if retry_after is None else float(retry_after),  # type: ignore[arg-type]
        }
        return dataclasses.replace(failure, transport=transport)
    if kind == "response_start":
        state.start_id = record["responseId"]  # type: ignore[assignment]
        usage = record.get("usage")
        state.start = {
            "model": record.get("model"),
            "usage": None if usage is None else _usage_dict(usage),  # type: ignore[arg-type]
        }
        return None
    if kind == "tool_call" and record["id"] in state.call_ids:  # version 1's check first
        return state.failed("DUPLICATE_TOOL_CALL", i, ("id",))
    if kind == "thinking_signature" and state.thinking is None:
        return state.failed("OUT_OF_ORDER", i)
    if kind in CONTENT_TYPES and state.incomplete:
        return state.failed("OUT_OF_ORDER", i)
    if kind == "tool_call_incomplete" and record["id"] in state.call_ids:
        return state.failed("DUPLICATE_TOOL_CALL", i, ("id",))
    if kind == "response_end":
        return _end(state, i, record)
    _content(state, kind, record)
    return None


def _content(state: _State, kind: str, record: dict[str, object]) -> None:
    """An accepted content record: its chunk, and its block (new, or the open one)."""
    open_thinking, state.thinking = state.thinking, None  # any content record closes it...
    if kind == "text_delta":
        state.emit(
            {"type": "textDelta", "text": record["text"]}, {"type": "text", "text": record["text"]}
        )
    elif kind == "tool_call":
        call = {key: record[key] for key in ("id", "name", "arguments")}
        if "signature" in record:
            call["signature"] = record["signature"]
        state.call_ids.add(record["id"])  # type: ignore[arg-type]
        state.calls = True
        state.emit({"type": "toolCall", **call}, {"type": "toolCall", **call})
    elif kind == "tool_call_incomplete":
        call = {
            "id": record["id"],
            "name": record["name"],
            "argumentsText": "".join(record["argumentFragments"]),  # type: ignore[arg-type]
        }
        state.call_ids.add(record["id"])  # type: ignore[arg-type]
        state.incomplete = True
        state.emit({"type": "incompleteToolCall", **call}, {"type": "incompleteToolCall", **call})
    elif kind == "thinking_delta":
        delta = record["text"]
        if open_thinking is None:
            state.emit(
                {"type": "thinkingDelta", "text": delta}, {"type": "thinking", "text": delta}
            )
        else:
            block = state.content[open_thinking]
            block["text"] = str(block["text"]) + str(delta)
            state.emit({"type": "thinkingDelta", "text": delta}, None)
        state.thinking = len(state.content) - 1  # ...but a thinking delta keeps it open
    elif kind == "thinking_signature":
        assert open_thinking is not None
        state.content[open_thinking]["signature"] = record["signature"]
        state.emit({"type": "thinkingSignature", "signature": record["signature"]}, None)
    elif kind == "redacted_thinking":
        data = record["data"]
        state.emit(
            {"type": "redactedThinking", "data": data}, {"type": "redactedThinking", "data": data}
        )
    else:
        assert kind == "refusal_delta"
        state.refused = True
        delta = record["text"]
        state.emit({"type": "refusalDelta", "text": delta}, {"type": "refusal", "text": delta})


def _end(state: _State, i: int, record: dict[str, object]) -> Failed | None:
    if record["responseId"] != state.start_id:
        return state.failed("RESPONSE_MISMATCH", i, ("responseId",))
    stop_reason = record["stopReason"]
    if (stop_reason == "tool_call" and not state.calls) or (stop_reason == "stop" and state.calls):
        return state.failed("STOP_REASON_MISMATCH", i, ("stopReason",))
    if (state.incomplete and stop_reason != "length") or (
        state.refused and stop_reason != "refusal"
    ):
        return state.failed("STOP_REASON_MISMATCH", i, ("stopReason",))
    response: dict[str, object] = {
        "requestId": state.request_id,
        "responseId": state.start_id,
        "message": {
            "id": f"message-{state.start_id}",
            "role": "assistant",
            "content": state.content,
        },
        "stopReason": STOP_REASONS[stop_reason],  # type: ignore[index]
        "usage": _usage_dict(record["usage"]),  # type: ignore[arg-type]
    }
    model = state.start.get("model") if type(state.start) is dict else None
    if model is not None:
        response["model"] = model
    if "providerStopReason" in record:
        response["providerStopReason"] = record["providerStopReason"]
    state.response = response
    return None


def predict_response(
    records: list[object], request_id: str, version: int = 1, *, source: bool = False
) -> Prediction:
    """One response's records; ``source``: they come from an async source, so each is
    checked as plain JSON as it arrives (not at construction)."""
    state = _State(version, request_id)
    for i, record in enumerate(records):
        if source and not plain(record, 5):  # a record sits at level 5
            # The SPEC does not say whether a record that is not plain JSON waits for its
            # delay first: its time is left open (None).
            refused = state.failed("INVALID_FIXTURE", i, *unplain(record, 5))
            return dataclasses.replace(refused, time=None)
        state.time += delay_of(record, version)  # waited before the record is judged
        failure = _judge(state, i, record)
        if failure is not None:
            return failure
    if state.response is None:
        return state.failed("MISSING_TERMINAL", None)
    return Completed(state.chunks, state.response, state.chunk_times, state.time, state.start)


def predict_fixture(
    fixture: object, request_ids: list[str], *, sources: bool = False
) -> list[Prediction] | None:
    """Each response's prediction, or ``None`` if construction must fail.

    ``request_ids[n]`` is the id of the request that streams response ``n``. With
    ``sources``, each response's records are to be fed through an async source, so
    construction does not see them.
    """
    if type(fixture) is not dict or set(fixture) != {"schemaVersion", "responses"}:
        return None
    version, responses = fixture["schemaVersion"], fixture["responses"]
    if type(version) is not int or version not in (1, 2) or type(responses) is not list:
        return None
    for response in responses:
        if type(response) is not dict or set(response) != {"records"}:
            return None
        records = response["records"]
        if type(records) is not list or not (sources or plain(records, 4)):
            return None
    return [
        predict_response(response["records"], request_id, version, source=sources)
        for response, request_id in zip(responses, request_ids, strict=False)
    ]


def shape_ok(fixture: object) -> bool:
    """Whether ``fixture`` has a right shape throughout, in the sense a JSON Schema can
    express: the fixture and each response closed, ``schemaVersion`` 1 or 2, and every
    record (in any order, however many) one of its version's types with a right payload,
    the usage sums and ``argumentFragments`` against ``arguments`` aside. (JSON Schema also
    counts ``1.0`` as an integer and knows no nesting limit: callers keep those out.)"""
    if type(fixture) is not dict or set(fixture) != {"schemaVersion", "responses"}:
        return False
    version, responses = fixture["schemaVersion"], fixture["responses"]
    if type(version) is not int or version not in (1, 2) or type(responses) is not list:
        return False
    kinds = payloads(version)
    for response in responses:
        if type(response) is not dict or set(response) != {"records"}:
            return False
        if type(response["records"]) is not list:
            return False
        for record in response["records"]:
            kind = record.get("type") if type(record) is dict else None
            if type(kind) is not str or kind not in kinds:
                return False
            assert type(record) is dict
            if payload_problems(record, kinds[kind], shape_only=True):
                return False
    return True

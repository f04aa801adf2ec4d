"""Hypothesis strategies: valid plain-JSON fixtures, and mutations aimed at every rule.

Everything here is plain JSON as ``json.loads`` returns it (``dict``, ``list``, ``str``,
``int``, finite ``float``, ``bool``, ``None``), so ``tests/oracle.py`` can judge it. The
mutations are chosen to land on the boundaries of the SPEC's "which code wins" rules:
records after the terminal, non-objects and non-string types, unknown types before the
start, order errors with broken payloads, payload errors with broken meaning, and the
meaning rules against each other (response mismatch against stop-reason mismatch).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable

from hypothesis import strategies as st

from .oracle import CONTENT_TYPES, fragments_equal

__all__ = [
    "DELAY_EDGES",
    "FAMILIES_V2",
    "MAX_TOKENS",
    "RETRY_EDGES",
    "STATUS_EDGES",
    "V2_ONLY_FAMILIES",
    "V2_STOP_WORDS",
    "V2_TYPES",
    "any_delays",
    "arguments",
    "fragments_of",
    "json_values",
    "mutated_fixtures",
    "mutated_fixtures_v2",
    "mutated_records",
    "mutated_records_v2",
    "no_delays",
    "odd_values",
    "once_mutated_v2",
    "record_like",
    "record_like_v2",
    "sdk_arguments",
    "strings",
    "usage_v2",
    "v1_records_with_v2_mutations",
    "valid_fixtures",
    "valid_fixtures_v2",
    "valid_records",
    "valid_records_v2",
    "zero_delays",
]

MAX_TOKENS = 2**53 - 1

Records = list[object]
Fixture = dict[str, object]

# Characters that matter: plain ASCII, the rest of Unicode, and lone surrogates
# (valid Python strings that json.loads returns for "\ud800"; they must pass unchanged).
_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_CHARACTERS = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(codec=None, categories=None, exclude_categories=()),
    _SURROGATES,
)
strings = st.text(_CHARACTERS, max_size=6)
"""Any string, empty included."""

_KEYS = st.one_of(
    strings,
    st.sampled_from(
        ["__proto__", "constructor", "__class__", "__dict__", "type", "id", "toString", ""]
    ),
)

_IDS = st.one_of(st.sampled_from(["r-1", "r-2", "call-1", "call-2", "x"]), strings)
"""Ids drawn from a small pool, so that mismatches and duplicates happen often."""
_NON_EMPTY_IDS = _IDS.filter(bool)


def _nines(digits: int) -> int:
    """The largest integer of ``abs(digits)`` decimal digits, negative if ``digits`` is."""
    value: int = 10 ** abs(digits) - 1
    return value if digits > 0 else -value


_INTEGERS = st.one_of(
    st.integers(),
    st.sampled_from([0, 1, -1, MAX_TOKENS, MAX_TOKENS + 1]),
    st.sampled_from([4300, -4300]).map(_nines),  # the longest ints plain JSON allows
)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
_SCALARS = st.one_of(st.none(), st.booleans(), _INTEGERS, _FLOATS, strings)

json_values = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=6,
)
"""Any plain JSON value (shallow)."""

arguments = st.dictionaries(_KEYS, json_values, max_size=2)
"""Tool-call arguments: a JSON object."""

_NO_SURROGATES = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
sdk_arguments: st.SearchStrategy[dict[str, object]] = st.dictionaries(
    _NO_SURROGATES,
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | _NO_SURROGATES,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(_NO_SURROGATES, inner, max_size=3)
        ),
        max_leaves=6,
    ),
    max_size=3,
)
"""Tool-call arguments every vendor SDK reads back: no lone surrogates, which Anthropic's
partial-JSON parser (jiter) refuses."""

odd_values = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            1,
            -1,
            1.0,
            0.0,
            MAX_TOKENS,
            MAX_TOKENS + 1,
            "",
            "x",
            "r-1",
            "call-1",
            "assistant",
            "Assistant",
            "user",
            "stop",
            "tool_call",
            "toolCall",
            "response_start",
            "response_end",
            [],
            {},
            ["r-1"],
            {"inputTokens": 1, "outputTokens": 1},
        ]
    ).map(copy.deepcopy),  # a container of its own each draw: a later mutation may change it
    json_values,
)
"""Values for retyped fields: every type, and the values the rules compare against."""

_UNKNOWN_KEYS = st.sampled_from(
    [
        "extra",
        "Type",
        "response_id",
        "stop_reason",
        "inputTokens",
        "input_tokens",
        "__proto__",
        "constructor",
        "code",
        "usage",
        "",
    ]
)

_COUNTS = st.one_of(st.integers(0, MAX_TOKENS), st.sampled_from([0, MAX_TOKENS]))


@st.composite
def _usage(draw: st.DrawFn) -> dict[str, object]:
    input_key = draw(st.sampled_from(["inputTokens", "input_tokens"]))
    output_key = draw(st.sampled_from(["outputTokens", "output_tokens"]))
    usage: dict[str, object] = {input_key: draw(_COUNTS), output_key: draw(_COUNTS)}
    return _shuffled(draw, usage)


def _shuffled(draw: st.DrawFn, record: dict[str, object]) -> dict[str, object]:
    """The same object with its keys in a drawn order (order must never matter)."""
    keys = draw(st.permutations(list(record)))
    return {key: record[key] for key in keys}


def _start(draw: st.DrawFn, response_id: str) -> dict[str, object]:
    return _shuffled(
        draw, {"type": "response_start", "responseId": response_id, "role": "assistant"}
    )


def _text(draw: st.DrawFn) -> dict[str, object]:
    return _shuffled(draw, {"type": "text_delta", "text": draw(strings)})


def _tool(draw: st.DrawFn, call_id: str) -> dict[str, object]:
    return _shuffled(
        draw,
        {
            "type": "tool_call",
            "id": call_id,
            "name": draw(_NON_EMPTY_IDS),
            "arguments": draw(arguments),
        },
    )


def _end(draw: st.DrawFn, response_id: str, stop_reason: str) -> dict[str, object]:
    return _shuffled(
        draw,
        {
            "type": "response_end",
            "responseId": response_id,
            "stopReason": stop_reason,
            "usage": draw(_usage()),
        },
    )


def _transport_error(draw: st.DrawFn) -> dict[str, object]:
    record: dict[str, object] = {"type": "transport_error", "message": draw(strings)}
    if draw(st.booleans()):
        record["code"] = draw(strings)
    return _shuffled(draw, record)


@st.composite
def valid_records(draw: st.DrawFn) -> Records:
    """The records of one response that completes: start, text and tools, end."""
    response_id = draw(_NON_EMPTY_IDS)
    kinds = draw(st.lists(st.sampled_from(["text", "tool"]), max_size=5))
    call_ids = iter(
        draw(
            st.lists(
                _NON_EMPTY_IDS,
                min_size=kinds.count("tool"),
                max_size=kinds.count("tool"),
                unique=True,
            )
        )
    )
    body = [_text(draw) if kind == "text" else _tool(draw, next(call_ids)) for kind in kinds]
    stop_reason = "tool_call" if "tool" in kinds else "stop"
    return [_start(draw, response_id), *body, _end(draw, response_id, stop_reason)]


_RECORD_KINDS = (
    "response_start",
    "text_delta",
    "tool_call",
    "response_end",
    "transport_error",
    "unknown type",
    "no string type",
    "not an object",
)


@st.composite
def record_like(draw: st.DrawFn) -> object:
    """One record of any kind: the five (intact or with a broken payload), a type
    outside the five, no string type, or not an object at all."""
    kind = draw(st.sampled_from(_RECORD_KINDS))
    record: dict[str, object]
    if kind == "response_start":
        record = _start(draw, draw(_IDS))
    elif kind == "text_delta":
        record = _text(draw)
    elif kind == "tool_call":
        record = _tool(draw, draw(_IDS))
    elif kind == "response_end":
        record = _end(draw, draw(_IDS), draw(st.sampled_from(["stop", "tool_call"])))
    elif kind == "transport_error":
        record = _transport_error(draw)
    elif kind == "unknown type":
        name = draw(
            st.one_of(
                st.sampled_from(["", "TEXT_DELTA", "response-end", "error", "toolCall"]),
                strings,
            ).filter(lambda name: name not in _RECORD_KINDS)
        )
        return {"type": name, **draw(st.dictionaries(_UNKNOWN_KEYS, json_values, max_size=2))}
    elif kind == "no string type":
        record = draw(st.dictionaries(_UNKNOWN_KEYS, json_values, max_size=2))
        if draw(st.booleans()):
            record["type"] = draw(odd_values.filter(lambda v: type(v) is not str))
        return record
    else:
        return draw(st.one_of(_SCALARS, st.lists(json_values, max_size=2)))
    if draw(st.booleans()):
        _break_payload(draw, record)
    return record


def _break_payload(draw: st.DrawFn, record: dict[str, object]) -> None:
    """Make the payload wrong for rule 5: a field retyped or removed, or an unknown key."""
    keys = sorted(key for key in record if key != "type")
    how = draw(st.integers(0, 2))
    if how == 0 and keys:
        key = draw(st.sampled_from(keys))
        kind = type(record[key])
        record[key] = draw(odd_values.filter(lambda v: type(v) is not kind))
    elif how == 1 and keys:
        del record[draw(st.sampled_from(keys))]
    else:
        record[draw(_UNKNOWN_KEYS.filter(lambda key: key not in record))] = draw(odd_values)


# -- record-level mutations ------------------------------------------------------------
# Each takes the drawing function and a response's record list, and changes the list.

Mutation = Callable[[st.DrawFn, Records], None]


def _index(draw: st.DrawFn, records: Records, *, extra: int = 0) -> int:
    return draw(st.integers(0, len(records) - 1 + extra))


def _field(record: object, key: str) -> object:
    """``record[key]`` if ``record`` is an object holding ``key``, else ``None``."""
    return record.get(key) if type(record) is dict else None


def _objects(records: Records, kind: str | None = None) -> list[dict[str, object]]:
    return [r for r in records if type(r) is dict and (kind is None or r.get("type") == kind)]


def drop(draw: st.DrawFn, records: Records) -> None:
    if records:
        del records[_index(draw, records)]


def duplicate(draw: st.DrawFn, records: Records) -> None:
    if records:
        record = copy.deepcopy(records[_index(draw, records)])
        records.insert(_index(draw, records, extra=1), record)


def swap(draw: st.DrawFn, records: Records) -> None:
    if records:
        i, j = _index(draw, records), _index(draw, records)
        records[i], records[j] = records[j], records[i]


def reorder(draw: st.DrawFn, records: Records) -> None:
    records[:] = draw(st.permutations(records))


def truncate(draw: st.DrawFn, records: Records) -> None:
    del records[_index(draw, records, extra=1) :]


def insert(draw: st.DrawFn, records: Records) -> None:
    # Mostly after the start: before it, nearly everything is a missing start.
    after_start = draw(st.integers(0, 4)) > 0
    low = 1 if records and after_start else 0
    records.insert(draw(st.integers(low, len(records))), draw(record_like()))


def prepend(draw: st.DrawFn, records: Records) -> None:
    records.insert(0, draw(record_like()))


def append_after_terminal(draw: st.DrawFn, records: Records) -> None:
    # A second end (intact or broken) or anything else: rule 1 must beat them all.
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            record = _end(draw, draw(_IDS), draw(st.sampled_from(["stop", "tool_call"])))
            if draw(st.booleans()):
                _break_payload(draw, record)
            records.append(record)
        else:
            records.append(draw(record_like()))


def retype_field(draw: st.DrawFn, records: Records) -> None:
    targets = _objects(records)
    if targets:
        record = draw(st.sampled_from(targets))
        if record:
            record[draw(st.sampled_from(sorted(record)))] = draw(odd_values)


def delete_field(draw: st.DrawFn, records: Records) -> None:
    targets = [r for r in _objects(records) if r]
    if targets:
        record = draw(st.sampled_from(targets))
        del record[draw(st.sampled_from(sorted(record)))]


def add_unknown_key(draw: st.DrawFn, records: Records) -> None:
    targets = _objects(records)
    if targets:
        record = draw(st.sampled_from(targets))
        record[draw(_UNKNOWN_KEYS.filter(lambda key: key not in record))] = draw(odd_values)


def _usages(records: Records) -> list[dict[str, object]]:
    return [
        r["usage"]  # type: ignore[misc]
        for r in _objects(records, "response_end")
        if type(r.get("usage")) is dict
    ]


def duplicate_usage_alias(draw: st.DrawFn, records: Records) -> None:
    usages = _usages(records)
    if usages:
        usage = draw(st.sampled_from(usages))
        pair = draw(
            st.sampled_from([("inputTokens", "input_tokens"), ("outputTokens", "output_tokens")])
        )
        # Add whichever alias is absent (or overwrite one): presence is what counts.
        key = pair[1] if pair[0] in usage else pair[0]
        usage[key] = draw(st.one_of(st.none(), _COUNTS, odd_values))


def break_usage(draw: st.DrawFn, records: Records) -> None:
    usages = _usages(records)
    if usages:
        usage = draw(st.sampled_from(usages))
        how = draw(st.integers(0, 2))
        if how == 0 and usage:
            usage[draw(st.sampled_from(sorted(usage)))] = draw(
                st.one_of(
                    st.sampled_from([-1, 0, MAX_TOKENS, MAX_TOKENS + 1, True, False, 1.0, None]),
                    odd_values,
                )
            )
        elif how == 1 and usage:
            del usage[draw(st.sampled_from(sorted(usage)))]
        else:
            usage[draw(_UNKNOWN_KEYS.filter(lambda key: key not in usage))] = 1


def mismatch_id(draw: st.DrawFn, records: Records) -> None:
    targets = [
        r
        for r in _objects(records)
        if r.get("type") in ("response_start", "response_end", "tool_call")
    ]
    if not targets:
        return
    record = draw(st.sampled_from(targets))
    if record.get("type") == "tool_call":
        others = [r.get("id") for r in _objects(records, "tool_call") if r is not record]
        choices = st.sampled_from(others) if others else _IDS
        record["id"] = draw(st.one_of(choices, _IDS))
    else:
        record["responseId"] = draw(st.one_of(_IDS, odd_values))


def repeat_call_id(draw: st.DrawFn, records: Records) -> None:
    """Insert, after a tool call, another one with the same id (its payload may be broken)."""
    calls = [i for i, r in enumerate(records) if _field(r, "type") == "tool_call"]
    if calls:
        i = draw(st.sampled_from(calls))
        record = _tool(draw, _field(records[i], "id"))  # type: ignore[arg-type]
        if draw(st.booleans()):
            _break_payload(draw, record)
        records.insert(draw(st.integers(i + 1, len(records))), record)


def mismatch_end(draw: st.DrawFn, records: Records) -> None:
    """Give an end another response id, and maybe a contradicting stop reason too."""
    ends = _objects(records, "response_end")
    if ends:
        record = draw(st.sampled_from(ends))
        record["responseId"] = draw(
            st.one_of(st.sampled_from(["r-2", "", "R-1"]), _IDS).filter(
                lambda new: new != record.get("responseId")
            )
        )
        if draw(st.booleans()):
            flip_stop_reason(draw, records)


def flip_stop_reason(draw: st.DrawFn, records: Records) -> None:
    ends = _objects(records, "response_end")
    if ends:
        record = draw(st.sampled_from(ends))
        flipped = "stop" if record.get("stopReason") == "tool_call" else "tool_call"
        record["stopReason"] = draw(
            st.one_of(st.just(flipped), st.sampled_from(["toolCall", "STOP", ""]))
        )


# Mutations are drawn by family, so that the families aimed at later rules are not
# drowned out by the ones that move whole records (which mostly lose the start).
_FAMILIES: tuple[tuple[Mutation, ...], ...] = (
    (drop, duplicate, swap, reorder, truncate),
    (insert,),
    (insert,),
    (prepend,),
    (append_after_terminal,),
    (retype_field, delete_field, add_unknown_key),
    (duplicate_usage_alias, break_usage),
    (mismatch_id, mismatch_end),
    (repeat_call_id,),
    (flip_stop_reason, mismatch_end),
)


@st.composite
def mutated_records(draw: st.DrawFn, max_mutations: int = 3) -> Records:
    """The records of one response, after 1 to ``max_mutations`` mutations."""
    records = draw(valid_records())
    # One mutation half the time: rules that need the rest intact (rule 1) come up often.
    for _ in range(draw(st.one_of(st.just(1), st.integers(1, max_mutations)))):
        draw(st.sampled_from(draw(st.sampled_from(_FAMILIES))))(draw, records)
    return records


@st.composite
def valid_fixtures(draw: st.DrawFn) -> Fixture:
    """A schema-1 fixture whose every response completes."""
    responses = draw(st.lists(valid_records(), max_size=3))
    return {"schemaVersion": 1, "responses": [{"records": r} for r in responses]}


# -- fixture-level mutations: all PROVIDER_INVALID_FIXTURE at construction, or harmless -----


def _fixture_mutation(draw: st.DrawFn, fixture: Fixture) -> object:
    """Break the fixture's own shape in one drawn way; returns the new fixture root."""
    responses = fixture["responses"]
    assert type(responses) is list
    how = draw(st.integers(0, 7))
    if how == 0:
        fixture["schemaVersion"] = draw(
            st.one_of(st.sampled_from([True, 1.0, 2, 0, "1", None, [1]]), odd_values)
        )
    elif how == 1:
        del fixture[draw(st.sampled_from(["schemaVersion", "responses"]))]
    elif how == 2:
        fixture[draw(_UNKNOWN_KEYS.filter(lambda key: key not in fixture))] = draw(odd_values)
    elif how == 3:
        fixture["responses"] = draw(odd_values.filter(lambda v: type(v) is not list))
    elif how == 4 and responses:
        response = draw(st.sampled_from(responses))
        if draw(st.booleans()):
            response[draw(_UNKNOWN_KEYS)] = draw(odd_values)
        else:
            response.clear()
    elif how == 5 and responses:
        response = draw(st.sampled_from(responses))
        response["records"] = draw(odd_values.filter(lambda v: type(v) is not list))
    elif how == 6 and responses:
        responses[_index(draw, responses)] = draw(
            st.one_of(odd_values.filter(lambda v: type(v) is not dict), st.just([]))
        )
    elif how == 7:
        return draw(st.one_of(st.lists(json_values, max_size=2), _SCALARS))
    return fixture


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> object:
    """A fixture after record mutations in its responses, and rarely a shape mutation."""
    responses = draw(st.lists(mutated_records(), max_size=3))
    fixture: Fixture = {"schemaVersion": 1, "responses": [{"records": r} for r in responses]}
    if draw(st.integers(0, 9)) == 7:  # not 0: Hypothesis favours boundaries
        return _fixture_mutation(draw, fixture)
    return fixture


# == schema version 2 ===================================================================
# Separate strategies, so that every version-1 strategy above draws exactly what it drew
# before. ``delays`` says which valid delays a valid record may carry (``None``: no
# ``delay`` key); only a stream run on a virtual clock (``tests/virtual_clock.py``) should
# get delays above 0.

Delays = st.SearchStrategy[int | float | None]

no_delays: Delays = st.none()
"""No ``delay`` key at all."""
zero_delays: Delays = st.sampled_from([None, None, 0, 0.0])
"""Absent or zero: nothing waits, so any event loop (or none) will do."""
any_delays: Delays = st.one_of(
    st.none(),
    st.sampled_from([0, 0.0, 1, 0.25, 3600, 3600.0, 5e-324, math.nextafter(3600, 0)]),
    st.integers(0, 3600),
    st.floats(0, 3600),
)
"""Every valid delay, the boundaries included."""

V2_STOP_WORDS = ("length", "content_filter", "refusal", "pause_turn")
V2_TYPES = (
    "tool_call_incomplete",
    "thinking_delta",
    "thinking_signature",
    "redacted_thinking",
    "refusal_delta",
)

DELAY_EDGES: list[object] = [
    True,
    False,
    -1,
    -0.0,
    0,
    0.0,
    3600,
    3600.0,
    3600.0001,
    math.nextafter(3600, math.inf),
    3601,
    -5e-324,
    5e-324,
    10**20,
    10**400,
    -(10**400),
    "1",
    None,
    [],
    {},
]
"""Delays on either side of every boundary (NaN and infinity are not plain JSON: they
come up, rarely, in ``set_delay``)."""
STATUS_EDGES: list[object] = [399, 400, 401, 429, 500, 529, 599, 600, 200, 0, -429, True]
STATUS_EDGES += [429.0, 400.0, "429", None, 10**20, 10**400, [429]]
RETRY_EDGES: list[object] = [-1, -0.0, 0, 0.0, 1, 1.5, 86400, 86400.0, 86400.0001, 86401]
RETRY_EDGES += [True, False, "1", None, 5e-324, -5e-324, 10**20, 10**400]
RETRY_EDGES += [math.nextafter(86400, math.inf)]

_PROVIDER_WORDS = st.sampled_from(
    ["max_tokens", "end_turn", "length", "MAX_TOKENS", "content_filter", "refusal", "x"]
)
_MODELS = st.one_of(st.sampled_from(["gpt-4o", "claude-sonnet-4-5", "m"]), strings.filter(bool))
_OPAQUE = st.one_of(st.sampled_from(["sig-1", "EqQBCgYIAhgCIAE=", "s"]), strings.filter(bool))


def _with_delay(draw: st.DrawFn, record: dict[str, object], delays: Delays) -> dict[str, object]:
    delay = draw(delays)
    if delay is not None:
        record["delay"] = delay
    return _shuffled(draw, record)


@st.composite
def usage_v2(draw: st.DrawFn, exact: bool = False) -> dict[str, object]:
    """A version-2 usage that keeps the sums (``exact``: each sum at its bound)."""
    total_in, total_out = draw(_COUNTS), draw(_COUNTS)
    read = draw(st.one_of(st.integers(0, total_in), st.just(total_in)))
    write = total_in - read if exact else draw(st.integers(0, total_in - read))
    reasoning = total_out if exact else draw(st.integers(0, total_out))
    usage: dict[str, object] = {}
    for pair, value, needed in (
        (("inputTokens", "input_tokens"), total_in, True),
        (("outputTokens", "output_tokens"), total_out, True),
        (("cacheReadTokens", "cache_read_tokens"), read, False),
        (("cacheWriteTokens", "cache_write_tokens"), write, False),
        (("reasoningTokens", "reasoning_tokens"), reasoning, False),
    ):
        if needed or exact or draw(st.booleans()):
            usage[draw(st.sampled_from(pair))] = value
    return _shuffled(draw, usage)


def fragments_of(draw: st.DrawFn, value: object) -> list[str] | None:
    """``value`` as JSON text in a drawn style, cut into drawn fragments (empty ones
    too); ``None`` when the text would not read back equal (a surrogate pair)."""
    text = json.dumps(
        value,
        separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")])),
        sort_keys=draw(st.booleans()),
        indent=draw(st.sampled_from([None, None, 1])),
    )
    if value == {} and draw(st.booleans()):
        text = ""  # an empty concatenation stands for {}
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return pieces if fragments_equal(pieces, value) else None


def _start_v2(draw: st.DrawFn, response_id: str, delays: Delays) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "response_start",
        "responseId": response_id,
        "role": "assistant",
    }
    if draw(st.booleans()):
        record["model"] = draw(_MODELS)
    if draw(st.integers(0, 3)) == 0:
        record["usage"] = draw(usage_v2())
    return _with_delay(draw, record, delays)


def _tool_v2(draw: st.DrawFn, call_id: str, delays: Delays) -> dict[str, object]:
    args = draw(arguments)
    record: dict[str, object] = {
        "type": "tool_call",
        "id": call_id,
        "name": draw(_NON_EMPTY_IDS),
        "arguments": args,
    }
    if draw(st.booleans()):
        fragments = fragments_of(draw, args)
        if fragments:
            record["argumentFragments"] = fragments
    if draw(st.integers(0, 3)) == 0:
        record["signature"] = draw(_OPAQUE)
    return _with_delay(draw, record, delays)


def _incomplete(draw: st.DrawFn, call_id: str, delays: Delays) -> dict[str, object]:
    whole = json.dumps(draw(arguments))
    cut = draw(st.integers(0, len(whole)))
    fragments = draw(
        st.one_of(
            st.lists(strings, max_size=3),
            st.just([whole[:cut]] if cut else []),
            st.just([whole[:cut], whole[cut:]]),
        )
    )
    record: dict[str, object] = {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": draw(_NON_EMPTY_IDS),
        "argumentFragments": fragments,
    }
    return _with_delay(draw, record, delays)


def _simple(draw: st.DrawFn, kind: str, delays: Delays) -> dict[str, object]:
    """One ``text_delta``, ``thinking_delta``, ``thinking_signature``,
    ``redacted_thinking`` or ``refusal_delta``."""
    key, values = {
        "text_delta": ("text", strings),
        "thinking_delta": ("text", strings),
        "refusal_delta": ("text", strings),
        "thinking_signature": ("signature", _OPAQUE),
        "redacted_thinking": ("data", _OPAQUE),
    }[kind]
    return _with_delay(draw, {"type": kind, key: draw(values)}, delays)


def _end_v2(
    draw: st.DrawFn, response_id: str, stop_reason: str, delays: Delays
) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": stop_reason,
        "usage": draw(st.one_of(_usage(), usage_v2(), usage_v2(exact=True))),
    }
    if draw(st.integers(0, 2)) == 0:
        record["providerStopReason"] = draw(_PROVIDER_WORDS)
    return _with_delay(draw, record, delays)


def _transport_error_v2(draw: st.DrawFn, delays: Delays) -> dict[str, object]:
    record: dict[str, object] = {"type": "transport_error", "message": draw(strings)}
    if draw(st.booleans()):
        record["code"] = draw(strings)
    if draw(st.booleans()):
        record["status"] = draw(
            st.one_of(st.sampled_from([400, 429, 529, 599]), st.integers(400, 599))
        )
    if draw(st.booleans()):
        record["retryAfter"] = draw(
            st.one_of(st.sampled_from([0, 1, 0.5, 86400]), st.floats(0, 86400))
        )
    return _with_delay(draw, record, delays)


_BODY_KINDS = ("text", "text", "tool", "tool", "thinking", "thinking", "redacted", "refusal")
"""Weighted so that a refusal (which decides the end) is in about one response in four."""


@st.composite
def valid_records_v2(draw: st.DrawFn, delays: Delays = zero_delays) -> Records:
    """The records of one version-2 response that completes: a start, text, tool calls,
    thinking blocks (signed or not), redacted thinking, refusals, perhaps an incomplete
    call last, and an end whose stop reason they allow."""
    response_id = draw(_NON_EMPTY_IDS)
    kinds = draw(st.lists(st.sampled_from(_BODY_KINDS), max_size=5))
    # A refusal needs a `refusal` end and an incomplete call a `length` end: never both.
    incomplete = "refusal" not in kinds and draw(st.integers(0, 3)) == 0
    calls = kinds.count("tool") + incomplete
    ids = iter(draw(st.lists(_NON_EMPTY_IDS, min_size=calls, max_size=calls, unique=True)))
    body: Records = []
    for kind in kinds:
        if kind == "text":
            body.append(_simple(draw, "text_delta", delays))
        elif kind == "tool":
            body.append(_tool_v2(draw, next(ids), delays))
        elif kind == "thinking":
            body += [
                _simple(draw, "thinking_delta", delays) for _ in range(draw(st.integers(1, 3)))
            ]
            if draw(st.booleans()):
                body.append(_simple(draw, "thinking_signature", delays))
        elif kind == "redacted":
            body.append(_simple(draw, "redacted_thinking", delays))
        else:
            body.append(_simple(draw, "refusal_delta", delays))
    if incomplete:
        body.append(_incomplete(draw, next(ids), delays))
        stop_reason = "length"
    elif "refusal" in kinds:
        stop_reason = "refusal"
    else:
        first = "tool_call" if "tool" in kinds else "stop"
        stop_reason = draw(st.sampled_from([first, first, *V2_STOP_WORDS]))
    return [
        _start_v2(draw, response_id, delays),
        *body,
        _end_v2(draw, response_id, stop_reason, delays),
    ]


_RECORD_KINDS_V2 = (*_RECORD_KINDS, *V2_TYPES)


@st.composite
def record_like_v2(draw: st.DrawFn, delays: Delays = zero_delays) -> object:
    """One record of any kind: the ten (intact or with a broken payload), a type
    outside the ten, no string type, or not an object at all."""
    kind = draw(st.sampled_from(_RECORD_KINDS_V2))
    record: dict[str, object]
    if kind == "response_start":
        record = _start_v2(draw, draw(_IDS), delays)
    elif kind == "tool_call":
        record = _tool_v2(draw, draw(_IDS), delays)
    elif kind == "tool_call_incomplete":
        record = _incomplete(draw, draw(_IDS), delays)
    elif kind == "response_end":
        words = st.sampled_from(["stop", "tool_call", *V2_STOP_WORDS])
        record = _end_v2(draw, draw(_IDS), draw(words), delays)
    elif kind == "transport_error":
        record = _transport_error_v2(draw, delays)
    elif kind == "unknown type":
        name = draw(
            st.one_of(
                st.sampled_from(["THINKING_DELTA", "thinking", "refusal", "tool_call_done"]),
                strings,
            ).filter(lambda name: name not in _RECORD_KINDS_V2)
        )
        return {"type": name, **draw(st.dictionaries(_UNKNOWN_KEYS, json_values, max_size=2))}
    elif kind == "no string type":
        record = draw(st.dictionaries(_UNKNOWN_KEYS, json_values, max_size=2))
        if draw(st.booleans()):
            record["type"] = draw(odd_values.filter(lambda v: type(v) is not str))
        return record
    elif kind == "not an object":
        return draw(st.one_of(_SCALARS, st.lists(json_values, max_size=2)))
    else:
        record = _simple(draw, "text_delta" if kind == "text_delta" else kind, delays)
    if draw(st.booleans()):
        _break_payload(draw, record)
    return record


# -- version-2 record-level mutations ---------------------------------------------------
# Each lands on one boundary of a version-2 rule; ``delays`` bounds the valid delays
# they may write (the invalid ones never wait).

MutationV2 = Callable[[st.DrawFn, Records, Delays], None]


def _after_start(draw: st.DrawFn, records: Records) -> int:
    return draw(st.integers(1 if records else 0, len(records)))


def _content_record(draw: st.DrawFn, records: Records, delays: Delays) -> dict[str, object]:
    """A well-formed content record of a drawn kind (a call id from the pool)."""
    kind = draw(st.sampled_from(sorted(CONTENT_TYPES)))
    if kind == "tool_call":
        return _tool_v2(draw, draw(_IDS.filter(bool)), delays)
    if kind == "tool_call_incomplete":
        return _incomplete(draw, draw(_IDS.filter(bool)), delays)
    return _simple(draw, kind, delays)


def set_delay(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    targets = _objects(records)
    if targets:
        record = draw(st.sampled_from(targets))
        valid = delays.filter(lambda d: d is not None)
        edges = st.sampled_from([d for d in DELAY_EDGES if not _waits(d)])
        rare = st.sampled_from([math.nan, math.inf, -math.inf])
        record["delay"] = draw(st.one_of(valid, edges, edges, rare))


def _waits(delay: object) -> bool:
    """A valid delay above 0 (these come only from ``delays``)."""
    return type(delay) in (int, float) and 0 < delay <= 3600  # type: ignore[operator]


def set_status(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    errors = _objects(records, "transport_error")
    if not errors or draw(st.booleans()):
        errors = [_transport_error_v2(draw, delays)]
        records.insert(_after_start(draw, records), errors[0])
    record = draw(st.sampled_from(errors))
    key = draw(st.sampled_from(["status", "retryAfter"]))
    record[key] = draw(st.sampled_from(STATUS_EDGES if key == "status" else RETRY_EDGES))


def add_transport_error(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """A well-formed transport error (status, retryAfter, delay drawn) anywhere."""
    records.insert(draw(st.integers(0, len(records))), _transport_error_v2(draw, delays))


def misplace_signature(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """A ``thinking_signature`` anywhere: right after a delta (fine) or not (out of order),
    or an existing one moved."""
    signatures = [i for i, r in enumerate(records) if _field(r, "type") == "thinking_signature"]
    if draw(st.booleans()) and signatures:
        record = records.pop(draw(st.sampled_from(signatures)))
    else:
        record = _simple(draw, "thinking_signature", delays)
    # Right after a thinking delta (in order), right after a signature (a second one),
    # or anywhere: each as often.
    where = draw(st.sampled_from(["thinking_delta", "thinking_signature", "anywhere"]))
    after = [i + 1 for i, r in enumerate(records) if _field(r, "type") == where]
    if where == "thinking_signature" and not after:  # a signed block to follow
        at = _after_start(draw, records)
        records[at:at] = [
            _simple(draw, "thinking_delta", delays),
            _simple(draw, "thinking_signature", delays),
        ]
        after = [at + 2]
    if after:
        records.insert(draw(st.sampled_from(after)), record)
    else:
        records.insert(_after_start(draw, records), record)


def content_after_incomplete(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """An incomplete call (its own or one already there), then content after it."""
    at = [i for i, r in enumerate(records) if _field(r, "type") == "tool_call_incomplete"]
    if not at:  # mostly just before the end, so that only what comes next is out of order
        last = max(len(records) - 1, 0)
        where = draw(st.one_of(st.just(last), st.integers(min(1, last), last)))
        records.insert(where, _incomplete(draw, draw(_NON_EMPTY_IDS), delays))
        at = [where]
    after = at[0] + 1
    how = draw(st.integers(0, 4))
    if how == 0:  # a call reusing the incomplete call's id: a duplicate first
        record = _tool_v2(draw, _field(records[at[0]], "id"), delays)  # type: ignore[arg-type]
    elif how == 1:  # a second start: rule 4 first
        record = _start_v2(draw, draw(_NON_EMPTY_IDS), delays)
    elif how == 2:  # a call with an id of its own
        record = _tool_v2(draw, "call-after-incomplete", delays)
    else:
        record = _content_record(draw, records, delays)
    records.insert(after, record)


def sign_incomplete(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """A ``signature`` on an incomplete call, which has none (an unknown key)."""
    calls = _objects(records, "tool_call_incomplete")
    if not calls:
        calls = [_incomplete(draw, draw(_NON_EMPTY_IDS), delays)]
        records.insert(_after_start(draw, records), calls[0])
    draw(st.sampled_from(calls))["signature"] = draw(_OPAQUE)


def empty_opaque(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """An empty (or null) signature, data, model or provider word: each must be non-empty."""
    keys = {
        "response_start": "model",
        "tool_call": "signature",
        "thinking_signature": "signature",
        "redacted_thinking": "data",
        "response_end": "providerStopReason",
    }
    targets = [r for r in _objects(records) if r.get("type") in keys]
    if targets:
        record = draw(st.sampled_from(targets))
        record[keys[record["type"]]] = draw(st.sampled_from(["", "", None]))  # type: ignore[index]


def add_incomplete(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """An incomplete call anywhere after the start, often with an id already used."""
    calls = [
        i
        for i, r in enumerate(records)
        if _field(r, "type") == "tool_call" and type(_field(r, "id")) is str and _field(r, "id")
    ]
    if draw(st.booleans()) and calls:  # after a call, with its id
        at = draw(st.sampled_from(calls))
        call_id: str = records[at]["id"]  # type: ignore[index]
        records.insert(draw(st.integers(at + 1, len(records))), _incomplete(draw, call_id, delays))
    else:
        call_id = draw(_NON_EMPTY_IDS)
        records.insert(_after_start(draw, records), _incomplete(draw, call_id, delays))


def add_refusal(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """A refusal anywhere; sometimes its end has another id too (that mismatch wins)."""
    records.insert(_after_start(draw, records), _simple(draw, "refusal_delta", delays))
    ends = _objects(records, "response_end")
    if ends and draw(st.integers(0, 2)) == 0:
        draw(st.sampled_from(ends))["responseId"] = draw(st.sampled_from(["r-2", "", "other"]))


def set_stop_word(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """Any wire word (version 1's or 2's), or a near miss, on an end."""
    ends = _objects(records, "response_end")
    if ends:
        draw(st.sampled_from(ends))["stopReason"] = draw(
            st.sampled_from(
                ["stop", "tool_call", *V2_STOP_WORDS, "pauseTurn", "max_tokens", "LENGTH", ""]
            )
        )


def _usages_v2(records: Records) -> list[dict[str, object]]:
    kinds = ("response_end", "response_start")
    return [
        r["usage"]  # type: ignore[misc]
        for r in _objects(records)
        if r.get("type") in kinds and type(r.get("usage")) is dict
    ]


def break_sums(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """Usage details at, or one past, their bounds; or a detail under both aliases."""
    usages = _usages_v2(records)
    if not usages:
        return
    usage = draw(st.sampled_from(usages))
    total_in = usage.get("inputTokens", usage.get("input_tokens"))
    total_out = usage.get("outputTokens", usage.get("output_tokens"))
    if type(total_in) is not int or type(total_out) is not int:
        return
    over = draw(st.sampled_from([0, 1]))
    how = draw(st.integers(0, 3))
    for pair in DETAIL_ALIASES:
        for alias in pair:
            usage.pop(alias, None)
    if how == 0:
        read = draw(st.integers(0, max(total_in, 0)))
        usage[draw(st.sampled_from(DETAIL_ALIASES[0]))] = read
        usage[draw(st.sampled_from(DETAIL_ALIASES[1]))] = total_in - read + over
    elif how == 1:
        usage[draw(st.sampled_from(DETAIL_ALIASES[draw(st.integers(0, 1))]))] = total_in + over
    elif how == 2:
        usage[draw(st.sampled_from(DETAIL_ALIASES[2]))] = total_out + over
    else:
        pair = draw(st.sampled_from(DETAIL_ALIASES))
        usage[pair[0]] = usage[pair[1]] = draw(st.one_of(st.just(0), st.none(), odd_values))


DETAIL_ALIASES = (
    ("cacheReadTokens", "cache_read_tokens"),
    ("cacheWriteTokens", "cache_write_tokens"),
    ("reasoningTokens", "reasoning_tokens"),
)


def _numbers(value: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """The paths of every number (and boolean) inside ``value``."""
    if type(value) is dict:
        return [p for k, v in value.items() for p in _numbers(v, (*at, k))]
    if type(value) is list:
        return [p for i, v in enumerate(value) for p in _numbers(v, (*at, i))]
    return [at] if type(value) in (int, float, bool) else []


def _changed_at(value: object, path: tuple[object, ...], new: object) -> object:
    if not path:
        return new
    copied = copy.deepcopy(value)
    holder: object = copied
    for part in path[:-1]:
        holder = holder[part]  # type: ignore[index]
    holder[path[-1]] = new  # type: ignore[index]
    return copied


def _number_twin(draw: st.DrawFn, number: object) -> object:
    """A value equal in Python (``==``) but not as JSON, or nearly equal."""
    if type(number) is bool:
        return int(number)
    if type(number) is int:
        nearby = number - 1 if number > 0 else number + 1  # as many digits, or fewer
        return draw(st.sampled_from([float(number) if abs(number) < 2**1000 else 0.5, nearby]))
    assert type(number) is float
    if number.is_integer() and abs(number) < 2**63:
        return int(number)
    return draw(st.sampled_from([math.nextafter(number, math.inf), -number if number else 1.0]))


def skew_fragments(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """Give a tool call ``argumentFragments`` that differ from its ``arguments`` at one
    boundary of the equality rule, or that are equal in another spelling."""
    calls = _objects(records, "tool_call")
    if not calls:
        return
    call = draw(st.sampled_from(calls))
    args = call.get("arguments")
    how = draw(st.integers(0, 9))
    fragments: object
    numbers = _numbers(args)
    if how == 0 and not numbers and type(args) is dict:  # a number to skew
        args = call["arguments"] = {**args, "n": draw(st.sampled_from([1, 0, -0.0, 2.0, True]))}
        numbers = _numbers(args)
    if how == 0 and numbers:  # int against float, a bool against an int, one ulp away
        path = draw(st.sampled_from(numbers))
        fragments = fragments_of(
            draw, _changed_at(args, path, _number_twin(draw, _get(args, path)))
        )
    elif how == 1:  # a key more, or a key less
        other = dict(args) if type(args) is dict else {}
        if draw(st.booleans()) and other:
            del other[draw(st.sampled_from(sorted(other)))]
        else:
            other[draw(_KEYS)] = draw(json_values)
        fragments = fragments_of(draw, other)
    elif how == 2:  # the same arguments, spelled otherwise (equal: valid)
        fragments = fragments_of(draw, args)
    elif how == 3:  # a character dropped or added
        text = "".join(fragments_of(draw, args) or [json.dumps(args)])
        at = draw(st.integers(0, len(text)))
        fragments = [
            text[:at] + draw(st.sampled_from(["", " ", "x", "}", ",", "\\"])) + text[at + 1 :]
        ]
    elif how == 4:  # texts strict JSON refuses, or that stand for something else
        fragments = [draw(st.sampled_from(_ODD_ARGUMENT_TEXTS))]
    elif how == 5:
        fragments = draw(
            st.sampled_from([[], [""], ["", ""], [" "], None, "{}", [1], ["{}", None]])
        )
    elif how == 6:  # a duplicate key, in the text only
        fragments = ['{"k": 1, "k": 1}'] if draw(st.booleans()) else ['{"k": 1}']
        call["arguments"] = {"k": 1}
    else:  # the same text, cut otherwise
        fragments = fragments_of(draw, args)
    if fragments is not None:
        call["argumentFragments"] = fragments


_ODD_ARGUMENT_TEXTS = [
    "{}",
    " {} ",
    "\ufeff{}",
    "{} []",
    "[]",
    "null",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1e400}',
    '{"a": -1e400}',
    '{"a": 1e-400}',
    '{"a": 1.0}',
    '{"a": 1}',
    '{"a": 1E0}',
    '{"a": -0}',
    '{"a": -0.0}',
    '{"a": true}',
    '{"a": "\\ud800"}',
    '{"a": "\\ud800\\udc00"}',
    '{"a": ' + "9" * 4300 + "}",
    '{"a": ' + "9" * 4301 + "}",
    '{"a": ' + "[" * 300 + "]" * 300 + "}",
    "{'a': 1}",
    '{"a": 1,}',
    '{"a" 1}',
    "\t\n\r {}",
]


def _get(value: object, path: tuple[object, ...]) -> object:
    for part in path:
        value = value[part]  # type: ignore[index]
    return value


def retype_v2_field(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    """A version-2 field of a record set to a value just outside (or just inside) its type."""
    choices = {
        "response_start": ("model", "usage"),
        "tool_call": ("signature", "argumentFragments"),
        "tool_call_incomplete": ("argumentFragments", "signature", "arguments"),
        "thinking_delta": ("text",),
        "thinking_signature": ("signature",),
        "redacted_thinking": ("data",),
        "refusal_delta": ("text",),
        "response_end": ("providerStopReason",),
        "transport_error": ("status", "retryAfter"),
    }
    targets = [r for r in _objects(records) if r.get("type") in choices]
    if targets:
        record = draw(st.sampled_from(targets))
        key = draw(st.sampled_from(choices[record["type"]]))  # type: ignore[index]
        record[key] = draw(st.one_of(st.sampled_from(["", None, "x", [], ["x"], 0]), odd_values))


# Drawn by family, as for version 1; the version-1 mutations apply to these records too.
_FAMILIES_V2: tuple[tuple[MutationV2, ...], ...] = (
    (set_delay,),
    (set_status, add_transport_error),
    (misplace_signature, misplace_signature, sign_incomplete),
    (content_after_incomplete,),
    (add_incomplete,),
    (add_refusal, set_stop_word),
    (break_sums,),
    (skew_fragments,),
    (retype_v2_field, empty_opaque),
)


def _v1_family(family: tuple[Mutation, ...]) -> tuple[MutationV2, ...]:
    return tuple(lambda draw, records, delays, m=m: m(draw, records) for m in family)


def insert_v2(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    low = 1 if records and draw(st.integers(0, 4)) > 0 else 0
    records.insert(draw(st.integers(low, len(records))), draw(record_like_v2(delays)))


def append_after_terminal_v2(draw: st.DrawFn, records: Records, delays: Delays) -> None:
    for _ in range(draw(st.integers(1, 2))):
        records.append(draw(record_like_v2(delays)))


_V1_FAMILIES_FOR_V2: tuple[tuple[MutationV2, ...], ...] = (
    _v1_family((drop, duplicate, swap, reorder, truncate)),
    (insert_v2,),
    (append_after_terminal_v2,),
    _v1_family((retype_field, delete_field, add_unknown_key)),
    _v1_family((duplicate_usage_alias, break_usage)),
    _v1_family((mismatch_id, mismatch_end)),
    _v1_family((repeat_call_id,)),
)


@st.composite
def mutated_records_v2(
    draw: st.DrawFn, delays: Delays = zero_delays, max_mutations: int = 3
) -> Records:
    """The records of one version-2 response, after 1 to ``max_mutations`` mutations."""
    records = draw(valid_records_v2(delays))
    families = draw(st.sampled_from([_FAMILIES_V2, _V1_FAMILIES_FOR_V2, _FAMILIES_V2]))
    for _ in range(draw(st.one_of(st.just(1), st.integers(1, max_mutations)))):
        draw(st.sampled_from(draw(st.sampled_from(families))))(draw, records, delays)
    return records


FAMILIES_V2 = len(_FAMILIES_V2) + len(_V1_FAMILIES_FOR_V2)
"""How many mutation families ``mutated_records_v2`` draws from (``once_mutated_v2``);
the first ``V2_ONLY_FAMILIES`` are version 2's own."""
V2_ONLY_FAMILIES = len(_FAMILIES_V2)


@st.composite
def once_mutated_v2(draw: st.DrawFn, family: int, delays: Delays = zero_delays) -> Records:
    """Valid version-2 records after one mutation of family ``family`` (0 ..
    ``FAMILIES_V2`` - 1): what ``mutated_records_v2`` draws when it mutates once."""
    records = draw(valid_records_v2(delays))
    families = _FAMILIES_V2 + _V1_FAMILIES_FOR_V2
    draw(st.sampled_from(families[family]))(draw, records, delays)
    return records


@st.composite
def v1_records_with_v2_mutations(
    draw: st.DrawFn, delays: Delays = zero_delays, family: int | None = None
) -> Records:
    """A valid version-1 response after one version-2 mutation (of family ``family`` of
    the version-2 ones, if given): in a version-1 fixture these meet only version 1's
    rules (unknown types, unknown keys, unknown stop reasons)."""
    records = draw(valid_records())
    chosen = draw(st.sampled_from(_FAMILIES_V2)) if family is None else _FAMILIES_V2[family]
    draw(st.sampled_from(chosen))(draw, records, delays)
    return records


@st.composite
def valid_fixtures_v2(draw: st.DrawFn, delays: Delays = zero_delays) -> Fixture:
    """A schema-2 fixture whose every response completes."""
    responses = draw(st.lists(valid_records_v2(delays), max_size=3))
    return {"schemaVersion": 2, "responses": [{"records": r} for r in responses]}


@st.composite
def mutated_fixtures_v2(draw: st.DrawFn, delays: Delays = zero_delays) -> object:
    """Version-2 responses, mutated; the fixture says version 2, or (one time in six)
    version 1, and rarely its own shape is broken."""
    responses = draw(st.lists(mutated_records_v2(delays), max_size=3))
    version = 1 if draw(st.integers(0, 5)) == 5 else 2
    fixture: Fixture = {"schemaVersion": version, "responses": [{"records": r} for r in responses]}
    if draw(st.integers(0, 9)) == 7:
        return _fixture_mutation(draw, fixture)
    return fixture

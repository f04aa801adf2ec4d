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
from collections.abc import Callable

from hypothesis import strategies as st

__all__ = [
    "MAX_TOKENS",
    "arguments",
    "json_values",
    "mutated_fixtures",
    "mutated_records",
    "odd_values",
    "record_like",
    "sdk_arguments",
    "strings",
    "valid_fixtures",
    "valid_records",
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
    ),
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

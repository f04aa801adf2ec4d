"""The generated JSON Schema, judged by what it accepts: valid draft 2020-12, and one-way
sound against the adapter (every fixture it rejects, the adapter rejects too), for
written examples of every rule and for generated fixtures. The schema and the parser
are generated from one table, which one test extends to watch both follow."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from types import MappingProxyType

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from course import (
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)
from course import _parser as parser
from course._schema import DIALECT, fixture_schema

from .helpers import collect, end, fixture, roundtrip, run, start, text, tool

Code = FixtureProviderErrorCode
MAX_TOKENS = 2**53 - 1
USAGE_ALIASES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))

SCHEMA = fixture_schema()
VALIDATOR = Draft202012Validator(SCHEMA)

# The rules a schema cannot express (order and meaning): a schema-valid fixture the
# adapter rejects must fail on one of these, never on a shape rule.
NON_SHAPE_CODES = frozenset(
    {
        Code.PROVIDER_MISSING_START,
        Code.PROVIDER_DUPLICATE_START,
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        Code.PROVIDER_RESPONSE_MISMATCH,
        Code.PROVIDER_STOP_REASON_MISMATCH,
        Code.PROVIDER_MISSING_TERMINAL,
        Code.PROVIDER_DUPLICATE_TERMINAL,
        Code.PROVIDER_INVALID_TERMINAL,
        Code.PROVIDER_TRANSPORT_ERROR,
    }
)


def verdict(data: object) -> FixtureProviderErrorCode | None:
    """The adapter's judgement: the first error (construction, then each response in
    order), or ``None`` when it accepts the fixture and every response settles."""
    try:
        adapter = FixtureProviderAdapter(data)
    except FixtureProviderError as error:
        return error.code

    async def stream_all() -> FixtureProviderErrorCode | None:
        for index in range(adapter.pending):
            outcome = await collect(adapter.stream(CourseModelRequest(f"req-{index}")))
            if outcome.error is not None:
                return outcome.error.code
        return None

    return run(stream_all())


# -- the schema itself ----------------------------------------------------------------------


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == DIALECT
    Draft202012Validator.check_schema(SCHEMA)


def test_schema_is_plain_json_and_fresh_each_call() -> None:
    assert json.loads(json.dumps(SCHEMA)) == SCHEMA
    other = fixture_schema()
    assert other == SCHEMA and other is not SCHEMA


def test_bundled_fixture_is_valid_against_the_schema() -> None:
    assert list(VALIDATOR.iter_errors(roundtrip())) == []


def test_schema_description_states_the_one_way_implication() -> None:
    description = SCHEMA["description"]
    assert isinstance(description, str)
    assert "one-way" in description
    assert "shape only" in description


# -- each shape rule, seen from both sides ----------------------------------------------------

# One well-formed record of each type, written out (not read from the parser's table).
EXAMPLES: dict[str, dict[str, object]] = {
    "response_start": start("r-1"),
    "text_delta": text("hi"),
    "tool_call": tool("call-1", "add", left=1),
    "response_end": end("r-1", "tool_call", {"inputTokens": 1, "output_tokens": 2}),
    "transport_error": {"type": "transport_error", "message": "boom", "code": "E1"},
}
OPTIONAL = {("transport_error", "code")}
WRONG_VALUES: list[object] = [None, 1, 1.5, True, "", "x", [], {}, ["a"], {"k": "v"}]


def placed(record: dict[str, object], kind: str) -> dict[str, object]:
    """A fixture where ``record``, of type ``kind``, comes where that type is in order."""
    if kind == "response_start":
        return fixture([record, end("r-1")])
    if kind == "response_end":
        return fixture([start("r-1"), tool("call-1"), record])
    return fixture(
        [start("r-1"), record, end("r-1", "tool_call" if kind == "tool_call" else "stop")]
    )


def well_formed(code: FixtureProviderErrorCode | None) -> bool:
    """Whether the adapter found nothing wrong with the shape (a transport error always
    fails its response, by its meaning)."""
    return code is None or code is Code.PROVIDER_TRANSPORT_ERROR


def test_every_example_is_valid_for_both() -> None:
    for kind, record in EXAMPLES.items():
        data = placed(record, kind)
        assert VALIDATOR.is_valid(data), kind
        assert well_formed(verdict(data)), kind


def test_an_unknown_record_key_is_refused_by_both() -> None:
    for kind, record in EXAMPLES.items():
        for key in ("extra", "Type", "responseid", "__proto__"):
            data = placed({**record, key: 1}, kind)
            assert not VALIDATOR.is_valid(data), (kind, key)
            assert verdict(data) is Code.PROVIDER_MALFORMED_EVENT, (kind, key)


def test_each_field_left_out_is_refused_by_both_unless_optional() -> None:
    for kind, record in EXAMPLES.items():
        for key in record:
            data = placed({k: v for k, v in record.items() if k != key}, kind)
            optional = (kind, key) in OPTIONAL
            assert VALIDATOR.is_valid(data) is optional, (kind, key)
            assert well_formed(verdict(data)) is optional, (kind, key)


def test_each_field_of_a_wrong_value_is_refused_by_both_or_by_neither() -> None:
    for kind, record in EXAMPLES.items():
        for key in record:
            if key == "type":
                continue
            for wrong in WRONG_VALUES:
                data = placed({**record, key: wrong}, kind)
                code = verdict(data)
                if VALIDATOR.is_valid(data):
                    # Only the meaning rules may refuse a value of the right shape.
                    assert code is None or code in NON_SHAPE_CODES, (kind, key, wrong)
                else:
                    assert code is Code.PROVIDER_MALFORMED_EVENT, (kind, key, wrong)


def test_stop_reasons_and_usage_aliases_are_understood_alike() -> None:
    usages_: list[tuple[dict[str, object], bool]] = [
        ({"inputTokens": 1, "outputTokens": 2}, True),
        ({"input_tokens": 1, "output_tokens": 2}, True),
        ({"inputTokens": 1, "output_tokens": 2}, True),
        ({"inputTokens": 0, "outputTokens": MAX_TOKENS}, True),
        ({"inputTokens": 1, "input_tokens": 1, "outputTokens": 2}, False),
        ({"inputTokens": 1}, False),
        ({"inputTokens": 1, "outputTokens": MAX_TOKENS + 1}, False),
        ({"inputTokens": -1, "outputTokens": 2}, False),
        ({"inputTokens": 1, "outputTokens": 2, "total": 3}, False),
    ]
    for usage, valid in usages_:
        data = fixture([start("r-1"), end("r-1", "stop", usage)])
        assert VALIDATOR.is_valid(data) is valid, usage
        assert (verdict(data) is None) is valid, usage
    for reason, valid in [("stop", True), ("tool_call", True), ("toolCall", False), ("end", False)]:
        data = fixture([start("r-1"), tool("c"), end("r-1", reason)])
        assert VALIDATOR.is_valid(data) is valid, reason
        if valid:
            assert verdict(data) in (None, Code.PROVIDER_STOP_REASON_MISMATCH), reason
        else:
            assert verdict(data) is Code.PROVIDER_MALFORMED_EVENT, reason


def test_one_table_drives_validation_messages_and_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    # Add an optional field to a record type, in the table only: the parser accepts it,
    # words its errors from it, and the schema describes it. (Before, a payload the
    # parser's inline checks refused but its table allowed escaped as AssertionError.)
    extended = dict(parser.RECORD_TYPES)
    extended["text_delta"] = parser.RecordType(
        (parser.Field("text", "string"), parser.Field("lang", "string", required=False))
    )
    monkeypatch.setattr(parser, "RECORD_TYPES", MappingProxyType(extended))
    schema = Draft202012Validator(fixture_schema())
    accepted = fixture([start(), {"type": "text_delta", "text": "a", "lang": "en"}, end()])
    assert schema.is_valid(accepted)
    assert verdict(accepted) is None
    refused = fixture([start(), {"type": "text_delta", "text": "a", "lang": 7}, end()])
    assert not schema.is_valid(refused)
    outcome = run(collect(FixtureProviderAdapter(refused).stream(CourseModelRequest("q"))))
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_MALFORMED_EVENT
    assert outcome.error.path == "/responses/0/records/1/lang"
    assert "`lang`" in outcome.error.message


# -- concrete examples of both directions ------------------------------------------------------


def broken(edit: Callable[[dict[str, object]], object]) -> dict[str, object]:
    data = roundtrip()
    edit(data)
    return data


def first_records(data: dict[str, object]) -> list[dict[str, object]]:
    return data["responses"][0]["records"]  # type: ignore[index,no-any-return]


def first_usage(data: dict[str, object]) -> dict[str, object]:
    return first_records(data)[2]["usage"]  # type: ignore[return-value]


SCHEMA_INVALID = {
    "fixture: unknown key": broken(lambda d: d.update(extra=1)),
    "fixture: version 2": broken(lambda d: d.update(schemaVersion=2)),
    "fixture: version true": broken(lambda d: d.update(schemaVersion=True)),
    "response: no records": broken(lambda d: d["responses"][0].pop("records")),  # type: ignore[index]
    "record: unknown type": broken(lambda d: first_records(d)[1].update(type="tool_result")),
    "record: missing field": broken(lambda d: first_records(d)[1].pop("name")),
    "record: null code": broken(
        lambda d: first_records(d).insert(
            1, {"type": "transport_error", "message": "m", "code": None}
        )
    ),
    "usage: both aliases": broken(lambda d: first_usage(d).update(input_tokens=1)),
    "usage: too large": broken(lambda d: first_usage(d).update(inputTokens=MAX_TOKENS + 1)),
    "usage: negative": broken(lambda d: first_usage(d).update(outputTokens=-1)),
}


def test_schema_invalid_examples_are_rejected_by_the_adapter() -> None:
    for name, data in SCHEMA_INVALID.items():
        assert not VALIDATOR.is_valid(data), name
        assert verdict(data) is not None, name


def test_schema_valid_fixtures_can_still_break_order_and_meaning_rules() -> None:
    cases = {
        Code.PROVIDER_MISSING_START: fixture([text("hi"), start(), end()]),
        Code.PROVIDER_DUPLICATE_TOOL_CALL: fixture(
            [start(), tool("c"), tool("c"), end(stop_reason="tool_call")]
        ),
        Code.PROVIDER_RESPONSE_MISMATCH: fixture([start("a"), end("b")]),
        Code.PROVIDER_STOP_REASON_MISMATCH: fixture([start(), tool(), end()]),
        Code.PROVIDER_MISSING_TERMINAL: fixture([]),
    }
    for code, data in cases.items():
        assert VALIDATOR.is_valid(data), code
        assert verdict(data) is code


def test_integral_floats_are_schema_valid_but_refused_by_the_adapter() -> None:
    # JSON Schema counts 1.0 as an integer; the adapter wants the exact integer 1.
    data = broken(lambda d: d.update(schemaVersion=1.0))
    assert VALIDATOR.is_valid(data)
    assert verdict(data) is Code.PROVIDER_INVALID_FIXTURE


# -- properties ---------------------------------------------------------------------------------

_STRINGS = st.text(max_size=5)
_NON_EMPTY = st.one_of(st.sampled_from(["r-1", "call-1", "add"]), st.text(min_size=1, max_size=5))
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 1, MAX_TOKENS, MAX_TOKENS + 1]),
    # Integral floats are left out: JSON Schema's integer includes them, the adapter's
    # does not (see the test above), so they would blur the agreement property.
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: 0.5 if f.is_integer() else f),
    _STRINGS,
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_STRINGS, inner, max_size=3)
    ),
    max_leaves=6,
)
_WORDS = [
    *EXAMPLES,
    *(key for record in EXAMPLES.values() for key in record),
    *(alias for pair in USAGE_ALIASES for alias in pair),
    "stop",
    "tool_call",
    "schemaVersion",
    "responses",
    "records",
    "assistant",
    "type",
    "extra",
    "",
]
_KEYS = st.one_of(st.sampled_from(_WORDS), _STRINGS)


@st.composite
def usages(draw: st.DrawFn) -> dict[str, object]:
    counts = st.integers(min_value=0, max_value=MAX_TOKENS)
    return {draw(st.sampled_from(pair)): draw(counts) for pair in USAGE_ALIASES}


@st.composite
def valid_responses(draw: st.DrawFn) -> list[object]:
    response_id = draw(_NON_EMPTY)
    body: list[object] = []
    tools = 0
    for is_tool in draw(st.lists(st.booleans(), max_size=4)):
        if is_tool:
            tools += 1
            arguments = draw(st.dictionaries(_STRINGS, _JSON, max_size=3))
            name = draw(_NON_EMPTY)
            body.append(
                {"type": "tool_call", "id": f"call-{tools}", "name": name, "arguments": arguments}
            )
        else:
            body.append(text(draw(_STRINGS)))
    stop_reason = "tool_call" if tools else "stop"
    return [start(response_id), *body, end(response_id, stop_reason, draw(usages()))]


valid_fixtures = st.lists(valid_responses(), max_size=3).map(lambda rs: fixture(*rs))
_NON_EMPTY_FIXTURES = st.lists(valid_responses(), min_size=1, max_size=3).map(
    lambda rs: fixture(*rs)
)
_VALUES = st.one_of(_JSON, st.sampled_from(_WORDS), usages(), valid_responses())


def containers(value: object) -> list[dict[str, object] | list[object]]:
    found: list[dict[str, object] | list[object]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> dict[str, object]:
    """A valid fixture with one to three edits anywhere: keys dropped or added, values
    replaced (by any JSON, by wire words, by whole records), items removed, duplicated,
    inserted or swapped."""
    data = copy.deepcopy(draw(valid_fixtures))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        target = draw(st.sampled_from(containers(data)))
        if isinstance(target, dict):
            operations = ["add"] + (["drop", "replace"] if target else [])
            operation = draw(st.sampled_from(operations))
            if operation == "add":
                target[draw(_KEYS)] = draw(_VALUES)
            else:
                key = draw(st.sampled_from(sorted(target)))
                if operation == "drop":
                    del target[key]
                else:
                    target[key] = draw(_VALUES)
        else:
            operations = ["insert"] + (["drop", "replace", "duplicate", "swap"] if target else [])
            operation = draw(st.sampled_from(operations))
            if operation == "insert":
                where = draw(st.integers(min_value=0, max_value=len(target)))
                target.insert(where, draw(_VALUES))
                continue
            index = draw(st.integers(min_value=0, max_value=len(target) - 1))
            if operation == "drop":
                del target[index]
            elif operation == "replace":
                target[index] = draw(_VALUES)
            elif operation == "duplicate":
                target.insert(index, copy.deepcopy(target[index]))
            else:
                other = draw(st.integers(min_value=0, max_value=len(target) - 1))
                target[index], target[other] = target[other], target[index]
    return data


_POOL_IDS = st.sampled_from(["r-1", "r-2", "call-1", "call-2"])
_RENAMES = st.sampled_from(["", "r-1", "r-2", "call-1", "call-2"])
_VALID_RECORDS = st.one_of(
    st.builds(start, _POOL_IDS),
    st.builds(text, _STRINGS),
    st.builds(tool, _POOL_IDS),
    st.builds(end, _POOL_IDS, st.sampled_from(["stop", "tool_call"]), usages()),
    st.builds(lambda message: {"type": "transport_error", "message": message}, _STRINGS),
)


@st.composite
def reordered_fixtures(draw: st.DrawFn) -> dict[str, object]:
    """A valid fixture whose records are edited as whole, well-shaped records: dropped,
    duplicated, swapped, inserted, or given a clashing (or empty) id. The shape mostly stays valid,
    so these land on the order and meaning rules."""
    data = copy.deepcopy(draw(_NON_EMPTY_FIXTURES))
    responses: list[dict[str, list[dict[str, object]]]] = data["responses"]  # type: ignore[assignment]
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        records = draw(st.sampled_from(responses))["records"]
        index = draw(st.integers(min_value=0, max_value=max(len(records) - 1, 0)))
        operation = draw(st.sampled_from(["drop", "duplicate", "swap", "insert", "rename"]))
        if operation == "insert" or not records:
            records.insert(index, draw(_VALID_RECORDS))
        elif operation == "drop":
            del records[index]
        elif operation == "duplicate":
            records.insert(index, copy.deepcopy(records[index]))
        elif operation == "swap":
            other = draw(st.integers(min_value=0, max_value=len(records) - 1))
            records[index], records[other] = records[other], records[index]
        else:
            for key in ("responseId", "id", "name"):
                if key in records[index]:
                    records[index][key] = draw(_RENAMES)
    return data


@given(valid_fixtures)
def test_generated_valid_fixtures_pass_both_schema_and_adapter(data: dict[str, object]) -> None:
    assert VALIDATOR.is_valid(data)
    assert verdict(data) is None


@given(mutated_fixtures())
def test_every_schema_invalid_fixture_is_rejected_by_the_adapter(data: dict[str, object]) -> None:
    if not VALIDATOR.is_valid(data):
        code = verdict(data)
        event(f"schema-invalid, adapter: {code}")
        assert code is not None


@given(st.one_of(mutated_fixtures(), reordered_fixtures()))
def test_schema_and_adapter_agree_except_on_order_and_meaning(data: dict[str, object]) -> None:
    code = verdict(data)
    event(f"schema {'valid' if VALIDATOR.is_valid(data) else 'invalid'}, adapter: {code}")
    if code is None:
        # Accepted by the adapter: the shape must be right.
        assert VALIDATOR.is_valid(data)
    elif VALIDATOR.is_valid(data):
        # Right shape, rejected: only a rule the schema cannot express may have failed.
        assert code in NON_SHAPE_CODES

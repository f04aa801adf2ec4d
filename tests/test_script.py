"""``course.script``: fixtures in code are exactly the dicts an author would write."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import (
    FixtureProviderAdapter,
    FixtureProviderErrorCode,
    load_fixture,
    script,
)
from tests.helpers import ROUNDTRIP_PATH, replayed, run

Code = FixtureProviderErrorCode

SPEC_EXAMPLE = script.fixture(
    script.response(
        script.call("add", {"left": 20, "right": 22}, id="call-add-001"),
        response_id="response-tool-001",
        usage=(12, 8),
    ),
    script.response("The sum is 42.", usage=(30, 6)),
)


Replay: TypeAlias = list[tuple[list[dict[str, Any]], object]]


def records(fixture: dict[str, object], index: int = 0) -> list[Any]:
    """The records of one response of a fixture, typed loosely for a test's lookups."""
    responses = cast("list[dict[str, list[Any]]]", fixture["responses"])
    return responses[index]["records"]


def replay(fixture: object) -> Replay:
    """Every response of ``fixture`` in turn: its chunks, then its response or error code."""
    return run(replayed(fixture))


# -- what a fixture looks like ------------------------------------------------------------


def test_the_spec_example_is_the_dict_an_author_writes_by_hand() -> None:
    by_hand = {
        "schemaVersion": 1,
        "responses": [
            {
                "records": [
                    {
                        "type": "response_start",
                        "responseId": "response-tool-001",
                        "role": "assistant",
                    },
                    {
                        "type": "tool_call",
                        "id": "call-add-001",
                        "name": "add",
                        "arguments": {"left": 20, "right": 22},
                    },
                    {
                        "type": "response_end",
                        "responseId": "response-tool-001",
                        "stopReason": "tool_call",
                        "usage": {"inputTokens": 12, "outputTokens": 8},
                    },
                ]
            },
            {
                "records": [
                    {"type": "response_start", "responseId": "response-002", "role": "assistant"},
                    {"type": "text_delta", "text": "The sum is 42."},
                    {
                        "type": "response_end",
                        "responseId": "response-002",
                        "stopReason": "stop",
                        "usage": {"inputTokens": 30, "outputTokens": 6},
                    },
                ]
            },
        ],
    }
    assert by_hand == SPEC_EXAMPLE
    # Byte for byte, key order included.
    assert json.dumps(SPEC_EXAMPLE) == json.dumps(by_hand)


def test_the_spec_example_replays_as_the_bundled_fixture_does() -> None:
    bundled = replay(load_fixture(ROUNDTRIP_PATH))
    scripted = replay(SPEC_EXAMPLE)
    # Everything but the second response's id, which the example leaves to script.
    assert scripted[0] == bundled[0]
    assert scripted[1][0] == bundled[1][0]
    second = scripted[1][1]
    assert isinstance(second, dict)
    assert second["responseId"] == "response-002"
    # Named as the bundled file names it, the replay is identical: the file's snake-case
    # usage and script's camel case mean the same.
    named = script.fixture(
        script.response(
            script.call("add", {"left": 20, "right": 22}),
            response_id="response-tool-001",
            usage=(12, 8),
        ),
        script.response("The sum is 42.", response_id="response-text-001", usage=(30, 6)),
    )
    assert replay(named) == bundled


def test_ids_left_out_are_numbered_across_the_fixture() -> None:
    fixture = script.fixture(
        script.response(script.call("add", {}, id="call-add-001"), script.call("add", {})),
        script.response(script.call("mul", {}), script.call("add", {}), script.call("add", {})),
        script.response(script.call("add", {}, id="mine"), response_id="given"),
    )
    ids = [
        [(r.get("responseId"), r.get("id")) for r in records(fixture, index)] for index in range(3)
    ]
    assert ids == [
        [
            ("response-001", None),
            (None, "call-add-001"),
            (None, "call-add-002"),
            ("response-001", None),
        ],
        [
            ("response-002", None),
            (None, "call-mul-001"),
            (None, "call-add-003"),
            (None, "call-add-004"),
            ("response-002", None),
        ],
        [("given", None), (None, "mine"), ("given", None)],
    ]


def test_explicit_duplicate_ids_are_kept_and_replay_reports_them() -> None:
    fixture = script.fixture(
        script.response(script.call("add", {}, id="same"), script.call("add", {}, id="same"))
    )
    assert replay(fixture) == [
        (
            [{"type": "toolCall", "id": "same", "name": "add", "arguments": {}, "contentIndex": 0}],
            Code.PROVIDER_DUPLICATE_TOOL_CALL,
        )
    ]


def test_a_generated_id_may_meet_an_explicit_one() -> None:
    fixture = script.fixture(
        script.response(script.call("f", {}), script.call("f", {}, id="call-f-001"))
    )
    assert replay(fixture)[0][1] == Code.PROVIDER_DUPLICATE_TOOL_CALL


def test_stop_reason_follows_the_items() -> None:
    text_only = records(script.fixture(script.response("a", "b")))
    empty = records(script.fixture(script.response()))
    mixed = records(script.fixture(script.response("a", script.call("f", {}), "b")))
    assert text_only[-1]["stopReason"] == "stop"
    assert empty == [
        {"type": "response_start", "responseId": "response-001", "role": "assistant"},
        {
            "type": "response_end",
            "responseId": "response-001",
            "stopReason": "stop",
            "usage": {"inputTokens": 0, "outputTokens": 0},
        },
    ]
    assert mixed[-1]["stopReason"] == "tool_call"


def test_an_error_ends_the_response_with_a_transport_error() -> None:
    fixture = script.fixture(
        script.response("partial", script.error("rate limited", code="429")),
        script.response(script.error("no code")),
    )
    assert records(fixture, 0)[-1] == {
        "type": "transport_error",
        "message": "rate limited",
        "code": "429",
    }
    assert records(fixture, 1) == [
        {"type": "response_start", "responseId": "response-002", "role": "assistant"},
        {"type": "transport_error", "message": "no code"},
    ]
    outcomes = replay(fixture)
    assert outcomes[0] == (
        [{"type": "textDelta", "text": "partial", "contentIndex": 0}],
        Code.PROVIDER_TRANSPORT_ERROR,
    )
    assert outcomes[1] == ([], Code.PROVIDER_TRANSPORT_ERROR)


def test_cut_leaves_the_end_out() -> None:
    fixture = script.fixture(script.response("half", script.CUT), script.response(script.CUT))
    assert records(fixture, 0)[-1] == {"type": "text_delta", "text": "half"}
    assert len(records(fixture, 1)) == 1
    assert [code for _, code in replay(fixture)] == [Code.PROVIDER_MISSING_TERMINAL] * 2


def test_no_responses_is_an_empty_fixture() -> None:
    assert script.fixture() == {"schemaVersion": 1, "responses": []}


def test_json_dump_of_a_fixture_is_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "scripted.json"
    path.write_text(json.dumps(SPEC_EXAMPLE, indent=2), encoding="utf-8")
    assert load_fixture(path) == SPEC_EXAMPLE
    assert replay(load_fixture(path)) == replay(SPEC_EXAMPLE)


# -- copies -------------------------------------------------------------------------------


def test_the_arguments_are_copied_when_the_call_is_made() -> None:
    numbers = [1, 2]
    arguments: dict[str, object] = {"numbers": numbers}
    scripted = script.call("sum", arguments)
    numbers.append(3)
    arguments["extra"] = True
    fixture = script.fixture(script.response(scripted))
    assert records(fixture)[1]["arguments"] == {"numbers": [1, 2]}


def test_every_fixture_is_new_containers() -> None:
    scripted = script.response(script.call("f", {"deep": {"list": [1]}}))
    first, second = script.fixture(scripted), script.fixture(scripted)
    assert first == second
    records(first)[1]["arguments"]["deep"]["list"].append(2)
    assert records(second)[1]["arguments"] == {"deep": {"list": [1]}}
    assert records(script.fixture(scripted))[1]["arguments"] == {"deep": {"list": [1]}}


def test_shared_sub_objects_stay_shared_and_cost_no_more() -> None:
    # 60 levels of two references to one list: a tree of 2**60 leaves, a graph of 60 nodes.
    shared: object = [0]
    for _ in range(60):
        shared = [shared, shared]
    fixture = script.fixture(script.response(script.call("f", {"graph": shared})))
    graph = records(fixture)[1]["arguments"]["graph"]
    assert graph[0] is graph[1]
    FixtureProviderAdapter(fixture)


def test_cut_survives_copy_and_pickle() -> None:
    assert copy.deepcopy(script.CUT) is script.CUT
    assert pickle.loads(pickle.dumps(script.CUT)) is script.CUT
    assert repr(script.CUT) == "script.CUT"


def test_scripted_values_are_frozen() -> None:
    scripted = script.call("f", {})
    with pytest.raises(AttributeError):
        scripted.name = "g"  # type: ignore[misc]


# -- limits the adapter shares ------------------------------------------------------------


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_arguments_as_deep_as_the_adapter_accepts() -> None:
    fixture = script.fixture(script.response(script.call("f", _nested(251))))
    assert replay(fixture)[0][1] != Code.PROVIDER_INVALID_FIXTURE
    with pytest.raises(ValueError, match="arguments"):
        script.call("f", _nested(252))
    # The adapter agrees where the line is.
    records(fixture)[1]["arguments"] = _nested(252)
    with pytest.raises(Exception, match=r"deep|nest"):
        FixtureProviderAdapter(fixture)


@pytest.mark.parametrize("shallow_first", [True, False])
def test_a_shared_object_must_fit_wherever_it_appears(shallow_first: bool) -> None:
    # 240 levels fit at the top, not 20 levels further down: refused whichever comes first.
    shared = _nested(240)
    deeper: dict[str, object] = {"x": shared}
    for _ in range(19):
        deeper = {"x": deeper}
    arguments: dict[str, object] = (
        {"a": shared, "b": deeper} if shallow_first else {"b": deeper, "a": shared}
    )
    with pytest.raises(ValueError, match="nest deeper"):
        script.call("f", arguments)
    # Shared where it fits: accepted, and the adapter agrees.
    fits: dict[str, object] = {"a": shared, "b": {"x": shared}}
    FixtureProviderAdapter(script.fixture(script.response(script.call("f", fits))))


def test_ints_as_long_as_the_adapter_accepts() -> None:
    longest = 10**4300 - 1
    fixture = script.fixture(script.response(script.call("f", {"n": longest, "m": -longest})))
    FixtureProviderAdapter(fixture)
    with pytest.raises(ValueError, match=r"arguments\['n'\]"):
        script.call("f", {"n": longest + 1})


# -- bad arguments ------------------------------------------------------------------------


class _Text(str):
    pass


def _cycle() -> dict[str, object]:
    value: dict[str, object] = {}
    value["self"] = [value]
    return value


BAD: list[tuple[Callable[[], object], type[Exception], str]] = [
    (lambda: script.call("", {}), ValueError, "`name`"),
    (lambda: script.call(None, {}), TypeError, "`name`"),  # type: ignore[arg-type]
    (lambda: script.call(_Text("f"), {}), TypeError, "`name`"),
    (lambda: script.call("f", {}, id=""), ValueError, "`id`"),
    (lambda: script.call("f", {}, id=7), TypeError, "`id`"),  # type: ignore[arg-type]
    (lambda: script.call("f", None), TypeError, "`arguments`"),  # type: ignore[arg-type]
    (lambda: script.call("f", [1]), TypeError, "`arguments`"),  # type: ignore[arg-type]
    (lambda: script.call("f", {"x": (1, 2)}), TypeError, "`arguments['x']`"),
    (lambda: script.call("f", {"x": {1: 2}}), TypeError, "`arguments['x']`"),
    (lambda: script.call("f", {"x": [float("nan")]}), ValueError, "`arguments['x'][0]`"),
    (lambda: script.call("f", {"x": float("inf")}), ValueError, "`arguments['x']`"),
    (lambda: script.call("f", {"x": {1, 2}}), TypeError, "`arguments['x']`"),
    (lambda: script.call("f", {"x": b"bytes"}), TypeError, "`arguments['x']`"),
    (lambda: script.call("f", _cycle()), ValueError, "cycle"),
    (lambda: script.error(None), TypeError, "`message`"),  # type: ignore[arg-type]
    (lambda: script.error("m", code=1), TypeError, "`code`"),  # type: ignore[arg-type]
    (lambda: script.response(script.CUT, "x"), ValueError, "items[0]"),
    (lambda: script.response("a", script.error("e"), "x"), ValueError, "items[1]"),
    (lambda: script.response(script.error("e"), script.CUT), ValueError, "items[0]"),
    (lambda: script.response(1), TypeError, "items[0]"),  # type: ignore[arg-type]
    (lambda: script.response({"type": "text_delta"}), TypeError, "items[0]"),  # type: ignore[arg-type]
    (lambda: script.response(response_id=""), ValueError, "`response_id`"),
    (lambda: script.response(response_id=3), TypeError, "`response_id`"),  # type: ignore[arg-type]
    (lambda: script.response(usage=(1,)), ValueError, "`usage`"),  # type: ignore[arg-type]
    (lambda: script.response(usage=(1, 2, 3)), ValueError, "`usage`"),  # type: ignore[arg-type]
    (lambda: script.response(usage=(-1, 0)), ValueError, "`usage` input"),
    (lambda: script.response(usage=(0, 2**53)), ValueError, "`usage` output"),
    (lambda: script.response(usage=(True, 0)), TypeError, "`usage` input"),
    (lambda: script.response(usage=(0, 1.0)), TypeError, "`usage` output"),  # type: ignore[arg-type]
    (lambda: script.response(usage=None), TypeError, "`usage`"),  # type: ignore[arg-type]
    (lambda: script.response(usage={"inputTokens": 1}), TypeError, "`usage`"),  # type: ignore[arg-type]
    (lambda: script.fixture(script.call("f", {})), TypeError, "responses[0]"),  # type: ignore[arg-type]
    (lambda: script.fixture(script.response(), {}), TypeError, "responses[1]"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("make", "kind", "names"), BAD)
def test_a_bad_argument_is_refused_at_once_by_name(
    make: Callable[[], object], kind: type[Exception], names: str
) -> None:
    with pytest.raises(kind) as caught:
        make()
    assert type(caught.value) is kind
    assert names in str(caught.value)


def test_the_value_types_check_their_arguments_too() -> None:
    with pytest.raises(TypeError, match="`items`"):
        script.Response(["text"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`name`"):
        script.Call("", {})
    with pytest.raises(TypeError, match="`message`"):
        script.Failure(b"bytes")  # type: ignore[arg-type]


def test_usage_may_be_a_list() -> None:
    fixture = script.fixture(script.response(usage=[3, 4]))  # type: ignore[arg-type]
    assert records(fixture)[-1]["usage"] == {"inputTokens": 3, "outputTokens": 4}


def test_a_call_changed_after_it_was_made_is_checked_again() -> None:
    scripted = script.call("f", {})
    scripted.arguments["bad"] = object()
    with pytest.raises(TypeError, match=r"`arguments\['bad'\]`"):
        script.fixture(script.response(scripted))


def test_long_keys_are_shortened_in_messages() -> None:
    with pytest.raises(TypeError) as caught:
        script.call("f", {"k" * 10_000: {"j" * 10_000: ()}})
    assert len(str(caught.value)) < 400


# -- properties ---------------------------------------------------------------------------

_JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.binary(max_size=3),
        st.just(script.CUT),
        st.just(object()),
        st.just(_Text("t")),
        st.just(script.response("r")),
        st.builds(script.error, st.text(max_size=3)),
        st.builds(script.call, st.text(min_size=1, max_size=3), st.just({})),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=3),
        st.frozensets(st.integers(), max_size=2),
    ),
    max_leaves=8,
)


@given(
    st.fixed_dictionaries({k: _JUNK for k in ("name", "arguments", "id", "text", "usage", "rid")})
)
def test_junk_in_gives_only_type_or_value_errors(junk: dict[str, object]) -> None:
    name, arguments, call_id, text, usage, rid = junk.values()
    attempts: list[Callable[[], object]] = [
        lambda: script.call(name, arguments, id=call_id),  # type: ignore[arg-type]
        lambda: script.error(text, code=call_id),  # type: ignore[arg-type]
        lambda: script.response(text, name, response_id=rid, usage=usage),  # type: ignore[arg-type]
        lambda: script.fixture(text, name),  # type: ignore[arg-type]
    ]
    for attempt in attempts:
        try:
            attempt()
        except (TypeError, ValueError) as error:
            assert type(error) in (TypeError, ValueError)
            assert str(error)


_PLAIN = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=5),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
_NAMES = st.sampled_from(["add", "mul", "search"])
_ITEMS = st.one_of(
    st.text(max_size=5),
    st.builds(
        script.call,
        _NAMES,
        st.dictionaries(st.text(max_size=3), _PLAIN, max_size=3),
        id=st.one_of(st.none(), st.sampled_from(["call-add-001", "mine", "x"])),
    ),
)
_ENDS = st.one_of(
    st.none(),
    st.just(script.CUT),
    st.builds(script.error, st.text(max_size=5), code=st.one_of(st.none(), st.text(max_size=3))),
)
_COUNTS = st.integers(0, 2**53 - 1)


@st.composite
def _responses(draw: st.DrawFn) -> script.Response:
    items: list[script.Item] = draw(st.lists(_ITEMS, max_size=4))
    last = draw(_ENDS)
    if last is not None:
        items.append(last)
    return script.response(
        *items,
        response_id=draw(st.one_of(st.none(), st.sampled_from(["r", "response-001"]))),
        usage=(draw(_COUNTS), draw(_COUNTS)),
    )


def _expected(responses: list[script.Response]) -> list[tuple[list[object], object]]:
    """An independent model of the replay: the SPEC's naming rule, then the parser's."""
    outcomes: list[tuple[list[object], object]] = []
    by_name: dict[str, int] = {}
    for number, scripted in enumerate(responses, start=1):
        chunks: list[object] = []
        seen: set[str] = set()
        outcome: object = None
        for item in scripted.items:
            if type(item) is script.Call:  # counted even after a failure: script names all
                by_name[item.name] = by_name.get(item.name, 0) + 1
            if outcome is not None:
                continue  # the stream settled: later records are never read
            if type(item) is str:
                chunks.append(("text", item))
            elif type(item) is script.Call:
                call_id = item.id or f"call-{item.name}-{by_name[item.name]:03d}"
                if call_id in seen:
                    outcome = Code.PROVIDER_DUPLICATE_TOOL_CALL
                else:
                    seen.add(call_id)
                    chunks.append((call_id, item.name, item.arguments))
            else:
                outcome = (
                    Code.PROVIDER_TRANSPORT_ERROR
                    if type(item) is script.Failure
                    else Code.PROVIDER_MISSING_TERMINAL
                )
        if outcome is None:
            usage = scripted.usage
            assert type(usage) is tuple
            outcome = (
                scripted.response_id or f"response-{number:03d}",
                "toolCall" if seen else "stop",
                {"inputTokens": usage[0], "outputTokens": usage[1]},
            )
        outcomes.append((chunks, outcome))
    return outcomes


def _observed(fixture: dict[str, object]) -> list[tuple[list[object], object]]:
    observed: list[tuple[list[object], object]] = []
    seen: list[object]
    for chunks, outcome in replay(fixture):
        seen = [
            ("text", c["text"])
            if c["type"] == "textDelta"
            else (c["id"], c["name"], c["arguments"])
            for c in chunks
        ]
        if isinstance(outcome, dict):
            observed.append(
                (seen, (outcome["responseId"], outcome["stopReason"], outcome["usage"]))
            )
        else:
            observed.append((seen, outcome))
    return observed


@given(st.lists(_responses(), max_size=4))
def test_every_script_replays_as_its_items_say(responses: list[script.Response]) -> None:
    fixture = script.fixture(*responses)
    assert json.loads(json.dumps(fixture)) == fixture  # plain JSON
    assert _observed(fixture) == _expected(responses)


def _version_1_writer(responses: list[script.Response]) -> dict[str, object]:
    """The writer ``script.fixture`` was before version 2, kept as the reference."""
    calls_by_name: dict[str, int] = {}
    written: list[object] = []
    for number, scripted in enumerate(responses, start=1):
        response_id = scripted.response_id or f"response-{number:03d}"
        records: list[object] = [
            {"type": "response_start", "responseId": response_id, "role": "assistant"}
        ]
        calls = 0
        ended = True
        for item in scripted.items:
            if type(item) is str:
                records.append({"type": "text_delta", "text": item})
            elif type(item) is script.Call:
                calls += 1
                position = calls_by_name.get(item.name, 0) + 1
                calls_by_name[item.name] = position
                call_id = item.id or f"call-{item.name}-{position:03d}"
                arguments = copy.deepcopy(item.arguments)
                records.append(
                    {"type": "tool_call", "id": call_id, "name": item.name, "arguments": arguments}
                )
            elif type(item) is script.Failure:
                record: dict[str, object] = {"type": "transport_error", "message": item.message}
                if item.code is not None:
                    record["code"] = item.code
                records.append(record)
                ended = False
            else:
                ended = False
        if ended:
            usage = scripted.usage
            assert type(usage) is tuple
            records.append(
                {
                    "type": "response_end",
                    "responseId": response_id,
                    "stopReason": "tool_call" if calls else "stop",
                    "usage": {"inputTokens": usage[0], "outputTokens": usage[1]},
                }
            )
        written.append({"records": records})
    return {"schemaVersion": 1, "responses": written}


@given(st.lists(_responses(), max_size=4))
def test_every_version_1_script_is_the_bytes_it_was_before_version_2(
    responses: list[script.Response],
) -> None:
    assert json.dumps(script.fixture(*responses)) == json.dumps(_version_1_writer(responses))


def test_public_names() -> None:
    # (Names that are not identifiers are pytest's assertion rewriting, which reaches
    # every module of a package that ships a pytest plugin.)
    public = {name for name in vars(script) if name.isidentifier() and not name.startswith("_")}
    modules_and_imports = {"annotations", "math", "dataclass", "field", "Final", "TypeAlias"}
    modules_and_imports |= {"cast", "final"}
    assert set(script.__all__) == public - modules_and_imports
    for name in script.__all__:
        if name not in ("CUT", "Item"):
            assert getattr(script, name).__doc__, name

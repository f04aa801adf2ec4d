"""``course.faults``: every variant fails as its name says, and nothing else changes."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import socket
from collections.abc import AsyncGenerator
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    FixtureProviderError,
    FixtureProviderErrorCode,
    faults,
    load_fixture,
    script,
)
from tests.helpers import ROUNDTRIP_PATH, Replayed, replayed, run

Code = FixtureProviderErrorCode


def check_variants(original: object, found: list[faults.Fault]) -> None:
    """Each fault fails on its response with its code; every other response is as before.

    One event loop for the lot: a loop per replay would be most of the test's time.
    """

    async def replay_all() -> tuple[Replayed, list[Replayed]]:
        return await replayed(original), [await replayed(fault.fixture) for fault in found]

    before, afters = run(replay_all())
    for fault, after in zip(found, afters, strict=True):
        assert len(after) == len(before)
        for index, (was, now) in enumerate(zip(before, after, strict=True)):
            if index == fault.response_index:
                assert now[1] == fault.expected_code, fault.name
            else:
                assert now == was, fault.name


BUNDLED_NAMES = [
    f"r{i}-{kind}"
    for i in (0, 1)
    for kind in (
        "cut-after-1",
        "cut-after-2",
        "transport-error-at-1",
        "transport-error-at-2",
        "duplicate-end",
        "no-start",
        "end-mismatch",
    )
]


def test_every_variant_of_the_bundled_fixture_fails_with_its_code() -> None:
    bundled = load_fixture(ROUNDTRIP_PATH)
    found = list(faults.variants(bundled))
    assert [fault.name for fault in found] == BUNDLED_NAMES
    assert [fault.expected_code for fault in found[:7]] == [
        Code.PROVIDER_MISSING_TERMINAL,
        Code.PROVIDER_MISSING_TERMINAL,
        Code.PROVIDER_TRANSPORT_ERROR,
        Code.PROVIDER_TRANSPORT_ERROR,
        Code.PROVIDER_DUPLICATE_TERMINAL,
        Code.PROVIDER_MISSING_START,
        Code.PROVIDER_RESPONSE_MISMATCH,
    ]
    check_variants(bundled, found)
    assert bundled == load_fixture(ROUNDTRIP_PATH)


def test_each_variant_is_the_table_row_it_names() -> None:
    start = {"type": "response_start", "responseId": "r", "role": "assistant"}
    text = {"type": "text_delta", "text": "hi"}
    end = {
        "type": "response_end",
        "responseId": "r",
        "stopReason": "stop",
        "usage": {"inputTokens": 1, "outputTokens": 2},
    }
    injected = {
        "type": "transport_error",
        "message": "injected transport error",
        "code": "injected",
    }
    fixture = {"schemaVersion": 1, "responses": [{"records": [start, text, end]}]}
    by_name = {fault.name: fault.fixture for fault in faults.variants(fixture)}
    expected = {
        "r0-cut-after-1": [start],
        "r0-cut-after-2": [start, text],
        "r0-transport-error-at-1": [start, injected, end],
        "r0-transport-error-at-2": [start, text, injected],
        "r0-duplicate-end": [start, text, end, end],
        "r0-no-start": [text, end],
        "r0-end-mismatch": [start, text, {**end, "responseId": "r-mismatch"}],
    }
    assert list(by_name) == list(expected)
    for name, records in expected.items():
        assert by_name[name] == {"schemaVersion": 1, "responses": [{"records": records}]}


def test_only_responses_that_succeed_have_variants() -> None:
    fixture = script.fixture(
        script.response("broken on purpose", script.error("boom")),
        script.response("fine"),
        script.response(script.CUT),
    )
    assert {fault.response_index for fault in faults.variants(fixture)} == {1}
    assert list(faults.variants(fixture, response_index=0)) == []


def test_response_index_picks_one_response() -> None:
    bundled = load_fixture(ROUNDTRIP_PATH)
    assert [f.name for f in faults.variants(bundled, response_index=1)] == BUNDLED_NAMES[7:]


@pytest.mark.parametrize("index", [2, -1, 10**100])
def test_an_out_of_range_index_is_a_value_error_at_the_call(index: int) -> None:
    with pytest.raises(ValueError, match="response_index"):
        faults.variants(load_fixture(ROUNDTRIP_PATH), response_index=index)


@pytest.mark.parametrize("index", [True, 1.0, "0"])
def test_an_index_that_is_no_int_is_a_type_error(index: object) -> None:
    with pytest.raises(TypeError, match="response_index"):
        faults.variants(load_fixture(ROUNDTRIP_PATH), response_index=index)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, [], {"schemaVersion": 3, "responses": []}])
def test_an_invalid_fixture_is_the_adapters_error(bad: object) -> None:
    with pytest.raises(FixtureProviderError) as caught:
        faults.variants(bad)
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE


def test_an_async_source_has_no_records_to_vary() -> None:
    async def nothing() -> AsyncGenerator[object]:
        return
        yield

    source = nothing()
    fixture = {"schemaVersion": 1, "responses": [{"records": source}]}
    with pytest.raises(ValueError, match="response 0"):
        faults.variants(fixture)
    run(source.aclose())


def test_variants_are_independent_copies() -> None:
    bundled = load_fixture(ROUNDTRIP_PATH)
    first, second = list(faults.variants(bundled))[:2]
    responses: Any = first.fixture["responses"]
    responses[1]["records"].clear()
    responses[0]["records"][0]["responseId"] = "changed"
    assert second.fixture["responses"][1]["records"]  # type: ignore[index]
    assert bundled == load_fixture(ROUNDTRIP_PATH)
    # A repeated record is a separate copy too.
    duplicate = next(f for f in faults.variants(bundled) if f.name == "r0-duplicate-end")
    records: Any = duplicate.fixture["responses"]
    assert records[0]["records"][2] == records[0]["records"][3]
    assert records[0]["records"][2] is not records[0]["records"][3]


def test_variants_work_inside_a_running_event_loop() -> None:
    async def inside() -> list[str]:
        return [fault.name for fault in faults.variants(load_fixture(ROUNDTRIP_PATH))]

    assert asyncio.run(inside()) == BUNDLED_NAMES


def test_variants_need_no_event_loop_and_no_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    # A suite that refuses the network refuses socketpair, which an event loop needs.
    def refused(*args: object, **kwargs: object) -> NoReturn:
        raise OSError("the network is refused in this test")

    monkeypatch.setattr(socket, "socket", refused)
    monkeypatch.setattr(socket, "socketpair", refused)
    fixture = load_fixture(ROUNDTRIP_PATH)
    assert [fault.name for fault in faults.variants(fixture)] == BUNDLED_NAMES

    async def inside() -> list[str]:
        return [fault.name for fault in faults.variants(fixture)]

    coroutine = inside()  # no asyncio.run here: it would need the self-pipe socket
    with pytest.raises(StopIteration) as done:
        coroutine.send(None)
    assert done.value.value == BUNDLED_NAMES


def test_a_fault_is_frozen_with_a_short_repr() -> None:
    fault = next(faults.variants(load_fixture(ROUNDTRIP_PATH)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fault.name = "other"  # type: ignore[misc]
    assert repr(fault).startswith("Fault(name='r0-cut-after-1', response_index=0,")
    assert "schemaVersion" not in repr(fault)


def test_public_names() -> None:
    assert faults.__all__ == ["Fault", "variants"]
    assert faults.Fault.__doc__
    assert faults.variants.__doc__


# -- properties over scripted fixtures ----------------------------------------------------

_ITEMS = st.one_of(
    st.text(max_size=4),
    st.builds(
        script.call,
        st.sampled_from(["add", "search"]),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
)
_ENDS = st.sampled_from([None, script.CUT, script.error("on purpose")])


@st.composite
def _fixtures(draw: st.DrawFn) -> dict[str, object]:
    responses = []
    for _ in range(draw(st.integers(1, 3))):
        items: list[script.Item] = draw(st.lists(_ITEMS, max_size=3))
        last = draw(_ENDS)
        if last is not None:
            items.append(last)
        responses.append(script.response(*items, usage=(draw(st.integers(0, 9)), 1)))
    return script.fixture(*responses)


@given(_fixtures())
def test_every_variant_of_a_scripted_fixture_fails_only_where_it_says(
    fixture: dict[str, object],
) -> None:
    pristine = copy.deepcopy(fixture)
    found = list(faults.variants(fixture))
    assert fixture == pristine
    names = [fault.name for fault in found]
    assert len(names) == len(set(names))
    outcomes = run(replayed(fixture))
    responses: Any = fixture["responses"]
    expected_count = sum(
        2 * (len(response["records"]) - 1) + 3
        for response, (_, outcome) in zip(responses, outcomes, strict=True)
        if isinstance(outcome, dict)
    )
    assert len(found) == expected_count
    check_variants(fixture, found)
    assert fixture == pristine


def _version_1_list(fixture: dict[str, Any]) -> list[tuple[str, int, Code, dict[str, Any]]]:
    """The version-1 table as ``variants`` gave it before version 2: the reference."""
    outcomes = run(replayed(fixture))
    made: list[tuple[str, int, Code, dict[str, Any]]] = []
    for index, (response, (_, outcome)) in enumerate(
        zip(fixture["responses"], outcomes, strict=True)
    ):
        if not isinstance(outcome, dict):
            continue
        records = response["records"]
        last = len(records) - 1
        end = {**records[last], "responseId": records[last]["responseId"] + "-mismatch"}
        injected = {
            "type": "transport_error",
            "message": "injected transport error",
            "code": "injected",
        }
        rows = [
            *[
                (f"cut-after-{k}", records[:k], Code.PROVIDER_MISSING_TERMINAL)
                for k in range(1, last + 1)
            ],
            *[
                (
                    f"transport-error-at-{k}",
                    [*records[:k], injected, *records[k + 1 :]],
                    Code.PROVIDER_TRANSPORT_ERROR,
                )
                for k in range(1, last + 1)
            ],
            ("duplicate-end", [*records, records[last]], Code.PROVIDER_DUPLICATE_TERMINAL),
            ("no-start", records[1:], Code.PROVIDER_MISSING_START),
            ("end-mismatch", [*records[:last], end], Code.PROVIDER_RESPONSE_MISMATCH),
        ]
        for kind, varied, code in rows:
            whole = copy.deepcopy(fixture)
            whole["responses"][index] = {"records": copy.deepcopy(varied)}
            made.append((f"r{index}-{kind}", index, code, whole))
    return made


@settings(max_examples=30)
@given(_fixtures())
def test_a_version_1_fixture_gives_exactly_the_version_1_list(fixture: dict[str, Any]) -> None:
    found = list(faults.variants(fixture))
    expected = _version_1_list(fixture)
    assert [(f.name, f.response_index, f.expected_code) for f in found] == [
        (name, index, code) for name, index, code, _ in expected
    ]
    for fault, (_, _, _, whole) in zip(found, expected, strict=True):
        assert fault.expected_stop_reason is None
        assert json.dumps(fault.fixture) == json.dumps(whole)  # key order included
        assert fault == faults.Fault(fault.name, fault.response_index, whole, fault.expected_code)

"""``course.faults``, version 2: the new variants are the SPEC's table, each replays as it
says, and a fault's fixture is made when read, a new dict each time."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import tracemalloc
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import CourseStopReason, FixtureProviderErrorCode, faults, load_fixture, script
from tests.helpers import ROUNDTRIP_PATH, Replayed, replayed, roundtrip, run

Code = FixtureProviderErrorCode
LENGTH: CourseStopReason = "length"

START = {"type": "response_start", "responseId": "r", "role": "assistant", "delay": 0}
THINK = {"type": "thinking_delta", "text": "hmm"}
TEXT = {"type": "text_delta", "text": "hi", "delay": 0.0}
END = {
    "type": "response_end",
    "responseId": "r",
    "stopReason": "stop",
    "usage": {"inputTokens": 1, "outputTokens": 2},
    "providerStopReason": "end_turn",
    "delay": 0,
}
RATE_LIMITED = {
    "type": "transport_error",
    "message": "Rate limit reached (injected)",
    "code": "rate_limit_exceeded",
    "status": 429,
    "retryAfter": 1,
}
OVERLOADED = {
    "type": "transport_error",
    "message": "Overloaded (injected)",
    "code": "overloaded_error",
    "status": 529,
}
REFUSAL = {"type": "refusal_delta", "text": "I can't help with that."}


def ended(stop: str) -> dict[str, object]:
    """E: the end with ``stop`` and no providerStopReason, its delay kept, keys in order."""
    end = {key: value for key, value in END.items() if key != "providerStopReason"}
    end["stopReason"] = stop
    return end


def v2(*responses: list[Any]) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": [{"records": list(r)} for r in responses]}


def by_name(found: list[faults.Fault]) -> dict[str, faults.Fault]:
    names = [fault.name for fault in found]
    assert len(names) == len(set(names))
    return {fault.name: fault for fault in found}


def without_request_ids(outcomes: Replayed) -> list[tuple[object, object]]:
    """Each response's outcome with its request id left out (an inserted response moves
    the later ones, and the request ids count calls)."""
    plain: list[tuple[object, object]] = []
    for chunks, outcome in outcomes:
        if isinstance(outcome, dict):
            plain.append((chunks, {k: v for k, v in outcome.items() if k != "requestId"}))
        else:
            plain.append((chunks, outcome))
    return plain


def check_variants(original: object, found: list[faults.Fault]) -> None:
    """Each fault settles its response as it expects; every other response, moved up by
    an inserted one or not, replays as before. One event loop for the lot."""

    async def replay_all() -> tuple[Replayed, list[Replayed]]:
        return await replayed(original), [await replayed(fault.fixture) for fault in found]

    replays = run(replay_all())
    before = without_request_ids(replays[0])
    for fault, replay in zip(found, replays[1], strict=True):
        after = without_request_ids(replay)
        i = fault.response_index
        expected: list[tuple[object, object] | None] = list(before)
        if len(after) == len(before) + 1:  # an inserted response
            expected.insert(i, None)
        else:
            assert len(after) == len(before), fault.name
        for index, (was, now) in enumerate(zip(expected, after, strict=True)):
            if index != i:
                assert now == was, fault.name
            elif fault.expected_code is not None:
                assert now[1] == fault.expected_code, fault.name
            else:
                outcome = now[1]
                assert isinstance(outcome, dict), (fault.name, outcome)
                assert outcome["stopReason"] == fault.expected_stop_reason, fault.name
                if "-stall-at-" in fault.name:
                    assert now == was, fault.name  # the same response, only later


# -- the table -------------------------------------------------------------------------------


def test_each_version_2_variant_is_the_table_row_it_names() -> None:
    fixture = v2([START, THINK, TEXT, END])
    found = list(faults.variants(fixture, stall=2.5))
    responses = {
        name: cast("list[dict[str, object]]", fault.fixture["responses"])
        for name, fault in by_name(found).items()
    }
    version_1 = [
        "r0-cut-after-1",
        "r0-cut-after-2",
        "r0-cut-after-3",
        "r0-transport-error-at-1",
        "r0-transport-error-at-2",
        "r0-transport-error-at-3",
        "r0-duplicate-end",
        "r0-no-start",
        "r0-end-mismatch",
    ]
    expected: dict[str, list[list[object]]] = {
        "r0-length-after-1": [[START, ended("length")]],
        "r0-length-after-2": [[START, THINK, ended("length")]],
        "r0-length-after-3": [[START, THINK, TEXT, ended("length")]],
        "r0-refused": [[START, REFUSAL, ended("refusal")]],
        "r0-content-filter": [[START, ended("content_filter")]],
        "r0-rate-limited": [[RATE_LIMITED], [START, THINK, TEXT, END]],
        "r0-overloaded": [[OVERLOADED], [START, THINK, TEXT, END]],
        "r0-stall-at-0": [[{**START, "delay": 2.5}, THINK, TEXT, END]],
        "r0-stall-at-1": [[START, {**THINK, "delay": 2.5}, TEXT, END]],
        "r0-stall-at-2": [[START, THINK, {**TEXT, "delay": 2.5}, END]],
        "r0-stall-at-3": [[START, THINK, TEXT, {**END, "delay": 2.5}]],
    }
    assert list(responses) == version_1 + list(expected)
    for name, records in expected.items():
        fault = by_name(found)[name]
        # Byte for byte: keys in the order of the original records.
        made = json.dumps(fault.fixture)
        assert made == json.dumps(v2(*records)), name
    codes = {fault.name: (fault.expected_code, fault.expected_stop_reason) for fault in found}
    assert codes["r0-length-after-2"] == (None, "length")
    assert codes["r0-refused"] == (None, "refusal")
    assert codes["r0-content-filter"] == (None, "contentFilter")
    assert codes["r0-rate-limited"] == (Code.PROVIDER_TRANSPORT_ERROR, None)
    assert codes["r0-overloaded"] == (Code.PROVIDER_TRANSPORT_ERROR, None)
    assert codes["r0-stall-at-3"] == (None, "stop")
    assert codes["r0-no-start"] == (Code.PROVIDER_MISSING_START, None)
    # Replayed without really waiting: the stall variants with a stall of 0.
    check_variants(fixture, [fault for fault in found if "-stall-at-" not in fault.name])
    check_variants(fixture, list(faults.variants(fixture, stall=0)))


def test_a_version_1_fixture_gives_version_2_variants_only_with_stall() -> None:
    bundled = load_fixture(ROUNDTRIP_PATH)
    plain = list(faults.variants(bundled))
    assert {fault.fixture["schemaVersion"] for fault in plain} == {1}
    stalled = list(faults.variants(bundled, stall=0))
    names = {fault.name for fault in plain}
    assert [fault for fault in stalled if fault.name in names] == plain
    later = [fault for fault in stalled if fault.name not in names]
    # Response 0 (3 records): its 7 version-1 rows, its 9 version-2 rows, then response 1.
    assert [fault.name for fault in stalled[7:19]] == [
        "r0-length-after-1",
        "r0-length-after-2",
        "r0-refused",
        "r0-content-filter",
        "r0-rate-limited",
        "r0-overloaded",
        "r0-stall-at-0",
        "r0-stall-at-1",
        "r0-stall-at-2",
        "r1-cut-after-1",
        "r1-cut-after-2",
        "r1-transport-error-at-1",
    ]
    assert {fault.fixture["schemaVersion"] for fault in later} == {2}
    assert by_name(stalled)["r0-stall-at-1"].expected_stop_reason == "toolCall"
    assert by_name(stalled)["r1-stall-at-1"].expected_stop_reason == "stop"
    assert by_name(stalled)["r0-refused"].fixture["schemaVersion"] == 2
    check_variants(bundled, stalled)
    assert bundled == load_fixture(ROUNDTRIP_PATH)


def test_an_inserted_response_moves_the_original_and_later_ones_up() -> None:
    first = [START, TEXT, END]
    second = [{**START, "responseId": "s"}, {**END, "responseId": "s"}]
    third = [{**START, "responseId": "t"}, {**END, "responseId": "t"}]
    fixture = v2(first, second, third)
    fault = by_name(list(faults.variants(fixture, response_index=1)))["r1-rate-limited"]
    assert fault.response_index == 1
    assert fault.fixture == v2(first, [RATE_LIMITED], second, third)


def test_a_variant_equal_to_the_original_is_left_out() -> None:
    length_end = ended("length")
    fixture = v2(
        [START, TEXT, length_end],  # its length-after-2 is itself
        [START, REFUSAL, ended("refusal")],  # its refused variant is itself
        [START, ended("content_filter")],  # and its content-filter variant
    )
    names = [fault.name for fault in faults.variants(fixture, stall=0)]
    assert "r0-length-after-1" in names
    assert "r0-length-after-2" not in names
    assert "r1-refused" not in names
    assert "r2-content-filter" not in names
    # Only the refusal holds no delay of 0 already: the one stall-at-k for stall=0.
    assert [name for name in names if "-stall-at-" in name] == ["r1-stall-at-1"]
    assert "r0-stall-at-0" in [fault.name for fault in faults.variants(fixture, stall=1)]
    # The end's providerStopReason goes: a length end that had one still gives the row.
    kept = v2([START, TEXT, {**length_end, "providerStopReason": "max_tokens"}])
    assert "r0-length-after-2" in [fault.name for fault in faults.variants(kept)]


def test_no_length_variant_holds_a_refusal() -> None:
    fixture = v2([START, TEXT, REFUSAL, TEXT, ended("refusal")])
    names = [fault.name for fault in faults.variants(fixture)]
    assert [name for name in names if "length" in name] == [
        "r0-length-after-1",
        "r0-length-after-2",
    ]
    check_variants(fixture, list(faults.variants(fixture)))


def test_a_response_that_fails_on_purpose_has_no_variants_in_version_2_either() -> None:
    fixture = script.fixture(
        script.response(script.refusal("no"), stop="stop"),  # a stop reason mismatch
        script.response(script.error("slow", status=429, retry_after=1)),
        script.response("fine", model="m"),
    )
    assert {fault.response_index for fault in faults.variants(fixture, stall=0)} == {2}


# -- delays are judged, never waited for -----------------------------------------------------


def test_judging_the_fixtures_delays_never_sleeps() -> None:
    # Replayed outside an asyncio task, a real wait would be a TypeError naming asyncio;
    # an hour would be an hour.
    fixture = v2([{**START, "delay": 3600}, {**TEXT, "delay": 3600}, {**END, "delay": 3600.0}])
    found = list(faults.variants(fixture, stall=1800))
    assert len(found) == 2 * 2 + 3 + 2 + 4 + 3  # v1 rows, length 1..2, 4 more, stall 0..2
    assert not [f for f in faults.variants(fixture, stall=3600) if "stall" in f.name]


@pytest.mark.parametrize(
    "delay", [True, -1, 3600.5, None, "1", pytest.param(10**400, id="a-401-digit-int")]
)
def test_an_invalid_delay_fails_its_response_on_purpose(delay: object) -> None:
    fixture = v2([START, {**TEXT, "delay": delay}, END], [START, TEXT, END])
    assert {fault.response_index for fault in faults.variants(fixture)} == {1}


def test_a_delay_in_a_version_1_fixture_is_an_unknown_key() -> None:
    fixture = {"schemaVersion": 1, "responses": [{"records": [START, END]}]}
    assert list(faults.variants(fixture, stall=1)) == []


# -- arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stall", "kind"),
    [
        (True, TypeError),
        ("1", TypeError),
        ([1], TypeError),
        (-1, ValueError),
        (-0.5, ValueError),
        (3600.001, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (10**400, ValueError),
    ],
)
def test_a_bad_stall_is_refused_at_the_call(stall: object, kind: type[Exception]) -> None:
    with pytest.raises(kind, match="`stall`") as caught:
        faults.variants(load_fixture(ROUNDTRIP_PATH), stall=stall)  # type: ignore[arg-type]
    assert type(caught.value) is kind
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize("stall", [0, 0.0, 3600, 3600.0, 1e-9])
def test_a_stall_at_the_bounds_is_accepted(stall: float) -> None:
    found = list(faults.variants(load_fixture(ROUNDTRIP_PATH), stall=stall))
    stalled = [fault for fault in found if "-stall-at-" in fault.name]
    assert len(stalled) == 6
    records = cast("list[dict[str, Any]]", stalled[0].fixture["responses"])[0]["records"]
    assert records[0]["delay"] == stall
    assert type(records[0]["delay"]) is type(stall)


# -- a fault's fixture is made when read ---------------------------------------------------------


def test_each_read_is_a_new_dict_shared_with_nothing() -> None:
    bundled = load_fixture(ROUNDTRIP_PATH)
    fault = by_name(list(faults.variants(bundled, stall=1)))["r0-rate-limited"]
    first, second = fault.fixture, fault.fixture
    assert first == second
    assert first is not second
    responses: Any = first["responses"]
    responses[1]["records"][0]["responseId"] = "changed"
    responses[0]["records"].clear()
    assert fault.fixture == second
    assert bundled == load_fixture(ROUNDTRIP_PATH)


def test_changing_the_input_after_collection_changes_no_variant() -> None:
    fixture = roundtrip()
    found = list(faults.variants(fixture))
    expected = [fault.fixture for fault in found]
    responses: Any = fixture["responses"]
    responses[0]["records"][1]["arguments"]["left"] = 99
    responses[1]["records"].clear()
    assert [fault.fixture for fault in found] == expected


def test_shared_sub_objects_stay_shared_in_the_untouched_responses() -> None:
    graph: object = [0]
    for _ in range(40):
        graph = [graph, graph]  # 2**40 leaves as a tree, 41 lists as a graph
    fixture = script.fixture(
        script.response(script.call("f", {"graph": graph})), script.response("y")
    )
    fault = by_name(list(faults.variants(fixture, response_index=1)))["r1-no-start"]
    untouched: Any = cast("list[Any]", fault.fixture["responses"])[0]
    kept = untouched["records"][1]["arguments"]["graph"]
    assert kept[0] is kept[1]


def test_collecting_many_variants_holds_no_copy_per_variant() -> None:
    # 10 responses of 102 records: 2,050 variants. A copy per variant held 384 MiB at
    # its peak; one private copy and a recipe per variant, about 1 MiB.
    fixture = script.fixture(*[script.response(*[f"w{k}" for k in range(100)]) for _ in range(10)])
    tracemalloc.start()
    try:
        found = list(faults.variants(fixture))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found) == 2050
    assert peak < 8 * 2**20, peak


# -- a fault's value ---------------------------------------------------------------------------


def test_a_fault_is_frozen() -> None:
    fault = next(faults.variants(load_fixture(ROUNDTRIP_PATH)))
    for name in ("name", "response_index", "fixture", "expected_code", "expected_stop_reason"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fault, name, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(fault, name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fault.other = 1


def test_equality_hash_copy_and_pickle() -> None:
    found = list(faults.variants(load_fixture(ROUNDTRIP_PATH), stall=1))
    for fault in found:
        by_hand = faults.Fault(
            fault.name,
            fault.response_index,
            fault.fixture,
            fault.expected_code,
            fault.expected_stop_reason,
        )
        assert by_hand == fault
        assert hash(by_hand) == hash(fault)
        assert copy.copy(fault) == fault
        assert copy.deepcopy(fault) == fault
        assert pickle.loads(pickle.dumps(fault)) == fault
        assert pickle.loads(pickle.dumps(fault)).fixture == fault.fixture
    assert found[0] != found[1]
    assert found[0] != "r0-cut-after-1"
    first = found[0]
    other = faults.Fault(first.name, first.response_index, {"other": 1}, first.expected_code)
    assert other != first
    assert len(set(found)) == len(found)


def test_a_hand_built_fault_copies_its_fixture() -> None:
    fixture: dict[str, Any] = roundtrip()
    fault = faults.Fault("mine", 0, fixture, None, LENGTH)
    fixture["schemaVersion"] = 3
    assert fault.fixture == load_fixture(ROUNDTRIP_PATH)
    assert fault.fixture is not fault.fixture
    assert fault.expected_stop_reason == LENGTH
    assert repr(fault) == (
        "Fault(name='mine', response_index=0, expected_code=None, expected_stop_reason='length')"
    )


BAD_FAULTS: list[tuple[tuple[Any, ...], type[Exception] | None, str]] = [
    (("", 0, {}, Code.PROVIDER_ABORTED), ValueError, "`name`"),
    ((b"n", 0, {}, Code.PROVIDER_ABORTED), TypeError, "`name`"),
    (("n", True, {}, Code.PROVIDER_ABORTED), TypeError, "`response_index`"),
    (("n", -1, {}, Code.PROVIDER_ABORTED), ValueError, "`response_index`"),
    (("n", 0, [], Code.PROVIDER_ABORTED), TypeError, "`fixture`"),
    (("n", 0, {}, "PROVIDER_ABORTED"), TypeError, "`expected_code`"),
    (("n", 0, {}, None, "length"), None, ""),
    (("n", 0, {}, None, "max_tokens"), ValueError, "`expected_stop_reason`"),
    (("n", 0, {}, None, 1), TypeError, "`expected_stop_reason`"),
    (("n", 0, {}, None), ValueError, "exactly one"),
    (("n", 0, {}, Code.PROVIDER_ABORTED, "stop"), ValueError, "exactly one"),
]


@pytest.mark.parametrize(("arguments", "kind", "names"), BAD_FAULTS)
def test_a_fault_checks_its_arguments(
    arguments: tuple[Any, ...], kind: type[Exception] | None, names: str
) -> None:
    if kind is None:
        faults.Fault(*arguments)
        return
    with pytest.raises(kind) as caught:
        faults.Fault(*arguments)
    assert type(caught.value) is kind
    assert names in str(caught.value)


# -- properties over scripted version-2 fixtures ---------------------------------------------------

_ITEMS = st.one_of(
    st.text(max_size=3),
    st.builds(script.call, st.sampled_from(["f", "g"]), st.just({})),
    st.builds(script.thinking, st.text(max_size=2), signature=st.sampled_from([None, "s"])),
    st.builds(script.refusal, st.text(max_size=2)),
    st.just(script.wait(0)),
)
_ENDS = st.sampled_from(
    [None, None, script.CUT, script.error("e", status=500), script.incomplete_call("f", "{")]
)


@st.composite
def _fixtures(draw: st.DrawFn) -> dict[str, object]:
    responses = []
    for _ in range(draw(st.integers(1, 3))):
        items: list[script.Item] = [
            item for item in draw(st.lists(_ITEMS, max_size=3)) if type(item) is not script.Wait
        ]
        last = draw(_ENDS)
        if draw(st.booleans()) and (items or last is not script.CUT):
            items.insert(0, script.wait(0))  # a wait right before a cut is refused
        if last is not None:
            items.append(last)
        responses.append(script.response(*items, start_delay=draw(st.sampled_from([None, 0]))))
    return script.fixture(*responses)


@settings(max_examples=25)
@given(_fixtures(), st.sampled_from([None, 0]))
def test_every_variant_of_a_scripted_fixture_settles_only_where_it_says(
    fixture: dict[str, object], stall: int | None
) -> None:
    pristine = copy.deepcopy(fixture)
    found = list(faults.variants(fixture, stall=stall))
    assert fixture == pristine
    by_name(found)
    check_variants(fixture, found)
    assert fixture == pristine

"""Construction: the fixture's shape, the plain-JSON snapshot, and what it never does.

Every failure here is ``PROVIDER_INVALID_FIXTURE`` raised by the constructor, located
by ``path``, ``response_index`` and ``record_index``. The meaning of records is left
to streaming; the caller's objects are copied once and never consulted again.
"""

from __future__ import annotations

import decimal
import gc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from course import (
    CourseModelRequest,
    CourseTextDeltaChunk,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course._json import MAX_DEPTH, JsonObject

from .helpers import collect, end, fixture, roundtrip, run, source_of, start, stream_one, text

Code = FixtureProviderErrorCode


def rejected(data: object) -> FixtureProviderError:
    """Construct an adapter for ``data`` and return its ``PROVIDER_INVALID_FIXTURE``."""
    with pytest.raises(FixtureProviderError) as caught:
        FixtureProviderAdapter(data)
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE
    return caught.value


def assert_location(
    error: FixtureProviderError,
    path: str,
    response_index: int | None = None,
    record_index: int | None = None,
) -> None:
    assert (error.path, error.response_index, error.record_index) == (
        path,
        response_index,
        record_index,
    )


def nested_lists(levels: int) -> list[object]:
    """``levels`` lists, each the only item of the one outside it (built iteratively)."""
    outer: list[object] = []
    inner = outer
    for _ in range(levels - 1):
        child: list[object] = []
        inner.append(child)
        inner = child
    return outer


def nested_dicts(levels: int) -> dict[str, object]:
    outer: dict[str, object] = {}
    inner = outer
    for _ in range(levels - 1):
        child: dict[str, object] = {}
        inner["k"] = child
        inner = child
    return outer


def tool_record(arguments: object, call_id: str = "call-1") -> dict[str, object]:
    return {"type": "tool_call", "id": call_id, "name": "add", "arguments": arguments}


def tool_response(*records: dict[str, object]) -> list[object]:
    return [start(), *records, end(stop_reason="tool_call")]


def first_tool_chunk(data: object) -> CourseToolCallChunk:
    outcome = stream_one(data)
    assert outcome.error is None, outcome.error
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    return chunk


# -- the fixture and response shapes -----------------------------------------------------


def test_a_well_formed_fixture_constructs_with_every_response_queued() -> None:
    adapter = FixtureProviderAdapter(roundtrip())
    assert (adapter.pending, adapter.call_count) == (2, 0)


def test_an_empty_response_list_is_a_valid_fixture() -> None:
    assert FixtureProviderAdapter({"schemaVersion": 1, "responses": []}).pending == 0


class IntSubclass(int):
    pass


@pytest.mark.parametrize(
    "version",
    [True, 1.0, "1", 3, 2.0, 0, -1, None, [1], {"v": 1}, IntSubclass(1), IntSubclass(2)],
    ids=repr,
)
def test_schema_version_must_be_exactly_the_int_1_or_2(version: object) -> None:
    error = rejected({"schemaVersion": version, "responses": []})
    assert_location(error, "/schemaVersion")


class DictSubclass(dict[str, object]):
    pass


@pytest.mark.parametrize(
    "data",
    [None, [], "fixture", 1, DictSubclass(schemaVersion=1, responses=[])],
    ids=repr,
)
def test_the_fixture_must_be_a_plain_dict(data: object) -> None:
    assert_location(rejected(data), "")


def test_an_unknown_fixture_key_is_rejected_at_that_key() -> None:
    data = {"schemaVersion": 1, "responses": [], "comment": "hi"}
    assert_location(rejected(data), "/comment")


@pytest.mark.parametrize("missing", ["schemaVersion", "responses"])
def test_a_missing_fixture_key_is_rejected(missing: str) -> None:
    data: dict[str, object] = {"schemaVersion": 1, "responses": []}
    del data[missing]
    error = rejected(data)
    assert_location(error, "")
    assert missing in error.message


@pytest.mark.parametrize("key", [1, None, ("responses",)], ids=repr)
def test_a_non_str_fixture_key_is_rejected(key: object) -> None:
    assert_location(rejected({"schemaVersion": 1, "responses": [], key: 1}), "")


@pytest.mark.parametrize(
    "responses",
    [(), {"0": {"records": []}}, None, "responses", iter([])],
    ids=lambda v: type(v).__name__,
)
def test_responses_must_be_a_list(responses: object) -> None:
    assert_location(rejected({"schemaVersion": 1, "responses": responses}), "/responses")


def test_an_unknown_response_key_is_rejected_with_its_index() -> None:
    data = fixture([], [])
    data["responses"] = [{"records": []}, {"records": [], "delay": 1}]
    assert_location(rejected(data), "/responses/1/delay", 1)


def test_a_response_without_records_is_rejected_with_its_index() -> None:
    data = {"schemaVersion": 1, "responses": [{"records": []}, {}]}
    error = rejected(data)
    assert_location(error, "/responses/1", 1)
    assert "records" in error.message


@pytest.mark.parametrize(
    "response", [[], None, "r", DictSubclass(records=[])], ids=lambda v: type(v).__name__
)
def test_a_response_must_be_a_plain_dict(response: object) -> None:
    data = {"schemaVersion": 1, "responses": [{"records": []}, response]}
    assert_location(rejected(data), "/responses/1", 1)


def sync_generator() -> Iterator[object]:
    yield start()


@pytest.mark.parametrize(
    "records",
    [(), {"0": start()}, None, "records", sync_generator(), iter([start()]), frozenset()],
    ids=lambda v: type(v).__name__,
)
def test_records_must_be_a_list_or_an_async_iterable(records: object) -> None:
    data = fixture([], records)
    assert_location(rejected(data), "/responses/1/records", 1)


class AsyncIterableOnly:
    """An async iterable that is not an async generator."""

    def __aiter__(self) -> AsyncIterator[object]:
        return source_of([start(), end()])


def test_records_may_be_an_async_generator_or_any_async_iterable() -> None:
    adapter = FixtureProviderAdapter(fixture(source_of([]), AsyncIterableOnly()))
    assert adapter.pending == 2
    outcome = run(collect(adapter.stream(CourseModelRequest("a"))))
    assert outcome.code == "PROVIDER_MISSING_TERMINAL"
    outcome = run(collect(adapter.stream(CourseModelRequest("b"))))
    assert outcome.response is not None


# -- plain JSON by exact type ------------------------------------------------------------


class ListSubclass(list[object]):
    pass


class StrSubclass(str):
    pass


class FloatSubclass(float):
    pass


class Custom:
    pass


NOT_PLAIN: list[tuple[str, object]] = [
    ("dict subclass", DictSubclass(a=1)),
    ("list subclass", ListSubclass([1])),
    ("str subclass", StrSubclass("s")),
    ("int subclass", IntSubclass(3)),
    ("float subclass", FloatSubclass(0.5)),
    ("tuple", (1, 2)),
    ("set", {1, 2}),
    ("frozenset", frozenset({1})),
    ("bytes", b"x"),
    ("bytearray", bytearray(b"x")),
    ("mappingproxy", MappingProxyType({"a": 1})),
    ("decimal", decimal.Decimal("1.5")),
    ("complex", 1j),
    ("custom object", Custom()),
    ("class", Custom),
    ("function", len),
    ("NaN", float("nan")),
    ("inf", float("inf")),
    ("-inf", float("-inf")),
    ("int of 4301 digits", 10**4300),
    ("negative int of 4301 digits", -(10**4300)),
]


@pytest.mark.parametrize(("label", "value"), NOT_PLAIN, ids=[label for label, _ in NOT_PLAIN])
def test_a_non_plain_value_deep_in_a_record_is_rejected_where_it_sits(
    label: str, value: object
) -> None:
    record = tool_record({"a": [1, {"b": value}]})
    error = rejected(fixture([], tool_response(record)))
    assert_location(error, "/responses/1/records/1/arguments/a/1/b", 1, 1)


@pytest.mark.parametrize(("label", "value"), NOT_PLAIN, ids=[label for label, _ in NOT_PLAIN])
def test_a_non_plain_record_is_rejected_at_construction(label: str, value: object) -> None:
    error = rejected(fixture([start(), value]))
    assert_location(error, "/responses/0/records/1", 0, 1)


@pytest.mark.parametrize(
    "key",
    [True, False, 1, 1.5, None, ("a",), StrSubclass("a")],
    ids=lambda v: f"{type(v).__name__}({v!r})",
)
def test_a_non_str_key_in_a_record_is_rejected_at_its_object(key: object) -> None:
    error = rejected(fixture([start(), tool_record({"inner": {key: 1}})]))
    assert_location(error, "/responses/0/records/1/arguments/inner", 0, 1)


def test_values_at_the_edge_of_plain_json_are_accepted() -> None:
    biggest = 10**4300 - 1  # 4300 digits
    arguments = {
        "big": biggest,
        "small": -biggest,
        "float": 1.7976931348623157e308,
        "tiny": -5e-324,
        "flags": [True, False, None],
        "empty": [{}, [], ""],
    }
    chunk = first_tool_chunk(fixture(tool_response(tool_record(arguments))))
    assert thaw(chunk.arguments) == {**arguments, "empty": [{}, [], ""]}


# -- cycles and depth --------------------------------------------------------------------


def test_a_record_that_contains_itself_is_a_cycle() -> None:
    record: dict[str, object] = {"type": "text_delta", "text": "x"}
    record["self"] = record
    error = rejected(fixture([start(), record]))
    assert_location(error, "/responses/0/records/1/self", 0, 1)
    assert "cycle" in error.message


def test_a_list_that_contains_itself_is_a_cycle() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    error = rejected(fixture([start(), tool_record({"a": loop})]))
    assert_location(error, "/responses/0/records/1/arguments/a/1", 0, 1)


def test_a_cycle_through_the_fixture_root_is_rejected() -> None:
    data = fixture([start(), text("x")])
    call = tool_record(data)
    data["responses"] = [{"records": [start(), call]}]
    error = rejected(data)
    assert_location(error, "/responses/0/records/1/arguments/responses/0/records/1", 0, 1)


def test_a_cycle_through_the_record_list_is_rejected() -> None:
    records: list[object] = [start()]
    records.append(tool_record({"records": records}))
    error = rejected(fixture(records))
    assert_location(error, "/responses/0/records/1/arguments/records/1", 0, 1)


def test_the_same_container_twice_is_sharing_not_a_cycle() -> None:
    leaf: list[object] = [1]
    chunk = first_tool_chunk(fixture(tool_response(tool_record({"a": [leaf, leaf, [leaf]]}))))
    assert thaw(chunk.arguments) == {"a": [[1], [1], [[1]]]}


RECORD_DEPTH = 4  # the fixture root, the response list, the response, the record list


def test_a_record_nested_exactly_to_the_limit_is_accepted() -> None:
    adapter = FixtureProviderAdapter(fixture([nested_lists(MAX_DEPTH - RECORD_DEPTH)]))
    assert adapter.pending == 1


def test_a_record_nested_one_past_the_limit_is_rejected_at_the_deepest_container() -> None:
    levels = MAX_DEPTH - RECORD_DEPTH + 1
    error = rejected(fixture([nested_lists(levels)]))
    assert_location(error, "/responses/0/records/0" + "/0" * (levels - 1), 0, 0)


def test_tool_arguments_nested_to_the_limit_stream_and_thaw() -> None:
    # record 5, arguments 6, then the rest of the levels inside the arguments.
    arguments = nested_dicts(MAX_DEPTH - RECORD_DEPTH - 1)
    chunk = first_tool_chunk(fixture(tool_response(tool_record(arguments))))
    assert thaw(chunk.arguments) == arguments


@pytest.mark.parametrize("build", [nested_lists, nested_dicts], ids=["lists", "dicts"])
def test_100000_levels_is_a_clean_error_not_recursion(
    build: Callable[[int], object],
) -> None:
    error = rejected(fixture([start(), tool_record(build(100_000))]))
    assert error.response_index == 0 and error.record_index == 1
    assert error.path is not None and error.path.startswith("/responses/0/records/1/arguments/")
    assert str(MAX_DEPTH) in error.message


def test_100000_levels_as_the_record_itself_is_a_clean_error() -> None:
    error = rejected(fixture([nested_dicts(100_000)]))
    assert error.path == "/responses/0/records/0" + "/k" * (MAX_DEPTH - RECORD_DEPTH)


# -- meaning is left to streaming --------------------------------------------------------


@pytest.mark.parametrize("record", [42, "text", None, True, 1.5, [], [start()]], ids=repr)
def test_a_non_object_record_passes_construction_and_fails_when_streamed(
    record: object,
) -> None:
    adapter = FixtureProviderAdapter(fixture([start(), text("a"), record, end()]))
    outcome = run(collect(adapter.stream(CourseModelRequest("req"))))
    assert [c.text for c in outcome.chunks if isinstance(c, CourseTextDeltaChunk)] == ["a"]
    error = outcome.error
    assert error is not None and error.code is Code.PROVIDER_MALFORMED_EVENT
    assert (error.response_index, error.record_index) == (0, 2)
    assert outcome.result_error is error


def test_a_broken_response_does_not_stop_the_next_one() -> None:
    data = fixture([text("orphan"), end()], [start("r-2"), text("fine"), end("r-2")])
    adapter = FixtureProviderAdapter(data)
    assert adapter.pending == 2
    first = run(collect(adapter.stream(CourseModelRequest("a"))))
    assert first.error is not None and first.error.code is Code.PROVIDER_MISSING_START
    second = run(collect(adapter.stream(CourseModelRequest("b"))))
    assert second.error is None and second.response is not None
    assert second.response.response_id == "r-2"
    assert [c.to_dict() for c in second.chunks] == [
        {"type": "textDelta", "text": "fine", "contentIndex": 0}
    ]


def test_unknown_record_keys_and_types_are_not_judged_at_construction() -> None:
    data = fixture([{"type": "mystery", "x": 1}], [{"type": "text_delta", "nope": 1}])
    assert FixtureProviderAdapter(data).pending == 2


# -- the snapshot ------------------------------------------------------------------------


def test_mutating_the_callers_fixture_after_construction_changes_nothing_queued() -> None:
    numbers: list[object] = [1, 2]
    arguments: dict[str, object] = {"left": 20, "numbers": numbers}
    call = tool_record(arguments)
    first: list[object] = [start("r-1"), call, end("r-1", "tool_call")]
    second: list[object] = [start("r-2"), text("hi"), end("r-2")]
    responses: list[object] = [{"records": first}, {"records": second}]
    data: dict[str, object] = {"schemaVersion": 1, "responses": responses}
    adapter = FixtureProviderAdapter(data)

    numbers.append(3)
    arguments["left"] = 0
    arguments["extra"] = float("nan")
    call["id"] = "call-changed"
    first.insert(0, "junk")
    second.clear()
    responses.append({"records": []})
    responses.reverse()
    data["schemaVersion"] = 2

    assert adapter.pending == 2
    one = run(collect(adapter.stream(CourseModelRequest("a"))))
    assert one.response is not None and one.response.response_id == "r-1"
    chunk = one.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert chunk.id == "call-1"
    assert thaw(chunk.arguments) == {"left": 20, "numbers": [1, 2]}
    two = run(collect(adapter.stream(CourseModelRequest("b"))))
    assert two.response is not None and two.response.response_id == "r-2"
    assert adapter.pending == 0


def test_a_shared_sub_object_is_one_read_only_object_in_the_arguments() -> None:
    shared: dict[str, object] = {"k": [1, 2]}
    items: list[object] = ["x"]
    twin: dict[str, object] = {"k": [1, 2]}
    chunk = first_tool_chunk(
        fixture(
            tool_response(
                tool_record({"a": shared, "b": shared, "c": twin, "x": items, "y": items})
            )
        )
    )
    arguments = chunk.arguments
    assert arguments["a"] is arguments["b"]
    assert arguments["a"] is not arguments["c"]  # equal but distinct stays distinct
    assert arguments["x"] is arguments["y"]
    assert type(arguments) is JsonObject and type(arguments["a"]) is JsonObject
    assert arguments["x"] == ("x",)
    with pytest.raises(TypeError):
        arguments["a"]["k"] = 3  # type: ignore[index]

    thawed = thaw(arguments)
    assert isinstance(thawed, dict)
    assert thawed["a"] is thawed["b"] and thawed["x"] is thawed["y"]
    assert thawed["a"] is not thawed["c"]
    pair = {"k": [1, 2]}
    assert thawed == {"a": pair, "b": pair, "c": pair, "x": ["x"], "y": ["x"]}
    assert type(thawed["a"]) is dict and type(thawed["x"]) is list
    assert thawed["a"] is not shared  # a copy, never the caller's object


def test_sharing_across_records_and_responses_is_preserved() -> None:
    shared: dict[str, object] = {"k": 1}
    data = fixture(
        tool_response(tool_record({"s": shared}, "c-1"), tool_record({"s": shared}, "c-2")),
        tool_response(tool_record({"s": shared}, "c-3")),
    )
    adapter = FixtureProviderAdapter(data)
    one = run(collect(adapter.stream(CourseModelRequest("a"))))
    two = run(collect(adapter.stream(CourseModelRequest("b"))))
    chunks = [c for c in one.chunks + two.chunks if isinstance(c, CourseToolCallChunk)]
    assert len(chunks) == 3
    assert chunks[0].arguments["s"] is chunks[1].arguments["s"] is chunks[2].arguments["s"]


def test_a_shared_graph_never_expands_into_a_tree() -> None:
    levels = 20  # as a tree: 2**20 copies; shared: 21
    node: dict[str, object] = {"leaf": 1}
    for _ in range(levels):
        node = {"l": node, "r": node}
    chunk = first_tool_chunk(fixture(tool_response(tool_record(node))))
    frozen: Any = chunk.arguments
    thawed: Any = thaw(chunk.arguments)
    plain: Any = chunk.to_dict()["arguments"]
    for _ in range(levels):
        assert frozen["l"] is frozen["r"]
        assert thawed["l"] is thawed["r"]
        assert plain["l"] is plain["r"]
        frozen, thawed, plain = frozen["l"], thawed["l"], plain["l"]
    assert frozen["leaf"] == thawed["leaf"] == plain["leaf"] == 1


# -- no user code runs during construction ----------------------------------------------


class Spy:
    """Records any hostile method called while armed (and raises from it)."""

    armed = False
    calls: list[str] = []  # noqa: RUF012

    @classmethod
    def reset(cls) -> None:
        cls.calls = []
        cls.armed = True


def hostile(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not Spy.armed:
            # Unarmed, behave well enough to be built into a fixture.
            if name == "__hash__":
                return id(self)
            if name == "__eq__":
                return self is args[0]
            if name == "__ne__":
                return self is not args[0]
            if name == "__getattribute__":
                return object.__getattribute__(self, args[0])
        Spy.calls.append(name)
        raise RuntimeError(f"hostile {name} was called")

    return method


INSTANCE_METHODS = (
    "__eq__",
    "__ne__",
    "__lt__",
    "__hash__",
    "__iter__",
    "__reversed__",
    "__len__",
    "__length_hint__",
    "__bool__",
    "__getattr__",
    "__getattribute__",
    "__getitem__",
    "__contains__",
    "__repr__",
    "__str__",
    "__format__",
    "__index__",
    "__int__",
    "__float__",
    "__copy__",
    "__deepcopy__",
    "__reduce_ex__",
    "__fspath__",
    "keys",
    "items",
    "values",
    "get",
)

HOSTILE_BASES: dict[str, type] = {
    "object": object,
    "dict": dict,
    "list": list,
    "str": str,
    "int": int,
    "float": float,
    "tuple": tuple,
}


def hostile_instance(base_name: str) -> object:
    base: Any = HOSTILE_BASES[base_name]
    namespace = {name: hostile(name) for name in INSTANCE_METHODS}
    cls: Any = type(f"Hostile{base_name.capitalize()}", (base,), namespace)
    if base is object:
        return object.__new__(cls)
    return base.__new__(cls)


def hostile_metaclass_instance(_: str) -> object:
    """A plain instance whose *class* has hostile metaclass methods."""
    meta_methods = {
        name: hostile(name)
        for name in (
            "__eq__",
            "__ne__",
            "__hash__",
            "__iter__",
            "__len__",
            "__bool__",
            "__getattr__",
            "__instancecheck__",
            "__subclasscheck__",
            "__repr__",
            "__str__",
            "__getitem__",
            "__contains__",
        )
    }

    def meta_getattribute(cls: Any, name: str) -> Any:
        if Spy.armed:
            Spy.calls.append(f"metaclass __getattribute__({name!r})")
            raise RuntimeError("hostile metaclass __getattribute__ was called")
        return type.__getattribute__(cls, name)

    meta_methods["__getattribute__"] = meta_getattribute
    meta: Any = type("HostileMeta", (type,), meta_methods)
    cls: Any = meta("HostileByMetaclass", (), {})
    return object.__new__(cls)


def spots(value: object) -> dict[str, tuple[object, str]]:
    """Fixtures holding ``value`` at each kind of place, with the expected error path."""
    return {
        "fixture": (value, ""),
        "schemaVersion": ({"schemaVersion": value, "responses": []}, "/schemaVersion"),
        "responses": ({"schemaVersion": 1, "responses": value}, "/responses"),
        "response": ({"schemaVersion": 1, "responses": [value]}, "/responses/0"),
        "records": (fixture(value), "/responses/0/records"),
        "record": (fixture([start(), value]), "/responses/0/records/1"),
        "value": (
            fixture([start(), tool_record({"a": [1, {"b": value}]})]),
            "/responses/0/records/1/arguments/a/1/b",
        ),
        "fixture key": ({"schemaVersion": 1, "responses": [], value: 1}, ""),
        "response key": (
            {"schemaVersion": 1, "responses": [{"records": [], value: 1}]},
            "/responses/0",
        ),
        "record key": (fixture([{"type": "text_delta", value: 1}]), "/responses/0/records/0"),
        "nested key": (fixture([{"a": {"b": {value: 1}}}]), "/responses/0/records/0/a/b"),
    }


SPOTS = list(spots(None))


def assert_rejected_without_calls(make: Callable[[str], object], base: str, spot: str) -> None:
    Spy.armed = False
    data, path = spots(make(base))[spot]
    Spy.reset()
    try:
        with pytest.raises(FixtureProviderError) as caught:
            FixtureProviderAdapter(data)
        calls = list(Spy.calls)
    finally:
        Spy.armed = False
    assert calls == []
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE
    assert caught.value.path == path


@pytest.mark.parametrize("spot", SPOTS)
@pytest.mark.parametrize("base", list(HOSTILE_BASES))
def test_no_method_of_a_hostile_value_is_called_at_construction(base: str, spot: str) -> None:
    assert_rejected_without_calls(hostile_instance, base, spot)


@pytest.mark.parametrize("spot", SPOTS)
def test_no_metaclass_method_is_called_at_construction(spot: str) -> None:
    assert_rejected_without_calls(hostile_metaclass_instance, "object", spot)


# -- async record sources ----------------------------------------------------------------


class SourceSpy:
    """An async iterable whose every hook records that it was touched."""

    def __init__(self, log: list[str]) -> None:
        object.__setattr__(self, "_log", log)

    def _touch(self, name: str) -> None:
        object.__getattribute__(self, "_log").append(name)

    def __aiter__(self) -> AsyncIterator[object]:
        self._touch("__aiter__")
        return source_of([])

    def __getattr__(self, name: str) -> Any:
        self._touch(f"__getattr__({name})")
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        self._touch("__eq__")
        return self is other

    def __hash__(self) -> int:
        self._touch("__hash__")
        return id(self)

    def __len__(self) -> int:
        self._touch("__len__")
        return 0

    def __bool__(self) -> bool:
        self._touch("__bool__")
        return True

    def __iter__(self) -> Iterator[object]:
        self._touch("__iter__")
        return iter(())


def test_an_async_source_is_not_touched_at_construction() -> None:
    log: list[str] = []
    adapter = FixtureProviderAdapter(fixture(SourceSpy(log), SourceSpy(log)))
    assert adapter.pending == 2
    assert log == []


def test_an_async_generator_is_not_started_at_construction() -> None:
    started: list[str] = []

    async def source() -> AsyncIterator[object]:
        started.append("started")
        yield start()

    FixtureProviderAdapter(fixture(source()))
    assert started == []


def test_one_async_source_backing_two_responses_is_rejected() -> None:
    log: list[str] = []
    shared = SourceSpy(log)
    error = rejected(fixture([start(), end()], shared, shared))
    assert_location(error, "/responses/2/records", 2)
    assert log == []


def test_two_distinct_async_sources_are_fine() -> None:
    log: list[str] = []
    assert FixtureProviderAdapter(fixture(SourceSpy(log), SourceSpy(log))).pending == 2


# -- process-wide state, and messages that say what to do ---------------------------------


def test_the_adapter_never_touches_the_garbage_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before, construction called gc.disable() and gc.enable(): from another thread, that
    # undid an application's own gc.disable().
    def refuse() -> None:
        raise AssertionError("the adapter changed the garbage collector's state")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    monkeypatch.setattr(gc, "freeze", refuse)
    adapter = FixtureProviderAdapter(roundtrip())
    for name in ("a", "b"):
        assert run(collect(adapter.stream(CourseModelRequest(name)))).response is not None


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        adapter = FixtureProviderAdapter(roundtrip())
        assert not gc.isenabled()
        run(collect(adapter.stream(CourseModelRequest("a"))))
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("path", ["fixtures/tool.json", Path("fixtures/tool.json")], ids=repr)
def test_a_file_name_given_as_the_fixture_says_to_load_it(path: object) -> None:
    error = rejected(path)
    assert_location(error, "")
    assert "load_fixture(path)" in error.message


def uncalled_source() -> AsyncIterator[object]:
    return source_of([start(), end()])


async def async_generator_source() -> AsyncIterator[object]:
    yield start()


class Holder:
    async def records(self) -> AsyncIterator[object]:
        yield start()


@pytest.mark.parametrize(
    ("records", "name"),
    [(async_generator_source, "async_generator_source"), (Holder().records, "records")],
    ids=["function", "method"],
)
def test_an_uncalled_async_generator_function_says_to_call_it(records: object, name: str) -> None:
    error = rejected(fixture(records))
    assert_location(error, "/responses/0/records", 0)
    assert f"`records={name}()`" in error.message


def test_a_plain_function_as_records_gets_no_hint_to_call_it() -> None:
    error = rejected(fixture(uncalled_source))
    assert "call it" not in error.message


def test_a_str_request_says_to_pass_a_course_model_request() -> None:
    adapter = FixtureProviderAdapter(roundtrip())
    with pytest.raises(TypeError, match=r"CourseModelRequest\(id='request-1'\)"):
        adapter.stream("request-1")  # type: ignore[arg-type]
    assert (adapter.call_count, adapter.pending) == (0, 2)

"""Sharing, seen by identity: every copy mirrors the fixture's sharing, no more, no less.

The adapter copies as ``copy.deepcopy`` does: one new container for each distinct
container of the fixture. So in the read-only arguments, in ``thaw()`` of them and in
``to_dict()`` of every value holding them, two paths lead to one object exactly when
they led to one object in the fixture. Equality is not enough to see this (two empty
lists are equal whether or not they are one list), so these tests compare the
partition of paths by ``id``.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator, Mapping
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseModelResponse,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    thaw,
)

from .helpers import Outcome, collect, end, fixture, run, source_of, start, tool

Path = tuple[str | int, ...]

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "s"]))


def _child(draw: st.DrawFn, pool: list[object]) -> object:
    """A container made before (shared), or a scalar."""
    shared: bool = draw(st.booleans())
    if pool and shared:
        return pool[draw(st.integers(0, len(pool) - 1))]
    return draw(_SCALARS)


@st.composite
def shared_graphs(draw: st.DrawFn, roots: int = 1) -> list[dict[str, object]]:
    """``roots`` argument objects drawn from one pool of containers that may share.

    Containers are made one at a time, each from scalars and earlier containers, so
    the graph has no cycle; empty lists and dicts are frequent, since those are the
    ones a careless copy merges.
    """
    pool: list[object] = []
    for _ in range(draw(st.integers(0, 8))):
        size = draw(st.integers(0, 3))
        children = [_child(draw, pool) for _ in range(size)]
        if draw(st.booleans()):
            pool.append(children)
        else:
            pool.append({f"k{index}": child for index, child in enumerate(children)})
    results = []
    for _ in range(roots):
        size = draw(st.integers(0, 4))
        results.append({f"a{index}": _child(draw, pool) for index in range(size)})
    return results


def containers(value: object, at: Path = ()) -> Iterator[tuple[Path, object]]:
    """Every (path, container) of ``value`` as a tree: shared containers once per path."""
    yield at, value
    items: Any = value.items() if isinstance(value, Mapping) else enumerate(cast(Any, value))
    for key, item in items:
        if isinstance(item, Mapping | list | tuple):
            yield from containers(item, (*at, key))


def sharing(*values: tuple[Path, object]) -> set[frozenset[Path]]:
    """The partition of all container paths by the identity of what they lead to."""
    groups: dict[int, set[Path]] = {}
    keep: list[object] = []  # ids are only unique while the objects live
    for prefix, value in values:
        for path, item in containers(value, prefix):
            keep.append(item)
            groups.setdefault(id(item), set()).add(path)
    return {frozenset(paths) for paths in groups.values()}


def stream(arguments: list[dict[str, object]], *, via_source: bool = False) -> Outcome:
    records: list[object] = [start()]
    records.extend(tool(f"call-{i}") for i in range(len(arguments)))
    records.append(end(stop_reason="tool_call"))
    data = fixture(source_of(records) if via_source else records)
    for index, args in enumerate(arguments):  # the caller's objects, shared as drawn
        cast(dict[str, object], records[index + 1])["arguments"] = args
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.response is not None, outcome.error
    return outcome


def tool_chunks(outcome: Outcome) -> list[CourseToolCallChunk]:
    return [chunk for chunk in outcome.chunks if isinstance(chunk, CourseToolCallChunk)]


def tool_blocks(response: CourseModelResponse) -> list[CourseToolCallBlock]:
    return [block for block in response.message.content if isinstance(block, CourseToolCallBlock)]


@given(shared_graphs())
def test_each_copy_of_one_arguments_object_mirrors_its_sharing(
    drawn: list[dict[str, object]],
) -> None:
    (arguments,) = drawn
    expected = sharing(((), arguments))
    outcome = stream([arguments])
    (chunk,) = tool_chunks(outcome)
    assert outcome.response is not None
    (block,) = tool_blocks(outcome.response)
    copies: list[object] = [
        chunk.arguments,
        block.arguments,
        thaw(chunk.arguments),
        thaw(block.arguments),
        chunk.to_dict()["arguments"],
        block.to_dict()["arguments"],
        outcome.response.to_dict()["message"]["content"][0]["arguments"],  # type: ignore[call-overload,index]
        pickle.loads(pickle.dumps(chunk.arguments)),
        copy.deepcopy(chunk.arguments),
        thaw(pickle.loads(pickle.dumps(chunk)).arguments),
    ]
    for value in copies:
        assert sharing(((), value)) == expected


@given(shared_graphs(roots=3))
def test_sharing_across_tool_calls_of_one_response_is_mirrored_in_its_to_dict(
    drawn: list[dict[str, object]],
) -> None:
    expected = sharing(*(((index,), args) for index, args in enumerate(drawn)))
    outcome = stream(drawn)
    assert outcome.response is not None
    response: Any = outcome.response.to_dict()
    content = response["message"]["content"]
    plain = sharing(*(((index,), block["arguments"]) for index, block in enumerate(content)))
    assert plain == expected
    frozen = sharing(*(((i,), c.arguments) for i, c in enumerate(tool_chunks(outcome))))
    assert frozen == expected
    message: Any = outcome.response.message.to_dict()["content"]
    assert sharing(*(((i,), b["arguments"]) for i, b in enumerate(message))) == expected


@given(shared_graphs())
def test_a_record_from_an_async_source_keeps_its_own_sharing(
    drawn: list[dict[str, object]],
) -> None:
    (arguments,) = drawn
    # The source yields deep copies, which keep the sharing inside each record.
    expected = sharing(((), arguments))
    (chunk,) = tool_chunks(stream([arguments], via_source=True))
    assert sharing(((), chunk.arguments)) == expected
    assert sharing(((), thaw(chunk.arguments))) == expected


def test_two_distinct_empty_arrays_stay_two_lists() -> None:
    # The example: appending to ``done`` must not append to ``pending``.
    outcome = stream([{"done": [], "pending": [], "seen": {}, "skipped": {}}])
    (chunk,) = tool_chunks(outcome)
    copies: list[Any] = [thaw(chunk.arguments), chunk.to_dict()["arguments"]]
    for plain in copies:
        assert isinstance(plain, dict)
        plain["done"].append("x")
        plain["seen"]["k"] = 1
        assert plain["pending"] == [] and plain["skipped"] == {}


def test_one_empty_array_shared_stays_one_list() -> None:
    empty: list[object] = []
    outcome = stream([{"done": empty, "pending": empty}])
    (chunk,) = tool_chunks(outcome)
    plain = thaw(chunk.arguments)
    assert plain["done"] is plain["pending"]

"""A shared sub-object is reused only where it still fits under the nesting limit.

The walk reuses the copy of a container it met before (sharing is kept), and works out
how deep that copy goes only when it is reused. These tests put one shared tower first
where it fits, then again one level deeper than its height allows, within one record
and across two records (one memo serves the whole fixture): exactly at the limit it is
the same read-only object; one level past it, the fixture is refused where it overflows.
"""

from __future__ import annotations

import pytest

from course import (
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)
from course._json import MAX_DEPTH

from .helpers import collect, end, fixture, run, start, tool

Code = FixtureProviderErrorCode

# A record's arguments sit at level 6: the fixture, its response list, the response,
# its record list, the record, then the arguments object.
ARGUMENTS_LEVEL = 6
HEIGHT = 240
"""The shared tower's height: its deepest list sits at ``ARGUMENTS_LEVEL + HEIGHT``."""
ROOM = MAX_DEPTH - ARGUMENTS_LEVEL - HEIGHT
"""How many more lists may wrap the tower where it is reused."""


def tower(height: int, top: object) -> object:
    """``height`` nested lists around ``top``."""
    value = top
    for _ in range(height):
        value = [value]
    return value


def innermost(value: object, height: int) -> object:
    for _ in range(height):
        value = value[0]  # type: ignore[index]
    return value


@pytest.mark.parametrize("wraps", [ROOM, ROOM + 1])
def test_a_shared_copy_is_reused_within_a_record_only_where_it_fits(wraps: int) -> None:
    shared = tower(HEIGHT, "leaf")
    call = tool(x=shared, y=tower(wraps, shared))
    data = fixture([start(), call, end(stop_reason="tool_call")])
    if wraps > ROOM:
        with pytest.raises(FixtureProviderError) as caught:
            FixtureProviderAdapter(data)
        assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE
        assert caught.value.record_index == 1
        assert (caught.value.path or "").startswith("/responses/0/records/1/arguments/y/0")
        assert "deeper than the limit" in caught.value.message
        return
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    arguments = outcome.chunks[0].arguments  # type: ignore[union-attr]
    assert innermost(arguments["y"], wraps) is arguments["x"]


@pytest.mark.parametrize("wraps", [ROOM, ROOM + 1])
def test_a_shared_copy_is_reused_across_records_only_where_it_fits(wraps: int) -> None:
    shared = tower(HEIGHT, "leaf")
    first = tool("call-1", x=shared)
    second = tool("call-2", y=tower(wraps, shared))
    data = fixture([start(), first, second, end(stop_reason="tool_call")])
    if wraps > ROOM:
        with pytest.raises(FixtureProviderError) as caught:
            FixtureProviderAdapter(data)
        assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE
        assert caught.value.record_index == 2
        assert "deeper than the limit" in caught.value.message
        return
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    one, two = outcome.chunks
    assert innermost(two.arguments["y"], wraps) is one.arguments["x"]  # type: ignore[union-attr]


def test_a_copy_reused_at_its_own_depth_needs_no_room() -> None:
    # The tower fills the nesting limit exactly; reused beside itself, it still fits.
    shared = tower(MAX_DEPTH - ARGUMENTS_LEVEL, "leaf")
    data = fixture([start(), tool(x=shared, y=shared), end(stop_reason="tool_call")])
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    arguments = outcome.chunks[0].arguments  # type: ignore[union-attr]
    assert arguments["x"] is arguments["y"]

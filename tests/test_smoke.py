"""The round trip end to end: the shortest proof the adapter works."""

from __future__ import annotations

from course import CourseModelRequest, FixtureProviderAdapter, load_fixture

from .helpers import ROUNDTRIP_PATH, collect, run


def test_roundtrip_settles_tool_call_then_stop() -> None:
    adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
    first = run(collect(adapter.stream(CourseModelRequest("a"))))
    second = run(collect(adapter.stream(CourseModelRequest("b"))))
    assert first.response is not None and first.response.stop_reason == "toolCall"
    assert second.response is not None and second.response.stop_reason == "stop"
    assert second.response.usage.input_tokens == 30

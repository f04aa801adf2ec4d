"""Testing an agent loop with the ``course`` pytest plugin: the marker and ``course_adapter``."""

from __future__ import annotations

import asyncio

import pytest
from agent import answer

from course import FixtureProviderAdapter, script


# A fixture file, relative to this test file; pytest-asyncio runs the async test.
@pytest.mark.asyncio
@pytest.mark.course("fixtures/add.json")
async def test_the_agent_uses_the_tool_and_answers(course_adapter: FixtureProviderAdapter) -> None:
    assert await answer(course_adapter, "What is 20 + 22?") == "The sum is 42."


# A fixture written in code; a plain test runs the loop with asyncio.run.
@pytest.mark.course(
    script.fixture(
        script.response(script.call("add", {"left": 1, "right": 2})),
        script.response("1 + 2 = ", "3"),
    )
)
def test_the_agent_joins_the_answer_text(course_adapter: FixtureProviderAdapter) -> None:
    assert asyncio.run(answer(course_adapter, "What is 1 + 2?")) == "1 + 2 = 3"

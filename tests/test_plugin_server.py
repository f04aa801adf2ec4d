"""``course_server``: the marked fixture served over HTTP to the real OpenAI client."""

from __future__ import annotations

import pytest

from tests.helpers import ROUNDTRIP_PATH
from tests.test_plugin import run

pytest_plugins = ["pytester"]

PRELUDE = """
import pytest
from openai import AsyncOpenAI, OpenAI

from course import FixtureProviderAdapter
from course.vendors import FixtureServer

QUESTION = [{"role": "user", "content": "What is 20 + 22?"}]


def ask(server: FixtureServer, times: int) -> list[str | None]:
    with OpenAI(base_url=server.url + "/v1", api_key="test") as client:
        return [
            client.chat.completions.create(model="any", messages=QUESTION).choices[0].finish_reason
            for _ in range(times)
        ]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.path.joinpath("roundtrip.json").write_text(
        ROUNDTRIP_PATH.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return pytester


def test_the_server_serves_the_tests_own_adapter(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_both(course_server: FixtureServer, course_adapter: FixtureProviderAdapter) -> None:
    assert course_server.adapter is course_adapter
    assert course_server.url.startswith("http://127.0.0.1:")
    assert ask(course_server, 2) == ["tool_calls", "stop"]
    assert course_adapter.pending == 0
    assert len(course_server.requests) == 2


@pytest.mark.course("roundtrip.json")
def test_server_only(course_server: FixtureServer) -> None:
    assert ask(course_server, 2) == ["tool_calls", "stop"]


@pytest.mark.asyncio
@pytest.mark.course("roundtrip.json")
async def test_async_client(course_server: FixtureServer) -> None:
    async with AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        for reason in ("tool_calls", "stop"):
            stream = await client.chat.completions.create(
                model="any", messages=QUESTION, stream=True
            )
            finishes = [c.choices[0].finish_reason async for c in stream if c.choices]
            assert finishes[-1] == reason
"""
    )
    run(project).assert_outcomes(passed=3)


def test_a_response_the_client_never_asked_for_is_reported(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_asks_once(course_server: FixtureServer) -> None:
    assert ask(course_server, 1) == ["tool_calls"]


@pytest.mark.course("roundtrip.json", strict=False)
def test_asks_once_on_purpose(course_server: FixtureServer) -> None:
    assert ask(course_server, 1) == ["tool_calls"]
"""
    )
    result = run(project)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_asks_once*",
            "*  - response 1 (responseId 'response-text-001') was never requested",
        ]
    )

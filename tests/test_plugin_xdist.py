"""The pytest plugin under pytest-xdist: every worker gives each test its own adapter.

xdist needs real worker processes, so this runs pytest in a subprocess.
"""

from __future__ import annotations

import pytest

from tests.helpers import ROUNDTRIP_PATH

pytest_plugins = ["pytester"]

PROJECT = """
import asyncio

import pytest

from openai import OpenAI

from course import CourseModelRequest, FixtureProviderAdapter, script
from course.vendors import FixtureServer

TWO = script.fixture(script.response("one"), script.response("two"))


async def drain(adapter: FixtureProviderAdapter, calls: int) -> None:
    for number in range(calls):
        async with adapter.stream(CourseModelRequest(f"request-{number}")) as stream:
            await stream.result()


# Many tests over one fixture value: each must get a full queue of its own, whichever
# worker runs it.
@pytest.mark.parametrize("round", range(8))
@pytest.mark.course(TWO)
def test_each_gets_its_own_adapter(course_adapter: FixtureProviderAdapter, round: int) -> None:
    assert course_adapter.pending == 2
    asyncio.run(drain(course_adapter, 2))


@pytest.mark.parametrize("round", range(4))
@pytest.mark.course("roundtrip.json")
def test_from_a_file(course_adapter: FixtureProviderAdapter, round: int) -> None:
    asyncio.run(drain(course_adapter, 2))


@pytest.mark.course("roundtrip.json")
def test_leaves_one(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))


@pytest.mark.course(TWO)
def test_abandons_one(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))
    course_adapter.stream(CourseModelRequest("request-2"))


@pytest.mark.course(TWO, strict=False)
def test_lenient(course_adapter: FixtureProviderAdapter) -> None:
    pass


# A server per test, each on a port of its own (port 0), on whichever worker.
@pytest.mark.parametrize("round", range(4))
@pytest.mark.course("roundtrip.json")
def test_served(course_server: FixtureServer, round: int) -> None:
    with OpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        for reason in ("tool_calls", "stop"):
            completion = client.chat.completions.create(model="any", messages=[])
            assert completion.choices[0].finish_reason == reason
"""


def test_the_plugin_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("roundtrip.json").write_text(
        ROUNDTRIP_PATH.read_text(encoding="utf-8"), encoding="utf-8"
    )
    pytester.makepyfile(test_agents=PROJECT)
    result = pytester.runpytest_subprocess(
        "-p",
        "xdist",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "-W",
        "error",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
    )
    result.assert_outcomes(passed=19, errors=2)
    output = result.stdout.str()
    assert "created: 2/2 workers" in output
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaves_one*"], consecutive=False)
    assert "- response 1 (responseId 'response-text-001') was never requested" in output
    assert (
        "- the stream of call 2, for response 1 (responseId 'response-002'), was neither "
        "read to its end nor closed" in output
    )

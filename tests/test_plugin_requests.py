"""The plugin's side of SPEC-REQUESTS, in real pytest runs: ``course_server`` checks what
the agent sends; a passing test whose calls had problems fails at teardown, each
problem listed with its call; ``strict=False`` and ``check_requests=False`` turn it off."""

from __future__ import annotations

import pytest

from tests.test_plugin import run

pytest_plugins = ["pytester"]

PRELUDE = """
import httpx2
import openai
import pytest

from course import script
from course.vendors import FixtureServer

FIXTURE = script.fixture(
    script.response(script.call("add", {"a": 20, "b": 22}, id="call-1")),
    script.response("The sum is 42."),
)
USER = {"role": "user", "content": "add 20 and 22"}


def loop(server: FixtureServer, *, result_for: str = "call-1", arguments: str | None = None):
    with httpx2.Client() as http:
        client = openai.OpenAI(
            base_url=server.url + "/v1", api_key="test", http_client=http, max_retries=0
        )
        first = client.chat.completions.create(model="m", messages=[USER])
        said = first.choices[0].message.model_dump(exclude_none=True)
        if arguments is not None:
            said["tool_calls"][0]["function"]["arguments"] = arguments
        result = {"role": "tool", "tool_call_id": result_for, "content": "42"}
        try:
            return client.chat.completions.create(model="m", messages=[USER, said, result])
        except openai.BadRequestError:
            return None  # an agent that swallows the 400
"""


def test_a_correct_loop_passes_and_its_calls_are_read(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE)
def test_loop(course_server):
    assert loop(course_server).choices[0].message.content == "The sum is 42."
    assert [call.problems for call in course_server.calls] == [(), ()]
"""
    )
    run(pytester).assert_outcomes(passed=1)


def test_a_swallowed_400_fails_the_passing_test_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE)
def test_loop(course_server):
    assert loop(course_server, result_for="call-9") is None
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1, failed=0)
    result.stdout.fnmatch_lines(
        [
            "*course: the agent's requests did not pass the provider's checks:",
            "*  - call 2 (POST /v1/chat/completions): course check 1: messages[[]2[]]: the tool "
            "result for 'call-9' answers no tool call made earlier in the history",
            "*strict=False*check_requests=False*",
        ]
    )


def test_a_changed_call_is_answered_but_fails_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE)
def test_loop(course_server):
    assert loop(course_server, arguments='{"a": 2}').choices[0].message.content == "The sum is 42."
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*call 2 (POST /v1/chat/completions): course check 3: *'call-1'*"])


def test_strict_false_and_check_requests_false_turn_it_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE, strict=False)
def test_not_strict(course_server):
    assert loop(course_server, result_for="call-9") is None
    assert course_server.calls[1].response_index is None


@pytest.mark.course(FIXTURE, check_requests=False)
def test_unchecked(course_server):
    assert loop(course_server, result_for="call-9").choices[0].message.content == "The sum is 42."
    assert [call.problems for call in course_server.calls] == [(), ()]
"""
    )
    run(pytester).assert_outcomes(passed=2)


def test_a_failing_test_is_not_also_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE)
def test_loop(course_server):
    loop(course_server, result_for="call-9")
    assert False, "the test's own failure"
"""
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert "did not pass the provider's checks" not in result.stdout.str()


def test_check_requests_must_be_a_bool(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(FIXTURE, check_requests="no")
def test_loop(course_server):
    pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*`check_requests` must be True or False, got str*"])

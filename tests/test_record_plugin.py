"""``--course-record=none|once|all``: record mode of the pytest plugin, through ``pytester``.

The inner test files are an agent's tests: a marked fixture file and ``course_server``,
with the real ``openai`` client. "The real providers" are a local upstream here: the
runs are in-process, so the recorder's default upstreams are pointed at it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from course.vendors._server import FixtureServer

from .record_helpers import (
    OPENAI_KEY,
    Reply,
    Upstream,
    events,
    recording,
    upstream,
)
from .test_plugin import run

pytest_plugins = ["pytester"]

FIRST = "The sum of 20 and 22 is **42**."
SECOND = "2 + 2 = 4"

PRELUDE = f"""
import pytest
from openai import OpenAI

from course.vendors import FixtureRecorder, FixtureServer


def ask(server: FixtureServer | FixtureRecorder) -> str:
    with OpenAI(base_url=server.url + "/v1", api_key="{OPENAI_KEY}", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="m", messages=[], stream=True, stream_options={{"include_usage": True}}
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
"""

AGENT = (
    PRELUDE
    + """

@pytest.mark.course("fixtures/agent.json")
def test_agent(course_server: FixtureServer | FixtureRecorder) -> None:
    assert ask(course_server) in ("The sum of 20 and 22 is **42**.", "2 + 2 = 4")
"""
)


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FixtureServer, Upstream]]:
    """A local upstream that the recorder's defaults point at: first one answer, then
    another (so a second recording differs from the first)."""
    replies = [
        Reply(events(recording("openai-chat", "text"))),
        Reply(events(recording("openai-chat", "gateway_reasoning"))),
    ]
    with upstream(*replies) as (server, app):
        defaults = {"openai": server.url, "anthropic": server.url, "gemini": server.url}
        monkeypatch.setattr("course.vendors._record.DEFAULT_UPSTREAMS", defaults)
        yield server, app


def written(pytester: pytest.Pytester) -> list[str]:
    """The text of each response of the agent's fixture file."""
    fixture = json.loads((pytester.path / "fixtures" / "agent.json").read_text())
    assert fixture["schemaVersion"] == 2
    return [
        "".join(r.get("text", "") for r in response["records"]) for response in fixture["responses"]
    ]


def test_none_replays_and_a_missing_file_is_an_error_naming_once(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(AGENT)
    for args in ((), ("--course-record=none",)):
        result = run(pytester, *args)
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(
            [
                "*ERROR at setup of test_agent*",
                "*agent.json*",
                "*Record it from the real providers: run the test with --course-record=once",
            ]
        )
    assert providers[1].seen == []


def test_once_records_a_missing_file(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(AGENT)
    run(pytester, "--course-record=once").assert_outcomes(passed=1)
    assert len(providers[1].seen) == 1
    assert written(pytester) == [FIRST]
    # The written file holds no credential.
    assert OPENAI_KEY[:8] not in (pytester.path / "fixtures" / "agent.json").read_text()


def test_once_then_replays_the_file_it_recorded(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(AGENT)
    run(pytester, "--course-record=once").assert_outcomes(passed=1)
    # The file exists now: once and none both replay it, and the provider is not called.
    run(pytester, "--course-record=once").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(passed=1)
    assert len(providers[1].seen) == 1


def test_all_records_every_file_again(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(AGENT)
    run(pytester, "--course-record=all").assert_outcomes(passed=1)
    assert written(pytester) == [FIRST]
    run(pytester, "--course-record=all").assert_outcomes(passed=1)
    assert written(pytester) == [SECOND]
    assert len(providers[1].seen) == 2


def test_the_ini_option_sets_the_mode_and_the_command_line_wins(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(AGENT)
    pytester.makeini("[pytest]\ncourse_record = once\n")
    run(pytester, "--course-record=none").assert_outcomes(errors=1)
    run(pytester).assert_outcomes(passed=1)
    assert written(pytester) == [FIRST]


def test_a_bad_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(AGENT)
    result = run(pytester, "--course-record=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--course-record*invalid choice*sometimes*"])
    pytester.makeini("[pytest]\ncourse_record = always\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*course_record must be one of none, once, all; got 'always'"])


def test_a_failing_test_records_nothing_and_keeps_the_old_file(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(
        PRELUDE
        + """

@pytest.mark.course("fixtures/agent.json")
def test_agent(course_server: FixtureServer | FixtureRecorder) -> None:
    ask(course_server)
    raise AssertionError("the agent got it wrong")
"""
    )
    run(pytester, "--course-record=once").assert_outcomes(failed=1)
    assert not (pytester.path / "fixtures" / "agent.json").exists()
    old = pytester.path / "fixtures" / "agent.json"
    old.parent.mkdir()
    old.write_text("the old fixture")
    run(pytester, "--course-record=all").assert_outcomes(failed=1)
    assert old.read_text() == "the old fixture"
    assert len(providers[1].seen) == 2


def test_course_adapter_while_recording_is_an_error_naming_the_option(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(
        """
import pytest
from course import FixtureProviderAdapter


@pytest.mark.course("fixtures/agent.json")
def test_agent(course_adapter: FixtureProviderAdapter) -> None:
    pass
"""
    )
    result = run(pytester, "--course-record=once")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_agent*",
            "*course_adapter cannot record: this test records *agent.json "
            "(--course-record=once), and an adapter can only replay a fixture*",
        ]
    )
    assert providers[1].seen == []


def test_fixtures_written_in_code_never_record(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
from course import FixtureProviderAdapter, script

FIXTURE = script.fixture(script.response("Written in code.", usage=(1, 2)))


@pytest.mark.course(FIXTURE)
def test_agent(course_server: FixtureServer, course_adapter: FixtureProviderAdapter) -> None:
    assert course_server.adapter is course_adapter
    assert ask(course_server) == "Written in code."
"""
    )
    run(pytester, "--course-record=all").assert_outcomes(passed=1)
    assert providers[1].seen == []


def test_an_answer_that_cannot_be_imported_errors_at_teardown_and_writes_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = Reply(events(recording("openai-chat", "no_usage")))
    with upstream(reply) as (server, _):
        defaults = {"openai": server.url, "anthropic": server.url, "gemini": server.url}
        monkeypatch.setattr("course.vendors._record.DEFAULT_UPSTREAMS", defaults)
        pytester.makepyfile(
            PRELUDE
            + """

@pytest.mark.course("fixtures/agent.json")
def test_agent(course_server: FixtureRecorder) -> None:
    with OpenAI(base_url=course_server.url + "/v1", api_key="k", max_retries=0) as client:
        list(client.chat.completions.create(model="m", messages=[], stream=True))
"""
        )
        result = run(pytester, "--course-record=once")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_agent*",
            "*course: *agent.json was not recorded: call 1 (POST /v1/chat/completions)*"
            "RECORDING_MISSING_USAGE*",
        ]
    )
    assert not (pytester.path / "fixtures" / "agent.json").exists()


def test_a_recording_test_has_no_strict_teardown_and_sees_its_requests(
    pytester: pytest.Pytester, providers: tuple[FixtureServer, Upstream]
) -> None:
    pytester.makepyfile(
        PRELUDE
        + """
from course.vendors import FixtureRecorder


@pytest.mark.course("fixtures/agent.json", strict=True)
def test_agent(course_server: FixtureRecorder) -> None:
    assert isinstance(course_server, FixtureRecorder)
    ask(course_server)
    assert [dict(r)["model"] for r in course_server.requests] == ["m"]
"""
    )
    run(pytester, "--course-record=once").assert_outcomes(passed=1)
    assert Path(pytester.path / "fixtures" / "agent.json").exists()


def test_without_the_extra_a_recording_test_is_skipped_naming_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "httpx2", None)
    pytester.makepyfile(AGENT)
    result = run(pytester, "--course-record=once", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*recording needs uvicorn and httpx2*course[[]record[]]*"])

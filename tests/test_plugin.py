"""The pytest plugin, tested as plugins are: real test files run by ``pytester``.

Each test writes a small test project, runs pytest on it in-process (the plugin is
installed, so its entry point loads it as it would for a user), and checks the
outcome counts and the messages a user reads.
"""

from __future__ import annotations

import sys
from fnmatch import fnmatch

import pytest

from course import CourseModelStream
from tests.helpers import ROUNDTRIP_PATH

pytest_plugins = ["pytester"]

# What every inner test file starts with: an agent loop's worth of helpers.
PRELUDE = """
import asyncio

import pytest

from course import CourseModelRequest, FixtureProviderAdapter, FixtureProviderError, script


async def drain(adapter: FixtureProviderAdapter, calls: int) -> list[str]:
    \"\"\"Read ``calls`` responses to their end, as a careful agent loop does.\"\"\"
    reasons = []
    for number in range(calls):
        async with adapter.stream(CourseModelRequest(f"request-{number}")) as stream:
            async for _ in stream:
                pass
            reasons.append((await stream.result()).stop_reason)
    return reasons
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A test project holding the bundled round trip as ``roundtrip.json``."""
    pytester.path.joinpath("roundtrip.json").write_text(
        ROUNDTRIP_PATH.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return pytester


# In-process, ``course`` is imported before the inner run starts, so the inner run
# cannot rewrite the asserts of the plugin's package and says so; a user's run imports
# it afresh and never sees this.
ALREADY_IMPORTED = (
    "ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning"
)


QUIET = (
    "-p",
    "no:cacheprovider",
    "-W",
    "error",
    "-W",
    ALREADY_IMPORTED,
    # pytest-asyncio, installed beside the plugin, warns until this is set.
    "-o",
    "asyncio_default_fixture_loop_scope=function",
)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run the project in-process, warnings as errors, as CI runs it."""
    return pytester.runpytest(*QUIET, *args)


def test_the_stream_has_the_flag_the_plugin_reads() -> None:
    # The plugin reads CourseModelStream._settled (a private property the stream keeps
    # for it): without it every strict teardown would fail.
    assert hasattr(CourseModelStream, "_settled")


# -- a test that uses its whole fixture -----------------------------------------------


def test_a_loop_that_reads_everything_passes(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_loop(course_adapter: FixtureProviderAdapter) -> None:
    assert isinstance(course_adapter, FixtureProviderAdapter)
    assert asyncio.run(drain(course_adapter, 2)) == ["toolCall", "stop"]
"""
    )
    run(project).assert_outcomes(passed=1)


def test_the_marker_takes_a_dict_from_script(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
FIXTURE = script.fixture(script.response("hello"), script.response(script.call("f", {})))


@pytest.mark.course(FIXTURE)
def test_dict(course_adapter: FixtureProviderAdapter) -> None:
    assert asyncio.run(drain(course_adapter, 2)) == ["stop", "toolCall"]


@pytest.mark.course(fixture=FIXTURE)
def test_keyword(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 2))


def test_each_test_gets_its_own_copy() -> None:
    assert FIXTURE == script.fixture(
        script.response("hello"), script.response(script.call("f", {}))
    )
"""
    )
    run(project).assert_outcomes(passed=3)


def test_a_path_is_relative_to_the_test_file(project: pytest.Pytester) -> None:
    folder = project.mkpydir("agents")
    (folder / "data").mkdir()
    (folder / "data" / "one.json").write_text(
        '{"schemaVersion": 1, "responses": [{"records": ['
        '{"type": "response_start", "responseId": "only", "role": "assistant"},'
        '{"type": "response_end", "responseId": "only", "stopReason": "stop",'
        ' "usage": {"inputTokens": 0, "outputTokens": 0}}]}]}',
        encoding="utf-8",
    )
    (folder / "test_nested.py").write_text(
        PRELUDE
        + """
from pathlib import Path


@pytest.mark.course("data/one.json")
def test_relative(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))


@pytest.mark.course(Path(__file__).parent / "data" / "one.json")
def test_absolute_path_object(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))
""",
        encoding="utf-8",
    )
    # Run from the project root: the path is the test file's, not the working folder's.
    run(project).assert_outcomes(passed=2)


def test_class_and_module_markers_apply_the_closest_wins(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
pytestmark = pytest.mark.course("roundtrip.json")


def test_module(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 2))


@pytest.mark.course(script.fixture(script.response("one")))
class TestClass:
    def test_class(self, course_adapter: FixtureProviderAdapter) -> None:
        asyncio.run(drain(course_adapter, 1))
"""
    )
    run(project).assert_outcomes(passed=2)


def test_a_parameters_marker_wins_over_the_functions(project: pytest.Pytester) -> None:
    # pytest lists a parameter's marks after the function's own, so the plugin must look
    # for them first: the most specific marker wins, the whole of it (`strict` too).
    project.makepyfile(
        PRELUDE
        + """
def responses(count: int) -> dict:
    return script.fixture(*(script.response(f"text {n}") for n in range(count)))


pytestmark = pytest.mark.course(responses(1))
PARAM = pytest.mark.course(responses(4))


@pytest.mark.course(responses(2))
@pytest.mark.parametrize("pending", [2, pytest.param(4, marks=PARAM)])
def test_function(course_adapter: FixtureProviderAdapter, pending: int) -> None:
    assert course_adapter.pending == pending
    asyncio.run(drain(course_adapter, pending))


@pytest.mark.course(responses(3))
class TestClass:
    @pytest.mark.parametrize("pending", [3, pytest.param(4, marks=PARAM)])
    def test_class(self, course_adapter: FixtureProviderAdapter, pending: int) -> None:
        assert course_adapter.pending == pending
        asyncio.run(drain(course_adapter, pending))


@pytest.mark.parametrize("pending", [1, pytest.param(4, marks=PARAM)])
def test_module(course_adapter: FixtureProviderAdapter, pending: int) -> None:
    assert course_adapter.pending == pending
    asyncio.run(drain(course_adapter, pending))


@pytest.fixture(params=[pytest.param(4, marks=PARAM)])
def pending(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.mark.course(responses(2))
def test_a_fixtures_parameter(course_adapter: FixtureProviderAdapter, pending: int) -> None:
    assert course_adapter.pending == pending
    asyncio.run(drain(course_adapter, pending))


LENIENT = pytest.mark.course(responses(2), strict=False)


@pytest.mark.course(responses(2))
@pytest.mark.parametrize("leaves", [pytest.param(1, marks=LENIENT)])
def test_strict_from_the_parameter(course_adapter: FixtureProviderAdapter, leaves: int) -> None:
    asyncio.run(drain(course_adapter, course_adapter.pending - leaves))
"""
    )
    run(project).assert_outcomes(passed=8)


# -- the strict teardown ----------------------------------------------------------------


def test_unused_responses_are_listed_by_index_and_id(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_stops_early(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))


@pytest.mark.course("roundtrip.json")
def test_never_asks(course_adapter: FixtureProviderAdapter) -> None:
    pass
"""
    )
    result = run(project)
    # pytest reports each test as passed, and its teardown as an error.
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_stops_early*",
            "*course: the test left part of its fixture unused (fixture file *roundtrip.json):",
            "*  - response 1 (responseId 'response-text-001') was never requested",
            "*strict=False*",
            "*ERROR at teardown of test_never_asks*",
            "*  - response 0 (responseId 'response-tool-001') was never requested",
            "*  - response 1 (responseId 'response-text-001') was never requested",
        ]
    )
    # Only the hint that applies: no stream was left open.
    assert "Read each stream" not in result.stdout.str()


def test_a_response_without_a_start_is_listed_by_index(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
BROKEN = {"schemaVersion": 1, "responses": [{"records": []}, {"records": [1]}]}


@pytest.mark.course(BROKEN)
def test_unused(course_adapter: FixtureProviderAdapter) -> None:
    pass
"""
    )
    result = run(project)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*course: the test left part of its fixture unused (the marker's fixture):",
            "*  - response 0 was never requested",
            "*  - response 1 was never requested",
        ]
    )


def test_an_abandoned_stream_is_an_error(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course(script.fixture(script.response("a", "b")))
def test_breaks_out(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        stream = course_adapter.stream(CourseModelRequest("request-1"))
        async for _ in stream:
            break  # neither read to its end nor closed

    asyncio.run(loop())


@pytest.mark.course(script.fixture(script.response("a"), script.response("b")))
def test_never_reads(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))
    course_adapter.stream(CourseModelRequest("request-2"))
"""
    )
    result = run(project)
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_breaks_out*",
            "*  - the stream of call 1, for response 0 (responseId 'response-001'), was"
            " neither read to its end nor closed",
            "*Read each stream to its end*",
            "*ERROR at teardown of test_never_reads*",
            "*  - the stream of call 2, for response 1 (responseId 'response-002'), was"
            " neither read to its end nor closed",
        ]
    )
    assert "was never requested" not in result.stdout.str()


def test_closed_and_failed_streams_are_ended(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
TWO = script.fixture(script.response("a", "b"), script.response("c"))


@pytest.mark.course(TWO)
def test_closed_with_async_with(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        for number in range(2):
            async with course_adapter.stream(CourseModelRequest(f"r{number}")) as stream:
                async for _ in stream:
                    break

    asyncio.run(loop())


@pytest.mark.course(TWO)
def test_closed_with_aclose(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        for number in range(2):
            await course_adapter.stream(CourseModelRequest(f"r{number}")).aclose()

    asyncio.run(loop())


@pytest.mark.course(TWO)
def test_result_only(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        for number in range(2):
            await course_adapter.stream(CourseModelRequest(f"r{number}")).result()

    asyncio.run(loop())


@pytest.mark.course(script.fixture(script.response("partial", script.error("rate limited"))))
def test_settled_by_an_error(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        stream = course_adapter.stream(CourseModelRequest("r"))
        with pytest.raises(FixtureProviderError):
            async for _ in stream:
                pass

    asyncio.run(loop())


@pytest.mark.course(script.fixture(script.response("only")))
def test_a_call_past_the_end_takes_nothing(course_adapter: FixtureProviderAdapter) -> None:
    async def loop() -> None:
        await drain(course_adapter, 1)
        course_adapter.stream(CourseModelRequest("again"))  # PROVIDER_EXHAUSTED, settled

    asyncio.run(loop())
"""
    )
    run(project).assert_outcomes(passed=5)


def test_unused_and_abandoned_are_reported_together(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_both(course_adapter: FixtureProviderAdapter) -> None:
    course_adapter.stream(CourseModelRequest("request-1"))
"""
    )
    result = run(project)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*  - response 1 (responseId 'response-text-001') was never requested",
            "*  - the stream of call 1, for response 0 (responseId 'response-tool-001'), "
            "was neither read to its end nor closed",
        ]
    )


def test_a_failed_test_is_never_checked(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_fails(course_adapter: FixtureProviderAdapter) -> None:
    course_adapter.stream(CourseModelRequest("request-1"))
    assert False, "the loop's own failure"


@pytest.fixture
def broken() -> None:
    raise RuntimeError("a fixture of the test failed")


@pytest.mark.course("roundtrip.json")
def test_setup_fails(course_adapter: FixtureProviderAdapter, broken: None) -> None:
    pass


@pytest.mark.course("roundtrip.json")
def test_skipped(course_adapter: FixtureProviderAdapter) -> None:
    pytest.skip("not today")


@pytest.mark.xfail(reason="known", strict=True)
@pytest.mark.course("roundtrip.json")
def test_expected_to_fail(course_adapter: FixtureProviderAdapter) -> None:
    assert False
"""
    )
    result = run(project)
    result.assert_outcomes(failed=1, errors=1, skipped=1, xfailed=1)
    assert "the loop's own failure" in result.stdout.str()
    assert "was never requested" not in result.stdout.str()


def test_a_failed_subtest_is_never_checked(project: pytest.Pytester) -> None:
    # pytest 9 reports a subtest as a call report of its own, before the test's passing one.
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_a_subtest_fails(course_adapter: FixtureProviderAdapter, subtests: pytest.Subtests) -> None:
    with subtests.test("fails"):
        course_adapter.stream(CourseModelRequest("request-1"))
        assert False, "the subtest's own failure"
    with subtests.test("passes"):
        pass


@pytest.mark.course("roundtrip.json")
def test_subtests_pass(course_adapter: FixtureProviderAdapter, subtests: pytest.Subtests) -> None:
    with subtests.test("reads one"):
        asyncio.run(drain(course_adapter, 1))
"""
    )
    result = run(project)
    # The failed subtest, and the test it fails; the other test passed and left one.
    result.assert_outcomes(failed=2, passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the subtest's own failure*"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_subtests_pass*"])
    assert "ERROR at teardown of test_a_subtest_fails" not in result.stdout.str()


def test_each_run_of_a_rerun_test_is_judged_by_its_own_call(project: pytest.Pytester) -> None:
    # What pytest-rerunfailures does: the protocol again, on the same item.
    project.makeconftest(
        """
import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for _ in range(2):
        runtestprotocol(item, nextitem=nextitem)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""
    )
    project.makepyfile(
        PRELUDE
        + """
RUNS: list[str] = []


@pytest.fixture
def second_setup_fails(request: pytest.FixtureRequest) -> None:
    RUNS.append(request.node.name)
    if RUNS.count(request.node.name) == 2:
        raise RuntimeError("the rerun's setup failed")


@pytest.mark.course("roundtrip.json")
def test_rerun(course_adapter: FixtureProviderAdapter, second_setup_fails: None) -> None:
    asyncio.run(drain(course_adapter, 2))
"""
    )
    result = run(project)
    # The first run passed; the second errored at setup, and that is all it reports.
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_rerun*", "*the rerun's setup failed"])
    assert "left part of its fixture unused" not in result.stdout.str()


def test_a_marked_test_without_the_fixtures_is_not_checked(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_plain() -> None:
    pass
"""
    )
    run(project).assert_outcomes(passed=1)


# -- turning the check off --------------------------------------------------------------

LEAVES_ONE = (
    PRELUDE
    + """
@pytest.mark.course("roundtrip.json", strict=False)
def test_off_by_marker(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))


@pytest.mark.course("roundtrip.json")
def test_default(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))


@pytest.mark.course("roundtrip.json", strict=True)
def test_on_by_marker(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 1))
"""
)


def test_strict_false_on_the_marker_turns_the_check_off(project: pytest.Pytester) -> None:
    project.makepyfile(LEAVES_ONE)
    result = run(project)
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_default*"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_on_by_marker*"])
    assert "test_off_by_marker" not in result.stdout.str()


@pytest.mark.parametrize(
    "ini",
    [
        ("pytest.ini", "[pytest]\ncourse_strict = false\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\ncourse_strict = "false"\n'),
        ("pyproject.toml", "[tool.pytest.ini_options]\ncourse_strict = false\n"),
        ("pyproject.toml", "[tool.pytest]\ncourse_strict = false\n"),
    ],
    ids=["pytest.ini", "ini_options-string", "ini_options-bool", "native-bool"],
)
def test_the_ini_option_turns_it_off_and_the_marker_back_on(
    project: pytest.Pytester, ini: tuple[str, str]
) -> None:
    name, text = ini
    project.path.joinpath(name).write_text(text, encoding="utf-8")
    project.makepyfile(LEAVES_ONE)
    result = run(project, "--strict-config")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_on_by_marker*"])


def test_the_marker_and_ini_option_are_registered(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_loop(course_adapter: FixtureProviderAdapter) -> None:
    asyncio.run(drain(course_adapter, 2))
"""
    )
    run(project, "--strict-markers", "--strict-config").assert_outcomes(passed=1)
    markers = run(project, "--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.course(fixture, *, strict=True): *"])
    helped = run(project, "--help")
    helped.stdout.fnmatch_lines(["*course_strict*"])


# -- mistakes a user makes --------------------------------------------------------------


def test_a_fixture_without_the_marker_errors_at_setup(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
def test_unmarked(course_adapter: FixtureProviderAdapter) -> None:
    pass


def test_unmarked_server(course_server: object) -> None:
    pass
"""
    )
    result = run(project)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_unmarked*",
            "*course_adapter needs a fixture to replay: mark the test"
            " @pytest.mark.course(<fixture file or dict>)",
        ]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("course()", "*takes exactly one fixture (a path or a fixture value), got 0"),
        ("course('a.json', 'b.json')", "*takes exactly one fixture*got 2"),
        ("course('roundtrip.json', fixture={})", "*takes exactly one fixture*got 2"),
        ("course('roundtrip.json', strict='no')", "*`strict` must be True or False, got str"),
        ("course('roundtrip.json', stict=False)", "*got unknown keyword(s): stict"),
        ("course('missing.json')", "*PROVIDER_INVALID_FIXTURE: *missing.json*"),
        ("course('bad.json')", "*PROVIDER_INVALID_FIXTURE*bad.json*"),
        ("course({'schemaVersion': 3, 'responses': []})", "*PROVIDER_INVALID_FIXTURE*"),
        ("course([])", "*the marker's fixture: PROVIDER_INVALID_FIXTURE*"),
    ],
)
def test_a_misused_marker_errors_at_setup_saying_why(
    project: pytest.Pytester, marker: str, message: str
) -> None:
    project.path.joinpath("bad.json").write_text('{"schemaVersion": 1, "schemaVersion": 1}')
    project.makepyfile(
        PRELUDE
        + f"""
@pytest.mark.{marker}
def test_misused(course_adapter: FixtureProviderAdapter) -> None:
    pass
"""
    )
    result = run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_misused*", message])
    # Said once: not again through the chain of the exception the plugin caught.
    out = result.stdout.str()
    section = out[out.index("ERROR at setup of test_misused") : out.index("short test summary")]
    assert "During handling of the above exception" not in section
    assert "direct cause" not in section
    assert len([line for line in section.splitlines() if fnmatch(line, message)]) == 1


# -- async runners ----------------------------------------------------------------------


def test_async_tests_under_pytest_asyncio(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.asyncio
@pytest.mark.course("roundtrip.json")
async def test_loop(course_adapter: FixtureProviderAdapter) -> None:
    assert await drain(course_adapter, 2) == ["toolCall", "stop"]


@pytest.mark.asyncio
@pytest.mark.course("roundtrip.json")
async def test_leaves_one(course_adapter: FixtureProviderAdapter) -> None:
    await drain(course_adapter, 1)


async def records():
    for record in script.fixture(script.response("from a source"))["responses"][0]["records"]:
        yield record


@pytest.mark.asyncio
@pytest.mark.course({"schemaVersion": 1, "responses": [{"records": records()}]})
async def test_async_source(course_adapter: FixtureProviderAdapter) -> None:
    assert await drain(course_adapter, 1) == ["stop"]
"""
    )
    result = run(project)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaves_one*"])


def test_async_tests_under_anyio_asyncio_and_trio(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.anyio
@pytest.mark.course("roundtrip.json")
async def test_loop(course_adapter: FixtureProviderAdapter) -> None:
    assert await drain(course_adapter, 2) == ["toolCall", "stop"]


@pytest.mark.anyio
@pytest.mark.course("roundtrip.json")
async def test_abandons(course_adapter: FixtureProviderAdapter) -> None:
    await drain(course_adapter, 1)
    course_adapter.stream(CourseModelRequest("abandoned"))
"""
    )
    result = run(project, "-p", "anyio", "-v")
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_abandons?asyncio?*"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_abandons?trio?*"])


def test_async_def_without_a_runner_is_not_run_by_the_plugin(project: pytest.Pytester) -> None:
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
async def test_no_runner(course_adapter: FixtureProviderAdapter) -> None:
    await drain(course_adapter, 2)
"""
    )
    # With no async plugin, pytest itself refuses an async test: the plugin never runs it.
    result = project.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:anyio")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*async def functions are not natively supported*"])


def test_uvicorn_missing_skips_the_server_test(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    project.makepyfile(
        PRELUDE
        + """
@pytest.mark.course("roundtrip.json")
def test_server(course_server: object) -> None:
    raise AssertionError("not reached")
"""
    )
    result = run(project, "-rs")
    result.assert_outcomes(skipped=1)
    assert (
        "course_server needs uvicorn, which the extra course[serve] installs: "
        "pip install 'course[serve]'" in result.stdout.str()
    )

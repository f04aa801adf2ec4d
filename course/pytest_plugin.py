"""The pytest plugin of ``course``: the ``course`` marker and its two fixtures.

Registered through the ``pytest11`` entry point, so installing ``course`` is enough::

    @pytest.mark.course("fixtures/add.json")          # relative to the test file
    def test_agent(course_adapter: FixtureProviderAdapter) -> None:
        asyncio.run(agent_loop(course_adapter))

- ``course_adapter``: a ``FixtureProviderAdapter`` over the marked fixture.
- ``course_server``: ``course.vendors.serve(course_adapter)``, running (needs the
  ``course[serve]`` extra; without it the test is skipped).
- Strict teardown: after a test whose call passed (and none of its subtests failed), any
  response never requested and any stream neither read to its end nor closed is a test
  error listing each one. Each run of a rerun test is judged by its own call.
  ``@pytest.mark.course(..., strict=False)`` turns it off for one test, the ini option
  ``course_strict = false`` for all (an explicit ``strict=True`` wins over it). With
  ``course_server``, a passing test also errors when a model call it sent had problems
  (``server.calls``: a check's 400 the agent swallowed, a tool call it changed).
- ``@pytest.mark.course(..., check_requests=False)``: ``course_server`` reads the
  requests but checks and refuses nothing (``serve(..., check_requests=False)``).
- Record mode: ``--course-record=none|once|all`` (ini ``course_record``; default
  ``none``). ``once`` records a marked fixture file that does not exist yet, ``all``
  records every marked file again: ``course_server`` is then a
  ``course.vendors.record(...)`` proxy to the real providers (needs ``course[record]``),
  and the file is written at teardown only if the test passed. A recording test has no
  strict teardown, and ``course_adapter`` is then an error (an adapter cannot record).
  Fixtures written in code never record.

The plugin never runs ``async def`` tests itself: use pytest-asyncio or anyio, or call
``asyncio.run`` in a plain test.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from . import (
    AbortSignal,
    CourseModelRequest,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderError,
    load_fixture,
)

if TYPE_CHECKING:
    from .vendors import FixtureRecorder, FixtureServer, ServedCall

__all__ = [
    "course_adapter",
    "course_server",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_makereport",
]

_MARKER = "course"
_STRICT_INI = "course_strict"
_SERVE_EXTRA = "course[serve]"
_RECORD_OPTION = "--course-record"
_RECORD_INI = "course_record"
_RECORD_MODES = ("none", "once", "all")
_RECORD_EXTRA = "course[record]"

# The outcome of this run's call phase ("passed", "failed", "skipped"; None before it):
# strict teardown checks only a passed one, so that a test's own failure stays the one
# reported. Each setup starts it afresh, so that a rerun (pytest-rerunfailures, anything
# that runs the protocol again) never reads the last run's. A pytest 9 subtest reports
# its own call report before the test's, which passes: a failed one marks the call
# failed for good.
_CALL_OUTCOME = pytest.StashKey[str | None]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``course_strict`` and ``course_record`` ini options and
    ``--course-record``."""
    parser.addini(
        _STRICT_INI,
        "course: fail a test at teardown when its fixture has responses never requested "
        "or streams never finished nor closed (default: true)",
        type="bool",
        default=True,
    )
    parser.addini(
        _RECORD_INI,
        "course: record mode of marked fixture files, none, once or all (default: none)",
        default="none",
    )
    parser.getgroup("course").addoption(
        _RECORD_OPTION,
        choices=_RECORD_MODES,
        default=None,
        dest=_RECORD_INI,
        help="record marked fixture files through course_server from the real providers: "
        "none (replay only; the default), once (record the files that do not exist), "
        "all (record every file again). Overrides the ini option course_record.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``course`` marker; check the record mode."""
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(fixture, *, strict=True): replay FIXTURE (a path relative to the test "
        "file, or a fixture value such as a dict from course.script) through the "
        "course_adapter and course_server fixtures; strict=False skips the check that "
        "every response was used and every request passed the provider's checks; "
        "check_requests=False serves requests unchecked. "
        f"{_RECORD_OPTION}=once|all records a fixture file "
        "through course_server instead",
    )
    _record_mode(config)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember the outcome of the test's call phase, for the strict teardown."""
    report = yield
    if report.when == "setup":
        item.stash[_CALL_OUTCOME] = None
    elif report.when == "call" and item.stash.get(_CALL_OUTCOME, None) != "failed":
        item.stash[_CALL_OUTCOME] = report.outcome
    return report


@pytest.fixture
def course_adapter(request: pytest.FixtureRequest) -> Iterator[FixtureProviderAdapter]:
    """A ``FixtureProviderAdapter`` over the fixture of the test's ``course`` marker.

    At teardown, unless the marker or ini option turned it off, the test errors if a
    response was never requested or a stream was neither finished nor closed.
    """
    recording = _recording_path(request)
    if recording is not None:
        pytest.fail(
            f"course_adapter cannot record: this test records {recording} "
            f"({_RECORD_OPTION}={_record_mode(request.config)}), and an adapter can only "
            f"replay a fixture. Ask for course_server instead, or run with "
            f"{_RECORD_OPTION}=none.",
            pytrace=False,
        )
    replay = _Replay.of(request)
    yield replay.adapter
    if replay.strict and request.node.stash.get(_CALL_OUTCOME, None) == "passed":
        report = replay.leftovers()
        if report:
            pytest.fail(report, pytrace=False)


@pytest.fixture
def course_server(request: pytest.FixtureRequest) -> Iterator[FixtureServer | FixtureRecorder]:
    """A running ``course.vendors.serve(course_adapter)`` server (``.url``, ``.requests``).

    Serves this test's very ``course_adapter``, so the strict teardown covers it. Needs
    uvicorn (the ``course[serve]`` extra): without it the test is skipped. While the
    test records (``--course-record``), a ``course.vendors.record(...)`` proxy instead,
    whose fixture is written at teardown if the test passed (needs ``course[record]``).
    """
    recording = _recording_path(request)
    if recording is not None:
        yield from _record(request, recording)
        return
    try:
        import uvicorn  # noqa: F401, PLC0415  (probed, not used: serve imports it)
    except ImportError:
        pytest.skip(
            f"course_server needs uvicorn, which the extra {_SERVE_EXTRA} installs: "
            f"pip install '{_SERVE_EXTRA}'"
        )
    from .vendors import serve  # noqa: PLC0415  (optional: only tests that serve need it)

    adapter: FixtureProviderAdapter = request.getfixturevalue("course_adapter")
    options = _marker_arguments(cast("pytest.Mark", _closest_marker(request.node)), request.config)
    with serve(adapter, check_requests=options.check_requests) as server:
        yield server
    if options.strict and request.node.stash.get(_CALL_OUTCOME, None) == "passed":
        report = _problems(server.calls) if options.check_requests else ""
        if report:
            pytest.fail(report, pytrace=False)


def _problems(calls: tuple[ServedCall, ...]) -> str:
    """The problems of the calls a test's server took, as a message; empty when none."""
    found = [
        f"  - call {number} (POST {call.path}): {problem}"
        for number, call in enumerate(calls, 1)
        for problem in call.problems
    ]
    if not found:
        return ""
    return "\n".join(
        [
            "course: the agent's requests did not pass the provider's checks:",
            *found,
            "If the test sends them on purpose, mark it "
            f"@pytest.mark.{_MARKER}(..., strict=False), or check_requests=False to "
            "serve them unchecked.",
        ]
    )


# -- record mode --------------------------------------------------------------------------


def _record_mode(config: pytest.Config) -> str:
    """``none``, ``once`` or ``all``: the option's, else the ini file's."""
    mode = config.getoption(_RECORD_INI, None)
    if mode is None:
        mode = config.getini(_RECORD_INI)
    if mode not in _RECORD_MODES:
        raise pytest.UsageError(
            f"{_RECORD_INI} must be one of {', '.join(_RECORD_MODES)}; got {mode!r}"
        )
    return str(mode)


def _recording_path(request: pytest.FixtureRequest) -> Path | None:
    """The fixture file this test records, if its marker names one that its mode records."""
    marker = _closest_marker(request.node)
    if marker is None:
        return None
    value = _marker_arguments(marker, request.config).fixture
    if not isinstance(value, str | os.PathLike):
        return None  # a fixture written in code: nothing to record
    mode = _record_mode(request.config)
    path = Path(request.node.path).parent / value
    if mode == "all" or (mode == "once" and not path.exists()):
        return path
    return None


def _record(request: pytest.FixtureRequest, path: Path) -> Iterator[FixtureRecorder]:
    """A recorder writing ``path`` at teardown, if the test passed."""
    try:
        import httpx2  # noqa: F401, PLC0415  (probed, not used: record imports them)
        import uvicorn  # noqa: F401, PLC0415
    except ImportError:
        pytest.skip(
            f"recording needs uvicorn and httpx2, which the extra {_RECORD_EXTRA} installs: "
            f"pip install '{_RECORD_EXTRA}'"
        )
    from .vendors import RecordingError, record  # noqa: PLC0415  (optional, as above)

    recorder = record(path)
    recorder.__enter__()
    try:
        yield recorder
    finally:
        recorder._stop()
    if request.node.stash.get(_CALL_OUTCOME, None) != "passed":
        return  # a test that did not pass records nothing (and keeps the old file)
    failure: RecordingError | None = None
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        recorder._write()
    except RecordingError as error:
        failure = error
    if failure is not None:  # raised outside the except: see _Replay.of
        pytest.fail(f"course: {path} was not recorded: {failure}", pytrace=False)


# -- the replay of one test ---------------------------------------------------------------


class _TrackingAdapter(FixtureProviderAdapter):
    """The adapter a test gets: it remembers every stream it hands out."""

    __slots__ = ("_responses", "_streams")

    def __init__(self, fixture: object) -> None:
        super().__init__(fixture)
        self._responses = self.pending
        # (call number, response index, stream) of each call that took a response; a
        # call that took none failed at once, so its stream is settled.
        self._streams: list[tuple[int, int, CourseModelStream]] = []

    def stream(
        self, request: CourseModelRequest, signal: AbortSignal | None = None
    ) -> CourseModelStream:
        pending = self.pending
        stream = super().stream(request, signal)
        if self.pending < pending:
            self._streams.append((self.call_count, self._responses - pending, stream))
        return stream


@dataclass(frozen=True, slots=True)
class _Replay:
    """One test's adapter, what its marker asked for, and the fixture's response ids."""

    adapter: _TrackingAdapter
    strict: bool
    response_ids: tuple[str | None, ...]
    source: str

    @classmethod
    def of(cls, request: pytest.FixtureRequest) -> _Replay:
        """Read the test's marker and build its adapter; a mistake fails the setup."""
        marker = _closest_marker(request.node)
        if marker is None:
            pytest.fail(
                f"{request.fixturename} needs a fixture to replay: mark the test "
                f"@pytest.mark.{_MARKER}(<fixture file or dict>)",
                pytrace=False,
            )
        options = _marker_arguments(marker, request.config)
        value, strict = options.fixture, options.strict
        # Each failure is raised outside its `except`: inside, pytest would print the
        # caught error's chain above it, the same message two or three times.
        failure: FixtureProviderError | None = None
        fixture: object
        if isinstance(value, str | os.PathLike):
            path = Path(request.node.path).parent / value
            source = f"fixture file {path}"
            try:
                fixture = load_fixture(path)
            except FixtureProviderError as error:
                failure = error
            if failure is not None:
                hint = (
                    ""
                    if path.exists()
                    else f"\nRecord it from the real providers: run the test with "
                    f"{_RECORD_OPTION}=once"
                )
                pytest.fail(f"@pytest.mark.{_MARKER}: {failure}{hint}", pytrace=False)
        else:
            fixture = value
            source = "the marker's fixture"
        try:
            adapter = _TrackingAdapter(fixture)
        except FixtureProviderError as error:
            failure = error
        if failure is not None:
            pytest.fail(f"@pytest.mark.{_MARKER}: {source}: {failure}", pytrace=False)
        return cls(adapter, strict, _response_ids(fixture), source)

    def leftovers(self) -> str:
        """What the test left of its fixture, as a message; empty when nothing."""
        adapter = self.adapter
        unused = [
            f"  - {self._response(index)} was never requested"
            for index in range(adapter._responses - adapter.pending, adapter._responses)
        ]
        unfinished = [
            f"  - the stream of call {call}, for {self._response(index)}, was neither read "
            "to its end nor closed"
            for call, index, stream in adapter._streams
            if not stream._settled
        ]
        if not unused and not unfinished:
            return ""
        hints = []
        if unfinished:
            hints.append(
                "Read each stream to its end (`async for`, or `await stream.result()`) or "
                "close it (`async with adapter.stream(...) as stream`, or "
                "`await stream.aclose()`)."
            )
        hints.append(
            "If the test leaves them on purpose, mark it "
            f"@pytest.mark.{_MARKER}(..., strict=False)."
        )
        return "\n".join(
            [
                f"course: the test left part of its fixture unused ({self.source}):",
                *unused,
                *unfinished,
                *hints,
            ]
        )

    def _response(self, index: int) -> str:
        response_id = self.response_ids[index]
        named = "" if response_id is None else f" (responseId {response_id!r})"
        return f"response {index}{named}"


def _closest_marker(item: pytest.Item) -> pytest.Mark | None:
    """The test's most specific ``course`` marker: a parameter's, the function's, then
    the class's and the module's.

    pytest lists a parameter's marks after the function's own, where its
    ``get_closest_marker`` would prefer the function's.
    """
    if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
        for mark in item.callspec.marks:
            if mark.name == _MARKER:
                return mark
    return item.get_closest_marker(_MARKER)


@dataclass(frozen=True, slots=True)
class _MarkerArguments:
    fixture: object
    strict: bool
    check_requests: bool


def _marker_arguments(marker: pytest.Mark, config: pytest.Config) -> _MarkerArguments:
    """The marker's fixture, whether the test is strict and whether its server checks
    requests; a misuse fails the setup."""
    usage = f"@pytest.mark.{_MARKER}(fixture, *, strict=True, check_requests=True)"
    unknown = sorted(set(marker.kwargs) - {"fixture", "strict", "check_requests"})
    if unknown:
        pytest.fail(f"{usage} got unknown keyword(s): {', '.join(unknown)}", pytrace=False)
    given = [*marker.args, *([marker.kwargs["fixture"]] if "fixture" in marker.kwargs else [])]
    if len(given) != 1:
        pytest.fail(
            f"{usage} takes exactly one fixture (a path or a fixture value), got {len(given)}",
            pytrace=False,
        )
    strict = marker.kwargs.get("strict", config.getini(_STRICT_INI))
    check_requests = marker.kwargs.get("check_requests", True)
    for name, value in (("strict", strict), ("check_requests", check_requests)):
        if type(value) is not bool:
            pytest.fail(
                f"{usage}: `{name}` must be True or False, got {type(value).__qualname__}",
                pytrace=False,
            )
    return _MarkerArguments(given[0], strict, check_requests)


def _response_ids(fixture: object) -> tuple[str | None, ...]:
    """Each response's id where its first record is a ``response_start`` that names one.

    Read from the fixture value, never from the adapter, whose queue is the test's. The
    adapter has already checked the fixture's shape.
    """
    ids: list[str | None] = []
    for response in fixture["responses"]:  # type: ignore[index]
        records = response["records"]
        first = records[0] if type(records) is list and records else None
        if (
            type(first) is dict
            and first.get("type") == "response_start"
            and type(first.get("responseId")) is str
        ):
            ids.append(first["responseId"])
        else:
            ids.append(None)
    return tuple(ids)

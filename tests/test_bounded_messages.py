"""Error messages stay short whatever the fixture holds; the error's data stays whole.

A message quotes untrusted strings (unknown types and keys, ids, a provider's words, what
a source raised) shortened, so a 1 MB key never makes a 1 MB message, log line or pytest
report. ``path``, ``transport_message`` and ``transport_code`` keep the exact values.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from course import (
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)
from tests.helpers import end, run, start, stream_one, text, tool

Code = FixtureProviderErrorCode
HUGE = "k" * 1_000_000
BOUND = 1_200  # generous: the messages' own words plus a shortened quote or two


def failure_of(records: list[object]) -> FixtureProviderError:
    outcome = stream_one({"schemaVersion": 1, "responses": [{"records": records}]})
    assert outcome.error is not None
    return outcome.error


@pytest.mark.parametrize(
    ("records", "code"),
    [
        ([start(), {"type": HUGE}], Code.PROVIDER_UNKNOWN_EVENT),
        ([start(), {**text("a"), HUGE: 1}], Code.PROVIDER_MALFORMED_EVENT),
        ([start(), tool(HUGE), tool(HUGE)], Code.PROVIDER_DUPLICATE_TOOL_CALL),
        ([start(HUGE), end(response_id=HUGE + "x")], Code.PROVIDER_RESPONSE_MISMATCH),
        ([start(), end(), {"type": HUGE}], Code.PROVIDER_INVALID_TERMINAL),
        (
            [start(), {**end(), "usage": {"inputTokens": 1, "outputTokens": 1, HUGE: 1}}],
            Code.PROVIDER_MALFORMED_EVENT,
        ),
    ],
    ids=["type", "field", "tool id", "response id", "after the terminal", "usage key"],
)
def test_untrusted_strings_are_shortened_in_messages(records: list[object], code: Code) -> None:
    error = failure_of(records)
    assert error.code is code
    assert len(str(error)) < BOUND + len(error.path or "")
    assert len(error.message) < BOUND


def test_the_path_keeps_an_unknown_key_whole() -> None:
    error = failure_of([start(), {**text("a"), HUGE: 1}])
    assert error.path == f"/responses/0/records/1/{HUGE}"


def test_a_transport_error_keeps_the_providers_words_whole_in_its_attributes() -> None:
    error = failure_of([start(), {"type": "transport_error", "message": HUGE, "code": HUGE}])
    assert error.code is Code.PROVIDER_TRANSPORT_ERROR
    assert (error.transport_message, error.transport_code) == (HUGE, HUGE)
    assert len(error.message) < BOUND


def test_an_unknown_key_of_the_fixture_is_shortened() -> None:
    with pytest.raises(FixtureProviderError) as caught:
        FixtureProviderAdapter({"schemaVersion": 1, "responses": [], HUGE: 1})
    assert len(caught.value.message) < BOUND
    assert caught.value.path == f"/{HUGE}"


def test_what_a_source_raised_is_shortened() -> None:
    async def source() -> AsyncIterator[object]:
        yield start()
        raise RuntimeError(HUGE)

    async def main() -> FixtureProviderError:
        adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [{"records": source()}]})
        with pytest.raises(FixtureProviderError) as caught:
            await adapter.stream(CourseModelRequest("r")).result()
        return caught.value

    error = run(main())
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert len(error.message) < BOUND
    assert str(error.__cause__) == HUGE  # the original, whole, as the cause


def test_a_request_repr_is_bounded() -> None:
    request = CourseModelRequest(HUGE, ({"role": "user", "content": HUGE},), (HUGE,))
    assert len(repr(request)) < BOUND

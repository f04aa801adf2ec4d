"""``serve`` of schema-version-2 fixtures, end to end through the official SDKs.

What the server itself adds in version 2, whatever the format: a transport error's own
HTTP status and retry delay (each SDK's error class, and each SDK's own retry waiting
what ``retry-after-ms`` says), streaming that begins once ``response_start`` is read
(so a ``delay`` there holds back the status line and a later one is a read timeout),
and the fixture's model. What each format renders of the version-2 records is tested
with its format (``test_vendor_*``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Final

import anthropic
import httpx2
import openai
import pytest

from course.vendors import serve

from .test_server_sdk import (
    ASK,
    CHAT,
    MODEL,
    QUESTION,
    Clients,
    bundled,
    chat_create,
    end,
    messages_create,
    responses_create,
    start,
    text,
)

RETRY_AFTER: Final = 0.01
"""Seconds a rate-limited fixture asks the client to wait: tiny, so retries cost nothing."""
HOLD: Final = 3600
"""A ``delay`` no test waits out: the client's own timeout (or leaving) ends it first."""


def fixture_v2(*responses: object) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": list(responses)}


def failure(status: int | None = None, **fields: object) -> dict[str, object]:
    record: dict[str, object] = {"type": "transport_error", "message": "slow down"}
    if status is not None:
        record["status"] = status
    return {"records": [{**record, **fields}]}


def retries_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The SDKs' own "Retrying request ... in N seconds" lines."""
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Retrying")]


@pytest.fixture
def sdk_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.INFO, logger="openai")
    caplog.set_level(logging.INFO, logger="anthropic")
    yield caplog


# -- statuses and retry delays --------------------------------------------------------------


def test_a_429_is_the_openai_rate_limit_error_with_its_code_and_retry_delay() -> None:
    limited = failure(429, code="rate_limit_exceeded", retryAfter=RETRY_AFTER)
    with serve(fixture_v2(limited, limited)) as server, Clients(server) as clients:
        with pytest.raises(openai.RateLimitError) as chat:
            chat_create(clients)
        with pytest.raises(openai.RateLimitError) as responses:
            responses_create(clients)
    for raised in (chat.value, responses.value):
        assert raised.status_code == 429
        assert raised.code == "rate_limit_exceeded"
        assert raised.response.headers["retry-after"] == "1"
        assert raised.response.headers["retry-after-ms"] == "10"
        assert "x-should-retry" not in raised.response.headers


@pytest.mark.parametrize("call", [chat_create, responses_create, messages_create])
def test_each_sdks_own_retry_waits_the_retry_after_then_takes_the_next_response(
    sdk_log: pytest.LogCaptureFixture, call: object
) -> None:
    limited = failure(429, code="rate_limit_exceeded", retryAfter=RETRY_AFTER)
    with (
        serve(fixture_v2(limited, bundled()[1])) as server,
        Clients(server, retries=1) as clients,
    ):
        seen = call(clients)  # type: ignore[operator]
        assert len(server.requests) == 2
    assert seen.text == "The sum is 42."
    # The SDK waited what retry-after-ms said, not its own backoff (0.5 s and more).
    (retried,) = retries_logged(sdk_log)
    assert f" {RETRY_AFTER:f} seconds" in retried


def test_a_529_is_the_anthropic_overloaded_error() -> None:
    overloaded = failure(529, code="overloaded_error", message="Overloaded")
    with serve(fixture_v2(overloaded, overloaded)) as server, Clients(server) as clients:
        with pytest.raises(anthropic.OverloadedError) as raised:
            messages_create(clients)
        messages = clients.anthropic.messages
        with (
            pytest.raises(anthropic.OverloadedError) as streamed,  # before streaming began
            messages.stream(model=MODEL, max_tokens=64, messages=ASK) as stream,
        ):
            stream.get_final_message()
    for error in (raised.value, streamed.value):
        assert error.status_code == 529
        assert (error.type, error.api_message) == ("overloaded_error", "Overloaded")


@pytest.mark.parametrize(
    ("status", "openai_error", "anthropic_error"),
    [
        (400, openai.BadRequestError, anthropic.BadRequestError),
        (401, openai.AuthenticationError, anthropic.AuthenticationError),
        (404, openai.NotFoundError, anthropic.NotFoundError),
        (503, openai.InternalServerError, anthropic.ServiceUnavailableError),
    ],
)
def test_a_transport_error_status_is_each_sdks_error_class_for_it(
    status: int, openai_error: type[Exception], anthropic_error: type[Exception]
) -> None:
    with (
        serve(fixture_v2(*[failure(status, code="bad")] * 2)) as server,
        Clients(server) as clients,
    ):
        with pytest.raises(openai_error) as chat:
            chat_create(clients)
        with pytest.raises(anthropic_error) as messages:
            messages_create(clients)
    assert chat.value.status_code == messages.value.status_code == status  # type: ignore[attr-defined]


def test_a_client_error_status_is_not_retried_and_a_server_error_is(
    sdk_log: pytest.LogCaptureFixture,
) -> None:
    refused, busy = failure(400, code="bad"), failure(503, retryAfter=RETRY_AFTER)
    with (
        serve(fixture_v2(refused, bundled()[1], busy, bundled()[1])) as server,
        Clients(server, retries=1) as clients,
    ):
        with pytest.raises(openai.BadRequestError):
            chat_create(clients)
        assert server.adapter.call_count == 1  # the SDK does not retry a 400
        assert chat_create(clients).text == "The sum is 42."  # takes the good one
        assert chat_create(clients).text == "The sum is 42."  # a 503, retried
    assert len(retries_logged(sdk_log)) == 1


# -- when streaming begins ------------------------------------------------------------------


def test_a_delay_on_the_start_holds_back_the_status_line_so_the_sdk_retries() -> None:
    slow = {"records": [{**start("r-slow"), "delay": HOLD}, text("late"), end("r-slow")]}
    with (
        serve(fixture_v2(slow, bundled()[1], slow)) as server,
        Clients(server, retries=1) as clients,
    ):
        impatient = clients.openai.with_options(timeout=0.5)
        # The first request times out before the headers; the SDK's retry takes the next.
        completion = impatient.chat.completions.create(model=MODEL, messages=CHAT)
        assert completion.choices[0].message.content == "The sum is 42."
        with pytest.raises(openai.APITimeoutError):
            impatient.with_options(max_retries=0).chat.completions.create(
                model=MODEL, messages=CHAT, stream=True
            )


@pytest.mark.parametrize(
    ("path", "body", "opening"),
    [
        (
            "/v1/responses",
            {"model": MODEL, "input": QUESTION, "stream": True},
            b"event: response.created",
        ),
        (
            "/v1/messages",
            {"model": MODEL, "max_tokens": 64, "messages": ASK, "stream": True},
            b"event: message_start",
        ),
    ],
)
def test_a_later_delay_is_a_wait_after_the_headers_and_the_opening_event(
    path: str, body: dict[str, object], opening: bytes
) -> None:
    held = {"records": [start("r-held"), {**text("late"), "delay": HOLD}, end("r-held")]}
    with (
        serve(fixture_v2(held)) as server,
        httpx2.Client(timeout=httpx2.Timeout(10, read=0.5)) as client,
        client.stream("POST", server.url + path, json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        received = b""
        with pytest.raises(httpx2.ReadTimeout):  # the delay: the client's read timeout
            for part in response.iter_bytes():
                received += part
        assert received.startswith(opening)
        assert b"late" not in received


def test_a_transport_error_after_the_start_is_the_in_stream_error_in_version_2() -> None:
    cut = {"type": "transport_error", "message": "cut", "code": "busy", "status": 503}
    with (
        serve(fixture_v2({"records": [start("r-cut"), cut]})) as server,
        Clients(server) as clients,
        pytest.raises(openai.APIError) as raised,
    ):
        list(clients.openai.chat.completions.create(model=MODEL, messages=CHAT, stream=True))
    assert not isinstance(raised.value, openai.APIStatusError)  # it came in the stream
    assert (raised.value.code, raised.value.message) == ("busy", "cut")


# -- the model ------------------------------------------------------------------------------


def test_the_fixtures_model_reaches_every_client_mode() -> None:
    named = {"records": [{**start("r-m"), "model": "gpt-4o-2024-08-06"}, text("Hi"), end("r-m")]}
    with serve(fixture_v2(*[named] * 4)) as server, Clients(server) as clients:
        chat = clients.openai.chat.completions
        streamed = list(
            chat.create(
                model=MODEL, messages=CHAT, stream=True, stream_options={"include_usage": True}
            )
        )
        whole = chat.create(model=MODEL, messages=CHAT)
        events = list(clients.openai.responses.create(model=MODEL, input=QUESTION, stream=True))
        message = clients.anthropic.messages.create(model=MODEL, max_tokens=64, messages=ASK)
    assert {chunk.model for chunk in streamed} == {"gpt-4o-2024-08-06"}
    assert whole.model == "gpt-4o-2024-08-06"
    assert events[0].response.model == "gpt-4o-2024-08-06"  # type: ignore[union-attr]
    assert message.model == "gpt-4o-2024-08-06"

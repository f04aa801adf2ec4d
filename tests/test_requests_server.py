"""The server's side of SPEC-REQUESTS, in-process: every JSON body to a model route is a
``ServedCall``; a body no reader can read or a failed check is the route's 400 in its
provider's shape and takes no response; never a 500 or a stray exception, whatever
the body; ``check_requests=False`` reads and lets everything through."""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course import CourseModelRequest, CourseRequestMessage, script, thaw
from course.vendors import ServedCall, asgi_app
from course.vendors._server import FixtureApp

from .test_server import request

ROUTES: Final = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}
HISTORY_KEYS: Final = {
    "openai-chat": ["messages", "tools"],
    "openai-responses": ["input", "instructions", "tools", "previous_response_id"],
    "anthropic": ["messages", "system", "tools"],
    "gemini": ["contents", "systemInstruction", "tools"],
}
WORDS: Final = [
    "role", "content", "type", "text", "parts", "tool_calls", "tool_call_id", "id", "name",
    "arguments", "function", "input", "tool_use_id", "call_id", "output", "thinking",
    "signature", "data", "functionCall", "functionResponse", "args", "response",
    "thoughtSignature", "thought", "user", "assistant", "model", "tool", "system",
    "developer", "tool_use", "tool_result", "function_call", "function_call_output",
    "reasoning", "summary", "message", "input_text", "output_text", "refusal",
]  # fmt: skip


def many_answers(count: int = 60) -> dict[str, object]:
    return script.fixture(*[script.response("ok") for _ in range(count)])


_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(WORDS), inner, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def bodies(draw: st.DrawFn, format: str) -> dict[str, Any]:
    """A JSON object with the format's history keys holding anything, often shaped."""
    body: dict[str, Any] = {"model": "m"}
    for key in draw(st.lists(st.sampled_from(HISTORY_KEYS[format]), max_size=3, unique=True)):
        body[key] = draw(_JSON)
    return body


def error_message(format: str, body: bytes) -> str:
    error = json.loads(body)["error"]
    assert error["type" if format != "gemini" else "status"] in (
        "invalid_request_error",
        "INVALID_ARGUMENT",
    )
    return str(error["message"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ROUTES)).flatmap(lambda f: st.tuples(st.just(f), bodies(f))))
def test_any_body_is_read_or_a_located_400_never_a_500(
    given_body: tuple[str, dict[str, Any]],
) -> None:
    format, body = given_body
    app = FixtureApp(many_answers())
    client = request(app, body, path=ROUTES[format])
    [call] = app.calls
    assert isinstance(call, ServedCall) and (call.format, call.path) == (format, ROUTES[format])
    if client.status == 400:
        message = error_message(format, client.body)
        assert message == call.problems[0]
        assert message.startswith(("course read: ", "course check 1: ", "course check 2: "))
        assert call.response_index is None and app.adapter.pending == 60
        assert (call.request is None) is message.startswith("course read: ")
    else:
        assert client.status == 200, client.body
        assert call.response_index == 0
        assert isinstance(call.request, CourseModelRequest)
        assert all(isinstance(m, CourseRequestMessage) for m in call.request.messages)
        assert not [p for p in call.problems if not p.startswith("course check 3: ")]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ROUTES)).flatmap(lambda f: st.tuples(st.just(f), bodies(f))))
def test_unchecked_every_body_takes_a_response(given_body: tuple[str, dict[str, Any]]) -> None:
    format, body = given_body
    app = asgi_app(many_answers(), check_requests=False)
    client = request(app, body, path=ROUTES[format])
    assert client.status == 200
    [call] = app.calls
    assert call.response_index == 0
    assert all(p.startswith("course read: ") for p in call.problems)
    assert (call.request is None) is bool(call.problems)


def test_calls_hold_refused_calls_in_arrival_order_and_requests_do_not() -> None:
    app = FixtureApp(many_answers())
    good = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    bad = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c9", "content": "42"}]}
    assert request(app, good).status == 200
    assert request(app, bad).status == 400
    assert request(app, good).status == 200
    assert [c.response_index for c in app.calls] == [0, None, 1]
    assert [thaw(c.body) for c in app.calls] == [good, bad, good]
    assert [thaw(r) for r in app.requests] == [good, good]
    ids = [c.request.id for c in app.calls if c.request is not None]
    assert len(set(ids)) == 3 and all(i.startswith("request-") for i in ids)

"""The three checks of SPEC-REQUESTS on histories built by hand, whatever the format:
each passes a correct history and names the place and the id of a broken one."""

from __future__ import annotations

import base64
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseRedactedThinkingBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseToolCallBlock,
    CourseToolResultBlock,
)
from course._json import JsonValue, PlainJson, refreeze
from course._model import (
    CourseContentBlock,
    CourseIncompleteToolCallBlock,
    CourseRequestBlock,
    CourseRequestRole,
)
from course.vendors._checks import check, equal_json
from course.vendors._gemini import read_request as gemini_read
from course.vendors._requests import ReadRequest, SentLog, SentResponse


def message(role: CourseRequestRole, *content: CourseRequestBlock) -> CourseRequestMessage:
    return CourseRequestMessage(role, content)


def read(
    *messages: CourseRequestMessage, history: tuple[CourseRequestMessage, ...] = ()
) -> ReadRequest:
    """A request whose message i stood at ``messages[i]`` on the wire."""
    places = tuple((f"messages[{i}]",) * len(m.content) for i, m in enumerate(messages))
    return ReadRequest(CourseModelRequest("req-1", messages), places, history)


def call(
    call_id: str, name: str = "add", signature: str | None = None, **arguments: PlainJson
) -> CourseToolCallBlock:
    frozen = refreeze(dict(arguments))
    assert isinstance(frozen, Mapping)
    return CourseToolCallBlock(call_id, name, frozen, signature=signature)


def result(call_id: str, content: JsonValue = "3") -> CourseToolResultBlock:
    return CourseToolResultBlock(call_id, content)


def sent(
    *content: CourseContentBlock, response_id: str = "r-1", format: str = "openai-chat"
) -> SentLog:
    log = SentLog()
    log.add(SentResponse(format, response_id, content))
    return log


USER = message("user", CourseTextBlock("add 1 and 2"))


def problems(
    format: str, request: ReadRequest, log: SentLog | None = None
) -> tuple[tuple[str, ...], bool]:
    checked = check(format, request, SentLog() if log is None else log)
    return checked.problems, checked.refused


def test_a_correct_tool_loop_has_no_problem() -> None:
    request = read(
        USER,
        message("assistant", call("c1", a=1), call("c2", a=2)),
        message("tool", result("c1")),
        message("tool", result("c2")),
        message("assistant", CourseTextBlock("3 and 4")),
        message("user", CourseTextBlock("thanks")),
    )
    assert problems("openai-chat", request, sent(call("c1", a=1), call("c2", a=2))) == ((), False)


def test_check_1_a_result_for_a_call_never_made_is_refused_with_its_place_and_id() -> None:
    request = read(USER, message("assistant", call("c1")), message("tool", result("c9")))
    found, refused = problems("openai-chat", request)
    assert refused
    assert found[0] == (
        "course check 1: messages[2]: the tool result for 'c9' answers no tool call made "
        "earlier in the history"
    )


def test_check_1_a_result_before_its_call_is_refused() -> None:
    request = read(message("tool", result("c1")), message("assistant", call("c1")))
    found, _ = problems("openai-chat", request)
    assert found[0].startswith("course check 1: messages[0]:")


def test_check_2_a_call_left_unanswered_when_the_user_moves_on() -> None:
    request = read(
        USER,
        message("assistant", call("c1"), call("c2")),
        message("tool", result("c1")),
        message("user", CourseTextBlock("and?")),
    )
    assert problems("openai-chat", request) == (
        (
            "course check 2: messages[1]: the tool call 'c2' has no result before the user "
            "message at messages[3]",
        ),
        True,
    )


def test_check_2_a_call_at_the_end_of_the_history() -> None:
    request = read(USER, message("assistant", call("c1")))
    found, refused = problems("anthropic", request)
    assert refused
    assert found == (
        "course check 2: messages[1]: the tool call 'c1' has no result by the end of the history",
    )


def test_check_2_a_call_unanswered_before_the_next_assistant_turn() -> None:
    request = read(
        USER, message("assistant", call("c1")), message("assistant", CourseTextBlock("x")), USER
    )
    found, _ = problems("openai-chat", request)
    assert found == (
        "course check 2: messages[1]: the tool call 'c1' has no result before the assistant "
        "turn at messages[2]",
    )


def test_check_2_results_then_text_in_one_user_message_answer_the_calls() -> None:
    # Anthropic: the tool results, then the user's text, in the next user message.
    request = read(
        USER,
        message("assistant", call("c1")),
        message("user", result("c1"), CourseTextBlock("and now?")),
    )
    assert problems("anthropic", request) == ((), False)


def test_check_2_a_user_message_without_every_result_moves_on() -> None:
    request = read(
        USER,
        message("assistant", call("c1"), call("c2")),
        message("user", result("c1"), CourseTextBlock("and now?")),
    )
    found, _ = problems("anthropic", request)
    assert found == (
        "course check 2: messages[1]: the tool call 'c2' has no result before the user message "
        "at messages[2]",
    )


def test_history_by_reference_is_checked_and_placed_as_such() -> None:
    earlier = (USER, message("assistant", call("c1")))
    request = ReadRequest(
        CourseModelRequest("req-1", (message("tool", result("c1")),)),
        (("input[0]",),),
        history=earlier,
    )
    assert problems("openai-responses", request) == ((), False)
    request = ReadRequest(
        CourseModelRequest("req-1", (message("tool", result("c2")),)), (("input[0]",),), earlier
    )
    found, _ = problems("openai-responses", request)
    assert found[0].startswith("course check 1: input[0]: the tool result for 'c2'")
    assert found[1] == (
        "course check 2: previous_response_id: the tool call 'c1' has no result by the end "
        "of the history"
    )


def test_an_unchecked_request_has_no_problem() -> None:
    request = ReadRequest(
        CourseModelRequest("req-1", (message("tool", result("c9")),)),
        (("input[0]",),),
        checked=False,
    )
    assert problems("openai-responses", request) == ((), False)


@pytest.mark.parametrize(
    ("back", "problem"),
    [
        (call("c1", a=1), None),
        (call("c1", a=1.0), None),  # numbers by value
        (call("c1", name="sub", a=1), "comes back named 'sub', sent as 'add'"),
        (call("c1", a=True), "comes back with other arguments than it was sent with"),
        (call("c1", a=1, b=None), "comes back with other arguments than it was sent with"),
        (
            CourseIncompleteToolCallBlock("c1", "add", '{"a": 1'),
            "comes back with arguments that are not a JSON object",
        ),
    ],
)
def test_check_3_a_changed_call_is_noted_never_refused(
    back: CourseToolCallBlock, problem: str | None
) -> None:
    request = read(USER, message("assistant", back), message("tool", result("c1")))
    found, refused = problems("openai-chat", request, sent(call("c1", a=1)))
    assert not refused
    assert found == (
        () if problem is None else (f"course check 3: messages[1]: the tool call 'c1' {problem}",)
    )


def test_check_3_compares_the_most_recent_response_that_sent_the_id() -> None:
    log = sent(call("c1", a=1))
    log.add(SentResponse("openai-chat", "r-2", (call("c1", a=2),)))
    request = read(USER, message("assistant", call("c1", a=2)), message("tool", result("c1")))
    assert problems("openai-chat", request, log) == ((), False)


THINKING = CourseThinkingBlock("let me add", "sig-1")
REDACTED = CourseRedactedThinkingBlock("opaque")


def test_check_3_anthropic_thinking_kept_before_the_call_passes() -> None:
    log = sent(THINKING, REDACTED, call("c1", a=1), format="anthropic")
    request = read(
        USER,
        message("assistant", THINKING, REDACTED, call("c1", a=1)),
        message("user", result("c1")),
    )
    assert problems("anthropic", request, log) == ((), False)


@pytest.mark.parametrize(
    ("blocks", "problem"),
    [
        ((REDACTED,), "the thinking block signed 'sig-1' is missing"),
        (
            (CourseThinkingBlock("let me ad", "sig-1"), REDACTED),
            "the thinking block signed 'sig-1' comes back with other text",
        ),
        ((THINKING,), "the redacted thinking block 'opaque' is missing"),
    ],
)
def test_check_3_anthropic_thinking_dropped_or_changed_is_refused(
    blocks: tuple[CourseRequestBlock, ...], problem: str
) -> None:
    log = sent(THINKING, REDACTED, call("c1", a=1), format="anthropic")
    request = read(USER, message("assistant", *blocks, call("c1", a=1)))
    found, refused = problems("anthropic", request, log)
    assert refused
    assert (
        found[0]
        == "course check 2: messages[1]: the tool call 'c1' has no result by the end of the history"
    )
    assert found[1] == (
        f"course check 3: messages[1]: {problem}, which came before the tool call 'c1' in "
        "response 'r-1'"
    )


def test_check_3_anthropic_thinking_after_the_call_is_missing_before_it() -> None:
    log = sent(THINKING, call("c1"), format="anthropic")
    request = read(USER, message("assistant", call("c1"), THINKING), message("user", result("c1")))
    found, refused = problems("anthropic", request, log)
    assert refused and found[0].startswith(
        "course check 3: messages[1]: the thinking block signed 'sig-1' is missing"
    )


def test_check_3_anthropic_applies_to_the_last_assistant_message_only() -> None:
    log = sent(THINKING, call("c1"), format="anthropic")
    request = read(
        USER,
        message("assistant", call("c1")),
        message("user", result("c1")),
        message("assistant", CourseTextBlock("3")),
        message("user", CourseTextBlock("thanks")),
    )
    assert problems("anthropic", request, log) == ((), False)


def test_check_3_thinking_is_not_checked_for_other_formats() -> None:
    log = sent(THINKING, call("c1"), format="openai-responses")
    request = read(USER, message("assistant", call("c1")), message("tool", result("c1")))
    assert problems("openai-responses", request, log) == ((), False)


SIGNATURE = base64.b64encode(b"\xfa\xfb\xfc\xfd\xfe\xff").decode()


@pytest.mark.parametrize(
    ("back", "problem"),
    [
        (SIGNATURE, None),
        (
            base64.urlsafe_b64encode(b"\xfa\xfb\xfc\xfd\xfe\xff").decode(),
            None,
        ),  # as google-genai sends it
        (None, "comes back without the thoughtSignature it was sent with"),
        (
            base64.b64encode(b"other").decode(),
            "comes back with another thoughtSignature than it was sent with",
        ),
        ("sig-1", "comes back with another thoughtSignature than it was sent with"),
    ],
)
def test_check_3_gemini_signatures_compare_as_bytes(back: str | None, problem: str | None) -> None:
    log = sent(call("c1", signature=SIGNATURE), format="gemini")
    request = read(
        USER, message("assistant", call("c1", signature=back)), message("tool", result("c1"))
    )
    found, refused = problems("gemini", request, log)
    assert refused is (problem is not None)
    assert found == (
        ()
        if problem is None
        else (f"course check 3: messages[1]: the function call 'c1' {problem}",)
    )


def test_refusing_problems_come_before_noted_ones() -> None:
    log = sent(THINKING, call("c1", a=1), format="anthropic")
    request = read(USER, message("assistant", call("c1", a=2)), message("user", result("c1")))
    found, refused = problems("anthropic", request, log)
    assert refused
    assert [p[: len("course check 3")] for p in found] == ["course check 3", "course check 3"]
    assert "thinking block" in found[0] and "other arguments" in found[1]


# -- equal_json ------------------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.0, 1.0, 1.5, -2.0]),
    st.text(max_size=2),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)


def _same(a: object, b: object) -> bool:
    """The SPEC's equality, spelled out recursively (the oracle)."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@given(_JSON, _JSON)
def test_equal_json_is_the_specs_equality(a: PlainJson, b: PlainJson) -> None:
    assert equal_json(refreeze(a), refreeze(b)) is _same(a, b)
    assert equal_json(refreeze(a), refreeze(a))


def test_equal_json_ignores_key_order_and_compares_numbers_by_value() -> None:
    left: dict[str, PlainJson] = {"a": 1, "b": [1.0]}
    right: dict[str, PlainJson] = {"b": [1], "a": 1.0}
    assert equal_json(refreeze(left), refreeze(right))
    assert not equal_json(refreeze([True]), refreeze([1]))
    assert not equal_json(refreeze({"a": None}), refreeze({"a": 0}))
    assert not equal_json(refreeze("1"), refreeze(1))


def test_a_run_of_one_roles_messages_is_one_turn_where_the_provider_joins_them() -> None:
    # google-genai's streamed function calling sends each chunk's content on its own:
    # the call, then the last chunk's empty text, then the result.
    request = read(
        USER,
        message("assistant", call("c1")),
        message("assistant", CourseTextBlock("")),
        message("user", result("c1")),
    )
    assert problems("gemini", request) == ((), False)
    assert problems("anthropic", request) == ((), False)
    found, refused = problems("openai-chat", request)  # OpenAI takes each message alone
    assert refused and found[0].startswith("course check 2: messages[1]: the tool call 'c1'")


def test_anthropic_thinking_in_an_earlier_message_of_the_last_turn_counts() -> None:
    log = sent(THINKING, call("c1"), format="anthropic")
    request = read(
        USER,
        message("assistant", THINKING),
        message("assistant", call("c1")),
        message("user", result("c1")),
    )
    assert problems("anthropic", request, log) == ((), False)


@pytest.mark.parametrize("signed", [True, False])
def test_gemini_a_call_back_under_an_id_of_its_own_is_recognised_by_name_and_args(
    signed: bool,
) -> None:
    # pydantic-ai names the calls Gemini sends without an id ("pyd_ai_..."): the call
    # is still this server's, so its signature must come back.
    log = sent(
        call("resp-1:call:0", a=1, signature=SIGNATURE), response_id="resp-1", format="gemini"
    )
    part: dict[str, PlainJson] = {
        "functionCall": {"id": "pyd_ai_7", "name": "add", "args": {"a": 1}}
    }
    if signed:
        part["thoughtSignature"] = SIGNATURE
    result: PlainJson = {
        "functionResponse": {"id": "pyd_ai_7", "name": "add", "response": {"r": 2}}
    }
    body: dict[str, PlainJson] = {
        "contents": [
            {"role": "user", "parts": [{"text": "add"}]},
            {"role": "model", "parts": [part]},
            {"role": "user", "parts": [result]},
        ]
    }
    read_back = gemini_read(body, "req-2", log)
    assert read_back.messages[1].content[0].id == "pyd_ai_7"  # type: ignore[union-attr]
    found, refused = problems("gemini", read_back, log)
    assert refused is not signed
    if not signed:
        assert found == (
            "course check 3: contents[1]: the function call 'pyd_ai_7' comes back without the "
            "thoughtSignature it was sent with",
        )

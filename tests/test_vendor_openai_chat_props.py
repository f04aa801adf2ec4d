"""Property tests for the ``openai-chat`` importer.

- Generated recordings of the shapes OpenAI and gateways send (text split anywhere,
  arguments split into fragments anywhere, several fragments per chunk, ids and names
  repeated on later fragments, usage beside the finish or after it, the finish
  repeated) import to the fixture whose replay agrees with the SDK's own accumulator
  (``ChatCompletionStreamState``, through ``chat.completions.stream``).
- Whatever is thrown at the importer (random bytes, recordings mutated byte by byte or
  value by value), only a ``Recording`` or a located ``RecordingError`` comes out, and a
  ``Recording`` replays to a response or a ``FixtureProviderError``, nothing else.
- The same events with any line endings, comments and data split over several lines
  give the same fixture, or the same refusal.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelResponse,
    FixtureProviderError,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode
from course.vendors import import_recording as import_any_version
from tests.vendor_helpers import RECORDINGS, openai_client, replay


def import_recording(data: str | bytes, **kwargs: Any) -> Recording:
    """Import with version 1's rules (SPEC-VENDORS.md as written), which this file
    checks; version 2's are checked in ``tests/test_vendor_openai_chat_v2.py``."""
    return import_any_version(data, **{"schema_version": 1, **kwargs})


FILES = sorted((RECORDINGS / "openai-chat").glob("*.sse"))
TEXTS = {path.name: path.read_text() for path in FILES}

_characters = st.one_of(
    st.characters(codec=None, categories=None, exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
_ids = st.text(_characters, min_size=1, max_size=8)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_characters, max_size=5),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_characters, max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _import(data: str | bytes, **kwargs: Any) -> Recording | RecordingError:
    """The importer's outcome: only these two kinds may come out."""
    try:
        return import_recording(data, **kwargs)
    except RecordingError as error:
        return error


def _replay(recording: Recording) -> CourseModelResponse | FixtureProviderError:
    try:
        return replay(recording)
    except FixtureProviderError as error:
        return error


def _check_outcome(data: str, outcome: Recording | RecordingError) -> None:
    if isinstance(outcome, RecordingError):
        assert isinstance(outcome.code, RecordingErrorCode)
        assert str(outcome)
        if outcome.line is None:
            assert outcome.event_index is None and outcome.column is None
        else:
            assert outcome.event_index is not None and outcome.event_index >= 0
            assert outcome.column is not None and outcome.column >= 1
            lines = data.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
            line_count = len(lines.split("\n"))
            assert 1 <= outcome.line <= line_count
        return
    assert outcome.format == "openai-chat"
    _replay(outcome)  # a response or a FixtureProviderError, nothing else


# -- generated recordings agree with the SDK's accumulator ---------------------------------------


def _split(draw: st.DrawFn, text: str, *, least: int = 1) -> list[str]:
    """``text`` cut at random places into at least ``least`` pieces (empty ones allowed)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), min_size=least - 1, max_size=5)))
    bounds = [0, *cuts, len(text)]
    return [text[start:stop] for start, stop in itertools.pairwise(bounds)]


@st.composite
def chat_recordings(draw: st.DrawFn, *, repeat_ids: bool = False) -> tuple[str, dict[str, Any]]:
    """A successful recording as providers send it, and what it must mean.

    With ``repeat_ids``, later fragments may repeat the call's id and name, as some
    gateways do (the SDK's accumulator would concatenate them: see below).
    """
    response_id = draw(_ids)
    head = {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": 1723024761,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_0ba0d124f1",
    }
    events: list[str] = []

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> None:
        body: dict[str, Any] = {**head, **extra}
        if delta is not None:
            body["choices"] = [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            ]
        events.append(json.dumps(body))

    chunk({"role": "assistant", "content": draw(st.sampled_from(["", None]))})
    texts = draw(st.lists(st.text(_characters, max_size=6), max_size=4))
    for text in texts:
        chunk({"content": text})
    calls = []
    for call_id in draw(st.lists(_ids, unique=True, max_size=3)):
        arguments = draw(st.dictionaries(st.text(_characters, max_size=4), _json, max_size=3))
        separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
        calls.append((call_id, draw(_ids), arguments, json.dumps(arguments, separators=separators)))
    # Each call's fragments: the first names it; later ones may repeat its id and name.
    streams: list[list[dict[str, Any]]] = []
    for index, (call_id, name, _arguments, text) in enumerate(calls):
        pieces = _split(draw, text)
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": pieces[0]},
        }
        later: list[dict[str, Any]] = []
        for piece in pieces[1:]:
            fragment: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if repeat_ids and draw(st.booleans()):
                fragment["id"] = call_id
                fragment["function"]["name"] = name
            later.append(fragment)
        streams.append([first, *later])
    # Calls appear in index order (the SDK assumes it); later fragments interleave.
    pending = [list(fragments) for fragments in streams]
    ordered: list[dict[str, Any]] = []
    started = 0
    while any(pending):
        choices = [i for i, rest in enumerate(pending) if rest and i < started] + (
            [started] if started < len(pending) else []
        )
        pick = draw(st.sampled_from(choices))
        ordered.append(pending[pick].pop(0))
        if pick == started:
            started += 1
    while ordered:
        take = draw(st.integers(1, min(3, len(ordered))))
        chunk({"tool_calls": ordered[:take]})
        del ordered[:take]
    forced = draw(st.booleans())  # tool_choice forced: OpenAI then reports "stop"
    finish = "tool_calls" if calls and not forced else "stop"
    usage = {
        "prompt_tokens": draw(st.integers(0, 10**6)),
        "completion_tokens": draw(st.integers(0, 10**6)),
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    placement = draw(st.sampled_from(["after", "beside", "repeated"]))
    if placement == "beside":
        chunk({}, finish, usage=usage)
    else:
        chunk({}, finish, usage=None)
        if placement == "repeated":
            chunk({"content": ""}, finish, usage=usage)
        else:
            chunk(None, usage=usage, choices=[])
    events.append("[DONE]")
    text = "".join(f"data: {event}\n\n" for event in events)
    meaning = {
        "id": response_id,
        "text": "".join(texts),
        "calls": [(call_id, name, arguments) for call_id, name, arguments, _ in calls],
        "usage": (usage["prompt_tokens"], usage["completion_tokens"]),
    }
    return text, meaning


def _meaning_of(text: str) -> CourseModelResponse:
    response = _replay(import_recording(text))
    assert isinstance(response, CourseModelResponse), response
    return response


@given(chat_recordings(repeat_ids=True))
def test_generated_recordings_import_to_what_they_mean(case: tuple[str, dict[str, Any]]) -> None:
    text, meaning = case
    response = _meaning_of(text)
    texts = [block.text for block in response.message.content if block.type == "text"]
    calls = [
        (block.id, block.name, thaw(block.arguments))
        for block in response.message.content
        if block.type == "toolCall"
    ]
    usage = (response.usage.input_tokens, response.usage.output_tokens)
    assert response.response_id == meaning["id"]
    assert ("".join(texts), calls, usage) == (meaning["text"], meaning["calls"], meaning["usage"])
    assert response.stop_reason == ("toolCall" if calls else "stop")


@given(chat_recordings())
def test_generated_recordings_agree_with_the_sdk_accumulator(
    case: tuple[str, dict[str, Any]],
) -> None:
    # Without repeated ids and names: the SDK's accumulate_delta concatenates every
    # string it sees again, so a repeated id "call_1" would become "call_1call_1".
    text, meaning = case
    response = _meaning_of(text)
    assert response.response_id == meaning["id"]
    texts = [block.text for block in response.message.content if block.type == "text"]
    calls = [
        (block.id, block.name, thaw(block.arguments))
        for block in response.message.content
        if block.type == "toolCall"
    ]
    usage = (response.usage.input_tokens, response.usage.output_tokens)
    assert ("".join(texts), calls, usage) == (meaning["text"], meaning["calls"], meaning["usage"])
    assert response.stop_reason == ("toolCall" if calls else "stop")

    client = openai_client(text.encode())
    with client.chat.completions.stream(model="m", messages=[]) as stream:
        for _event in stream:
            pass
        final = stream.get_final_completion()
    (choice,) = final.choices
    assert final.id == response.response_id
    assert (choice.message.content or "") == "".join(texts)
    sdk_calls = [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in choice.message.tool_calls or []
    ]
    assert sdk_calls == calls
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == usage


# -- only documented outcomes --------------------------------------------------------------------


@given(st.binary(max_size=300), st.sampled_from(["auto", "openai-chat"]))
def test_any_bytes_give_a_recording_or_a_recording_error(data: bytes, format: str) -> None:
    outcome = _import(data, format=format)
    _check_outcome(data.decode("utf-8", "replace"), outcome)


_ODD_VALUES = st.one_of(
    st.sampled_from([None, True, 0, -1, 1.5, "", "x", [], {}, [None], {"a": None}, 2**53, 2**64]),
    st.sampled_from(["stop", "tool_calls", "length", "function_call", "chat.completion"]),
    st.text(_characters, max_size=4),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path inside a JSON value (the root excluded)."""
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*prefix, key))
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*prefix, index))
            out += _paths(item, (*prefix, index))
    return out


@st.composite
def value_mutations(draw: st.DrawFn) -> str:
    """A recording with one or a few values replaced, deleted or added."""
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    events = [line[6:] for line in text.split("\n") if line.startswith("data: ")]
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(events) - 1))
        if events[position] == "[DONE]":
            continue
        body = json.loads(events[position])
        paths = _paths(body)
        if not paths:  # an event an earlier mutation emptied
            continue
        path = draw(st.sampled_from(paths))
        parent = body
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(_ODD_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["error", "usage", "function_call", "refusal", "x"]))] = (
                draw(_ODD_VALUES)
            )
        events[position] = json.dumps(body)
    if draw(st.booleans()):
        events.insert(draw(st.integers(0, len(events))), draw(st.sampled_from(events)))
    return "".join(f"data: {event}\n\n" for event in events)


@given(value_mutations())
def test_value_mutations_give_only_documented_outcomes(data: str) -> None:
    _check_outcome(data, _import(data))
    _check_outcome(data, _import(data, format="openai-chat", usage=(1, 2)))


@st.composite
def text_mutations(draw: st.DrawFn) -> str:
    """A recording cut, spliced or sprinkled with characters."""
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["cut", "delete", "insert", "swap"]))
        if action == "cut":
            text = text[:at]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif action == "insert":
            noise = draw(st.text(st.sampled_from('{}[]",:\n\r 0aé\\'), min_size=1, max_size=4))
            text = text[:at] + noise + text[at:]
        else:
            blocks = text.split("\n\n")
            i, j = draw(st.integers(0, len(blocks) - 1)), draw(st.integers(0, len(blocks) - 1))
            blocks[i], blocks[j] = blocks[j], blocks[i]
            text = "\n\n".join(blocks)
    return text


@given(text_mutations())
def test_text_mutations_give_only_documented_outcomes(data: str) -> None:
    _check_outcome(data, _import(data))
    _check_outcome(data, _import(data.encode(), format="openai-chat"))


# -- layout does not matter ----------------------------------------------------------------------


@st.composite
def relayouts(draw: st.DrawFn, text: str) -> str:
    """The same events: any line ending per line, comments, data over several lines."""
    out: list[str] = []
    for block in text.split("\n\n"):
        if not block:
            continue
        if draw(st.booleans()):
            out.append(": " + draw(st.text(st.sampled_from("ab :"), max_size=5)))
            out.append("")
        if not block.startswith("data: "):  # a comment of the recording
            out += [block, ""]
            continue
        data = block.removeprefix("data: ")
        lines = [data]
        if data != "[DONE]" and draw(st.booleans()):
            lines = json.dumps(json.loads(data), indent=draw(st.integers(0, 2))).split("\n")
        space = draw(st.sampled_from(["data: ", "data:"]))
        out += [space + line for line in lines]
        out.append("")
    text = ""
    for line in out:
        ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
        if not line and text.endswith("\r") and ending == "\n":
            ending = "\r"  # "\r" then "\n" would be one CRLF: the blank line would vanish
        text += line + ending
    return text


@settings(max_examples=60)
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_line_endings_comments_and_split_data_give_the_same_fixture(
    name: str, data: st.DataObject
) -> None:
    original = _import(TEXTS[name], format="openai-chat", usage=(1, 1))
    relaid = data.draw(relayouts(TEXTS[name]))
    again = _import(relaid, format="openai-chat", usage=(1, 1))
    assert isinstance(original, Recording) and isinstance(again, Recording)
    assert thaw(again.response) == thaw(original.response)
    assert (again.truncated, dict(again.ignored)) == (original.truncated, dict(original.ignored))


@settings(max_examples=50)
@given(value_mutations(), st.data())
def test_a_refusal_is_the_same_whatever_the_layout(mutated: str, data: st.DataObject) -> None:
    original = _import(mutated)
    again = _import(data.draw(relayouts(mutated)))
    if isinstance(original, Recording):
        assert isinstance(again, Recording)
        assert thaw(again.response) == thaw(original.response)
    else:
        assert isinstance(again, RecordingError)
        assert (again.code, again.event_index) == (original.code, original.event_index)


def test_the_recordings_folder_is_not_empty() -> None:
    assert len(FILES) >= 10
    assert all(isinstance(path, Path) for path in FILES)

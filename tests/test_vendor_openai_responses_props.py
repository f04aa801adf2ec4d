"""Property tests at the ``openai-responses`` import boundary.

Whatever is thrown at ``import_recording``, only a ``Recording`` or a located
``RecordingError`` comes out: random bytes, and (mostly) the hand-written recordings of
this format, mutated event by event: events dropped, repeated, swapped, cut, their JSON
values replaced or removed, their names changed. And the same events give the same
fixture however the SSE is written: any line endings, compact or spread over many
``data`` lines with padding.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any, Final

from hypothesis import given, settings
from hypothesis import strategies as st

from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from course.vendors._sse import read_events

from .vendor_helpers import RECORDINGS

FORMAT: Final = "openai-responses"
SOURCES: Final = {
    path.name: path.read_text(encoding="utf-8")
    for path in sorted((RECORDINGS / FORMAT).glob("*.sse"))
}


def _events(text: str) -> list[tuple[str, Any]]:
    """Each event of a recording: its name and its data (parsed, or ``[DONE]`` as is)."""
    out: list[tuple[str, Any]] = []
    for event in read_events(text):
        out.append((event.name, event.data if event.data == "[DONE]" else json.loads(event.data)))
    return out


EVENTS: Final = {name: _events(text) for name, text in SOURCES.items()}


def _write(events: list[tuple[str, Any]]) -> str:
    parts = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        parts.append(f"{head}data: {body}\n\n")
    return "".join(parts)


def check(data: str | bytes, **options: Any) -> Recording | RecordingError:
    """Import ``data``: only a recording or a well-formed, located error may come out."""
    try:
        return import_recording(data, **options)
    except RecordingError as error:
        assert isinstance(error.code, RecordingErrorCode)
        assert isinstance(error.message, str) and error.message
        located = (error.event_index, error.line, error.column)
        if error.code is RecordingErrorCode.RECORDING_UNREADABLE:
            assert located == (None, None, None)
        else:
            assert all(type(value) is int and value >= 0 for value in located), located
            text = data if isinstance(data, str) else data.decode("utf-8-sig")
            lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            assert error.line is not None and error.column is not None
            assert 1 <= error.line <= len(lines)
            assert 1 <= error.column <= len(lines[error.line - 1]) + 1
        str(error)
        repr(error)
        return error


# -- any input -------------------------------------------------------------------------------

_ODD: Final = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.sampled_from(["", "response.created", "function_call", "custom_tool_call", "message"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@given(st.binary(max_size=300))
def test_any_bytes_give_a_recording_or_an_error(data: bytes) -> None:
    check(data)
    check(data, format=FORMAT)


@given(st.text(st.sampled_from('\n\r:{}[]",0 adtevnDONE'), max_size=200))
def test_any_sse_like_text_gives_a_recording_or_an_error(text: str) -> None:
    check(text, format=FORMAT)


# -- mutated recordings ------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return found
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


def _parent(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        root = root[key]
    return root


@st.composite
def mutated(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(EVENTS)))
    events = copy.deepcopy(EVENTS[name])
    for _ in range(draw(st.integers(1, 3))):
        if not events:
            break
        index = draw(st.integers(0, len(events) - 1))
        kind = draw(
            st.sampled_from(
                ["drop", "repeat", "swap", "cut", "replace", "remove", "rename", "splice"]
            )
        )
        _, data = events[index]
        if kind == "drop":
            del events[index]
        elif kind == "repeat":
            events.insert(index, copy.deepcopy(events[index]))
        elif kind == "swap":
            other = draw(st.integers(0, len(events) - 1))
            events[index], events[other] = events[other], events[index]
        elif kind == "cut":
            del events[index:]
        elif kind == "rename":
            events[index] = (draw(st.sampled_from(["", "error", "response.done", "x"])), data)
        elif kind == "splice":
            donor = EVENTS[draw(st.sampled_from(sorted(EVENTS)))]
            events.insert(index, copy.deepcopy(draw(st.sampled_from(donor))))
        elif isinstance(data, dict) and (paths := _paths(data)):
            path = draw(st.sampled_from(paths))
            parent = _parent(data, path)
            if kind == "replace":
                parent[path[-1]] = draw(_ODD)
            elif isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
    text = _write(events)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=300)
@given(mutated(), st.sampled_from(["auto", FORMAT]), st.sampled_from([None, (3, 4)]))
def test_mutated_recordings_give_a_recording_or_a_located_error(
    text: str, format: str, usage: tuple[int, int] | None
) -> None:
    check(text, format=format, usage=usage)


# -- the same events, written differently ------------------------------------------------------


def rewritten(events: list[tuple[str, Any]], rng: random.Random) -> str:
    """The events with their JSON compact or spread over padded ``data`` lines, and any
    mix of line endings (never a CR followed by the LF of a blank line, which would be one
    line break, not two). Choices come from ``rng``: a recording has hundreds of lines."""
    lines: list[str] = []
    for name, data in events:
        if name and rng.random() < 0.5:
            lines.append(f"event: {name}")
        if isinstance(data, str):
            body = [data]
        else:
            indent = rng.choice([None, 0, 1, 3])
            body = json.dumps(data, indent=indent, separators=(",", " : ")).split("\n")
        lines.extend(f"data:{rng.choice(['', ' '])}{line}" for line in body)
        lines.append("")
    parts: list[str] = []
    previous = ""
    for line in lines:
        ending = rng.choice(["\r\n", "\r"] if previous == "\r" and not line else _ENDINGS)
        parts.append(line + ending)
        previous = ending
    return "".join(parts)


_ENDINGS: Final = ["\n", "\r\n", "\r"]


@settings(max_examples=60)
@given(st.data())
def test_any_line_endings_and_data_lines_give_the_same_fixture(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(EVENTS)))
    events = EVENTS[name]
    expected = check(SOURCES[name], format=FORMAT, usage=(1, 2))
    rng = data.draw(st.randoms(use_true_random=False))
    again = check(rewritten(events, rng), format=FORMAT, usage=(1, 2))
    if isinstance(expected, RecordingError):
        assert isinstance(again, RecordingError)
        assert (again.code, again.event_index) == (expected.code, expected.event_index)
    else:
        assert again == expected

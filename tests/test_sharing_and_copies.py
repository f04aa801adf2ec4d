"""Shared sub-objects, copies and renderings of emitted values.

Sharing is preserved (each distinct container is copied once), so a small fixture can
describe a graph whose tree would be astronomically large. These tests prove the
adapter never expands such a graph: not when checking depth, not in ``repr``, not when
values are copied or pickled.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from course import (
    AbortSignal,
    CourseAssistantMessage,
    CourseModelRequest,
    CourseModelResponse,
    CourseTextBlock,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    load_fixture,
    thaw,
)
from course._json import MAX_DEPTH

from .helpers import collect, end, fixture, run, start, tool

Code = FixtureProviderErrorCode


def tool_response(arguments: object) -> CourseModelResponse:
    data = fixture([start(), tool(arguments=arguments), end(stop_reason="tool_call")])
    data["responses"][0]["records"][1]["arguments"] = arguments  # type: ignore[index]
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.response is not None, outcome.error
    return outcome.response


def doubling_graph(levels: int) -> dict[str, object]:
    """A graph of ``levels`` objects whose tree has 2**levels leaves."""
    node: dict[str, object] = {"leaf": 1}
    for _ in range(levels):
        node = {"a": node, "b": node}
    return node


def tower(height: int, top: object) -> list[object]:
    """``height`` nested lists around ``top``."""
    value: object = top
    for _ in range(height):
        value = [value]
    return value  # type: ignore[return-value]


def test_a_shared_sub_object_counts_toward_the_nesting_limit() -> None:
    # Each piece is shallow, but shared pieces stacked on one another are not.
    piece: object = "leaf"
    pieces = []
    for _ in range(4):
        piece = tower(100, piece)
        pieces.append(piece)
    data = fixture([start(), tool(), end(stop_reason="tool_call")])
    data["responses"][0]["records"][1]["arguments"] = {  # type: ignore[index]
        f"k{i}": p for i, p in enumerate(pieces)
    }
    with pytest.raises(FixtureProviderError) as caught:
        FixtureProviderAdapter(data)
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE
    assert caught.value.response_index == 0
    assert caught.value.record_index == 1
    assert "deeper than the limit" in caught.value.message


def test_a_shared_sub_object_that_fits_is_reused_not_copied_again() -> None:
    shared = tower(MAX_DEPTH - 8, "leaf")  # fits under the record's arguments once
    response = tool_response({"x": shared, "y": shared})
    arguments = response.message.content[0].arguments  # type: ignore[union-attr]
    assert arguments["x"] is arguments["y"]


def test_repr_of_a_shared_graph_is_short() -> None:
    response = tool_response(doubling_graph(60))
    assert len(repr(response)) < 2_000
    text = repr(response.message.content[0])
    assert len(text) < 2_000
    assert text.startswith("CourseToolCallBlock(id='call-1', name='add', arguments={")
    assert "..." in text


def test_repr_of_small_arguments_is_complete() -> None:
    response = tool_response({"left": 20, "right": 22})
    block = response.message.content[0]
    assert repr(block) == (
        "CourseToolCallBlock(id='call-1', name='add', arguments={'left': 20, 'right': 22}, "
        "type='toolCall')"
    )


def test_deepcopy_of_a_response_with_tool_calls_is_equal_and_shares_immutables() -> None:
    response = tool_response(doubling_graph(50))
    duplicate = copy.deepcopy(response)
    assert duplicate == response
    assert duplicate.message.content[0] is response.message.content[0]
    assert copy.copy(response.message.content[0]) is response.message.content[0]


def test_pickle_round_trip_keeps_values_read_only_and_shared() -> None:
    response = tool_response({"x": {"n": [1, 2]}, "y": None})
    again = pickle.loads(pickle.dumps(response))
    assert again == response
    block = again.message.content[0]
    assert isinstance(block, CourseToolCallBlock)
    with pytest.raises(TypeError):
        block.arguments["x"] = 1  # type: ignore[index]
    chunk = CourseToolCallChunk("c", "n", block.arguments, 0)
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    shared = tool_response({"a": (s := {"k": [1]}), "b": s})
    arguments = pickle.loads(pickle.dumps(shared)).message.content[0].arguments
    assert arguments["a"] is arguments["b"]
    assert thaw(arguments) == {"a": {"k": [1]}, "b": {"k": [1]}}


def test_a_request_whose_id_cannot_be_read_is_a_type_error_counting_no_call() -> None:
    class Broken:
        @property
        def id(self) -> str:
            raise ZeroDivisionError

    adapter = FixtureProviderAdapter(fixture([start(), end()]))
    with pytest.raises(TypeError):
        adapter.stream(Broken())  # type: ignore[arg-type]
    assert adapter.call_count == 0
    assert adapter.pending == 1


def test_a_transport_error_message_appears_verbatim() -> None:
    message = 'up\\stream\nsaid "no"'
    data = fixture([start(), {"type": "transport_error", "message": message}])
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_TRANSPORT_ERROR
    assert message in outcome.error.message


def test_a_root_level_error_says_where_in_words() -> None:
    with pytest.raises(FixtureProviderError) as caught:
        FixtureProviderAdapter({"schemaVersion": 1})
    assert caught.value.path == ""
    assert str(caught.value).endswith("(at the fixture root)")


def test_a_loading_error_inside_a_record_names_its_response_and_record(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(
        '{"schemaVersion": 1, "responses": [{"records": [\n'
        '  {"type": "text_delta", "text": "a", "text": "b"}]}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(FixtureProviderError) as caught:
        load_fixture(path)
    error = caught.value
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert (error.response_index, error.record_index) == (0, 0)
    assert error.path == "/responses/0/records/0/text"
    assert f"{path}:2:39:" in str(error)


def test_a_hand_built_tool_chunk_freezes_plain_arguments() -> None:
    arguments: dict[str, object] = {"x": [1, {"y": 2}]}
    chunk = CourseToolCallChunk("c", "n", arguments, 0)  # type: ignore[arg-type]
    arguments["x"] = "changed"
    assert thaw(chunk.arguments) == {"x": [1, {"y": 2}]}
    with pytest.raises(TypeError):
        chunk.arguments["x"] = 1  # type: ignore[index]
    block = CourseToolCallBlock("c", "n", {"k": [1]})  # type: ignore[dict-item]
    assert block.arguments["k"] == (1,)


def test_thaw_of_arguments_is_typed_as_a_dict() -> None:
    response = tool_response({"left": 20, "right": 22})
    block = response.message.content[0]
    assert isinstance(block, CourseToolCallBlock)
    plain = thaw(block.arguments)
    plain["sum"] = 42  # mypy --strict accepts this: thaw(mapping) -> dict
    assert plain == {"left": 20, "right": 22, "sum": 42}


def test_an_invalid_terminal_message_stays_short_for_a_shared_type_value() -> None:
    node: list[object] = ["x"]
    for _ in range(60):
        node = [node, node]
    extra = {"type": node}
    data = fixture([start(), end(), extra])
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_INVALID_TERMINAL
    assert len(outcome.error.message) < 300


def test_a_path_with_a_nul_byte_is_an_invalid_fixture() -> None:
    with pytest.raises(FixtureProviderError) as caught:
        load_fixture("bad\0name.json")
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE


def test_a_large_record_object_is_judged_like_a_small_one() -> None:
    big = {"type": "text_delta", "text": "a", **{f"extra{i}": i for i in range(40)}}
    data = fixture([start(), big, end()])
    data["responses"][0]["records"].extend([big] * 50)  # type: ignore[index]
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_MALFORMED_EVENT
    assert outcome.error.path == "/responses/0/records/1/extra0"


def test_records_in_an_unusual_key_order_parse_the_same() -> None:
    records = [
        {"role": "assistant", "responseId": "r-1", "type": "response_start"},
        {"text": "a", "type": "text_delta"},
        {"arguments": {"x": 1}, "name": "n", "id": "c", "type": "tool_call"},
        {
            "usage": {"output_tokens": 2, "inputTokens": 1},
            "stopReason": "tool_call",
            "responseId": "r-1",
            "type": "response_end",
        },
    ]
    outcome = run(collect(FixtureProviderAdapter(fixture(records)).stream(CourseModelRequest("q"))))
    assert outcome.response is not None, outcome.error
    assert [chunk.type for chunk in outcome.chunks] == ["textDelta", "toolCall"]
    assert outcome.response.usage.input_tokens == 1


def test_an_array_record_is_malformed_as_an_array() -> None:
    outcome = run(
        collect(
            FixtureProviderAdapter(fixture([start(), ["text_delta", ["type", "text"]]])).stream(
                CourseModelRequest("q")
            )
        )
    )
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_MALFORMED_EVENT
    assert "array" in outcome.error.message


def test_hand_built_values_are_immutable_all_the_way_down() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(5_000):
        node["n"] = {}
        node = node["n"]  # type: ignore[assignment]
    block = CourseToolCallBlock("c", "n", deep)  # type: ignore[arg-type]
    assert type(block.arguments).__name__ == "JsonObject"
    message = CourseAssistantMessage("m", [CourseTextBlock("x")])  # type: ignore[arg-type]
    assert message.content == (CourseTextBlock("x"),)
    request = CourseModelRequest("r", messages=[message])  # type: ignore[arg-type]
    assert request.messages == (message,)
    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    with pytest.raises(TypeError):
        CourseToolCallChunk("c", "n", cyclic, 0)  # type: ignore[arg-type]


def test_an_object_claiming_to_be_a_signal_is_a_type_error() -> None:
    class Impostor:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return AbortSignal

    adapter = FixtureProviderAdapter(fixture([start(), end()]))
    with pytest.raises(TypeError):
        adapter.stream(CourseModelRequest("q"), Impostor())  # type: ignore[arg-type]
    assert adapter.call_count == 0

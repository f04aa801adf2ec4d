"""VCR cassettes as users have them: one response per model call, whatever the call.

Cassettes are written as vcrpy writes them (``yaml.dump`` of its dict: double- or
single-quoted bodies, ``!!binary`` for bytes), as pydantic-ai writes them (literal blocks,
``parsed_body``, the typed ``body: {type, content}``), and by hand where a case needs a
precise layout. Every refusal is asserted with its code and its line and column in the
cassette, where an editor must land.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any, Final, cast

import pytest
import yaml

from course import FixtureProviderAdapter, thaw
from course.vendors import (
    RecordingError,
    RecordingErrorCode,
    _cassette,
    _importing,
    load_recordings,
)
from course.vendors._importing import MAX_CASSETTE_RECORDS, read_file

Code = RecordingErrorCode

CHAT: Final = "https://api.openai.com/v1/chat/completions"
RESPONSES: Final = "https://api.openai.com/v1/responses"
MESSAGES: Final = "https://api.anthropic.com/v1/messages"
AZURE: Final = "https://x.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=1"
WEATHER: Final = "https://tools.example.com/v1/weather"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return "data: " + json.dumps(body, separators=(",", ":")) + "\n\n"


USAGE: Final = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
STREAM: Final = (
    chunk({"role": "assistant", "content": ""})
    + chunk({"content": "Hello"})
    + chunk({}, "stop", usage=USAGE)
    + "data: [DONE]\n\n"
)
COMPLETION: Final = {
    "id": "chatcmpl-2",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a":1}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": USAGE,
}


def interaction(
    uri: str = CHAT,
    body: object = STREAM,
    *,
    status: object = None,
    method: str = "POST",
    headers: dict[str, list[str]] | None = None,
    key: str = "body",
) -> dict[str, Any]:
    """One interaction as vcrpy records it; ``key`` ``parsed_body`` writes pydantic-ai's."""
    response: dict[str, Any] = {
        "status": {"code": 200, "message": "OK"} if status is None else status,
        "headers": headers or {},
    }
    response[key] = {"string": body} if key == "body" else body
    return {"request": {"method": method, "uri": uri, "body": None}, "response": response}


def write(tmp_path: Path, *interactions: dict[str, Any], name: str = "calls.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.dump({"interactions": list(interactions), "version": 1}))
    return path


def responses(path: Path, **options: Any) -> list[dict[str, Any]]:
    return load_recordings(path, **options)["responses"]  # type: ignore[return-value]


def kinds(response: dict[str, Any]) -> list[str]:
    return [record["type"] for record in response["records"]]


def refused(path: Path, **options: Any) -> RecordingError:
    with pytest.raises(RecordingError) as caught:
        load_recordings(path, **options)
    return caught.value


def position(text: str, needle: str) -> tuple[int, int]:
    """Where ``needle``'s ``|`` is in ``text`` (the needle occurs once)."""
    before, _, after = needle.partition("|")
    assert text.count(before + after) == 1, needle
    offset = text.index(before + after) + len(before)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


# -- which interactions are model calls ----------------------------------------------------


def test_streamed_and_whole_calls_keep_their_order_and_other_calls_are_skipped(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        interaction(CHAT, STREAM),
        interaction("https://api.openai.com/v1/models", '{"object": "list"}', method="GET"),
        interaction(CHAT, json.dumps(COMPLETION)),
        interaction(WEATHER, '{"temperature": 21}'),
        interaction(CHAT, STREAM.replace("chatcmpl-1", "chatcmpl-3")),
    )
    loaded = read_file(str(path), "auto", None, 2)
    assert [where for where, _ in loaded.recordings] == [
        "interaction 0",
        "interaction 2",
        "interaction 4",
    ]
    assert loaded.skipped == 2
    ids = [cast(Any, thaw(r.response))["records"][0]["responseId"] for _, r in loaded.recordings]
    assert ids == ["chatcmpl-1", "chatcmpl-2", "chatcmpl-3"]


def test_a_model_route_behind_a_prefix_is_a_model_route(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(AZURE, json.dumps(COMPLETION)))
    assert kinds(responses(path)[0]) == ["response_start", "tool_call", "response_end"]


def test_a_post_answered_as_a_model_answers_is_a_model_call_whatever_its_path(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, interaction("https://gateway.example.com/llm", STREAM))
    assert kinds(responses(path)[0])[0] == "response_start"


def test_an_event_stream_of_another_service_is_skipped(tmp_path: Path) -> None:
    mcp = 'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'
    path = write(tmp_path, interaction("https://mcp.example.com/mcp", mcp), interaction())
    assert read_file(str(path), "auto", None, 2).skipped == 1


def test_binary_answers_of_other_services_are_skipped(tmp_path: Path) -> None:
    audio = interaction("https://api.openai.com/v1/audio/speech", b"\xff\xfb\x90\x00")
    redirect = interaction(CHAT, "", status={"code": 307, "message": "Temporary Redirect"})
    path = write(tmp_path, audio, redirect, interaction())
    loaded = read_file(str(path), "auto", None, 2)
    assert (len(loaded.recordings), loaded.skipped) == (1, 2)


def test_a_model_route_s_answer_that_is_no_model_answer_is_refused_not_skipped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "odd.yaml"
    text = (
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    status: {code: 200}\n"
        '    body: {string: \'{"object": "list", "data": []}\'}\n'
    )
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        *position(text, '\'|{"object"'),
    )
    assert error.message.startswith("interaction 0: ")


def test_a_cassette_without_a_model_call_is_unreadable(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(WEATHER, "{}"), interaction(CHAT, "{}", method="GET"))
    error = refused(path)
    assert (error.code, error.line) == (Code.RECORDING_UNREADABLE, None)
    assert "no model call" in error.message


# -- HTTP error answers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "body", "record"),
    [
        (
            CHAT,
            {"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}},
            {"message": "Slow down", "code": "rate_limit_exceeded"},
        ),
        (
            RESPONSES,
            {"error": {"message": "Bad", "type": "invalid_request_error", "code": None}},
            {"message": "Bad", "code": "invalid_request_error"},
        ),
        (
            MESSAGES,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            {"message": "Overloaded", "code": "overloaded_error"},
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
            {"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}},
            {"message": "Quota", "code": "RESOURCE_EXHAUSTED"},
        ),
        (CHAT, {"detail": "Not found"}, {"message": '{"detail": "Not found"}'}),
    ],
    ids=["openai-code", "openai-type", "anthropic", "google", "no-provider-shape"],
)
def test_an_http_error_answer_is_one_transport_error_in_the_provider_s_words(
    tmp_path: Path, uri: str, body: object, record: dict[str, object]
) -> None:
    path = write(tmp_path, interaction(uri, json.dumps(body), status={"code": 429}))
    assert responses(path) == [{"records": [{"type": "transport_error", **record, "status": 429}]}]
    # Version 1 has no status.
    version_1 = responses(path, schema_version=1)
    assert version_1 == [{"records": [{"type": "transport_error", **record}]}]


def test_an_error_body_that_is_no_json_is_the_message_shortened(tmp_path: Path) -> None:
    page = "<html>" + "Bad gateway " * 100 + "</html>"
    path = write(tmp_path, interaction(CHAT, page, status={"code": 502}))
    ((record,),) = [response["records"] for response in responses(path)]
    assert record == {"type": "transport_error", "message": page[:497] + "...", "status": 502}
    assert len(record["message"]) == 500


def test_an_error_body_is_read_in_the_named_format_s_shape(tmp_path: Path) -> None:
    openai_shaped = {"error": {"message": "Slow", "type": "requests", "code": "rate_limit"}}
    path = write(tmp_path, interaction(MESSAGES, json.dumps(openai_shaped), status={"code": 429}))
    assert responses(path)[0]["records"][0]["code"] == "rate_limit"  # the shape it has
    (record,) = responses(path, format="openai-chat")[0]["records"]
    assert record["code"] == "rate_limit"
    # Anthropic's shape says `"type": "error"`: this body is not in it.
    (record,) = responses(path, format="anthropic")[0]["records"]
    assert record == {
        "type": "transport_error",
        "message": json.dumps(openai_shaped),
        "status": 429,
    }


def test_an_error_answer_with_no_recorded_uri_is_a_model_call_in_a_provider_s_shape(
    tmp_path: Path,
) -> None:
    provider = json.dumps({"error": {"message": "Overloaded", "code": "overloaded"}})
    cassette = {
        "interactions": [
            {"response": {"status": {"code": 503}, "body": {"string": "<html>busy</html>"}}},
            {"response": {"status": {"code": 503}, "body": {"string": provider}}},
        ]
    }
    path = tmp_path / "bare.yaml"
    path.write_text(yaml.dump(cassette))
    loaded = read_file(str(path), "auto", None, 2)
    assert [where for where, _ in loaded.recordings] == ["interaction 1"]
    assert loaded.skipped == 1


def test_a_typed_binary_body_that_is_not_base64_is_unreadable(tmp_path: Path) -> None:
    text = (
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    status: 200\n"
        "    body: {type: binary, content: 'not base64!'}\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.line, error.column) == (
        Code.RECORDING_UNREADABLE,
        *position(text, "content: |'not"),
    )
    assert "not base64" in error.message


def test_an_error_answer_of_another_service_is_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(WEATHER, "{}", status={"code": 500}), interaction())
    assert read_file(str(path), "auto", None, 2).skipped == 1


# -- bodies: gzip, base64, pydantic-ai's forms ------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{"Content-Encoding": ["gzip"]}, {"content-encoding": ["x-gzip"]}, {}],
    ids=["gzip", "x-gzip", "magic-bytes"],
)
def test_a_gzip_body_is_gunzipped(tmp_path: Path, headers: dict[str, list[str]]) -> None:
    path = write(tmp_path, interaction(CHAT, gzip.compress(STREAM.encode()), headers=headers))
    assert kinds(responses(path)[0]) == ["response_start", "text_delta", "response_end"]


def test_a_cassette_of_compressed_streams_only_imports_them_all(tmp_path: Path) -> None:
    gz = {"Content-Encoding": ["gzip"]}
    path = write(
        tmp_path,
        interaction(CHAT, gzip.compress(STREAM.encode()), headers=gz),
        interaction(CHAT, gzip.compress(json.dumps(COMPLETION).encode()), headers=gz),
    )
    assert len(responses(path)) == 2


def test_a_base64_body_is_decoded(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(CHAT, STREAM.encode()))
    assert "!!binary" in path.read_text()
    assert kinds(responses(path)[0])[1] == "text_delta"


def test_gzip_in_several_members_is_one_body(tmp_path: Path) -> None:
    half = len(STREAM) // 2
    data = gzip.compress(STREAM[:half].encode()) + gzip.compress(STREAM[half:].encode())
    path = write(tmp_path, interaction(CHAT, data, headers={"Content-Encoding": ["gzip"]}))
    assert kinds(responses(path)[0])[-1] == "response_end"


BINARY_CASSETTE: Final = """\
interactions:
- request: {{method: POST, uri: 'https://api.openai.com/v1/chat/completions'}}
  response:
    status: {{code: 200}}
    headers: {{Content-Encoding: [{encoding}]}}
    body:
      string: !!binary |
        {data}
"""


@pytest.mark.parametrize(
    ("encoding", "data", "words"),
    [
        ("br", b"\x1b\x03\x00", "content-encoding is 'br'"),
        ("gzip", gzip.compress(STREAM.encode())[:20], "cut short"),
        ("gzip", STREAM.encode(), "not gzip data"),
        ("identity", b"\xff\xfe", "not UTF-8"),
    ],
    ids=["brotli", "cut-gzip", "not-gzip", "not-utf8"],
)
def test_a_body_that_cannot_be_decoded_is_unreadable_at_the_body(
    tmp_path: Path, encoding: str, data: bytes, words: str
) -> None:
    path = tmp_path / "c.yaml"
    text = BINARY_CASSETTE.format(encoding=encoding, data=base64.b64encode(data).decode())
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.line, error.column) == (
        Code.RECORDING_UNREADABLE,
        *position(text, "string: |!!binary"),
    )
    assert words in error.message
    assert error.message.startswith("interaction 0: ")


def test_a_parsed_body_is_a_whole_json_answer(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(CHAT, COMPLETION, key="parsed_body"))
    assert kinds(responses(path)[0]) == ["response_start", "tool_call", "response_end"]


@pytest.mark.parametrize(
    ("kind", "content", "expected"),
    [
        ("text", STREAM, ["response_start", "text_delta", "response_end"]),
        ("json", COMPLETION, ["response_start", "tool_call", "response_end"]),
        (
            "binary",
            base64.b64encode(STREAM.encode()).decode(),
            ["response_start", "text_delta", "response_end"],
        ),
    ],
)
def test_a_typed_body_is_read(
    tmp_path: Path, kind: str, content: object, expected: list[str]
) -> None:
    # pydantic-ai's cassettes now write `body: {type: ..., content: ...}` and `status: 200`.
    cassette = {
        "interactions": [
            {
                "request": {"method": "POST", "uri": CHAT, "body": {"type": "none"}},
                "response": {
                    "status": 200,
                    "headers": {},
                    "body": {"type": kind, "content": content},
                },
            }
        ]
    }
    path = tmp_path / "typed.yaml"
    path.write_text(yaml.dump(cassette))
    assert kinds(responses(path)[0]) == expected


def test_a_typed_body_of_type_none_on_a_model_route_has_no_event(tmp_path: Path) -> None:
    cassette = {
        "interactions": [
            {
                "request": {"method": "POST", "uri": CHAT},
                "response": {"status": 200, "body": {"type": "none"}},
            }
        ]
    }
    path = tmp_path / "none.yaml"
    path.write_text(yaml.dump(cassette))
    assert refused(path).code is Code.RECORDING_UNREADABLE


# -- positions in the cassette ---------------------------------------------------------------

BROKEN_STREAM: Final = STREAM.replace('"Hello"', '"Hello\\u00e9", "x": NaN')


@pytest.mark.parametrize("style", ['"', "'", "|"], ids=["double", "single", "literal"])
def test_a_refusal_in_a_body_points_into_the_cassette(tmp_path: Path, style: str) -> None:
    cassette = {"interactions": [interaction(CHAT, BROKEN_STREAM)]}
    text = yaml.dump(cassette, default_style=style, width=60)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.event_index) == (Code.RECORDING_INVALID_JSON, 1)
    assert error.line is not None and error.column is not None
    # Exactly at the NaN, whatever the scalar's style made of the line.
    row = text.splitlines()[error.line - 1]
    assert row[error.column - 1 : error.column + 2] == "NaN", (style, row)
    assert "of the decoded response body" not in error.message


def test_a_refusal_in_a_literal_block_body_is_exact(tmp_path: Path) -> None:
    text = (
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    status: {code: 200}\n"
        "    body:\n"
        "      string: |+\n"
        + "".join("        " + line + "\n" for line in BROKEN_STREAM.splitlines())
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        1,
        *position(text, '"x": |NaN'),
    )


def test_a_refusal_in_an_encoded_body_points_at_the_body_and_says_where_in_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.yaml"
    data = base64.b64encode(gzip.compress(BROKEN_STREAM.encode())).decode()
    text = BINARY_CASSETTE.format(encoding="gzip", data=data)
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        1,
        *position(text, "string: |!!binary"),
    )
    column = BROKEN_STREAM.splitlines()[2].index("NaN") + 1
    assert error.message.endswith(f"(at line 3, column {column} of the decoded response body)")


def test_a_refusal_in_a_parsed_body_points_at_the_yaml_value(tmp_path: Path) -> None:
    body = json.loads(json.dumps(COMPLETION))
    body["choices"][0]["message"]["tool_calls"][0]["id"] = ""
    path = write(tmp_path, interaction(CHAT, body, key="parsed_body"))
    text = path.read_text()
    error = refused(path)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_MALFORMED_EVENT,
        0,
        *position(text, "id: |''"),
    )


@pytest.mark.parametrize(
    ("value", "needle", "words"),
    [
        ("2024-01-01", "created: |2024-01-01", "YAML timestamp"),
        ("{1: a}", "created: {|1: a}", "not a string"),
        ("{a: 1, a: 2}", "created: {a: 1, |a: 2}", "repeats the key"),
        (".nan", "created: |.nan", "YAML float"),
    ],
)
def test_yaml_data_json_has_no_place_for_is_invalid_json_at_it(
    tmp_path: Path, value: str, needle: str, words: str
) -> None:
    text = (
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    status: {code: 200}\n"
        "    parsed_body:\n"
        "      object: chat.completion\n"
        f"      created: {value}\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    error = refused(path)
    assert (error.code, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        *position(text, needle),
    )
    assert words in error.message


def test_a_file_that_is_not_yaml_is_unreadable_where_yaml_stops(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("interactions:\n- request: {method: POST\n")
    error = refused(path)
    assert (error.code, error.line, error.column) == (Code.RECORDING_UNREADABLE, 3, 1)


def test_an_interaction_that_is_no_mapping_is_unreadable_at_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("interactions:\n- just text\n")
    error = refused(path)
    assert (error.code, error.line, error.column) == (Code.RECORDING_UNREADABLE, 2, 3)
    assert error.message.startswith("interaction 0: ")


# -- YAML aliases: a repeated body is imported once --------------------------------------------


def aliased(body: str, repeats: int) -> str:
    return (
        "interactions:\n- &call\n"
        f"  request: {{method: POST, uri: '{CHAT}'}}\n"
        f"  response:\n    status: {{code: 200}}\n    body: {{string: {json.dumps(body)}}}\n"
        + "- *call\n"
        * repeats
    )


def stream_of(records: int) -> str:
    """A chat stream that imports to ``records`` records (a start, texts, an end)."""
    return (
        chunk({"role": "assistant", "content": ""})
        + "".join(chunk({"content": "x"}) for _ in range(records - 2))
        + chunk({}, "stop", usage=USAGE)
        + "data: [DONE]\n\n"
    )


def test_a_body_aliases_repeat_is_imported_once_and_its_response_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported: list[str] = []
    original = _importing._import_answer_text

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        imported.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(_importing, "_import_answer_text", counting)
    path = tmp_path / "aliases.yaml"
    path.write_text(aliased(STREAM, 99))
    fixture = load_recordings(path)
    found = fixture["responses"]
    assert isinstance(found, list) and len(found) == 100
    assert len(imported) == 1
    assert all(response is found[0] for response in found)
    FixtureProviderAdapter(fixture)  # the shared response is a valid fixture's


def test_a_cassette_may_hold_a_million_records_counting_repetitions(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(aliased(stream_of(1000), MAX_CASSETTE_RECORDS // 1000 - 1))
    assert len(load_recordings(path)["responses"]) == 1000  # type: ignore[arg-type]


def test_a_cassette_past_a_million_records_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    text = aliased(stream_of(1000), MAX_CASSETTE_RECORDS // 1000)
    path.write_text(text)
    error = refused(path)
    assert error.code is Code.RECORDING_UNREADABLE
    assert error.message.startswith("interaction 1000: ")
    assert "more than 1,000,000 records" in error.message
    assert (error.line, error.column) == position(text, "body: {string: |")


def test_yaml_data_an_alias_bomb_repeats_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cassette, "MAX_BODY_VALUES", 10_000)  # the walk, not the limit, costs
    levels = "".join(f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]\n" for n in range(1, 8))
    text = (
        "bomb:\n  l0: &l0 [x]\n" + levels + "interactions:\n"
        f"- request: {{method: POST, uri: '{CHAT}'}}\n"
        "  response:\n    status: {code: 200}\n    parsed_body: {object: chat.completion, b: *l7}\n"
    )
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    error = refused(path)
    assert error.code is Code.RECORDING_UNREADABLE
    assert "10,000 values" in error.message


def test_a_response_aliases_repeat_is_read_once_however_large_its_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[object] = []
    original = _cassette._headers

    def counting(cassette: Any, node: Any) -> Any:
        read.append(node)
        return original(cassette, node)

    monkeypatch.setattr(_cassette, "_headers", counting)
    headers = "{" + ", ".join(f"h{n}: [v]" for n in range(2000)) + "}"
    text = (
        "interactions:\n"
        f"- request: {{method: POST, uri: '{CHAT}'}}\n"
        f"  response: &r\n    status: {{code: 200}}\n    headers: {headers}\n"
        f"    body: {{string: {json.dumps(STREAM)}}}\n"
        + f"- {{request: {{method: POST, uri: '{CHAT}'}}, response: *r}}\n"
        * 500
    )
    path = tmp_path / "headers.yaml"
    path.write_text(text)
    assert len(responses(path)) == 501
    assert len(read) == 1


# -- version 2: an error answer's status and retry delay ------------------------------------

RATE_LIMITED: Final = json.dumps(
    {"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}}
)


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        ({"retry-after-ms": ["1500"], "retry-after": ["2"]}, 1.5),  # the exact one first
        ({"retry-after-ms": ["2000"]}, 2),
        ({"Retry-After": ["30"]}, 30),
        ({"retry-after": ["0.25"]}, 0.25),
        ({"retry-after": ["0"]}, 0),
        ({"retry-after": ["86400"]}, 86400),
        ({"retry-after-ms": ["soon"], "retry-after": ["7"]}, 7),
        ({"retry-after": ["Wed, 21 Oct 2015 07:28:00 GMT"]}, None),  # a date: no delay
        ({"retry-after": ["86401"]}, None),  # past what a fixture takes
        ({"retry-after": ["-1"]}, None),
        ({"retry-after": ["9" * 5000]}, None),  # too long to be a delay (or to parse at once)
        ({}, None),
    ],
)
def test_an_error_answer_keeps_its_status_and_retry_delay_in_version_2(
    tmp_path: Path, headers: dict[str, list[str]], retry_after: float | None
) -> None:
    path = write(tmp_path, interaction(CHAT, RATE_LIMITED, status={"code": 429}, headers=headers))
    expected: dict[str, object] = {
        "type": "transport_error",
        "message": "Slow down",
        "code": "rate_limit_exceeded",
        "status": 429,
    }
    if retry_after is not None:
        expected["retryAfter"] = retry_after
    assert responses(path) == [{"records": [expected]}]
    (record,) = responses(path, schema_version=1)[0]["records"]
    assert "status" not in record and "retryAfter" not in record
    # What was imported is what the server answers with.
    fixture = load_recordings(path)
    FixtureProviderAdapter(fixture)


def test_a_status_outside_what_a_fixture_takes_is_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, interaction(CHAT, RATE_LIMITED, status={"code": 600}))
    (record,) = responses(path)[0]["records"]
    assert "status" not in record


def test_aliased_bodies_answered_with_other_statuses_keep_each_its_own(tmp_path: Path) -> None:
    body = json.dumps(RATE_LIMITED)
    text = (
        "interactions:\n"
        f"- request: {{method: POST, uri: '{CHAT}'}}\n"
        f"  response:\n    status: {{code: 429}}\n    body: &b {{string: {body}}}\n"
        "    headers: {retry-after: ['1']}\n"
        f"- request: {{method: POST, uri: '{CHAT}'}}\n"
        "  response:\n    status: {code: 503}\n    body: *b\n"
    )
    path = tmp_path / "statuses.yaml"
    path.write_text(text)
    first, second = (response["records"][0] for response in responses(path))
    assert (first["status"], first["retryAfter"]) == (429, 1)
    assert second["status"] == 503
    assert "retryAfter" not in second

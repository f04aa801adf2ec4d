"""Redaction (``course.vendors._redaction``): what counts as a credential, and that no
credential, nor any part of one 8 characters long or longer, survives in what the
recorder writes. Property tests guard the boundary: secrets planted anywhere in text,
split across argument fragments, at every length around 8."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from course._json import PlainJson
from course.vendors._redaction import MIN_PART, REDACTED, Redactor, credentials

EXAMPLES = 200

ALPHABET = st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP0123456789-_ é✓")
secrets = st.text(ALPHABET, min_size=1, max_size=40)
texts = st.text(ALPHABET, max_size=80)


def parts_of(secret: str) -> set[str]:
    """Every part of ``secret`` that must never survive: the whole, and each 8-long part."""
    if len(secret) < MIN_PART:
        return {secret}
    return {secret[i : i + MIN_PART] for i in range(len(secret) - MIN_PART + 1)}


def survives(text: str, secrets: list[str]) -> list[str]:
    # "[redacted]" itself may spell a short secret ("red"): look only outside the marks.
    outside = text.split(REDACTED)
    return [
        part
        for secret in secrets
        for part in parts_of(secret)
        for piece in outside
        if part in piece
    ]


def test_the_credentials_of_a_request() -> None:
    headers = [
        (b"Authorization", b"Bearer sk-proj-abc123"),
        (b"x-api-key", b" sk-ant-xyz "),
        (b"X-Goog-Api-Key", b"AIzaG00gle"),
        (b"api-key", b"azure-key-1"),
        (b"content-type", b"application/json"),
        (b"x-api-key", b""),
    ]
    assert credentials(headers, b"key=AIzaQuery&alt=sse&key=") == (
        "sk-proj-abc123",
        "sk-ant-xyz",
        "AIzaG00gle",
        "azure-key-1",
        "AIzaQuery",
    )
    assert credentials([(b"authorization", b"sk-no-scheme")], b"") == ("sk-no-scheme",)
    assert credentials([(b"authorization", b"Basic dXNlcjpwYXNz")], b"") == ("dXNlcjpwYXNz",)
    assert credentials([], b"") == ()


@settings(max_examples=EXAMPLES)
@given(
    st.lists(secrets, min_size=1, max_size=3), st.lists(texts, min_size=1, max_size=4), st.data()
)
def test_no_credential_nor_a_long_enough_part_of_one_survives(
    secret_list: list[str], pieces: list[str], data: st.DataObject
) -> None:
    # Plant each secret, or a random part of it, between the pieces of text.
    planted: list[str] = []
    for index, piece in enumerate(pieces):
        secret = secret_list[index % len(secret_list)]
        start = data.draw(st.integers(0, len(secret) - 1))
        end = data.draw(st.integers(start + 1, len(secret)))
        planted += [piece, secret[start:end]]
    text = "".join(planted)
    redacted = Redactor(secret_list).text(text)
    assert survives(redacted, secret_list) == []


@settings(max_examples=EXAMPLES)
@given(st.lists(secrets, min_size=1, max_size=3), texts)
def test_text_with_no_part_of_a_credential_is_unchanged(secret_list: list[str], text: str) -> None:
    redactor = Redactor(secret_list)
    if not redactor.spans(text):
        assert redactor.text(text) == text
    # Text made only of what no secret shares is never touched.
    unrelated = "".join(c for c in text if all(c not in s for s in secret_list))
    assert redactor.text(unrelated) == unrelated


@settings(max_examples=EXAMPLES)
@given(st.lists(secrets, min_size=1, max_size=2), st.lists(texts, min_size=1, max_size=6))
def test_fragments_are_redacted_as_the_text_they_join_into(
    secret_list: list[str], fragments: list[str]
) -> None:
    # Secrets spliced across fragment boundaries too.
    joined_with = [
        f"{fragment}{secret_list[i % len(secret_list)]}" for i, fragment in enumerate(fragments)
    ]
    cut = [piece[: len(piece) // 2] for piece in joined_with] + [
        piece[len(piece) // 2 :] for piece in joined_with
    ]
    redactor = Redactor(secret_list)
    redacted = redactor.fragments(cut)
    assert len(redacted) == len(cut)
    assert "".join(redacted) == redactor.text("".join(cut))


def test_the_exact_marks() -> None:
    redactor = Redactor(["sk-abcdefghijklmnop", "tiny"])
    assert redactor.text("key sk-abcdefghijklmnop!") == "key [redacted]!"
    assert redactor.text("part abcdefgh, short abcdefg") == "part [redacted], short abcdefg"
    assert redactor.text("a tiny tinytiny") == "a [redacted] [redacted]"
    assert redactor.fragments(['{"k": "sk-abc', "defghij", 'klmnop"}']) == [
        '{"k": "[redacted]',
        "",
        '"}',
    ]
    assert not Redactor([])
    assert not Redactor([""])


def test_records_keep_their_vocabulary_and_redact_their_data() -> None:
    secret = "response_end-tool_call-SECRET"
    redactor = Redactor([secret])
    records: list[PlainJson] = [
        {"type": "response_start", "responseId": f"id-{secret}", "role": "assistant"},
        {
            "type": "tool_call",
            "id": "call_1",
            "name": "f",
            "arguments": {secret: [secret, {"nested": secret}]},
            "argumentFragments": [
                json.dumps({secret: [secret, {"nested": secret}]})[:9],
                json.dumps({secret: [secret, {"nested": secret}]})[9:],
            ],
        },
        {"type": "transport_error", "message": f"Bad key {secret[:12]}...", "code": secret},
        {
            "type": "response_end",
            "responseId": f"id-{secret}",
            "stopReason": "tool_call",
            "usage": {"inputTokens": 1, "outputTokens": 2},
        },
    ]
    redacted = redactor.records(records)
    assert redacted[0] == {
        "type": "response_start",
        "responseId": "id-[redacted]",
        "role": "assistant",
    }
    call = redacted[1]
    assert isinstance(call, dict)
    assert call["arguments"] == {"[redacted]": ["[redacted]", {"nested": "[redacted]"}]}
    assert json.loads("".join(call["argumentFragments"])) == call["arguments"]  # type: ignore[arg-type]
    assert redacted[2] == {
        "type": "transport_error",
        "message": "Bad key [redacted]...",
        "code": "[redacted]",
    }
    assert redacted[3] == {**records[3], "responseId": "id-[redacted]"}  # type: ignore[dict-item]
    # The fixture's own words stay (its keys, "response_end", "tool_call"), the data goes.
    assert "SECRET" not in json.dumps(redacted)


def test_fragments_that_would_no_longer_join_into_the_arguments_are_refused() -> None:
    secret = "sk-0123456789abcdef"
    # The secret hidden behind a JSON escape in the fragments: the text has no part of
    # it, its value does.
    record: PlainJson = {
        "type": "tool_call",
        "id": "c",
        "name": "f",
        "arguments": {"k": secret},
        "argumentFragments": ['{"k": "\\u0073k-0123456789abcdef"}'],
    }
    try:
        Redactor([secret]).records([record])
    except ValueError as error:
        assert "cannot be struck out of its argument fragments alike" in str(error)
        assert str(error).startswith("record 0: ")
    else:
        raise AssertionError("redaction accepted fragments that no longer join into the arguments")

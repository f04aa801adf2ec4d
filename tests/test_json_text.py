"""The strict JSON text reader: two readers, one verdict, and positions found lazily.

``loads`` (the C scanner with hooks, then a depth walk) and ``parse_positioned`` (the
iterative parser that knows every value's place) must accept exactly the same texts,
with the same values, whatever is thrown at them: generated JSON in every layout,
mutations of it, hand-made duplicate keys, deep nesting around the limit, and the
tokens ``json.loads`` forgives. ``TextPositions`` must find every value where the
positioned parser saw it, and ``item_spans`` every item of an array, broken or not.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from course._json import MAX_DEPTH, MAX_INT_DIGITS, PlainJson
from course._json_text import (
    JsonSyntaxError,
    TextPositions,
    item_spans,
    line_and_column,
    loads,
    parse_positioned,
)

EXAMPLES = settings().max_examples

# -- texts ------------------------------------------------------------------------------

_KEYS = st.one_of(
    st.sampled_from(["a", "b", "type", "", "a:b", 'q"', "b\\", "\\", ":", "é", "\ud800"]),
    st.text(max_size=4),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.sampled_from([0, -0, 10**MAX_INT_DIGITS - 1, -(10**MAX_INT_DIGITS - 1)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["\ud800", "\udfff\ud800", ":", '"', "\\", "[{", "]}", " : ", "\x00"]),
)
_VALUES: st.SearchStrategy[PlainJson] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=20,
)


@st.composite
def _dumped(draw: st.DrawFn) -> str:
    """A value written as ``json.dumps`` would, in one of several layouts."""
    value = draw(_VALUES)
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : "), (",\n", ":\t")]))
    return json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 2, "\t"])),
        separators=separators,
    )


@st.composite
def _with_duplicates(draw: st.DrawFn) -> str:
    """An object written member by member, keys drawn from a tiny pool (so they repeat),
    some keys spelled with escapes."""
    keys = draw(st.lists(st.sampled_from(["a", "b", "\\u0061", "a\\\\", 'a\\"', ":"]), max_size=5))
    values = [draw(_dumped()) for _ in keys]
    colon = draw(st.sampled_from([":", " :", ": ", "\n:\n"]))
    members = [f'"{key}"{colon}{value}' for key, value in zip(keys, values, strict=True)]
    text = "{" + ",".join(members) + "}"
    return draw(st.sampled_from([text, f"[{text}]", f'{{"x": [1, {text}]}}']))


@st.composite
def _nested(draw: st.DrawFn) -> str:
    """Containers nested around the limit (the tests also vary the limit itself)."""
    depth = draw(st.integers(0, 12) | st.integers(MAX_DEPTH - 2, MAX_DEPTH + 2))
    openers = [draw(st.sampled_from(["[", '{"k":'])) for _ in range(depth)]
    closers = ["]" if opener == "[" else "}" for opener in reversed(openers)]
    middle = draw(st.sampled_from(["1", "[]", "{}", '"s"', ""]))
    return "".join(openers) + middle + "".join(closers)


_TOKENS = [
    ",", "]", "}", "[", "{", ":", '"', "\\", " ", "\n", "NaN", "Infinity", "-Infinity",
    "1e400", "-1e400", "1.5e99999", "1e-400", "9" * (MAX_INT_DIGITS + 1), "-" + "9" * 4300,
    '"\\ud800"', '"\\u0000"', "\x00", "\x1f", "\ufeff", "01", "-", ".5", "true", "nul",
    '"a": 1, "a": 2', '"a" : 1', "\\u003a", '\\"', "\\\\", "'", "/* */",
]  # fmt: skip


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """A generated text with a few tokens inserted, spans deleted or duplicated."""
    text = draw(st.one_of(_dumped(), _with_duplicates(), _nested()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.integers(0, 2))
        if how == 0:
            text = text[:at] + draw(st.sampled_from(_TOKENS)) + text[at:]
        elif how == 1:
            text = text[:at] + text[at + draw(st.integers(1, 6)) :]
        else:
            text = text[:at] + text[at : at + draw(st.integers(1, 12))] + text[at:]
    return text


_TEXTS = st.one_of(_dumped(), _with_duplicates(), _nested(), _mutated())
_LIMITS = st.one_of(st.just(MAX_DEPTH), st.integers(0, 6))


# -- the two readers agree ---------------------------------------------------------------


def _canon(value: PlainJson) -> str:
    """Text that tells 1, 1.0, true and key order apart (``==`` would not)."""
    return json.dumps(value, ensure_ascii=True)


def _read(text: str, *, fast: bool, max_depth: int, enclosing: int) -> tuple[object, ...]:
    try:
        if fast:
            value = loads(text, max_depth=max_depth, enclosing=enclosing)
        else:
            value = parse_positioned(text, max_depth=max_depth, enclosing=enclosing)
    except JsonSyntaxError as error:
        assert 0 <= error.offset <= len(text)
        return ("refused", error.offset, error.message, error.path)
    return ("accepted", _canon(value))


def _assert_agree(text: str, max_depth: int = MAX_DEPTH, enclosing: int = 0) -> None:
    fast = _read(text, fast=True, max_depth=max_depth, enclosing=enclosing)
    positioned = _read(text, fast=False, max_depth=max_depth, enclosing=enclosing)
    assert fast == positioned
    if fast[0] == "accepted":  # json.loads takes more than strict JSON, never less
        assert fast[1] == _canon(json.loads(text))


@settings(max_examples=EXAMPLES * 5)
@given(_TEXTS, _LIMITS, st.integers(0, 3))
@example('{"a": 1, "a": 2}', MAX_DEPTH, 0)
@example('{"a\\\\": 1, "b": 2, "b": 3}', MAX_DEPTH, 0)  # a key ending in a backslash
@example('{"a" : 1, "a": 2}', MAX_DEPTH, 0)
@example('{"\\u0061": 1, "a": 2}', MAX_DEPTH, 0)
@example('{":": ":", ":": 1}', MAX_DEPTH, 0)
@example('{"q\\":": 1, "q\\":": 2}', MAX_DEPTH, 0)
@example("[]", 0, 0)  # a container where none may be
@example('"[[[[[[["', 1, 0)  # brackets inside a string nest nothing
@example("[[]]", 3, 2)
@example("[1e400]", MAX_DEPTH, 0)
@example("[" + "9" * (MAX_INT_DIGITS + 1) + "]", MAX_DEPTH, 0)
@example("\ufeff{}", MAX_DEPTH, 0)
@example('["\\ud800"]', MAX_DEPTH, 0)
def test_both_readers_accept_and_refuse_exactly_the_same_texts(
    text: str, max_depth: int, enclosing: int
) -> None:
    _assert_agree(text, max_depth, enclosing)


@pytest.mark.parametrize("limit", [1000, 5000, 0])
def test_the_readers_agree_whatever_this_process_allows_for_integers(limit: int) -> None:
    # Python's own limit decides which decoder the fast path takes; the verdict holds.
    digits = (999, 1000, 1001, 4300, 4301, 5000, 5001)
    texts = [f"[{'9' * n}, -{'9' * n}]" for n in digits]
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        for text in texts:
            _assert_agree(text)
    finally:
        sys.set_int_max_str_digits(before)


def test_deep_texts_are_refused_by_both_at_the_same_bracket() -> None:
    for text in ("[" * 100_000, '{"a":' * 100_000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)):
        with pytest.raises(JsonSyntaxError) as caught:
            loads(text)
        assert "Nesting is deeper" in caught.value.message
        _assert_agree(text)


# -- positions ----------------------------------------------------------------------------


def _pointers(value: PlainJson, prefix: str = "") -> Iterator[str]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pointers(item, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _pointers(item, f"{prefix}/{index}")


@settings(max_examples=EXAMPLES * 2)
@given(_dumped())
def test_text_positions_find_every_value_where_the_positioned_parser_saw_it(text: str) -> None:
    offsets: dict[str, int] = {}
    value = parse_positioned(text, offsets)
    positions = TextPositions(text)
    for path in reversed(list(_pointers(value))):  # siblings and ancestors out of order
        assert positions.offset(path) == offsets[path], path
        key = positions.offset(path, key=True)
        if path and isinstance(_parent(value, path), dict):
            assert key is not None
            name, _ = json.decoder.scanstring(text, key + 1)  # type: ignore[attr-defined]
            assert _escape(name) == path.rsplit("/", 1)[1]
        else:
            assert key == offsets[path]
        assert positions.line_and_column(offsets[path]) == line_and_column(text, offsets[path])


def _parent(value: PlainJson, path: str) -> PlainJson:
    for part in path.split("/")[1:-1]:
        name = part.replace("~1", "/").replace("~0", "~")
        value = value[name] if isinstance(value, dict) else value[int(name)]  # type: ignore[index]
    return value


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def test_a_missing_value_gives_its_nearest_enclosing_value() -> None:
    text = '{"a": [10, {"b": 2}]}'
    positions = TextPositions(text)
    assert positions.offset("/a/1/c") == text.index('{"b"')
    assert positions.offset("/a/7") == text.index("[10")
    assert positions.offset("/z", key=True) == 0
    assert TextPositions("  ").offset("") is None


def test_a_broken_text_is_located_as_far_as_it_goes_and_where_told() -> None:
    text = '{"a": 1, "b": [1,], "c": 3}'
    positions = TextPositions(text)
    assert positions.offset("/a") == text.index("1")
    assert positions.offset("/b") == text.index("[1,]")
    assert positions.offset("/c") == 0  # the scan stopped at /b: /c is unknown
    positions.remember("/c", text.index("3"))
    assert positions.offset("/c") == text.index("3")


def test_line_and_column_count_on_and_back() -> None:
    text = "a\nbc\n\ndef\n"
    positions = TextPositions(text)
    for offset in (0, 3, 7, 2, 9, 1, 6):
        assert positions.line_and_column(offset) == line_and_column(text, offset)


# -- items of a broken array --------------------------------------------------------------

_BROKEN_ITEMS = [
    '{"records": [1,]}',
    '{"records": [], "records": []}',
    '{"records": [NaN]}',
    '{"records": [1e400]}',
    '{"records": "a\x01b"}',
    "oops",
    '{"records": ["]]]", "[{"],}',
]


@settings(max_examples=EXAMPLES)
@given(
    st.lists(_dumped(), min_size=1, max_size=5),
    st.data(),
    st.sampled_from(
        ["", '"schemaVersion": 1, ', '"responses0": [1], ', '"x": {"responses": []}, ']
    ),
)
def test_item_spans_find_every_item_around_broken_ones(
    items: list[str], data: st.DataObject, before: str
) -> None:
    for index in data.draw(st.sets(st.integers(0, len(items) - 1))):
        items[index] = data.draw(st.sampled_from(_BROKEN_ITEMS))
    text = "{" + before + '"responses": [ ' + " ,\n".join(items) + ' ], "after": NaN}'
    spans = item_spans(text, "responses")
    assert spans is not None
    assert [text[start:end] for start, end in spans] == items


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"responses": {}}',
        '{"responses": [1,]}',  # an empty item: nothing to tell apart
        '{"responses": [1 2]}',
        '{"x": NaN "responses": []}',
        '{"responses": [[[[, 1]}',
        "",
    ],
)
def test_item_spans_give_up_where_items_cannot_be_told_apart(text: str) -> None:
    assert item_spans(text, "responses") is None


def test_item_spans_of_an_empty_array() -> None:
    assert item_spans('{"responses": []}', "responses") == []


@pytest.mark.parametrize(("text", "offset"), [("[1,]", 3), ('{"a": 1, "a": 2}', 0)])
def test_if_the_two_readers_ever_disagreed_the_text_is_still_refused_with_a_place(
    monkeypatch: pytest.MonkeyPatch, text: str, offset: int
) -> None:
    # A positioned parser that accepts everything stands for a disagreement.
    monkeypatch.setattr("course._json_text.parse_positioned", lambda *_, **__: None)
    with pytest.raises(JsonSyntaxError) as caught:
        loads(text)
    assert caught.value.offset == offset  # the fast reader's own place, or the start
    assert caught.value.message.startswith("Not strict JSON: ")

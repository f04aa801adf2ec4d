"""VCR cassettes: the answers they recorded, decoded, and where each lies in the file.

A cassette is YAML as vcrpy and pytest-recording write it (``response.body.string``, a
str or ``!!binary`` bytes), with two later forms beside it: pydantic-ai's
``parsed_body`` (the JSON body as YAML data) and the typed ``body: {type: text | json |
binary | none, content: ...}`` of cassetter, which pydantic-ai now writes. ``Answer``
holds what the importer needs of one interaction: its request's method and path, its
status, its headers, its body, and where it is.

YAML needs PyYAML, the optional extra ``course[cassettes]``; it is imported only when a
cassette is read, so everything else works without it. The file is composed once (YAML
nodes know where they are) and only the values the importer reads are constructed, so
an alias repeated a million times is one node, read once.
"""

from __future__ import annotations

import binascii
import json
import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Final, TypeVar
from urllib.parse import urlsplit

from .._json import MAX_DEPTH
from ._cassette_places import Lines, body_offset, scalar_offsets
from ._recording import RecordingError, RecordingErrorCode

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_BODY_CHARS", "MAX_BODY_VALUES", "Answer", "is_cassette", "read_cassette"]

_Code = RecordingErrorCode
_T = TypeVar("_T")

MAX_BODY_CHARS: Final = 256 * 2**20
"""The most characters a body may hold once decoded (gunzipped, or written out as JSON
from YAML data): more is refused, never a memory blow-up."""
MAX_BODY_VALUES: Final = 1_000_000
"""The most values a body written as YAML data may hold, every repetition of an alias
counted: more is refused (an alias bomb)."""

_GZIP_MAGIC: Final = b"\x1f\x8b"
_NOT_BASE64: Final = b"\x00course: not base64\x00"
"""The body of a ``binary`` typed body whose content is not base64: unreadable."""
_MODEL_ROUTES: Final = (
    ("/chat/completions", "openai-chat"),
    ("/responses", "openai-responses"),
    ("/messages", "anthropic"),
)
"""Paths that end so are model calls, and the format each speaks (Azure and gateways put
a prefix before them)."""
_GEMINI_METHODS: Final = (":generateContent", ":streamGenerateContent")


def is_cassette(path: str) -> bool:
    """Whether a file is read as a cassette: its name ends ``.yaml`` or ``.yml``."""
    return path.lower().endswith((".yaml", ".yml"))


@dataclass(frozen=True, slots=True, eq=False)
class Answer:
    """One interaction of a cassette: what was asked (as far as the importer cares) and
    what came back, undecoded."""

    index: int
    """The interaction's place in the cassette, from 0."""
    method: str | None
    """The request's method, upper case, if recorded."""
    path: str | None
    """The path of the request's URI, if recorded."""
    status: int | None
    """The response's HTTP status, if recorded."""
    headers: dict[str, str]
    """The response's headers: names lower case, the values of one name joined."""
    body: str | bytes | yaml.Node | None
    """The body as recorded: text, bytes (``!!binary``, base64), YAML data, or none."""
    key: tuple[int, ...]
    """What the body's import depends on, by identity: two answers with one key are one
    body (YAML aliases), imported once."""
    _cassette: _Cassette = field(repr=False)
    _node: yaml.Node | None = field(repr=False)
    """The node of the body's value, to point into."""
    _at: int = field(repr=False)
    """Where the interaction starts in the text."""

    @property
    def route(self) -> str | None:
        """The format of the model route the request went to (``gemini`` for Google's),
        ``None`` for a path that is no model route."""
        path = self.path
        if path is None:
            return None
        for suffix, format in _MODEL_ROUTES:
            if path.endswith(suffix):
                return format
        return "gemini" if any(method in path for method in _GEMINI_METHODS) else None

    def text(self, source: str, label: str) -> str:
        """The body as text: base64 and gzip undone, UTF-8 read (one byte order mark
        skipped), YAML data written out as JSON. Raises ``RecordingError`` located at
        the body."""
        body = self.body
        if body is None:
            return ""
        if isinstance(body, str) and _encodings(self.headers) == ():
            return body
        if not isinstance(body, str | bytes):
            return self._json(body, source, label)
        if body is _NOT_BASE64:
            raise self.error(
                _Code.RECORDING_UNREADABLE,
                f"{label}The response body's `binary` content is not base64",
                source,
            )
        if isinstance(body, bytes):
            data = body
        elif body.startswith("\x1f\x8b"):  # gzip bytes kept as text, one char a byte
            data = body.encode("latin-1", "replace")
        else:
            data = body.encode("utf-8", "surrogatepass")
        data = self._decompressed(data, source, label)
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(
                _Code.RECORDING_UNREADABLE,
                f"{label}The response body is not UTF-8 text (invalid byte "
                f"0x{data[exc.start]:02x} at byte {exc.start} of the decoded body)",
                source,
            ) from None

    def exact(self) -> bool:
        """Whether each character of ``text()`` comes from one place in the file."""
        return isinstance(self.body, str) and _encodings(self.headers) == ()

    def place(self, body: str, line: int, column: int) -> tuple[int, int] | None:
        """The line and column in the cassette of a line and column in the body's text
        (as ``text()`` gave it), when there is an exact one."""
        node = self._node
        if node is None:
            return None
        offset = body_offset(body, line, column)
        if offset is None:
            return None
        if self._json_starts is not None:  # written out from YAML data
            return self._cassette.lines.position(self._json_value_at(offset))
        if not self.exact():
            return None
        assert isinstance(self.body, str)
        offsets = scalar_offsets(
            self._cassette.text, node.start_mark.index, getattr(node, "style", None), self.body
        )
        if offsets is None or offset > len(offsets):
            return None
        at = offsets[offset] if offset < len(offsets) else node.end_mark.index
        return self._cassette.lines.position(at)

    @property
    def start(self) -> tuple[int, int]:
        """The line and column where the body's value starts (else the interaction)."""
        at = self._at if self._node is None else self._node.start_mark.index
        return self._cassette.lines.position(at)

    def error(self, code: RecordingErrorCode, message: str, source: str) -> RecordingError:
        """A refusal of the body as a whole, at its start."""
        line, column = self.start
        return RecordingError(code, message, source=source, line=line, column=column)

    # -- decoding ---------------------------------------------------------------------------

    def _decompressed(self, data: bytes, source: str, label: str) -> bytes:
        encodings = _encodings(self.headers)
        if encodings == ("gzip",) or (encodings == () and data.startswith(_GZIP_MAGIC)):
            return self._gunzip(data, source, label)
        if encodings:
            raise self.error(
                _Code.RECORDING_UNREADABLE,
                f"{label}The response body's content-encoding is "
                f"{self.headers['content-encoding']!r}: only gzip (and identity) is read",
                source,
            )
        return data

    def _gunzip(self, data: bytes, source: str, label: str) -> bytes:
        parts: list[bytes] = []
        size = 0
        while data:  # a gzip stream may hold several members, one after the other
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                part = inflater.decompress(data, MAX_BODY_CHARS + 1 - size)
            except zlib.error as exc:
                raise self.error(
                    _Code.RECORDING_UNREADABLE,
                    f"{label}The response body is not gzip data ({exc})",
                    source,
                ) from None
            size += len(part)
            parts.append(part)
            if size > MAX_BODY_CHARS:
                raise self.error(
                    _Code.RECORDING_UNREADABLE,
                    f"{label}The response body inflates past {MAX_BODY_CHARS:,} bytes",
                    source,
                )
            if not inflater.eof:
                raise self.error(
                    _Code.RECORDING_UNREADABLE,
                    f"{label}The response body's gzip data is cut short",
                    source,
                )
            data = inflater.unused_data
        return b"".join(parts)

    # -- YAML data written out as JSON ------------------------------------------------------

    @property
    def _json_starts(self) -> list[tuple[int, int]] | None:
        return self._cassette.json_starts.get(id(self._node))

    def _json_value_at(self, offset: int) -> int:
        """The text offset, in the cassette, of the value whose JSON holds ``offset``."""
        starts = self._json_starts
        assert starts is not None
        low, high = 0, len(starts)
        while low < high:  # the last value starting at or before the offset
            middle = (low + high) // 2
            if starts[middle][0] <= offset:
                low = middle + 1
            else:
                high = middle
        return starts[max(low - 1, 0)][1]

    def _json(self, node: yaml.Node, source: str, label: str) -> str:
        try:
            text, starts = _json_of(node, self._cassette.loader)
        except _NotJson as problem:
            line, column = self._cassette.lines.position(problem.node.start_mark.index)
            code = _Code.RECORDING_INVALID_JSON
            if problem.unreadable:
                code = _Code.RECORDING_UNREADABLE
            raise RecordingError(
                code, f"{label}{problem.message}", source=source, line=line, column=column
            ) from None
        self._cassette.json_starts[id(node)] = starts
        return text


def _encodings(headers: dict[str, str]) -> tuple[str, ...]:
    """The body's content codings, ``identity`` left out (``x-gzip`` is ``gzip``)."""
    value = headers.get("content-encoding")
    if value is None:
        return ()
    names = (name.strip().lower() for name in value.split(","))
    return tuple(
        "gzip" if name == "x-gzip" else name for name in names if name and name != "identity"
    )


@dataclass(slots=True)
class _Cassette:
    """The file the answers come from."""

    text: str
    lines: Lines
    loader: yaml.SafeLoader
    json_starts: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """For each body written out from YAML data: where each of its values starts in the
    JSON text, and where its node starts in the cassette."""
    read: dict[tuple[int, object], object] = field(default_factory=dict)
    """What was read of each node, by reader: an alias repeats a node, read once."""

    def once(
        self, node: yaml.Node | None, reader: Callable[[_Cassette, yaml.Node | None], _T]
    ) -> _T:
        """``reader(self, node)``, computed once per node (so an interaction, a request or
        a response that YAML aliases repeat costs one reading, however many times)."""
        key = (id(node), reader)
        if key not in self.read:
            self.read[key] = reader(self, node)
        return self.read[key]  # type: ignore[return-value]


# -- reading the file -----------------------------------------------------------------------


def read_cassette(text: str, source: str) -> list[Answer]:
    """Every interaction of the cassette ``text``, in order. Raises ``RecordingError``
    (RECORDING_UNREADABLE) for a file that is not a cassette, located where YAML says."""
    yaml = _import_yaml(source)
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    cassette = _Cassette(text, Lines(text), loader)
    try:
        root = loader.get_single_node()
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        # ValueError: a scalar YAML cannot convert; RecursionError: absurd nesting.
        mark = getattr(exc, "problem_mark", None)
        where = (None, None) if mark is None else cassette.lines.position(mark.index)
        reason = str(getattr(exc, "problem", None) or exc).splitlines()
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"The cassette is not YAML: {reason[0] if reason else type(exc).__name__}",
            source=source,
            line=where[0],
            column=where[1],
        ) from None
    finally:
        loader.dispose()  # the nodes are composed: values are constructed from them alone
    interactions = _member(root, "interactions")
    if not isinstance(interactions, yaml.SequenceNode):
        at = (None, None) if root is None else cassette.lines.position(root.start_mark.index)
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "Expected a VCR cassette: a YAML mapping with an `interactions` list",
            source=source,
            line=at[0],
            column=at[1],
        )
    return [_answer(cassette, node, n, source) for n, node in enumerate(interactions.value)]


def _import_yaml(source: str) -> ModuleType:
    try:
        import yaml  # noqa: PLC0415  (optional extra, only for cassettes)
    except ImportError:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "Reading a VCR cassette needs PyYAML: pip install 'course[cassettes]'",
            source=source,
        ) from None
    return yaml


def _answer(cassette: _Cassette, node: yaml.Node, index: int, source: str) -> Answer:
    import yaml  # noqa: PLC0415  (imported by read_cassette already)

    if type(node) is not yaml.MappingNode:
        line, column = cassette.lines.position(node.start_mark.index)
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"interaction {index}: Expected an interaction (a mapping with a `request` and a "
            "`response`)",
            source=source,
            line=line,
            column=column,
        )
    request, response = cassette.once(node, _parts)
    method, path = cassette.once(request, _request)
    status, headers, body_node, body = cassette.once(response, _response)
    return Answer(
        index=index,
        method=method,
        path=path,
        status=status,
        headers=headers,
        body=body,
        key=(id(body_node), id(body)),
        _cassette=cassette,
        _node=body_node,
        _at=node.start_mark.index,
    )


def _parts(cassette: _Cassette, node: yaml.Node | None) -> tuple[yaml.Node | None, ...]:
    """An interaction's ``request`` and ``response`` nodes."""
    return _member(node, "request"), _member(node, "response")


def _request(cassette: _Cassette, node: yaml.Node | None) -> tuple[str | None, str | None]:
    """A request's method (upper case) and the path of its URI."""
    method = _scalar(cassette, _member(node, "method"))
    uri = _scalar(cassette, _member(node, "uri"))
    return (
        method.upper() if type(method) is str else None,
        _path(uri) if type(uri) is str else None,
    )


def _response(
    cassette: _Cassette, node: yaml.Node | None
) -> tuple[int | None, dict[str, str], yaml.Node | None, str | bytes | yaml.Node | None]:
    """A response's status, headers, and body (its value's node, and the body)."""
    status_node = _member(node, "status")
    status = _scalar(cassette, _member(status_node, "code") or status_node)
    headers = _headers(cassette, _member(node, "headers"))
    body_node, body = _body(cassette, node)
    return status if type(status) is int else None, headers, body_node, body


def _body(
    cassette: _Cassette, response: yaml.Node | None
) -> tuple[yaml.Node | None, str | bytes | yaml.Node | None]:
    """The node of the body's value and the body: a str, bytes, a node of YAML data to
    write out as JSON, or ``None``."""
    import yaml  # noqa: PLC0415

    parsed = _member(response, "parsed_body")
    if parsed is not None:
        return parsed, parsed
    body = _member(response, "body")
    if type(body) is yaml.ScalarNode:
        value = _scalar(cassette, body)
        return body, value if isinstance(value, str | bytes) else None
    kind = _scalar(cassette, _member(body, "type"))
    content = _member(body, "content")
    if type(kind) is str and _member(body, "string") is None:  # cassetter's typed body
        if kind == "json" and content is not None:
            return content, content
        value = _scalar(cassette, content)
        if kind == "binary" and type(value) is str:
            try:
                return content, binascii.a2b_base64("".join(value.split()), strict_mode=True)
            except binascii.Error:
                return content, _NOT_BASE64
        return content, value if isinstance(value, str | bytes) else None
    string = _member(body, "string")
    value = _scalar(cassette, string)
    return string, value if isinstance(value, str | bytes) else None


def _headers(cassette: _Cassette, node: yaml.Node | None) -> dict[str, str]:
    import yaml  # noqa: PLC0415

    headers: dict[str, str] = {}
    if type(node) is not yaml.MappingNode:
        return headers
    for key, value in node.value:
        name = _scalar(cassette, key)
        if type(name) is not str:
            continue
        items = value.value if type(value) is yaml.SequenceNode else [value]
        texts = [_scalar(cassette, item) for item in items]
        joined = ", ".join(text for text in texts if type(text) is str)
        headers[name.lower()] = ", ".join(filter(None, (headers.get(name.lower()), joined)))
    return headers


def _member(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value of ``key`` in a mapping node (the last, as YAML loaders take it)."""
    import yaml  # noqa: PLC0415  (imported by read_cassette already)

    found = None
    if isinstance(node, yaml.MappingNode):
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode) and name.value == key:
                found = value
    return found


def _scalar(cassette: _Cassette, node: yaml.Node | None) -> object:
    """The value of a scalar node (``None`` for any other node)."""
    import yaml  # noqa: PLC0415

    if not isinstance(node, yaml.ScalarNode):
        return None
    try:
        return cassette.loader.construct_object(node, deep=True)
    except Exception:  # a scalar its tag cannot convert (a bad date, say): as if absent
        return None


def _path(uri: str) -> str | None:
    try:
        return urlsplit(uri).path
    except ValueError:
        return None


# -- YAML data as JSON text -----------------------------------------------------------------


class _NotJson(Exception):
    def __init__(self, node: yaml.Node, message: str, *, unreadable: bool = False) -> None:
        super().__init__(message)
        self.node = node
        self.message = message
        self.unreadable = unreadable


def _json_of(root: yaml.Node, loader: yaml.SafeLoader) -> tuple[str, list[tuple[int, int]]]:
    """A body written as YAML data, as strict JSON text, with where each value starts in
    the text and in the cassette. Raises ``_NotJson`` at the first value JSON has no
    place for (a date, a non-string key, a repeated key, too deep, too many)."""
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    length = 0
    values = 0

    def put(text: str) -> None:
        nonlocal length
        parts.append(text)
        length += len(text)

    import yaml  # noqa: PLC0415

    # Each step is a node to write, or the text that closes a container.
    stack: list[tuple[yaml.Node, int] | str] = [(root, 1)]
    while stack:
        step = stack.pop()
        if isinstance(step, str):
            put(step)
            continue
        node, depth = step
        values += 1
        if values > MAX_BODY_VALUES or length > MAX_BODY_CHARS:
            raise _NotJson(
                root,
                f"The response body, YAML data, holds more than {MAX_BODY_VALUES:,} values "
                "counting each repetition of an alias",
                unreadable=True,
            )
        starts.append((length, node.start_mark.index))
        if isinstance(node, yaml.ScalarNode):
            put(_json_scalar(node, loader))
            continue
        if depth > MAX_DEPTH:
            raise _NotJson(node, f"The response body nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.SequenceNode):
            put("[")
            stack.append("]")
            for position, item in reversed(list(enumerate(node.value))):
                stack.append((item, depth + 1))
                if position:
                    stack.append(",")
            continue
        put("{")
        stack.append("}")
        members = list(_json_members(node, loader))
        for position, (key, value) in reversed(list(enumerate(members))):
            stack.append((value, depth + 1))
            stack.append(("," if position else "") + json.dumps(key) + ":")
    return "".join(parts), starts


def _json_members(node: yaml.Node, loader: yaml.SafeLoader) -> Iterator[tuple[str, yaml.Node]]:
    import yaml  # noqa: PLC0415

    seen: set[str] = set()
    for key_node, value in node.value:
        key = None
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:str":
            key = loader.construct_object(key_node)
        if type(key) is not str:
            raise _NotJson(key_node, "The response body has a key that is not a string")
        if key in seen:
            raise _NotJson(key_node, f"The response body repeats the key {json.dumps(key)}")
        seen.add(key)
        yield key, value


def _json_scalar(node: yaml.Node, loader: yaml.SafeLoader) -> str:
    try:
        value = loader.construct_object(node)
    except Exception:  # a scalar its tag cannot convert (a bad date, say)
        raise _NotJson(node, "The response body holds a YAML value that cannot be read") from None
    if value is None or type(value) in (str, bool, int):
        return json.dumps(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    tag = node.tag.rsplit(":", 1)[-1]
    raise _NotJson(node, f"The response body holds a YAML {tag}, which JSON has no place for")

"""The JSON Schema (draft 2020-12) of the fixture format, generated, never written.

Everything in it comes from the definitions the adapter itself enforces: the table of
record types (``RECORD_TYPES``), which the parser reads records by, each row and field
with the schema version it arrived in, the usage aliases (``USAGE_ALIASES``,
``USAGE_DETAIL_ALIASES``), the stop reasons (``STOP_REASONS``), the limits
(``MAX_TOKENS``, ``MAX_DELAY``, ``MAX_RETRY_AFTER``, ``MIN_STATUS``, ``MAX_STATUS``) and
the fixture's and a response's closed keys. Change one of those and the schema follows,
so the two cannot drift. ``course-fixture schema`` prints it: by default one schema for
both versions, chosen by ``schemaVersion``; with a version, that version's alone.

A schema describes shape only, so the implication is one-way: every fixture this
schema rejects, the adapter rejects too (at construction, or when the response
streams), but a fixture it accepts can still fail on an ordering or meaning rule.
"""

from __future__ import annotations

from typing import Final, assert_never

from . import _parser  # ``_parser.RECORD_TYPES``: the table the parser reads, even if replaced
from ._adapter import FIXTURE_KEYS, RESPONSE_KEYS
from ._json import MAX_DEPTH, PlainJson
from ._parser import (
    MAX_DELAY,
    MAX_RETRY_AFTER,
    MAX_STATUS,
    MAX_TOKENS,
    MIN_STATUS,
    SCHEMA_VERSIONS,
    STOP_REASONS,
    USAGE_ALIASES,
    USAGE_DETAIL_ALIASES,
    Field,
    stop_reasons,
)

__all__ = ["DIALECT", "fixture_schema"]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

_DESCRIPTION: Final = (
    "A course fixture, format version {version}: recorded provider records that "
    "course.FixtureProviderAdapter replays offline, one response per call. Generated from "
    "the adapter's own tables, so it cannot drift from them. It describes shape only, so "
    "the implication is one-way: a fixture this schema rejects is always rejected by the "
    "adapter (at construction, or when the response streams), but a fixture it accepts "
    "may still fail. The schema cannot express the rules about order and meaning: "
    "`response_start` comes first and once; `response_end` comes last, once, with the "
    "start's `responseId`; tool-call ids are unique within a response; the stop reason "
    "agrees with the tool calls (`tool_call` needs one, `stop` allows none); a "
    "`transport_error` record always fails its response.{more} Nor can it express the "
    "adapter's exact types (the integer {version} and the counts must be JSON integers, "
    "so `{version}.0` is refused although JSON Schema counts it as an integer) or its "
    "nesting limit of {depth} containers. `course-fixture validate` checks all of it."
)

_MORE: Final = {
    1: "",
    2: (
        " Version 2 adds: a `thinking_signature` comes right after a `thinking_delta`; "
        "nothing but the end or a transport error follows a `tool_call_incomplete`, "
        "whose end is `length`; a `refusal_delta`'s end is `refusal`; a call's "
        "`argumentFragments`, joined, are strict JSON equal to its `arguments`; a usage's "
        "cache reads and writes are at most its input tokens, its reasoning tokens at "
        "most its output tokens."
    ),
}

_BOTH: Final = (
    "A course fixture, format version 1 or 2: `schemaVersion` chooses which, and the "
    "fixture must then be valid in that version (`$defs` `v1_*` and `v2_*`). Generated "
    "from the adapter's own tables. Version 1: {v1} Version 2: {v2}"
)

_KIND_DESCRIPTIONS: Final = {
    "string": "A string (may be empty).",
    "non-empty string": "A non-empty string.",
    "object": "A JSON object (not null), kept as written.",
    "fragments": (
        "The arguments as streamed: a non-empty array of strings (each may be empty) "
        "whose concatenation is strict JSON equal to `arguments` (empty: `{}`)."
    ),
    "string list": (
        "The arguments received before the cut: an array of strings, need not join into JSON."
    ),
    "delay": f"Seconds to wait before the record is judged: a number from 0 to {MAX_DELAY}.",
    "status": (
        "The HTTP status a provider would answer with: "
        f"an integer from {MIN_STATUS} to {MAX_STATUS}."
    ),
    "retry after": (
        f"The provider's `Retry-After`, in seconds: a number from 0 to {MAX_RETRY_AFTER}."
    ),
}


def _prefix(version: int) -> str:
    """The prefix of a version's ``$defs`` names in the schema of both versions (a
    version's schema alone has none)."""
    return f"v{version}_"


def _field_schema(field: Field, version: int, prefix: str) -> dict[str, PlainJson]:
    kind = field.kind
    match kind:
        case "string" | "object":
            return {"type": kind, "description": _KIND_DESCRIPTIONS[kind]}
        case "non-empty string":
            return {"type": "string", "minLength": 1, "description": _KIND_DESCRIPTIONS[kind]}
        case "choice":
            return {"enum": list(field.choices)}
        case "stop reason":
            becomes = ", ".join(
                f"`{wire}` becomes `{STOP_REASONS[wire]}`" for wire in stop_reasons(version)
            )
            return {
                "enum": list(stop_reasons(version)),
                "description": f"The wire stop reason: {becomes}.",
            }
        case "usage":
            return {"$ref": f"#/$defs/{prefix}usage"}
        case "fragments":
            return {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": _KIND_DESCRIPTIONS[kind],
            }
        case "string list":
            return {
                "type": "array",
                "items": {"type": "string"},
                "description": _KIND_DESCRIPTIONS[kind],
            }
        case "delay":
            return _number(MAX_DELAY, kind)
        case "retry after":
            return _number(MAX_RETRY_AFTER, kind)
        case "status":
            return {
                "type": "integer",
                "minimum": MIN_STATUS,
                "maximum": MAX_STATUS,
                "description": _KIND_DESCRIPTIONS[kind],
            }
        case _:  # pragma: no cover
            assert_never(kind)


def _number(maximum: int, kind: str) -> dict[str, PlainJson]:
    return {
        "type": "number",
        "minimum": 0,
        "maximum": maximum,
        "description": _KIND_DESCRIPTIONS[kind],
    }


def _record_schema(
    kind: str, fields: tuple[Field, ...], version: int, prefix: str
) -> dict[str, PlainJson]:
    properties: dict[str, PlainJson] = {"type": {"const": kind}}
    for field in fields:
        properties[field.name] = _field_schema(field, version, prefix)
    optional = [field.name for field in fields if not field.required]
    description = f"A `{kind}` record: a closed object."
    if optional:
        names = ", ".join(f"`{name}`" for name in optional)
        description += f" Optional means absent ({names} may be left out, never null)."
    return {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": ["type", *(field.name for field in fields if field.required)],
        "additionalProperties": False,
    }


def _usage_schema(version: int) -> dict[str, PlainJson]:
    count: dict[str, PlainJson] = {"type": "integer", "minimum": 0, "maximum": MAX_TOKENS}
    pairs = "; ".join(f"`{first}` or `{second}`" for first, second in USAGE_ALIASES)
    details = USAGE_DETAIL_ALIASES if version >= 2 else ()
    description = (
        f"Token counts, a closed object holding each count under exactly one alias: "
        f"{pairs}. Each count is an integer from 0 to {MAX_TOKENS}."
    )
    if details:
        optional = "; ".join(f"`{first}` or `{second}`" for first, second in details)
        description += (
            f" Optional details, each under at most one alias: {optional}. The input "
            "tokens include the cache reads and writes, the output tokens the reasoning."
        )
    one_of_each: list[PlainJson] = [
        {"oneOf": [{"required": [alias]} for alias in aliases]} for aliases in USAGE_ALIASES
    ]
    at_most_one_of_each: list[PlainJson] = [
        {"not": {"required": list(aliases)}} for aliases in details
    ]
    return {
        "type": "object",
        "description": description,
        "properties": {
            alias: dict(count) for aliases in USAGE_ALIASES + details for alias in aliases
        },
        "additionalProperties": False,
        "allOf": one_of_each + at_most_one_of_each,
    }


def _version_defs(version: int, prefix: str) -> dict[str, PlainJson]:
    """The ``$defs`` of one version: a response, a record, the usage, each record type."""
    record_types = [
        (kind, row.fields_at(version))
        for kind, row in _parser.RECORD_TYPES.items()
        if row.views[version] is not None
    ]
    response_properties: dict[str, PlainJson] = {
        "records": {
            "type": "array",
            "description": (
                "The response's provider records, in the order they stream. (Built in "
                "code, `records` may also be an async iterable; a file holds an array.)"
            ),
            "items": {"$ref": f"#/$defs/{prefix}record"},
        },
    }
    defs: dict[str, PlainJson] = {
        f"{prefix}response": {
            "type": "object",
            "description": "One response: a closed object.",
            "properties": {key: response_properties[key] for key in RESPONSE_KEYS},
            "required": list(RESPONSE_KEYS),
            "additionalProperties": False,
        },
        f"{prefix}record": {
            "type": "object",
            "description": "A provider record, tagged by `type`.",
            "properties": {"type": {"enum": [kind for kind, _ in record_types]}},
            "required": ["type"],
            "allOf": [
                {
                    "if": {"properties": {"type": {"const": kind}}, "required": ["type"]},
                    "then": {"$ref": f"#/$defs/{prefix}{kind}"},
                }
                for kind, _ in record_types
            ],
        },
        f"{prefix}usage": _usage_schema(version),
    }
    for kind, fields in record_types:
        defs[f"{prefix}{kind}"] = _record_schema(kind, fields, version, prefix)
    return defs


def _description(version: int) -> str:
    return _DESCRIPTION.format(version=version, depth=MAX_DEPTH, more=_MORE[version])


def _responses(prefix: str) -> dict[str, PlainJson]:
    return {
        "type": "array",
        "description": "The responses, consumed in order, one per call of stream().",
        "items": {"$ref": f"#/$defs/{prefix}response"},
    }


def fixture_schema(version: int | None = None) -> dict[str, PlainJson]:
    """The JSON Schema of the fixture format, as a fresh plain JSON object: of both
    versions, chosen by ``schemaVersion`` (the default), or of ``version`` alone."""
    if version is None:
        return _both_versions()
    if version not in SCHEMA_VERSIONS:
        raise ValueError(f"fixture_schema: no schema version {version!r} (known: 1, 2)")
    # One entry per closed key; a key added to the adapter without a schema here fails
    # loudly (KeyError) instead of silently drifting.
    fixture_properties: dict[str, PlainJson] = {
        "schemaVersion": {
            "type": "integer",
            "const": version,
            "description": f"The fixture format version: exactly the integer {version}.",
        },
        "responses": _responses(""),
    }
    return {
        "$schema": DIALECT,
        "title": f"course fixture, format version {version}",
        "description": _description(version),
        "type": "object",
        "properties": {key: fixture_properties[key] for key in FIXTURE_KEYS},
        "required": list(FIXTURE_KEYS),
        "additionalProperties": False,
        "$defs": _version_defs(version, ""),
    }


def _both_versions() -> dict[str, PlainJson]:
    fixture_properties: dict[str, PlainJson] = {
        "schemaVersion": {
            "type": "integer",
            "enum": list(SCHEMA_VERSIONS),
            "description": "The fixture format version: exactly the integer 1 or 2.",
        },
        "responses": {
            "type": "array",
            "description": "The responses, consumed in order, one per call of stream().",
        },
    }
    defs: dict[str, PlainJson] = {}
    for version in SCHEMA_VERSIONS:
        defs.update(_version_defs(version, _prefix(version)))
    return {
        "$schema": DIALECT,
        "title": "course fixture, format version 1 or 2",
        "description": _BOTH.format(v1=_description(1), v2=_description(2)),
        "type": "object",
        "properties": {key: fixture_properties[key] for key in FIXTURE_KEYS},
        "required": list(FIXTURE_KEYS),
        "additionalProperties": False,
        "allOf": [
            {
                "if": {
                    "properties": {"schemaVersion": {"const": version}},
                    "required": ["schemaVersion"],
                },
                "then": {"properties": {"responses": _responses(_prefix(version))}},
            }
            for version in SCHEMA_VERSIONS
        ],
        "$defs": defs,
    }

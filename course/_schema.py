"""The JSON Schema (draft 2020-12) of fixture format version 1, generated, never written.

Everything in it comes from the definitions the adapter itself enforces: the table of
record types (``RECORD_TYPES``), which the parser reads records by, the usage aliases
(``USAGE_ALIASES``), the stop reasons (``STOP_REASONS``), the largest count
(``MAX_TOKENS``) and the fixture's and a response's closed keys. Change one of those
and the schema follows, so the two cannot drift. ``course-fixture schema`` prints it.

A schema describes shape only, so the implication is one-way: every fixture this
schema rejects, the adapter rejects too (at construction, or when the response
streams), but a fixture it accepts can still fail on an ordering or meaning rule.
"""

from __future__ import annotations

from typing import Final, assert_never

from . import _parser  # ``_parser.RECORD_TYPES``: the table the parser reads, even if replaced
from ._adapter import FIXTURE_KEYS, RESPONSE_KEYS, SCHEMA_VERSION
from ._json import MAX_DEPTH, PlainJson
from ._parser import MAX_TOKENS, STOP_REASONS, USAGE_ALIASES, Field, RecordType

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
    "`transport_error` record always fails its response. Nor can it express the adapter's "
    "exact types (the integer 1 and the counts must be JSON integers, so `1.0` is refused "
    "although JSON Schema counts it as an integer) or its nesting limit of {depth} "
    "containers. `course-fixture validate` checks all of it."
)

_KIND_DESCRIPTIONS: Final = {
    "string": "A string (may be empty).",
    "non-empty string": "A non-empty string.",
    "object": "A JSON object (not null), kept as written.",
}


def _field_schema(field: Field) -> dict[str, PlainJson]:
    match field.kind:
        case "string":
            return {"type": "string", "description": _KIND_DESCRIPTIONS[field.kind]}
        case "non-empty string":
            return {
                "type": "string",
                "minLength": 1,
                "description": _KIND_DESCRIPTIONS[field.kind],
            }
        case "object":
            return {"type": "object", "description": _KIND_DESCRIPTIONS[field.kind]}
        case "choice":
            schema: dict[str, PlainJson] = {"enum": list(field.choices)}
            if field.choices == tuple(STOP_REASONS):
                becomes = ", ".join(
                    f"`{wire}` becomes `{course}`" for wire, course in STOP_REASONS.items()
                )
                schema["description"] = f"The wire stop reason: {becomes}."
            return schema
        case "usage":
            return {"$ref": "#/$defs/usage"}
        case _:  # pragma: no cover
            assert_never(field.kind)


def _record_schema(kind: str, record_type: RecordType) -> dict[str, PlainJson]:
    fields = record_type.fields
    properties: dict[str, PlainJson] = {"type": {"const": kind}}
    for field in fields:
        properties[field.name] = _field_schema(field)
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


def _usage_schema() -> dict[str, PlainJson]:
    count: dict[str, PlainJson] = {"type": "integer", "minimum": 0, "maximum": MAX_TOKENS}
    pairs = "; ".join(f"`{first}` or `{second}`" for first, second in USAGE_ALIASES)
    return {
        "type": "object",
        "description": (
            f"Token counts, a closed object holding each count under exactly one alias: "
            f"{pairs}. Each count is an integer from 0 to {MAX_TOKENS}."
        ),
        "properties": {alias: dict(count) for aliases in USAGE_ALIASES for alias in aliases},
        "additionalProperties": False,
        "allOf": [
            {"oneOf": [{"required": [alias]} for alias in aliases]} for aliases in USAGE_ALIASES
        ],
    }


def fixture_schema() -> dict[str, PlainJson]:
    """The JSON Schema of fixture format version 1, as a fresh plain JSON object."""
    record_types = list(_parser.RECORD_TYPES)
    # One entry per closed key; a key added to the adapter without a schema here fails
    # loudly (KeyError) instead of silently drifting.
    fixture_properties: dict[str, PlainJson] = {
        "schemaVersion": {
            "type": "integer",
            "const": SCHEMA_VERSION,
            "description": f"The fixture format version: exactly the integer {SCHEMA_VERSION}.",
        },
        "responses": {
            "type": "array",
            "description": "The responses, consumed in order, one per call of stream().",
            "items": {"$ref": "#/$defs/response"},
        },
    }
    response_properties: dict[str, PlainJson] = {
        "records": {
            "type": "array",
            "description": (
                "The response's provider records, in the order they stream. (Built in "
                "code, `records` may also be an async iterable; a file holds an array.)"
            ),
            "items": {"$ref": "#/$defs/record"},
        },
    }
    defs: dict[str, PlainJson] = {
        "response": {
            "type": "object",
            "description": "One response: a closed object.",
            "properties": {key: response_properties[key] for key in RESPONSE_KEYS},
            "required": list(RESPONSE_KEYS),
            "additionalProperties": False,
        },
        "record": {
            "type": "object",
            "description": "A provider record, tagged by `type`.",
            "properties": {"type": {"enum": list(record_types)}},
            "required": ["type"],
            "allOf": [
                {
                    "if": {"properties": {"type": {"const": kind}}, "required": ["type"]},
                    "then": {"$ref": f"#/$defs/{kind}"},
                }
                for kind in record_types
            ],
        },
        "usage": _usage_schema(),
    }
    for kind, record_type in _parser.RECORD_TYPES.items():
        defs[kind] = _record_schema(kind, record_type)
    return {
        "$schema": DIALECT,
        "title": f"course fixture, format version {SCHEMA_VERSION}",
        "description": _DESCRIPTION.format(version=SCHEMA_VERSION, depth=MAX_DEPTH),
        "type": "object",
        "properties": {key: fixture_properties[key] for key in FIXTURE_KEYS},
        "required": list(FIXTURE_KEYS),
        "additionalProperties": False,
        "$defs": defs,
    }

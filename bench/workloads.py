"""Deterministic benchmark workloads, generated in code (no files, no randomness).

Five shapes, each at ``scale=1.0`` as the issues define them:

- ``long``: 10 responses of 50,000 text deltas each (start, deltas, end);
- ``wide``: 20,000 responses of start, 2 text deltas, 1 tool call, end;
- ``tools``: 10 responses of 5,000 tool calls each with small nested arguments;
- ``source``: one response of 100,000 records (start, 99,998 deltas, end) from an
  async source;
- ``thinking`` (schema version 2): 10 responses of 10,000 signed thinking blocks each
  (4 thinking deltas, then a signature), ending with ``length`` and a usage with every
  detail (cache reads and writes, reasoning tokens).

Usage objects cycle through the four alias combinations across responses
(camel/camel, snake/snake, camel/snake, snake/camel). Every record is its own
``dict`` (as ``json.loads`` would give) and every text delta's text is distinct, so
no implementation can profit from repeated records; names and argument strings come
from small pools.

``scale`` shrinks the per-response counts (``long``, ``tools``, ``source``) or the
number of responses (``wide``); the linearity check compares ``scale=0.1`` with
``scale=1.0``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = [
    "WORKLOAD_NAMES",
    "Records",
    "Workload",
    "build",
    "make_source",
    "source_records",
]

Records = list[dict[str, object]]
"""One response's records, as plain JSON objects."""

WORKLOAD_NAMES = ("long", "wide", "tools", "source", "thinking")

_WORDS = tuple(f"word{index} " for index in range(512))
_TOOL_NAMES = ("read_file", "search", "write_file", "run_tests")
_USAGE_KEYS = (
    ("inputTokens", "outputTokens"),
    ("input_tokens", "output_tokens"),
    ("inputTokens", "output_tokens"),
    ("input_tokens", "outputTokens"),
)


def _start(response_id: str) -> dict[str, object]:
    return {"type": "response_start", "responseId": response_id, "role": "assistant"}


def _text(index: int) -> dict[str, object]:
    # Distinct texts: no implementation may profit from repeated records.
    return {"type": "text_delta", "text": f"{_WORDS[index % len(_WORDS)]}{index}"}


def _tool(call_id: str, index: int) -> dict[str, object]:
    return {
        "type": "tool_call",
        "id": call_id,
        "name": _TOOL_NAMES[index % len(_TOOL_NAMES)],
        "arguments": {
            "path": _WORDS[index % len(_WORDS)],
            "options": {"recursive": index % 2 == 0, "depth": index % 7, "tags": ["a", "b"]},
            "limit": index % 100,
        },
    }


def _end(response_id: str, response_index: int, tool_calls: bool, output: int) -> dict[str, object]:
    input_key, output_key = _USAGE_KEYS[response_index % len(_USAGE_KEYS)]
    return {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": "tool_call" if tool_calls else "stop",
        "usage": {input_key: 10 + response_index, output_key: output},
    }


def _long_response(index: int, deltas: int, prefix: str = "resp-long") -> Records:
    response_id = f"{prefix}-{index}"
    records = [_start(response_id)]
    records.extend(_text(index + j) for j in range(deltas))
    records.append(_end(response_id, index, False, deltas))
    return records


def _wide_response(index: int) -> Records:
    response_id = f"resp-wide-{index}"
    return [
        _start(response_id),
        _text(index),
        _text(index + 1),
        _tool(f"call-{index}", index),
        _end(response_id, index, True, 3),
    ]


def _tools_response(index: int, calls: int) -> Records:
    response_id = f"resp-tools-{index}"
    records = [_start(response_id)]
    records.extend(_tool(f"call-{index}-{j}", j) for j in range(calls))
    records.append(_end(response_id, index, True, calls))
    return records


def _thinking_response(index: int, blocks: int) -> Records:
    response_id = f"resp-thinking-{index}"
    records = [_start(response_id)]
    for block in range(blocks):
        at = index + 5 * block
        records.extend(
            {"type": "thinking_delta", "text": f"{_WORDS[(at + j) % len(_WORDS)]}{at + j}"}
            for j in range(4)
        )
        records.append({"type": "thinking_signature", "signature": f"sig-{index}-{block}"})
    output = 5 * blocks
    usage = {
        "inputTokens": 1000 + index,
        "outputTokens": output,
        "cacheReadTokens": 600,
        "cache_write_tokens": 300,
        "reasoningTokens": output - 1,
    }
    records.append(
        {"type": "response_end", "responseId": response_id, "stopReason": "length", "usage": usage}
    )
    return records


def source_records(count: int) -> Records:
    """One response of ``count`` records (at least 2): start, text deltas, end."""
    if count < 2:
        raise ValueError("a response needs at least its start and end records")
    return _long_response(0, count - 2, "resp-source")


async def make_source(records: Records) -> AsyncIterator[dict[str, object]]:
    """An async record source yielding ``records`` one by one, never suspending.

    The records are built beforehand, so the source itself costs one generator step
    per record for every implementation alike.
    """
    for record in records:
        yield record


@dataclass(frozen=True, slots=True)
class Workload:
    """One workload: its responses' record lists, or one response's source records."""

    name: str
    description: str
    responses: tuple[Records, ...]
    from_source: bool = False
    schema_version: int = 1

    @property
    def response_count(self) -> int:
        return len(self.responses)

    @property
    def record_count(self) -> int:
        return sum(len(records) for records in self.responses)

    @property
    def chunk_count(self) -> int:
        """How many chunks a full consumption yields (text deltas and tool calls)."""
        return self.record_count - 2 * self.response_count

    def fixture(self) -> dict[str, object]:
        """A fixture of the workload; a fresh async source each call for ``source``.

        Record lists are shared between calls: no implementation mutates its input.
        """
        if self.from_source:
            responses: list[object] = [{"records": make_source(r)} for r in self.responses]
        else:
            responses = [{"records": records} for records in self.responses]
        return {"schemaVersion": self.schema_version, "responses": responses}


def _scaled(count: int, scale: float) -> int:
    return max(1, round(count * scale))


def build(name: str, scale: float = 1.0) -> Workload:
    """Build the workload ``name`` at ``scale`` (1.0 is the issue's size)."""
    if name == "long":
        deltas = _scaled(50_000, scale)
        return Workload(
            name,
            f"10 responses x {deltas:,} text deltas",
            tuple(_long_response(index, deltas) for index in range(10)),
        )
    if name == "wide":
        count = _scaled(20_000, scale)
        return Workload(
            name,
            f"{count:,} responses x (start, 2 deltas, 1 tool call, end)",
            tuple(_wide_response(index) for index in range(count)),
        )
    if name == "tools":
        calls = _scaled(5_000, scale)
        return Workload(
            name,
            f"10 responses x {calls:,} tool calls (nested arguments)",
            tuple(_tools_response(index, calls) for index in range(10)),
        )
    if name == "source":
        count = max(2, _scaled(100_000, scale))
        return Workload(
            name,
            f"1 response x {count:,} records from an async source",
            (source_records(count),),
            from_source=True,
        )
    if name == "thinking":
        blocks = _scaled(10_000, scale)
        return Workload(
            name,
            f"10 responses x {blocks:,} signed thinking blocks (version 2, a length end)",
            tuple(_thinking_response(index, blocks) for index in range(10)),
            schema_version=2,
        )
    raise ValueError(f"unknown workload {name!r} (known: {', '.join(WORKLOAD_NAMES)})")

"""``course-fixture replay [FILE]``: print every call's chunks and response."""

from __future__ import annotations

import argparse
import asyncio
import sys

from .._errors import FixtureProviderError
from .._json import PlainJson
from .._text import one_line, plural
from ._fixtures import (
    Call,
    Checked,
    RecordingOptions,
    add_recording_options,
    bundled_fixture,
    check,
    play,
)
from ._output import (
    BOLD,
    CYAN,
    DIM,
    EXIT_FAILED,
    EXIT_NOT_A_FIXTURE,
    EXIT_OK,
    GREEN,
    RED,
    Out,
    describe_chunk,
    describe_response,
    describe_usage,
    print_findings,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print every call's chunks and response (the bundled fixture by default)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``[FILE]``, ``--json``, ``--no-delay``, and for a recording ``--format``, ``--usage``."""
    parser.description = (
        "Replay a fixture, one call per response, printing chunks and responses. A "
        "recording (.sse, or a VCR cassette .yaml/.yml) is imported first, with --format "
        "and --usage."
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a fixture file or a recording")
    parser.add_argument(
        "--json", action="store_true", help="JSON lines, with each value's to_dict()"
    )
    parser.add_argument(
        "--no-delay",
        action="store_true",
        help="judge each record's delay (schema version 2) without waiting for it",
    )
    add_recording_options(parser)


def run(args: argparse.Namespace) -> int:
    """Replay ``args.file``, or the bundled round trip when there is none."""
    options = RecordingOptions.of(args)
    if args.file is None:
        with bundled_fixture() as bundled:
            return replay(bundled, as_json=args.json, wait=not args.no_delay)
    return replay(args.file, as_json=args.json, recording=options, wait=not args.no_delay)


def replay(
    name: str,
    *,
    as_json: bool,
    recording: RecordingOptions | None = None,
    wait: bool = True,
) -> int:
    """Replay the fixture or recording ``name`` (a recording imported with
    ``recording``'s options), waiting out delays when ``wait``; return the exit status."""
    out = Out(sys.stdout)
    checked = check(name, recording)
    if checked.refused:
        if as_json:
            for finding in checked.refused:
                out.json({"error": finding.to_dict()})
        else:
            print_findings(out, checked.refused)
        return EXIT_NOT_A_FIXTURE
    assert checked.adapter is not None
    count = checked.adapter.pending
    calls = asyncio.run(play(checked, "request", wait=wait))
    if not as_json:
        out.line(out.paint(f"replaying {one_line(name)}", BOLD) + f" ({plural(count, 'response')})")
    for call in calls:
        _print_call(out, checked, call, as_json=as_json)
    failed = sum(1 for call in calls if isinstance(call.outcome, FixtureProviderError))
    if not as_json:
        ok = len(calls) - failed
        summary = out.paint(f"{ok} ok", GREEN) if ok else "0 ok"
        if failed:
            summary += ", " + out.paint(f"{failed} failed", RED, BOLD)
        out.line(f"{plural(len(calls), 'call')}: {summary}")
    return EXIT_FAILED if failed else EXIT_OK


def _print_call(out: Out, checked: Checked, call: Call, *, as_json: bool) -> None:
    head: dict[str, PlainJson] = {"call": call.number, "requestId": call.request_id}
    if as_json:
        for chunk in call.chunks:
            out.json({**head, "chunk": chunk.to_dict()})
        if isinstance(call.outcome, FixtureProviderError):
            out.json(
                {
                    **head,
                    "error": checked.finding(call.outcome, "failed", len(call.chunks)).to_dict(),
                }
            )
        else:
            out.json({**head, "response": call.outcome.to_dict()})
        return
    out.line(
        out.paint(f"call {call.number}", BOLD)
        + f" -> response {call.index} "
        + out.paint(f"(request {call.request_id})", DIM)
    )
    for chunk in call.chunks:
        label = out.pad(chunk.type, 10, CYAN)
        out.line(f"  chunk     {label} [{chunk.content_index}] {describe_chunk(chunk)}")
    response = call.outcome
    if not isinstance(response, FixtureProviderError):
        blocks = plural(len(response.message.content), "block")
        out.line(
            f"  response  {out.pad(response.stop_reason, 10, GREEN)} "
            f"{one_line(response.response_id)}, message "
            f"{one_line(response.message.id)} ({blocks}), usage "
            f"{describe_usage(response.usage)}{describe_response(response)}"
        )
    else:
        finding = checked.finding(response, "failed")
        out.line(
            f"  error     {out.paint(finding.code or '', RED)} "
            f"{out.paint(one_line(finding.where) + ':', BOLD)} {one_line(finding.message or '')}"
            + (f" {out.paint(f'(at {one_line(finding.path)})', DIM)}" if finding.path else "")
        )

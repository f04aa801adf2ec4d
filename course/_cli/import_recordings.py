"""``course-fixture import RECORDING...``: recordings of real streams in, one fixture out.

Each recording file (SSE text, or a VCR cassette ending ``.yaml``/``.yml``, which may
hold several streams) becomes one response per stream, in argument order. The fixture
goes to stdout (or ``-o FILE``) as indented JSON that ``course-fixture validate``
accepts; one report line per stream goes to stderr. A refused recording prints
``FILE:LINE:COLUMN: CODE message`` and no fixture is written.

Exit status: 0 every recording imported, 1 a recording was refused, 2 a usage error or
an unreadable file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import cast

from .._json import JsonValue, PlainJson, thaw
from .._text import one_line, plural
from ..vendors._importing import FORMATS, read_recordings
from ..vendors._recording import Recording, RecordingError, RecordingErrorCode
from ._output import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, RED, Out

__all__ = ["HELP", "add_arguments", "run"]

HELP = "import recorded OpenAI or Anthropic streams (SSE files, VCR cassettes) as a fixture"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``RECORDING...``, ``--format``, ``--usage IN,OUT``, ``-o OUT``."""
    parser.description = (
        "Import each recording (the raw SSE body of a streamed response, or a VCR cassette) "
        "as one fixture response per stream, in order, and print the fixture. One line per "
        "stream goes to stderr: FILE: FORMAT, N records, OUTCOME."
    )
    parser.add_argument("recordings", nargs="+", metavar="RECORDING", help="recording files")
    parser.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="the wire format (default: told from each stream's first event)",
    )
    parser.add_argument(
        "--usage",
        type=_usage,
        metavar="IN,OUT",
        help="token counts for a successful stream that recorded none",
    )
    parser.add_argument("-o", "--output", metavar="OUT", help="write the fixture to OUT")


def _usage(text: str) -> tuple[int, int]:
    parts = text.split(",")
    try:
        counts = tuple(int(part, 10) for part in parts)
    except ValueError:
        counts = ()
    if len(counts) != 2 or not all(0 <= count <= 2**53 - 1 for count in counts):
        raise argparse.ArgumentTypeError(f"expected IN,OUT (two token counts), got {text!r}")
    return counts


def run(args: argparse.Namespace) -> int:
    """Import every recording; write the fixture only if all of them imported."""
    report = Out(sys.stderr)
    responses: list[PlainJson] = []
    status = EXIT_OK
    for path in args.recordings:
        try:
            for where, recording in read_recordings(path, args.format, args.usage):
                responses.append(thaw(recording.response))
                label = f"{path} ({where})" if where else path
                report.line(f"{one_line(label)}: {summary(recording)}")
        except RecordingError as error:
            report.line(report.paint(one_line(str(error)), RED))
            unreadable = error.code is RecordingErrorCode.RECORDING_UNREADABLE
            status = max(status, EXIT_NOT_A_FIXTURE if unreadable else EXIT_FAILED)
    if status != EXIT_OK:
        return status
    text = json.dumps({"schemaVersion": 1, "responses": responses}, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as exc:
        report.line(f"{one_line(args.output)}: cannot write: {exc.strerror or exc}")
        return EXIT_NOT_A_FIXTURE
    return EXIT_OK


def summary(recording: Recording) -> str:
    """``openai-chat, 5 records, toolCall, ignored: ping 2``."""
    records = cast("tuple[Mapping[str, JsonValue], ...]", recording.response["records"])
    last = records[-1] if records else {}
    if recording.truncated:
        outcome = "cut"
    elif last.get("type") == "transport_error":
        code = last.get("code")
        outcome = "transport_error" + ("" if code is None else f" {code}")
    else:
        outcome = "toolCall" if last.get("stopReason") == "tool_call" else "stop"
    text = f"{recording.format}, {plural(len(records), 'record')}, {outcome}"
    if recording.ignored:
        ignored = ", ".join(f"{key} {value}" for key, value in sorted(recording.ignored.items()))
        text += f", ignored: {ignored}"
    return text

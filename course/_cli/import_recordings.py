"""``course-fixture import RECORDING...``: recordings of real answers in, one fixture out.

Each recording file (SSE text, the JSON body of a non-streamed answer, or a VCR cassette
ending ``.yaml``/``.yml``, which may hold several model calls) becomes one response per
answer, in argument order; ``-`` reads one answer (SSE or a JSON body, never a
cassette) from standard input. The fixture goes to stdout (or ``-o FILE``, written to a
temporary file in the same folder, then renamed over it, so a failed write leaves the
old file whole) as indented JSON that ``course-fixture validate`` accepts; one report
line per answer goes to stderr, and one per cassette that skipped interactions. A
refused recording prints ``FILE:LINE:COLUMN: CODE message`` and no fixture is written.

Exit status: 0 every recording imported, 1 a recording was refused, 2 a usage error (an
output that is one of the inputs included) or an unreadable file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import cast

from .._json import JsonValue, PlainJson, thaw
from .._text import one_line, plural
from ..vendors._importing import FileImport, import_recording, read_file
from ..vendors._recording import Recording, RecordingError, RecordingErrorCode
from ._fixtures import RecordingOptions, add_recording_options
from ._output import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, RED, Out

__all__ = ["HELP", "STDIN", "add_arguments", "run", "summary"]

HELP = "import recorded OpenAI or Anthropic answers (SSE, JSON bodies, VCR cassettes) as a fixture"

STDIN = "-"
"""The recording argument that reads standard input."""
_STDIN_NAME = "<stdin>"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``RECORDING...``, ``--format``, ``--usage IN,OUT``, ``-o OUT``."""
    parser.description = (
        "Import each recording (the raw SSE body of a streamed response, the JSON body of a "
        "non-streamed one, or a VCR cassette) as one fixture response per answer, in order, "
        "and print the fixture. One line per answer goes to stderr: FILE: FORMAT, N records, "
        "OUTCOME."
    )
    parser.add_argument(
        "recordings",
        nargs="+",
        metavar="RECORDING",
        help="recording files (- reads one answer from standard input)",
    )
    add_recording_options(parser)
    parser.add_argument(
        "-o", "--output", metavar="OUT", help="write the fixture to OUT (never an input)"
    )


def run(args: argparse.Namespace) -> int:
    """Import every recording; write the fixture only if all of them imported."""
    report = Out(sys.stderr)
    options = RecordingOptions.of(args)
    if args.output is not None:
        same = _an_input(args.output, args.recordings)
        if same is not None:
            report.line(
                f"course-fixture import: the output {one_line(args.output)} is the recording "
                f"{one_line(same)}; refusing to overwrite it"
            )
            return EXIT_NOT_A_FIXTURE
    responses: list[PlainJson] = []
    status = EXIT_OK
    for path in args.recordings:
        try:
            loaded = _read(path, options)
        except RecordingError as error:
            report.line(report.paint(one_line(str(error)), RED))
            unreadable = error.code is RecordingErrorCode.RECORDING_UNREADABLE
            status = max(status, EXIT_NOT_A_FIXTURE if unreadable else EXIT_FAILED)
            continue
        name = _STDIN_NAME if path == STDIN else path
        thawed: dict[int, PlainJson] = {}  # a body a cassette repeats is thawed once
        for where, recording in loaded.recordings:
            response = thawed.get(id(recording))
            if response is None:
                response = thawed[id(recording)] = thaw(recording.response)
            responses.append(response)
            label = f"{name} ({where})" if where else name
            report.line(f"{one_line(label)}: {summary(recording)}")
        if loaded.skipped:
            report.line(
                f"{one_line(name)}: {plural(len(loaded.recordings), 'model call')} imported, "
                f"{plural(loaded.skipped, 'other interaction')} skipped"
            )
    if status != EXIT_OK:
        return status
    text = json.dumps({"schemaVersion": 1, "responses": responses}, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    problem = _write(args.output, text)
    if problem is not None:
        report.line(f"{one_line(args.output)}: cannot write: {problem}")
        return EXIT_NOT_A_FIXTURE
    return EXIT_OK


def _read(path: str, options: RecordingOptions) -> FileImport:
    if path != STDIN:
        return read_file(path, options.format, options.usage)
    stream = sys.stdin
    data: str | bytes = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    recording = import_recording(
        data, format=options.format, usage=options.usage, source=_STDIN_NAME
    )
    return FileImport((("", recording),))


def _an_input(output: str, inputs: list[str]) -> str | None:
    """The input that ``output`` names (the same file, or the same resolved path when the
    output does not exist yet), if any."""
    for name in inputs:
        if name == STDIN:
            continue
        try:
            if os.path.samefile(output, name):
                return name
        except OSError:  # one of them does not exist (yet)
            if os.path.realpath(output) == os.path.realpath(name):
                return name
    return None


def _write(path: str, text: str) -> str | None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file in the same
    folder, renamed over ``path``. The reason it failed, else ``None``."""
    path = os.path.realpath(path)  # through a symbolic link: the file it names is written
    folder = os.path.dirname(path)
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder
        )
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return exc.strerror or str(exc)
    return None


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

"""``course-fixture``: check, replay and describe fixture files from the command line.

::

    course-fixture validate FILE...   stream every response of each fixture; point at failures
    course-fixture replay [FILE]      print each call's chunks and response (bundled fixture
                                      by default; ``python -m course`` alone does this)
    course-fixture schema             the JSON Schema (draft 2020-12) of fixture versions 1
                                      and 2 (``--schema-version N``: one version's)
    course-fixture demo               a small agent loop against the bundled round trip
    course-fixture import RECORDING...  recorded OpenAI or Anthropic streams in, one fixture out
    course-fixture serve FIXTURE      answer the real SDKs over HTTP until Ctrl-C
    course-fixture record -o FIXTURE  a proxy to the real providers; writes what came back

``validate``
and ``replay`` also take recordings (``.sse``, and VCR cassettes ``.yaml``/``.yml``),
which they import first.

Exit status: 0 when every response settles, 1 when a response fails, 2 when a file is
not a fixture (unreadable, not strict JSON, refused by the adapter's constructor, in
whole or in one response, or a recording the importer refuses) or the command line is
wrong; 141 when the reader of the output goes away (``| head``). Positions are
``file:line:column``, 1-based, of the offending value (of the key, for a key that may
not be there; of its record, for a missing field; of the records array, for a missing
terminal), so an editor can jump there.

Each command is one module of this package with the same three names (``Command``),
listed once in ``COMMANDS``; they print through ``._output``. One process does all the
work: validating a thousand files costs one interpreter start. Standard library only.
Colour only on a terminal, never with ``NO_COLOR`` set.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Final, Protocol

from . import demo, import_recordings, record, replay, schema, serve, validate
from ._output import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, Finding

__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_NOT_A_FIXTURE",
    "EXIT_OK",
    "Command",
    "Finding",
    "main",
]


class Command(Protocol):
    """What a command module provides."""

    HELP: str
    """One line for ``--help``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments (and, if it likes, a longer description)."""

    def run(self, args: argparse.Namespace) -> int:
        """Do the work; return the exit status."""


COMMANDS: Final[Mapping[str, Command]] = {
    "validate": validate,
    "replay": replay,
    "schema": schema,
    "demo": demo,
    "import": import_recordings,
    "serve": serve,
    "record": record,
}
"""Every command, in ``--help`` order. Adding one is one module and one line here."""

DEFAULT_COMMAND: Final = "replay"
"""What runs with no command at all."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-fixture",
        description=(
            "Check, replay and describe fixture files of the course offline provider adapter. "
            "With no command, replay the bundled round-trip fixture."
        ),
        epilog=(
            "exit status: 0 every response settled, 1 a response failed, "
            "2 a file is not a fixture (or a usage error)"
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        subparser = subparsers.add_parser(name, help=command.HELP, description=command.HELP)
        command.add_arguments(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``course-fixture`` with ``argv`` (default: ``sys.argv[1:]``); return the status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            args = parser.parse_args([DEFAULT_COMMAND])
    except SystemExit as exit_:  # --help, or a usage error argparse already printed
        return exit_.code if isinstance(exit_.code, int) else EXIT_NOT_A_FIXTURE
    try:
        status = COMMANDS[args.command].run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as ``cat`` would.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return status


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush stays quiet."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # not a real file descriptor
        pass

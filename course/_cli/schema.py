"""``course-fixture schema``: the JSON Schema of the fixture format (both versions, or one)."""

from __future__ import annotations

import argparse
import json
import sys

from .._parser import SCHEMA_VERSIONS
from .._schema import fixture_schema
from ._output import EXIT_OK

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print the JSON Schema (draft 2020-12) of the fixture format, versions 1 and 2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--schema-version 1|2``."""
    parser.description = (
        "Print the JSON Schema of the fixture format, made from the parser: one schema "
        "accepting the valid shapes of both versions, chosen by `schemaVersion`, or of one "
        "version alone."
    )
    parser.add_argument(
        "--schema-version",
        type=int,
        choices=SCHEMA_VERSIONS,
        metavar="{1,2}",
        help="print this version's schema alone",
    )


def run(args: argparse.Namespace) -> int:
    """Print the schema, indented."""
    sys.stdout.write(json.dumps(fixture_schema(args.schema_version), indent=2) + "\n")
    return EXIT_OK

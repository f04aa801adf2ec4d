"""``course-fixture schema``: the JSON Schema of fixture format version 1."""

from __future__ import annotations

import argparse
import json
import sys

from .._schema import fixture_schema
from ._output import EXIT_OK

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print the JSON Schema (draft 2020-12) of fixture format version 1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments."""
    parser.description = "Print the JSON Schema of fixture format version 1, made from the parser."


def run(args: argparse.Namespace) -> int:
    """Print the schema, indented."""
    sys.stdout.write(json.dumps(fixture_schema(), indent=2) + "\n")
    return EXIT_OK

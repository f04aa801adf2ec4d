"""``course-fixture validate FILE...``: stream every response of each fixture; say where."""

from __future__ import annotations

import argparse
import asyncio
import sys

from ._fixtures import RecordingOptions, add_recording_options, by_response, check, expand, play
from ._output import (
    EXIT_FAILED,
    EXIT_NOT_A_FIXTURE,
    EXIT_OK,
    Finding,
    Out,
    Progress,
    print_findings,
    print_summary,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "stream every response of each fixture and report where each one fails"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``FILE...``, ``--quiet``, ``--json``, and for recordings ``--format``, ``--usage``."""
    parser.description = (
        "Load each file strictly, build the adapter and stream every response; print one "
        "line per response as FILE:LINE:COLUMN: response N: ok (...) or CODE message. "
        "Recordings (.sse, and VCR cassettes .yaml/.yml) are imported first, with --format "
        "and --usage. A directory stands for the *.json fixtures and *.sse recordings "
        "under it."
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="fixture files, recordings or folders"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print failures only (nothing when all settle)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per response")
    add_recording_options(parser)


def run(args: argparse.Namespace) -> int:
    """Validate every file; the worst outcome decides the exit status."""
    options = RecordingOptions.of(args)
    return validate(args.files, quiet=args.quiet, as_json=args.json, recording=options)


def validate(
    paths: list[str],
    *,
    quiet: bool,
    as_json: bool,
    recording: RecordingOptions | None = None,
) -> int:
    """Validate the files and folders ``paths`` (recordings imported with
    ``recording``'s options); return the exit status."""
    out = Out(sys.stdout)
    names = expand(paths)
    if not names:
        # An empty folder is most likely a wrong path: never a silent pass in CI.
        print("course-fixture validate: no fixture files found", file=sys.stderr)
        return EXIT_NOT_A_FIXTURE
    findings: list[Finding] = []
    progress = Progress(len(names))

    async def run_all() -> None:
        for done, name in enumerate(names, 1):
            checked = check(name, recording)
            results = [
                *checked.refused,
                # --quiet shows no settled response: no need to find where it is.
                *(
                    checked.outcome(call, locate_ok=not quiet)
                    for call in await play(checked, "validate")
                ),
            ]
            results.sort(key=by_response)
            for finding in results:
                findings.append(finding)
                if as_json and not (quiet and finding.status == "ok"):
                    out.json(finding.to_dict())
            progress.update(done)
            await asyncio.sleep(0)  # one file per event-loop step

    try:
        asyncio.run(run_all())
    finally:
        progress.clear()
    # A file is not a fixture when anything in it was refused; a refused response
    # counts as a failed one.
    not_fixtures = len({f.file for f in findings if f.status == "invalid"})
    ok = sum(1 for f in findings if f.status == "ok")
    failed = sum(1 for f in findings if f.status != "ok" and f.response is not None)
    if not as_json:
        shown = [f for f in findings if not (quiet and f.status == "ok")]
        print_findings(out, shown)
        if not quiet:
            print_summary(out, len(names), not_fixtures, ok, failed)
    if not_fixtures:
        return EXIT_NOT_A_FIXTURE
    return EXIT_FAILED if failed else EXIT_OK

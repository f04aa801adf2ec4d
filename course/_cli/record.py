"""``course-fixture record -o FIXTURE``: run the agent once against the real providers
through a local recording proxy, and write what came back as a fixture on Ctrl-C.

Runs in the foreground: prints the proxy's base URLs and how to point each SDK at them
(as ``serve`` does), then one line per recorded call (route, status, records, stop
reason). Ctrl-C (or SIGTERM) stops the proxy and writes the fixture: exit 0; 1 when a
call could not be imported (the error is printed and nothing is written); 2 for a
usage error, a missing extra (``course[record]``) or an output that cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Final

from .._text import one_line, plural
from ..vendors import _gemini
from ..vendors._answer import PROVIDERS
from ..vendors._record import DEFAULT_UPSTREAMS, FixtureRecorder, logger, record
from ..vendors._recording import RecordingError
from ..vendors._server import ROUTES
from ._output import BOLD, EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, RED, Out
from .serve import _interruptible, _log_lines, _sdk_lines

__all__ = ["HELP", "add_arguments", "run"]

HELP = "record a fixture: a local proxy to the real providers, written on Ctrl-C"

_WAKE_EVERY: Final = 1.0
"""Seconds between checks that the proxy is still running, while waiting for Ctrl-C."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``-o FIXTURE``, ``--host``, ``--port``, ``--<provider>-upstream``, ``--timing``."""
    parser.description = (
        "Forward each model call to the real provider (OpenAI Chat Completions and "
        "Responses, Anthropic Messages), stream every answer back as it arrives, and on "
        "Ctrl-C write what came back as one fixture, with no credential in it. Needs the "
        "extra course[record]."
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="FIXTURE", help="the fixture file to write"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every address)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port to listen on (default 0: any free port)"
    )
    for name, url in DEFAULT_UPSTREAMS.items():
        parser.add_argument(
            f"--{name}-upstream",
            metavar="URL",
            dest=f"{name}_upstream",
            help=f"where {name} calls go (default {url})",
        )
    parser.add_argument(
        "--timing",
        action="store_true",
        help="write each record's delay: the time it took to arrive",
    )


def run(args: argparse.Namespace) -> int:
    """Record until interrupted, then write the fixture."""
    out = Out(sys.stdout)
    upstreams = {
        name: getattr(args, f"{name}_upstream")
        for name in DEFAULT_UPSTREAMS
        if getattr(args, f"{name}_upstream") is not None
    }
    try:
        recorder = record(
            args.output, upstreams=upstreams, host=args.host, port=args.port, timing=args.timing
        )
    except (RuntimeError, ValueError) as exc:  # no extra; a bad URL, host or port
        print(f"course-fixture record: {exc}", file=sys.stderr)
        return EXIT_NOT_A_FIXTURE
    with _log_lines(logger), _interruptible():
        try:
            recorder.__enter__()
        except OSError as exc:  # the address is taken, or not this machine's
            print(
                f"course-fixture record: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return EXIT_NOT_A_FIXTURE
        try:
            _banner(out, recorder, args.output, {**DEFAULT_UPSTREAMS, **upstreams})
            sys.stdout.flush()
            while recorder.running:  # until Ctrl-C, or until the proxy stops by itself
                time.sleep(_WAKE_EVERY)
        except KeyboardInterrupt:
            pass
        finally:
            recorder._stop()
    return _write(out, recorder)


def _write(out: Out, recorder: FixtureRecorder) -> int:
    failure: RecordingError | None = None
    try:
        recorder._write()
    except RecordingError as error:
        failure = error
    except OSError as exc:
        print(
            f"course-fixture record: cannot write {one_line(recorder.path)}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return EXIT_NOT_A_FIXTURE
    if failure is not None:
        err = Out(sys.stderr)
        err.line(err.paint(one_line(str(failure)), RED))
        err.line(f"nothing written to {one_line(recorder.path)}")
        return EXIT_FAILED
    count = len(recorder._responses())
    out.line(f"wrote {plural(count, 'response')} to {one_line(recorder.path)}")
    return EXIT_OK


def _banner(out: Out, recorder: FixtureRecorder, name: str, upstreams: dict[str, str]) -> None:
    url = recorder.url
    out.line(
        f"Recording to {one_line(name)} through "
        + out.paint(url, BOLD)
        + " (Ctrl-C to write and stop)"
    )
    for path, format in ROUTES.items():
        target = upstreams[PROVIDERS[format]].rstrip("/") + path
        out.line(f"  {format:<17} POST {url}{path} -> {one_line(target)}")
    target = upstreams[PROVIDERS[_gemini.FORMAT]].rstrip("/") + _gemini.ROUTES_SHOWN
    out.line(f"  {_gemini.FORMAT:<17} POST {url}{_gemini.ROUTES_SHOWN} -> {one_line(target)}")
    _sdk_lines(out, url)

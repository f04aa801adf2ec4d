"""``course-fixture serve FIXTURE``: answer the real SDKs over HTTP from a fixture, until Ctrl-C.

Runs in the foreground: prints the base URLs and how to point each SDK at them, then
one line per request (route, the fixture response it took, the outcome). Ctrl-C (or
SIGTERM) stops the server, aborting responses in flight, and exits 0. Needs the
optional extra ``course[serve]`` (uvicorn).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Final

from .._text import one_line, plural
from ..vendors._gemini import ROUTES_SHOWN
from ..vendors._server import MODELS_PATH, ROUTES, FixtureServer, logger, serve
from ._fixtures import load
from ._output import (
    BOLD,
    DIM,
    EXIT_NOT_A_FIXTURE,
    EXIT_OK,
    Finding,
    Out,
    print_findings,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve a fixture over HTTP to the real OpenAI, Anthropic and Gemini SDKs, until Ctrl-C"

_STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)

_WAKE_EVERY: Final = 1.0
"""Seconds between checks that the server is still running, while waiting for Ctrl-C."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``FIXTURE``, ``--host``, ``--port``."""
    parser.description = (
        "Serve a fixture's responses in the providers' own wire formats (OpenAI Chat "
        "Completions, OpenAI Responses, Anthropic Messages), one response per request, "
        "until Ctrl-C. Needs the extra course[serve]."
    )
    parser.add_argument("file", metavar="FIXTURE", help="a fixture file")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every address)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port to listen on (default 0: any free port)"
    )


def run(args: argparse.Namespace) -> int:
    """Serve ``args.file`` until interrupted."""
    out = Out(sys.stdout)
    adapter = load(args.file)
    if isinstance(adapter, Finding):
        print_findings(out, [adapter])
        return EXIT_NOT_A_FIXTURE
    try:
        server = serve(adapter, host=args.host, port=args.port)
    except (RuntimeError, ValueError) as exc:  # no uvicorn; a bad host or port
        print(f"course-fixture serve: {exc}", file=sys.stderr)
        return EXIT_NOT_A_FIXTURE
    with _log_lines(logger), _interruptible():
        try:
            with server:
                _banner(out, server, args.file, adapter.pending)
                sys.stdout.flush()
                _wait(server)
        except KeyboardInterrupt:
            pass
        except OSError as exc:  # the address is taken, or not this machine's
            print(
                f"course-fixture serve: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return EXIT_NOT_A_FIXTURE
    out.line(
        f"stopped after {plural(adapter.call_count, 'request')}; "
        f"{plural(adapter.pending, 'response')} left"
    )
    return EXIT_OK


def _banner(out: Out, server: FixtureServer, name: str, responses: int) -> None:
    url = server.url
    out.line(
        f"Serving {plural(responses, 'response')} of {one_line(name)} on "
        + out.paint(url, BOLD)
        + " (Ctrl-C to stop)"
    )
    for path, format in ROUTES.items():
        out.line(f"  {format:<17} POST {url}{path}")
    out.line(f"  {'gemini':<17} POST {url}{ROUTES_SHOWN}")
    out.line(f"  {'models':<17} GET  {url}{MODELS_PATH}")
    _sdk_lines(out, url, api_key="test")


def _sdk_lines(out: Out, url: str, *, api_key: str | None = None) -> None:
    """How to point each SDK at ``url``, with ``api_key`` when it needs no real one."""
    for sdk, base_url, env in (("OpenAI", f"{url}/v1", "OPENAI"), ("Anthropic", url, "ANTHROPIC")):
        argument = "" if api_key is None else f', api_key="{api_key}"'
        variable = "" if api_key is None else f" {env}_API_KEY={api_key}"
        out.line(
            f'  {sdk + ":":<12}{sdk}(base_url="{base_url}"{argument})'
            + out.paint(f"   # or {env}_BASE_URL={base_url}{variable}", DIM)
        )
    argument = "" if api_key is None else f'api_key="{api_key}", '
    variable = "" if api_key is None else f" GEMINI_API_KEY={api_key}"
    out.line(
        f"  {'Gemini:':<12}genai.Client({argument}"
        f'http_options=types.HttpOptions(base_url="{url}"))'
        + out.paint(f"   # or GOOGLE_GEMINI_BASE_URL={url}{variable}", DIM)
    )


def _wait(server: FixtureServer) -> None:
    """Until Ctrl-C, or until the server stops by itself."""
    while server.running:
        time.sleep(_WAKE_EVERY)


@contextlib.contextmanager
def _log_lines(logger: logging.Logger) -> Iterator[None]:
    """``logger``'s records (serve's one per request, record's one per call), on stdout,
    for as long as the command runs."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the server, even where a shell started this process
    with SIGINT ignored (signal handlers are the main thread's alone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _raise_interrupt) for number in _STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)

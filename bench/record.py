"""Benchmark: the recording proxy's overhead, against the client talking to the upstream directly.

The upstream is ``bench/serve.py``'s baseline: a plain ASGI app on uvicorn streaming
pre-rendered ``openai-chat`` chunks (many text deltas, then a tool call), one send per
chunk, as fast as it can. Two paths to it, measured in the same run, alternating:

- ``direct``: the client talks to the upstream;
- ``proxied``: the client talks to ``course.vendors.record(...)``, which forwards to the
  same upstream, streams every network chunk back as it arrives, and keeps it (each
  answer is imported when it ends; the fixture is written when the recorder stops,
  outside the timings).

Readers, as in ``bench/serve.py``: the real ``openai`` client
(``chat.completions.create(stream=True)``, iterated to the end: chunks per second), a raw
``httpx2`` reader that parses nothing (the proxy's own cost shows there), and time to
first chunk (a small response, from the call until the first text arrives). Figures are
medians; ratios are taken within this run. Both placements are measured: everything in
threads of the client's process (as a test suite runs the recorder), and the upstream
and the recorder each in a process of its own.

Targets: time to first chunk within 1.2x of direct, chunks per second at least 0.8x.

Usage: python bench/record.py [--quick] [--chunks N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from serve import BaselineServer, Figures, Urls, fixture, measure, sent_bodies

from course.vendors import record


def upstream(chunks: int) -> BaselineServer:
    """The upstream: one response of ``chunks`` chunks, sent whenever asked, with its
    usage chunk, as OpenAI streams one when asked (without it there is nothing to record)."""
    return BaselineServer(with_usage(sent_bodies(fixture(chunks, 1))))


def with_usage(bodies: list[bytes]) -> list[bytes]:
    """The bodies ``serve`` sends when the request asks for usage: ``[DONE]`` preceded by
    the usage chunk (``choices: []``), as OpenAI sends it."""
    last = bodies[-1]
    done = last.rindex(b"data: [DONE]")
    head = last[:done].rsplit(b"data: ", 1)[-1]
    response_id = head.split(b'"id":"', 1)[1].split(b'"', 1)[0].decode()
    usage = {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    chunk = b"data: " + json.dumps(usage).encode() + b"\n\n"
    return [*bodies[:-1], last[:done] + chunk + last[done:]]


@contextmanager
def in_threads(chunks: int, folder: Path) -> Iterator[Urls]:
    """Upstreams and recorders in threads of this process, as a test suite runs them."""
    with ExitStack() as stack:
        big = stack.enter_context(upstream(chunks))
        small = stack.enter_context(upstream(2))
        proxy_big = stack.enter_context(record(folder / "big.json", upstreams={"openai": big.url}))
        proxy_small = stack.enter_context(
            record(folder / "small.json", upstreams={"openai": small.url})
        )
        yield {"course": (proxy_big.url, proxy_small.url), "baseline": (big.url, small.url)}


@contextmanager
def in_processes(chunks: int, folder: Path) -> Iterator[Urls]:
    """The upstreams and the recorders each in a process of its own: no shared GIL."""
    children: list[subprocess.Popen[str]] = []

    def start(*args: str) -> str:
        child = subprocess.Popen(
            [sys.executable, __file__, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        children.append(child)
        assert child.stdout is not None
        return child.stdout.readline().strip()

    try:
        big = start("--serve", "upstream", "--chunks", str(chunks))
        small = start("--serve", "upstream", "--chunks", "2")
        proxy_big = start("--serve", "proxy", "--upstream", big, "--to", str(folder / "b.json"))
        proxy_small = start("--serve", "proxy", "--upstream", small, "--to", str(folder / "s.json"))
        yield {"course": (proxy_big, proxy_small), "baseline": (big, small)}
    finally:
        for child in children:
            child.communicate()  # closing its stdin stops it


def serve_until_stdin_closes(kind: str, chunks: int, upstream_url: str, to: str) -> None:
    """The child of ``in_processes``: one server, its URL on stdout."""
    server = (
        upstream(chunks) if kind == "upstream" else record(to, upstreams={"openai": upstream_url})
    )
    with server:
        print(server.url, flush=True)
        sys.stdin.read()


def report(placement: str, figures: Figures) -> None:
    rate = {name: statistics.median(values) for name, values in figures.openai.items()}
    raw = {name: statistics.median(values) for name, values in figures.raw.items()}
    first = {name: statistics.median(values) for name, values in figures.first.items()}
    print(f"\n{placement}")
    print(f"  {'path':<9} {'openai chunks/s':>16} {'raw chunks/s':>13} {'first chunk':>12}")
    for name, label in (("course", "proxied"), ("baseline", "direct")):
        print(
            f"  {label:<9} {rate[name]:>16,.0f} {raw[name]:>13,.0f} {first[name] * 1000:>9.2f} ms"
        )
    print(
        f"  proxied / direct: openai client {rate['course'] / rate['baseline']:.2f}x "
        f"(target >= 0.8x), raw reader {raw['course'] / raw['baseline']:.2f}x, "
        f"time to first chunk {first['course'] / first['baseline']:.2f}x "
        "(target <= 1.2x; lower is better)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check it works")
    parser.add_argument("--chunks", type=int, default=20_000, help="chunks per response")
    parser.add_argument("--runs", type=int, default=9, help="timed runs per path")
    parser.add_argument("--serve", choices=["upstream", "proxy"], help=argparse.SUPPRESS)
    parser.add_argument("--upstream", default="", help=argparse.SUPPRESS)
    parser.add_argument("--to", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve_until_stdin_closes(args.serve, args.chunks, args.upstream, args.to)
        return
    chunks, runs, latency_runs = (2_000, 3, 20) if args.quick else (args.chunks, args.runs, 200)
    print(f"openai-chat, {chunks:,} chunks per response, {runs} runs per path, medians")
    with tempfile.TemporaryDirectory() as folder:
        with in_threads(chunks, Path(folder)) as urls:
            report(
                "upstream and recorder in threads of the client's process (as tests run them)",
                measure(urls, chunks, runs, latency_runs),
            )
        with in_processes(chunks, Path(folder)) as urls:
            report(
                "upstream and recorder in processes of their own",
                measure(urls, chunks, runs, latency_runs),
            )


if __name__ == "__main__":
    main()

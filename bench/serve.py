"""Benchmark: ``serve`` against a plain uvicorn server, both read by the real ``openai`` client.

One response of many text deltas (then a tool call) in the ``openai-chat`` format. Two
servers on loopback, each in a background thread of this process, as a test suite
runs them:

- ``course``: ``course.vendors.serve(fixture)``: per request, the adapter streams the
  fixture's records, each chunk is rendered and sent as it comes;
- ``baseline``: a plain ASGI app on uvicorn with the very same settings, which sends
  the same bytes, pre-rendered, one ``http.response.body`` message per chunk, as
  ``serve`` sends them. It is what a hand-written fake server costs: the floor.

The client is ``openai.OpenAI(...).chat.completions.create(stream=True)``, iterated to
the end: chunks per second delivered to the caller. The SDK's own parsing dominates
that figure, so a second reader shows the servers' own cost: ``httpx2`` reading the
raw body (no parsing at all). Time to first chunk is measured with a small response
(one text delta) through the SDK: from the call until the first text arrives. Runs
alternate between the two servers; figures are medians (the best run is shown too),
and ratios are taken within this run.

Both placements are measured: the servers in threads of the client's process (how a
test suite runs ``serve``: the client and the server share one interpreter lock), and
each server in a process of its own.

Usage: python bench/serve.py [--quick] [--chunks N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx2
import openai
import uvicorn

from course.vendors import serve
from course.vendors._server import UVICORN_SETTINGS, FixtureApp, Message, Receive, Scope, Send

Urls = dict[str, tuple[str, str]]
"""Per server: the URL serving the big responses, and the one serving small ones."""


def fixture(chunks: int, responses: int) -> dict[str, object]:
    """``responses`` copies of one response: ``chunks - 1`` text deltas, then a tool call."""
    records: list[object] = [
        {"type": "response_start", "responseId": "chatcmpl-bench", "role": "assistant"}
    ]
    records += [{"type": "text_delta", "text": f"word {i} "} for i in range(chunks - 1)]
    records.append({"type": "tool_call", "id": "call-1", "name": "f", "arguments": {"x": 1}})
    records.append(
        {
            "type": "response_end",
            "responseId": "chatcmpl-bench",
            "stopReason": "tool_call",
            "usage": {"inputTokens": 1, "outputTokens": chunks},
        }
    )
    return {"schemaVersion": 1, "responses": [{"records": records}] * responses}


def sent_bodies(data: dict[str, object]) -> list[bytes]:
    """The body messages ``serve`` sends for the fixture's first response, byte for byte."""
    bodies: list[bytes] = []

    async def run() -> None:
        request = [b'{"model": "m", "stream": true}']

        async def receive() -> Message:
            if request:
                return {"type": "http.request", "body": request.pop(), "more_body": False}
            await asyncio.Event().wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.body":
                bodies.append(message["body"])  # type: ignore[arg-type]

        scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions"}
        await FixtureApp(data)(scope, receive, send)

    asyncio.run(run())
    return bodies


class Baseline:
    """The floor: uvicorn streaming pre-rendered bytes, one send per chunk."""

    def __init__(self, bodies: list[bytes]) -> None:
        self.bodies = bodies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        last = len(self.bodies) - 1
        for index, body in enumerate(self.bodies):
            await send({"type": "http.response.body", "body": body, "more_body": index < last})


class BaselineServer:
    """``Baseline`` on uvicorn in a thread, configured as ``FixtureServer`` configures it."""

    def __init__(self, bodies: list[bytes]) -> None:
        config = uvicorn.Config(Baseline(bodies), host="127.0.0.1", port=0, **UVICORN_SETTINGS)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> BaselineServer:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.001)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.should_exit = True
        self.thread.join()


def read_all(client: openai.OpenAI) -> int:
    """Stream one response to the end; return how many chunks carried content."""
    count = 0
    stream = client.chat.completions.create(model="m", messages=[], stream=True)
    for chunk in stream:
        if chunk.choices and (chunk.choices[0].delta.content or chunk.choices[0].delta.tool_calls):
            count += 1
    return count


def read_raw(http: httpx2.Client, url: str) -> int:
    """Stream one response's raw bytes to the end, unparsed; return how many."""
    size = 0
    body = {"model": "m", "stream": True, "messages": []}
    with http.stream("POST", url + "/v1/chat/completions", json=body) as response:
        for part in response.iter_raw():
            size += len(part)
    return size


def first_chunk(client: openai.OpenAI) -> float:
    """Seconds from the call until the first text arrives (the rest is read too)."""
    began = time.perf_counter()
    stream = client.chat.completions.create(model="m", messages=[], stream=True)
    seconds = 0.0
    for chunk in stream:
        if not seconds and chunk.choices and chunk.choices[0].delta.content:
            seconds = time.perf_counter() - began
    return seconds


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock seconds, and CPU seconds of this whole process (every thread)."""
    gc.collect()
    began, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - began, time.process_time() - cpu


@contextmanager
def in_threads(big: dict[str, object], small: dict[str, object]) -> Iterator[Urls]:
    """Both servers in threads of this process, as a test suite runs ``serve``."""
    with (
        serve(big) as course_big,
        serve(small) as course_small,
        BaselineServer(sent_bodies(big)) as base_big,
        BaselineServer(sent_bodies(small)) as base_small,
    ):
        yield {
            "course": (course_big.url, course_small.url),
            "baseline": (base_big.url, base_small.url),
        }


@contextmanager
def in_processes(chunks: int, responses: int, small_responses: int) -> Iterator[Urls]:
    """Each server in a process of its own: no GIL shared with the client."""
    children: list[subprocess.Popen[str]] = []

    def start(kind: str, size: int, count: int) -> str:
        child = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--serve",
                kind,
                "--chunks",
                str(size),
                "--runs",
                str(count),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        children.append(child)
        assert child.stdout is not None
        return child.stdout.readline().strip()

    try:
        yield {
            kind: (start(kind, chunks, responses), start(kind, 2, small_responses))
            for kind in ("course", "baseline")
        }
    finally:
        for child in children:
            child.communicate()  # closing its stdin stops it


def serve_until_stdin_closes(kind: str, chunks: int, responses: int) -> None:
    """The child of ``in_processes``: one server, its URL on stdout."""
    data = fixture(chunks, responses)
    server = serve(data) if kind == "course" else BaselineServer(sent_bodies(data))
    with server:
        print(server.url, flush=True)
        sys.stdin.read()


@dataclass
class Figures:
    """Medians (and the best) of one placement's runs, per server."""

    openai: dict[str, list[float]] = field(default_factory=lambda: {"course": [], "baseline": []})
    raw: dict[str, list[float]] = field(default_factory=lambda: {"course": [], "baseline": []})
    first: dict[str, list[float]] = field(default_factory=lambda: {"course": [], "baseline": []})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"course": [], "baseline": []})


def measure(urls: Urls, chunks: int, runs: int, latency_runs: int) -> Figures:
    figures = Figures()
    clients = {
        name: (
            openai.OpenAI(base_url=big + "/v1", api_key="test", max_retries=0),
            openai.OpenAI(base_url=small + "/v1", api_key="test", max_retries=0),
        )
        for name, (big, small) in urls.items()
    }
    with httpx2.Client() as http:
        for name, (client, small_client) in clients.items():  # warm up: imports, pools
            assert read_all(client) == chunks, name
            read_raw(http, urls[name][0])
            first_chunk(small_client)
        for _ in range(runs):  # alternating, so that drift hits both alike
            for name, (client, _small) in clients.items():
                seconds, cpu = timed(lambda c=client: read_all(c))  # type: ignore[misc]
                figures.openai[name].append(chunks / seconds)
                figures.cpu[name].append(chunks / cpu)
                seconds, _ = timed(lambda u=urls[name][0]: read_raw(http, u))  # type: ignore[misc]
                figures.raw[name].append(chunks / seconds)
        for _ in range(latency_runs):
            for name, (_client, small_client) in clients.items():
                figures.first[name].append(first_chunk(small_client))
    for client, small_client in clients.values():
        client.close()
        small_client.close()
    return figures


def report(placement: str, figures: Figures, *, cpu: bool) -> None:
    rate = {name: statistics.median(values) for name, values in figures.openai.items()}
    best = {name: max(values) for name, values in figures.openai.items()}
    raw = {name: statistics.median(values) for name, values in figures.raw.items()}
    first = {name: statistics.median(values) for name, values in figures.first.items()}
    print(f"\n{placement}")
    print(
        f"  {'server':<9} {'openai chunks/s':>16} {'(best)':>9} {'raw chunks/s':>13} "
        f"{'first chunk':>12}"
    )
    for name in ("course", "baseline"):
        print(
            f"  {name:<9} {rate[name]:>16,.0f} {best[name]:>9,.0f} {raw[name]:>13,.0f} "
            f"{first[name] * 1000:>9.2f} ms"
        )
    print(
        f"  course / baseline: openai client {rate['course'] / rate['baseline']:.2f}x "
        f"(best {best['course'] / best['baseline']:.2f}x; target >= 0.8x), "
        f"raw reader {raw['course'] / raw['baseline']:.2f}x, "
        f"time to first chunk {first['course'] / first['baseline']:.2f}x (lower is better)"
    )
    if cpu:  # client and server share this process: its CPU time is the whole cost
        per_cpu = {name: statistics.median(values) for name, values in figures.cpu.items()}
        print(
            f"  chunks per CPU-second of client and server together: "
            f"course {per_cpu['course']:,.0f}, baseline {per_cpu['baseline']:,.0f}, "
            f"{per_cpu['course'] / per_cpu['baseline']:.2f}x (immune to other processes' load)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check it works")
    parser.add_argument("--chunks", type=int, default=20_000, help="chunks per response")
    parser.add_argument("--runs", type=int, default=9, help="timed runs per server")
    parser.add_argument("--serve", choices=["course", "baseline"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve_until_stdin_closes(args.serve, args.chunks, args.runs)
        return
    chunks, runs, latency_runs = (2_000, 3, 20) if args.quick else (args.chunks, args.runs, 200)
    responses = 2 * runs + 2  # warm-up and timed runs, SDK and raw reader
    print(f"openai-chat, {chunks:,} chunks per response, {runs} runs per server, medians")
    with in_threads(fixture(chunks, responses), fixture(2, latency_runs + 1)) as urls:
        report(
            "servers in threads of the client's process (as tests run them)",
            measure(urls, chunks, runs, latency_runs),
            cpu=True,
        )
    with in_processes(chunks, responses, latency_runs + 1) as urls:
        report(
            "servers in processes of their own",
            measure(urls, chunks, runs, latency_runs),
            cpu=False,
        )


if __name__ == "__main__":
    main()

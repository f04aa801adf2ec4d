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
alternate between the two servers; figures are medians, and ratios are taken within
this run.

Usage: python bench/serve.py [--quick] [--chunks N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import threading
import time
from collections.abc import Callable

import httpx2
import openai
import uvicorn

from course.vendors import serve
from course.vendors._server import FixtureApp, Message, Receive, Scope, Send


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
        config = uvicorn.Config(
            Baseline(bodies),
            host="127.0.0.1",
            port=0,
            interface="asgi3",
            lifespan="off",
            ws="none",
            loop="asyncio",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
        )
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


def timed(action: Callable[[], object]) -> float:
    gc.collect()
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check it works")
    parser.add_argument("--chunks", type=int, default=20_000, help="chunks per response")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per server")
    args = parser.parse_args()
    chunks, runs, latency_runs = (2_000, 3, 20) if args.quick else (args.chunks, args.runs, 200)

    big = fixture(chunks, 2 * runs + 2)
    small = fixture(2, latency_runs + 1)
    throughput: dict[str, list[float]] = {"course": [], "baseline": []}
    raw: dict[str, list[float]] = {"course": [], "baseline": []}
    latency: dict[str, list[float]] = {"course": [], "baseline": []}
    with (
        serve(big) as course_big,
        serve(small) as course_small,
        BaselineServer(sent_bodies(big)) as base_big,
        BaselineServer(sent_bodies(small)) as base_small,
    ):
        clients = {
            name: (
                openai.OpenAI(base_url=big_url + "/v1", api_key="test", max_retries=0),
                openai.OpenAI(base_url=small_url + "/v1", api_key="test", max_retries=0),
            )
            for name, big_url, small_url in [
                ("course", course_big.url, course_small.url),
                ("baseline", base_big.url, base_small.url),
            ]
        }
        urls = {"course": course_big.url, "baseline": base_big.url}
        http = httpx2.Client()
        for name, (client, small_client) in clients.items():  # warm up: imports, pools
            assert read_all(client) == chunks, name
            read_raw(http, urls[name])
            first_chunk(small_client)
        for _ in range(runs):
            for name, (client, _small) in clients.items():
                throughput[name].append(chunks / timed(lambda c=client: read_all(c)))  # type: ignore[misc]
                raw[name].append(chunks / timed(lambda u=urls[name]: read_raw(http, u)))  # type: ignore[misc]
        http.close()
        for _ in range(latency_runs):
            for name, (_client, small_client) in clients.items():
                latency[name].append(first_chunk(small_client))
        for client, small_client in clients.values():
            client.close()
            small_client.close()

    rate = {name: statistics.median(values) for name, values in throughput.items()}
    raw_rate = {name: statistics.median(values) for name, values in raw.items()}
    first = {name: statistics.median(values) for name, values in latency.items()}
    print(f"openai-chat, {chunks:,} chunks per response, {runs} runs each")
    print(f"{'server':<10} {'openai chunks/s':>16} {'raw chunks/s':>14} {'first chunk':>13}")
    for name in ("course", "baseline"):
        print(
            f"{name:<10} {rate[name]:>16,.0f} {raw_rate[name]:>14,.0f} "
            f"{first[name] * 1000:>10.2f} ms"
        )
    print(
        f"course / baseline, openai client: {rate['course'] / rate['baseline']:.2f}x "
        "(target >= 0.8x)"
    )
    print(f"course / baseline, raw reader:    {raw_rate['course'] / raw_rate['baseline']:.2f}x")
    print(
        f"course / baseline, time to first chunk: {first['course'] / first['baseline']:.2f}x "
        "(lower is better)"
    )


if __name__ == "__main__":
    main()

"""Benchmark: ``serve`` in the ``gemini`` format against a plain server, read by ``google-genai``.

``bench/serve.py``'s method, on Gemini's stream: one response of many text deltas, then
a function call with its ``thoughtSignature``, at
``/v1beta/models/{id}:streamGenerateContent?alt=sse``. Two servers on loopback, each in
a background thread of this process, as a test suite runs them:

- ``course``: ``course.vendors.serve(fixture)``: per request, the adapter streams the
  fixture's records, each chunk is rendered and sent as it comes;
- ``baseline``: ``bench/serve.py``'s plain ASGI app on uvicorn with the very same
  settings, sending the same bytes pre-rendered, one ``http.response.body`` per chunk.

The client is ``genai.Client(...).models.generate_content_stream``, iterated to the end:
chunks per second delivered to the caller; a raw ``httpx2`` reader (no parsing) shows
the servers' own cost. Runs alternate between the two servers; medians, ratios within
this run (target: at least 0.8x the baseline through the SDK).

Usage: python bench/serve_gemini_bench.py [--quick] [--chunks N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics

import httpx2
from google import genai
from google.genai import types
from serve import BaselineServer, timed

from course.vendors import serve
from course.vendors._server import FixtureApp, Message

PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
RESPONSE_ID = "qpc2afWVFJK4vr0Pq6WiyAU"


def fixture(chunks: int, responses: int) -> dict[str, object]:
    """``responses`` copies of one response: ``chunks - 1`` text deltas, then a signed call."""
    records: list[object] = [
        {"type": "response_start", "responseId": RESPONSE_ID, "role": "assistant"}
    ]
    records += [{"type": "text_delta", "text": f"word {i} "} for i in range(chunks - 1)]
    signature = base64.b64encode(bytes(range(256))).decode()
    call = {"type": "tool_call", "id": "c", "name": "f", "arguments": {"x": 1}}
    records.append({**call, "signature": signature})
    usage = {"inputTokens": 1, "outputTokens": chunks}
    end = {"type": "response_end", "responseId": RESPONSE_ID, "stopReason": "tool_call"}
    records.append({**end, "usage": usage})
    return {"schemaVersion": 2, "responses": [{"records": records}] * responses}


def sent_bodies(data: dict[str, object]) -> list[bytes]:
    """The body messages ``serve`` sends for the fixture's first response, byte for byte."""
    bodies: list[bytes] = []

    async def run() -> None:
        request = [b"{}"]

        async def receive() -> Message:
            if request:
                return {"type": "http.request", "body": request.pop(), "more_body": False}
            await asyncio.Event().wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.body":
                bodies.append(message["body"])  # type: ignore[arg-type]

        scope = {"type": "http", "method": "POST", "path": PATH, "query_string": b"alt=sse"}
        await FixtureApp(data)(scope, receive, send)

    asyncio.run(run())
    return bodies


def read_all(client: genai.Client) -> int:
    """Stream one response to the end through the SDK; return how many chunks had a part."""
    stream = client.models.generate_content_stream(model="gemini-2.5-flash", contents="x")
    return sum(1 for chunk in stream if chunk.candidates and chunk.candidates[0].content)


def read_raw(http: httpx2.Client, url: str) -> int:
    """Stream one response's raw bytes to the end, unparsed; return how many."""
    size = 0
    with http.stream("POST", f"{url}{PATH}?alt=sse", json={}) as response:
        for part in response.iter_raw():
            size += len(part)
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check it works")
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks per response")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per server")
    args = parser.parse_args()
    chunks, runs = (1_000, 3) if args.quick else (args.chunks, args.runs)
    data = fixture(chunks, 2 * runs + 2)  # warm-up and timed runs, SDK and raw reader
    print(f"gemini, {chunks:,} chunks per response, {runs} runs per server, medians")
    sdk: dict[str, list[float]] = {"course": [], "baseline": []}
    raw: dict[str, list[float]] = {"course": [], "baseline": []}
    with (
        serve(data) as course,
        BaselineServer(sent_bodies(data)) as baseline,
        httpx2.Client() as http,
    ):
        urls = {"course": course.url, "baseline": baseline.url}
        clients = {
            name: genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url))
            for name, url in urls.items()
        }
        for name, client in clients.items():  # warm up: imports, pools
            assert read_all(client) == chunks + 1, name  # and the finish chunk
            read_raw(http, urls[name])
        for _ in range(runs):  # alternating, so that drift hits both alike
            for name, client in clients.items():
                seconds, _ = timed(lambda c=client: read_all(c))  # type: ignore[misc]
                sdk[name].append(chunks / seconds)
                seconds, _ = timed(lambda u=urls[name]: read_raw(http, u))  # type: ignore[misc]
                raw[name].append(chunks / seconds)
    rate = {name: statistics.median(values) for name, values in sdk.items()}
    bare = {name: statistics.median(values) for name, values in raw.items()}
    print(f"  {'server':<9} {'google-genai chunks/s':>22} {'raw chunks/s':>13}")
    for name in ("course", "baseline"):
        print(f"  {name:<9} {rate[name]:>22,.0f} {bare[name]:>13,.0f}")
    print(
        f"  course / baseline: google-genai {rate['course'] / rate['baseline']:.2f}x "
        f"(target >= 0.8x), raw reader {bare['course'] / bare['baseline']:.2f}x"
    )


if __name__ == "__main__":
    main()

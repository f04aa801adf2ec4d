"""Benchmark: importing a ``gemini`` recording, against google-genai's own parsing and the floor.

One SSE recording of N chunks, generated in code as Gemini streams them: thought
summaries, then text chunks, each with its cumulative ``usageMetadata``, then one
function call with its ``thoughtSignature`` and the ``STOP`` chunk. Each contender
starts from the recording's bytes:

- ``course``: ``course.vendors.import_recording(data)``, every check included;
- ``sdk``: what google-genai does with the same bytes in ``generate_content_stream``:
  its SSE line reader (``HttpResponse.segments``), the ``json.dumps`` / ``json.loads``
  round of ``request_streamed``, ``_GenerateContentResponse_from_mldev`` and
  ``GenerateContentResponse._from_response`` (its pydantic models);
- ``floor``: splitting the SSE text into events and ``json.loads`` of each event's data
  (``bench/import_recordings.py``'s), which no importer written in Python can beat.

CPU seconds of this process, medians, interleaved, each after ``gc.collect()``; the
targets (SPEC: within 3x the floor, at least 5x faster than the SDK) are checked.

Usage: python bench/import_gemini.py [--quick] [--runs N] [--events N]
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
from typing import Any

import httpx
from google.genai import types
from google.genai._api_client import HttpResponse
from google.genai.models import _GenerateContentResponse_from_mldev
from import_recordings import floor, one_time

from course.vendors import import_recording

_SDK_RUNS = 2
_MODEL = "gemini-2.5-flash"
_RESPONSE_ID = "qpc2afWVFJK4vr0Pq6WiyAU"


def gemini_recording(events: int) -> bytes:
    """A ``gemini`` stream of ``events`` chunks ending in one signed function call."""
    lines: list[str] = []
    thoughts = max(1, events // 20)
    signature = base64.b64encode(bytes(range(256)) * 2).decode()

    def chunk(parts: list[dict[str, Any]], n: int, finish: str | None = None) -> None:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        usage = {
            "promptTokenCount": 50,
            "candidatesTokenCount": n,
            "totalTokenCount": 50 + n + thoughts,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 50}],
            "thoughtsTokenCount": thoughts,
        }
        body = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": _MODEL,
            "responseId": _RESPONSE_ID,
        }
        lines.append("data: " + json.dumps(body, separators=(",", ": ")) + "\r\n\r\n")

    for n in range(events - 1):
        if n < thoughts:
            chunk([{"text": f"Thinking about step {n}. ", "thought": True}], n)
        else:
            chunk([{"text": f"word{n} "}], n)
    call = {"functionCall": {"name": "add", "args": {"a": 19, "b": 23}}}
    chunk([{**call, "thoughtSignature": signature}], events, "STOP")
    return "".join(lines).encode()


def course_import(data: bytes) -> int:
    recording = import_recording(data)
    return len(recording.response["records"])  # type: ignore[arg-type]


def gemini_sdk(data: bytes) -> int:
    """google-genai's path from the response bytes to ``GenerateContentResponse``s."""
    response = HttpResponse(headers={}, response_stream=httpx.Response(200, content=data))
    count = 0
    for segment in response.segments():
        body = json.dumps(segment)  # request_streamed's error check and SdkHttpResponse
        converted = _GenerateContentResponse_from_mldev(json.loads(body), None, None)
        types.GenerateContentResponse._from_response(response=converted, kwargs={})
        count += 1
    return count


def measure(runs: int, events: int) -> dict[str, float]:
    data = gemini_recording(events)
    assert gemini_sdk(data) == events and course_import(data) > events
    contenders = {"course": course_import, "sdk": gemini_sdk, "floor": floor}
    samples: dict[str, list[float]] = {key: [] for key in contenders}
    for run in range(runs):
        for key, function in contenders.items():
            if key != "sdk" or run < _SDK_RUNS:  # the SDK takes many times longer
                samples[key].append(one_time(function, data))
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    runs = args.runs or (3 if args.quick else 7)
    times = measure(runs, args.events)
    versus_floor = times["course"] / times["floor"]
    versus_sdk = times["sdk"] / times["course"]
    print("| format | course | google-genai | floor | course vs floor | SDK vs course |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| gemini | {times['course'] * 1e3:,.1f} ms | {times['sdk'] * 1e3:,.1f} ms | "
        f"{times['floor'] * 1e3:,.1f} ms | {versus_floor:.2f}x | {versus_sdk:.2f}x |"
    )
    met = versus_floor <= 3 and versus_sdk >= 5
    print(f"targets (<= 3x the floor, >= 5x faster than the SDK): {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()

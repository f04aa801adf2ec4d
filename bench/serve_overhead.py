"""Benchmark: what ``course_server`` adds to each test, in a pytest run as a user's suite runs it.

One pytest run (a subprocess, the pytest plugin loaded as installed) holds N tests of
each kind below, interleaved, so that every kind meets the same machine:

- ``plain``: a test that does nothing (the floor: pytest's own cost per test);
- ``served``: asks for ``course_server`` over an empty fixture and does nothing else
  (what starting and stopping a server costs);
- ``served + request``: ``course_server`` and one streamed Chat request, read to the end
  with one ``httpx2`` client shared by the module;
- ``served + OpenAI(http_client=shared)``: an ``openai.OpenAI`` client per test, over the
  module's one HTTP client, and one ``chat.completions.create`` (the README's pattern);
- ``served + OpenAI()``: the same with a client built the default way, which builds an
  SSL context (its CA bundle) for every client.

Each test's wall time is its whole protocol (setup, call, teardown), timed in the run by
a small plugin. Figures are medians per kind, and each kind's excess over ``plain`` of
the same run. The target (issue 23): a served test at most 10 ms of wall time.

Usage: python bench/serve_overhead.py [--quick] [--tests N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

KINDS = {
    "plain": "plain",
    "served": "served",
    "request": "served + request",
    "sdk_shared": "served + OpenAI(http_client=shared)",
    "sdk_default": "served + OpenAI()",
}
"""Each kind of test: its function-name prefix, and how the report names it."""

TARGET_MS = 10.0

TIMING_PLUGIN = """
import json
import os
import time

import pytest

_walls = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    began = time.perf_counter()
    yield
    _walls[item.name] = time.perf_counter() - began


def pytest_sessionfinish(session):
    with open(os.environ["SERVE_OVERHEAD_OUT"], "w") as out:
        json.dump(_walls, out)
"""

TESTS_HEAD = """
import httpx2
import openai
import pytest

EMPTY = {"schemaVersion": 1, "responses": []}
ONE = {
    "schemaVersion": 1,
    "responses": [
        {
            "records": [
                {"type": "response_start", "responseId": "r-1", "role": "assistant"},
                {"type": "text_delta", "text": "The sum is 42."},
                {
                    "type": "response_end",
                    "responseId": "r-1",
                    "stopReason": "stop",
                    "usage": {"inputTokens": 1, "outputTokens": 2},
                },
            ]
        }
    ],
}
ASK = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def http():
    with httpx2.Client() as client:
        yield client


def test_warm_up(http):  # imports and first connections, outside the figures
    openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="test").close()
"""

TESTS_EACH = """

def test_plain_{i}():
    pass


@pytest.mark.course(EMPTY)
def test_served_{i}(course_server):
    assert course_server.url


@pytest.mark.course(ONE)
def test_request_{i}(course_server, http):
    with http.stream("POST", course_server.url + "/v1/chat/completions", json=ASK) as reply:
        assert reply.status_code == 200
        reply.read()


@pytest.mark.course(ONE)
def test_sdk_shared_{i}(course_server, http):
    client = openai.OpenAI(
        base_url=course_server.url + "/v1", api_key="test", http_client=http, max_retries=0
    )
    completion = client.chat.completions.create(model="m", messages=[])
    assert completion.choices[0].message.content == "The sum is 42."


@pytest.mark.course(ONE)
def test_sdk_default_{i}(course_server):
    with openai.OpenAI(
        base_url=course_server.url + "/v1", api_key="test", max_retries=0
    ) as client:
        completion = client.chat.completions.create(model="m", messages=[])
    assert completion.choices[0].message.content == "The sum is 42."
"""


def write_project(folder: Path, tests: int) -> None:
    (folder / "timing_plugin.py").write_text(textwrap.dedent(TIMING_PLUGIN))
    body = TESTS_HEAD + "".join(TESTS_EACH.format(i=i) for i in range(tests))
    (folder / "test_overhead.py").write_text(body)


def one_run(folder: Path) -> dict[str, list[float]]:
    """Run the project's tests once; each kind's per-test wall times, in seconds."""
    out = folder / "walls.json"
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "timing_plugin"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder), "SERVE_OVERHEAD_OUT": str(out)},
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"the benchmark's tests failed:\n{completed.stdout}{completed.stderr}")
    walls: dict[str, float] = json.loads(out.read_text())
    by_kind: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for name, seconds in walls.items():
        kind = name.removeprefix("test_").rsplit("_", 1)[0]
        if kind in by_kind:
            by_kind[kind].append(seconds)
    return by_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check it works")
    parser.add_argument("--tests", type=int, default=100, help="tests of each kind per run")
    parser.add_argument("--runs", type=int, default=3, help="pytest runs")
    args = parser.parse_args()
    tests, runs = (10, 1) if args.quick else (args.tests, args.runs)
    walls: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="serve-overhead-") as name:
        folder = Path(name)
        write_project(folder, tests)
        for _ in range(runs):
            for kind, seconds in one_run(folder).items():
                walls[kind].extend(seconds)
    medians = {kind: statistics.median(values) * 1000 for kind, values in walls.items()}
    load = os.getloadavg()[0]
    print(
        f"{tests} tests of each kind per pytest run, {runs} runs, interleaved; "
        f"median wall time per test (setup + call + teardown); load average {load:.2f}"
    )
    print()
    print("| test | wall per test | over a plain test |")
    print("| --- | ---: | ---: |")
    for kind, label in KINDS.items():
        excess = medians[kind] - medians["plain"]
        over = "" if kind == "plain" else f"{excess:+.2f} ms"
        print(f"| {label} | {medians[kind]:.2f} ms | {over} |")
    served = medians["served"]
    verdict = "met" if served <= TARGET_MS else "NOT met"
    print(f"\nA served test: {served:.2f} ms (target <= {TARGET_MS:.0f} ms): {verdict}.")


if __name__ == "__main__":
    main()

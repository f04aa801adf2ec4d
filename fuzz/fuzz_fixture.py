"""Fuzz target: ``load_fixture`` on arbitrary bytes, then stream every response.

The one property: nothing but a ``FixtureProviderError`` ever escapes. On the way, each
input that loads is also checked differentially: streamed from array records and from
async sources, the outcomes must match each other and the reference model in
``tests/oracle.py`` (chunks, response, code, record, path, transport fields, and the
virtual time of each outcome). Both schema versions: streams run on a virtual clock
(``tests/virtual_clock.py``), so a version-2 ``delay`` of an hour costs nothing, and
``course-fixture validate`` must judge every file without moving any clock at all. Any
other exception, or any disagreement, is a finding: the input is saved and the run stops
(exit status 1).

Engines:

- built in (default): for ``--seconds`` (or ``--iterations``), alternately
  (a) mutate bytes of the corpus (the bundled fixture, variants of it, and inputs that
  loaded), and (b) run Hypothesis' fuzzing entry point ``fuzz_one_input`` of a
  ``@given`` target on random buffers: the buffer steers the strategies of
  ``tests/strategies.py``, so random bytes become structured, mutated fixtures.
- ``--atheris``: coverage-guided libFuzzer mutation of the raw bytes (needs
  ``pip install atheris``); arguments after ``--`` go to libFuzzer.

Run from the repository root::

    python fuzz/fuzz_fixture.py --seconds 600
    python fuzz/fuzz_fixture.py --atheris -- -max_total_time=600
    python fuzz/fuzz_fixture.py --replay path/to/input.json
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import copy
import hashlib
import importlib
import io
import json
import math
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from course import (  # noqa: E402
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    load_fixture,
)
from course._cli.validate import validate  # noqa: E402
from tests.oracle import Completed, Prediction, predict_fixture  # noqa: E402
from tests.strategies import (  # noqa: E402
    any_delays,
    mutated_fixtures,
    mutated_fixtures_v2,
    valid_fixtures,
    valid_fixtures_v2,
)
from tests.virtual_clock import clock, run_virtual, virtual_loops  # noqa: E402

BUNDLED = ROOT / "course" / "fixtures" / "provider-tool-roundtrip.json"
REQUEST_IDS = ["request-0", "request-1", "request-2", "request-3"]

Outcome = tuple[str, ...]
"""How one response ended, as comparable text: the error code, record index, path,
transport fields and chunks, or the chunks and the response; last, the virtual time it
settled at."""


class Finding(Exception):
    """An exception other than ``FixtureProviderError``, or a disagreement."""


# -- the target ------------------------------------------------------------------------


async def _records(records: list[object]) -> AsyncIterator[object]:
    for record in copy.deepcopy(records):
        yield record


def _transport(error: FixtureProviderError) -> str:
    return json.dumps(
        [
            error.transport_message,
            error.transport_code,
            error.transport_status,
            error.transport_retry_after,
        ]
    )


async def _stream_all(adapter: FixtureProviderAdapter, total: int) -> list[Outcome]:
    outcomes: list[Outcome] = []
    loop = clock()
    for n in range(total):
        began = loop.time()
        stream = adapter.stream(CourseModelRequest(REQUEST_IDS[n % len(REQUEST_IDS)]))
        chunks: list[str] = []
        error: FixtureProviderError | None = None
        try:
            async for chunk in stream:
                chunks.append(json.dumps(chunk.to_dict(), sort_keys=True, allow_nan=False))
        except FixtureProviderError as exc:
            error = exc
        try:
            response = await stream.result()
        except FixtureProviderError as exc:
            if exc is not error:
                raise Finding(f"result() raised {exc!r}, iteration {error!r}") from exc
            where = (exc.code.value, str(exc.record_index), str(exc.path), _transport(exc))
            outcomes.append((*where, *chunks, repr(loop.time() - began)))
            continue
        if error is not None:
            raise Finding(f"iteration raised {error!r} but result() returned")
        text = json.dumps(response.to_dict(), sort_keys=True, allow_nan=False)
        outcomes.append(("complete", *chunks, text, repr(loop.time() - began)))
    extra = adapter.stream(CourseModelRequest("one-too-many"))
    try:
        await extra.result()
    except FixtureProviderError as exc:
        if exc.code is not FixtureProviderErrorCode.PROVIDER_EXHAUSTED:
            raise Finding(f"expected PROVIDER_EXHAUSTED, got {exc!r}") from exc
    else:
        raise Finding("a stream past the end of the queue completed")
    return outcomes


def _predicted(fixture: object) -> list[Prediction] | None:
    return predict_fixture(copy.deepcopy(fixture), REQUEST_IDS * 100)


def _agrees(outcome: Outcome, prediction: Prediction, n: int) -> bool:
    """Whether one streamed outcome is what the oracle predicted for response ``n``."""
    chunks = tuple(json.dumps(c, sort_keys=True, allow_nan=False) for c in prediction.chunks)
    *head, settled = outcome
    if prediction.time is not None and not math.isclose(
        float(settled), prediction.time, rel_tol=1e-9, abs_tol=1e-9
    ):
        return False
    if isinstance(prediction, Completed):
        text = json.dumps(prediction.response, sort_keys=True, allow_nan=False)
        return tuple(head) == ("complete", *chunks, text)
    code, record_index, path, transport, *got_chunks = head
    where = f"/responses/{n}/records"
    expected = prediction.transport if type(prediction.transport) is dict else {}
    return (
        (code, record_index) == (prediction.code, str(prediction.record_index))
        and path in {where + p for p in prediction.paths}
        and json.loads(transport)
        == [expected.get(k) for k in ("message", "code", "status", "retryAfter")]
        and tuple(got_chunks) == chunks
    )


def _as_sources(fixture: object) -> object:
    clone = copy.deepcopy(fixture)
    if type(clone) is dict and type(clone.get("responses")) is list:
        for response in clone["responses"]:
            if type(response) is dict and type(response.get("records")) is list:
                response["records"] = _records(response["records"])
    return clone


def _construct(fixture: object) -> FixtureProviderAdapter | None:
    try:
        return FixtureProviderAdapter(fixture)
    except FixtureProviderError as exc:
        if exc.code is not FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE:
            raise Finding(f"construction failed with {exc!r}") from exc
        return None


def check_fixture(fixture: object, *, oracle: bool = True) -> str:
    """Stream every response of ``fixture`` from arrays and from async sources."""
    expected = _predicted(fixture) if oracle else None
    arrays = _construct(fixture)
    sources = _construct(_as_sources(fixture))
    if (arrays is None) != (sources is None):
        raise Finding("array and async variants disagree on construction")
    if arrays is None or sources is None:
        if oracle and expected is not None:
            raise Finding("construction failed; the oracle expected it to succeed")
        return "rejected by the adapter"
    if oracle and expected is None:
        raise Finding("construction succeeded; the oracle expected it to fail")
    total = arrays.pending
    from_arrays = run_virtual(_stream_all(arrays, total), debug=False)
    from_sources = run_virtual(_stream_all(sources, total), debug=False)
    if from_arrays != from_sources:
        raise Finding(f"arrays and async sources disagree:\n{from_arrays}\n{from_sources}")
    if oracle and expected is not None:
        agree = len(expected) == len(from_arrays) and all(
            _agrees(got, p, n) for n, (got, p) in enumerate(zip(from_arrays, expected, strict=True))
        )
        if not agree:
            raise Finding(f"the adapter and the oracle disagree:\n{from_arrays}\n{expected}")
    return "streamed"


def check_bytes(data: bytes, scratch: Path, *, oracle: bool = True) -> str:
    """The fuzz target: write ``data`` to a file, load it, stream it; then check that
    ``course-fixture validate`` reads the file the same way."""
    scratch.write_bytes(data)
    try:
        fixture = load_fixture(scratch)
    except FixtureProviderError as exc:
        if exc.code is not FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE:
            raise Finding(f"load_fixture failed with {exc!r}") from exc
        if not exc.message.startswith(f"{scratch}:"):
            raise Finding(f"the error does not name the file: {exc}") from exc
        if exc.line is None or exc.column is None:  # the file is readable: a place exists
            raise Finding(f"the error has no line and column: {exc!r}") from exc
        outcome = "rejected by load_fixture"
    else:
        outcome = check_fixture(fixture, oracle=oracle)
    _check_command_line(scratch, outcome)
    return outcome


def _check_command_line(scratch: Path, outcome: str) -> None:
    """``course-fixture validate`` refuses what loading and construction refuse, and
    nothing else; however it splits a broken file, it says where and ends in findings,
    never raises; and it judges every delay without waiting on any clock."""
    out = io.StringIO()
    with virtual_loops() as loops, contextlib.redirect_stdout(out):
        validate([str(scratch)], quiet=False, as_json=True)  # course-fixture validate --json
    waited = max((loop.now for loop in loops), default=0.0)
    if waited:
        raise Finding(f"validate slept {waited} s (virtual) through delays")
    findings = [json.loads(line) for line in out.getvalue().splitlines()]
    refused = [finding for finding in findings if finding["status"] == "invalid"]
    if (outcome == "streamed") != (not refused):
        raise Finding(f"the command line disagrees ({outcome}): {refused}")
    for finding in refused:
        if finding["code"] != "PROVIDER_INVALID_FIXTURE":
            raise Finding(f"a refusal that is not an invalid fixture: {finding}")


# -- Hypothesis' fuzzing entry point ---------------------------------------------------


def _json_bytes(value: object, ascii_only: bool, indent: int | None) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)  # NaN: not JSON
    # A lone surrogate written raw is not UTF-8: load_fixture must reject those bytes.
    return text.encode("utf-8", "surrogatepass")


_fixture_texts = st.builds(
    _json_bytes,
    st.one_of(
        mutated_fixtures(),
        valid_fixtures(),
        mutated_fixtures_v2(any_delays),
        valid_fixtures_v2(any_delays),
    ),
    st.booleans(),
    st.sampled_from([None, 0, 2]),
)


def _splice(data: bytes, at: int, cut: int, insert: bytes) -> bytes:
    at = min(at, len(data))
    return data[:at] + insert + data[at + cut :]


_fuzz_inputs = st.one_of(
    _fixture_texts,
    st.builds(_splice, _fixture_texts, st.integers(0, 4096), st.integers(0, 8), st.binary()),
    st.binary(),
)


@dataclass
class Run:
    """What a fuzzing run did."""

    executions: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    last: bytes = b""
    corpus: list[bytes] = field(default_factory=list)


def hypothesis_target(state: Run, scratch: Path, oracle: bool) -> Callable[[bytes], object]:
    """``fuzz_one_input`` of a ``@given`` test over structured and raw inputs."""

    @settings(database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(_fuzz_inputs)
    def fuzz_fixture_bytes(data: bytes) -> None:
        state.last = data
        outcome = check_bytes(data, scratch, oracle=oracle)
        state.executions += 1
        state.outcomes[outcome] = state.outcomes.get(outcome, 0) + 1
        if outcome == "streamed" and len(state.corpus) < 4000:
            state.corpus.append(data)

    given_test: Any = fuzz_fixture_bytes
    return cast("Callable[[bytes], object]", given_test.hypothesis.fuzz_one_input)


# -- the built-in byte mutator ---------------------------------------------------------

_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b'"',
    b"\\",
    b"null",
    b"true",
    b"false",
    b"0",
    b"-0",
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"9007199254740991",
    b"9007199254740992",
    b"-1",
    b"1.0",
    b'"\\ud800"',
    b'"\\udfff\\ud800"',
    b'"\\u0000"',
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b'"response_end"',
    b'"response_start"',
    b'"tool_call"',
    b'"text_delta"',
    b'"transport_error"',
    b'"stop"',
    b'"inputTokens"',
    b'"input_tokens"',
    b'"outputTokens"',
    b'"output_tokens"',
    b'"__proto__"',
    b'"responseId"',
    b'"records"',
    b'"schemaVersion"',
    b"2",
    b'"delay"',
    b"3600",
    b"3600.0001",
    b"86400",
    b"429",
    b"599",
    b"600",
    b'"tool_call_incomplete"',
    b'"argumentFragments"',
    b'"thinking_delta"',
    b'"thinking_signature"',
    b'"redacted_thinking"',
    b'"refusal_delta"',
    b'"status"',
    b'"retryAfter"',
    b'"length"',
    b'"refusal"',
    b'"cacheReadTokens"',
    b'"reasoning_tokens"',
    b'"providerStopReason"',
    b'"{\\"a\\": 1.0}"',
    b"[" * 300,
    b"]" * 300,
    b"9" * 4301,
]


def _mutate(data: bytes, corpus: list[bytes], rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 5))):
        how = rng.randrange(9)
        at = rng.randrange(len(out) + 1)
        if how == 0 and out:  # flip a bit
            out[at % len(out)] ^= 1 << rng.randrange(8)
        elif how == 1 and out:  # a random byte
            out[at % len(out)] = rng.randrange(256)
        elif how == 2:  # insert a JSON token
            out[at:at] = rng.choice(_TOKENS)
        elif how == 3:  # replace a span with a token
            out[at : at + rng.randrange(1, 12)] = rng.choice(_TOKENS)
        elif how == 4:  # delete a span
            del out[at : at + rng.randrange(1, 32)]
        elif how == 5 and out:  # duplicate a span
            start = rng.randrange(len(out))
            out[at:at] = out[start : start + rng.randrange(1, 64)]
        elif how == 6:  # splice with another input
            other = rng.choice(corpus)
            cut = rng.randrange(len(other) + 1)
            out = out[:at] + bytearray(other[cut:])
        elif how == 7 and out:  # swap two bytes
            j = rng.randrange(len(out))
            i = at % len(out)
            out[i], out[j] = out[j], out[i]
        else:  # truncate
            del out[at:]
    return bytes(out)


SEED_V2: dict[str, object] = {
    "schemaVersion": 2,
    "responses": [
        {
            "records": [
                {"type": "response_start", "responseId": "r", "role": "assistant"}
                | {"model": "m", "usage": {"inputTokens": 9, "outputTokens": 0}, "delay": 1},
                {"type": "thinking_delta", "text": "a", "delay": 0.5},
                {"type": "thinking_signature", "signature": "s"},
                {"type": "redacted_thinking", "data": "d"},
                {"type": "text_delta", "text": "t", "delay": 3600},
                {"type": "tool_call", "id": "c", "name": "f", "arguments": {"a": 1.5}}
                | {"argumentFragments": ['{"a"', ": 1.5}"], "signature": "g"},
                {"type": "tool_call_incomplete", "id": "d", "name": "f"}
                | {"argumentFragments": ['{"a']},
                {"type": "response_end", "responseId": "r", "stopReason": "length"}
                | {"providerStopReason": "max_tokens", "delay": 0}
                | {"usage": {"inputTokens": 9, "cacheReadTokens": 9, "outputTokens": 4}},
            ]
        },
        {
            "records": [
                {"type": "response_start", "responseId": "q", "role": "assistant"},
                {"type": "refusal_delta", "text": "no"},
                {"type": "response_end", "responseId": "q", "stopReason": "refusal"}
                | {"usage": {"input_tokens": 1, "output_tokens": 1, "reasoning_tokens": 1}},
            ]
        },
        {
            "records": [
                {"type": "transport_error", "message": "slow down", "code": "rate_limited"}
                | {"status": 429, "retryAfter": 1.5, "delay": 2},
            ]
        },
    ],
}
"""A version-2 fixture with every record type and field, for the corpus."""


def seed_corpus() -> list[bytes]:
    """The bundled fixture and a few variants of it, and a version-2 fixture, as bytes."""
    raw = BUNDLED.read_bytes()
    data = json.loads(raw)
    seeds = [raw, json.dumps(data).encode(), json.dumps(data, indent=1).encode()]
    for responses in ([data["responses"][0]], [data["responses"][1]], []):
        seeds.append(json.dumps({"schemaVersion": 1, "responses": responses}).encode())
    seeds += [json.dumps(SEED_V2).encode(), json.dumps(SEED_V2, indent=1).encode()]
    seeds.append(json.dumps({**data, "schemaVersion": 2}).encode())
    return seeds


def _save(data: bytes, crash_dir: Path) -> Path:
    crash_dir.mkdir(parents=True, exist_ok=True)
    path = crash_dir / f"crash-{hashlib.sha1(data).hexdigest()[:16]}.json"
    path.write_bytes(data)
    return path


def _say(message: str) -> None:
    print(message, flush=True)


def fuzz(
    *,
    seconds: float | None = None,
    iterations: int | None = None,
    seed: int | None = None,
    oracle: bool = True,
    crash_dir: Path | None = None,
    report_every: float = 30.0,
    log: Callable[[str], None] = _say,
) -> Run:
    """Run the built-in engine; raises ``Finding`` (after saving the input) on a finding."""
    rng = random.Random(seed)
    state = Run(corpus=seed_corpus())
    crash_dir = crash_dir or Path(tempfile.gettempdir()) / "course-fuzz-crashes"
    started = time.monotonic()
    next_report = started + report_every
    with tempfile.TemporaryDirectory(prefix="course-fuzz-") as scratch_dir:
        scratch = Path(scratch_dir) / "fixture.json"
        through_hypothesis = hypothesis_target(state, scratch, oracle)
        while True:
            now = time.monotonic()
            if seconds is not None and now - started >= seconds:
                break
            if iterations is not None and state.executions >= iterations:
                break
            if now >= next_report:
                next_report = now + report_every
                log(f"{now - started:7.0f}s {state.executions} executions {state.outcomes}")
            try:
                if rng.random() < 0.5:
                    through_hypothesis(rng.randbytes(rng.choice((256, 1024, 4096, 8192))))
                    continue
                data = _mutate(rng.choice(state.corpus), state.corpus, rng)
                state.last = data
                outcome = check_bytes(data, scratch, oracle=oracle)
            except Exception as exc:
                saved = _save(state.last, crash_dir)
                log(f"FINDING after {state.executions} executions, input saved to {saved}")
                log("".join(traceback.format_exception(exc)))
                raise Finding(str(saved)) from exc
            state.executions += 1
            state.outcomes[outcome] = state.outcomes.get(outcome, 0) + 1
            if outcome == "streamed" and len(state.corpus) < 4000:
                state.corpus.append(data)
    elapsed = time.monotonic() - started
    log(
        f"done: {state.executions} executions in {elapsed:.0f}s "
        f"({state.executions / max(elapsed, 1e-9):.0f}/s), no finding; {state.outcomes}"
    )
    return state


def _atheris(argv: list[str], oracle: bool, corpus: Path | None) -> None:
    atheris: Any = importlib.import_module("atheris")
    scratch_dir = tempfile.mkdtemp(prefix="course-fuzz-")
    atexit.register(shutil.rmtree, scratch_dir, True)
    corpus_dir = corpus or Path(scratch_dir) / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(seed_corpus()):
        (corpus_dir / f"seed-{i}.json").write_bytes(data)
    scratch = Path(scratch_dir) / "fixture.json"

    def test_one_input(data: bytes) -> None:
        check_bytes(data, scratch, oracle=oracle)

    atheris.instrument_all()
    atheris.Setup([sys.argv[0], *argv, str(corpus_dir)], test_one_input)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, help="stop after this long (default 60)")
    parser.add_argument("--iterations", type=int, help="stop after this many inputs")
    parser.add_argument("--seed", type=int, help="seed of the built-in engine")
    parser.add_argument("--no-oracle", action="store_true", help="skip the differential checks")
    parser.add_argument("--crash-dir", type=Path, help="where findings are saved")
    parser.add_argument("--atheris", action="store_true", help="use atheris (libFuzzer)")
    parser.add_argument("--corpus", type=Path, help="atheris: keep the corpus in this folder")
    parser.add_argument("--replay", nargs="+", type=Path, help="run these inputs once each")
    parser.add_argument("libfuzzer", nargs="*", help="after --: arguments for libFuzzer")
    args = parser.parse_args(argv)
    oracle = not args.no_oracle
    if args.replay:
        with tempfile.TemporaryDirectory(prefix="course-fuzz-") as scratch_dir:
            scratch = Path(scratch_dir) / "fixture.json"
            for path in args.replay:
                print(path, check_bytes(path.read_bytes(), scratch, oracle=oracle))
        return 0
    if args.atheris:
        _atheris(args.libfuzzer, oracle, args.corpus)
        return 0
    seconds = args.seconds if args.seconds is not None or args.iterations else 60.0
    try:
        fuzz(
            seconds=seconds,
            iterations=args.iterations,
            seed=args.seed,
            oracle=oracle,
            crash_dir=args.crash_dir,
        )
    except Finding:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One ``course-fixture validate`` process over many files, against starting Python per file.

Generates small fixtures in a temporary folder (1,000 by default), times one
``python -m course validate FOLDER`` over all of them, and times bare
interpreter starts (``python -c pass``, a sample scaled to the same number of files).
The ratio says how much cheaper one process is than a process per file: the CLI
imports the package once and validates every file in one event loop.

Usage::

    python bench/validate_many.py            # 1,000 fixtures, 50 interpreter starts sampled
    python bench/validate_many.py --quick    # 200 fixtures, 10 starts (a smoke run)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def small_fixture(index: int) -> dict[str, object]:
    """A small, valid fixture: one to three responses, text or a tool call each."""
    responses: list[dict[str, object]] = []
    for number in range(1 + index % 3):
        response_id = f"response-{index}-{number}"
        records: list[dict[str, object]] = [
            {"type": "response_start", "responseId": response_id, "role": "assistant"}
        ]
        if (index + number) % 2:
            records.append(
                {
                    "type": "tool_call",
                    "id": f"call-{index}-{number}",
                    "name": "add",
                    "arguments": {"left": index, "right": number},
                }
            )
            stop_reason = "tool_call"
        else:
            records.append({"type": "text_delta", "text": f"Answer {index}.{number}"})
            stop_reason = "stop"
        records.append(
            {
                "type": "response_end",
                "responseId": response_id,
                "stopReason": stop_reason,
                "usage": {"inputTokens": 10 + index, "output_tokens": 5 + number},
            }
        )
        responses.append({"records": records})
    return {"schemaVersion": 1, "responses": responses}


def timed(
    command: list[str], env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    completed = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, completed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="200 files, 10 starts sampled")
    parser.add_argument("--files", type=int, help="how many fixtures to generate")
    parser.add_argument("--starts", type=int, help="how many interpreter starts to sample")
    parser.add_argument("--repeat", type=int, default=3, help="validate runs (best is kept)")
    args = parser.parse_args()
    count: int = args.files or (200 if args.quick else 1000)
    starts: int = args.starts or (10 if args.quick else 50)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("PYTHONASYNCIODEBUG", None)  # measure the tool, not asyncio's debug mode
    python = sys.executable

    with tempfile.TemporaryDirectory(prefix="course-bench-") as folder:
        for index in range(count):
            path = Path(folder) / f"fixture-{index:04}.json"
            path.write_text(json.dumps(small_fixture(index), indent=2), encoding="utf-8")
        responses = sum(1 + index % 3 for index in range(count))

        runs: list[float] = []
        for _ in range(max(1, args.repeat)):
            seconds, completed = timed([python, "-m", "course", "validate", folder], env)
            if completed.returncode != 0:
                sys.stderr.write(completed.stdout[-2000:] + completed.stderr[-2000:])
                print(f"validate exited {completed.returncode}; expected 0", file=sys.stderr)
                return 1
            runs.append(seconds)
        summary = completed.stdout.strip().splitlines()[-1]
        expected = f"{count} files, {responses} responses: {responses} ok, 0 failed"
        if summary != expected:
            print(f"unexpected summary {summary!r}, wanted {expected!r}", file=sys.stderr)
            return 1

    samples = [timed([python, "-c", "pass"], env)[0] for _ in range(starts)]
    one_start = statistics.median(samples)
    per_file_starts = one_start * count
    validate = min(runs)

    print(f"python       {python} ({sys.version.split()[0]})")
    print(f"fixtures     {count} files, {responses} responses")
    print(f"validate     {validate * 1000:8.1f} ms  one process, all files (best of {len(runs)})")
    print(f"             {validate / count * 1e6:8.1f} us  per file, interpreter start included")
    print(f"python -c    {one_start * 1000:8.1f} ms  one start (median of {starts})")
    print(f"             {per_file_starts * 1000:8.1f} ms  x {count} (scaled)")
    print(f"ratio        {per_file_starts / validate:8.1f} x  faster than one start per file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The serve examples (``examples/serve_*.py``) run as a user runs them and print the answer.

Each is a real tool-using agent loop through ``serve``: a subprocess, with warnings as
errors (an unclosed client or socket would fail it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import child_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(name: str) -> list[str]:
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name)],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return completed.stdout.splitlines()


@pytest.mark.parametrize("name", ["serve_openai.py", "serve_anthropic.py"])
def test_the_sdk_examples_call_the_tool_then_print_the_answer(name: str) -> None:
    lines = run_example(name)
    assert lines[0] == "user: What is 20 + 22?"
    assert lines[1].startswith("tool add(")
    assert lines[1].endswith("= 42, for call-add-001")
    assert lines[-1] == "The sum is 42."


def test_the_pydantic_ai_example_calls_the_tool_then_prints_the_answer() -> None:
    pytest.importorskip("pydantic_ai", reason="needs pydantic-ai-slim[openai] (dev extra)")
    assert run_example("serve_pydantic_ai.py") == [
        "user: What is 20 + 22?",
        "tool add(left=20, right=22) = 42",
        "The sum is 42.",
    ]


def test_the_gemini_example_sends_the_signed_call_back_then_prints_the_answer() -> None:
    pytest.importorskip("google.genai", reason="needs google-genai (dev extra)")
    assert run_example("serve_gemini.py") == [
        "user: What is 20 + 22?",
        "tool add({'left': 20, 'right': 22}) = 42",
        "The sum is 42.",
    ]

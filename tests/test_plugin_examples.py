"""The README's testing examples (``examples/testing``) run, and pass, as a user runs them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.test_plugin import run

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "testing"


def test_the_testing_examples_pass(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES, pytester.path, dirs_exist_ok=True)
    result = run(pytester, "-v", "--strict-markers")
    # Two loop tests, fourteen fault variants of the two-response fixture, one server test.
    result.assert_outcomes(passed=17)
    result.stdout.fnmatch_lines(
        [
            "*test_agent.py::test_the_agent_uses_the_tool_and_answers PASSED*",
            "*test_faults.py::test_the_agent_reports_a_broken_stream?r0-cut-after-1? PASSED*",
            "*test_faults.py::test_the_agent_reports_a_broken_stream?r1-end-mismatch? PASSED*",
            "*test_server.py::test_the_openai_client_gets_the_tool_call_then_the_answer PASSED*",
        ]
    )

"""Every way the provider's stream can break, each one a test of how the agent reports it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent import answer

from course import FixtureProviderAdapter, FixtureProviderError, faults, load_fixture

FIXTURE = load_fixture(Path(__file__).parent / "fixtures" / "add.json")


@pytest.mark.parametrize(
    "fault",
    [
        # strict=False: the loop stops at the fault, so later responses stay unused.
        pytest.param(fault, marks=pytest.mark.course(fault.fixture, strict=False), id=fault.name)
        for fault in faults.variants(FIXTURE)
    ],
)
def test_the_agent_reports_a_broken_stream(
    fault: faults.Fault, course_adapter: FixtureProviderAdapter
) -> None:
    with pytest.raises(FixtureProviderError) as caught:
        asyncio.run(answer(course_adapter, "What is 20 + 22?"))
    assert caught.value.code == fault.expected_code
    assert caught.value.response_index == fault.response_index

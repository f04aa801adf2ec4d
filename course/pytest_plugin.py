"""The pytest plugin of ``course``: the ``course`` marker and its fixtures.

Registered through the ``pytest11`` entry point, so installing ``course`` is enough.
"""

from __future__ import annotations

import pytest

__all__ = ["pytest_configure"]


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``course`` marker."""
    config.addinivalue_line(
        "markers",
        "course(fixture, *, strict=True): replay FIXTURE (a path or a fixture value) "
        "through the course_adapter and course_server fixtures",
    )

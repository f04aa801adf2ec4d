"""Hypothesis profiles for the property suite.

- ``default``: what CI runs. The whole property suite (``tests/test_properties.py``,
  ``tests/test_hostile.py``, ``tests/test_fuzz_smoke.py``) stays well within a minute on
  two cores, with asyncio debug mode on. Derandomized: each test draws the same examples
  on every run (seeded from the test itself), so a run from a clean clone is the run CI
  makes, and a rare draw cannot fail one submission and pass the next.
- ``long``: many more examples, drawn afresh each run, for the exploring outside CI that
  finds the rare draws (each one it finds becomes an ``@example``)::

      python -m pytest tests/test_properties.py tests/test_hostile.py --hypothesis-profile=long

Hypothesis' own pytest plugin provides ``--hypothesis-profile``. No deadline in either
profile: asyncio debug mode and shared CI machines make per-example timing noise, and the
suite's budget is its total run time, not any one example's.
"""

from __future__ import annotations

# httpx2 imports its network backend at its first connection. Inside a pytester run that
# import would be undone afterwards (pytester restores sys.modules), and the backend
# imported again later raises exception classes httpx2 no longer maps: imported here, it
# stays the one every test shares.
import httpcore2._backends.anyio
import httpcore2._backends.auto  # noqa: F401
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=100,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=5_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")

"""``python -m course``: the ``course-fixture`` command line.

With no arguments it replays the bundled round-trip fixture, call by call.
"""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())

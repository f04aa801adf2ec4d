"""Run every check CI runs: lint, format, types, then the tests with coverage.

Usage: python scripts/check.py [extra pytest arguments]
"""

from __future__ import annotations

import os
import subprocess
import sys


def run(*command: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(command), flush=True)
    completed = subprocess.run(command, env=env, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def main() -> None:
    python = sys.executable
    run(python, "-m", "ruff", "check", ".")
    run(python, "-m", "ruff", "format", "--check", ".")
    run(python, "-m", "mypy", "--strict")
    # Asyncio debug mode and warnings as errors: a never-awaited coroutine or a
    # destroyed pending task fails the suite.
    env = {**os.environ, "PYTHONASYNCIODEBUG": "1", "PYTHONDEVMODE": "1"}
    # Coverage runs the whole of pytest (not pytest-cov, which starts after the
    # package's own pytest11 plugin has imported `course`), and every subprocess.
    run(python, "-m", "coverage", "erase")
    run(
        python,
        "-W",
        "error",
        "-m",
        "coverage",
        "run",
        "-m",
        "pytest",
        "-n",
        "2",
        *sys.argv[1:],
        env=env,
    )
    run(python, "-m", "coverage", "combine", "--quiet")
    run(python, "-m", "coverage", "report", "--fail-under=95")


if __name__ == "__main__":
    main()

"""A small agent loop against the offline fixture provider: a tool call, then the answer.

The provider is the bundled round-trip fixture: its first response calls the ``add``
tool, its second answers. The loop streams each response, runs the tools the provider
asked for, links each result to the provider's own tool-call id (``call-add-001``) and
asks again, until the provider stops. No network, no credentials.

The loop itself is ``agent_loop`` in ``course/_cli/demo.py``: it ships in the package,
so that ``course-fixture demo`` runs the very same loop from any installation. This
file is how a test suite of your own would drive it: load a fixture, build the
adapter, hand it to the loop.

Run it from the repository root:  python examples/agent_loop.py
"""

from __future__ import annotations

import asyncio
from importlib.resources import as_file, files

from course import FixtureProviderAdapter, load_fixture
from course._cli.demo import agent_loop


def main() -> None:
    with as_file(files("course") / "fixtures" / "provider-tool-roundtrip.json") as path:
        adapter = FixtureProviderAdapter(load_fixture(path))
    asyncio.run(agent_loop(adapter, "What is 20 + 22?"))


if __name__ == "__main__":
    main()

"""Streams, sources and signals touch nothing outside themselves.

The SPEC: the adapter never changes process-wide state (the garbage collector, signal
handlers, recursion limits, the event-loop policy), and nothing opens a socket. Every
stream path runs here (array records with loop turns, a source interrupted by an
abort, ``aclose()``, a cancelled consumer, a consumer closed mid-step, ``signal.wait()``)
with every network entry point replaced by a function that raises, and everything a
library could quietly change is compared before and after.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import socket
import sys
import threading
import urllib.request
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import NoReturn

import pytest

from course import (
    AbortController,
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
)

from .helpers import BlockingSource, end, fixture, run, start, text

REQUEST = CourseModelRequest("req-1")

ENTRY_POINTS: tuple[tuple[ModuleType, str], ...] = (
    (socket, "socket"),
    (socket, "create_connection"),
    (socket, "socketpair"),
    (asyncio, "open_connection"),
    (urllib.request, "urlopen"),
)


@contextlib.contextmanager
def no_network() -> Iterator[list[str]]:
    """Every network entry point raises while inside; yields the attempts made.

    Entered inside the running loop, which made its own self-pipe when it started.
    """
    attempts: list[str] = []

    def refuse(name: str) -> Callable[..., NoReturn]:
        def refused(*args: object, **kwargs: object) -> NoReturn:
            attempts.append(name)
            raise OSError(f"{name}() called during an offline test")

        return refused

    originals = [(module, name, getattr(module, name)) for module, name in ENTRY_POINTS]
    for module, name, _ in originals:
        setattr(module, name, refuse(f"{module.__name__}.{name}"))
    try:
        yield attempts
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


def process_state() -> dict[str, object]:
    """Everything process-wide a library could change without saying so."""
    handlers = {}
    for number in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            handlers[number] = signal.getsignal(number)
    return {
        "gc enabled": gc.isenabled(),
        "gc thresholds": gc.get_threshold(),
        "gc debug": gc.get_debug(),
        "gc frozen": gc.get_freeze_count(),
        "signal handlers": handlers,
        "recursion limit": sys.getrecursionlimit(),
        "switch interval": sys.getswitchinterval(),
        "int digits": sys.get_int_max_str_digits(),
        "event loop policy": asyncio.get_event_loop_policy(),
        "excepthook": sys.excepthook,
        "unraisablehook": sys.unraisablehook,
        "thread excepthook": threading.excepthook,
        "trace": (sys.gettrace(), sys.getprofile()),
        "warning filters": list(warnings.filters),
    }


def loop_state(loop: asyncio.AbstractEventLoop) -> dict[str, object]:
    return {
        "exception handler": loop.get_exception_handler(),
        "task factory": loop.get_task_factory(),
        "debug": loop.get_debug(),
        "asyncgen hooks": sys.get_asyncgen_hooks(),
        **process_state(),
    }


async def every_path() -> None:
    """Each way a stream can run, settle or be stopped."""
    many = [start(), *([text("t")] * 2_500), end()]

    async def generator() -> AsyncIterator[object]:
        yield start()
        yield text("a")
        await asyncio.sleep(0)
        yield end()

    sources = [BlockingSource() for _ in range(4)]
    adapter = FixtureProviderAdapter(fixture(many, many, generator(), *sources, [text("x")]))

    # Array records, iterated then completed (turns on the way).
    stream = adapter.stream(REQUEST)
    assert len([chunk async for chunk in stream]) == 2_500
    await stream.result()
    # Array records cut off by a cancelled task.
    task = asyncio.create_task(adapter.stream(REQUEST).result())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait((task,))
    # A source that completes.
    await adapter.stream(REQUEST).result()
    # A source step interrupted by an abort, with a waiter on the signal.
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    stream = adapter.stream(REQUEST, controller.signal)
    await anext(stream)
    step = asyncio.create_task(anext(stream))
    await asyncio.sleep(0)
    controller.abort(ValueError("stop"))
    await asyncio.wait((step, waiter))
    # A source step interrupted by aclose() from another task.
    stream = adapter.stream(REQUEST)
    await anext(stream)
    step = asyncio.create_task(anext(stream))
    await asyncio.sleep(0)
    await stream.aclose()
    await asyncio.wait((step,))
    # A consumer task cancelled in a source step.
    stream = adapter.stream(REQUEST)
    await anext(stream)
    step = asyncio.create_task(anext(stream))
    await asyncio.sleep(0)
    step.cancel()
    await asyncio.wait((step,))
    # A consumer coroutine closed in a source step: cleanup scheduled on the loop.
    stream = adapter.stream(REQUEST)
    await anext(stream)
    consumer = stream.result()
    consumer.send(None)
    consumer.close()
    for _ in range(5):
        await asyncio.sleep(0)
    # A failing response, then an exhausted queue.
    for _ in range(2):
        with pytest.raises(FixtureProviderError):
            await adapter.stream(REQUEST).result()
    assert [source.closes for source in sources] == [1, 1, 1, 1]


def test_every_stream_path_runs_with_the_network_refused() -> None:
    async def main() -> list[str]:
        with no_network() as attempts:
            await every_path()
        return attempts

    assert run(main()) == []


def test_every_stream_path_leaves_process_and_loop_state_as_it_was() -> None:
    before = process_state()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        inside = loop_state(loop)
        await every_path()
        assert loop_state(loop) == inside

    run(main())
    assert process_state() == before

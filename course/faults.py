"""Failure variants: every way a provider stream can fail, derived from a good fixture.

::

    from course import faults

    @pytest.mark.parametrize("fault", list(faults.variants(fixture)), ids=lambda f: f.name)
    def test_the_loop_reports_a_broken_stream(fault: faults.Fault) -> None:
        adapter = FixtureProviderAdapter(fault.fixture)
        ...  # expect fault.expected_code on response fault.response_index

For each response that settles successfully, ``variants`` yields, in this order, with
``i`` the response's index and ``k`` a record index (its start is 0, its end n-1)::

    r{i}-cut-after-{k}           records 0 .. k-1 only, k = 1 .. n-1   MISSING_TERMINAL
    r{i}-transport-error-at-{k}  record k replaced by a transport      TRANSPORT_ERROR
                                 error, k = 1 .. n-1
    r{i}-duplicate-end           the response_end appended again       DUPLICATE_TERMINAL
    r{i}-no-start                record 0 removed                      MISSING_START
    r{i}-end-mismatch            "-mismatch" appended to the end's     RESPONSE_MISMATCH
                                 responseId

(the codes are ``FixtureProviderErrorCode.PROVIDER_...``). The injected record is
``{"type": "transport_error", "message": "injected transport error", "code":
"injected"}``. Every other response is untouched, each variant's fixture is a new
plain dict, and the input is never changed.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Final, TypeVar, cast

from . import (
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

__all__ = ["Fault", "variants"]

Code = FixtureProviderErrorCode
T = TypeVar("T")

_INJECTED: Final = {
    "type": "transport_error",
    "message": "injected transport error",
    "code": "injected",
}


@dataclass(frozen=True, slots=True)
class Fault:
    """One failure variant of a fixture: replaying ``fixture`` gives ``expected_code``
    on response ``response_index``; every other response replays as before.

    ``name`` (such as ``r0-cut-after-2``) is stable and unique within one
    ``variants`` call, so it makes a good pytest id.
    """

    name: str
    response_index: int
    fixture: dict[str, object] = field(repr=False)
    expected_code: FixtureProviderErrorCode


def variants(fixture: object, *, response_index: int | None = None) -> Iterator[Fault]:
    """Yield every failure variant of each successful response of ``fixture``.

    ``fixture`` is a valid fixture of array records: an invalid one raises the
    adapter's ``FixtureProviderError`` (``PROVIDER_INVALID_FIXTURE``), and a response
    with an async record source, which has no records to vary, a ``ValueError``. With
    ``response_index``, only that response's variants; an index out of range is a
    ``ValueError``. A response that fails on purpose has no variants. Arguments are
    checked at the call, before the first variant.
    """
    if response_index is not None and type(response_index) is not int:
        raise TypeError(
            "variants: `response_index` must be an int or None, got "
            f"{type(response_index).__qualname__}"
        )
    adapter = FixtureProviderAdapter(fixture)  # checks the fixture's shape; replays it below
    responses: list[dict[str, object]] = fixture["responses"]  # type: ignore[index]
    for index, response in enumerate(responses):
        if type(response["records"]) is not list:
            raise ValueError(
                f"variants: response {index} has an async record source; variants need "
                "array records"
            )
    if response_index is not None and not 0 <= response_index < len(responses):
        raise ValueError(
            f"variants: `response_index` {response_index} is out of range: the fixture "
            f"has {len(responses)} responses"
        )
    chosen = range(len(responses)) if response_index is None else [response_index]
    settled = _run_apart(lambda: _settled(adapter))
    return _variants(fixture, [index for index in chosen if settled[index]])


def _variants(fixture: object, indexes: list[int]) -> Iterator[Fault]:
    responses: list[dict[str, list[object]]] = fixture["responses"]  # type: ignore[index]
    for index in indexes:
        records = responses[index]["records"]
        last = len(records) - 1
        end = dict(records[last])  # type: ignore[call-overload]
        end["responseId"] = f"{end['responseId']}-mismatch"
        table: list[tuple[str, list[object], FixtureProviderErrorCode]] = [
            *[
                (f"cut-after-{k}", records[:k], Code.PROVIDER_MISSING_TERMINAL)
                for k in range(1, last + 1)
            ],
            *[
                (
                    f"transport-error-at-{k}",
                    [*records[:k], _INJECTED, *records[k + 1 :]],
                    Code.PROVIDER_TRANSPORT_ERROR,
                )
                for k in range(1, last + 1)
            ],
            ("duplicate-end", [*records, records[last]], Code.PROVIDER_DUPLICATE_TERMINAL),
            ("no-start", records[1:], Code.PROVIDER_MISSING_START),
            ("end-mismatch", [*records[:last], end], Code.PROVIDER_RESPONSE_MISMATCH),
        ]
        for kind, varied, code in table:
            yield Fault(f"r{index}-{kind}", index, _replaced(fixture, index, varied), code)


def _replaced(fixture: object, index: int, records: list[object]) -> dict[str, object]:
    """A deep copy of ``fixture`` whose response ``index`` holds ``records``.

    Every container of the result is new: records it shares with the original, or
    repeats (the duplicate end), come out as copies of their own.
    """
    varied: dict[str, object] = copy.deepcopy(fixture)  # type: ignore[arg-type]
    responses: list[object] = varied["responses"]  # type: ignore[assignment]
    responses[index] = {"records": [copy.deepcopy(record) for record in records]}
    return varied


async def _settled(adapter: FixtureProviderAdapter) -> list[bool]:
    """Whether each response of a fresh ``adapter`` settles successfully, by replaying it."""
    settled: list[bool] = []
    for index in range(adapter.pending):
        try:
            await adapter.stream(CourseModelRequest(f"faults-{index}")).result()
        except FixtureProviderError:
            settled.append(False)
        else:
            settled.append(True)
    return settled


def _run_apart(make: Callable[[], Coroutine[object, object, T]]) -> T:
    """Run a replay coroutine to its end, on a thread of its own, with no event loop.

    A replay of array records never waits for anything: with no event loop running in
    its thread, the stream's loop turns have nothing to yield to, so one ``send`` runs
    it to the end. No loop means no self-pipe socket either (test suites that refuse
    the network refuse ``socketpair``), and a thread of its own means it works the same
    from a plain test, an asyncio test or a trio test. What it raises is raised here.
    """
    outcome: list[tuple[bool, object]] = []

    def work() -> None:
        coroutine = make()
        try:
            coroutine.send(None)
        except StopIteration as done:
            outcome.append((True, done.value))
        except BaseException as exc:
            outcome.append((False, exc))
        else:
            coroutine.close()
            outcome.append((False, RuntimeError("a replay of array records waited")))

    worker = threading.Thread(target=work, name="course.faults replay")
    worker.start()
    worker.join()
    succeeded, value = outcome[0]
    if not succeeded:
        raise cast(BaseException, value)
    return cast(T, value)

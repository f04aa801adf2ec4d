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
"injected"}``.

A version-2 fixture, or any fixture with ``stall=``, then gives version-2 variants
(``SPEC-TESTING.md``), with E the response's end (its ``delay`` kept) given a new stop
reason and no ``providerStopReason``::

    r{i}-length-after-{k}  records 0 .. k-1, E "length"          settles: length
    r{i}-refused           record 0, a refusal_delta, E          settles: refusal
                           "refusal"
    r{i}-content-filter    record 0, E "content_filter"          settles: contentFilter
    r{i}-rate-limited      a response of one 429 transport       TRANSPORT_ERROR
                           error inserted before response i
    r{i}-overloaded        the same with 529                     TRANSPORT_ERROR
    r{i}-stall-at-{k}      record k's delay set to ``stall``     settles as before

A variant equal to the original is left out. Every other response is untouched (an
inserted response moves the original and every later one up by one), and the input is
never changed. A variant's fixture is made when it is read: a new plain dict each time.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Callable, Coroutine, Iterator
from functools import partial
from typing import Final, TypeAlias, TypeVar, cast, final

from . import (
    CourseModelRequest,
    CourseStopReason,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    _parser,
)

__all__ = ["Fault", "variants"]

Code = FixtureProviderErrorCode
T = TypeVar("T")

_Records: TypeAlias = list[object]
_Vary: TypeAlias = Callable[[_Records], list[_Records]]
"""A variant's recipe: the records of the response it varies -> the responses in its place."""

_INJECTED: Final = {
    "type": "transport_error",
    "message": "injected transport error",
    "code": "injected",
}
_RATE_LIMITED: Final = {
    "type": "transport_error",
    "message": "Rate limit reached (injected)",
    "code": "rate_limit_exceeded",
    "status": 429,
    "retryAfter": 1,
}
_OVERLOADED: Final = {
    "type": "transport_error",
    "message": "Overloaded (injected)",
    "code": "overloaded_error",
    "status": 529,
}
_REFUSAL: Final = {"type": "refusal_delta", "text": "I can't help with that."}

_STOP_REASONS: Final = tuple(_parser.STOP_REASONS.values())
"""The normalized stop reasons: what ``expected_stop_reason`` may be."""


@final
class Fault:
    """One failure variant of a fixture: replaying ``fixture`` gives ``expected_code``
    on response ``response_index``, or (version 2) settles that response with
    ``expected_stop_reason``; exactly one of the two is set. Every other response
    replays as before.

    ``name`` (such as ``r0-cut-after-2``) is stable and unique within one
    ``variants`` call, so it makes a good pytest id. A fault is frozen; ``fixture``
    is made when read, a new plain dict each time.
    """

    __slots__ = ("_code", "_index", "_name", "_recipe", "_stop_reason")

    _name: str
    _index: int
    _recipe: _Recipe
    _code: FixtureProviderErrorCode | None
    _stop_reason: CourseStopReason | None

    def __init__(
        self,
        name: str,
        response_index: int,
        fixture: dict[str, object],
        expected_code: FixtureProviderErrorCode | None,
        expected_stop_reason: CourseStopReason | None = None,
    ) -> None:
        _check_fault(name, response_index, expected_code, expected_stop_reason)
        if type(fixture) is not dict:
            raise TypeError(f"Fault: `fixture` must be a dict, got {type(fixture).__qualname__}")
        recipe = _Recipe(copy.deepcopy(fixture), None, None, None)
        self._settle(name, response_index, recipe, expected_code, expected_stop_reason)

    def _settle(
        self,
        name: str,
        response_index: int,
        recipe: _Recipe,
        expected_code: FixtureProviderErrorCode | None,
        expected_stop_reason: CourseStopReason | None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_name", name)
        set_(self, "_index", response_index)
        set_(self, "_recipe", recipe)
        set_(self, "_code", expected_code)
        set_(self, "_stop_reason", expected_stop_reason)

    @property
    def name(self) -> str:
        """The variant's name, such as ``r0-cut-after-2``."""
        return self._name

    @property
    def response_index(self) -> int:
        """The index of the response that fails (or, for a stop reason, settles)."""
        return self._index

    @property
    def expected_code(self) -> FixtureProviderErrorCode | None:
        """The code replaying response ``response_index`` gives, or ``None``."""
        return self._code

    @property
    def expected_stop_reason(self) -> CourseStopReason | None:
        """The stop reason response ``response_index`` settles with, or ``None``."""
        return self._stop_reason

    @property
    def fixture(self) -> dict[str, object]:
        """The variant's fixture: a new plain dict each time it is read, shared with nothing."""
        return self._recipe.build()

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _key(self) -> tuple[object, ...]:
        return (self.name, self.response_index, self.expected_code, self.expected_stop_reason)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Fault:
            return NotImplemented
        return self._key() == other._key() and (
            self._recipe is other._recipe or self.fixture == other.fixture
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Fault(name={self.name!r}, response_index={self.response_index!r}, "
            f"expected_code={self.expected_code!r}, "
            f"expected_stop_reason={self.expected_stop_reason!r})"
        )

    def __copy__(self) -> Fault:
        return self  # frozen, and its recipe is never changed

    def __deepcopy__(self, memo: dict[int, object]) -> Fault:
        return self

    def __reduce__(self) -> tuple[Callable[..., Fault], tuple[object, ...]]:
        return (_made, (*self._key(), self._recipe))


def _made(
    name: str,
    response_index: int,
    expected_code: FixtureProviderErrorCode | None,
    expected_stop_reason: CourseStopReason | None,
    recipe: _Recipe,
) -> Fault:
    """A fault from its recipe, unchecked: the variants' own constructor (and pickle's)."""
    fault = Fault.__new__(Fault)
    fault._settle(name, response_index, recipe, expected_code, expected_stop_reason)
    return fault


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class _Recipe:
    """How a fault's fixture is made: ``original`` (private, never changed) with response
    ``index`` replaced by the responses ``vary`` gives for its records, as ``version``.
    A hand-built fault's recipe has no ``index``: its fixture is a copy of ``original``.
    """

    original: dict[str, object]
    index: int | None
    vary: _Vary | None
    version: int | None

    def build(self) -> dict[str, object]:
        if self.index is None or self.vary is None:
            return copy.deepcopy(self.original)
        responses = cast("list[dict[str, _Records]]", self.original["responses"])
        memo: dict[int, object] = {}  # sharing among the untouched responses is kept
        before = [copy.deepcopy(response, memo) for response in responses[: self.index]]
        after = [copy.deepcopy(response, memo) for response in responses[self.index + 1 :]]
        # Every record of the varied responses is a copy of its own, a repeated one too.
        varied = [
            {"records": [copy.deepcopy(record) for record in records]}
            for records in self.vary(responses[self.index]["records"])
        ]
        made = dict(self.original)  # the input's key order
        made["schemaVersion"] = self.version
        made["responses"] = [*before, *varied, *after]
        return made


def variants(
    fixture: object,
    *,
    response_index: int | None = None,
    stall: int | float | None = None,
) -> Iterator[Fault]:
    """Yield every failure variant of each successful response of ``fixture``.

    ``fixture`` is a valid fixture of array records: an invalid one raises the
    adapter's ``FixtureProviderError`` (``PROVIDER_INVALID_FIXTURE``), and a response
    with an async record source, which has no records to vary, a ``ValueError``. With
    ``response_index``, only that response's variants; an index out of range is a
    ``ValueError``. ``stall`` (seconds, 0 .. 3600) adds a ``stall-at-k`` variant per
    record. A version-1 fixture without ``stall`` gives the version-1 variants only. A
    response that fails on purpose has no variants. Arguments are checked at the call,
    before the first variant; nothing sleeps, whatever delays the fixture holds.
    """
    if response_index is not None and type(response_index) is not int:
        raise TypeError(
            "variants: `response_index` must be an int or None, got "
            f"{type(response_index).__qualname__}"
        )
    _check_stall(stall)
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
    original: dict[str, object] = copy.deepcopy(fixture)  # type: ignore[arg-type]
    version = cast(int, original["schemaVersion"])
    chosen = range(len(responses)) if response_index is None else [response_index]
    settled = _run_apart(lambda: _settled(adapter))
    found = [(index, stop) for index in chosen if (stop := settled[index]) is not None]
    return _variants(original, found, version == 2 or stall is not None, stall)


def _variants(
    original: dict[str, object],
    found: list[tuple[int, CourseStopReason]],
    version_2: bool,
    stall: int | float | None,
) -> Iterator[Fault]:
    """The faults of each successful response ``(index, stop reason)`` of ``found``."""
    version = cast(int, original["schemaVersion"])
    responses = cast("list[dict[str, _Records]]", original["responses"])
    for index, stop_reason in found:
        records = responses[index]["records"]
        for kind, vary, code, reason in _version_1_rows(len(records)):
            recipe = _Recipe(original, index, vary, version)
            yield _made(f"r{index}-{kind}", index, code, reason, recipe)
        if not version_2:
            continue
        for kind, vary, code, reason in _version_2_rows(records, stop_reason, stall):
            if vary(records) != [records]:  # a variant equal to the original is left out
                recipe = _Recipe(original, index, vary, 2)
                yield _made(f"r{index}-{kind}", index, code, reason, recipe)


_Row: TypeAlias = tuple[str, _Vary, FixtureProviderErrorCode | None, CourseStopReason | None]
"""A variant's name (after ``r{i}-``), its recipe, and what it expects."""


def _version_1_rows(count: int) -> Iterator[_Row]:
    """The version-1 table, in order, for a response of ``count`` records."""
    last = count - 1
    for k in range(1, last + 1):
        yield f"cut-after-{k}", partial(_cut_after, k), Code.PROVIDER_MISSING_TERMINAL, None
    for k in range(1, last + 1):
        error_at = partial(_error_at, k)
        yield f"transport-error-at-{k}", error_at, Code.PROVIDER_TRANSPORT_ERROR, None
    yield "duplicate-end", _duplicate_end, Code.PROVIDER_DUPLICATE_TERMINAL, None
    yield "no-start", _no_start, Code.PROVIDER_MISSING_START, None
    yield "end-mismatch", _end_mismatch, Code.PROVIDER_RESPONSE_MISMATCH, None


def _version_2_rows(
    records: _Records, stop_reason: CourseStopReason, stall: int | float | None
) -> Iterator[_Row]:
    """The version-2 table, in order, for a response that settles with ``stop_reason``."""
    last = len(records) - 1
    for k in range(1, last + 1):
        if _type(records[k - 1]) == "refusal_delta":
            break  # records 0 .. k-1 hold a refusal, which only a `refusal` end allows
        yield f"length-after-{k}", partial(_length_after, k), None, _reason("length")
    yield "refused", _refused, None, _reason("refusal")
    yield "content-filter", _content_filter, None, _reason("contentFilter")
    yield "rate-limited", partial(_inserted, _RATE_LIMITED), Code.PROVIDER_TRANSPORT_ERROR, None
    yield "overloaded", partial(_inserted, _OVERLOADED), Code.PROVIDER_TRANSPORT_ERROR, None
    if stall is not None:
        for k in range(last + 1):
            yield f"stall-at-{k}", partial(_stall_at, stall, k), None, stop_reason


# -- the recipes: records in, the responses that take their place out ---------------------
# They share records with their input; ``_Recipe.build`` copies what they give.


def _cut_after(k: int, records: _Records) -> list[_Records]:
    return [records[:k]]


def _error_at(k: int, records: _Records) -> list[_Records]:
    return [[*records[:k], _INJECTED, *records[k + 1 :]]]


def _duplicate_end(records: _Records) -> list[_Records]:
    return [[*records, records[-1]]]


def _no_start(records: _Records) -> list[_Records]:
    return [records[1:]]


def _end_mismatch(records: _Records) -> list[_Records]:
    end = dict(cast("dict[str, object]", records[-1]))
    end["responseId"] = f"{end['responseId']}-mismatch"
    return [[*records[:-1], end]]


def _length_after(k: int, records: _Records) -> list[_Records]:
    return [[*records[:k], _ended(records, "length")]]


def _refused(records: _Records) -> list[_Records]:
    return [[records[0], _REFUSAL, _ended(records, "refusal")]]


def _content_filter(records: _Records) -> list[_Records]:
    return [[records[0], _ended(records, "content_filter")]]


def _inserted(error: dict[str, object], records: _Records) -> list[_Records]:
    return [[error], records]


def _stall_at(stall: int | float, k: int, records: _Records) -> list[_Records]:
    stalled = dict(cast("dict[str, object]", records[k]))
    stalled["delay"] = stall  # in place if it had one, so the keys keep their order
    return [[*records[:k], stalled, *records[k + 1 :]]]


def _ended(records: _Records, stop: str) -> dict[str, object]:
    """E: the response's end (``delay`` kept) with ``stop``, and no ``providerStopReason``."""
    end = dict(cast("dict[str, object]", records[-1]))
    end["stopReason"] = stop
    end.pop("providerStopReason", None)
    return end


def _type(record: object) -> object:
    return cast("dict[str, object]", record).get("type")


def _reason(name: str) -> CourseStopReason:
    return cast(CourseStopReason, name)


# -- checks -------------------------------------------------------------------------------


def _check_stall(stall: object) -> None:
    if stall is None:
        return
    if type(stall) is not int and type(stall) is not float:
        raise TypeError(
            "variants: `stall` must be an int or a float (seconds) or None, got "
            f"{type(stall).__qualname__}"
        )
    if not 0 <= stall <= _parser.MAX_DELAY:  # NaN and the infinities fail it too
        shown = repr(stall) if type(stall) is float or abs(stall) < 10**20 else "a long int"
        raise ValueError(f"variants: `stall` must be from 0 to 3,600 seconds, got {shown}")


def _check_fault(
    name: object, response_index: object, expected_code: object, expected_stop_reason: object
) -> None:
    if type(name) is not str:
        raise TypeError(f"Fault: `name` must be a str, got {type(name).__qualname__}")
    if not name:
        raise ValueError("Fault: `name` must not be empty")
    if type(response_index) is not int:
        raise TypeError(
            f"Fault: `response_index` must be an int, got {type(response_index).__qualname__}"
        )
    if response_index < 0:
        raise ValueError(f"Fault: `response_index` must be 0 or more, got {response_index}")
    if expected_code is not None and type(expected_code) is not Code:
        raise TypeError(
            "Fault: `expected_code` must be a FixtureProviderErrorCode or None, got "
            f"{type(expected_code).__qualname__}"
        )
    if expected_stop_reason is not None and (
        type(expected_stop_reason) is not str or expected_stop_reason not in _STOP_REASONS
    ):
        if type(expected_stop_reason) is not str:
            raise TypeError(
                "Fault: `expected_stop_reason` must be a str or None, got "
                f"{type(expected_stop_reason).__qualname__}"
            )
        raise ValueError(
            f"Fault: `expected_stop_reason` must be one of {', '.join(_STOP_REASONS)}, "
            f"got {expected_stop_reason[:60]!r}"
        )
    if (expected_code is None) == (expected_stop_reason is None):
        raise ValueError(
            "Fault: exactly one of `expected_code` and `expected_stop_reason` must be set"
        )


# -- replaying the original ---------------------------------------------------------------


async def _settled(adapter: FixtureProviderAdapter) -> list[CourseStopReason | None]:
    """The stop reason of each response of a fresh ``adapter`` that settles successfully
    (``None`` for each that fails), by replaying it: every delay judged, none waited."""
    settled: list[CourseStopReason | None] = []
    for index in range(adapter.pending):
        stream = adapter.stream(CourseModelRequest(f"faults-{index}"))._without_delays()
        try:
            response = await stream.result()
        except FixtureProviderError:
            settled.append(None)
        else:
            settled.append(response.stop_reason)
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

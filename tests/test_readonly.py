"""Read-only means read-only: no public path from an emitted value leads back to state.

Tool-call arguments are a ``collections.abc.Mapping`` of the adapter's own that never
hands out its storage, arrays are tuples, and the same frozen object may back several
queued responses (sharing is preserved). So these tests attack an emitted value the way
user code could, by every operator, dunder and copying protocol, and then check that
nothing queued changed. Copies, pickles and ``repr`` work on every value inside.
"""

from __future__ import annotations

import contextlib
import copy
import json
import operator
import pickle
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, cast

import pytest

from course import (
    CourseModelRequest,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    thaw,
)
from course._json import MAX_DEPTH, NotPlainJson, freeze, new_memo, refreeze

from .helpers import collect, end, fixture, run, start, tool

CFG: dict[str, object] = {"mode": "safe", "limits": [1, 2], "inner": {"k": "v"}}


def shared_fixture() -> tuple[dict[str, object], dict[str, object]]:
    """Two responses whose tool calls share one ``cfg`` object (so their copies do)."""
    cfg = copy.deepcopy(CFG)
    first = [start("r-1"), tool("c-1", "run", cfg=cfg), end("r-1", "tool_call")]
    second = [start("r-2"), tool("c-2", "run", cfg=cfg), end("r-2", "tool_call")]
    return fixture(first, second), cfg


def first_arguments(adapter: FixtureProviderAdapter) -> Mapping[str, Any]:
    outcome = run(collect(adapter.stream(CourseModelRequest("q-1"))))
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    return chunk.arguments


def second_arguments(adapter: FixtureProviderAdapter) -> object:
    outcome = run(collect(adapter.stream(CourseModelRequest("q-2"))))
    assert outcome.response is not None, outcome.error
    block = outcome.response.message.content[0]
    assert isinstance(block, CourseToolCallBlock)
    return thaw(block.arguments)


class Grabber:
    """An operand that records every object Python hands it, and tries to write to it."""

    def __init__(self) -> None:
        self.seen: list[object] = []

    def _grab(self, other: object) -> Any:
        self.seen.append(other)
        if type(other) is dict:
            other["mode"] = "pwned"
            other.clear()
        elif type(other) is list:
            other.append("pwned")
        return NotImplemented

    def __eq__(self, other: object) -> Any:
        return self._grab(other)

    def __ne__(self, other: object) -> Any:
        return self._grab(other)

    def __hash__(self) -> int:
        return 0

    __lt__ = __le__ = __gt__ = __ge__ = _grab
    __or__ = __ror__ = __and__ = __rand__ = __xor__ = __rxor__ = _grab
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _grab
    __ior__ = __iadd__ = _grab


BINARY: list[Callable[[Any, Any], object]] = [
    operator.eq,
    operator.ne,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.or_,
    operator.and_,
    operator.xor,
    operator.add,
    operator.sub,
    operator.mul,
    operator.ior,
    operator.iadd,
]


def values_inside(arguments: Mapping[str, Any]) -> list[object]:
    """The arguments and every container inside them."""
    found: list[object] = [arguments]
    stack: list[object] = [arguments]
    while stack:
        item = stack.pop()
        children = item.values() if isinstance(item, Mapping) else item
        for child in cast(Any, children):
            if isinstance(child, Mapping | tuple):
                found.append(child)
                stack.append(child)
    return found


def test_no_operator_hands_a_hostile_operand_anything_mutable() -> None:
    data, _ = shared_fixture()
    adapter = FixtureProviderAdapter(data)
    arguments = first_arguments(adapter)
    grabber = Grabber()
    for value in values_inside(arguments):
        for op in BINARY:
            for left, right in ((value, grabber), (grabber, value)):
                with contextlib.suppress(TypeError):
                    op(left, right)
    assert grabber.seen, "the operators never reached the grabber"
    assert not [seen for seen in grabber.seen if type(seen) in (dict, list)]
    assert second_arguments(adapter) == {"cfg": CFG}
    assert thaw(arguments) == {"cfg": CFG}


def test_comparing_with_a_hostile_operand_cannot_rewrite_a_queued_response() -> None:
    # The exploit: ``mappingproxy.__eq__`` passed the other operand its dict.
    data, _ = shared_fixture()
    adapter = FixtureProviderAdapter(data)
    arguments = first_arguments(adapter)
    grabber = Grabber()
    assert (arguments["cfg"] == grabber) is False
    assert (arguments["cfg"]["inner"] != grabber) is True
    assert second_arguments(adapter) == {"cfg": CFG}


def test_every_public_method_result_is_a_fresh_copy_or_read_only() -> None:
    data, _ = shared_fixture()
    adapter = FixtureProviderAdapter(data)
    arguments = first_arguments(adapter)
    cfg = arguments["cfg"]
    results: list[object] = [
        dict(cfg),
        {**cfg},
        list(cfg.items()),
        list(cfg.values()),
        list(cfg.keys()),
        list(iter(cfg)),
        cfg.__reduce__(),
        cfg.__reduce_ex__(2),
        cfg.__reduce_ex__(pickle.HIGHEST_PROTOCOL),
        cfg.__getstate__(),
        copy.copy(cfg),
        copy.deepcopy(cfg),
        cfg["limits"].__reduce_ex__(2),
        cfg["limits"] + ("x",),
        cfg["limits"][:],
    ]
    # Whatever came back: change every plain container in it.
    stack: list[object] = list(results)
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
            item.clear()
        elif type(item) is list:
            stack.extend(item)
            item.clear()
        elif type(item) is tuple:
            stack.extend(item)
    assert thaw(arguments) == {"cfg": CFG}
    assert second_arguments(adapter) == {"cfg": CFG}


def test_arguments_are_a_mapping_and_nothing_can_be_written() -> None:
    data, _ = shared_fixture()
    arguments = first_arguments(FixtureProviderAdapter(data))
    cfg: Any = arguments["cfg"]
    assert isinstance(arguments, Mapping)
    assert isinstance(arguments["cfg"], Mapping)
    limits: Any = cfg["limits"]
    assert type(limits).__mro__[1] is tuple
    expected = CFG | {"limits": (1, 2)}
    assert cfg == expected
    assert expected == cfg
    assert cfg.get("mode") == "safe" and cfg.get("nope") is None and "mode" in cfg
    assert len(cfg) == 3 and list(cfg) == ["mode", "limits", "inner"]
    for attempt in (
        lambda: operator.setitem(cfg, "mode", "x"),
        lambda: operator.delitem(cfg, "mode"),
        lambda: cfg.pop("mode"),
        lambda: cfg.update(mode="x"),
        lambda: cfg.clear(),  # noqa: PLW0108
        lambda: cfg.setdefault("x", 1),
        lambda: setattr(cfg, "_members", {}),
        lambda: setattr(cfg, "__class__", dict),
        lambda: delattr(cfg, "_members"),
        lambda: operator.setitem(limits, 0, 9),
        lambda: setattr(limits, "__class__", tuple),
    ):
        with pytest.raises((TypeError, AttributeError)):
            attempt()
    assert thaw(arguments) == {"cfg": CFG}


def test_the_read_only_types_cannot_be_subclassed() -> None:
    data, _ = shared_fixture()
    cfg = first_arguments(FixtureProviderAdapter(data))["cfg"]
    for kind in (type(cfg), type(cfg["limits"])):
        with pytest.raises(TypeError):
            type("Sneaky", (kind,), {})


def test_an_operand_pretending_to_be_read_only_gets_nothing() -> None:
    data, _ = shared_fixture()
    adapter = FixtureProviderAdapter(data)
    cfg = first_arguments(adapter)["cfg"]

    class Pretender(Grabber):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return type(cfg)

    pretender = Pretender()
    assert (cfg == pretender) is False
    assert not [seen for seen in pretender.seen if type(seen) in (dict, list)]
    assert second_arguments(adapter) == {"cfg": CFG}


@pytest.mark.parametrize(
    "duplicate", [copy.copy, copy.deepcopy, lambda v: pickle.loads(pickle.dumps(v))]
)
def test_copies_and_pickles_of_arguments_work_keep_sharing_and_stay_read_only(
    duplicate: Callable[[object], Any],
) -> None:
    shared: dict[str, object] = {"k": [1, {"x": []}]}
    data = fixture(
        [start(), tool(a=shared, b=shared, c={}, d={}, e=[], f=[]), end(stop_reason="tool_call")]
    )
    arguments = first_arguments(FixtureProviderAdapter(data))
    for value in values_inside(arguments):
        again = duplicate(value)
        assert again == value
        assert type(again) is type(value)
        assert thaw(cast(Any, again)) == thaw(cast(Any, value))
    again = duplicate(arguments)
    assert again["a"] is again["b"]
    assert again["c"] is not again["d"] and again["e"] is not again["f"]
    with pytest.raises(TypeError):
        again["a"]["k"] = 1
    with pytest.raises(TypeError):
        again["a"]["k"][0] = 1


def test_deep_arguments_survive_pickle() -> None:
    deep: object = "leaf"
    for _ in range(MAX_DEPTH - 6):
        deep = {"k": deep}
    data = fixture([start(), tool(d=deep), end(stop_reason="tool_call")])
    arguments = first_arguments(FixtureProviderAdapter(data))
    assert thaw(pickle.loads(pickle.dumps(arguments))) == {"d": deep}
    assert copy.deepcopy(arguments) is arguments


def test_json_dumps_needs_thaw_and_then_works() -> None:
    data, _ = shared_fixture()
    arguments = first_arguments(FixtureProviderAdapter(data))
    assert json.loads(json.dumps(thaw(arguments))) == {"cfg": CFG}
    assert json.dumps(arguments["cfg"]["limits"]) == "[1, 2]"


# -- repr --------------------------------------------------------------------------------


def test_repr_shortens_long_keys_as_well_as_long_values() -> None:
    key, value = "k" * 1_000_000, "v" * 1_000_000
    data = fixture([start(), tool(**{key: value}), end(stop_reason="tool_call")])
    adapter = FixtureProviderAdapter(data)
    outcome = run(collect(adapter.stream(CourseModelRequest("q"))))
    assert outcome.response is not None
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    for shown in (chunk, chunk.arguments, outcome.response, outcome.response.message):
        assert len(repr(shown)) < 2_000
    assert "kkkk" in repr(chunk.arguments)


def test_repr_of_a_shared_graph_of_arrays_is_short() -> None:
    node: list[object] = ["leaf"]
    for _ in range(60):
        node = [node, node]
    data = fixture([start(), tool(graph=node), end(stop_reason="tool_call")])
    arguments = first_arguments(FixtureProviderAdapter(data))
    assert len(repr(arguments["graph"])) < 2_000
    assert len(repr(arguments)) < 2_000
    assert len(str(arguments)) < 2_000


def test_repr_of_values_with_long_strings_is_bounded() -> None:
    long = "x" * 1_000_000
    data = fixture([start(long), {"type": "text_delta", "text": long}, end(long)])
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest(long))))
    assert outcome.response is not None
    for shown in (*outcome.chunks, outcome.response, outcome.response.message):
        assert len(repr(shown)) < 2_000


def test_a_read_only_object_compares_with_any_mapping() -> None:
    data, _ = shared_fixture()
    cfg = first_arguments(FixtureProviderAdapter(data))["cfg"]
    plain = thaw(cfg)
    plain["limits"] = (1, 2)
    assert cfg == MappingProxyType(plain)
    assert cfg != MappingProxyType({})
    assert cfg != ["mode", "limits", "inner"]


def test_refreeze_keeps_read_only_values_and_copies_plain_ones() -> None:
    data, _ = shared_fixture()
    cfg: Any = first_arguments(FixtureProviderAdapter(data))["cfg"]
    limits: Any = cfg["limits"]
    assert refreeze(cfg) is cfg
    assert refreeze(limits) is limits
    again = refreeze(cast(Any, {"cfg": cfg, "list": [cfg]}))
    assert isinstance(again, Mapping) and again["cfg"] is cfg
    with pytest.raises(TypeError, match="cycle"):
        loop: list[object] = []
        loop.append(loop)
        refreeze(loop)  # type: ignore[arg-type]


def test_a_large_record_object_repeated_is_copied_once_and_judged_each_time() -> None:
    big = {"type": "text_delta", "text": "a", **{f"x{i}": i for i in range(40)}}
    data = fixture([start(), big, big, end()])
    outcome = run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("q"))))
    assert outcome.error is not None
    assert outcome.error.path == "/responses/0/records/1/x0"


def test_a_value_walked_from_too_deep_a_place_is_refused() -> None:
    with pytest.raises(NotPlainJson):
        freeze([], new_memo(), MAX_DEPTH, False, False)

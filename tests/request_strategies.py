"""Hypothesis strategies for request bodies: any JSON object, and a well-shaped body
broken in a few places (a value retyped, a key dropped or added, an item dropped or
repeated), so that a reader meets every shape near the ones it reads."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from .strategies import json_values, odd_values

__all__ = ["json_bodies", "mutated"]

json_bodies = st.dictionaries(
    st.one_of(
        st.sampled_from(
            [
                "messages",
                "system",
                "tools",
                "contents",
                "systemInstruction",
                "system_instruction",
            ]
        ),
        st.text(max_size=4),
    ),
    st.recursive(
        json_values,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    ),
    max_size=4,
)
"""Any JSON object, its keys often those a reader reads."""


def _places(value: Any, found: list[tuple[Any, Any]]) -> None:
    """Every (container, key or index) in ``value``, depth first."""
    if type(value) is dict:
        for key in value:
            found.append((value, key))
            _places(value[key], found)
    elif type(value) is list:
        for index, item in enumerate(value):
            found.append((value, index))
            _places(item, found)


def _fresh(draw: st.DrawFn) -> Any:
    """An odd value of its own: ``odd_values`` samples shared ``[]`` and ``{}``, which a
    later mutation would change for every draw after it (and nest in themselves)."""
    return copy.deepcopy(draw(odd_values))


@st.composite
def mutated(draw: st.DrawFn, body: dict[str, Any], max_mutations: int = 3) -> dict[str, Any]:
    """``body`` (copied) with one to ``max_mutations`` mutations at places drawn."""
    body = copy.deepcopy(body)
    for _ in range(draw(st.integers(1, max_mutations))):
        places: list[tuple[Any, Any]] = []
        _places(body, places)
        if not places:
            body[draw(st.text(max_size=4))] = _fresh(draw)
            continue
        owner, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["retype", "drop", "add", "repeat"]))
        if action == "retype":
            owner[key] = _fresh(draw)
        elif action == "drop":
            del owner[key]
        elif action == "add" and type(owner) is dict:
            owner[draw(st.sampled_from(["type", "id", "role", "text", "extra", "x_y"]))] = _fresh(
                draw
            )
        elif type(owner) is list:
            owner.insert(key, copy.deepcopy(owner[key]))
    return body

"""Looking at untrusted objects without running any of their code.

``type(x)`` and ``is`` are safe on any object. Almost everything else is not:
``isinstance`` may read ``__class__``, ``==`` and ``in`` call ``__eq__`` and
``__hash__`` (of the object or of its metaclass), ``getattr`` runs descriptors and
``__getattr__``, and even ``inspect.getattr_static`` reads a class's ``__dict__`` through
its metaclass on Python 3.11. These helpers read types through ``type``'s own slots.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MISSING", "has_type_attribute", "type_attribute", "type_name"]

MISSING: Final = object()

_qualname_of = type.__dict__["__qualname__"].__get__
_mro_of = type.__dict__["__mro__"].__get__
_dict_of = type.__dict__["__dict__"].__get__


def type_name(value: object) -> str:
    """The qualified name of ``value``'s type, as an exact ``str``."""
    return str.__str__(_qualname_of(type(value)))


def type_attribute(kind: type, name: str) -> object:
    """The raw class attribute ``name`` along ``kind``'s MRO, or ``MISSING``.

    Like ``inspect.getattr_static`` on a type, but never asks a metaclass anything,
    nor a key of a class namespace: a lookup (``name in namespace``) would call
    ``__eq__`` of any ``str`` subclass key whose hash collides with ``name``'s. So the
    namespace is scanned, and only exact ``str`` keys are compared.
    """
    for klass in _mro_of(kind):
        for key, value in _dict_of(klass).items():
            if type(key) is str and str.__eq__(key, name):
                return value
    return MISSING


def has_type_attribute(kind: type, name: str) -> bool:
    """Whether ``kind`` (not an instance of it) defines ``name`` somewhere in its MRO."""
    return type_attribute(kind, name) is not MISSING

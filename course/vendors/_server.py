"""Placeholder: the ASGI application and ``FixtureServer`` are being written."""

from __future__ import annotations

__all__ = ["FixtureServer", "asgi_app", "serve"]


class FixtureServer:
    """Placeholder."""


def asgi_app(fixture: object) -> object:
    """Placeholder."""
    raise NotImplementedError


def serve(fixture: object) -> FixtureServer:
    """Placeholder."""
    raise NotImplementedError

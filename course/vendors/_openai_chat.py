"""The ``openai-chat`` wire format (OpenAI Chat Completions, streaming): importer, renderer.

Placeholder: the importer and the renderer are being written.
"""

from __future__ import annotations

from typing import Final

from ._recording import Event, JsonObject, StreamImporter
from ._rendering import StreamRenderer

__all__ = ["FORMAT", "Importer", "Renderer", "detects", "fits"]

FORMAT: Final = "openai-chat"


def detects(first: JsonObject) -> bool:
    """Whether a first event says this format (``format="auto"``)."""
    return False


def fits(first: JsonObject) -> bool:
    """Whether a first event may open a recording of this format."""
    return False


class Importer(StreamImporter):
    """The openai-chat state machine."""

    format = FORMAT

    def feed(self, event: Event) -> None:
        raise NotImplementedError


class Renderer(StreamRenderer):
    """Renders a stream as openai-chat."""

    format = FORMAT

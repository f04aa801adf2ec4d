"""Untrusted text made fit for a message or an output line, and counted nouns.

Shared by the adapter's messages, the command line and the server's request log.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["one_line", "plural", "shorten"]

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shorten(text: str, limit: int = 60) -> str:
    """An untrusted string cut to ``limit`` characters for a message (the error's
    attributes, such as ``path`` and ``transport_message``, keep it whole)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str) -> str:
    """Escape control characters, so fixture data can never break a line or a terminal."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"

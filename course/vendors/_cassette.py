"""VCR cassettes (vcrpy, pytest-recording): the response bodies they recorded.

YAML needs PyYAML, the optional extra ``course[cassettes]``; it is imported only when a
cassette is read, so everything else works without it.
"""

from __future__ import annotations

from ._recording import RecordingError, RecordingErrorCode

__all__ = ["is_cassette", "read_cassette"]

_Code = RecordingErrorCode


def is_cassette(path: str) -> bool:
    """Whether a file is read as a cassette: its name ends ``.yaml`` or ``.yml``."""
    return path.lower().endswith((".yaml", ".yml"))


def read_cassette(text: str, source: str) -> list[tuple[int, str]]:
    """Each interaction's index and its ``response.body.string``, where that is a str."""
    try:
        import yaml  # noqa: PLC0415  (optional extra, only for cassettes)
    except ImportError:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "Reading a VCR cassette needs PyYAML: pip install 'course[cassettes]'",
            source=source,
        ) from None
    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        # ValueError: a scalar YAML cannot convert; RecursionError: absurd nesting.
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RecordingError(
            _Code.RECORDING_UNREADABLE, f"The cassette is not YAML: {reason}", source=source
        ) from None
    interactions = document.get("interactions") if type(document) is dict else None
    if type(interactions) is not list:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "Expected a VCR cassette: a YAML mapping with an `interactions` list",
            source=source,
        )
    bodies: list[tuple[int, str]] = []
    for index, interaction in enumerate(interactions):
        body = _dig(interaction, "response", "body", "string")
        if type(body) is str:
            bodies.append((index, body))
    return bodies


def _dig(value: object, *keys: str) -> object:
    for key in keys:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value

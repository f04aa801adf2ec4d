"""course: an offline fixture provider adapter for testing LLM agent loops.

Replay a versioned fixture of recorded provider records as a provider would stream
them; every record is untrusted input, and only proven, immutable values of the
course model protocol come out (chunks, then one response), or a coded, located
``FixtureProviderError``. No network, no credentials, no vendor SDK.
"""

from ._abort import AbortController, AbortSignal
from ._adapter import FixtureProviderAdapter
from ._errors import FixtureProviderError, FixtureProviderErrorCode
from ._json import thaw
from ._loading import load_fixture
from ._model import (
    CourseAssistantMessage,
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseOtherBlock,
    CourseRedactedThinkingBlock,
    CourseRedactedThinkingChunk,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
    CourseRequestMessage,
    CourseStopReason,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseThinkingBlock,
    CourseThinkingDeltaChunk,
    CourseThinkingSignatureChunk,
    CourseTool,
    CourseToolCallBlock,
    CourseToolCallChunk,
    CourseToolResultBlock,
)
from ._stream import CourseModelStream

__all__ = [
    "AbortController",
    "AbortSignal",
    "CourseAssistantMessage",
    "CourseIncompleteToolCallBlock",
    "CourseIncompleteToolCallChunk",
    "CourseModelChunk",
    "CourseModelRequest",
    "CourseModelResponse",
    "CourseModelStream",
    "CourseModelUsage",
    "CourseOtherBlock",
    "CourseRedactedThinkingBlock",
    "CourseRedactedThinkingChunk",
    "CourseRefusalBlock",
    "CourseRefusalDeltaChunk",
    "CourseRequestMessage",
    "CourseStopReason",
    "CourseTextBlock",
    "CourseTextDeltaChunk",
    "CourseThinkingBlock",
    "CourseThinkingDeltaChunk",
    "CourseThinkingSignatureChunk",
    "CourseTool",
    "CourseToolCallBlock",
    "CourseToolCallChunk",
    "CourseToolResultBlock",
    "FixtureProviderAdapter",
    "FixtureProviderError",
    "FixtureProviderErrorCode",
    "load_fixture",
    "thaw",
]

"""Real provider streams in and out: import recordings, serve fixtures to real SDKs.

Four wire formats, named by these strings everywhere: ``openai-chat`` (OpenAI Chat
Completions), ``openai-responses`` (OpenAI Responses API), ``anthropic`` (Anthropic
Messages) and ``gemini`` (the Gemini API), streamed or not.

- ``import_recording(data)`` turns one recorded stream into one fixture response;
  ``load_recordings(*paths)`` reads SSE files and VCR cassettes into a whole fixture.
  Every refusal is a ``RecordingError`` with a ``RecordingErrorCode`` and the line and
  column in the recording.
- ``serve(fixture)`` answers real SDK clients over HTTP from a fixture, in each
  provider's wire format; ``asgi_app(fixture)`` is the same application to mount in a
  server of your own. Each request is read into course's vocabulary and checked as the
  provider checks it (tool-call linkage, thinking signatures): ``server.calls`` holds a
  ``ServedCall`` per model call, and a failed check is the provider's 400.
- ``record(path)`` is a local proxy with ``serve``'s routes that forwards each call to
  the real provider, streams the answer back as it arrives, and writes what came back
  as a fixture, with no credential in it.

Exception tree::

    Exception
     └── RecordingError   (.code: RecordingErrorCode)
"""

from ._importing import import_recording, load_recordings
from ._record import FixtureRecorder, record
from ._recording import Recording, RecordingError, RecordingErrorCode
from ._requests import ServedCall
from ._server import FixtureServer, asgi_app, serve

__all__ = [
    "FixtureRecorder",
    "FixtureServer",
    "Recording",
    "RecordingError",
    "RecordingErrorCode",
    "ServedCall",
    "asgi_app",
    "import_recording",
    "load_recordings",
    "record",
    "serve",
]

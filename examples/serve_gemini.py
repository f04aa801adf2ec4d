"""A tool-using agent loop with the plain ``google-genai`` SDK, answered by ``course`` over HTTP.

``serve`` plays a version-2 fixture in Gemini's wire format: the first response calls
the ``add`` tool (with the ``thoughtSignature`` Gemini attaches to a call, which the
caller must send back), the second answers. The loop is ordinary google-genai code
with automatic function calling off; only ``http_options.base_url`` points at the
fixture server. No network, no credentials (needs the extra ``course[serve]``).

Run it from the repository root:  python examples/serve_gemini.py
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, cast

from google import genai
from google.genai import types

from course import thaw
from course.vendors import serve

SIGNATURE = base64.b64encode(b"an opaque thought signature").decode()
FIXTURE: dict[str, Any] = {
    "schemaVersion": 2,
    "responses": [
        {
            "records": [
                {"type": "response_start", "responseId": "resp-1", "role": "assistant"},
                {
                    "type": "tool_call",
                    "id": "resp-1:call:0",  # how import names a call Gemini gave no id
                    "name": "add",
                    "arguments": {"left": 20, "right": 22},
                    "signature": SIGNATURE,
                },
                {
                    "type": "response_end",
                    "responseId": "resp-1",
                    "stopReason": "tool_call",
                    "usage": {"inputTokens": 12, "outputTokens": 8},
                },
            ]
        },
        {
            "records": [
                {"type": "response_start", "responseId": "resp-2", "role": "assistant"},
                {"type": "text_delta", "text": "The sum is 42."},
                {
                    "type": "response_end",
                    "responseId": "resp-2",
                    "stopReason": "stop",
                    "usage": {"inputTokens": 30, "outputTokens": 6},
                },
            ]
        },
    ],
}


def add(left: int, right: int) -> int:
    return left + right


TOOLS: Mapping[str, Callable[..., int]] = {"add": add}
CONFIG = types.GenerateContentConfig(
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="add",
                    description="Add two integers.",
                    parameters_json_schema={
                        "type": "object",
                        "properties": {
                            "left": {"type": "integer"},
                            "right": {"type": "integer"},
                        },
                        "required": ["left", "right"],
                    },
                )
            ]
        )
    ],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def agent_loop(client: genai.Client, question: str) -> None:
    """Ask, run the tools the model calls, send each result back, repeat."""
    contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=question)])]
    print(f"user: {question}")
    while True:
        parts: list[types.Part] = []
        for chunk in client.models.generate_content_stream(
            model="gemini-2.5-flash", contents=contents, config=CONFIG
        ):
            for part in (chunk.candidates or [types.Candidate()])[0].content.parts or []:  # type: ignore[union-attr]
                if part.text:
                    print(part.text, end="", flush=True)  # text as it arrives
                parts.append(part)
        # The model's turn goes back as it came, each call with its thought_signature.
        contents.append(types.Content(role="model", parts=parts))
        calls = [part.function_call for part in parts if part.function_call is not None]
        if not calls:
            print()
            return
        answers: list[types.Part] = []
        for call in calls:
            result = TOOLS[call.name or ""](**(call.args or {}))
            print(f"tool {call.name}({call.args}) = {result}")
            answers.append(
                types.Part.from_function_response(name="add", response={"result": result})
            )
        contents.append(types.Content(role="user", parts=answers))


def main() -> None:
    with serve(FIXTURE) as server:
        options = types.HttpOptions(base_url=server.url)
        with genai.Client(api_key="test", http_options=options) as client:
            agent_loop(client, "What is 20 + 22?")
        # The second request carried the call back with its signature: the same bytes
        # (google-genai re-encodes them URL-safe, so compare bytes, never text).
        second = cast("dict[str, Any]", thaw(server.requests[1]))
        sent = second["contents"][1]["parts"][0]
        echoed = base64.urlsafe_b64decode(sent["thoughtSignature"])
        assert echoed == base64.b64decode(SIGNATURE), sent


if __name__ == "__main__":
    main()

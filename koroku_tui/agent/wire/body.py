"""The request body as the API receives it, assembled from each Content's wire form.

``generate_content_stream`` turns every Content of the history into its wire
dict again on every request (pydantic validation, a path lookup per field):
about half a millisecond per event, 1.5 s per step at 3,000 events. Koroku
converts each Content once, with the SDK's own converter so the form is the
SDK's (the common parts are written directly, to the same bytes: see
``part_form.py``), keeps the dict next to the Content (``Conversation``), and builds each
body from those dicts plus the config's part, which is converted once per
config. The body goes out through the SDK's own client (its auth, base URL,
Vertex AI handling, transport and error types) and each chunk is parsed
exactly as the SDK parses it. ``tests/test_wire_contract.py`` checks, on
random histories, that the bytes sent equal what ``generate_content_stream``
sends, so an SDK upgrade that changes the wire is caught there.

The SDK has no public entry point for this; the private names used are the
ones ``AsyncModels._generate_content_stream`` itself calls (google-genai 3.6).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google import genai
from google.genai import _common, types
from google.genai import models as sdk_models

from koroku_tui.agent.wire.errors import AgentError, ErrorKind
from koroku_tui.agent.wire.part_form import plain_part

__all__ = ["WireContent", "WireForm", "WireRequest", "warm_up"]

WireContent = dict[str, Any]
"""One Content as the API receives it (JSON-ready: bytes already base64)."""

_PLACEHOLDER = types.Content(role="user", parts=[types.Part(text="")])

# What the SDK passes when parsing each chunk of a plain (schema-less) request.
PARSE_IN_THREAD_CHARS = 65_536
"""A streamed chunk this long or longer is parsed in a thread, not on the event loop."""
_PARSE_KWARGS: dict[str, Any] = {
    "config": {"response_schema": None, "response_json_schema": None, "include_all_fields": None}
}


def _json_ready(value: Any) -> Any:
    return _common.encode_unserializable_types(_common.convert_to_dict(value))


@dataclass(frozen=True)
class WireRequest:
    """One streamed request: the path under the API version, and the body."""

    path: str
    body: dict[str, Any]


class WireForm:
    """Converts Contents and configs the way ``client``'s backend (Gemini API or Vertex AI) wants.

    Conversions of configs are cached by what makes them differ; the body
    parts are shared between requests and never mutated.
    """

    def __init__(self, client: genai.Client) -> None:
        self._client = client
        self.vertex = bool(client._api_client.vertexai)
        self._frames: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}

    def content(self, content: types.Content) -> WireContent:
        """``content`` as the API receives it.

        Raises :class:`AgentError` for a part this backend does not take (the
        SDK refuses, e.g., a call's ``will_continue`` on the Gemini API).
        """
        try:
            wire = self._content(content)
        except ValueError as exc:
            backend = "Vertex AI" if self.vertex else "the Gemini API"
            reason = " ".join(str(exc).split())[:160]
            raise AgentError(
                f"A stored message holds a part {backend} does not accept ({reason}); "
                "rewind to before it or start a new conversation.",
                ErrorKind.BAD_REQUEST,
            ) from exc
        return wire

    def _content(self, content: types.Content) -> WireContent:
        """The SDK's ``_Content_to_*``, common parts built directly (``part_form.py``)."""
        convert = sdk_models._Part_to_vertex if self.vertex else sdk_models._Part_to_mldev
        wire: WireContent = {}
        if content.parts is not None:
            parts = []
            for part in content.parts:
                direct = plain_part(part)
                parts.append(direct if direct is not None else _json_ready(convert(part)))
            wire["parts"] = parts
        if content.role is not None:
            wire["role"] = content.role
        return wire

    def request(
        self,
        model: str,
        contents: Sequence[WireContent],
        config: Callable[[], types.GenerateContentConfig],
        config_key: str,
    ) -> WireRequest:
        """The request for ``contents`` (wire forms) under the config ``config()`` makes.

        ``config_key`` names the config: requests with the same key must have
        the same config, whose conversion is then reused (and ``config`` not
        called).
        """
        path, frame = self._frame(model, config, config_key)
        return WireRequest(path, {"contents": list(contents), **frame})

    def _frame(
        self, model: str, config: Callable[[], types.GenerateContentConfig], key: str
    ) -> tuple[str, dict[str, Any]]:
        """The path and the body without its contents, as the SDK builds them."""
        cached = self._frames.get((model, key))
        if cached is not None:
            return cached
        api = self._client._api_client
        parameters = types._GenerateContentParameters(
            model=model, contents=[_PLACEHOLDER], config=config()
        )
        convert = (
            sdk_models._GenerateContentParameters_to_vertex
            if self.vertex
            else sdk_models._GenerateContentParameters_to_mldev
        )
        converted = convert(api, parameters, None, parameters)
        path = "{model}:streamGenerateContent?alt=sse".format_map(converted["_url"])
        frame = {
            name: value
            for name, value in converted.items()
            if name not in ("contents", "config") and not name.startswith("_")
        }
        result = (path, _json_ready(frame))
        self._frames[(model, key)] = result
        return result

    def _parse(self, response: Any) -> types.GenerateContentResponse:
        """One streamed chunk (an SSE event's body), parsed as the SDK parses it."""
        data = json.loads(response.body) if response.body else {}
        if self.vertex:
            data = sdk_models._GenerateContentResponse_from_vertex(data)
        else:
            data = sdk_models._GenerateContentResponse_from_mldev(data)
        chunk = types.GenerateContentResponse._from_response(response=data, kwargs=_PARSE_KWARGS)
        chunk.sdk_http_response = types.HttpResponse(headers=response.headers)
        return chunk

    async def stream(
        self, request: WireRequest
    ) -> AsyncGenerator[types.GenerateContentResponse, None]:
        """Send ``request`` and yield its chunks, parsed as the SDK parses them.

        Nothing is sent before the first iteration, as with the SDK's own
        stream, so a stall timeout around ``anext`` covers the connection too.
        """
        api = self._client._api_client
        # The SDK strips the keys starting with "_" from the dict it is given.
        responses = await api.async_request_streamed("post", request.path, dict(request.body))
        try:
            async for response in responses:
                if len(response.body or "") > PARSE_IN_THREAD_CHARS:
                    # One chunk of a thousand calls takes ~0.2 s to parse: in a
                    # thread, the event loop (the app's keys) gets its turns.
                    chunk = await asyncio.to_thread(self._parse, response)
                else:
                    chunk = self._parse(response)
                api._verify_response(chunk)
                yield chunk
        finally:
            await responses.aclose()


def warm_up() -> None:
    """Build a request's config and parse a reply's chunk once, in the caller's thread.

    pydantic builds each SDK model's validator at its first use: ~0.1-0.3 s
    here for the first request's config and the first chunk, which the first
    reply would spend on the event loop, the keys waiting. Called in the
    agent's loading thread, before the agent exists.
    """
    types.GenerateContentConfig(
        system_instruction="warm",
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name="warm", description="warm", parameters_json_schema={"type": "object"}
                    )
                ]
            )
        ],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        thinking_config=types.ThinkingConfig(include_thoughts=True),
        automatic_continuation=False,
    )
    chunk = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "warm", "thought": True},
                        {"functionCall": {"name": "warm", "args": {}}, "thoughtSignature": "AA=="},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
        "modelVersion": "warm",
    }
    data = sdk_models._GenerateContentResponse_from_mldev(chunk)
    types.GenerateContentResponse._from_response(response=data, kwargs=_PARSE_KWARGS)

"""One model request: streamed, folded into one Content, retried while nothing arrived.

A request is retried (see ``retry.py``) only if it failed before the first
chunk: after that, the user has seen part of an answer and a second request
would produce a different one, so the caller keeps what arrived instead. The
accumulator of the attempt in flight is always reachable through
:class:`ReplyInFlight`, which is how a cancelled turn keeps its partial text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import httpx2
from google.genai import types

from koroku_tui.agent.hooks import HookEmitter, RetryNotice, TextDelta, ThoughtDelta
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.agent.wire.body import WireContent, WireForm, WireRequest
from koroku_tui.agent.wire.errors import (
    EmptyStreamError,
    StallError,
    StreamCutError,
    describe_failure,
    short_reason,
)
from koroku_tui.agent.wire.retry import RetryPolicy, is_retryable, server_retry_delay
from koroku_tui.agent.wire.streaming import StreamAccumulator
from koroku_tui.config.settings import DEFAULT_STALL_TIMEOUT
from koroku_tui.events import TokenUsage

__all__ = [
    "ReplyFacts",
    "ReplyFailed",
    "ReplyInFlight",
    "RequestSettings",
    "finish_of",
    "partial_content",
    "request_reply",
    "usage_of",
]

logger = logging.getLogger(__name__)


class ReplyFailed(Exception):
    """The request failed for good; ``partial`` holds whatever arrived before."""

    def __init__(self, cause: BaseException, partial: StreamAccumulator) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.partial = partial


class RequestSettings:
    """What every request of a session carries besides the contents."""

    def __init__(
        self, system_instruction: str, tools: ToolRegistry, *, include_thoughts: bool = True
    ) -> None:
        self.system_instruction = system_instruction
        self.tools = tools
        self.include_thoughts = include_thoughts
        self._declarations: tuple[int, types.Tool] | None = None

    def config(self, *, offer_tools: bool) -> types.GenerateContentConfig:
        """The request config; ``offer_tools=False`` once the turn's tool budget is used."""
        tools = [self._tool()] if offer_tools and self.tools.names else None
        return types.GenerateContentConfig(
            system_instruction=self.system_instruction,
            tools=tools,
            # The agent runs its own tool loop.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            thinking_config=types.ThinkingConfig(include_thoughts=self.include_thoughts),
            # Otherwise the SDK may re-send a dropped stream on its own, behind
            # the retry policy's back.
            automatic_continuation=False,
        )

    def request(
        self, form: WireForm, model: str, contents: Sequence[WireContent], *, offer_tools: bool
    ) -> WireRequest:
        """The request for ``contents`` (wire forms) under :meth:`config`."""
        offered = offer_tools and bool(self.tools.names)
        # Everything config() reads: the same key means the same config.
        key = repr((offered, self.tools.version, self.include_thoughts, self.system_instruction))
        return form.request(model, contents, lambda: self.config(offer_tools=offer_tools), key)

    def _tool(self) -> types.Tool:
        # Building the JSON schemas costs more than the rest of a step: do it once
        # per set of tools (an MCP server's new list is a new set).
        version = self.tools.version
        if self._declarations is None or self._declarations[0] != version:
            self._declarations = (version, self.tools.tool())
        return self._declarations[1]


class ReplyFacts(TypedDict):
    """What a stored reply says of its request, besides the usage Gemini reported."""

    model: str | None
    """The model the request was sent to."""
    wait_seconds: float | None
    """``ReplyInFlight.waited()`` when the reply ended."""


@dataclass
class ReplyInFlight:
    """The attempt being streamed, readable from outside if the turn is cancelled."""

    accumulator: StreamAccumulator = field(default_factory=StreamAccumulator)
    block_reason: str | None = None
    """Set when Gemini refused the prompt itself (``prompt_feedback.block_reason``)."""
    started: float = field(default_factory=time.monotonic)
    """When the request was first sent (``time.monotonic()``), before any retry."""

    def waited(self) -> float:
        """Seconds since the request was sent: the time spent waiting for Gemini's reply."""
        return time.monotonic() - self.started


async def _next_chunk(
    chunks: AsyncIterator[types.GenerateContentResponse], stall_timeout: float, since: float
) -> types.GenerateContentResponse:
    """The next chunk, or :class:`StallError` once Gemini has been silent too long.

    The transport's own read timeout (``httpx2.ReadTimeout``) means the same
    silence, so it is told the same way rather than retried as a network error.
    """
    try:
        async with asyncio.timeout(stall_timeout) as deadline:
            return await anext(chunks)
    except TimeoutError:
        if deadline.expired():
            raise StallError(stall_timeout) from None
        raise
    except httpx2.ReadTimeout as exc:
        raise StallError(time.monotonic() - since) from exc


LOOP_SHARE = 0.004
"""Seconds a stream reads and parses chunks before it lets the event loop run others."""


async def _stream_once(
    form: WireForm,
    request: WireRequest,
    flight: ReplyInFlight,
    emitter: HookEmitter,
    stall_timeout: float,
) -> None:
    acc = flight.accumulator
    # The HTTP request goes out on the first iteration, inside the stall timeout.
    stream = form.stream(request)
    chunks = aiter(stream)
    yielded_at = time.monotonic()
    try:
        while True:
            if time.monotonic() - yielded_at >= LOOP_SHARE:
                # Chunks already read from the socket come back without
                # suspending: a fast reply would hold the event loop to its
                # end, and the app's keys and frames with it.
                await asyncio.sleep(0)
                yielded_at = time.monotonic()
            try:
                chunk = await _next_chunk(chunks, stall_timeout, time.monotonic())
            except StopAsyncIteration:
                break
            new_parts = acc.add(chunk)
            feedback = chunk.prompt_feedback
            if feedback is not None and feedback.block_reason is not None:
                flight.block_reason = str(feedback.block_reason.value)
            for part in new_parts:
                if not part.text:
                    continue  # calls, and the empty part that only carries a signature
                if part.thought:
                    await emitter.emit("on_thought_delta", ThoughtDelta(part.text))
                else:
                    await emitter.emit("on_text_delta", TextDelta(part.text))
    finally:
        # Close the stream now (it holds the HTTP connection), rather than
        # leave it to garbage collection at some arbitrary later point.
        with contextlib.suppress(Exception):
            await stream.aclose()
    if acc.chunks == 0:
        raise EmptyStreamError()
    if not acc.complete and flight.block_reason is None:
        raise StreamCutError()


async def request_reply(
    form: WireForm,
    request: WireRequest,
    *,
    policy: RetryPolicy,
    emitter: HookEmitter,
    flight: ReplyInFlight,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
) -> StreamAccumulator:
    """Stream one reply to ``request``, retrying transient failures that happen before any chunk.

    Deltas go to ``on_text_delta`` / ``on_thought_delta`` as they arrive; each
    retry is announced on ``on_retry``. Raises :class:`ReplyFailed` when the
    failure is final (a :class:`StallError` after ``stall_timeout`` seconds
    without a chunk is final at once); ``asyncio.CancelledError`` passes
    through untouched.
    """
    attempts = max(1, policy.attempts)
    for attempt in range(1, attempts + 1):
        flight.accumulator = StreamAccumulator()
        flight.block_reason = None
        try:
            await _stream_once(form, request, flight, emitter, stall_timeout)
        except Exception as exc:
            received = flight.accumulator.chunks > 0
            transient = is_retryable(exc) or isinstance(exc, EmptyStreamError)
            if received or not transient or attempt == attempts:
                raise ReplyFailed(exc, flight.accumulator) from exc
            delay = policy.delay(attempt, server_retry_delay(exc))
            kind = describe_failure(exc).kind
            logger.info("attempt %d/%d failed (%r); retry in %.2fs", attempt, attempts, exc, delay)
            await emitter.emit(
                "on_retry",
                RetryNotice(attempt + 1, attempts, delay, short_reason(exc), kind),
            )
            await asyncio.sleep(delay)
            continue
        return flight.accumulator
    raise AssertionError("unreachable: the last attempt either returns or raises")


def usage_of(acc: StreamAccumulator) -> TokenUsage | None:
    """The reply's token usage, as stored on its event."""
    return TokenUsage.from_genai(acc.usage) if acc.usage is not None else None


def finish_of(acc: StreamAccumulator) -> str | None:
    """The reply's finish reason as text (``"STOP"``), if it gave one."""
    return acc.finish_reason.value if acc.finish_reason is not None else None


def _worth_keeping(part: types.Part) -> bool:
    return bool((part.text and not part.thought) or part.function_call is not None)


def partial_content(acc: StreamAccumulator) -> types.Content | None:
    """What arrived of an interrupted reply, if it is worth storing and valid to send back.

    Kept when it holds visible text or a call (a call is whole when it
    arrives, signature included); thoughts alone are dropped. Unsigned
    partial text is accepted by the API; the empty part that only carries a
    signature is kept, any other empty part dropped.
    """
    if not any(_worth_keeping(p) for p in acc.parts):
        return None
    parts = [p for p in acc.parts if p.text != "" or p.thought_signature is not None]
    return types.Content(role="model", parts=parts)

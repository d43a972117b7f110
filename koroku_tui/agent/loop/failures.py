"""What a failure leaves behind: a valid history, and one sentence for the user.

Whatever interrupts a step (a cancel at any await, a broken stream, a failed
tool), the history is left valid before the exception leaves: what arrived is
kept (``keep_partial``), and every call the model made gets a response
(``answer_unfinished``). Whatever fails leaves the agent as one
:class:`AgentError` (``guarded``): redacted, reported on ``on_error`` and,
when it ended a turn, stored under the message it answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from google.genai import types

from koroku_tui.agent.hooks import (
    ErrorNotice,
    HookEmitter,
    ModelResponse,
    ToolCallFinished,
    ToolCallStarted,
)
from koroku_tui.agent.loop.conversation import Told
from koroku_tui.agent.loop.guardrail import CANCELLED_BY_USER, INTERRUPTED_BY_STOP
from koroku_tui.agent.loop.tool_step import answer_unfinished, calls_of, responses_event
from koroku_tui.agent.tools import ToolResult
from koroku_tui.agent.wire.errors import (
    AgentError,
    ErrorKind,
    StallError,
    describe_failure,
    seconds_text,
)
from koroku_tui.agent.wire.finish import (
    KOROKU_CANCELLED,
    KOROKU_CUT_OFF,
    KOROKU_STOPPED,
    WHOLE,
    AnswerCut,
    answer_cut,
    blocked_prompt_message,
)
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.agent.wire.request import ReplyFailed, finish_of, partial_content, usage_of
from koroku_tui.agent.wire.streaming import StreamAccumulator
from koroku_tui.events import Event, SessionEvent, TurnErrorEvent
from koroku_tui.store import SessionBusyError, SessionManager, StoreError

__all__ = [
    "Failures",
    "Save",
    "cancel_reason",
    "interrupted_reason",
    "no_answer_error",
    "request_error",
    "unfinished_reason",
]

logger = logging.getLogger(__name__)

_ERRORS_NOT_KEPT = frozenset(
    {ErrorKind.STORE, ErrorKind.BUSY, ErrorKind.CUT_OFF, ErrorKind.NOTHING_TO_RETRY}
)
"""Turn errors ``Failures._keep_error`` does not store (see there)."""

T = TypeVar("T")


class Save(Protocol):
    """Stores events in order, each with its Content (the agent's ``_save``), then tells
    the hooks: ``on_usage``, then ``then()``; told even if a cancel lands meanwhile
    (``Conversation.save``)."""

    def __call__(
        self, *items: tuple[Event, types.Content | None], then: Told | None = None
    ) -> Awaitable[None]: ...


def cancel_reason(exc: BaseException) -> str:
    """What a call cut short by ``exc`` is answered with.

    A stop signal cancels with ``INTERRUPTED_BY_STOP`` as the message (see
    ``koroku_tui/agent/loop/stopping.py``); any other cancel is the user's.
    """
    if isinstance(exc, asyncio.CancelledError) and INTERRUPTED_BY_STOP in exc.args:
        return INTERRUPTED_BY_STOP
    return CANCELLED_BY_USER


def interrupted_reason(exc: BaseException) -> str:
    """Koroku's finish reason for a reply ``exc`` cut short (see ``wire/finish.py``).

    Stored with what arrived, so that a restart shows it interrupted, not whole.
    """
    if not isinstance(exc, asyncio.CancelledError):
        return KOROKU_CUT_OFF
    return KOROKU_STOPPED if cancel_reason(exc) == INTERRUPTED_BY_STOP else KOROKU_CANCELLED


def unfinished_reason(exc: BaseException) -> str:
    """What the calls a step did not finish, because of ``exc``, are answered with."""
    if isinstance(exc, asyncio.CancelledError):
        return cancel_reason(exc)
    return f"Not run: Koroku failed before this call finished ({exc!r})."


def no_answer_error(block_reason: str | None, finish_reason: str | None) -> AgentError:
    """The error for a reply without a single part: a blocked prompt, or a cut."""
    if block_reason is not None:
        message = blocked_prompt_message(block_reason)
    elif finish_reason in (None, WHOLE):
        message = "Gemini finished without an answer; rephrase the request or retry."
    else:
        words = AnswerCut(finish_reason, visible=False).words
        message = f"The answer was cut off before any text: {words}; rephrase the request or retry."
    return AgentError(message, ErrorKind.INCOMPLETE)


def request_error(failure: ReplyFailed, *, kept: bool) -> AgentError:
    """The error for a request that failed; ``kept``: the part that arrived was stored."""
    if kept:
        how = "broke off part way"
        if isinstance(failure.cause, StallError):
            how = f"stopped part way (nothing for {seconds_text(failure.cause.seconds)} s)"
        return AgentError(
            f"Gemini's answer {how} and the part that arrived was kept; "
            "send a message to continue.",
            ErrorKind.CUT_OFF,
        )
    described = describe_failure(failure.cause)
    return AgentError(described.message, described.kind)


def _as_agent_error(exc: Exception) -> AgentError:
    """``exc`` as the one error the agent raises (an AgentError passes through)."""
    if isinstance(exc, AgentError):
        return exc
    if isinstance(exc, StoreError):
        kind = ErrorKind.BUSY if isinstance(exc, SessionBusyError) else ErrorKind.STORE
        error = AgentError(str(exc), kind)
    else:
        logger.exception("agent step failed", exc_info=exc)
        described = describe_failure(exc)
        error = AgentError(described.message, described.kind)
    error.__cause__ = exc
    return error


@dataclass(frozen=True)
class Failures:
    """The agent's failure handling: what it stores and reports when something fails.

    Args:
        redactor: the live API key's, for what is stored and reported.
        emitter: the hooks (the agent).
        save: stores events (the agent's, which also reports the usage).
        store: where a turn's error is kept; ``None`` for an in-memory agent.
    """

    redactor: Redactor
    emitter: HookEmitter
    save: Save
    store: SessionManager | None

    async def guarded(self, work: Awaitable[T], *, ends_turn: bool = False) -> T:
        """Await ``work``; any failure leaves as an AgentError reported on ``on_error``.

        ``ends_turn``: ``work`` is a turn, whose error is also stored (``_keep_error``).
        """
        try:
            return await work
        except Exception as exc:
            error = _as_agent_error(exc)
        # A server may quote the key back in its error; the sentence reaches
        # the screen, and with --print stderr (a CI log, say).
        message = self.redactor.text(error.user_message)
        if message != error.user_message:
            error.user_message = message
            error.args = (message,)
        await self.emitter.emit("on_error", ErrorNotice(error.user_message, error.kind))
        if ends_turn:
            await self._keep_error(error)
        raise error

    async def _keep_error(self, error: AgentError) -> None:
        """Store the sentence a turn ended on, as a row the model never sees.

        So that a restart shows it under the message it answered. Not for a
        store that failed or is another process's (nothing may be written),
        nor for a cut answer (its stored reply says so already), nor for a
        retry with nothing to retry (no turn ran). A failure
        to store it is only logged: the user has the sentence on screen.
        """
        if self.store is None or error.kind in _ERRORS_NOT_KEPT:
            return
        try:
            turn_error = TurnErrorEvent(message=error.user_message, kind=error.kind)
            await self.store.add_turn_error(turn_error)
        except StoreError:
            logger.warning("could not store the turn's error", exc_info=True)

    async def keep_partial(
        self,
        acc: StreamAccumulator,
        call_error: str,
        reason: str,
        *,
        turn_calls: int,
        model: str | None = None,
        wait_seconds: float | None = None,
    ) -> bool:
        """Store what arrived of an interrupted reply, answering its calls; True if stored.

        ``reason``: Koroku's finish reason for it (``interrupted_reason``),
        stored on the event and shown under it, live and after a restart.
        The Content stored and sent back is what arrived, untouched;
        ``model`` and ``wait_seconds`` are stored on it (``ReplyFacts``).
        ``turn_calls``: the turn's calls so far (the hooks are told of its
        calls, answered never run).
        """
        content = partial_content(acc)
        if content is None:
            return False
        content = self.redactor.content(content)
        usage = usage_of(acc)
        event = SessionEvent.from_content(
            content, usage=usage, finish_reason=reason, model=model, wait_seconds=wait_seconds
        )
        calls = calls_of(content)
        answers = [ToolResult.failure(c, call_error) for c in calls]
        cut = answer_cut(reason, visible=True)
        partial = ModelResponse(content, event, usage, finish_of(acc), partial=True, cut=cut)

        async def told() -> None:
            await self.emitter.emit("on_model_response", partial)
            await self._tell_answered(calls, answers, announced=0, turn_calls=turn_calls)

        stored = [(event, content), responses_event(answers)] if calls else [(event, content)]
        await self.save(*stored, then=told)
        return True

    async def answer_unfinished(
        self,
        calls: Sequence[types.FunctionCall],
        done: list[ToolResult],
        reason: str,
        *,
        announced: int,
        turn_calls: int,
    ) -> None:
        """Store the step's responses: the ``done`` ones, and ``reason`` for the rest.

        ``announced``: how many of ``calls`` the hooks were told of
        (``on_tool_call``); ``turn_calls``: the turn's calls so far.
        """
        unfinished = answer_unfinished(calls, done, reason)

        async def told() -> None:
            await self._tell_answered(calls, unfinished, announced=announced, turn_calls=turn_calls)

        await self.save(responses_event([*done, *unfinished]), then=told)

    async def _tell_answered(
        self,
        calls: Sequence[types.FunctionCall],
        answers: Sequence[ToolResult],
        *,
        announced: int,
        turn_calls: int,
    ) -> None:
        """Tell the hooks of the last ``answers`` to ``calls``, stored for calls never run.

        A call the hooks were not told of yet is told first (``on_tool_call``),
        as ``refuse_calls`` does: a UI shows a row for every call the history
        answers, as it does after a restart (a cancel while a reply was
        stored, or while the call before it ran, showed none).
        """
        first = len(calls) - len(answers)
        for index, (call, answer) in enumerate(zip(calls[first:], answers, strict=True), first):
            if index >= announced:
                await self.emitter.emit("on_tool_call", ToolCallStarted(call, index, turn_calls))
            await self.emitter.emit("on_tool_result", ToolCallFinished(call, answer, 0.0))

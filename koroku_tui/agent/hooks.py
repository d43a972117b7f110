"""The agent's hooks: what it reports while a turn runs, as typed payloads or keywords.

A UI registers handlers with ``agent.on("on_text_delta", handler)``. Handlers
are awaited in registration order, on the agent's task; a handler that raises
is logged and reported through ``on_error`` (a failing ``on_error`` handler is
only logged, so reporting can never loop), and the turn goes on.

Two kinds of handler, sync or async, told apart once, at registration, by
their signature (see :func:`call_form`):

- a handler taking ONE positional parameter gets Koroku's typed payload
  (``def handler(payload: ModelResponse)``);
- a handler with keyword-only parameters or ``**kwargs`` (or whose parameters
  are all named after the hook's keywords) gets the seed design's keywords,
  only those it accepts: ``on_model_response(message=, context=)``,
  ``on_tool_call(call=, context=)``, ``on_tool_result(result=, call_name=,
  call_args=, context=)``. Every hook also offers ``payload=`` (the typed
  payload) and ``context=`` (the model's context, a list of events).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args, overload

from google.genai import types

from koroku_tui.agent.context.budget import ContextBudget
from koroku_tui.agent.errors import retry_words
from koroku_tui.agent.hook_forms import call_form
from koroku_tui.agent.tools import ToolResult
from koroku_tui.agent.tools.mcp.status import ServerStatus
from koroku_tui.agent.wire.errors import ErrorKind, seconds_text
from koroku_tui.agent.wire.finish import AnswerCut
from koroku_tui.events import CompactionEvent, Event, SessionEvent, TokenUsage
from koroku_tui.store.records import StoredMessage

# No ``__all__``: ``koroku_tui.agent`` names the payloads it re-exports (once, in
# its lazy table: it must not import this module, which brings the SDK); the
# emitter and the keyword helpers here are for the agent's own modules.

logger = logging.getLogger(__name__)

P = TypeVar("P")

Handler = Callable[[P], Awaitable[None] | None]
"""``async def handler(payload) -> None`` (a plain function is accepted too)."""
KeywordHandler = Callable[..., Awaitable[None] | None]
"""``async def handler(*, message, context) -> None``: the seed design's form (see above)."""

HookName = Literal[
    "on_model_request",
    "on_reply_streamed",
    "on_model_response",
    "on_tool_call",
    "on_tool_result",
    "on_text_delta",
    "on_thought_delta",
    "on_usage",
    "on_compaction_started",
    "on_compaction_finished",
    "on_compaction_failed",
    "on_error",
    "on_retry",
    "on_history_synced",
    "on_session_busy",
    "on_mcp_status",
]
HOOK_NAMES: frozenset[str] = frozenset(get_args(HookName))


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's visible text, as it streams in."""

    text: str


@dataclass(frozen=True)
class ThoughtDelta:
    """A piece of the model's thought summary, as it streams in."""

    text: str


@dataclass(frozen=True)
class ModelRequest:
    """The agent sends a step's request and waits for the model's reply.

    Once per step (a retry of the same request is an ``on_retry``). A UI that
    held back what the step before said (its tools' results) shows it now:
    the agent has stored them and only waits (``ui.main.bridge.HookFeed``).
    """

    tools_offered: bool
    """False when the guardrail withdrew the tools for this request."""


@dataclass(frozen=True)
class ReplyStreamed:
    """A step's reply has all arrived; it is stored next, then told by ``on_model_response``.

    A UI draws the answer's last words now (storing a long reply takes a
    while), not once it is stored.
    """

    finish_reason: str | None
    """Why the model stopped, as the reply said it (``"STOP"``), if it did."""


@dataclass(frozen=True)
class ModelResponse:
    """A model step as stored: the Content exactly as received, and its event."""

    content: types.Content
    event: SessionEvent
    usage: TokenUsage | None
    finish_reason: str | None
    """Gemini's finish reason as sent (``"STOP"``, ``"MAX_TOKENS"``, ``"SAFETY"``...)."""
    partial: bool = False
    """True when the stream broke off or the turn was cancelled part way."""
    cut: AnswerCut | None = None
    """Set when this reply is not a whole answer: its ``message`` is the sentence to
    show under what arrived (``"The answer was cut off: token limit."``, or for a
    partial one ``"Interrupted: cancelled before the answer was complete."``)."""

    @property
    def text(self) -> str:
        """The visible (non-thought) text of the step."""
        return self.event.text

    @property
    def function_calls(self) -> list[types.FunctionCall]:
        """The calls the model asked for, in order."""
        return [p.function_call for p in self.content.parts or () if p.function_call is not None]


@dataclass(frozen=True)
class ToolCallStarted:
    """A tool call is about to run (or to be refused, see ``over_budget``)."""

    call: types.FunctionCall
    index: int
    """Position of the call in its model step (0-based)."""
    turn_calls: int
    """Tool calls made in this turn so far, this one included."""
    over_budget: bool = False
    """The turn's tool budget is used up: the call is answered with an error, not run."""

    @property
    def name(self) -> str:
        return self.call.name or ""

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.call.args or {})

    @property
    def call_id(self) -> str | None:
        return self.call.id


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call's outcome (``result.is_error`` for a cross in the sidebar)."""

    call: types.FunctionCall
    result: ToolResult
    duration: float
    """Seconds the call took (0 for a call that was refused or never started)."""


@dataclass(frozen=True)
class CompactionStarted:
    """Compaction begins; ``reason`` is ``"threshold"`` or ``"manual"``."""

    reason: str
    budget: ContextBudget


@dataclass(frozen=True)
class CompactionFinished:
    """Compaction stored a summary; the model now sees it in place of older turns."""

    event: CompactionEvent
    budget: ContextBudget
    warning: str | None = None
    """Set when the summary is stored but something minor failed (e.g. the memory file)."""
    before: ContextBudget | None = None
    """The context as it was when compaction began (``None``: not known)."""
    summarised: int | None = None
    """How many messages the summary replaced (``None``: the compactor did not say)."""
    suggested: int = 0
    """Lasting facts it proposed that now wait as suggested memories."""


@dataclass(frozen=True)
class CompactionFailed:
    """Compaction did not happen; the history is untouched."""

    message: str
    nothing_to_do: bool = False
    """True when there was nothing to summarise yet (no failure: news, not an error)."""


@dataclass(frozen=True)
class ErrorNotice:
    """A failure to show the user: one sentence, never a traceback."""

    message: str
    kind: ErrorKind


@dataclass(frozen=True)
class RetryNotice:
    """A request failed transiently and will be sent again after ``delay`` seconds."""

    attempt: int
    """The attempt about to be made (2 for the first retry)."""
    max_attempts: int
    delay: float
    reason: str
    """A few words on why the previous attempt failed, e.g. "Gemini answered 429 ..."."""
    kind: ErrorKind

    @property
    def line(self) -> str:
        """One line for a log or a terminal: ``retrying in 4 s, 2/4: rate limited``."""
        words = retry_words(self.kind, self.reason)
        wait = seconds_text(self.delay)
        return f"retrying in {wait} s, {self.attempt}/{self.max_attempts}: {words}"


@dataclass(frozen=True)
class HistorySynced:
    """Rows another Koroku process stored in this session: messages now in the model's
    context, and rewinds (``StoredMessage.rewind``) that took turns out of it."""

    messages: list[StoredMessage]


@dataclass(frozen=True)
class SessionBusy:
    """Another Koroku process runs a turn on this session: this turn waits for it to end.

    Sent after each attempt that found the session busy, then once with
    ``free`` when the session was taken and the turn goes on (or, after a
    turn that gave up, when a later turn takes it). Giving up is an
    ``on_error`` of kind ``busy``.
    """

    session_id: int
    pid: int
    """The process whose turn holds the session."""
    attempts: int
    """Attempts of this turn that found the session busy so far."""
    free: bool = False
    """The wait is over: this turn took the session and goes on."""


def _seed_keywords(payload: object) -> dict[str, Any]:
    """The seed design's keyword values for a payload (besides ``payload`` and ``context``)."""
    if isinstance(payload, ModelResponse):
        return {"message": payload.content}
    if isinstance(payload, ToolCallStarted):
        return {"call": payload.call}
    if isinstance(payload, ToolCallFinished):
        return {
            "result": payload.result.response,
            "call_name": payload.result.name,
            "call_args": dict(payload.result.args),
        }
    return {}


SEED_KEYWORDS: dict[str, tuple[str, ...]] = {
    "on_model_response": ("message",),
    "on_tool_call": ("call",),
    "on_tool_result": ("result", "call_name", "call_args"),
}
"""The seed design's keywords per hook; every hook also offers ``payload`` and ``context``."""
COMMON_KEYWORDS = ("payload", "context")


def hook_keywords(name: str) -> tuple[str, ...]:
    """Every keyword the hook ``name`` offers to a keyword handler."""
    return (*SEED_KEYWORDS.get(name, ()), *COMMON_KEYWORDS)


@dataclass(frozen=True)
class _Registered:
    handler: Callable[..., Any]
    keywords: frozenset[str] | None
    """What to call it with; ``None``: the payload, positionally (see ``hook_forms``)."""


class HookEmitter:
    """Keeps the handlers and calls them; the Agent inherits it."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[_Registered]] = {}
        self._reporting = False

    def hook_context(self) -> list[Event]:
        """What keyword handlers get as ``context=``: the model's context (the Agent's)."""
        return []

    # fmt: off
    @overload
    def on(self, name: Literal["on_model_request"], handler: Handler[ModelRequest]) -> None: ...
    @overload
    def on(self, name: Literal["on_reply_streamed"], handler: Handler[ReplyStreamed]) -> None: ...
    @overload
    def on(self, name: Literal["on_model_response"], handler: Handler[ModelResponse]) -> None: ...
    @overload
    def on(self, name: Literal["on_tool_call"], handler: Handler[ToolCallStarted]) -> None: ...
    @overload
    def on(self, name: Literal["on_tool_result"], handler: Handler[ToolCallFinished]) -> None: ...
    @overload
    def on(self, name: Literal["on_text_delta"], handler: Handler[TextDelta]) -> None: ...
    @overload
    def on(self, name: Literal["on_thought_delta"], handler: Handler[ThoughtDelta]) -> None: ...
    @overload
    def on(self, name: Literal["on_usage"], handler: Handler[ContextBudget]) -> None: ...
    @overload
    def on(
        self, name: Literal["on_compaction_started"], handler: Handler[CompactionStarted]
    ) -> None: ...
    @overload
    def on(
        self, name: Literal["on_compaction_finished"], handler: Handler[CompactionFinished]
    ) -> None: ...
    @overload
    def on(
        self, name: Literal["on_compaction_failed"], handler: Handler[CompactionFailed]
    ) -> None: ...
    @overload
    def on(self, name: Literal["on_error"], handler: Handler[ErrorNotice]) -> None: ...
    @overload
    def on(self, name: Literal["on_retry"], handler: Handler[RetryNotice]) -> None: ...
    @overload
    def on(self, name: Literal["on_history_synced"], handler: Handler[HistorySynced]) -> None: ...
    @overload
    def on(self, name: Literal["on_session_busy"], handler: Handler[SessionBusy]) -> None: ...
    @overload
    def on(
        self, name: Literal["on_mcp_status"], handler: Handler[tuple[ServerStatus, ...]]
    ) -> None: ...
    @overload
    def on(self, name: HookName, handler: KeywordHandler) -> None: ...
    # fmt: on

    def on(self, name: HookName, handler: Callable[..., Any]) -> None:
        """Register ``handler`` for the hook ``name`` (a payload or a keyword handler).

        Raises ``ValueError`` for an unknown name, or a handler that takes
        neither one payload argument nor the hook's keywords.
        """
        if name not in HOOK_NAMES:
            known = ", ".join(sorted(HOOK_NAMES))
            raise ValueError(f"unknown hook {name!r}; known hooks: {known}")
        keywords = call_form(name, handler, hook_keywords(name))
        self._handlers.setdefault(name, []).append(_Registered(handler, keywords))

    def off(self, name: HookName, handler: Callable[..., Any]) -> None:
        """Remove a handler registered with :meth:`on` (no error if it is not there)."""
        handlers = self._handlers.get(name, [])
        for registered in handlers:
            if registered.handler == handler:
                handlers.remove(registered)
                return

    def has_handlers(self, name: HookName) -> bool:
        """True when something listens to ``name`` (lets hot paths skip building payloads)."""
        return bool(self._handlers.get(name))

    async def emit(self, name: HookName, payload: object) -> None:
        """Call every handler of ``name`` with ``payload``; a failing handler is reported."""
        handlers = self._handlers.get(name)
        if not handlers:
            return
        for registered in list(handlers):
            try:
                if registered.keywords is None:
                    result = registered.handler(payload)
                else:
                    result = registered.handler(**self._keywords(payload, registered.keywords))
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # CancelledError is not an Exception: it propagates
                await self._report_handler_failure(name, registered.handler, exc)

    def _keywords(self, payload: object, wanted: frozenset[str]) -> dict[str, Any]:
        values = {k: v for k, v in _seed_keywords(payload).items() if k in wanted}
        if "payload" in wanted:
            values["payload"] = payload
        if "context" in wanted:  # a copy per handler: one cannot change another's
            values["context"] = self.hook_context()
        return values

    async def _report_handler_failure(
        self, name: HookName, handler: Callable[..., Any], exc: Exception
    ) -> None:
        logger.error("hook handler %r for %s failed", handler, name, exc_info=exc)
        if name == "on_error" or self._reporting:
            return  # reporting a failure of the reporting itself could loop forever
        self._reporting = True
        try:
            detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
            await self.emit(
                "on_error",
                ErrorNotice(
                    f"A display handler failed ({name}, {detail}); the turn goes on.",
                    ErrorKind.INTERNAL,
                ),
            )
        finally:
            self._reporting = False

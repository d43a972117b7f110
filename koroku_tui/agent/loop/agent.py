"""``Agent``: Koroku's Gemini tool loop, one model step per ``run()``.

The step (the seed design's "agent step", with its weak points fixed):

1. A typed message is stored before anything is sent; tool responses that
   ``run()`` itself returned are not stored again. Between turns (never in a
   tool loop) the context may be compacted.
2. The in-memory context is repaired for the API and sent, streamed, with the
   tools, unless the turn's tool budget is used up (see ``guardrail.py``).
3. The reply is stored exactly as streamed (signatures included), then each
   call runs; all responses of the step are stored as ONE user event and
   returned, for the caller to feed back into ``run()`` until it returns None.

Whatever interrupts a step (a cancel at any await, a broken stream, a failed
tool), the history is left valid before the exception leaves: what arrived is
kept, and every call the model made gets a response.

The live API key is replaced by ``[redacted]`` in everything stored or sent
(see ``redaction.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import threading
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from google import genai
from google.genai import types

from koroku_tui.agent import instructions
from koroku_tui.agent.config import DEFAULT_MODEL, AgentConfig
from koroku_tui.agent.context.budget import DEFAULT_WINDOW, ContextBudget
from koroku_tui.agent.context.compaction import SummaryCompactor
from koroku_tui.agent.context.compaction_trigger import CompactionRunner
from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.hooks import (
    ErrorNotice,
    HistorySynced,
    HookEmitter,
    ModelResponse,
    ToolCallFinished,
)
from koroku_tui.agent.loop.conversation import Conversation, finish_despite_cancel
from koroku_tui.agent.loop.guardrail import (
    CANCELLED_BY_USER,
    CUT_OFF_BEFORE_RUN,
    INTERRUPTED_BY_STOP,
    TurnGuard,
)
from koroku_tui.agent.loop.tool_step import (
    answer_unfinished,
    calls_of,
    refuse_calls,
    responses_event,
    run_calls,
)
from koroku_tui.agent.protocols import Compactor, ReplayHandler
from koroku_tui.agent.tools import ToolRegistry, ToolResult, ToolSettings, default_registry
from koroku_tui.agent.wire.body import WireForm
from koroku_tui.agent.wire.client import (
    MISSING_KEY_HELP,
    close_client,
    has_credentials,
    make_client,
)
from koroku_tui.agent.wire.errors import (
    AgentError,
    ErrorKind,
    StallError,
    describe_failure,
    seconds_text,
)
from koroku_tui.agent.wire.finish import (
    WHOLE,
    AnswerCut,
    answer_cut,
    blocked_prompt_message,
    calls_withheld,
    withheld_call_error,
)
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.agent.wire.request import (
    ReplyFailed,
    ReplyInFlight,
    RequestSettings,
    finish_of,
    partial_content,
    request_reply,
    usage_of,
)
from koroku_tui.agent.wire.streaming import StreamAccumulator
from koroku_tui.events import CompactionEvent, Event, SessionEvent, TurnErrorEvent
from koroku_tui.store import SessionBusyError, SessionManager, StoreError
from koroku_tui.store.lifecycle import OpenedWithAsync

__all__ = ["Agent"]

logger = logging.getLogger(__name__)

_ERRORS_NOT_KEPT = frozenset(
    {ErrorKind.STORE, ErrorKind.BUSY, ErrorKind.CUT_OFF, ErrorKind.NOTHING_TO_RETRY}
)
"""Turn errors ``_keep_error`` does not store (see there)."""

T = TypeVar("T")


def _as_content(message: str | types.Content) -> types.Content:
    if isinstance(message, str):
        return types.Content(role="user", parts=[types.Part(text=message)])
    return message if message.role else message.model_copy(update={"role": "user"})


def _no_answer_message(block_reason: str | None, finish_reason: str | None) -> str:
    """The sentence for a reply without a single part: a blocked prompt, or a cut."""
    if block_reason is not None:
        return blocked_prompt_message(block_reason)
    if finish_reason in (None, WHOLE):
        return "Gemini finished without an answer; rephrase the request or retry."
    words = AnswerCut(finish_reason, visible=False).words
    return f"The answer was cut off before any text: {words}; rephrase the request or retry."


def _holds_responses(content: types.Content) -> bool:
    return any(p.function_response is not None for p in content.parts or ())


def _cancel_reason(exc: BaseException) -> str:
    """What a call cut short by ``exc`` is answered with.

    A stop signal cancels with ``INTERRUPTED_BY_STOP`` as the message (see
    ``koroku_tui/agent/loop/stopping.py``); any other cancel is the user's.
    """
    if isinstance(exc, asyncio.CancelledError) and INTERRUPTED_BY_STOP in exc.args:
        return INTERRUPTED_BY_STOP
    return CANCELLED_BY_USER


class Agent(HookEmitter, OpenedWithAsync):
    """Koroku's agent loop over Gemini: persistence, tools, guardrail, retries, hooks.

    Args:
        model: the Gemini model id.
        context: starting events for an agent whose history lives in memory only
            (``context=[]`` for an empty one).
        session_manager: the store (give it or ``context``). The seed's
            ``from koroku_tui import Agent; Agent()`` opens the file ``koroku-tui``
            uses, on the user's settings (``koroku_tui.modes.seed_entry``).
        client: a google-genai client (default: ``make_client`` from the environment;
            without credentials there, an :class:`AgentError` says how to get a key).
        tools: the tool registry (default: the built-in tools).
        tool_settings: workspace, approval callback and the like for the tools;
            its ``history`` defaults to ``session_manager`` (past conversations).
        config: see :class:`AgentConfig`.
        compactor: summarises between turns; default: the standard one when
            ``config.auto_compact``, else none.

    Hooks (``agent.on(name, handler)``) are listed in ``koroku_tui.agent.hooks``.
    One step runs at a time; do not call ``run()`` from inside a hook handler.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        context: Sequence[Event] | None = None,
        session_manager: SessionManager | None = None,
        *,
        client: genai.Client | None = None,
        tools: ToolRegistry | None = None,
        tool_settings: ToolSettings | None = None,
        config: AgentConfig | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        super().__init__()
        if (context is None) == (session_manager is None):
            raise ValueError(
                "give either a starting context or a session manager (not both); "
                "`from koroku_tui import Agent` opens the Koroku home's"
            )
        self.model = model
        self.config = config or AgentConfig()
        self._owns_client = client is None
        if client is None:
            client = self._client_from_environment()
        self.session_manager = session_manager
        """The store (``None`` for an in-memory agent): ``await agent.session_manager.delete()``
        is the seed's "clear"."""
        history = session_manager or MemoryHistory(context or ())
        self.client: genai.Client = client
        self._redactor = Redactor.for_client(client)
        self._wire = WireForm(client)
        self._conversation = Conversation(
            history, redact=self._redactor.content, wire=self._wire.content
        )
        self.tools = tools if tools is not None else default_registry()
        self.tool_settings = tool_settings or ToolSettings(memory_dir=self.config.memory_dir)
        if self.tool_settings.history is None:
            # search_history and read_session read the store this session writes to.
            self.tool_settings.history = session_manager
        if compactor is None and self.config.auto_compact:
            compactor = SummaryCompactor(
                self.client,
                history,
                self.config.memory_dir,
                self.config.compaction_model,
                retry=self.config.retry,
                redact=self._redactor.text,
            )
        self._compaction = CompactionRunner(
            compactor,
            emitter=self,
            history=history,
            context=lambda: self._conversation.events,
            budget=lambda: self.budget,
            store=self._store_compaction,
            retry_after_events=self.config.compaction_retry_after_events,
        )
        self._policy = dataclasses.replace(
            self.config.budget, window=self.config.context_window or DEFAULT_WINDOW
        )
        self._request = RequestSettings(
            instructions.system_instruction(self.config.memory_dir),
            self.tools,
            include_thoughts=self.config.include_thoughts,
        )
        self._lock = asyncio.Lock()
        self._initialized = False
        self.last_text = ""
        """The visible text of the last finished answer (what ``run_turn`` returns)."""
        self.last_cut: AnswerCut | None = None
        self.message_stored = False
        """Whether the last message given to ``run()`` was stored (a refused one was not)."""
        """Set when the turn's final reply is not a whole answer (see ``finish.py``)."""

    def _client_from_environment(self) -> genai.Client:
        if not has_credentials():
            raise AgentError(MISSING_KEY_HELP, ErrorKind.AUTH)
        try:
            return make_client(
                api_version=self.config.api_version,
                # Never shorter than the stall limit, which must be what
                # ends a silent request (with its own sentence).
                timeout_seconds=max(self.config.request_timeout, self.config.stall_timeout),
            )
        except Exception as exc:  # e.g. Vertex selected but no project or credentials
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise AgentError(
                f"Could not set up the Gemini client ({reason}); check GEMINI_API_KEY "
                "(or the Vertex AI settings).",
                ErrorKind.AUTH,
            ) from exc

    # -- lifecycle -------------------------------------------------------

    async def initialize(self, *, replay_handler: ReplayHandler | None = None) -> None:
        """Open the store, load the context once, and replay it through ``replay_handler``.

        The handler is called as ``await replay_handler(event=event)`` (the
        seed's form) for each event of the current context (the latest summary
        and what follows), oldest first; older history is in the store's
        ``load_all``. Raises :class:`AgentError` if the store cannot be opened.
        """
        async with self._lock:
            await self._guarded(self._initialize_once())
        if replay_handler is not None:
            reported = False
            for event in list(self._conversation.events):
                try:
                    shown = replay_handler(event=event)
                    if inspect.isawaitable(shown):
                        await shown
                except Exception as exc:
                    # One event the handler cannot draw must not hide the rest.
                    logger.error("replay handler failed", exc_info=exc)
                    if not reported:
                        reported = True
                        notice = ErrorNotice(
                            f"Showing the history failed ({type(exc).__name__}); "
                            "the conversation itself is intact.",
                            ErrorKind.INTERNAL,
                        )
                        await self.emit("on_error", notice)
        await self._emit_usage()

    async def _initialize_once(self) -> None:
        if self._initialized:
            return
        if self.session_manager is not None:
            await self.session_manager.initialize()
        await self._conversation.reload()
        self._policy = dataclasses.replace(self._policy, window=await self._context_window())
        self._initialized = True
        await self._prepare_requests()

    async def _context_window(self) -> int:
        if self.config.context_window:
            return self.config.context_window
        try:
            async with asyncio.timeout(self.config.model_info_timeout):
                info = await self.client.aio.models.get(model=self.model)
        except Exception as exc:
            # Offline or an unknown model: the default fits every Gemini 3 model.
            logger.info("models.get(%s) failed (%r); assuming the default window", self.model, exc)
            return DEFAULT_WINDOW
        return info.input_token_limit or DEFAULT_WINDOW

    async def close(self) -> None:
        """Close the store and, if the agent created it, the client."""
        if self.session_manager is not None:
            await self.session_manager.close()
        if self._owns_client:
            await close_client(self.client)

    # -- public API ------------------------------------------------------

    @property
    def budget(self) -> ContextBudget:
        """How full the context is: the numbers ``should_summarise`` uses (the gauge's)."""
        return self._conversation.budget(self._policy)

    @property
    def context(self) -> list[Event]:
        """The model's context as of the last step (a copy)."""
        return list(self._conversation.events)

    def hook_context(self) -> list[Event]:
        """``context=`` for keyword hook handlers: the model's context, as :attr:`context`."""
        return self.context

    async def run(self, message: str | types.Content) -> types.Content | None:
        """One assistant step: returns the tool responses to pass back in, or None when done.

        Raises :class:`AgentError` (already reported on ``on_error``) when the
        step fails; the user's message stays stored, so ``retry()`` can resend.
        A cancel leaves a valid history and is re-raised.
        """
        content = _as_content(message)
        if not _holds_responses(content):
            # Before the lock: a cancel while waiting for it (or for the
            # refresh) must not read the previous message's "stored".
            self.message_stored = False
        async with self._lock:
            return await self._guarded(self._run(content), ends_turn=True)

    async def refresh(self) -> None:
        """Re-read the context after the store switched sessions (``budget`` follows)."""
        async with self._lock:
            await self._guarded(self._refresh())
            await self._prepare_requests()  # another session: its events are new

    async def retry(self) -> types.Content | None:
        """Send the stored context again after a failure, without storing anything new."""
        async with self._lock:
            return await self._guarded(self._retry(), ends_turn=True)

    async def run_turn(self, text: str) -> str:
        """Run a whole turn (every tool step) and return the final answer's text."""
        reply = await self.run(text)
        while reply is not None:
            reply = await self.run(reply)
        return self.last_text

    async def compact(self) -> CompactionEvent | None:
        """Compact now; returns the summary event, or None when nothing was compacted.

        Raises ``NoCompactorError`` when the agent has no compactor. A failure
        is reported on ``on_compaction_failed`` and leaves the history as it was.
        """
        self._compaction.require()
        async with self._lock:
            return await self._guarded(self._compact_now())

    # -- the step --------------------------------------------------------

    async def _run(self, content: types.Content) -> types.Content | None:
        # Stored and sent as it will be read back after a restart: without the
        # live key a user may have pasted into the message.
        content = self._redactor.content(content)

        async def start_and_step() -> types.Content | None:
            await self._refresh()
            if not _holds_responses(content):
                self.last_text = ""
                self.last_cut = None
                self.message_stored = False
                await self._begin_turn((SessionEvent.from_content(content), content))
                self.message_stored = True
                await self._compaction.maybe_run()
                return await self._step()
            await self._begin_turn()
            if not self._conversation.is_last_stored(content):
                # Responses built by the caller rather than returned by run().
                await self._save((SessionEvent.from_content(content), content))
            return await self._step()

        return await self._in_turn(start_and_step())

    async def _compact_now(self) -> CompactionEvent | None:
        async def compact() -> CompactionEvent | None:
            await self._refresh()
            await self._begin_turn()
            return await self._compaction.run("manual")

        try:
            return await compact()
        finally:
            await self._conversation.end_turn()

    async def _retry(self) -> types.Content | None:
        async def resend() -> types.Content | None:
            await self._refresh()
            last = self._conversation.last
            if not (isinstance(last, SessionEvent) and last.role == "user"):
                raise AgentError(
                    "There is nothing to resend: the conversation does not end with your "
                    "message, so send a new message instead.",
                    ErrorKind.NOTHING_TO_RETRY,
                )
            await self._begin_turn()
            return await self._step()

        return await self._in_turn(resend())

    async def _begin_turn(self, message: tuple[SessionEvent, types.Content] | None = None) -> None:
        """Become the session's one writer (storing ``message`` at once), unless already it.

        Another process's turn on the session makes this wait briefly, then
        fail with one sentence, with nothing stored.
        """
        if message is None and self._conversation.in_turn:
            return
        event, content = message if message is not None else (None, None)
        await self._conversation.begin_turn(event, content)
        await self._sync()
        await self._emit_usage()

    async def _in_turn(self, work: Awaitable[T]) -> T:
        """Await a step of the turn; the turn ends (the lease is given back) unless it goes on.

        ``work`` holds everything from taking the lease on, so no exit path
        (a cancel, a failure, a refusal) can leave this process the session's
        writer while it sits idle.
        """
        try:
            result = await work
        except BaseException:
            await self._conversation.end_turn()
            raise
        if result is None:
            await self._conversation.end_turn()
        return result

    async def _step(self) -> types.Content | None:
        guard = TurnGuard.from_events(
            self._conversation.events, self.config.max_tool_calls_per_turn
        )
        contents = self._conversation.request_wire()
        withdrawn = guard.exhausted  # read now: run_calls counts into the same guard
        # Calls beyond the limit mean the model already ignored one withdrawal.
        ignored_withdrawal = guard.calls_used > guard.limit
        if withdrawn:
            # Sent, never stored: it speaks to this request only.
            instruction = instructions.guardrail_instruction(guard.calls_used)
            withdrawal = types.Content(role="user", parts=[types.Part(text=instruction)])
            contents.append(self._wire.content(withdrawal))
        request = self._request.request(self._wire, self.model, contents, offer_tools=not withdrawn)
        flight = ReplyInFlight()
        try:
            acc = await request_reply(
                self._wire,
                request,
                policy=self.config.retry,
                emitter=self,
                flight=flight,
                stall_timeout=self.config.stall_timeout,
            )
        except asyncio.CancelledError as exc:
            await self._keep_partial(flight.accumulator, _cancel_reason(exc))
            raise
        except ReplyFailed as failure:
            logger.warning("request failed: %r", failure.cause)
            if await self._keep_partial(failure.partial, CUT_OFF_BEFORE_RUN):
                how = "broke off part way"
                if isinstance(failure.cause, StallError):
                    how = f"stopped part way (nothing for {seconds_text(failure.cause.seconds)} s)"
                raise AgentError(
                    f"Gemini's answer {how} and the part that arrived was kept; "
                    "send a message to continue.",
                    ErrorKind.CUT_OFF,
                ) from failure.cause
            described = describe_failure(failure.cause)
            raise AgentError(described.message, described.kind) from failure.cause
        if not acc.parts:
            message = _no_answer_message(flight.block_reason, finish_of(acc))
            raise AgentError(message, ErrorKind.INCOMPLETE)
        return await self._finish_step(acc, guard, stop_after_calls=ignored_withdrawal)

    async def _finish_step(
        self, acc: StreamAccumulator, guard: TurnGuard, *, stop_after_calls: bool
    ) -> types.Content | None:
        content = self._redactor.content(acc.content())
        usage = usage_of(acc)
        finish = finish_of(acc)
        event = SessionEvent.from_content(content, usage=usage, finish_reason=finish)
        calls = calls_of(content)
        # Gemini stopped this step (safety filter and the like): its calls are
        # answered "not run" and the turn ends, told as a cut (see finish.py).
        # A step cut by the token limit still runs its calls and goes on.
        withheld = bool(calls) and calls_withheld(finish)
        cut = answer_cut(
            finish, visible=bool(event.text or calls), withheld_calls=len(calls) if withheld else 0
        )
        if cut is not None:
            logger.warning("reply not whole: finish reason %r", cut.reason)
        results: list[ToolResult] = []
        try:
            await self._save((event, content))
            await self.emit(
                "on_model_response", ModelResponse(content, event, usage, finish, cut=cut)
            )
            if not calls:
                self.last_text = event.text
                self.last_cut = cut
                return None
            if withheld:
                assert finish is not None  # calls_withheld is False for None
                await refuse_calls(calls, withheld_call_error(finish), guard, self, results)
            else:
                await run_calls(
                    calls, guard, self.tools, self.tool_settings, self, results, self._redactor
                )
        except BaseException as exc:
            if calls and self._conversation.last is event:
                # The step is stored but not all of it ran: answer every call.
                reason = _cancel_reason(exc)
                if not isinstance(exc, asyncio.CancelledError):
                    reason = f"Not run: Koroku failed before this call finished ({exc!r})."
                await self._answer_unfinished(calls, results, reason)
            raise
        response_event, response_content = responses_event(results)
        await self._save((response_event, response_content))
        if withheld:
            self.last_text = event.text
            self.last_cut = cut
            return None
        if stop_after_calls:
            # Tools were withdrawn and the model called them anyway, twice:
            # every call is answered "not run" and stored, but asking again
            # could loop forever, so the turn ends here and the user decides.
            self.last_text = ""
            return None
        return response_content

    async def _answer_unfinished(
        self, calls: list[types.FunctionCall], done: list[ToolResult], reason: str
    ) -> None:
        unfinished = answer_unfinished(calls, done, reason)
        await self._save(responses_event([*done, *unfinished]))
        for call, result in zip(calls[len(done) :], unfinished, strict=True):
            await self.emit("on_tool_result", ToolCallFinished(call, result, 0.0))

    async def _keep_partial(self, acc: StreamAccumulator, call_error: str) -> bool:
        """Store what arrived of an interrupted reply, answering its calls; True if stored."""
        content = partial_content(acc)
        if content is None:
            return False
        content = self._redactor.content(content)
        usage = usage_of(acc)
        event = SessionEvent.from_content(content, usage=usage)
        calls = calls_of(content)
        if calls:
            answers = responses_event([ToolResult.failure(c, call_error) for c in calls])
            await self._save((event, content), answers)
        else:
            await self._save((event, content))
        partial = ModelResponse(content, event, usage, finish_of(acc), partial=True)
        await self.emit("on_model_response", partial)
        return True

    # -- history ---------------------------------------------------------

    async def _refresh(self) -> None:
        await self._initialize_once()
        await self._sync()

    async def _prepare_requests(self) -> None:
        """Convert a newly loaded context for requests, in a thread (``Conversation.prepare``).

        A cancel (quitting, mostly) stops the thread at its next event and
        waits for that: nothing converts beside the loop once this returns,
        and the exit is not held up by the rest of a long context.
        """
        stop = threading.Event()
        converting = asyncio.ensure_future(asyncio.to_thread(self._conversation.prepare, stop))
        try:
            await asyncio.shield(converting)
        except asyncio.CancelledError:
            stop.set()
            await finish_despite_cancel(converting)
            raise

    async def _sync(self) -> None:
        """Take in what other processes stored in the session, and tell the hooks."""
        found = await self._conversation.catch_up()
        if found:
            await self.emit("on_history_synced", HistorySynced(found))

    async def _save(self, *items: tuple[Event, types.Content | None]) -> None:
        await self._conversation.save(*items)
        await self._emit_usage()

    async def _store_compaction(self, event: CompactionEvent, stored: bool) -> None:
        if stored:
            await self._conversation.reload()
            await self._emit_usage()
        else:
            await self._save((event, None))

    async def _emit_usage(self) -> None:
        if self.has_handlers("on_usage"):
            await self.emit("on_usage", self.budget)

    async def _guarded(self, work: Awaitable[T], *, ends_turn: bool = False) -> T:
        """Await ``work``; any failure leaves as an AgentError reported on ``on_error``.

        ``ends_turn``: ``work`` is a turn, whose error is also stored (``_keep_error``).
        """
        try:
            return await work
        except AgentError as exc:
            error = exc
        except StoreError as exc:
            kind = ErrorKind.BUSY if isinstance(exc, SessionBusyError) else ErrorKind.STORE
            error = AgentError(str(exc), kind)
            error.__cause__ = exc
        except Exception as exc:
            logger.exception("agent step failed")
            described = describe_failure(exc)
            error = AgentError(described.message, described.kind)
            error.__cause__ = exc
        # A server may quote the key back in its error; the sentence reaches
        # the screen, and with --print stderr (a CI log, say).
        message = self._redactor.text(error.user_message)
        if message != error.user_message:
            error.user_message = message
            error.args = (message,)
        await self.emit("on_error", ErrorNotice(error.user_message, error.kind))
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
        store = self.session_manager
        if store is None or error.kind in _ERRORS_NOT_KEPT:
            return
        try:
            await store.add_turn_error(TurnErrorEvent(message=error.user_message, kind=error.kind))
        except StoreError:
            logger.warning("could not store the turn's error", exc_info=True)

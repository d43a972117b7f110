"""One step of a turn: one request, the reply stored, its calls run and answered.

The seed design's "agent step", with its weak points fixed:

1. The in-memory context is repaired for the API and sent, streamed, with the
   tools, unless the turn's tool budget is used up (see ``guardrail.py``).
2. The reply is stored exactly as streamed (signatures included), then each
   call runs; all responses of the step are stored as ONE user event and
   returned, for the caller to feed back into ``Agent.run()`` until it
   returns None.

What the step leaves when it is interrupted is ``failures.py``'s.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import partial

from google.genai import types

from koroku_tui.agent import instructions
from koroku_tui.agent.config import AgentConfig
from koroku_tui.agent.hooks import HookEmitter, ModelRequest, ModelResponse, ReplyStreamed
from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.agent.loop.failures import (
    Failures,
    Save,
    cancel_reason,
    interrupted_reason,
    no_answer_error,
    request_error,
    unfinished_reason,
)
from koroku_tui.agent.loop.guardrail import CUT_OFF_BEFORE_RUN, TurnGuard
from koroku_tui.agent.loop.tool_step import calls_of, refuse_calls, responses_event, run_calls
from koroku_tui.agent.tools import ToolRegistry, ToolResult, ToolSettings
from koroku_tui.agent.wire.body import WireForm
from koroku_tui.agent.wire.finish import AnswerCut, answer_cut, calls_withheld, withheld_call_error
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.agent.wire.request import (
    ReplyFacts,
    ReplyFailed,
    ReplyInFlight,
    RequestSettings,
    finish_of,
    request_reply,
    usage_of,
)
from koroku_tui.agent.wire.streaming import StreamAccumulator
from koroku_tui.events import SessionEvent

__all__ = ["FinalAnswer", "Step"]

logger = logging.getLogger(__name__)


CONVERT_IN_THREAD_PARTS = 200
"""New parts from which a request's context is converted in a thread rather than on the loop."""


@dataclass
class FinalAnswer:
    """The turn's final answer so far: the agent's ``last_text`` and ``last_cut``."""

    text: str = ""
    """The visible text of the last finished answer (what ``run_turn`` returns)."""
    cut: AnswerCut | None = None
    """Set when the turn's final reply is not a whole answer (see ``finish.py``)."""


@dataclass(frozen=True)
class Step:
    """One step, over the agent's parts as they are when it starts (see the module)."""

    model: str
    config: AgentConfig
    conversation: Conversation
    request: RequestSettings
    wire: WireForm
    redactor: Redactor
    tools: ToolRegistry
    tool_settings: ToolSettings
    emitter: HookEmitter
    save: Save
    failures: Failures
    answer: FinalAnswer
    """Where the turn's final answer is recorded, once the step ends the turn."""

    async def run(self) -> types.Content | None:
        """Send the context; returns the responses to send back, or None when the turn ends."""
        guard = TurnGuard.from_events(self.conversation.events, self.config.max_tool_calls_per_turn)
        if self.conversation.unconverted_parts() > CONVERT_IN_THREAD_PARTS:
            # A thousand calls and their answers take ~0.3 s to convert: not
            # on the event loop, where the app's keys and frames wait.
            await self.conversation.prepare_in_thread()
        contents = self.conversation.request_wire()
        withdrawn = guard.exhausted  # read now: run_calls counts into the same guard
        # Calls beyond the limit mean the model already ignored one withdrawal.
        ignored_withdrawal = guard.calls_used > guard.limit
        if withdrawn:
            # Sent, never stored: it speaks to this request only.
            instruction = instructions.guardrail_instruction(guard.calls_used, limit=guard.limit)
            withdrawal = types.Content(role="user", parts=[types.Part(text=instruction)])
            contents.append(self.wire.content(withdrawal))
        request = self.request.request(self.wire, self.model, contents, offer_tools=not withdrawn)
        flight = ReplyInFlight()
        await self.emitter.emit("on_model_request", ModelRequest(tools_offered=not withdrawn))
        try:
            acc = await request_reply(
                self.wire,
                request,
                policy=self.config.retry,
                emitter=self.emitter,
                flight=flight,
                stall_timeout=self.config.stall_timeout,
            )
            if acc.parts:  # a cancel while a handler awaits keeps the reply, as mid-stream
                await self.emitter.emit("on_reply_streamed", ReplyStreamed(finish_of(acc)))
        except asyncio.CancelledError as exc:
            reason = interrupted_reason(exc)
            await self.failures.keep_partial(
                flight.accumulator,
                cancel_reason(exc),
                reason,
                turn_calls=guard.calls_used,
                **self._reply_facts(flight),
            )
            raise
        except ReplyFailed as failure:
            logger.warning("request failed: %r", failure.cause)
            kept = await self.failures.keep_partial(
                failure.partial,
                CUT_OFF_BEFORE_RUN,
                interrupted_reason(failure),
                turn_calls=guard.calls_used,
                **self._reply_facts(flight),
            )
            raise request_error(failure, kept=kept) from failure.cause
        if not acc.parts:
            raise no_answer_error(flight.block_reason, finish_of(acc))
        facts = self._reply_facts(flight)
        return await self._finish(acc, guard, facts, stop_after_calls=ignored_withdrawal)

    def _reply_facts(self, flight: ReplyInFlight) -> ReplyFacts:
        """What the usage statistics read on the stored reply: its model, the time it took."""
        return {"model": self.model, "wait_seconds": round(flight.waited(), 3)}

    async def _finish(
        self,
        acc: StreamAccumulator,
        guard: TurnGuard,
        facts: ReplyFacts,
        *,
        stop_after_calls: bool,
    ) -> types.Content | None:
        content = self.redactor.content(acc.content())
        usage = usage_of(acc)
        finish = finish_of(acc)
        event = SessionEvent.from_content(content, usage=usage, finish_reason=finish, **facts)
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
        announced: list[types.FunctionCall] = []  # the calls the hooks were told of
        try:
            # Told even if a cancel lands while it is stored (see ``Save``): a
            # UI shows its cut notice and its calls' rows, as after a restart.
            response = ModelResponse(content, event, usage, finish, cut=cut)
            await self.save(
                (event, content), then=partial(self.emitter.emit, "on_model_response", response)
            )
            if not calls:
                self.answer.text = event.text
                self.answer.cut = cut
                return None
            if withheld:
                assert finish is not None  # calls_withheld is False for None
                reason = withheld_call_error(finish)
                await refuse_calls(calls, reason, guard, self.emitter, results, announced=announced)
            else:
                await run_calls(
                    calls,
                    guard,
                    self.tools,
                    self.tool_settings,
                    self.emitter,
                    results,
                    self.redactor,
                    announced=announced,
                    row_id=self.conversation.last_row_id,
                )
            # A thousand responses take ~40 ms to gather: off the loop, where the
            # UI draws and takes keys (stopped meanwhile, the calls are all
            # answered below, as they ran).
            response_event, response_content = await asyncio.to_thread(responses_event, results)
        except BaseException as exc:
            if calls and self.conversation.last is event:
                # The step is stored but not all of it ran: answer every call.
                await self.failures.answer_unfinished(
                    calls,
                    results,
                    unfinished_reason(exc),
                    announced=len(announced),
                    turn_calls=guard.calls_used,
                )
            raise
        await self.save((response_event, response_content))
        if withheld:
            self.answer.text = event.text
            self.answer.cut = cut
            return None
        if stop_after_calls:
            # Tools were withdrawn and the model called them anyway, twice:
            # every call is answered "not run" and stored, but asking again
            # could loop forever, so the turn ends here and the user decides.
            self.answer.text = ""
            return None
        return response_content

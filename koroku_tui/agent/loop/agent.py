"""``Agent``: Koroku's Gemini tool loop, one model step per ``run()``: the seed's surface.

``Agent()``, ``on(...)`` hooks, ``initialize(replay_handler=...)``,
``run(message)`` and ``close()`` are here, with the turn around the steps: a
typed message is stored before anything is sent; tool responses that
``run()`` itself returned are not stored again; between turns (never in a
tool loop) the context may be compacted. One step (a request and its tool
calls) is ``step.py``'s; what a failure leaves behind is ``failures.py``'s.

The live API key is replaced by ``[redacted]`` in everything stored or sent
(see ``redaction.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Sequence
from functools import partial
from typing import TypeVar

from google import genai
from google.genai import types

from koroku_tui.agent.config import DEFAULT_MODEL, AgentConfig
from koroku_tui.agent.context.budget import DEFAULT_WINDOW, ContextBudget
from koroku_tui.agent.context.compaction_trigger import CompactionRunner
from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.context.instruction_files import InstructionFiles
from koroku_tui.agent.hooks import HistorySynced, HookEmitter, SessionBusy
from koroku_tui.agent.loop.conversation import Conversation, Told
from koroku_tui.agent.loop.failures import Failures
from koroku_tui.agent.loop.startup import (
    client_from_environment,
    context_window,
    replay,
    session_model,
    summary_compactor,
)
from koroku_tui.agent.loop.step import FinalAnswer, Step
from koroku_tui.agent.loop.stopping import once_ended
from koroku_tui.agent.loop.system_instruction import SystemInstruction
from koroku_tui.agent.loop.tool_servers import ToolServers
from koroku_tui.agent.protocols import Compactor, ReplayHandler
from koroku_tui.agent.tools import ToolRegistry, ToolSettings, default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers  # no SDK: imported once they start
from koroku_tui.agent.wire.body import WireForm
from koroku_tui.agent.wire.client import close_client
from koroku_tui.agent.wire.errors import AgentError, ErrorKind
from koroku_tui.agent.wire.finish import AnswerCut
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.agent.wire.request import RequestSettings
from koroku_tui.events import CompactionEvent, Event, SessionEvent
from koroku_tui.store import SessionBusyError, SessionManager
from koroku_tui.store.lifecycle import OpenedWithAsync

__all__ = ["Agent"]

T = TypeVar("T")


def _as_content(message: str | types.Content) -> types.Content:
    if isinstance(message, str):
        return types.Content(role="user", parts=[types.Part(text=message)])
    return message if message.role else message.model_copy(update={"role": "user"})


def _holds_responses(content: types.Content) -> bool:
    return any(p.function_response is not None for p in content.parts or ())


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
        instruction_files: the personal and project instruction files, read when
            the agent starts and re-read at each turn when one changed (their
            text ends the system instruction); default: none.
        mcp: the MCP servers whose tools are offered (started with the agent, closed with it).

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
        instruction_files: InstructionFiles | None = None,
        mcp: McpServers | None = None,
    ) -> None:
        super().__init__()
        if (context is None) == (session_manager is None):
            raise ValueError(
                "give either a starting context or a session manager (not both); "
                "`from koroku_tui import Agent` opens the Koroku home's"
            )
        self.model = model
        """The model of the next request: the session's choice, else the one given here."""
        self._configured_model = model
        self.config = config or AgentConfig()
        self._owns_client = client is None
        if client is None:
            client = client_from_environment(self.config)
        self.session_manager = session_manager
        """The store (``None`` for an in-memory agent): ``await agent.session_manager.delete()``
        is the seed's "clear"."""
        history = session_manager or MemoryHistory(context or ())
        self.client: genai.Client = client
        self._redactor = Redactor.for_client(client, more=mcp.secrets if mcp else ())
        self._wire = WireForm(client)
        self._conversation = Conversation(
            history, redact=self._redactor.content, wire=self._wire.content
        )
        self.tools = tools if tools is not None else default_registry()
        self.tool_settings = tool_settings or ToolSettings(memory_dir=self.config.memory_dir)
        self.tool_settings.use_store(session_manager)  # unless given others
        if compactor is None and self.config.auto_compact:
            compactor = summary_compactor(client, history, self.config, self._redactor)
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
            "", self.tools, include_thoughts=self.config.include_thoughts
        )
        rules = self.tool_settings.rules
        self._instruction = SystemInstruction(
            self._request, self.config.memory_dir, self.tools, rules, memories=session_manager
        )
        self.instruction_files = instruction_files
        self._servers = ToolServers(mcp, self)
        self.mcp = mcp
        """The MCP servers (``statuses()``, ``restart(name)``, ``used``), or None."""
        self._busy: SessionBusy | None = None  # the last attempt another window refused
        self._failures = Failures(self._redactor, self, self._save, session_manager)
        self._answer = FinalAnswer()
        self._lock = asyncio.Lock()
        self._initialized = False
        self.message_stored = False
        """Whether the last message given to ``run()`` was stored (a refused one was not)."""

    # -- lifecycle -------------------------------------------------------

    async def initialize(self, *, replay_handler: ReplayHandler | None = None) -> None:
        """Open the store, load the context once, and replay it through ``replay_handler``.

        The handler is called as ``await replay_handler(event=event)`` (the
        seed's form) for each event of the current context (the latest summary
        and what follows), oldest first; older history is in the store's
        ``load_all``. Raises :class:`AgentError` if the store cannot be opened.
        """
        async with self._lock:
            await self._failures.guarded(self._initialize_once())
        if replay_handler is not None:
            await replay(self._conversation.events, replay_handler, self)
        await self._emit_usage()

    async def _initialize_once(self) -> None:
        if self._initialized:
            return
        if self.session_manager is not None:
            await self.session_manager.initialize()
        await self._conversation.reload()
        await self._set_model(await self._session_model())
        self._initialized = True
        self._servers.start()  # in the background: the first turn waits for them, not this
        self._instruction.follow(self.instruction_files)  # re-read if one changed (a few stat)
        await self._conversation.prepare_in_thread()

    async def close(self) -> None:
        """Close the MCP servers, the store (once a cancelled step stored it) and the client."""
        await self._servers.close()
        if self.session_manager is not None:
            async with once_ended(self._lock):
                await self.session_manager.close()
        if self._owns_client:
            await close_client(self.client)

    # -- public API ------------------------------------------------------

    @property
    def last_text(self) -> str:
        """The visible text of the last finished answer (what ``run_turn`` returns)."""
        return self._answer.text

    @last_text.setter
    def last_text(self, text: str) -> None:
        self._answer.text = text

    @property
    def last_cut(self) -> AnswerCut | None:
        """Set when the turn's final reply is not a whole answer (see ``finish.py``)."""
        return self._answer.cut

    @last_cut.setter
    def last_cut(self, cut: AnswerCut | None) -> None:
        self._answer.cut = cut

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
            return await self._failures.guarded(self._run(content), ends_turn=True)

    async def refresh(self) -> None:
        """Re-read the context after the store switched sessions (``budget`` follows), and
        take that session's model."""
        async with self._lock:
            await self._failures.guarded(self._refresh())
            if (model := await self._session_model()) != self.model:
                await self._set_model(model)
            await self._conversation.prepare_in_thread()  # another session: its events are new

    async def use_model(self, model: str, window: int | None = None) -> None:
        """Use ``model`` in this session from its next turn on, and keep it with the session
        (a restart continues with it); ``window``: its input token limit, when known."""
        async with self._lock:
            if self.session_manager is not None:
                await self._failures.guarded(self.session_manager.set_model(model))
            await self._set_model(model, window)
        await self._emit_usage()  # the gauge follows the new window

    async def _session_model(self) -> str:
        return await session_model(self.session_manager, self._configured_model, self.config)

    async def _set_model(self, model: str, window: int | None = None) -> None:
        self.model = model
        window = await context_window(self.client, model, self.config, window)
        self._policy = dataclasses.replace(self._policy, window=window)

    async def retry(self) -> types.Content | None:
        """Send the stored context again after a failure, without storing anything new."""
        async with self._lock:
            return await self._failures.guarded(self._retry(), ends_turn=True)

    async def run_turn(self, text: str | types.Content) -> str:
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
            return await self._failures.guarded(self._compact_now())

    # -- the turn --------------------------------------------------------

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
        try:
            await self._refresh()
            await self._begin_turn()
            return await self._compaction.run("manual")
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

        Another process's turn on the session makes this wait briefly (each
        attempt told on ``on_session_busy``, and its end), then fail with one
        sentence, with nothing stored.
        """
        if message is None and self._conversation.in_turn:
            return
        event, content = message if message is not None else (None, None)
        refusals: list[SessionBusyError] = []

        async def tell_busy(refused: SessionBusyError) -> None:
            refusals.append(refused)
            self._busy = SessionBusy(refused.session_id, refused.pid, len(refusals))
            await self.emit("on_session_busy", self._busy)

        await self._conversation.begin_turn(event, content, tell_busy)
        if self._busy is not None:  # the other window's turn ended: say the wait is over
            # (a turn refused before this one counts too: its "not sent" is over)
            await self.emit("on_session_busy", dataclasses.replace(self._busy, free=True))
            self._busy = None
        if message is not None:  # the user's message is stored: wait for the MCP servers
            await self._servers.begin_turn()
        self._instruction.follow(self.instruction_files)  # an edit, a server ready: this turn on
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
        """One request and its calls (see ``step.py``), over the agent's parts as they are now."""
        await self._instruction.recall(self._conversation.events)  # a remember counts at once
        step = Step(
            self.model,
            self.config,
            self._conversation,
            self._request,
            self._wire,
            self._redactor,
            self.tools,
            self.tool_settings,
            emitter=self,
            save=self._save,
            failures=self._failures,
            answer=self._answer,
        )
        return await step.run()

    # -- history ---------------------------------------------------------

    async def _refresh(self) -> None:
        await self._initialize_once()
        await self._sync()

    async def _sync(self) -> None:
        """Take in what other processes stored in the session, and tell the hooks."""
        found = await self._conversation.catch_up()
        if found:
            await self.emit("on_history_synced", HistorySynced(found))

    async def _save(
        self, *items: tuple[Event, types.Content | None], then: Told | None = None
    ) -> None:
        """Store ``items``; tell ``on_usage``, then ``then()``, even if a cancel came meanwhile."""
        await self._conversation.save(*items, then=partial(self._told, then))

    async def _told(self, then: Told | None) -> None:
        await self._emit_usage()
        if then is not None:
            await then()

    async def _store_compaction(self, event: CompactionEvent, stored: bool) -> None:
        if stored:
            await self._conversation.reload()
            await self._emit_usage()
        else:
            await self._save((event, None))

    async def _emit_usage(self) -> None:
        if self.has_handlers("on_usage"):
            await self.emit("on_usage", self.budget)

"""The main screen's one job at a time: a turn, a compaction, or another job that writes.

Every job that writes (a turn, a compaction, a new session, a switch, a
rewind, a fork) runs as the screen's exclusive worker of the "agent" group:
while one runs nothing else can write, and ``MainScreen.running`` is true.
This module starts them, runs a turn and a compaction (the two that Escape
can cancel), and hands the queue on when a job ends (``ui.main.queue``).

A plain class holding its screen rather than a mixin or ``@work`` methods:
the workers stay the screen's (``screen.run_worker``: their state changes
reach ``MainScreen.on_worker_state_changed``, their exclusivity is per
screen) while the state they share (the worker, its task, whether it began,
an Escape that came before it did) lives here, in one place, under names
that do not mingle with the screen's own. The worker names are those the
``@work`` methods had, kept for the logs and for ``cancel``'s test of which
job runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState

from koroku_tui.agent import AgentError, NoCompactorError
from koroku_tui.agent.attachments import AttachmentRefused
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.attaching import with_attachments
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_status import STARTING, WAITING, TurnStatus

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["AGENT_GROUP", "COMPACTION", "TURN", "TurnRunner"]

logger = logging.getLogger(__name__)

AGENT_GROUP = "agent"
"""The worker group of the jobs that write: one runs at a time."""

TURN = "_run_turn"
"""The worker name of a model turn."""

COMPACTION = "_compact_worker"
"""The worker name of a compaction asked for with ``main.compact``."""

_CANCELLABLE = frozenset({TURN, COMPACTION})
"""Only a model turn or a compaction: a session switch cut half way would
leave the screen showing one session and the store another."""


class TurnRunner:
    """Runs the jobs of one ``MainScreen``, one at a time, and cancels a turn or a compaction."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.job: Worker[None] | None = None
        """The running (or last) job's worker."""
        self.task: asyncio.Task[Any] | None = None
        """The running turn's task, for a stop signal's cancel message."""
        self._began = True
        """False from a turn's (or compaction's) start until its coroutine runs (see ``cancel``)."""
        self._cancel_at_start = False
        """Escape came before the job's coroutine ran: it stops as soon as it runs."""
        self._unsaved: str | None = None
        """The message sent last, until it is stored or given back to the queue."""
        self._handed = False
        """The agent has the message sent last: its ``message_stored`` is about it."""

    @property
    def unstored(self) -> str | None:
        """The message shown as sent that is neither stored nor back in the queue.

        "hello" Enter ctrl+q in one read: the app closed before the turn stored it, and
        it was lost (the prompt already cleared). ``MessageQueue.save_unsent`` keeps it."""
        agent = self.screen.koroku.agent
        if self._handed and agent is not None and agent.message_stored:
            return None
        return self._unsaved

    @property
    def running(self) -> bool:
        """True while a job is in progress."""
        return self.job is not None and not self.job.is_finished

    def start(self, work: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
        """Run ``work()`` as the exclusive "agent" worker named ``name``.

        An exception it lets out ends the worker in error: the queue comes
        back to the prompt (``job_ended``).
        """

        async def in_order() -> None:
            try:
                await work()
            finally:
                self._flush_hooks()  # what the job's hooks said comes before its end

        self.job = self.screen.run_worker(
            in_order, name=name, group=AGENT_GROUP, exclusive=True, exit_on_error=False
        )

    def _flush_hooks(self) -> None:
        feed = self.screen.koroku.feed
        if feed is not None:
            feed.flush()

    def _post_after_hooks(self, message: m.TurnFinished) -> None:
        self._flush_hooks()
        self.screen.post_message(message)

    def begin(self, job: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``job`` as the exclusive "agent" worker, a failure said in a toast."""
        app = self.screen.app

        async def guarded() -> None:
            try:
                await job
            except Exception:  # a bug of ours: said plainly, the traceback in the log
                logger.exception("%s failed", name)
                app.notify(f"The {name} failed; details are in koroku.log.", severity="error")
            finally:
                self._flush_hooks()

        self.job = self.screen.run_worker(
            guarded(), name=name, group=AGENT_GROUP, exclusive=True, exit_on_error=False
        )

    # -- a turn ----------------------------------------------------------

    async def send(self, text: str) -> None:
        """Show ``text`` as the user's message and start its turn."""
        screen = self.screen
        await screen.query_one(Transcript).add_user(text)
        screen.query_one(ContextGauge).turn_started()
        self._unsaved, self._handed = text, False
        self._began = False
        self.start(partial(self._run_turn, text), TURN)
        screen.query_one(TurnStatus).begin(WAITING if screen.koroku.ready.is_set() else STARTING)

    async def _run_turn(self, text: str) -> None:
        screen = self.screen
        app = screen.koroku
        self._began = True
        self.task = asyncio.current_task()
        if self._cancel_at_start:
            self._cancel_at_start = False
            await self._not_sent(text, "cancelled before it reached the model")
            return
        try:
            message = await with_attachments(
                text, app.parts.instruction_files.workspace, screen.query_one(Transcript)
            )
        except AttachmentRefused as exc:  # nothing sent: the text goes back with the reason
            await self._not_sent(text, str(exc))
            return
        except asyncio.CancelledError:
            # Escape while its @files were read (on a thread: every message's
            # turn passes here, a loaded machine or a slow disk makes it last):
            # nothing was stored, so the text goes back rather than vanishing.
            await self._not_sent(text, "cancelled before it reached the model")
            raise
        if not app.ready.is_set():  # sent while the agent still loads or reads its context
            try:
                await app.ready.wait()
            except asyncio.CancelledError:
                await self._not_sent(text, "cancelled before Koroku was ready")
                raise
            screen.query_one(TurnStatus).now(WAITING)
        agent = app.agent
        if agent is None:
            await self._not_sent(text, app.problem or "Koroku could not start")
            return
        screen.prompt.add_class("-running")  # not the screen's: see koroku.tcss
        cancelled = told = False
        try:
            self._handed = True  # ``run`` resets ``message_stored`` before it first waits
            reply = await agent.run(message)
            while reply is not None:
                reply = await agent.run(reply)
        except asyncio.CancelledError:
            if agent.message_stored:
                cancelled = True
                raise
            # Cancelled before the message was stored (waiting for the agent
            # or its refresh): it never reached the model, so it goes back
            # to the prompt rather than vanishing (a queued message too).
            told = True
            await self._not_sent(text, "cancelled before it reached the model")
            raise
        except AgentError:
            # Already shown through on_error. A message refused before it was
            # stored (busy in another window, deleted session, full disk)
            # goes back to the prompt (with the queue), to be sent later.
            unsent = None if agent.message_stored else text
            if unsent is not None:
                await screen.query_one(Transcript).withdraw_sent()
            screen.queue.turn_failed(unsent)
            self._unsaved = None  # stored, or the queue has it
        except Exception:
            # A bug of ours: the history is already safe (the agent stores
            # before it acts); say so plainly, keep the traceback in the log.
            logger.exception("turn failed")
            screen.queue.turn_failed()
            app.notify(
                "Something went wrong while showing this turn; your messages are saved. "
                "Details are in koroku.log.",
                severity="error",
            )
        finally:
            if not told:  # else ``_not_sent`` did
                self._post_after_hooks(m.TurnFinished(cancelled))

    async def _not_sent(self, text: str, reason: str) -> None:
        """A message that never reached the agent: say so, and give the text back."""
        screen = self.screen
        screen.queue.turn_failed(unsent=text)  # in the prompt when the turn's worker ends
        self._unsaved = None  # the queue has it
        if reason.endswith(".") and not reason.endswith(".."):  # one sentence's stop, not "..."
            reason = reason[:-1]
        reason += "; your text is back in the prompt"
        self._post_after_hooks(m.TurnFinished(False))  # before any await: nothing can skip it
        transcript = screen.query_one(Transcript)
        await transcript.withdraw_sent()  # not stored: not shown as sent either
        await transcript.add_error(f"Not sent: {reason}.")

    # -- a compaction ----------------------------------------------------

    def compact(self) -> None:
        """Summarise older turns now, shown in the status line like a turn."""
        self._began = False
        self.start(self._compact, COMPACTION)
        self.screen.query_one(TurnStatus).begin("summarising older turns")

    async def _compact(self) -> None:
        screen = self.screen
        self._began = True
        if self._cancel_at_start:
            self._cancel_at_start = False
            screen.query_one(TurnStatus).end()
            screen.app.notify("Compaction cancelled before it began.")
            return
        agent = screen.koroku.agent
        assert agent is not None and screen.view is not None
        await screen.view.back_to_live()  # before the summary is stored: it shows once, at the end
        # The outcome has one notice, from the agent's hooks: finished,
        # failed (or nothing to summarise) or, for an AgentError, on_error's
        # line in the transcript. Only "no compactor" is reported before those.
        try:
            await agent.compact()
        except NoCompactorError as exc:
            screen.app.notify(exc.user_message, severity="error")
        except AgentError:
            pass
        except asyncio.CancelledError:  # Escape: the summary is stored only once it is whole
            screen.app.notify("Compaction cancelled; nothing was changed.")
            raise
        finally:
            screen.query_one(TurnStatus).end()

    def compaction_failed(self, message: m.AgentCompactionFailed) -> None:
        """The agent said a compaction failed: if it was the job, the job counts as failed.

        ``_compact`` ends normally after a failed compaction (the hook said
        why): the queue must still see a failed job, and give the messages
        back rather than send them. The hook's message comes before the
        worker's end in the screen's queue. A compaction inside a turn that
        fails does not stop the turn: not counted there.
        """
        job = self.job
        compacting = job is not None and job.name == COMPACTION
        if compacting and not message.failed.nothing_to_do:
            self.screen.queue.turn_failed()

    # -- its end ---------------------------------------------------------

    def cancel(self) -> None:
        """Escape during a job: cancel a turn or a compaction (once); other jobs run on."""
        job = self.job
        if not self._began:
            # Its task exists but has not run yet: cancelled now, it would
            # never run at all (no clean-up, the text lost, "running" for
            # ever). It stops itself, with its clean-up, once it runs.
            self._cancel_at_start = True
            return
        if job is not None and job.name in _CANCELLABLE and not job.is_cancelled:
            self.screen.queue.cancelling()
            job.cancel()  # once: a second cancel would cut the clean-up of the first

    async def job_ended(self, event: Worker.StateChanged) -> None:
        """A worker of the screen changed state: a job's end sends the queue, or gives it back."""
        if event.worker.group == AGENT_GROUP and event.worker.is_finished:
            state = event.state
            await self.screen.queue.job_ended(
                cancelled=state == WorkerState.CANCELLED,
                failed=state == WorkerState.ERROR,
                job="compaction" if event.worker.name == COMPACTION else "turn",
            )

"""The line that follows the first indexing of the history for recall by meaning.

After the first frame (and the agent: Gemini's embedder uses its client),
``start_recall`` asks the run's parts for the indexer (``[recall]
embeddings``) and runs it in a task the line cancels when the app closes.
The first start after the upgrade has a year of history to embed: the line
under the gauge says how far it got ("Indexing past conversations for recall
by meaning… 45%": the local choice's second pass, MiniLM, is the long one),
shows only once that takes more than ``REVEAL_AFTER``
seconds (a few new messages never flash it), and goes when everything is
embedded. Searches meanwhile use the vectors stored so far. A model that
cannot load is one notice: searches go by words alone for the run.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual.widgets import Static

if TYPE_CHECKING:
    from koroku_tui.agent.recall.indexer import Recall
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["INDEXING", "RecallProgress", "start_recall"]

INDEXING = "Indexing past conversations for"
"""How the line starts; what the pass indexes for follows ("recall by meaning…")."""


class RecallProgress(Static):
    """One line, hidden unless a long indexing is under way."""

    REVEAL_AFTER: ClassVar[float] = 1.0
    """Seconds of indexing before the line shows."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(f"{INDEXING} recall…", markup=False, **kwargs)
        self._began: float | None = None
        self.indexer: Recall | None = None
        """The run's indexer, once started (tests wait on its ``idle``)."""
        self._indexing: asyncio.Task[None] | None = None

    def run(self, indexer: Recall) -> None:
        """Run ``indexer`` until the app closes.

        A task of its own, not a worker: it never ends, and start-up (and
        the tests) wait for every worker to.
        """
        self.indexer = indexer
        self._indexing = asyncio.create_task(self._run(indexer), name="recall-indexer")

    async def _run(self, indexer: Recall) -> None:
        running = asyncio.create_task(indexer.run())
        try:
            await indexer.loaded.wait()
            if indexer.problem is not None:  # a model did not load: say so, once
                self.app.notify(indexer.problem, severity="warning")
            await running
        finally:
            running.cancel()

    def on_unmount(self) -> None:
        if self._indexing is not None:
            self._indexing.cancel()

    def progress(self, done: int, total: int, what: str) -> None:
        """A pass's ``(done, total, what for)`` after a batch (on the event loop)."""
        if done >= total:
            self._began = None
            self.remove_class("-shown")
            return
        now = time.monotonic()
        if self._began is None:
            self._began = now
        percent = min(99, done * 100 // max(total, 1))
        self.update(f"{INDEXING} {what}… {percent}% ({done:,} of {total:,} messages)")
        if now - self._began >= self.REVEAL_AFTER:
            self.add_class("-shown")


def start_recall(screen: MainScreen) -> None:
    """Start the run's indexer (if ``[recall] embeddings`` is not ``"off"``), fed to the line."""
    app = screen.koroku
    if app.store is None:
        return
    line = screen.query_one(RecallProgress)
    client = app.agent.client if app.agent is not None else None
    indexer = app.parts.recall_indexer(app.store, client=client, on_progress=line.progress)
    if indexer is None:
        return
    line.run(indexer)

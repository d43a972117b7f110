"""Memories: facts Koroku keeps about the user across conversations, and suggested ones.

A memory is kept by the model (``keep_memory``, its ``remember`` tool), by the
user (``add_memory`` in the memory pane) or, once the user accepts it, from a
suggestion a compaction made (``suggest_memories``). Kept memories are in the
system instruction of every request (``memories_for_prompt``); suggestions
never are. Deleting one (``delete_memory``, or the model's ``forget_memory``)
removes it for good; the conversation it came from stays. Memories belong to
no session: no lease is taken, and any window may change them.
"""

from __future__ import annotations

from collections.abc import Sequence

from koroku_tui.events import SessionEvent
from koroku_tui.store import memories
from koroku_tui.store.errors import (
    MemoryNotFoundError,
    StoreReadError,
    translate_errors,
)
from koroku_tui.store.manager.context_cache import ContextCacheMixin
from koroku_tui.store.manager.core import now
from koroku_tui.store.records import MEMORY, SUGGESTION, MemoryRecord, PromptMemories

__all__ = ["MemoriesMixin"]


class MemoriesMixin(ContextCacheMixin):
    """The memories table: keep, suggest, accept, edit, delete, list, and choose for a prompt."""

    async def keep_memory(self, text: str) -> MemoryRecord:
        """Keep ``text`` as a memory from the current session, at its latest user message.

        What the model's ``remember`` calls. A memory saying the same (case
        and spacing aside) is not kept twice: that one is returned, and a
        suggestion saying it is accepted. ``ValueError`` (a sentence) for
        empty or over-long text.
        """
        clean = memories.clean_memory_text(text)
        context = await self._loaded_context()
        message_id = next(
            (
                m.id
                for m in reversed(context.messages)
                if isinstance(m.event, SessionEvent) and m.event.is_real_user_turn
            ),
            None,
        )
        conn = self._connection()
        async with self._lock:
            session_id = self.session_id if self.session_saved else None
            async with self._transaction(conn):
                same = await memories.find_same(conn, clean)
                if same is None:
                    memory_id = await memories.insert(
                        conn, clean, MEMORY, session_id, message_id, now()
                    )
                else:
                    memory_id = same[0]
                    await memories.accept(conn, memory_id, now())  # a memory stays one
        return await self.get_memory(memory_id)

    async def add_memory(
        self, text: str, session_id: int | None = None, message_id: int | None = None
    ) -> MemoryRecord:
        """Keep ``text`` as a memory (the user adds it by hand: no source by default)."""
        clean = memories.clean_memory_text(text)
        conn = self._connection()
        async with self._lock, self._transaction(conn):
            memory_id = await memories.insert(conn, clean, MEMORY, session_id, message_id, now())
        return await self.get_memory(memory_id)

    async def suggest_memories(
        self, texts: Sequence[str], message_id: int | None = None
    ) -> list[MemoryRecord]:
        """Store ``texts`` as suggestions from the current session (at ``message_id``).

        Texts that are empty, too long, repeated, or already a memory or a
        suggestion (compared case-blind) are left out; returns those stored.
        """
        fresh: dict[str, str] = {}
        for text in texts:
            try:
                clean = memories.clean_memory_text(text)
            except ValueError:
                continue
            fresh.setdefault(memories.folded(clean), clean)
        if not fresh:
            return []
        conn = self._connection()
        stored: list[int] = []
        async with self._lock:
            session_id = self.session_id if self.session_saved else None
            async with self._transaction(conn):
                known = await memories.known_texts(conn)
                when = now()
                for key, clean in fresh.items():
                    if key not in known:
                        stored.append(
                            await memories.insert(
                                conn, clean, SUGGESTION, session_id, message_id, when
                            )
                        )
        return [await self.get_memory(memory_id) for memory_id in stored]

    async def get_memory(self, memory_id: int) -> MemoryRecord:
        """One memory or suggestion; ``MemoryNotFoundError`` when there is none."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                found = await memories.fetch(conn, memory_id)
        if found is None:
            raise MemoryNotFoundError(memory_id)
        return found

    async def list_memories(self, limit: int | None = None, offset: int = 0) -> list[MemoryRecord]:
        """Memories and suggestions, newest first, each with its source's title and state.

        All of them by default: the memory pane lists every one (each can be deleted there).
        """
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await memories.fetch_page(conn, -1 if limit is None else limit, offset)

    async def accept_memory(self, memory_id: int) -> MemoryRecord:
        """Make a suggestion a memory: from the next request on, prompts hold it."""
        conn = self._connection()
        async with self._lock, self._transaction(conn):
            found = await memories.accept(conn, memory_id, now())
        if not found:
            raise MemoryNotFoundError(memory_id)
        return await self.get_memory(memory_id)

    async def edit_memory(self, memory_id: int, text: str) -> MemoryRecord:
        """Replace a memory's (or a suggestion's) text; ``ValueError`` for unfit text."""
        clean = memories.clean_memory_text(text)
        conn = self._connection()
        async with self._lock, self._transaction(conn):
            found = await memories.update_text(conn, memory_id, clean, now())
        if not found:
            raise MemoryNotFoundError(memory_id)
        return await self.get_memory(memory_id)

    async def delete_memory(self, memory_id: int) -> MemoryRecord:
        """Remove a memory or suggestion for good (returned as it was); its source stays."""
        doomed = await self.get_memory(memory_id)
        conn = self._connection()
        async with self._lock, self._transaction(conn):
            if not await memories.delete(conn, memory_id):
                raise MemoryNotFoundError(memory_id)
        return doomed

    async def forget_memory(self, memory_id: int) -> MemoryRecord:
        """What the model's ``forget`` calls: remove a kept memory (never a suggestion)."""
        found = await self.get_memory(memory_id)
        if found.is_suggestion:
            raise MemoryNotFoundError(memory_id)  # the model was never shown it
        return await self.delete_memory(memory_id)

    async def related_memories(self, query: str, limit: int = 10) -> list[MemoryRecord]:
        """The kept memories most related to ``query``, best first (the full-text index)."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                ids = await memories.related_memories(conn, query, limit)
                found = [await memories.fetch(conn, memory_id) for memory_id in ids]
        return [memory for memory in found if memory is not None]

    async def memories_for_prompt(self, query: str, budget: int) -> PromptMemories:
        """The kept memories a request carries, newest first, in ``budget`` characters of text.

        All of them while they fit; past the cap, those most related to
        ``query`` (the user's latest message) and the newest (see
        ``koroku_tui.store.memories.prompt_memories``).
        """
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await memories.prompt_memories(conn, query, budget)

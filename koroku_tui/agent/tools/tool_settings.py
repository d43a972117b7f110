"""Everything a tool call may need from its surroundings, for one session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from koroku_tui.agent.tools.approval import (
    ApprovalCallback,
    ApprovalDecision,
    ApprovalRequest,
    denial,
)
from koroku_tui.agent.tools.approval_rules import NO_RULES, ApprovalRules
from koroku_tui.agent.tools.denials import unattended_refusal
from koroku_tui.agent.tools.file_keeping import FileWrites, StoreFileKeeper
from koroku_tui.store.file_records import FileState
from koroku_tui.store.records import MemoryRecord, SearchPage, SessionExcerpt

__all__ = [
    "DEFAULT_OPT_IN_HINT",
    "MAX_OUTPUT_CHARS",
    "FileKeeper",
    "KeptMemories",
    "PastConversations",
    "SessionStore",
    "ToolSettings",
]

MAX_OUTPUT_CHARS = 20_000
"""Longest output or error text handed back to the model; the rest is cut."""

DEFAULT_OPT_IN_HINT = (
    "To let Koroku run such tools without asking, start it with auto-approve turned on."
)


class PastConversations(Protocol):
    """What the recall tools read past sessions through (``SessionManager`` is one)."""

    async def search_history(self, query: str, limit: int = 10) -> SearchPage:
        """Every session's messages and summaries matching ``query``, best first."""
        ...

    async def read_session(
        self, session_id: int, around_message_id: int | None = None, limit: int = 40
    ) -> SessionExcerpt:
        """Up to ``limit`` rows of a session, oldest first, centred on ``around_message_id``."""
        ...


class KeptMemories(Protocol):
    """What ``remember`` and ``forget`` write through (``SessionManager`` is one)."""

    async def keep_memory(self, text: str) -> MemoryRecord:
        """Keep ``text`` from the current session's latest user message; ``ValueError`` if unfit."""
        ...

    async def forget_memory(self, memory_id: int) -> MemoryRecord:
        """Remove a kept memory; ``MemoryNotFoundError`` when there is none."""
        ...


class FileKeeper(Protocol):
    """Where ``write_file`` keeps a file's state before it writes (``StoreFileKeeper``)."""

    def keep_before_write(self, path: bytes, before: FileState, after: FileState) -> None:
        """Store ``path``'s state ``before`` the write and what it will hold ``after``.

        Called from the tool's thread; returns once stored (committed), or
        raises ``ToolError`` (then nothing is written).
        """
        ...


class SessionStore(PastConversations, KeptMemories, FileWrites, Protocol):
    """A store the recall, memory and file tools use (``SessionManager``)."""


@dataclass
class ToolSettings:
    """Per-session settings and state for the tool executor.

    Create one per session: it remembers which tools the user allowed for the
    whole session (``session_allowed``). Tools that declare a parameter typed
    ``ToolSettings`` receive it; the model never sees that parameter.
    """

    workspace: Path = field(default_factory=Path.cwd)
    """The folder file tools are confined to and commands run in."""
    memory_dir: Path | None = None
    """Daily summary files (``dd-mm-yyyy.md``); ``None`` disables read_memory."""
    history: PastConversations | None = None
    """The store of past conversations for search_history and read_session; ``None``
    disables them. The agent fills it with its session's store when left unset."""
    memories: KeptMemories | None = None
    """Where remember and forget keep the user's memories; ``None`` disables them. The
    agent fills it with its session's store when left unset."""
    file_keeper: FileKeeper | None = None
    """Keeps each file's state before ``write_file`` writes it (for rewind with files);
    ``None``: nothing is kept. The agent fills it with its session's store when left unset."""
    approval_callback: ApprovalCallback | None = None
    """Asks the user about tools that need approval; ``None`` means headless."""
    auto_approve: bool = False
    """Run tools that need approval without asking (explicit opt-in); rules that deny still do."""
    rules: ApprovalRules = NO_RULES
    """The user's ``[approval]`` rules: calls allowed or denied without asking, or asked about."""
    timeouts: Mapping[str, float] = field(default_factory=dict)
    """Per-tool time limits in seconds, overriding each tool's own default."""
    max_output_chars: int = MAX_OUTPUT_CHARS
    """Cap on the text of one result; longer text is cut with a note."""
    opt_in_hint: str = DEFAULT_OPT_IN_HINT
    """Appended to the headless refusal: tells the user how to allow such tools."""
    session_allowed: set[str] = field(default_factory=set)
    """Tools the user allowed for the rest of the session (ALLOW_SESSION)."""
    env_allow: frozenset[str] = frozenset()
    """Secret-looking variables (``*_TOKEN`` and the like) that commands may still see.

    From the ``tool_env_allow`` setting; see ``tools/child_env.py``.
    """

    def __post_init__(self) -> None:
        # Resolved once so confinement checks compare like with like even if
        # the process later changes directory.
        self.workspace = Path(self.workspace).resolve()
        self.env_allow = frozenset(self.env_allow)
        if self.memory_dir is not None:
            # Its folder (the home) is resolved, not memory/ itself: a memory/
            # that is a link must be seen, and refused, by read_memory.
            memory = Path(self.memory_dir)
            self.memory_dir = memory.parent.resolve() / memory.name

    def use_store(self, store: SessionStore | None) -> None:
        """Let search_history, read_session, remember, forget and write_file's snapshots
        use ``store`` (the session's), each unless given another."""
        if self.history is None:
            self.history = store
        if self.memories is None:
            self.memories = store
        if self.file_keeper is None and store is not None:
            self.file_keeper = StoreFileKeeper(store)

    def timeout_for(self, tool_name: str, default: float) -> float:
        """The time limit for ``tool_name``: an override from ``timeouts``, else ``default``."""
        return self.timeouts.get(tool_name, default)

    def will_ask(self, tool_name: str) -> bool:
        """Whether :meth:`seek_approval` would ask the user about ``tool_name`` now."""
        allowed = self.auto_approve or tool_name in self.session_allowed
        return not allowed and self.approval_callback is not None

    async def seek_approval(self, request: ApprovalRequest) -> str | None:
        """Decide whether the call may run: ``None`` if so, else the error text for the model.

        Order: auto-approve, then a tool already allowed for the session, then the
        callback. Without a callback (headless) the call is refused with a hint
        on how to opt in. Cancellation while the user is being asked propagates.
        """
        name = request.tool_name
        if self.auto_approve or name in self.session_allowed:
            return None
        callback = self.approval_callback
        if callback is None:
            return unattended_refusal(name, self.opt_in_hint)
        try:
            decision = await callback(request)
        except Exception as exc:  # CancelledError is not an Exception: it propagates
            # A broken prompt must not run the tool, nor crash the agent loop.
            return f"Could not ask the user to approve {name} ({exc}), so nothing was done."
        if decision is ApprovalDecision.ALLOW_SESSION:
            self.session_allowed.add(name)
            return None
        if decision is ApprovalDecision.ALLOW_ONCE:
            return None
        return denial(name)

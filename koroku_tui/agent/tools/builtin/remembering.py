"""``remember`` and ``forget``: the model keeps and drops facts about the user.

Both write through ``ToolSettings.memories`` (the session's ``SessionManager``)
and touch nothing but Koroku's own memories, which the user sees, edits and
deletes in the history screen's memory pane. A kept memory is in the system
instruction of every request from the next one on (``agent/context/remembered.py``).
"""

from __future__ import annotations

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.tool_settings import KeptMemories, ToolSettings
from koroku_tui.store.errors import MemoryNotFoundError, StoreError
from koroku_tui.text.safety import escape_hidden

__all__ = ["forget", "remember"]

_ECHOED = 200
"""Characters of a forgotten memory quoted back."""
_LARGEST_ID = 2**63 - 1
"""SQLite's largest integer: a bigger id names nothing (and would not even bind)."""


async def remember(context: ToolSettings, text: str) -> str:
    """Keep a lasting fact about the user for every later conversation.

    Call it when the user asks you to remember something, or states a lasting
    fact or preference about themselves (diet, family, where they live, how
    they like answers). Do not call it for passing details of the task at hand.

    Args:
        text: The fact as one short sentence that stands on its own, e.g.
            "The user is vegetarian."
    """
    memories = _memories(context)
    try:
        kept = await memories.keep_memory(text)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    except StoreError as exc:
        raise ToolError(f"Could not remember it: {exc}") from None
    return f"Remembered as memory {kept.id}."


async def forget(context: ToolSettings, memory_id: int) -> str:
    """Remove a memory the user no longer wants kept, or one that is wrong.

    Args:
        memory_id: The memory's number, as the list of memories in your
            instructions gives it ([7] is memory 7).
    """
    memories = _memories(context)
    if not 1 <= memory_id <= _LARGEST_ID:
        raise ToolError(_no_memory(memory_id))
    try:
        gone = await memories.forget_memory(memory_id)
    except MemoryNotFoundError:
        raise ToolError(_no_memory(memory_id)) from None
    except StoreError as exc:
        raise ToolError(f"Could not forget memory {memory_id}: {exc}") from None
    text = " ".join(escape_hidden(gone.text).split())
    if len(text) > _ECHOED:
        text = text[: _ECHOED - 1] + "…"
    return f"Forgot memory {memory_id} ({text})."


def _memories(context: ToolSettings) -> KeptMemories:
    if context.memories is None:
        raise ToolError("Memories are not available in this session.")
    return context.memories


def _no_memory(memory_id: int) -> str:
    return (
        f"There is no memory {memory_id}: use a number from the list of memories in "
        "your instructions."
    )

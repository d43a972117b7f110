"""Where each setting sits in ``config.toml``: the file's keys, and the field each one sets.

Plain tables, no pydantic: the start-up reads a file with them alone (the
schema's model, ``config/file_model.py``, is built only for
``--config-schema``; a test keeps the two in step). Sections are named for
what they set; ``[approval]`` and ``[instructions]`` hold the fields of the
``Settings`` sub-models of the same name, plus the keys below.
"""

from __future__ import annotations

from pydantic import BaseModel

from koroku_tui.config.settings import ApprovalSettings, InstructionSettings

__all__ = [
    "FILE_KEYS",
    "LIST_RULES",
    "NOT_IN_FILE",
    "OPEN_TABLES",
    "PATH_KEYS",
    "SECTIONS",
    "SECTION_MODELS",
    "SERVERS",
    "USER_ONLY",
    "Key",
    "file_key",
    "section_keys",
    "setting_path",
    "shown",
]

Key = tuple[str, ...]
"""A key's path in the file: ``("compaction", "at")``; ``("model",)`` at the top."""

FILE_KEYS: dict[str, Key] = {
    "model": ("model",),
    "trusted_folders": ("trusted_folders",),
    "ignored_folders": ("ignored_folders",),
    "home": ("home",),
    "stall_timeout": ("stall_timeout",),
    "keys": ("keys",),
    "mcp_servers": ("mcp_servers",),
    "compact_at": ("compaction", "at"),
    "compact_after_events": ("compaction", "after_events"),
    "approval_grace": ("approval", "grace"),
    "tool_env_allow": ("tools", "env_allow"),
    "recall_embeddings": ("recall", "embeddings"),
    "web_max_sessions": ("web", "max_sessions"),
}
"""A top-level ``Settings`` field -> its key in the file (in the README example's order)."""
SECTIONS = ("compaction", "approval", "instructions", "tools", "recall", "web")
"""The file's tables, in the README example's order."""
SECTION_MODELS: dict[str, type[BaseModel]] = {
    "approval": ApprovalSettings,
    "instructions": InstructionSettings,
}
"""``Settings`` sub-models whose fields are the keys of the section of the same name."""
NOT_IN_FILE = frozenset({"config"})
"""Settings no file sets: which file is read is said by ``--config`` / ``KOROKU_CONFIG``."""

OPEN_TABLES: frozenset[Key] = frozenset({("keys",), ("approval", "tools"), ("mcp_servers",)})
"""Tables whose keys are the user's (binding ids, tool names, server names): not checked
against a list (each ``[mcp_servers.NAME]`` entry is, by ``config/mcp_entries.py``)."""
SERVERS = "mcp_servers"
"""The table of MCP servers: the file's ``[mcp_servers.NAME]`` entries are kept as keys
``("mcp_servers", NAME)``, each one whole (a server comes from one file)."""
PATH_KEYS: frozenset[Key] = frozenset({("home",), ("trusted_folders",), ("ignored_folders",)})
"""Paths: ``~`` is expanded, and a relative one is taken from the file's folder."""
USER_ONLY: dict[Key, str] = {
    ("trusted_folders",): "which folders are trusted",
    ("ignored_folders",): "which folders Koroku never asks about",
    ("home",): "where Koroku keeps your data",
    ("tools", "env_allow"): "which secret-looking variables commands may see",
    ("recall", "embeddings"): "whether your history is sent to Gemini to be indexed",
}
"""Keys only the user's own file sets (a project's, even trusted, is ignored with a
warning): a cloned repository must not trust itself, move the user's conversations
into a folder of its choosing, or have the user's tokens passed to the commands it
names. Each with what it decides, for the warning."""
LIST_RULES: frozenset[Key] = frozenset(
    {("approval", "allow_commands"), ("approval", "deny_commands")}
)
"""Lists that add up across files (the user's and a project's); other lists are replaced."""


def section_keys() -> dict[str, tuple[str, ...]]:
    """Every table of the file ("" for the top level) and the keys it takes, in order."""
    tables: dict[str, list[str]] = {"": [key[0] for key in FILE_KEYS.values() if len(key) == 1]}
    tables[""] += SECTIONS
    for section in SECTIONS:
        model = SECTION_MODELS.get(section)
        tables[section] = list(model.model_fields) if model is not None else []
    for key in FILE_KEYS.values():
        if len(key) == 2:
            tables[key[0]].append(key[1])
    return {table: tuple(keys) for table, keys in tables.items()}


def setting_path(key: Key) -> tuple[str, ...]:
    """The ``Settings`` field (or sub-model field) a file key sets: ``("compact_at",)``."""
    for field, where in FILE_KEYS.items():
        if where == key:
            return (field,)
    return key  # a section of a sub-model: ("approval", "allow_commands")


def file_key(path: tuple[str | int, ...]) -> Key:
    """The file key of a ``Settings`` location (a validation error's), entries cut off."""
    names = [part for part in path if isinstance(part, str)]
    if names and names[0] in FILE_KEYS:
        return FILE_KEYS[names[0]] + tuple(names[1:])
    return tuple(names)


def shown(key: Key) -> str:
    """How a key is named to the user: ``compaction.at``, as TOML's dotted keys write it."""
    return ".".join(key)

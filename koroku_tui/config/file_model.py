"""The shape of ``config.toml`` as a model, for ``koroku-tui --config-schema``.

Its JSON Schema lets an editor complete and check the file; each field's
docstring is its description. Only that command builds it: the start-up
reads a file with the plain tables of ``config/keys.py`` and checks it with
``Settings`` (reading these docstrings costs ~10 ms). A test keeps this
model's keys, the loader's and the README's example the same; the bounds
are ``Settings``' own (``StallTimeout``...).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from koroku_tui.config.mcp_servers import (
    DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
    StartupTimeout,
    ToolTimeout,
)
from koroku_tui.config.settings import (
    DEFAULT_COMPACT_AT,
    DEFAULT_INSTRUCTION_FILES,
    DEFAULT_MODEL,
    DEFAULT_STALL_TIMEOUT,
    DEFAULT_WEB_MAX_SESSIONS,
    ApprovalGrace,
    CompactAfterEvents,
    CompactAt,
    RecallEmbeddings,
    StallTimeout,
    ToolRule,
    WebMaxSessions,
)

__all__ = ["ConfigFile", "config_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


class CompactionTable(_Table):
    """``[compaction]``: when the conversation is summarised to make room."""

    at: CompactAt = DEFAULT_COMPACT_AT
    """Share of the model's context window (in tokens) at which the conversation is
    summarised, from 0.05 to 1 (``KOROKU_COMPACT_AT``)."""
    after_events: CompactAfterEvents | None = None
    """Also summarise once the context holds this many events (messages, tool calls
    and results), at least 4; off when absent (``KOROKU_COMPACT_AFTER_EVENTS``)."""


class ApprovalTable(_Table):
    """``[approval]``: calls allowed or denied without the dialog (``deny`` wins)."""

    allow_commands: list[str] = Field(default_factory=list)
    """``run_command`` commands that run without asking, as word prefixes: ``"git status"``
    allows ``git status --short``, not ``git statusx``. A project's apply only in a
    trusted folder; never a command with shell control syntax."""
    deny_commands: list[str] = Field(default_factory=list)
    """``run_command`` commands refused without asking, as word prefixes (``"git push"``).
    Lists add up: the user's and a project's."""
    tools: dict[str, ToolRule] = Field(default_factory=dict)
    """Per tool name, ``allow``, ``ask`` or ``deny`` every call (``{ write_file = "ask" }``);
    across files the strictest wins."""
    grace: ApprovalGrace | None = None
    """Seconds the approval dialog (and the history screen's confirmations) ignores keys
    after it appears, from 0 to 10; 0.6 when absent (``KOROKU_APPROVAL_GRACE``)."""


class InstructionsTable(_Table):
    """``[instructions]``: the project files whose text joins the system instruction."""

    files: list[str] = Field(default_factory=lambda: list(DEFAULT_INSTRUCTION_FILES))
    """File names read from the workspace and each parent up to the repository root,
    and from the user config folder (add ``"GEMINI.md"`` or ``"CLAUDE.md"``)."""


class ToolsTable(_Table):
    """``[tools]``: what the tools may use."""

    env_allow: list[str] = Field(default_factory=list)
    """Variables with secret-looking names (``*_KEY``, ``*_TOKEN``...) that
    ``run_command`` may still pass to commands, by exact name (``KOROKU_TOOL_ENV_ALLOW``).
    Koroku's own Gemini credentials are never passed. Read from your own config file only."""


class RecallTable(_Table):
    """``[recall]``: how past conversations are found."""

    embeddings: RecallEmbeddings = "local"
    """What finds past messages by meaning beside their words: ``"local"`` (a small model
    on this machine; history never leaves it), ``"gemini"`` (Gemini's embedding model,
    through your key: history is sent to be indexed) or ``"off"`` (words alone). A change
    re-indexes in the background (``KOROKU_RECALL_EMBEDDINGS``). Read from your own
    config file only."""


class McpServerTable(_Table):
    """``[mcp_servers.NAME]``: an MCP server whose tools Koroku offers, local (``command``)
    or remote (``url``). A bad entry leaves that server out, with a warning."""

    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["command"]}, {"required": ["url"]}]}
    )

    command: str | None = Field(default=None, min_length=1)
    """A local server: the program to start (``"uvx"``); it talks over its stdin and stdout."""
    args: list[str] = Field(default_factory=list)
    """The program's arguments (``["mcp-server-time", "--local-timezone", "Europe/Berlin"]``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the credential-free environment commands get (``{ TZ = "UTC" }``)."""
    cwd: str | None = Field(default=None, min_length=1)
    """The folder the program starts in; ``~`` is expanded, a relative path is taken from
    this file's folder. Default: the workspace."""
    url: str | None = Field(default=None, min_length=1)
    """A remote server over streamable HTTP (``"https://example.org/mcp"``); not with
    ``command``."""
    bearer_token_env_var: str | None = Field(default=None, min_length=1)
    """The variable whose value is sent as ``Authorization: Bearer`` (a remote server's
    token; never write the token here). Read from your own config file only."""
    http_headers: dict[str, str] = Field(default_factory=dict)
    """Headers sent with every request to a remote server (``{ "X-Team" = "blue" }``)."""
    startup_timeout_sec: StartupTimeout = DEFAULT_STARTUP_TIMEOUT
    """Seconds the server may take to start and list its tools before a turn goes on
    without it (at most 3,600)."""
    tool_timeout_sec: ToolTimeout = DEFAULT_TOOL_TIMEOUT
    """Seconds one call of its tools may take (at most a day)."""
    enabled_tools: list[str] | None = None
    """Only these of its tools are offered to the model (default: all)."""
    disabled_tools: list[str] = Field(default_factory=list)
    """Its tools never offered to the model (wins over ``enabled_tools``)."""
    trust: bool = False
    """Its calls run without the approval dialog. Read from your own config file only."""


class WebTable(_Table):
    """``[web]``: Koroku in a browser (``koroku-tui --serve``)."""

    max_sessions: WebMaxSessions = DEFAULT_WEB_MAX_SESSIONS
    """Browser tabs that may each run a Koroku at once; one more gets a page saying why."""


class ConfigFile(_Table):
    """Koroku's ``config.toml``: the user's (``~/.config/koroku/config.toml``, ``--config``,
    ``KOROKU_CONFIG``) or a trusted project's ``.koroku/config.toml``."""

    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    """The Gemini model new turns use (``--model``, ``KOROKU_MODEL``)."""
    home: str | None = Field(default=None, min_length=1)
    """The Koroku home folder (database, memory files); ``~`` is expanded, a relative
    path is taken from this file's folder. Default: the platform's user data folder
    (``--home``, ``KOROKU_HOME``). Read from your own config file only."""
    stall_timeout: StallTimeout = DEFAULT_STALL_TIMEOUT
    """Seconds Gemini may send nothing before a request is given up, at most a day
    (``KOROKU_STALL_TIMEOUT``)."""
    trusted_folders: list[str] = Field(default_factory=list)
    """Folders whose project files (``.koroku/config.toml``, instruction files) are used,
    as absolute paths; a folder's trust covers its children (the trust prompt's "Trust"
    adds to it). Read from your own config file only."""
    ignored_folders: list[str] = Field(default_factory=list)
    """Folders whose project files are not used and about which Koroku never asks again
    (the trust prompt's "Never" adds to it); a folder's entry covers its children.
    Read from your own config file only."""
    keys: dict[str, str] = Field(default_factory=dict)
    """Key remaps, binding id -> keys (``"main.compact" = "ctrl+k"``), as in
    ``keymap.toml`` (whose entries win)."""
    compaction: CompactionTable = Field(default_factory=CompactionTable)
    """When the conversation is summarised."""
    approval: ApprovalTable = Field(default_factory=ApprovalTable)
    """Approval rules."""
    instructions: InstructionsTable = Field(default_factory=InstructionsTable)
    """Project instruction files."""
    tools: ToolsTable = Field(default_factory=ToolsTable)
    """What the tools may use."""
    recall: RecallTable = Field(default_factory=RecallTable)
    """How past conversations are found."""
    web: WebTable = Field(default_factory=WebTable)
    """Koroku in a browser (``--serve``)."""
    mcp_servers: dict[str, McpServerTable] = Field(default_factory=dict)
    """MCP servers whose tools are offered, by name (``[mcp_servers.time]``); a trusted
    project's start only in a trusted folder, and your own file's entry of a name wins."""


def config_schema() -> dict[str, Any]:
    """The JSON Schema of ``config.toml``."""
    schema = ConfigFile.model_json_schema()
    return {"$schema": SCHEMA_DIALECT, **schema}

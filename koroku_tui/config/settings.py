"""Where Koroku keeps its data, and the knobs a user can turn.

Precedence: ``--home DIR`` on the command line, then ``KOROKU_HOME``, then the
platform's user data folder for "koroku".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from platformdirs import user_config_path, user_data_path
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from koroku_tui.config.mcp_servers import McpServerSettings

COMMAND = "koroku-tui"
"""The command as advice names it (``cli.launch_command`` says ``uv run koroku-tui`` under uv)."""
DEFAULT_MODEL = "gemini-3-flash-preview"
"""The chat model unless ``--model`` says otherwise (preview ids get retired)."""
MODEL_ID = re.compile(r"(?:models/|tunedModels/)?[A-Za-z0-9][A-Za-z0-9._-]*")
"""A Gemini model id (``gemini-3-pro-preview``, ``models/gemini-2.5-flash``)."""
DEFAULT_STALL_TIMEOUT = 120.0
"""Seconds of silence from Gemini before a request is given up (``KOROKU_STALL_TIMEOUT``)."""
DEFAULT_COMPACT_AT = 0.8
"""Share of the context window at which the conversation is summarised (``KOROKU_COMPACT_AT``)."""
EMPTY_HOME = "it is empty, so it names no folder"
"""Why an empty ``KOROKU_HOME`` or ``--home ""`` is refused (``Path("")`` is the current folder)."""
MAX_STALL_TIMEOUT = 86_400.0
"""The longest ``KOROKU_STALL_TIMEOUT`` (a day): ``inf`` or ``1e300`` broke the client's set-up."""
NAME_MAX = 255
"""The longest folder name, in bytes (Linux, macOS)."""
PATH_MAX = 4096
"""The longest path the system opens, in bytes, the final NUL included (Linux)."""
DATABASE_FILENAME = "koroku.db"
MEMORY_DIRNAME = "memory"
UNSENT_FILENAME = "unsent.txt"
"""The queues windows closed with, for the next start's prompt (``ui.main.unsent``)."""
DEMO_DIRNAME = "demo"
"""The demo's own home inside the Koroku home (``modes.demo``)."""


def default_home() -> Path:
    """The platform's per-user data folder for Koroku (not created here)."""
    return user_data_path("koroku", appauthor=False)


def user_config_dir() -> Path:
    """The platform's per-user config folder for Koroku (not created here).

    ``~/.config/koroku`` on Linux (``$XDG_CONFIG_HOME/koroku``): it holds
    ``config.toml`` and the personal instruction files (``AGENTS.md``...).
    Computed here, at the bottom, and handed down by the assembly
    (``modes/wiring.py``): nothing below it asks platformdirs.
    """
    return user_config_path("koroku", appauthor=False)


def default_config_file() -> Path:
    """The user's config file: ``config.toml`` in :func:`user_config_dir`."""
    return user_config_dir() / CONFIG_FILENAME


CONFIG_FILENAME = "config.toml"
ENV_PREFIX = "KOROKU_"
ENVIRONMENT_FIELDS = frozenset(
    {
        "home",
        "model",
        "config",
        "stall_timeout",
        "approval_grace",
        "tool_env_allow",
        "compact_at",
        "compact_after_events",
        "recall_embeddings",
    }
)
"""The settings a ``KOROKU_<FIELD>`` variable sets (lists of rules and folders are the file's)."""

StallTimeout = Annotated[float, Field(gt=0, le=MAX_STALL_TIMEOUT, allow_inf_nan=False)]
ApprovalGrace = Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]
CompactAt = Annotated[float, Field(ge=0.05, le=1.0, allow_inf_nan=False)]
CompactAfterEvents = Annotated[int, Field(ge=4)]
RecallEmbeddings = Literal["local", "gemini", "off"]
WebMaxSessions = Annotated[int, Field(ge=1, le=64)]
DEFAULT_WEB_MAX_SESSIONS = 3
"""Each value's bounds, written once: ``Settings`` and the config file's schema share them."""

ToolRule = Literal["allow", "ask", "deny"]
"""What an ``[approval] tools`` entry says of every call of one tool."""
DEFAULT_INSTRUCTION_FILES = ("AGENTS.md", "KOROKU.md")
"""The project instruction files read unless ``[instructions] files`` names others."""


class ApprovalSettings(BaseModel):
    """``[approval]``: calls allowed or denied without the dialog (``deny`` wins over ``allow``)."""

    model_config = ConfigDict(extra="forbid")

    allow_commands: list[str] = Field(default_factory=list)
    """``run_command`` commands that run without asking, as word prefixes
    (``"git status"`` allows ``git status --short``, not ``git statusx``)."""
    deny_commands: list[str] = Field(default_factory=list)
    """``run_command`` commands refused without asking, as word prefixes (``"git push"``)."""
    tools: dict[str, ToolRule] = Field(default_factory=dict)
    """Per tool name: ``allow``, ``ask`` or ``deny`` every call (``{ write_file = "ask" }``)."""


class InstructionSettings(BaseModel):
    """``[instructions]``: the project files whose text joins the system instruction."""

    model_config = ConfigDict(extra="forbid")

    files: list[str] = Field(default_factory=lambda: list(DEFAULT_INSTRUCTION_FILES))
    """File names looked for in the workspace and each parent up to the repository
    root, and in the user config folder (``["AGENTS.md", "KOROKU.md"]``)."""

    @field_validator("files")
    @classmethod
    def _names_not_paths(cls, names: list[str]) -> list[str]:
        # Joined to each folder: "../../.ssh/id_rsa" or "/etc/passwd" read a file outside
        # the project into what the model is told, past the rule that refuses a link there.
        for name in names:
            if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
                raise ValueError(f"an instruction file is a name, not a path: `{name}`")
        return names


class Settings(BaseModel):
    """Every knob of a run, from its sources: defaults < the user's config file < a trusted
    project's ``.koroku/config.toml`` < ``KOROKU_*`` variables < flags.

    A plain model that reads its ``KOROKU_*`` variables itself (pydantic-settings
    cost ~100 ms of the launch before the first frame, for one prefix); the
    files are read by ``koroku_tui.config.loading``, which hands their values
    in as arguments below the variables.

    Built in two places only: ``cli.py`` and ``seed_entry.py`` (the seed's
    ``Agent()``, which has no flags); the run's parts are assembled from the
    value in ``koroku_tui.modes.wiring``. A new setting is a field here (with
    its docstring), its key in the file (``config/keys.py``), its use there,
    and the place that uses the part. Credentials are not settings (see
    ``koroku_tui.modes.wiring``).
    """

    model_config = ConfigDict(extra="ignore", validate_default=True)

    home: Path = Field(default_factory=default_home)
    """The Koroku home folder: holds the database and the memory folder."""
    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    """The Gemini model new turns use (``--model``, ``KOROKU_MODEL``)."""
    config: Path = Field(default_factory=default_config_file)
    """The user's config file (``--config``, ``KOROKU_CONFIG``); trust answers are kept in it."""
    trusted_folders: list[Path] = Field(default_factory=list)
    """Folders whose project files (``.koroku/config.toml``, instruction files) are used;
    a folder's trust covers its children. Only the user's own config file sets it."""
    ignored_folders: list[Path] = Field(default_factory=list)
    """Folders whose project files are not used and about which Koroku never asks again
    (the trust prompt's "Never"); a folder's entry covers its children."""
    approval: ApprovalSettings = Field(default_factory=ApprovalSettings)
    """Approval rules: the user's, plus a trusted project's (an untrusted project
    may only add ``deny`` and ``ask`` rules)."""
    instructions: InstructionSettings = Field(default_factory=InstructionSettings)
    """Which project instruction files are read."""
    mcp_servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    """``[mcp_servers.NAME]``: MCP servers whose tools are offered (``config/mcp_servers.py``)."""
    keys: dict[str, str] = Field(default_factory=dict)
    """Key remaps from the config file's ``[keys]`` (binding id -> keys, as in
    ``keymap.toml``, whose entries win)."""

    stall_timeout: StallTimeout = DEFAULT_STALL_TIMEOUT
    """``KOROKU_STALL_TIMEOUT``: seconds Gemini may send nothing before a request is
    given up (a slow but steady answer is never cut; the clock restarts at each chunk)."""
    approval_grace: ApprovalGrace | None = None
    """``KOROKU_APPROVAL_GRACE``: seconds the approval dialog (and the history
    screen's confirmations: delete, empty the trash; and the trust prompt)
    ignores keys after it appears (default 0.6), so letters typed ahead cannot
    answer it. Scripts that drive Koroku through a terminal set it to 0."""
    tool_env_allow: list[str] = Field(default_factory=list)
    """Variables with secret-looking names (``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
    ``*_PASSWORD``) that ``run_command`` may still pass to commands, e.g.
    ``KOROKU_TOOL_ENV_ALLOW=GITHUB_TOKEN,NPM_TOKEN``. Comma-separated, exact names.
    Koroku's own Gemini credentials are never passed, whatever this says.
    """

    compact_at: CompactAt = DEFAULT_COMPACT_AT
    """``KOROKU_COMPACT_AT``: the share of the model's context window (in tokens, as
    Gemini last measured it) at which the conversation is summarised, e.g. ``0.6``."""
    compact_after_events: CompactAfterEvents | None = None
    """``KOROKU_COMPACT_AFTER_EVENTS``: also summarise once the context holds this many
    events (messages, tool calls and results). Off by default: tokens decide."""
    recall_embeddings: RecallEmbeddings = "local"
    """``KOROKU_RECALL_EMBEDDINGS``: what finds past messages by meaning beside their
    words: ``"local"`` (a small model on this machine, the default: history never leaves
    it), ``"gemini"`` (Gemini's embedding model: history is sent to be indexed) or
    ``"off"`` (words alone)."""
    web_max_sessions: WebMaxSessions = DEFAULT_WEB_MAX_SESSIONS
    """``[web] max_sessions``: browser tabs that may each run a Koroku at once under
    ``--serve``; one more gets a page saying why."""

    @model_validator(mode="before")
    @classmethod
    def _read_environment(cls, given: Any, info: ValidationInfo) -> Any:
        # Values passed in code win; each field not passed is read from
        # KOROKU_<FIELD>. The loader checks one file's values alone with
        # ``context={"environment": False}``.
        if not isinstance(given, dict) or (info.context or {}).get("environment") is False:
            return given
        found = {name: value for name, (_, value) in koroku_variables().items()}
        return {**found, **given}

    @field_validator("home", mode="before")
    @classmethod
    def _named_folder(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            raise ValueError(EMPTY_HOME)
        return value

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str) -> str:
        if problem := model_id_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("home")
    @classmethod
    def _openable_folder(cls, value: Path) -> Path:
        if problem := home_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("tool_env_allow", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        # A comma-separated environment variable; a list from code passes as is.
        if isinstance(value, str):
            return [name.strip() for name in value.split(",") if name.strip()]
        return value

    @property
    def database_path(self) -> Path:
        """The SQLite file holding every session."""
        return self.home / DATABASE_FILENAME

    @property
    def memory_dir(self) -> Path:
        """Daily summary files, one ``dd-mm-yyyy.md`` per day with compactions."""
        return self.home / MEMORY_DIRNAME


def koroku_variables(environ: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """The settings ``KOROKU_*`` variables set: field -> (the variable's name, its value).

    Names match in any case (as pydantic-settings did). An empty value counts
    as unset (``KOROKU_COMPACT_AFTER_EVENTS=`` is how a shell turns a setting
    back off), except KOROKU_HOME's: a script that meant to keep Koroku apart
    would write into the user's data (``Settings`` refuses it, unless another
    spelling is set). ``environ`` defaults to the process's environment.
    """
    found: dict[str, tuple[str, str]] = {}
    for key, value in (os.environ if environ is None else environ).items():
        name = key[len(ENV_PREFIX) :].lower()
        if not key.upper().startswith(ENV_PREFIX) or name not in ENVIRONMENT_FIELDS:
            continue
        if value.strip():
            found[name] = (key, value)
        elif name == "home":
            found.setdefault(name, (key, value))
    return found


def process_environment(environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """``environ``, else the process's environment: the loader reads there, with the
    ``KOROKU_*`` variables, the variables MCP servers' ``bearer_token_env_var`` name."""
    return os.environ if environ is None else environ


def model_id_problem(name: str) -> str | None:
    """Why ``name`` cannot be a model id, or None.

    The id is put in each request's URL path as it is
    (``/v1beta/models/ID:streamGenerateContent``): a ``#`` cut the request
    short to ``/v1beta/models/ID``, a ``/`` or ``..`` led elsewhere, and ``?``
    reached the SDK as "invalid model parameter" mid-turn.
    """
    if MODEL_ID.fullmatch(name) and ".." not in name:
        return None
    return "a model id holds only letters, digits, `.`, `-` and `_`"


def home_problem(home: Path) -> str | None:
    """Why ``home`` can never be Koroku's home, or None (nothing is touched to find out).

    Said before any file is opened: a name the system refuses (too long, too
    deep) ended in a traceback, and one that is not UTF-8 in a logging error
    on stderr (the log, the database URI and the screen all need text).
    """
    text = str(home)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "it holds bytes that are not UTF-8"
    parts = [len(part.encode()) for part in home.parts if part != "/"]
    if parts and max(parts) > NAME_MAX:
        return (
            f"a folder name in it is {max(parts):,} bytes long, and a name may have at most "
            f"{NAME_MAX}"
        )
    length = len(str(home.absolute()).encode())
    if length >= PATH_MAX:
        return f"it is a path of {length:,} bytes, and a path may have at most {PATH_MAX - 1:,}"
    return None


def settings_problem(exc: ValidationError) -> str:
    """One sentence naming the ``KOROKU_*`` variable that holds a bad value."""
    first = exc.errors()[0]
    name = "KOROKU_" + "_".join(str(part) for part in first["loc"]).upper()
    why = str(first["msg"]).removeprefix("Value error, ")  # pydantic's wrapping of our own
    return f"{name} is not usable ({why[:1].lower()}{why[1:]}); fix or unset it."

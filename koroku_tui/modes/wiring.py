"""The one assembly point: one ``Settings`` value in, everything a run needs out.

``cli.py`` builds the one ``Settings`` (flags over ``KOROKU_*``); the seed's
``from koroku_tui import Agent`` builds it from the environment
(``seed_entry.py``). Either hands it to :func:`assemble`, and the app,
``--print``, ``--demo`` and the seed's ``Agent()`` take their parts from the
:class:`RunParts` it returns: the store's file, the tool registry, the
agent's config, the tools' settings and the system instruction. Nothing
below reads ``Settings()`` or the environment on its own
(``tests/test_one_assembly_point.py``). Adding a setting touches the field on
``Settings`` (with its docstring), its use here, and the place that uses the
part.

Light on purpose: the paths, the store and the tool registry (its specs
import no SDK) are ready before the app's first frame, which draws each
replayed call as its tool's spec says; the agent's half
(:meth:`RunParts.agent_parts`) imports the agent and the Gemini SDK (~1.5 s)
only when asked, which the app does after that frame, in a thread
(``ui/app.py``).

Credentials are not settings: the SDK reads ``GEMINI_API_KEY``,
``GOOGLE_API_KEY``, ``GOOGLE_GEMINI_BASE_URL`` and the Vertex AI variables
with its own precedence, and the command line withdraws the key values from
the environment before ``Settings`` exists (``agent/wire/credentials.py``,
the one reader of them). Kept out of ``Settings``, a key is never copied into
a model that is logged, copied for the demo, or (next) merged from a
project's file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_tui.agent.context.instruction_files import InstructionFiles
from koroku_tui.config.settings import COMMAND, Settings, user_config_dir
from koroku_tui.config.trust import is_trusted
from koroku_tui.store import SessionManager

if TYPE_CHECKING:  # the agent's side imports the Gemini SDK: see RunParts.agent_parts
    from google import genai

    from koroku_tui.agent import Agent, AgentConfig
    from koroku_tui.agent.recall.backlog import Late
    from koroku_tui.agent.recall.indexer import Progress, Recall
    from koroku_tui.agent.tools import ApprovalCallback, ToolRegistry, ToolSettings
    from koroku_tui.agent.tools.mcp.servers import McpServers

__all__ = ["AgentParts", "RunParts", "assemble"]


@dataclass(frozen=True)
class AgentParts:
    """The agent's half of a run (built after the app's first frame: it imports the SDK).

    The agent builds its system instruction from the two parts it is handed
    that name things in it, ``config.memory_dir`` and ``tools`` (their specs'
    names, descriptions and approval); :attr:`system_instruction` is that
    text, from the same inputs, for whoever wants to read it without an agent.
    """

    config: AgentConfig
    """Stall limit, compaction budget, memory folder (or the mode's own config)."""
    tool_settings: ToolSettings
    """Workspace, approval, the variables commands may see, the store the recall tools read."""
    tools: ToolRegistry
    """The tools the model is offered: the run's registry (:attr:`RunParts.tools`)."""
    instruction_files: InstructionFiles
    """The personal and project instruction files (:attr:`RunParts.instruction_files`)."""
    mcp: McpServers | None = None
    """The ``[mcp_servers]`` of the settings (not started: the agent starts them), or None."""

    @property
    def system_instruction(self) -> str:
        """The instruction the agent sends: the memory folder, the tools offered, the rules,
        and the instruction files as they are now."""
        from koroku_tui.agent.instructions import system_instruction

        files = self.instruction_files.refresh()
        return system_instruction(
            self.config.memory_dir, self.tools, self.tool_settings.rules, files
        )


@dataclass(frozen=True)
class RunParts:
    """Everything one run is built from, derived from one ``Settings`` by :func:`assemble`."""

    settings: Settings
    """The value the parts come from (its home also holds the log and the keymap)."""
    model: str
    """The chat model (``Settings.model``: the config file's, ``KOROKU_MODEL``, ``--model``);
    a session that chose another ("Change model…") uses its own."""
    workspace: Path
    """The folder the file tools are confined to and commands run in."""
    database_path: Path
    """The SQLite file of every session (``<home>/koroku.db``)."""
    memory_dir: Path
    """The daily summary files (``<home>/memory``)."""
    approval_grace: float | None
    """Seconds the approval dialog ignores keys (``None``: the dialog's default)."""
    tools: ToolRegistry
    """The tools of the run: the agent is given them, and the app draws each call (replayed
    before the first frame, or live) as its spec here says (default: the built-in ones)."""
    instruction_files: InstructionFiles
    """The personal and project instruction files (read by the agent, after the first frame)."""
    config_file: Path
    """The user's ``config.toml``, where the trust prompt keeps its answers."""
    auto_approve: bool = False
    """Run tools that change things without asking (``--print --yes``)."""
    opt_in_hint: str | None = None
    """How a refused tool tells the user to allow it (``None``: the tools' default)."""
    client: genai.Client | None = field(default=None, repr=False)
    """A client made by the caller (the demo's, tests'); ``None``: the agent makes one."""
    agent_config: AgentConfig | None = None
    """A mode's own agent config (the demo's, tests'); ``None``: the one the settings ask for."""
    command: str = COMMAND
    """How the user starts Koroku, as advice names it (``uv run koroku-tui`` under uv)."""
    read_only: bool = False
    """The home cannot be written: the store is opened to read, and the app only browses."""
    notices: tuple[str, ...] = ()
    """One-line warnings of the config files (unknown keys...), for the app to show."""
    model_pinned: bool = False
    """``--model`` named the model: it wins over a session's own choice, for this run."""

    def open_store(self, session_id: int | None = None) -> SessionManager:
        """The store on the run's file, continuing ``session_id`` (default: the latest)."""
        return SessionManager(self.database_path, session_id=session_id, read_only=self.read_only)

    def agent_parts(
        self,
        store: SessionManager | None = None,
        *,
        approval_callback: ApprovalCallback | None = None,
    ) -> AgentParts:
        """The agent's config, tools and tool settings; ``store`` is what the recall tools read.

        Imports the agent and the Gemini SDK: the app calls this after its
        first frame.
        """
        from koroku_tui.agent import AgentConfig
        from koroku_tui.agent.context.budget import BudgetPolicy
        from koroku_tui.agent.tools import ToolSettings
        from koroku_tui.agent.tools.approval_rules import ApprovalRules
        from koroku_tui.agent.tools.mcp.servers import McpServers
        from koroku_tui.agent.tools.tool_settings import DEFAULT_OPT_IN_HINT

        settings = self.settings
        config = self.agent_config or AgentConfig(
            memory_dir=self.memory_dir,
            stall_timeout=settings.stall_timeout,
            budget=BudgetPolicy(
                threshold_share=settings.compact_at, event_limit=settings.compact_after_events
            ),
            command=self.command,
            session_models=not self.model_pinned,
        )
        tool_settings = ToolSettings(
            workspace=self.workspace,
            memory_dir=config.memory_dir,
            history=store,
            approval_callback=approval_callback,
            auto_approve=self.auto_approve,
            opt_in_hint=self.opt_in_hint or DEFAULT_OPT_IN_HINT,
            env_allow=frozenset(settings.tool_env_allow),
            rules=ApprovalRules(
                allow_commands=tuple(settings.approval.allow_commands),
                deny_commands=tuple(settings.approval.deny_commands),
                tools=dict(settings.approval.tools),
            ),
        )
        servers = settings.mcp_servers
        mcp = (
            # Their tools join the run's registry, which the app draws calls with.
            McpServers(
                servers, self.tools, workspace=self.workspace, env_allow=tool_settings.env_allow
            )
            if servers
            else None
        )
        return AgentParts(
            config=config,
            tool_settings=tool_settings,
            tools=self.tools,
            instruction_files=self.instruction_files,
            mcp=mcp,
        )

    def recall_indexer(
        self,
        store: SessionManager,
        *,
        client: genai.Client | None = None,
        on_progress: Progress | None = None,
        headless: bool = False,
        on_late: Late | None = None,
    ) -> Recall | None:
        """What gives ``store``'s messages their vectors, as ``[recall] embeddings`` says.

        ``None`` when it says ``"off"``, for Gemini's model without a
        ``client`` (the agent's), and on a read-only home. ``"local"`` is two
        passes (``agent.recall.passes``). The app's indexing works between
        turns; ``headless`` (``--print``) embeds what is missing before its
        one search, so the answer sees all of the history (two minutes at
        most: ``on_late`` is told the rows left, the search uses what is indexed).
        """
        from koroku_tui.agent.recall import recall_indexing

        if store.read_only:
            return None
        return recall_indexing(
            store,
            self.settings.recall_embeddings,
            client,
            on_progress=on_progress,
            headless=headless,
            on_late=on_late,
        )

    def build_agent(
        self, store: SessionManager, *, approval_callback: ApprovalCallback | None = None
    ) -> Agent:
        """The agent on ``store``, with the run's parts (imports the SDK, as ``agent_parts``)."""
        from koroku_tui.agent import Agent

        parts = self.agent_parts(store, approval_callback=approval_callback)
        return Agent(
            self.model,
            session_manager=store,
            client=self.client,
            tools=parts.tools,
            tool_settings=parts.tool_settings,
            config=parts.config,
            instruction_files=parts.instruction_files,
            mcp=parts.mcp,
        )


def assemble(
    settings: Settings,
    *,
    workspace: Path | None = None,
    auto_approve: bool = False,
    opt_in_hint: str | None = None,
    client: genai.Client | None = None,
    agent_config: AgentConfig | None = None,
    tools: ToolRegistry | None = None,
    command: str = COMMAND,
    read_only: bool = False,
    config_dir: Path | None = None,
    notices: tuple[str, ...] = (),
    model_pinned: bool = False,
    headless: bool = False,
) -> RunParts:
    """Turn ``settings`` (and the mode's choices) into the parts of one run.

    ``workspace`` defaults to the current folder. ``client`` and
    ``agent_config`` are for a mode that brings its own (the demo's scripted
    Gemini) and for tests; without them the agent makes its client from the
    credentials and its config from ``settings``. ``tools`` replaces the
    built-in registry (a test's, or the seed's ``Agent(tools=...)``); the
    built-in one is described here, without the Gemini SDK. ``command`` is how
    the user started Koroku, for advice that names it, and ``read_only`` says
    the home cannot be written (the command line decides both). The model is
    ``settings.model`` (a session's own choice wins unless ``model_pinned``:
    ``--model`` named it); ``notices`` are the config's warnings, for the app.

    ``config_dir`` holds the personal instruction files (default: the
    platform's user config folder); the trust prompt's answers go to
    ``settings.config`` (``--config FILE`` names another file). The project's
    instruction files count only when the workspace is in one of
    ``settings.trusted_folders``. Nothing is read here: the agent reads the
    files when it starts, after the app's first frame. ``headless``
    (``--print``): search_history's limit covers its wait for the vectors.
    """
    if tools is None:
        from koroku_tui.agent.tools.builtin import SEARCH_HISTORY_TIMEOUT, default_registry

        # Only --print's searches wait for indexing (``PRINT_WAIT``); in the app a search
        # that outlasts the default limit is stuck, and the model should hear so.
        tools = default_registry(search_timeout=SEARCH_HISTORY_TIMEOUT if headless else None)
    workspace = workspace or Path.cwd()
    instruction_files = InstructionFiles(
        workspace,
        names=settings.instructions.files,
        personal_dir=config_dir or user_config_dir(),
        trusted=is_trusted(workspace, settings.trusted_folders),
        home=_user_home(),
    )
    return RunParts(
        settings=settings,
        model=settings.model,
        workspace=workspace,
        database_path=settings.database_path,
        memory_dir=settings.memory_dir,
        approval_grace=settings.approval_grace,
        tools=tools,
        auto_approve=auto_approve,
        opt_in_hint=opt_in_hint,
        client=client,
        agent_config=agent_config,
        command=command,
        read_only=read_only,
        instruction_files=instruction_files,
        config_file=settings.config,
        notices=notices,
        model_pinned=model_pinned,
    )


def _user_home() -> Path | None:
    """The user's home, for paths shown as ``~/...`` (``None`` when there is none to speak of)."""
    try:
        return Path.home()
    except RuntimeError:
        return None

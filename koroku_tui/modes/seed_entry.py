"""``from koroku_tui import Agent``: the seed's ``Agent()``, on the user's settings.

The seed design's program has no command line: ``Agent()`` alone must find
the Koroku home (``KOROKU_HOME``, else the platform's data folder) and honour
the user's config file, a trusted project's and the other ``KOROKU_*``
variables, as ``koroku-tui`` does (without flags). So this entry builds
``Settings`` from those sources, the one place besides ``cli.py`` that does,
and takes its parts from the one assembly point
(``koroku_tui.modes.wiring``); the files' warnings go to the log.
``koroku_tui.agent.Agent`` itself reads no setting: it is given its store
(or a context) and its config.

Imported on first use of ``koroku_tui.Agent``: it brings the Gemini SDK.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from google import genai
from pydantic import ValidationError

from koroku_tui import agent
from koroku_tui.agent import AgentConfig, AgentError, Compactor, ErrorKind
from koroku_tui.agent.tools import ToolRegistry, ToolSettings
from koroku_tui.config.loading import ConfigError, load_config
from koroku_tui.config.settings import Settings
from koroku_tui.events import Event
from koroku_tui.modes.wiring import assemble
from koroku_tui.privacy.user_files import read_text_file
from koroku_tui.store import SessionManager

__all__ = ["Agent"]

logger = logging.getLogger(__name__)


class Agent(agent.Agent):
    """Koroku's agent (``koroku_tui.agent.Agent``), whose parts default to the user's settings.

    ``Agent()`` keeps its history in the file ``koroku-tui`` uses (``koroku.db``
    in the Koroku home), works in the current folder, and takes the model, the
    stall limit, the compaction budget and the variables commands may see from
    the config files and ``KOROKU_*``. Any part given is used instead
    (``model`` too); ``context=[]`` keeps the history in memory only. A bad
    config file or ``KOROKU_*`` value is an :class:`AgentError` naming it, in
    one sentence.
    """

    def __init__(
        self,
        model: str | None = None,
        context: Sequence[Event] | None = None,
        session_manager: SessionManager | None = None,
        *,
        client: genai.Client | None = None,
        tools: ToolRegistry | None = None,
        tool_settings: ToolSettings | None = None,
        config: AgentConfig | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        flags = {} if model is None else {"model": ("Agent(model=...)", model)}
        try:  # the seed has no command line: the files and KOROKU_* only
            loaded = load_config(workspace=Path.cwd(), read=read_text_file, flags=flags)
            settings = Settings(**loaded.given)
        except ConfigError as exc:
            raise AgentError(str(exc), ErrorKind.STORE) from None
        except ValidationError as exc:
            # The home cannot be known: the store's kind, as a bad home always was.
            raise AgentError(loaded.problem(exc)[0], ErrorKind.STORE) from None
        for line in loaded.said():
            logger.warning("%s", line)
        run = assemble(settings, client=client, agent_config=config, tools=tools)
        if context is None and session_manager is None:
            session_manager = run.open_store()  # as in the seed: Agent() remembers
        parts = run.agent_parts(session_manager)
        super().__init__(
            settings.model,
            context,
            session_manager,
            client=client,
            tools=parts.tools,
            tool_settings=tool_settings or parts.tool_settings,
            config=parts.config,
            compactor=compactor,
        )

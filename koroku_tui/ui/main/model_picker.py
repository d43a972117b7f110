"""The palette's "Change model…": the models Gemini offers, and the session switched to one.

The list (``agent.model_choices``: the API's, cached in the home for a day,
else the cached one, else the configured models) shows each model with its
context window, the one in use marked, and where the list came from. The
choice is this session's from its next turn on (``Agent.use_model``, which
keeps it with the session, so a restart continues with it); the title shows
it and the gauge follows its window. Escape keeps the model.

Imported when the palette runs it, after the agent (and the SDK) loaded.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from koroku_tui.agent import AgentError
from koroku_tui.agent.model_choices import ModelChoice, ModelChoices, model_choices
from koroku_tui.config.settings import DEFAULT_MODEL
from koroku_tui.ui.safe_text import literal

if TYPE_CHECKING:
    from koroku_tui.agent import Agent
    from koroku_tui.ui.app import KorokuApp

__all__ = ["ModelPicker", "change_model", "choice_line", "source_line"]


def choice_line(choice: ModelChoice, in_use: str) -> Text:
    """``gemini-3-pro-preview · 1,048,576 tokens · Gemini 3 Pro Preview (in use)``."""
    window = f"{choice.window:,} tokens" if choice.window else "window not known"
    line = literal(f"{choice.name} · {window}")
    if choice.display_name and choice.display_name != choice.name:
        line.append(literal(f" · {choice.display_name}", "dim"))
    if choice.name == in_use:
        line.append(" (in use)", style="bold")
    return line


def source_line(choices: ModelChoices) -> str:
    """Where the list came from, and why not from the API when it did not."""
    why = f" (the API could not be asked: {choices.problem})" if choices.problem else ""
    if choices.source == "api":
        return "The models Gemini offers for this key, with their context windows."
    if choices.source == "cache":
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(choices.fetched_at or 0))
        return f"The models Gemini offered on {when}{why}."
    return f"The configured models; their windows are not known{why}."


class ModelPicker(ModalScreen[ModelChoice | None]):
    """Pick the model of this session; dismissed with the choice, or ``None``."""

    DEFAULT_CSS = """
    ModelPicker {
        align: center middle;
        background: $background 60%;
    }
    ModelPicker > Vertical {
        width: 100;
        max-width: 100%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    ModelPicker #model-title {
        text-style: bold;
    }
    ModelPicker OptionList {
        height: auto;
        max-height: 20;
        margin: 1 0 0 0;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Keep the model", id="models.close"),
    ]

    def __init__(self, agent: Agent, app: KorokuApp) -> None:
        super().__init__()
        self.agent = agent
        self.koroku = app
        self.choices: ModelChoices | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(literal(f"Model of this session: {self.agent.model}"), id="model-title")
            yield Static("Asking Gemini for its models…", id="model-source")
            yield OptionList(id="model-list")

    def on_mount(self) -> None:
        self._load()

    @work(group="models", exclusive=True, exit_on_error=False)
    async def _load(self) -> None:
        settings = self.koroku.settings
        configured = [self.agent.model, settings.model, DEFAULT_MODEL]
        choices = await model_choices(self.agent.client, settings.home, configured)
        self.choices = choices
        self.query_one("#model-source", Static).update(literal(source_line(choices)))
        listed = self.query_one(OptionList)
        listed.add_options(
            Option(choice_line(choice, self.agent.model), id=choice.name)
            for choice in choices.models
        )
        names = [choice.name for choice in choices.models]
        listed.highlighted = names.index(self.agent.model) if self.agent.model in names else 0
        listed.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.choices is not None:
            self.dismiss(self.choices.models[event.option_index])


def change_model(app: KorokuApp) -> None:
    """Open the list (once the agent is up, no turn running), and switch the session to the
    model chosen: as the screen's one writing job, never under a turn."""
    agent, screen = app.agent, app.main
    if agent is None:
        app.notify(app.problem or "Koroku is still starting.", severity="error")
        return
    if screen.busy():
        return

    def chosen(choice: ModelChoice | None) -> None:
        if choice is not None and choice.name != agent.model and not screen.busy():
            screen.turns.start(partial(_switch, app, agent, choice), "_model_worker")

    app.push_screen(ModelPicker(agent, app), chosen)


async def _switch(app: KorokuApp, agent: Agent, choice: ModelChoice) -> None:
    """Switch the session; the title and the gauge follow."""
    try:
        await agent.use_model(choice.name, choice.window)
    except AgentError as exc:
        app.notify(exc.user_message, severity="error")
        return
    app.model = agent.model
    app.sub_title = agent.model
    window = f" ({agent.budget.window:,}-token window)" if agent.budget.window else ""
    app.notify(f"This session now uses {agent.model}{window}, from your next message.")

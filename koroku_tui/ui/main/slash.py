"""Slash commands in the prompt: the list ``/`` opens, and what a sent ``/word`` does.

- Typing ``/`` at the start of an empty prompt opens the list
  (``ui.main.slash_menu``), filtered by the word after it; ↑/↓ move, Tab or
  Enter (or a click) choose, Escape closes it. It closes as soon as the prompt holds a
  space or a new line: ``/name rest of line`` is being typed. While it is
  closed the prompt's keys are the prompt's.
- Choosing sends ``/name`` as if typed, through the same path as Enter (so a
  running turn queues a custom command's text as it queues a message), except
  a custom command that takes ``$ARGUMENTS``: the prompt gets ``/name `` for
  the user to go on typing.
- A sent ``/name`` runs a built-in (``ui.main.commands``), with the prompt
  cleared; text after a built-in's name runs nothing and stays in the prompt
  (nothing typed is lost). ``/name rest`` of a custom command sends its
  file's text with ``$ARGUMENTS`` replaced (``agent.context.custom_commands``);
  text after the name of one without ``$ARGUMENTS`` runs nothing and stays, as for a built-in.
  ``//text`` sends ``/text``. Any other ``/word`` is sent as written, after a
  one-line notice offering ``//``. A message given back to the prompt (rewound,
  queued, unsent) comes back as typed (:func:`as_typed`): ``/new`` as ``//new``.

A paste only inserts text: whatever it holds, nothing runs before an Enter.
The command files are read in a thread after the first frame, and again once
each time the prompt begins holding a ``/word`` (a file added since shows
up; not at each key of it); what cannot be used is
said once per sentence, the first few on screen and all of them in the log.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, cast

from koroku_tui.agent.context.custom_commands import (
    LONGEST_NAME,
    MESSAGE_CAP,
    CommandFolders,
    CustomCommand,
    LoadedCommands,
    load_commands,
)
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.main.commands import BUILTIN_COMMANDS, builtin
from koroku_tui.ui.main.prompt import Prompt

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen
    from koroku_tui.ui.main.slash_menu import Offer, SlashMenu

__all__ = ["SlashCommands", "as_typed", "typed_command"]

logger = logging.getLogger(__name__)

_MOST_NOTICES = 3
"""Notices about command files shown at once: a folder of hundreds of unusable files says
the first few and how many more (each is in the log), not hundreds of toasts."""

_TYPED = re.compile(r"/(\S*)\s*(.*)", re.DOTALL)
_BUILTIN_NAMES = tuple(command.name for command in BUILTIN_COMMANDS)


def typed_command(text: str) -> tuple[str, str] | None:
    """``(name, rest of the text)`` for a message ``/name rest``; ``None`` for any other
    (``//text`` included: a literal slash)."""
    if text.startswith("//"):
        return None
    found = _TYPED.fullmatch(text)
    return (found.group(1), found.group(2)) if found else None


def as_typed(text: str) -> str:
    """What to put back in the prompt for ``text``, a message as it was sent (rewound,
    queued, unsent): a leading slash doubled, so that Enter sends it as written again
    instead of running ``/name`` (a message ``/new``, sent by typing ``//new``)."""
    return f"/{text}" if text.startswith("/") else text


class SlashCommands:
    """The main screen's slash commands: the list, the custom commands read, and sending."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.loaded: LoadedCommands | None = None
        """The custom commands last read (``None`` before the first reading ended)."""
        self._said: set[str] = set()
        self._dismissed: str | None = None
        self._read_for_word = False
        """The files were read again since the prompt began holding a ``/word``."""
        """The prompt's text when Escape closed the list: it opens again once that changes."""

    @property
    def custom(self) -> dict[str, CustomCommand]:
        """The custom commands by name, as last read."""
        return self.loaded.commands if self.loaded is not None else {}

    def start(self) -> None:
        """Take the prompt's keys while the list is open; read the files after the first frame."""
        self.screen.prompt.completion = self
        self.screen.call_after_refresh(self.reload)

    # -- the custom commands' files ---------------------------------------

    def _folders(self) -> CommandFolders:
        return CommandFolders.of(self.screen.koroku.parts.instruction_files)

    def reload(self) -> None:
        """Read the command files again, in a thread; the list shows them when read."""
        self.screen.run_worker(
            self._read(), group="slash-commands", exclusive=True, exit_on_error=False
        )

    async def _read(self) -> None:
        folders = self._folders()
        self._apply(await asyncio.to_thread(load_commands, folders, builtins=_BUILTIN_NAMES))
        if self.menu is not None and self.menu.is_open:
            self.text_changed(self.screen.prompt.text)

    def _apply(self, loaded: LoadedCommands) -> None:
        self.loaded = loaded
        new = [notice for notice in loaded.notices if notice not in self._said]
        self._said.update(new)
        for notice in new:
            logger.warning("%s", notice)
        for notice in new[:_MOST_NOTICES]:
            self.screen.app.notify(notice, severity="warning", timeout=20)
        if len(new) > _MOST_NOTICES:
            more = len(new) - _MOST_NOTICES
            self.screen.app.notify(
                f"{more:,} more command files are not used; koroku.log says why for each.",
                severity="warning",
                timeout=20,
            )

    # -- the list ------------------------------------------------------------

    @property
    def menu(self) -> SlashMenu | None:
        """The list, once mounted (at the first ``/``)."""
        found = self.screen.query("#slash-menu")
        return cast("SlashMenu", found.first()) if found else None

    def text_changed(self, text: str) -> None:
        """The prompt's text changed: open, filter or close the list."""
        menu = self.menu
        typed = self._typed_word(text)
        if text != self._dismissed:
            self._dismissed = None  # Escape closed the list for that text only
        if typed is None:
            self._read_for_word = False
        if typed is None or self._dismissed is not None:
            if menu is not None:
                menu.hide()
            return
        # Imported at the first "/", off the first frame (Textual's OptionList with it).
        from koroku_tui.ui.main.slash_menu import SlashMenu, matching, offers

        if menu is None:
            menu = SlashMenu(chosen=self.choose)
            self.screen.mount(menu, before=self.screen.prompt)
        if not self._read_for_word:  # once a /word, not at each key of "/usr/bin/env"
            self._read_for_word = True
            self.reload()  # a file added or changed since shows up
        menu.show(matching(typed, offers(self.custom.values())))

    @staticmethod
    def _typed_word(text: str) -> str | None:
        """What follows the slash while the prompt holds ``/word`` only; else ``None``."""
        if not text.startswith("/") or text.startswith("//") or len(text) > LONGEST_NAME + 1:
            return None  # no name is longer: a pasted blob (base64 starts "/9j/") is not scanned
        word = text[1:]
        return None if any(c.isspace() for c in word) else word

    def take_key(self, key: str) -> bool:
        """A key pressed in the prompt: ``True`` when the open list acted on it."""
        menu = self.menu
        if menu is None or not menu.is_open:
            return False
        prompt = self.screen.prompt
        if key in ("up", "down"):
            menu.action_cursor_up() if key == "up" else menu.action_cursor_down()
            return True
        if key == "escape":
            self._dismissed = prompt.text
            menu.hide()
            return True
        if key not in ("enter", "tab"):
            return False
        # Keys typed with the Enter are in the prompt before the list heard of them.
        self.text_changed(prompt.text)
        offer = menu.chosen if menu.is_open else None
        if offer is None:
            return False  # nothing matches: Enter sends what was typed
        self.choose(offer)
        return True

    def choose(self, offer: Offer) -> None:
        """``offer`` chosen (Enter, Tab, or a click on its row): sent as ``/name``, or, for a
        custom command taking ``$ARGUMENTS``, put in the prompt to go on typing."""
        prompt = self.screen.prompt
        if self.menu is not None:
            self.menu.hide()
        if offer.custom is not None and offer.custom.takes_arguments:
            prompt.text = f"/{offer.name} "
            prompt.move_cursor(prompt.document.end)
        else:
            prompt.post_message(Prompt.Submitted(prompt, f"/{offer.name}", prompt.text))

    # -- sending -------------------------------------------------------------

    def ran_builtin(self, sent: Prompt.Submitted) -> bool:
        """``True`` when ``sent`` named a built-in command: it ran (or was refused, and said)."""
        typed = typed_command(sent.text)
        command = builtin(typed[0]) if typed is not None else None
        if typed is None or command is None:
            return False
        if self.menu is not None:
            self.menu.hide()
        if typed[1]:
            self.screen.app.notify(
                f"/{command.name} takes nothing after its name: it did not run, "
                "and your text stays in the prompt."
            )
            return True
        sent.prompt.take(sent)
        command.run(self.screen)
        return True

    def message(self, text: str) -> str | None:
        """What sending ``text`` sends: a custom command's text, ``//x`` as ``/x``, any other
        text as written (a ``/word`` that is no command with a notice); ``None``: nothing."""
        if text.startswith("//"):
            return text[1:]
        typed = typed_command(text)
        if typed is None:
            return text
        if self.loaded is None:  # sent before the first reading ended: read now
            self._apply(load_commands(self._folders(), builtins=_BUILTIN_NAMES))
        name, arguments = typed
        command = self.custom.get(name)
        if command is None:
            word = escape_hidden(text.split(maxsplit=1)[0][:40])
            self.screen.app.notify(
                f"{word} is no command, so it was sent as a message; "
                f"type /{word} (two slashes) to send a slash without this notice."
            )
            return text
        if arguments and not command.takes_arguments:
            self.screen.app.notify(
                f"/{name} takes nothing after its name ({self._folders().shown(command.path)} "
                "has no $ARGUMENTS): nothing was sent, and your text stays in the prompt."
            )
            return None
        if (size := command.size(arguments)) > MESSAGE_CAP:
            self.screen.app.notify(
                f"/{name} would send {size:,} characters, more than the {MESSAGE_CAP:,} "
                f"a command may: nothing was sent, and your text stays in the prompt.",
                severity="error",
            )
            return None
        message = command.message(arguments)
        if not message.strip():
            shown = self._folders().shown(command.path)
            self.screen.app.notify(f"/{name} sends nothing: {shown} has no text.", severity="error")
            return None
        return message

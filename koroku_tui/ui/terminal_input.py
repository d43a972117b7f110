"""Reading the terminal: a bracketed paste arrives whole, whatever it holds.

Textual's ``XTermParser`` reads a paste character by character, looking for
escape sequences inside it as it does outside: an ESC in the pasted text
(coloured output copied from tmux, ``ESC [ 3 1 m``) starts a "sequence" that
never matches, and the parser gives up after 32 characters and sends them
as key presses. The paste ends at the first ESC; what follows arrives as
keys, out of order (a BEL is ctrl+g, the rewind list; a CR is Enter, which
sends). ``PasteParser`` reads everything between the start and the end of a
bracketed paste as text, and ``PasteSafeDriver`` (``KorokuApp`` runs on it)
reads the terminal with it. The prompt shows the control characters of a
paste as escapes (``ui.main.prompt``).
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import TYPE_CHECKING

from textual import events
from textual._parser import ParseEOF, ParseError, ParseTimeout, Peek1, Read1, TokenCallback
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.message import Message

if TYPE_CHECKING:
    from textual.driver import Driver

__all__ = ["PasteParser", "driver_to_run_on"]


class PasteParser(XTermParser):
    """``XTermParser``, but a bracketed paste is read as text up to its end marker.

    Outside a paste, every character goes to Textual's parser unchanged. Once
    it has read a paste's start marker, the characters are collected here
    until ``ESC [ 2 0 1 ~`` and posted as one ``Paste``; Textual's parser is
    then given the end marker so that it leaves its own paste state (the
    empty paste it reports for it is dropped).
    """

    def parse(self, token_callback: TokenCallback[Message]) -> Generator[Read1 | Peek1, str, None]:
        def from_textual(token: Message) -> None:
            if not isinstance(token, events.Paste):  # pastes are read here
                token_callback(token)

        textual = super().parse(from_textual)
        request = next(textual)
        recent = ""
        while True:
            try:
                character = yield request
            except ParseError as error:  # a timeout (a lone ESC) or the end of input
                try:
                    request = textual.throw(error)
                except StopIteration:
                    return
                continue
            recent = (recent + character)[-len(BRACKETED_PASTE_START) :]
            try:
                request = textual.send(character)
            except StopIteration:
                return
            if recent != BRACKETED_PASTE_START:
                continue
            recent = ""
            text, ended = yield from self._pasted()
            # Textual drops NULs from a paste (textual#1661): so does this.
            token_callback(events.Paste(text.replace("\x00", "")))
            if not ended:
                return
            for character in BRACKETED_PASTE_END:  # Textual's parser leaves its paste state
                request = textual.send(character)

    def _pasted(self) -> Generator[Read1 | Peek1, str, tuple[str, bool]]:
        """The text up to the paste's end marker; False if the input ended first."""
        pasted: list[str] = []
        marker, last = len(BRACKETED_PASTE_END), BRACKETED_PASTE_END[-1]
        while True:
            try:
                character = yield self.read1()
            except ParseTimeout:  # none was asked for; nothing is lost waiting
                continue
            except ParseEOF:
                return "".join(pasted), False
            pasted.append(character)
            if character == last and "".join(pasted[-marker:]) == BRACKETED_PASTE_END:
                return "".join(pasted[:-marker]), True


def driver_to_run_on(driver: type[Driver]) -> type[Driver]:
    """The driver to run on: Textual's Linux/macOS driver reading with ``PasteParser``;
    in a ``--serve`` tab, its web driver ending the app with the server (``ServedDriver``).

    Any other driver (Windows, another named in ``TEXTUAL_DRIVER``, a test's) is kept.
    """
    if (driver.__module__, driver.__name__) == ("textual.drivers.web_driver", "WebDriver"):
        from koroku_tui.ui.web_driver import ServedDriver

        return ServedDriver
    if sys.platform == "win32":
        return driver
    from textual.drivers.linux_driver import LinuxDriver

    from koroku_tui.ui.terminal_driver import PasteSafeDriver

    return PasteSafeDriver if driver is LinuxDriver else driver

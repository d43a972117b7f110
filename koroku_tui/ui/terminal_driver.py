"""``PasteSafeDriver``: Textual's Linux/macOS driver, reading keys with ``PasteParser``.

Textual's driver builds its ``XTermParser`` inside ``run_input_thread``;
this is that method with the parser swapped (``ui.terminal_input`` says why).
Only the parser differs: the reading loop is Textual's (8.x), unchanged.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual.drivers.linux_driver import LinuxDriver

from koroku_tui.ui.terminal_input import PasteParser

__all__ = ["PasteSafeDriver"]


class PasteSafeDriver(LinuxDriver):
    """The terminal driver Koroku runs on outside Windows: a paste arrives whole."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, on ``PasteParser``)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno, event_read = self.fileno, selectors.EVENT_READ
        parser = PasteParser(self._debug)
        feed, tick = parser.feed, parser.tick
        decode = getincrementaldecoder("utf-8")().decode

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & event_read:
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # stdin is piped
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass

"""``ServedDriver``: Textual's web driver, for an app a ``koroku-tui --serve`` tab runs.

Two differences from Textual's (8.x), whose reading loop this otherwise is:

- it reads with ``PasteParser``, so a paste in the browser arrives whole,
  as in a terminal (``ui.terminal_input`` says why: an ESC inside a paste
  broke it up, and a CR in what followed sent the message);
- the end of its input is the tab's close. The server speaks to the app
  through its stdin and stdout pipes, and closes a tab by sending SIGHUP
  (``modes.web.app_process``). A server that dies without a word (kill -9,
  a crash) sends nothing, and the app, in a process group of its own, would
  run on unseen with its commands: it sends itself that SIGHUP instead.
"""

from __future__ import annotations

import os
import signal
from codecs import getincrementaldecoder

from textual import log
from textual.drivers._byte_stream import ByteStream
from textual.drivers.web_driver import WebDriver, _ExitInput

from koroku_tui.ui.terminal_input import PasteParser

__all__ = ["ServedDriver"]


class ServedDriver(WebDriver):
    """Textual's web driver reading with ``PasteParser``; the server's pipe closing ends the app."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, on ``PasteParser``)."""
        input_reader = self._input_reader
        parser = PasteParser(debug=self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        byte_stream = ByteStream()  # keys ("D") and meta packets (resize, focus)
        try:
            for data in input_reader:
                for packet_type, payload in byte_stream.feed(data) if data else ():
                    if packet_type == "D":
                        for event in parser.feed(decode(payload)):
                            self.process_message(event)
                    else:
                        self._on_meta(packet_type, payload)
                for event in parser.tick():
                    self.process_message(event)
        except _ExitInput:
            pass
        except Exception as error:  # Textual's loop logs and ends, as here
            log(repr(error))
        finally:
            input_reader.close()
            if not self.exit_event.is_set():  # the input ended: the server is gone
                os.kill(os.getpid(), signal.SIGHUP)

"""``ServedDriver``: Textual's web driver, for an app a ``koroku-tui --serve`` tab runs.

The server speaks to the app through its stdin and stdout pipes, and closes
the tab by sending it SIGHUP (``modes.web.app_process``). A server that dies
without a word (kill -9, a crash) sends nothing, and Textual's driver merely
stops reading at the end of its input: the app, in a process group of its
own, would run on unseen, its command with it. Here the end of the input is
the tab's close: the app sends itself that SIGHUP.
"""

from __future__ import annotations

import os
import signal

from textual.drivers.web_driver import WebDriver

__all__ = ["ServedDriver"]


class ServedDriver(WebDriver):
    """Textual's web driver; when the server's pipe closes, the app stops as on a closed tab."""

    def run_input_thread(self) -> None:
        """Textual's reading loop; once it ends, SIGHUP unless the app itself is stopping."""
        try:
            super().run_input_thread()
        finally:
            if not self.exit_event.is_set():  # the input ended: the server is gone
                os.kill(os.getpid(), signal.SIGHUP)

"""``koroku-tui --show-config`` and ``--config-schema``: the settings told, nothing opened.

Both print on stdout and exit 0; the config files' warnings go to stderr
first. A reader that stops early (``| head``) is no error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from koroku_tui.config.loading import LoadedConfig
from koroku_tui.config.settings import Settings
from koroku_tui.text.safety import escape_hidden

__all__ = ["print_config", "print_schema", "tell"]


def tell(lines: Sequence[str]) -> None:
    """Each line on stderr, as ``koroku-tui: ...``, one line each.

    The lines quote the files (a key's name, a value), which may hold an
    escape sequence or a bidi control: shown as ``\\u001b``, never sent raw
    to the terminal, and a line break in a key cannot start a line of its own.
    """
    for line in lines:
        shown = escape_hidden(line).replace("\n", "\\n")
        print(f"koroku-tui: {shown}", file=sys.stderr)


def print_schema() -> int:
    """Print the JSON Schema of ``config.toml``."""
    from koroku_tui.config.file_model import config_schema

    return _write_out(json.dumps(config_schema(), indent=2) + "\n")


def print_config(settings: Settings, loaded: LoadedConfig) -> int:
    """Print the settings in effect with their sources (credential values taken out)."""
    from koroku_tui.config.show import show_config
    from koroku_tui.privacy.live_secrets import redact

    tell(loaded.said())
    # Values are quoted as TOML writes them; C1 controls and bidi marks in them as escapes.
    return _write_out(escape_hidden(show_config(settings, loaded, redact)))


def _write_out(text: str) -> int:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # and the interpreter's last flush must not say it again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

"""Where the user's own Koroku files live outside the home: the config folder.

``~/.config/koroku`` on Linux (``$XDG_CONFIG_HOME/koroku``), the platform's
equivalent elsewhere, via platformdirs. It holds ``config.toml`` (the
settings, the trusted and ignored folders) and the personal instruction
files (``AGENTS.md``...). Computed here, at the bottom, and handed down by
the assembly (``modes/wiring.py``): nothing below it asks platformdirs.
"""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_config_path

__all__ = ["CONFIG_FILENAME", "user_config_dir", "user_config_file"]

CONFIG_FILENAME = "config.toml"
"""The user's settings file in :func:`user_config_dir`."""


def user_config_dir() -> Path:
    """The platform's per-user config folder for Koroku (not created here)."""
    return user_config_path("koroku", appauthor=False)


def user_config_file() -> Path:
    """The user's ``config.toml`` (``--config FILE`` / ``KOROKU_CONFIG`` name another)."""
    return user_config_dir() / CONFIG_FILENAME

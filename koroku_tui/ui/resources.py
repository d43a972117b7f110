"""Files that ship with Koroku: the Textual stylesheets.

In a wheel the top-level ``styles/`` folder is packaged as ``koroku_tui/styles``
(see pyproject.toml); in a source checkout it sits beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # koroku_tui/, above ui/


def styles_dir() -> Path:
    """The folder holding Koroku's ``.tcss`` files, installed or in a checkout."""
    for candidate in (_PACKAGE_DIR / "styles", _PACKAGE_DIR.parent / "styles"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        "Koroku's stylesheets are missing; reinstall koroku-tui "
        f"(looked in {_PACKAGE_DIR / 'styles'} and {_PACKAGE_DIR.parent / 'styles'})."
    )

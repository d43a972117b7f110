"""The ``koroku-tui`` command line: parse flags, build Settings, pick a mode."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from koroku_tui import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; kept separate so tests and docs can inspect it."""
    parser = argparse.ArgumentParser(
        prog="koroku-tui",
        description="Koroku: a personal Gemini agent in your terminal that never forgets.",
    )
    parser.add_argument("--version", action="version", version=f"koroku-tui {__version__}")
    parser.add_argument(
        "--home",
        type=Path,
        metavar="DIR",
        help="Koroku home folder (database and memory files). "
        "Default: $KOROKU_HOME, else the platform's user data folder.",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``koroku-tui`` console script."""
    args = build_parser().parse_args(argv)
    # Imported here so --version and --help stay fast.
    from koroku_tui.settings import Settings

    settings = Settings(home=args.home) if args.home else Settings()
    print(
        f"Koroku {__version__}: data in {settings.home}. "
        "The full-screen app is not built yet; see README.md.",
        file=sys.stderr,
    )
    return 0

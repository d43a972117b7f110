"""The ``koroku-tui`` command line: parse flags, build Settings, pick a mode."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from koroku_tui import __version__
from koroku_tui.settings import DEFAULT_MODEL, Settings


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
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--new", action="store_true", help="start a new conversation")
    which.add_argument(
        "--session", type=int, metavar="ID", help="continue conversation ID (default: latest)"
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, metavar="NAME", help="Gemini model (default: %(default)s)"
    )
    parser.add_argument(
        "--print",
        dest="print_text",
        metavar="TEXT",
        help="run one turn without the TUI, print the answer and exit ('-' reads stdin)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="with --print: allow write_file and run_command without asking",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="try Koroku offline against a built-in scripted Gemini (no API key needed)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``koroku-tui`` console script."""
    args = build_parser().parse_args(argv)
    from koroku_tui.home_modes import tighten_home
    from koroku_tui.logs import configure_logging

    settings = Settings(home=args.home) if args.home else Settings()
    configure_logging(settings.home)
    tighten_home(settings.home)  # a home others can read is made private (and logged)
    if args.print_text is not None:
        from koroku_tui.headless import HeadlessRequest, run_headless

        text = sys.stdin.read() if args.print_text == "-" else args.print_text
        if not text.strip():
            print("koroku-tui: --print needs a message.", file=sys.stderr)
            return 1
        request = HeadlessRequest(
            text=text,
            model=args.model,
            session_id=args.session,
            new_session=args.new,
            auto_approve=args.yes,
        )
        return run_headless(request, settings)
    if args.demo:
        from koroku_tui.demo import run_demo

        return run_demo(settings, model=args.model)
    return _run_app(settings, args)


def _run_app(settings: Settings, args: argparse.Namespace) -> int:
    """The full-screen app, after checking that the database opens."""
    from koroku_tui.store import StoreError, check_database

    try:
        check_database(settings.database_path, session_id=args.session)
    except StoreError as exc:
        print(f"koroku-tui: {exc}", file=sys.stderr)
        return 1
    from koroku_tui.ui.app import freeze_heap, make_app

    app = make_app(settings, model=args.model, session_id=args.session, new_session=args.new)
    freeze_heap()
    app.run()
    return app.return_code or 0

"""The ``koroku-tui`` command line: parse flags, build Settings, pick a mode."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from koroku_tui import __version__
from koroku_tui.settings import DEFAULT_MODEL, Settings, settings_problem

EPILOG = (
    "Exit codes with --print: 0 the answer is whole; 1 no answer (an error, said in one "
    "line on stderr); 2 Gemini ended without a whole answer (cut off at the token limit, "
    "stopped by a safety filter, only thoughts, or the prompt blocked), said on stderr "
    "after what arrived; 130 interrupted. A request on which Gemini sends nothing for "
    "KOROKU_STALL_TIMEOUT seconds (default 120) is given up; each retry is one line on "
    "stderr."
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; kept separate so tests and docs can inspect it."""
    parser = argparse.ArgumentParser(
        prog="koroku-tui",
        description="Koroku: a personal Gemini agent in your terminal that never forgets.",
        epilog=EPILOG,
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
        "--raw",
        action="store_true",
        help="with --print, when stdout is not a terminal: write the answer exactly as the "
        "model sent it, escape sequences included (otherwise they are removed; stderr "
        "is always cleaned)",
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
    _protect_credentials()
    from koroku_tui.home_modes import tighten_home
    from koroku_tui.logs import configure_logging

    try:
        settings = Settings(home=args.home) if args.home else Settings()
    except ValidationError as exc:
        print(f"koroku-tui: {settings_problem(exc)}", file=sys.stderr)
        return 1
    configure_logging(settings.home)
    tighten_home(settings.home)  # a home others can read is made private (and logged)
    if args.print_text is not None:
        from koroku_tui.headless import HeadlessRequest, run_headless
        from koroku_tui.message_input import read_message

        stdin = sys.stdin.buffer if sys.stdin is not None else None
        text = read_message(args.print_text, stdin, sys.stderr)
        if not text.strip():
            print("koroku-tui: --print needs a message.", file=sys.stderr)
            return 1
        request = HeadlessRequest(
            text=text,
            model=args.model,
            session_id=args.session,
            new_session=args.new,
            auto_approve=args.yes,
            raw_output=args.raw,
        )
        return run_headless(request, settings)
    if args.demo:
        from koroku_tui.demo import run_demo

        freeze_heap()
        return run_demo(settings, model=args.model)
    return _run_app(settings, args)


def freeze_heap() -> None:
    """Collect once, then exempt every surviving object from later garbage collections.

    After the imports (Textual, the SDK, pydantic) the heap holds ~100,000
    tracked objects, and one full collection of them took ~80 ms here: when
    one fell during the first frame or a streamed answer, the screen stalled.
    What is alive now is mostly modules and classes that live until exit, so
    freezing it costs nothing. Called right before the app starts.
    """
    gc.collect()
    gc.freeze()


def _protect_credentials() -> None:
    """Put Koroku's credentials out of the reach of the commands it runs.

    Done first, while Koroku has one thread: the values are blanked in the
    environment block ``/proc/<pid>/environ`` shows, taken out of
    ``os.environ`` (the client gets the key explicitly), and the process is
    made non-dumpable (see ``koroku_tui.process_privacy``). The values are
    remembered for redaction.
    """
    from koroku_tui import live_secrets, process_privacy
    from koroku_tui.agent.wire.credentials import (
        WITHDRAWN_VARIABLES,
        secret_values,
        withdraw_credentials,
    )

    process_privacy.blank_initial_environment(WITHDRAWN_VARIABLES)
    withdraw_credentials()
    process_privacy.forbid_inspection()
    live_secrets.remember(secret_values())


def _run_app(settings: Settings, args: argparse.Namespace) -> int:
    """The full-screen app, after checking that the database opens."""
    from koroku_tui.store import StoreError, check_database, upgrade_pending

    try:
        # A file an upgrade must migrate is opened by the app instead, after a
        # first frame and under its progress line (it can take a while).
        if not upgrade_pending(settings.database_path):
            check_database(settings.database_path, session_id=args.session)
    except StoreError as exc:
        print(f"koroku-tui: {exc}", file=sys.stderr)
        return 1
    from koroku_tui.ui.app import KorokuApp

    app = KorokuApp(settings, model=args.model, session_id=args.session, new_session=args.new)
    freeze_heap()
    app.run()
    return app.return_code or 0

"""The ``koroku-tui`` flags: the parser ``cli`` reads, kept apart so the entry stays small."""

from __future__ import annotations

import argparse
from pathlib import Path

from koroku_tui import __version__

OUTPUT_FORMATS = ("text", "json", "stream-json")
"""``--output-format``: the answer as text (the default), or JSON (``modes/json_output.py``)."""

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
    # Imported here, as everything of Koroku's is in this module: ``main``
    # turns the garbage collector off before the imports (see there).
    from koroku_tui.config.settings import DEFAULT_MODEL

    parser = argparse.ArgumentParser(
        prog="koroku-tui",
        description="Koroku: a personal Gemini agent in your terminal that never forgets.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"koroku-tui {__version__}")
    parser.add_argument(
        "--home",
        type=folder_flag,
        metavar="DIR",
        help="Koroku home folder (database and memory files). "
        "Default: $KOROKU_HOME, else the platform's user data folder.",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--new", action="store_true", help="start a new conversation")
    which.add_argument(
        "--session", type=int, metavar="ID", help="continue conversation ID (default: latest)"
    )
    which.add_argument(
        "--list",
        action="store_true",
        help="list the conversations (id, messages, last activity, title), newest first, and exit",
    )
    parser.add_argument(
        "--fork",
        metavar="SESSION[:MESSAGE]",
        help="continue in a new copy of conversation SESSION (of what came before its "
        "user message MESSAGE, or all of it); with --print the new id goes to stderr",
    )
    parser.add_argument(
        "--rewind",
        metavar="MESSAGE",
        help="with --print: take the conversation (--session, default latest) back to "
        "before its user message MESSAGE, then send TEXT; nothing is deleted",
    )
    parser.add_argument(
        "--restore-files",
        action="store_true",
        help="with --print and --rewind or --fork SESSION:MESSAGE: also put back the files "
        "the taken-back turns wrote, as they were before; a file changed since by anything "
        "else is left as it is and named on stderr",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help=f"Gemini model, over a session's own choice (default: the session's, else the "
        f"config file's model, else {DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="your config file (default: $KOROKU_CONFIG, else config.toml in the platform's "
        "user config folder for koroku)",
    )
    parser.add_argument(
        "--show-config",
        action="store_true",
        help="print the settings in effect, each with where its value came from, and exit",
    )
    parser.add_argument(
        "--config-schema",
        action="store_true",
        help="print the JSON Schema of config.toml (for an editor) and exit",
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="print_text",
        metavar="TEXT",
        help="run one turn without the TUI, print the answer and exit ('-' reads stdin)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help=f"with --print: allow {tools_that_ask()} without asking",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with --print: say on stderr which instruction files the model is told and which "
        "MCP servers the turn used",
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="with --print, when stdout is not a terminal: write the answer exactly as the "
        "model sent it, escape sequences included (otherwise they are removed; stderr "
        "is always cleaned)",
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        metavar="FORMAT",
        help="with --print: text (the default: the answer), json (one JSON object at the end: "
        "session, answer, tool calls, usage, exit code) or stream-json (one JSON object a line "
        "as the turn happens, that object last); nothing else on stdout",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="try Koroku offline against a built-in scripted Gemini (no API key needed)",
    )
    add_serve_flags(parser)
    return parser


def output_format_problem(args: argparse.Namespace) -> str | None:
    """The sentence for an ``--output-format`` that cannot apply (exit 2), else ``None``."""
    if args.output_format is None:
        return None
    if args.print_text is None:
        return "--output-format applies only with --print TEXT (the app shows its answers itself)."
    if args.raw and args.output_format != "text":
        return (
            f"--raw applies only to the text output: --output-format {args.output_format} "
            "already gives the model's text exactly, as JSON strings."
        )
    return None


def add_serve_flags(parser: argparse.ArgumentParser) -> None:
    """``--serve`` and its flags (issue 28: ``koroku_tui.modes.web``)."""
    web = parser.add_argument_group("web mode")
    web.add_argument(
        "--serve",
        action="store_true",
        help="serve Koroku to a browser: prints the URL to open (with its token); each tab "
        "runs its own Koroku with --home, --model, --session and --config",
    )
    web.add_argument(
        "--port",
        type=port_flag,
        metavar="N",
        help="with --serve: the port (default: a free one, the same for each home)",
    )
    web.add_argument(
        "--host",
        metavar="ADDRESS",
        help="with --serve: the address to listen on (default 127.0.0.1); any other "
        "than loopback needs --public",
    )
    web.add_argument(
        "--public",
        action="store_true",
        help="with --serve --host: listen beyond this machine (anyone with the URL can run "
        "commands as you; prefer a tunnel or a TLS proxy)",
    )
    web.add_argument(
        "--new-token",
        action="store_true",
        help="with --serve: replace the home's web token (URLs given out before stop working)",
    )


def port_flag(text: str) -> int:
    """``--port N``: a TCP port a user may listen on."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (a number from 1 to 65535)")
    return port


def tools_that_ask() -> str:
    """The built-in tools that ask first, as --yes's help names them ("a and b")."""
    from koroku_tui.agent.tools.builtin import default_registry

    names = [spec.name for spec in default_registry() if spec.needs_approval]
    return " and ".join(filter(None, [", ".join(names[:-1]), *names[-1:]]))


def folder_flag(text: str) -> Path:
    # Path("") is ".": a script's --home "$UNSET" would make the current
    # folder Koroku's home (and make it private). Settings refuses an empty
    # KOROKU_HOME alike; here argparse says it, naming the flag.
    from koroku_tui.config.settings import EMPTY_HOME, home_problem

    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY_HOME)
    if problem := home_problem(Path(text)):  # too long, too deep, not UTF-8
        raise argparse.ArgumentTypeError(problem)
    return Path(text)

"""The ``koroku-tui`` command line: parse flags, build Settings, pick a mode."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from koroku_tui.config.loading import LoadedConfig
    from koroku_tui.config.settings import Settings
    from koroku_tui.store import SessionInfo


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``koroku_tui.modes.command_line``); tests and docs inspect it."""
    from koroku_tui.modes.command_line import build_parser as parser

    return parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``koroku-tui`` console script.

    The garbage collector is off until the app, the demo or the ``--print``
    request starts (``freeze_heap``): the imports before it make some 100,000
    objects that all live until exit. The 134 collections they triggered on
    the way to the app freed nothing and took ~85 ms here; without them the
    launch to the first frame took 0.90-0.94x as long (medians of 20
    alternating launches in a terminal).
    """
    gc.disable()
    # numpy's BLAS one thread (before numpy loads, after the first frame): the meaning
    # pass on two threads ran 4x slower than on one while other programs used the cores
    # (22 against 93 texts a second here), and one core stays the UI's.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        return _start(argv)
    except KeyboardInterrupt:  # ctrl+c while starting: one line, not a traceback
        print("koroku-tui: cancelled while starting.", file=sys.stderr)
        return 130
    finally:
        gc.enable()  # also when a bad flag or a broken database ends the start early


def _start(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if not args.serve:
        hide_aiohttp()
    # Each prints something else and exits: the turn would be dropped without a word,
    # and a script asking for --output-format json would read TOML.
    for flag, given, prints in (
        ("--config-schema", args.config_schema, "the schema"),
        ("--show-config", args.show_config, "the settings"),
    ):
        if given and args.print_text is not None:
            print(f"koroku-tui: {flag} only prints {prints}: leave out --print.", file=sys.stderr)
            return 2
    if args.config_schema:
        from koroku_tui.modes.config_output import print_schema

        return print_schema()
    if args.list and (others := _writing_flags(args)):
        print(f"koroku-tui: --list only lists: leave out {' and '.join(others)}.", file=sys.stderr)
        return 2
    from koroku_tui.modes.command_line import output_format_problem

    if problem := output_format_problem(args):
        print(f"koroku-tui: {problem}", file=sys.stderr)
        return 2
    if args.serve or args.port or args.host or args.public or args.new_token:
        from koroku_tui.modes.web import serve_problem

        if (problem := serve_problem(args)) is not None:
            print(f"koroku-tui: {problem}", file=sys.stderr)
            return 2
    if args.print_text is None:
        # The full-screen app asks before every tool call: --yes would be
        # silently ignored there, so the user learns it did nothing.
        given_flags = (("--yes", args.yes), ("--raw", args.raw), ("--verbose", args.verbose))
        flags = [flag for flag, given in given_flags if given]
        if flags:
            print(
                f"koroku-tui: {' and '.join(flags)} {'apply' if len(flags) > 1 else 'applies'} "
                "only with --print TEXT "
                "(the app always asks before a tool changes anything).",
                file=sys.stderr,
            )
            return 2
    _protect_credentials()
    from koroku_tui.privacy.file_modes import home_warning, tighten_home
    from koroku_tui.privacy.logs import configure_logging

    built = _settings(args)  # before anything is opened or made: a bad file exits 2
    if isinstance(built, int):
        return built
    settings, loaded = built
    from koroku_tui.modes.config_output import print_config, tell

    if args.show_config:
        return print_config(settings, loaded)
    configure_logging(settings.home)
    for line in loaded.said():
        logging.getLogger(__name__).warning("%s", line)
    tighten_home(settings.home)  # Koroku's own files in it are made private (and logged)
    if args.list:  # the app says the warnings in notices, and asks about an untrusted project
        tell(loaded.said())
    elif args.print_text is not None:  # joins the untrusted files to its line on the project's
        tell(loaded.warnings)
    if args.print_text is not None and (warning := home_warning(settings.home)):
        tell([warning])
    from koroku_tui.modes.branch_flags import branch_options

    try:
        fork_from, rewind_before = branch_options(args)
        read_only = _home_for(settings.home, loaded.named("home", "the default Koroku home"), args)
    except ValueError as exc:
        print(f"koroku-tui: {exc}", file=sys.stderr)
        return 1
    if args.list:
        from koroku_tui.modes.session_list import run_list

        return run_list(settings.database_path, sys.stdout, launch_command(), read_only)
    if args.print_text is not None:
        from koroku_tui.modes.headless import HeadlessRequest, run_headless
        from koroku_tui.modes.message_input import read_message

        stdin = sys.stdin.buffer if sys.stdin is not None else None
        text = read_message(args.print_text, stdin, sys.stderr)
        if not text.strip():
            print("koroku-tui: --print needs a message.", file=sys.stderr)
            return 1
        request = HeadlessRequest(
            text=text,
            session_id=args.session,
            new_session=args.new,
            auto_approve=args.yes,
            raw_output=args.raw,
            verbose=args.verbose,
            fork_from=fork_from,
            rewind_before=rewind_before,
            restore_files=args.restore_files,
            command=launch_command(),
            untrusted_config={file.path: file.what_applies() for file in loaded.untrusted},
            model_pinned=args.model is not None,
            output_format=args.output_format or "text",
        )
        freeze_heap()
        return run_headless(request, settings)
    if args.demo:
        from koroku_tui.modes.demo import run_demo

        freeze_heap()
        return run_demo(settings)
    if args.serve:
        from koroku_tui.modes.web import ServeRequest, run_web

        return run_web(ServeRequest.from_args(args, settings.home, settings.web_max_sessions))
    return _run_app(settings, args, fork_from, read_only, tuple(loaded.warnings))


def hide_aiohttp() -> None:
    """Keep the Gemini SDK from importing aiohttp, which only ``--serve`` uses.

    google-genai imports aiohttp whenever it is installed (textual-serve
    brings it) for a transport Koroku never uses (``agent/wire/client.py``
    pins httpx2): ~200 ms more on every ``--print`` (1,744 against 1,518 ms,
    medians of 7 alternating runs here) and on the app's agent load.
    """
    sys.modules.setdefault("aiohttp", None)  # type: ignore[arg-type]


def _settings(args: argparse.Namespace) -> tuple[Settings, LoadedConfig] | int:
    """The one ``Settings`` of the run, from its sources, or the exit code once the reason
    is said (2 for a config file or a flag, 1 for a ``KOROKU_*`` variable)."""
    from pydantic import ValidationError

    from koroku_tui.config.loading import ConfigError, load_config
    from koroku_tui.config.settings import Settings
    from koroku_tui.modes.config_output import tell
    from koroku_tui.privacy.user_files import read_text_file

    flags = {"home": args.home, "model": args.model, "config": args.config}
    given = {name: (f"--{name}", value) for name, value in flags.items() if value is not None}
    try:
        loaded = load_config(workspace=Path.cwd(), read=read_text_file, flags=given)
    except ConfigError as exc:
        tell([str(exc)])
        return 2
    try:
        return Settings(**loaded.given), loaded
    except ValidationError as exc:
        sentence, code = loaded.problem(exc)
        tell([sentence])
        return code


def launch_command(environ: Mapping[str, str] | None = None) -> str:
    """How the user starts Koroku, as advice names it.

    The README's set-up runs Koroku with ``uv run koroku-tui``, which leaves
    ``koroku-tui`` off the shell's PATH: advice saying "try ``koroku-tui
    --demo``" sent the user to "command not found". uv sets ``UV`` (the path
    of its binary) for every process it starts.
    """
    from koroku_tui.config.settings import COMMAND

    environ = os.environ if environ is None else environ
    return f"uv run {COMMAND}" if environ.get("UV") else COMMAND


def _writing_flags(args: argparse.Namespace) -> list[str]:
    """The flags given that write to the home: not with --list, nor in a read-only home."""
    flags = [("--print", args.print_text is not None), ("--demo", args.demo)]
    flags += [("--new", args.new), ("--fork", args.fork is not None), ("--serve", args.serve)]
    return [flag for flag, given in [*flags, ("--rewind", args.rewind is not None)] if given]


def _home_for(home: Path, named: str, args: argparse.Namespace) -> bool:
    """Whether ``home`` is read-only (the app then browses it); ``ValueError`` when unusable.

    Said once, naming where the home came from (``named``: "--home",
    "KOROKU_HOME", "home in FILE:LINE"): a file as the home, or a read-only
    one for a flag that would write into it.
    """
    from koroku_tui.config.home_check import not_a_folder, read_only_home

    if (problem := not_a_folder(home)) is not None:
        raise ValueError(f"{named} {problem}; give the path of a folder.")
    read_only = read_only_home(home)
    if read_only and (flags := _writing_flags(args)):
        raise ValueError(
            f"{named} {home} is read-only, so {flags[0]} cannot save anything there; make the "
            "folder writable or choose another home (--home)."
        )
    return read_only


def freeze_heap() -> None:
    """Exempt every object alive now from later garbage collections, and collect again.

    After the imports (Textual, pydantic) the heap holds ~60,000 tracked
    objects, and one full collection of them took ~50 ms here: when one fell
    during the first frame or a streamed answer, the screen stalled. What is
    alive now is modules and classes that live until exit, so freezing it
    costs nothing. No collection first: it found no garbage at this point
    (0 objects, measured on the command's path) yet cost ~40 ms before the
    first frame. Called right before the app starts; ``main`` turned
    collection off until then.
    """
    gc.freeze()
    gc.enable()


def _protect_credentials() -> None:
    """Put Koroku's credentials out of the reach of the commands it runs.

    Done first, while Koroku has one thread: the values are blanked in the
    environment block ``/proc/<pid>/environ`` shows, taken out of
    ``os.environ`` (the client gets the key explicitly), and the process is
    made non-dumpable (see ``koroku_tui.privacy.process_privacy``). The values are
    remembered for redaction.
    """
    from koroku_tui.agent.wire.credentials import (
        WITHDRAWN_VARIABLES,
        secret_values,
        withdraw_credentials,
    )
    from koroku_tui.privacy import live_secrets, process_privacy

    process_privacy.blank_initial_environment(WITHDRAWN_VARIABLES)
    withdraw_credentials()
    process_privacy.forbid_inspection()
    live_secrets.remember(secret_values())


def _run_app(
    settings: Settings,
    args: argparse.Namespace,
    fork_from: tuple[int, int | None] | None,
    read_only: bool,
    notices: tuple[str, ...],
) -> int:
    """The full-screen app (on a new fork with ``--fork``), once the database opens.

    ``read_only``: the home cannot be written; the app opens it for browsing.
    ``notices``: the config's warnings, which the app shows.
    """
    from koroku_tui.modes.wiring import assemble
    from koroku_tui.store import StoreError, check_database, said_for, upgrade_pending

    command = launch_command()
    # Light: the agent's half comes later.
    parts = assemble(
        settings,
        command=command,
        read_only=read_only,
        notices=notices,
        model_pinned=args.model is not None,
    )
    session_id, app_fork = args.session, None
    if fork_from is not None:
        fork = _fork_for_app(parts.database_path, fork_from, command)
        if fork is None:
            return 1
        session_id = fork.id
        if not fork.message_count:  # nothing to copy: no row until the app stores a message
            session_id, app_fork = fork_from[0], fork_from
    try:
        # A file an upgrade must migrate is opened by the app instead, after a
        # first frame and under its progress line (it can take a while).
        # A read-only home's file is never migrated: one that needs it is refused here.
        if read_only or not upgrade_pending(parts.database_path):
            check_database(parts.database_path, session_id=session_id, read_only=read_only)
    except StoreError as exc:
        print(f"koroku-tui: {said_for(exc, command)}", file=sys.stderr)
        return 1
    from koroku_tui.ui.agent_loading import agent_still_importing
    from koroku_tui.ui.app import KorokuApp

    app = KorokuApp(parts, session_id=session_id, new_session=args.new, fork_from=app_fork)
    freeze_heap()
    app.run()
    code = app.return_code or 0
    if agent_still_importing():
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """Exit without waiting for the agent's imports, still running in their thread.

    The interpreter joins that thread before it exits: a quit in the first
    second waited ~1.5 s on a loaded machine, and forever on a stalled
    import. A thread cannot be stopped, and one cut off at exit inside
    pydantic-core aborts the process, so the process ends here instead. The
    app has closed the store and given the terminal back; the log and the
    output streams are flushed first.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _fork_for_app(
    database: Path, fork_from: tuple[int, int | None], command: str
) -> SessionInfo | None:
    """``--fork``: the new copy, or ``None`` once the reason is printed.

    Only ``--fork`` imports ``koroku_tui.modes.headless`` here: it brings the agent
    and the Gemini SDK, which a plain launch loads after its first frame.
    """
    import asyncio

    from koroku_tui.modes.headless import BadRequest, open_fork
    from koroku_tui.store import StoreError, said_for

    try:
        return asyncio.run(open_fork(database, *fork_from))
    except (StoreError, BadRequest) as exc:
        said = said_for(exc, command) if isinstance(exc, StoreError) else str(exc)
        print(f"koroku-tui: {said}", file=sys.stderr)
        return None

"""``--fork`` and ``--rewind``: the flags that branch a conversation, checked before opening."""

from __future__ import annotations

import argparse

__all__ = ["branch_options"]


def _whole_number(text: str) -> int | None:
    text = text.strip()
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 2**63:
        return None
    return int(text)


def branch_options(
    args: argparse.Namespace,
) -> tuple[tuple[int, int | None] | None, int | None]:
    """``--fork`` and ``--rewind`` as ids; a ``ValueError`` (one sentence) when they do not fit."""
    if args.fork is not None and args.rewind is not None:
        raise ValueError(
            "--rewind and --fork cannot be combined: to branch off before a message, "
            "use --fork SESSION:MESSAGE."
        )
    fork_from: tuple[int, int | None] | None = None
    if args.fork is not None:
        if args.new or args.session is not None:
            raise ValueError("--fork starts its own conversation: leave out --new and --session.")
        session, colon, message = args.fork.partition(":")
        source = _whole_number(session)
        before = _whole_number(message) if colon else None
        if source is None or (colon and before is None):
            raise ValueError(
                f"--fork takes SESSION or SESSION:MESSAGE (whole numbers), not {args.fork!r}."
            )
        fork_from = (source, before)
    rewind_before: int | None = None
    if args.rewind is not None:
        if args.print_text is None:
            raise ValueError(
                "--rewind needs --print TEXT (in the app, press Escape twice to rewind)."
            )
        if args.new:
            raise ValueError("--rewind takes back an existing conversation: leave out --new.")
        rewind_before = _whole_number(args.rewind)
        if rewind_before is None:
            raise ValueError(f"--rewind takes a message id (a whole number), not {args.rewind!r}.")
    if getattr(args, "restore_files", False):
        if args.print_text is None:
            raise ValueError(
                "--restore-files needs --print TEXT (in the app, the rewind and fork "
                "dialogs ask whether to put the files back)."
            )
        if rewind_before is None and (fork_from is None or fork_from[1] is None):
            raise ValueError(
                "--restore-files goes with --rewind MESSAGE or --fork SESSION:MESSAGE: "
                "it puts back the files the turns from that message on wrote."
            )
    return fork_from, rewind_before

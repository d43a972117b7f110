"""The main screen's side of instruction files and trusted folders.

- :func:`watch_instruction_files`: each time the agent reads the files (when
  it starts, and at a turn after one changed) the transcript gets one line
  saying which ("Instructions: ~/proj/AGENTS.md, 2.1 KB"); none when none.
- :func:`ask_about_trust`: after the first frame, in an untrusted folder with
  project files that the user did not answer "never" for, the trust prompt
  (``ui.main.trust_prompt``, imported only then); :func:`apply_trust_answer`
  keeps the answer in the user's ``config.toml`` and, for "trust", lets the
  project's instructions count from the next turn.
- :func:`show_instructions`: the palette's view of what the model is told.

The modal screens are imported when first shown, off the first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from koroku_tui.agent.context.instruction_files import InstructionFiles, LoadedInstructions
from koroku_tui.config.files import repository_root, shown_path
from koroku_tui.config.trust import is_trusted
from koroku_tui.ui.main import messages as m

if TYPE_CHECKING:
    from koroku_tui.privacy.trust_answers import FolderList
    from koroku_tui.ui.app import KorokuApp
    from koroku_tui.ui.main.trust_prompt import TrustAnswer

__all__ = [
    "apply_trust_answer",
    "ask_about_trust",
    "instructions_notice",
    "show_instructions",
    "trust_question",
    "watch_instruction_files",
]


def instructions_notice(loaded: LoadedInstructions, *, first: bool) -> str | None:
    """The transcript's line about a reading of the files; ``None`` when there is nothing to say."""
    summary = loaded.summary()
    if first:
        return summary or None
    return "Instruction files changed. " + (summary or "No instruction file is used now.")


def watch_instruction_files(files: InstructionFiles, post: Callable[[Message], object]) -> None:
    """Post an :class:`InstructionsNotice` line for each reading of ``files``."""
    first = True

    def heard(loaded: LoadedInstructions) -> None:
        nonlocal first
        text = instructions_notice(loaded, first=first)
        first = False
        if text:
            post(m.InstructionsNotice(text))

    files.listen(heard)


def trust_question(files: InstructionFiles, ignored_folders: list[Path]) -> list[Path]:
    """The project files to ask about: ``[]`` when trusted, answered "never", or there are none."""
    if files.trusted or is_trusted(files.workspace, ignored_folders):
        return []
    return files.project_files()


def ask_about_trust(app: KorokuApp) -> None:
    """Open the trust prompt if this folder calls for it (a few ``stat`` calls when not)."""
    parts = app.parts
    files = parts.instruction_files
    found = trust_question(files, parts.settings.ignored_folders)
    if not found:
        return
    from koroku_tui.ui.main.trust_prompt import FilePreview, TrustScreen

    root = files.project_root
    prompt = TrustScreen(
        root,
        [FilePreview.of(path, files.link_root) for path in found],
        config_file=parts.config_file,
        home=files.home,
        in_repository=repository_root(files.workspace) == root,
        grace=parts.approval_grace,
    )
    app.push_screen(prompt, partial(apply_trust_answer, app, root))


def apply_trust_answer(app: KorokuApp, folder: Path, answer: TrustAnswer | None) -> None:
    """Keep the answer in the user's config file, say what it does, and apply "trust" now."""
    # Imported on an answer only: tomlkit takes ~25 ms, which no start should wait for.
    from koroku_tui.privacy.trust_answers import TrustFileError, remember_folder

    parts = app.parts
    files = parts.instruction_files
    shown = shown_path(folder, files.home)
    if answer in (None, "not_now"):
        app.notify(f"The project files in {shown} are not used; Koroku asks again next start.")
        return
    key: FolderList = "trusted_folders" if answer == "trust" else "ignored_folders"
    try:
        remember_folder(parts.config_file, key, folder)
    except TrustFileError as exc:
        app.notify(f"{exc} The project files are not used.", severity="error", timeout=20)
        return
    if answer == "trust":
        from koroku_tui.ui.main.trust_prompt import takes_effect  # loaded: it asked

        parts.settings.trusted_folders.append(folder)
        files.trust()
        app.notify(f"Trusted {shown}: {takes_effect(files.project_files())}.")
    else:
        parts.settings.ignored_folders.append(folder)
        app.notify(
            f"Koroku will not ask about {shown} again; its project files stay unused "
            f"(ignored_folders in {shown_path(parts.config_file, files.home)})."
        )


def show_instructions(app: KorokuApp) -> None:
    """The files as they are now, read again if one changed, in their view."""
    from koroku_tui.ui.main.instructions_view import InstructionsView

    files = app.parts.instruction_files
    app.push_screen(InstructionsView(files, files.refresh()))

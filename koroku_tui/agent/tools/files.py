"""File tools: read a file, list a folder, write a file, all inside the workspace."""

from __future__ import annotations

from koroku_tui.agent.tools.context import ToolContext
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import display_path, resolve_in_workspace

__all__ = ["MAX_LIST_ENTRIES", "MAX_READ_BYTES", "list_directory", "read_file", "write_file"]

MAX_READ_BYTES = 1_000_000
"""Larger files are refused: the model could only see the first 20,000 characters."""
MAX_LIST_ENTRIES = 1_000
_BINARY_SNIFF_BYTES = 8_192


def read_file(path: str, context: ToolContext) -> str:
    """Read a text file from the workspace and return its contents.

    Args:
        path: The file's path, relative to the workspace folder.
    """
    target = resolve_in_workspace(context.workspace, path)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder, not a file; use list_directory to see inside it.")
    if not target.exists():
        raise ToolError(f"There is no file {path!r} in the workspace.")
    if not target.is_file():
        # A FIFO or device would block the reading thread forever.
        raise ToolError(f"{path!r} is not a regular file (a pipe, socket or device).")
    size = target.stat().st_size
    if size > MAX_READ_BYTES:
        raise ToolError(
            f"{path!r} is {size:,} bytes; read_file reads files up to {MAX_READ_BYTES:,} bytes. "
            "Use run_command with head, tail or grep to read part of it."
        )
    data = target.read_bytes()
    # A NUL byte near the start is the usual sign of a binary file; UTF-8 and
    # other text encodings in practice never contain one.
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise ToolError(
            f"{path!r} looks like a binary file ({size:,} bytes); read_file only reads text."
        )
    return data.decode("utf-8", errors="replace")


def list_directory(context: ToolContext, path: str = ".") -> str:
    """List a folder in the workspace: one name per line, folders end with "/".

    Args:
        path: The folder's path, relative to the workspace folder. Defaults to the workspace itself.
    """
    target = resolve_in_workspace(context.workspace, path)
    if not target.exists():
        raise ToolError(f"There is no folder {path!r} in the workspace.")
    if not target.is_dir():
        raise ToolError(f"{path!r} is a file, not a folder; use read_file to read it.")
    names = sorted(
        (entry.name + "/" if entry.is_dir() else entry.name) for entry in target.iterdir()
    )
    if not names:
        return f"{display_path(context.workspace, target)} is empty."
    shown = names[:MAX_LIST_ENTRIES]
    if len(names) > MAX_LIST_ENTRIES:
        shown.append(f"[... {len(names) - MAX_LIST_ENTRIES:,} more entries not shown]")
    return "\n".join(shown)


def write_file(path: str, content: str, context: ToolContext) -> str:
    """Write text to a file in the workspace, creating it (and its folders) or replacing it.

    Args:
        path: The file's path, relative to the workspace folder.
        content: The complete new contents of the file.
    """
    target = resolve_in_workspace(context.workspace, path)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder; give a file path to write to.")
    existed = target.exists()
    if existed and not target.is_file():
        raise ToolError(f"{path!r} is not a regular file (a pipe, socket or device).")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    verb = "Replaced" if existed else "Created"
    return f"{verb} {display_path(context.workspace, target)} ({len(content):,} characters)."

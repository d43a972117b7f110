"""Whether a folder is trusted: its project files may steer Koroku only then."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["is_trusted"]


def is_trusted(folder: Path, trusted_folders: Iterable[Path]) -> bool:
    """True when ``folder`` is one of ``trusted_folders`` or inside one (a parent covers it).

    Both sides are compared as real absolute paths, so a link into a trusted
    folder is as trusted as the folder, and ``..`` cannot climb into trust.
    """
    here = Path(os.path.realpath(folder))
    for trusted in trusted_folders:
        root = Path(os.path.realpath(trusted.expanduser()))
        if here == root or root in here.parents:
            return True
    return False

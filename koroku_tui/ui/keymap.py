"""User key remapping: ``<home>/keymap.toml`` maps binding ids to keys.

Example (the binding ids are listed in the README)::

    "main.compact" = "ctrl+k"
    "main.history" = "f2,ctrl+r"

Unknown ids are ignored by Textual; a file that cannot be read or parsed is
reported and the default keys stay, so a typo never locks the user out.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KEYMAP_FILENAME = "keymap.toml"


@dataclass(frozen=True)
class Keymap:
    """The remapped keys, and a sentence for the user when the file was unusable."""

    keys: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


def load_keymap(path: Path) -> Keymap:
    """Read ``path``; a missing file means no remapping."""
    if not path.exists():
        return Keymap()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Keymap(problem=f"{path} was not used: {exc}. The default keys apply.")
    keys = {str(k): v for k, v in data.items() if isinstance(v, str) and v.strip()}
    ignored = sorted(str(k) for k, v in data.items() if not (isinstance(v, str) and v.strip()))
    problem = None
    if ignored:
        problem = f"{path}: ignored {', '.join(ignored)} (each value must be keys as text)."
    return Keymap(keys=keys, problem=problem)

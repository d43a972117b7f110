"""The names Gemini sees for a server's tools: ``<server>__<tool>``, cleaned and unique.

Gemini takes a function name of 1 to 64 characters, letters, digits, ``_``,
``.``, ``:`` and ``-``, starting with a letter or ``_`` (the API reference's
``FunctionDeclaration.name``; ``ToolRegistry`` checks the same rule). A
server's and a tool's names are whatever the server and the config say, so
every other character becomes ``_``, and a name that would start with a digit
(or a ``.``, ``:``, ``-``) gets a ``_`` in front.

A name that is still too long, or that another tool already has (two tools
of a server whose names differ only in characters Gemini does not take,
``get time`` and ``get_time``), is cut and given a short suffix made from
the server's and the tool's own names: the same tool gets the same name in
every run, which the approval rules (``time__get_current_time = "allow"``)
and the stored calls of past sessions count on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

__all__ = ["MAX_NAME", "SEPARATOR", "tool_name"]

MAX_NAME = 64
"""Gemini's longest function name."""
SEPARATOR = "__"
"""Between the server's name and the tool's: ``time__get_current_time``."""
_SUFFIX = 8
"""Hex digits of the suffix that tells apart names cut or cleaned alike."""
_NOT_TAKEN = re.compile(r"[^A-Za-z0-9_.:-]")


def _cleaned(name: str) -> str:
    name = _NOT_TAKEN.sub("_", name)
    return name if name[:1].isalpha() or name[:1] == "_" else "_" + name


def _suffix(server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode(errors="surrogatepass")).hexdigest()
    return digest[:_SUFFIX]


def tool_name(server: str, tool: str, taken: Collection[str] = ()) -> str | None:
    """The name Gemini sees for ``tool`` of ``server``, not one of ``taken``.

    ``None`` when even the suffixed name is taken: the server listed the same
    tool twice, and only its first entry is offered.
    """
    plain = _cleaned(f"{server}{SEPARATOR}{tool}")
    if len(plain) <= MAX_NAME and plain not in taken:
        return plain
    suffixed = f"{plain[: MAX_NAME - _SUFFIX - 1]}_{_suffix(server, tool)}"
    return suffixed if suffixed not in taken else None

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

Two servers whose names clean alike (``my docs`` and ``my_docs``, ``日記`` and
``予定``), or where one's name and ``__`` begin the other's (``a`` and
``a__b``), could give two tools one name, and which got it plain would be
whichever server started first: the rule written for one would allow the
other's tool in the next run. Their tools always get the suffix
(:func:`overlapping`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

__all__ = ["MAX_NAME", "SEPARATOR", "overlapping", "tool_name"]

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


def _prefix(server: str) -> str:
    """What the names of ``server``'s tools begin with, before the separator."""
    return _cleaned(f"{server}{SEPARATOR}")[: -len(SEPARATOR)]


def overlapping(servers: Collection[str]) -> frozenset[str]:
    """The servers of ``servers`` whose tools could be named like another's (see the module
    docstring): what their names begin with is the same, or one's is the other's and ``_``
    or ``__`` more."""
    prefixes = {server: _prefix(server) for server in servers}
    found: set[str] = set()
    for server, mine in prefixes.items():
        for other, theirs in prefixes.items():
            alike = theirs in (mine, f"{mine}_") or theirs.startswith(f"{mine}{SEPARATOR}")
            if other != server and alike:
                found |= {server, other}
    return frozenset(found)


def tool_name(
    server: str, tool: str, taken: Collection[str] = (), *, suffixed: bool = False
) -> str | None:
    """The name Gemini sees for ``tool`` of ``server``, not one of ``taken``; ``suffixed``:
    with the suffix even when the plain name is free (an :func:`overlapping` server).

    ``None`` when even the suffixed name is taken: the server listed the same
    tool twice, and only its first entry is offered.
    """
    plain = _cleaned(f"{server}{SEPARATOR}{tool}")
    if len(plain) <= MAX_NAME and plain not in taken and not suffixed:
        return plain
    marked = f"{plain[: MAX_NAME - _SUFFIX - 1]}_{_suffix(server, tool)}"
    return marked if marked not in taken else None

"""Who may reach the web page: the home's token, the address it listens on, its port.

The token is a long random secret made once per home and kept in
``<home>/web-token`` (0600, written whole by ``privacy.home_files``), so a
bookmarked URL keeps working across restarts; ``--new-token`` replaces it and
every URL given out before stops working. The port is fixed per home in the
same spirit: derived from the home's path, the next free one if taken.
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import secrets
import socket
import stat
from pathlib import Path
from typing import NamedTuple

from koroku_tui.privacy import live_secrets
from koroku_tui.privacy.home_files import read_home_file, write_home_file

__all__ = [
    "TOKEN_FILENAME",
    "PortInUse",
    "WebToken",
    "default_port",
    "is_loopback",
    "web_token",
]

TOKEN_FILENAME = "web-token"
_TOKEN_BYTES = 32
"""256 random bits, written as 43 URL-safe characters."""
_PORT_BASE = 20_000
_PORT_SPAN = 30_000
"""Default ports fall in 20000-49999: above the well-known services, below the
range Linux hands out for outgoing connections (32768-60999 overlaps; a port
taken by one is skipped like any other)."""
_PORT_TRIES = 64


class PortInUse(OSError):
    """The port asked for (``--port``) is taken; ``str()`` is one sentence."""


class WebToken(NamedTuple):
    """The home's token, and the sentence that says why it is new, when it had to be."""

    value: str
    renewed_because: str | None = None


def web_token(home: Path, *, renew: bool = False) -> WebToken:
    """The home's token, made (or with ``renew`` replaced) when there is none usable.

    A stored token that other users could read (its file not 0600) may have
    leaked: it is replaced, and ``renewed_because`` says so. The value is
    remembered as a secret, so ``koroku.log`` shows ``[redacted]`` wherever a
    line would quote it.
    """
    stored, why = (None, None) if renew else _stored_token(home)
    token = stored or secrets.token_urlsafe(_TOKEN_BYTES)
    if stored is None:
        write_home_file(home, TOKEN_FILENAME, f"{token}\n".encode())
    live_secrets.remember([token])
    return WebToken(token, why)


def _stored_token(home: Path) -> tuple[str | None, str | None]:
    """The stored token if it is usable, else None and why not (None: none is stored)."""
    try:
        text = read_home_file(home, TOKEN_FILENAME, limit=1_000).text.strip()
    except FileNotFoundError:
        return None, None
    if stat.S_IMODE((home / TOKEN_FILENAME).stat(follow_symlinks=False).st_mode) & 0o077:
        return None, (
            f"{TOKEN_FILENAME} in the Koroku home could be read by other users: "
            "a new token replaces it, and links given out before stop working."
        )
    # Too short or not URL-safe (edited by hand, cut off): made again rather than trusted.
    usable = len(text) >= 32 and all(c.isalnum() or c in "-_" for c in text)
    return (text, None) if usable else (None, None)


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_port(home: Path, host: str) -> int:
    """The home's own port on ``host``: the same on every start while it is free."""
    digest = hashlib.sha256(str(home.resolve()).encode()).digest()
    first = _PORT_BASE + int.from_bytes(digest[:4], "big") % _PORT_SPAN
    for offset in range(_PORT_TRIES):
        port = _PORT_BASE + (first - _PORT_BASE + offset) % _PORT_SPAN
        if port_is_free(host, port):
            return port
    raise PortInUse(f"no free port near {first} on {host}; choose one with --port N.")


def port_is_free(host: str, port: int) -> bool:
    """True when a server could listen on ``host:port`` now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True

"""``koroku-tui --serve``: Koroku in a browser tab, private by default.

The one package that may import ``textual_serve`` (for its terminal page's
files) and aiohttp's server. The server listens on loopback unless
``--host`` and ``--public`` say otherwise; every request needs the home's
token; each tab runs its own Koroku process (``app_process.py``) with the
app's flags that apply (``--home``, ``--model``, ``--session``,
``--config``), and closing the tab ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import logging
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ServeRequest", "run_web", "serve_problem"]

logger = logging.getLogger(__name__)

_APP_ONLY = {"--print": "print_text", "--list": "list", "--demo": "demo", "--new": "new"}
_APP_ONLY |= {"--fork": "fork", "--rewind": "rewind"}
"""Flags of other modes, and of the app's that a tab cannot take (flag -> its dest)."""


@dataclass(frozen=True)
class ServeRequest:
    """What ``--serve`` was asked for."""

    home: Path
    host: str = "127.0.0.1"
    port: int | None = None
    public: bool = False
    new_token: bool = False
    max_sessions: int = 3
    """Tabs running an app at once (``[web] max_sessions``)."""
    app_flags: tuple[str, ...] = ()
    """The flags each tab's app is started with (``--model NAME``...)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace, home: Path, max_sessions: int) -> ServeRequest:
        """The request from the parsed flags (``home``: the run's, wherever it came from)."""
        flags: list[str] = ["--home", str(home)]
        for flag, value in (("--model", args.model), ("--session", args.session)):
            if value is not None:
                flags += [flag, str(value)]
        if args.config is not None:
            flags += ["--config", str(args.config.absolute())]
        return cls(
            home=home,
            # ``[::1]``, as the URL writes it, is the address ``::1``.
            host=(args.host or "127.0.0.1").removeprefix("[").removesuffix("]"),
            port=args.port,
            public=args.public,
            new_token=args.new_token,
            max_sessions=max_sessions,
            app_flags=tuple(flags),
        )


def serve_problem(args: argparse.Namespace) -> str | None:
    """One sentence when the web flags do not fit together, or None."""
    if not args.serve:
        named = (("--port", args.port), ("--host", args.host), ("--public", args.public))
        given = [flag for flag, value in (*named, ("--new-token", args.new_token)) if value]
        return f"{given[0]} applies only with --serve." if given else None
    if others := [
        flag for flag, name in _APP_ONLY.items() if getattr(args, name, None) not in (None, False)
    ]:
        return f"--serve runs the app in browser tabs: leave out {' and '.join(others)}."
    host = args.host or "127.0.0.1"
    from koroku_tui.modes.web.access import is_loopback

    if not is_loopback(host) and not args.public:
        return (
            f"--host {host} lets other machines reach Koroku, which runs commands as you: "
            "add --public to mean it, or leave --host out to serve on this machine only."
        )
    return None


def run_web(request: ServeRequest) -> int:
    """Serve until ctrl+c (or SIGTERM); 1 when the server cannot start."""
    from koroku_tui.modes.web.access import PortInUse, default_port, port_is_free, web_token
    from koroku_tui.privacy.home_files import HomeFileError

    try:
        token, renewed_because = web_token(request.home, renew=request.new_token)
        port = request.port or default_port(request.home, request.host)
        if request.port is not None and not port_is_free(request.host, port):
            raise PortInUse(f"port {port} on {request.host} is in use; choose another with --port.")
    except (PortInUse, HomeFileError) as exc:
        print(f"koroku-tui: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"koroku-tui: cannot serve on {request.host}: {exc.strerror or exc}.", file=sys.stderr
        )
        return 1
    if renewed_because is not None:
        print(f"koroku-tui: {renewed_because}", file=sys.stderr)
    if request.public:
        print(
            f"koroku-tui: warning: serving on {request.host}: anyone who has this URL can run "
            f"commands as {getpass.getuser()} on this machine. Prefer a tunnel (ssh -L {port}:"
            f"127.0.0.1:{port}) or a TLS proxy in front of it.",
            file=sys.stderr,
        )
    try:
        asyncio.run(_serve(request, token, port))
    except OSError as exc:  # taken between the check and the bind
        print(
            f"koroku-tui: cannot serve on {request.host} port {port}: {exc.strerror or exc}.",
            file=sys.stderr,
        )
        return 1
    return 0


def _shown_host(host: str) -> str:
    """The host to put in the printed URL: a wildcard address is opened as loopback."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


async def _serve(request: ServeRequest, token: str, port: int) -> None:
    from aiohttp import web

    from koroku_tui.agent.wire.credentials import credential_environment
    from koroku_tui.modes.web.server import ServedApp, make_application

    served = ServedApp(
        argv=[sys.executable, "-m", "koroku_tui", *request.app_flags],
        # The apps need the key the command line withdrew from this process's environment.
        environment=credential_environment(),
        token=token,
        port=port,
        max_sessions=request.max_sessions,
        public=request.public,
    )
    runner = web.AppRunner(make_application(served), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, request.host, port)
    await site.start()
    logger.info("web: serving on %s:%d", request.host, port)
    print(f"http://{_shown_host(request.host)}:{port}/?token={token}", flush=True)
    print("koroku-tui: open that URL in a browser; ctrl+c stops the server.", file=sys.stderr)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        logger.info("web: stopping; %d app processes to end", len(served.running))
        with contextlib.suppress(Exception):
            await runner.cleanup()  # ends every tab's app (on_shutdown)

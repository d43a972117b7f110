"""A streamable-HTTP MCP server on 127.0.0.1, built with the official SDK's ``MCPServer``.

Usage: python http_server.py [--port PORT] [--delay-start SECONDS]

It listens on ``--port`` (0, the default: a free port), prints that port
alone on stdout's first line once the socket accepts connections, and serves
MCP at ``http://127.0.0.1:<port>/mcp``. ``--delay-start`` waits that long
after printing before answering anything: connections queue meanwhile, as
with a server that is slow to start.

Tools: ``echo`` (text back) and ``seen_headers``, which answers the
``Authorization`` and ``X-*`` headers of the HTTP request that carried the
call (names in lower case), as structured content and as JSON text, so a
client test can check its bearer token and ``http_headers`` arrived.
"""

from __future__ import annotations

import argparse
import socket
import time

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

HOST = "127.0.0.1"
PATH = "/mcp"


def echo(text: str) -> str:
    """Say the text back."""
    return text


def seen_headers(ctx: Context) -> dict[str, str]:
    """The Authorization and X-* headers this call's HTTP request carried."""
    headers = ctx.headers or {}
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() == "authorization" or name.lower().startswith("x-")
    }


def build() -> MCPServer:
    """The server and its two tools."""
    server: MCPServer = MCPServer("http-test-server", log_level="WARNING")
    server.add_tool(echo, structured_output=False)
    server.add_tool(seen_headers, structured_output=True)
    return server


def listening_socket(port: int) -> socket.socket:
    """A socket bound and listening on HOST:port (0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


def main() -> None:
    """Bind, say the port, (wait,) serve until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-start", type=float, default=0.0, metavar="SECONDS")
    options = parser.parse_args()
    app = build().streamable_http_app(streamable_http_path=PATH, host=HOST)
    sock = listening_socket(options.port)
    print(sock.getsockname()[1], flush=True)
    if options.delay_start > 0:
        time.sleep(options.delay_start)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

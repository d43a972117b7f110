"""A remote server's bearer token, from the config file to the wire, and nowhere else.

The installed ``koroku-tui --print`` reads a real config file naming the
server's ``bearer_token_env_var``; the server is ``http_server.py`` (SDK-built,
streamable HTTP), whose ``seen_headers`` tool answers the headers it got.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.mcp_kit import finish, listed_server, print_with_servers
from helpers.mcp_servers import mcp_http_url  # noqa: F401 (a fixture)
from test_mcp_agent import declarations, responses

from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.privacy.logs import LOG_FILENAME

pytestmark = pytest.mark.timeout(60)

TOKEN = "bearer-secret-for-docs-7c1e"
"""Long enough to be redacted (``live_secrets.MIN_SECRET_LENGTH``)."""


def docs(url: str) -> McpServerSettings:
    """The remote server, its token in the variable ``DOCS_BEARER`` (a name that does not
    look like a secret's: only its value tells)."""
    return McpServerSettings(url=url, bearer_token_env_var="DOCS_BEARER")


def test_an_entry_whose_token_is_not_set_is_failed_and_never_started(
    fake: FakeGemini,
    tmp_path: Path,
    mcp_http_url: str,  # noqa: F811
) -> None:
    fake.add(text_reply("Hi."))
    code, out, err = finish(
        print_with_servers(fake, tmp_path, {"docs": docs(mcp_http_url)}, "--print", "hi")
    )
    assert (code, out) == (0, "Hi.\n"), err
    assert err == (
        "koroku-tui: Went on without the MCP server docs: [mcp_servers.docs] takes its token "
        "from the variable DOCS_BEARER (`bearer_token_env_var`), which is not set.\n"
    )
    assert not [name for name in declarations(fake) if name.startswith("docs__")]


def test_the_token_reaches_its_server_and_no_one_else(
    fake: FakeGemini,
    tmp_path: Path,
    mcp_http_url: str,  # noqa: F811
) -> None:
    """Sent to its server; what the server says back is redacted before it is stored or
    sent to Gemini; a local server (and a command) does not inherit its variable."""
    servers = {
        "docs": docs(mcp_http_url),
        "local": listed_server(
            tmp_path,
            "local",
            tools=[{"name": "environment", "inputSchema": {"type": "object"}}],
            show_env=["DOCS_BEARER"],
        ),
    }
    fake.add(
        call_reply(("docs__seen_headers", {}), ("local__environment", {})),
        text_reply("Seen."),
    )
    process = print_with_servers(
        fake, tmp_path, servers, "--yes", "--print", "which headers?", env={"DOCS_BEARER": TOKEN}
    )
    code, out, err = finish(process)
    assert (code, out) == (0, "Seen.\n"), err
    headers, local = responses(fake, 1)
    assert json.loads(headers["response"]["output"]) == {"authorization": "Bearer [redacted]"}
    assert json.loads(local["response"]["output"])["env"] == {"DOCS_BEARER": None}


def test_a_token_a_header_cannot_carry_is_never_sent_nor_quoted(
    fake: FakeGemini,
    tmp_path: Path,
    mcp_http_url: str,  # noqa: F811
) -> None:
    """The HTTP stack's own error quotes the header it refused, token and all."""
    fake.add(text_reply("Hi."))
    process = print_with_servers(
        fake,
        tmp_path,
        {"docs": docs(mcp_http_url)},
        "--print",
        "hi",
        env={"DOCS_BEARER": f"{TOKEN}\nX-Evil: 1"},
    )
    code, out, err = finish(process)
    assert (code, out) == (0, "Hi.\n"), err
    assert err == (
        "koroku-tui: Went on without the MCP server docs: it could not be reached: its token "
        "(the variable DOCS_BEARER) holds characters an HTTP header cannot carry (only "
        "visible ASCII).\n"
    )
    log = (tmp_path / "home" / LOG_FILENAME).read_text()
    assert "could not be reached: its token (the variable DOCS_BEARER)" in log
    assert TOKEN not in log

"""MCP servers' tokens read at start-up, and ``--show-config`` / ``--config-schema`` telling
the servers (file:line, effective keys, secrets masked), through ``cli.main``."""

from __future__ import annotations

import json
import tomllib

import pytest
from helpers.config_kit import Desk, show_config
from test_config_mcp import DOCS, MINE, PROJECT, TIME, servers
from test_config_schema import config_schema_output, readme_example

from koroku_tui.config.mcp_servers import ENTRY_KEYS

TOKEN = "docs-token-5f1c9e2a7b"


def test_a_token_is_read_from_its_variable_and_never_shown(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.user(f'{DOCS}bearer_token_env_var = "DOCS_TOKEN"\n')
    monkeypatch.setenv("DOCS_TOKEN", f" {TOKEN}\n")
    docs = servers(desk)["docs"]
    assert docs.bearer_token is not None and docs.bearer_token.get_secret_value() == TOKEN
    assert docs.problem is None
    assert TOKEN not in repr(docs) and TOKEN not in str(docs.model_dump())
    said = show_config(capsys)
    assert said.code == 0 and TOKEN not in said.out + said.err
    assert said.line("bearer_token_env_var = ") == (
        f'bearer_token_env_var = "DOCS_TOKEN"  # {MINE}:3'
    )
    assert "# its token: ******** (found in DOCS_TOKEN)" in said.out.splitlines()


def test_a_missing_variable_is_the_servers_problem_naming_both(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCS_TOKEN", raising=False)
    desk.user(f'{DOCS}bearer_token_env_var = "DOCS_TOKEN"\n\n{TIME}')
    found = servers(desk)  # kept, not dropped: the core shows it failed with this sentence
    problem = (
        "[mcp_servers.docs] takes its token from the variable DOCS_TOKEN "
        "(`bearer_token_env_var`), which is not set."
    )
    assert (found["docs"].problem, found["docs"].bearer_token) == (problem, None)
    assert found["time"].problem is None
    said = show_config(capsys)
    assert (said.code, said.err) == (0, "")
    assert f"# not started: {problem}" in said.out.splitlines()
    monkeypatch.setenv("DOCS_TOKEN", "   ")
    assert servers(desk)["docs"].problem == problem


def test_a_local_servers_token_variable_is_not_read(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", TOKEN)
    desk.user(f'{TIME}bearer_token_env_var = "DOCS_TOKEN"\n')
    time = servers(desk)["time"]
    assert (time.bearer_token, time.problem) == (None, None)


def test_a_projects_server_may_not_send_the_users_token(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    desk.trust()
    desk.project(f'{DOCS}bearer_token_env_var = "GITHUB_TOKEN"\n')
    docs = servers(desk)["docs"]
    assert docs.bearer_token is None
    assert docs.problem == (
        f"[mcp_servers.docs] of {PROJECT} sends the variable GITHUB_TOKEN as its token, and "
        "only your own config file may send a variable's value to a server (copy the entry "
        "into yours)."
    )
    desk.trust(f'{DOCS}bearer_token_env_var = "GITHUB_TOKEN"\n')  # the same entry, the user's
    desk.project_file.unlink()
    assert servers(desk)["docs"].bearer_token is not None


def test_show_config_lists_each_server_with_its_file_line_and_keys(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.trust(
        f'{TIME}env = {{ TZ = "UTC", GITHUB_TOKEN = "ghp_x" }}\n\n{DOCS}'
        'http_headers = { Authorization = "Bearer abc", Cookie = "s=1", "X-Team" = "blue" }\n'
    )
    desk.project('\n[mcp_servers.git]\ncommand = "mcp-server-git"\ntool_timeout_sec = 5\n')
    said = show_config(capsys)
    assert said.code == 0, said.err
    out = said.out.split("\n[mcp_servers.time]", 1)[1].splitlines()
    assert out[:13] == [
        f"  # {MINE}:2",
        f'command = "uvx"  # {MINE}:3',
        f'args = ["mcp-server-time"]  # {MINE}:4',
        f'env = {{ TZ = "UTC", GITHUB_TOKEN = "********" }}  # {MINE}:5',
        "# cwd is not set  # default",
        "# url is not set  # default",
        "# bearer_token_env_var is not set  # default",
        "http_headers = {}  # default",
        "startup_timeout_sec = 10.0  # default",
        "tool_timeout_sec = 60.0  # default",
        "# enabled_tools is not set  # default",
        "disabled_tools = []  # default",
        "trust = false  # default",
    ]
    assert said.line("[mcp_servers.docs]") == f"[mcp_servers.docs]  # {MINE}:7"
    assert said.line("http_headers = { A") == (
        'http_headers = { Authorization = "********", Cookie = "********", X-Team = "blue" }'
        f"  # {MINE}:9"
    )
    assert said.line("[mcp_servers.git]") == f"[mcp_servers.git]  # {PROJECT}:2"
    assert said.line("tool_timeout_sec = 5.0") == f"tool_timeout_sec = 5.0  # {PROJECT}:4"
    assert "ghp_x" not in said.out and "Bearer abc" not in said.out


def test_show_config_says_when_there_is_no_server(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    said = show_config(capsys)
    assert said.out.endswith("\n# no MCP servers ([mcp_servers.NAME])  # default\n")


def test_the_schema_describes_an_entry_and_holds_no_resolved_field(
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema = config_schema_output(capsys)
    servers_property = schema["properties"]["mcp_servers"]
    assert servers_property["description"].startswith("MCP servers whose tools are offered")
    entry = schema["$defs"][servers_property["additionalProperties"]["$ref"].rpartition("/")[2]]
    assert tuple(entry["properties"]) == ENTRY_KEYS
    assert "bearer_token" not in entry["properties"] and "problem" not in entry["properties"]
    assert all(spec.get("description") for spec in entry["properties"].values())
    assert entry["additionalProperties"] is False
    assert entry["oneOf"] == [{"required": ["command"]}, {"required": ["url"]}]
    assert "never write the token here" in json.dumps(entry)


def test_the_readme_example_sets_every_key_of_a_server_and_shows_both(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    example = tomllib.loads(readme_example())
    written = {key for entry in example["mcp_servers"].values() for key in entry}
    assert sorted(written) == sorted(ENTRY_KEYS)
    desk.user(readme_example())
    said = show_config(capsys)
    assert (said.code, said.err) == (0, "")
    assert said.line("[mcp_servers.time]").startswith(f"[mcp_servers.time]  # {MINE}:")
    assert said.line("[mcp_servers.docs]").startswith(f"[mcp_servers.docs]  # {MINE}:")
    assert said.line("cwd = ") == f'cwd = "{desk.me / "tools"}"  # {MINE}:{_line_of("cwd")}'


def _line_of(key: str) -> int:
    """The line of the README example that sets ``key``."""
    lines = readme_example().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(f"{key} = "))

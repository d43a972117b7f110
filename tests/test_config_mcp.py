"""``[mcp_servers.NAME]`` through the real loader: the user's file, a project's (trusted or
not), bad entries left out one by one, ``trust`` and same-name entries, ``cwd``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.config_kit import Desk, show_config
from test_config_in_use import print_turn

from koroku_tui.config.loading import load_config
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.config.reading import WARNED_KEYS
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.privacy.user_files import read_text_file

MINE = "~/.config/koroku/config.toml"
PROJECT = "~/src/proj/.koroku/config.toml"
TIME = '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
DOCS = '[mcp_servers.docs]\nurl = "https://example.org/mcp"\n'


def servers(desk: Desk, environ: dict[str, str] | None = None) -> dict[str, McpServerSettings]:
    """The servers of the run's ``Settings``, as cli.py builds it (no warning expected)."""
    loaded = load_config(workspace=desk.workspace, read=read_text_file, environ=environ)
    assert loaded.warnings == []
    return Settings(**loaded.given).mcp_servers


def warnings_of(desk: Desk) -> list[str]:
    """The loader's one-line warnings (what the app's notices and ``--print`` say)."""
    return load_config(workspace=desk.workspace, read=read_text_file).said()


def test_the_users_servers_reach_the_settings(desk: Desk) -> None:
    desk.user(f'{TIME}env = {{ TZ = "UTC" }}\ntool_timeout_sec = 5\n\n{DOCS}')
    found = servers(desk)
    assert list(found) == ["time", "docs"]
    assert (found["time"].command, found["time"].args) == ("uvx", ["mcp-server-time"])
    assert (found["time"].env, found["time"].tool_timeout_sec) == ({"TZ": "UTC"}, 5.0)
    assert found["docs"].url == "https://example.org/mcp" and found["docs"].is_remote


def test_a_trusted_projects_servers_load_and_an_untrusted_ones_never_do(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user(TIME)
    desk.project(f'model = "theirs"\n\n{DOCS}\n[mcp_servers.git]\ncommand = "mcp-server-git"\n')
    assert list(servers(desk)) == ["time"]
    said = show_config(capsys)
    assert said.code == 0
    assert said.err.splitlines() == [
        f"koroku-tui: {PROJECT}: this folder is not trusted, so only its deny and ask rules "
        "apply; ignored: model, mcp_servers.docs, mcp_servers.git."
    ]
    assert "[mcp_servers.docs]" not in said.out
    desk.trust(TIME)
    assert list(servers(desk)) == ["time", "docs", "git"]


def test_an_untrusted_project_of_many_servers_names_a_few_unchecked(desk: Desk) -> None:
    # Never started, so never checked (a hostile repository's 25,000 entries took ~0.4 s
    # of every start): a bad entry is named with the others, not warned about.
    desk.project("".join(f"[mcp_servers.s{n}]\nargs = []\n" for n in range(40)))
    (line,) = warnings_of(desk)
    assert line.endswith(
        "ignored: mcp_servers.s0, mcp_servers.s1, mcp_servers.s2, mcp_servers.s3, "
        "mcp_servers.s4, 35 more servers."
    )


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            'args = ["x"]\n',
            "[mcp_servers.docs] needs `command` (a local server) or `url` (a remote one)",
        ),
        (
            'command = "uvx"\nurl = "https://example.org/mcp"\n',
            "[mcp_servers.docs] has both `command` and `url`: keep one",
        ),
        (
            'url = "https://example.org/mcp"\nstartup_timeout_sec = "ten"\n',
            '[mcp_servers.docs] `startup_timeout_sec` must be a number, not "ten"',
        ),
        (
            'command = "uvx"\ntool_timeout_sec = 0\n',
            "[mcp_servers.docs] `tool_timeout_sec` must be more than 0",
        ),
        (
            'command = "uvx"\nargs = "--port 1"\n',
            '[mcp_servers.docs] `args` must be a list of strings, not "--port 1"',
        ),
        (
            'command = "uvx"\nargs = ["a", 2]\n',
            "[mcp_servers.docs] `args` must be a list of strings",
        ),
        (
            'command = "uvx"\nenv = { TZ = 1 }\n',
            "[mcp_servers.docs] `env.TZ` must be a string, not 1",
        ),
        (
            'command = "uvx"\ntrust = "yes"\n',
            '[mcp_servers.docs] `trust` must be `true` or `false`, not "yes"',
        ),
        ('command = ""\n', "[mcp_servers.docs] `command` must not be empty"),
        (
            'command = "uvx"\nstartup_timeout_sec = 7200\n',
            "[mcp_servers.docs] `startup_timeout_sec` must be at most 3,600",
        ),
        (
            'command = "uvx"\nstartup_timeout_sec = nan\n',
            "[mcp_servers.docs] `startup_timeout_sec` must be a finite number",
        ),
        (
            'command = "uvx"\ncwd = 3\n',
            "[mcp_servers.docs] `cwd` must be a folder's path, written as a string",
        ),
        ('command = "uvx"\ncwd = " "\n', "[mcp_servers.docs] `cwd` must not be empty"),
        (
            'command = "uvx"\ndisabled_tool = ["delete_repo"]\n',
            "[mcp_servers.docs] `disabled_tool` is not a key of a server (did you mean "
            "`disabled_tools`?)",
        ),
        (
            'command = "uvx"\nbearer_token = "abc"\n',
            "[mcp_servers.docs] `bearer_token` is not a key of a server (did you mean "
            "`bearer_token_env_var`?)",
        ),
        (
            'command = "uvx"\nproblem = "none"\n',
            "[mcp_servers.docs] `problem` is not a key of a server",
        ),
    ],
)
def test_a_bad_entry_is_one_sentence_and_the_other_servers_still_load(
    desk: Desk, capsys: pytest.CaptureFixture[str], entry: str, said: str
) -> None:
    desk.user(
        f'model = "mine"\n\n{TIME}\n[mcp_servers.docs]\n{entry}\n'
        '[mcp_servers.more]\ncommand = "x"\n'
    )
    warnings = warnings_of(desk)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{MINE}:")
    assert warnings[0].endswith(f": {said}; the server was left out.")
    shown = show_config(capsys)
    assert shown.code == 0
    assert shown.err == f"koroku-tui: {warnings[0]}\n"
    assert "[mcp_servers.time]" in shown.out and "[mcp_servers.more]" in shown.out
    assert "[mcp_servers.docs]" not in shown.out
    assert shown.line("model = ").startswith('model = "mine"')  # the rest of the file applies


def test_a_bad_entry_names_the_line_of_its_key(desk: Desk) -> None:
    desk.user(
        f'{TIME}\n[mcp_servers.docs]\nurl = "https://example.org/mcp"\n'
        'startup_timeout_sec = "ten"\n'
    )
    assert warnings_of(desk) == [
        f'{MINE}:7: [mcp_servers.docs] `startup_timeout_sec` must be a number, not "ten"; '
        "the server was left out."
    ]
    desk.user('[mcp_servers]\ndocs = "https://example.org/mcp"\n')
    assert warnings_of(desk) == [
        f"{MINE}:2: [mcp_servers.docs] must be a table with `command` or `url`, not a str; "
        "the server was left out."
    ]


def test_a_table_that_is_not_of_servers_is_one_warning_and_koroku_starts(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user('model = "mine"\nmcp_servers = ["time"]\n')
    said = show_config(capsys)
    assert (said.code, said.err) == (
        0,
        f"koroku-tui: {MINE}:2: `mcp_servers` must be a table of servers ([mcp_servers.NAME] "
        "sections), so none of this file's was used.\n",
    )
    assert said.line("model = ").startswith('model = "mine"')


def test_a_file_of_many_bad_entries_names_ten_and_counts_the_rest(desk: Desk) -> None:
    desk.user("".join(f"[mcp_servers.s{n}]\nargs = []\n" for n in range(25)))
    warnings = warnings_of(desk)
    assert len(warnings) == WARNED_KEYS + 1
    assert (
        warnings[-1]
        == f"{MINE}: 15 more [mcp_servers.*] entries could not be used and were left out."
    )


def test_a_name_gemini_cannot_take_is_no_fault_of_the_entry(desk: Desk) -> None:
    desk.user('[mcp_servers."my docs (v2)!"]\ncommand = "x"\n[mcp_servers.""]\ncommand = "y"\n')
    assert list(servers(desk)) == ["my docs (v2)!", ""]


def test_a_bad_entry_is_said_on_stderr_with_print_and_the_turn_runs(
    fake: FakeGemini, desk: Desk
) -> None:
    desk.user('[mcp_servers.docs]\nurl = "https://example.org/mcp"\ncommand = "uvx"\n')
    fake.add(text_reply("Hi."))
    done = print_turn(fake, desk)
    assert (done.returncode, done.stdout) == (0, "Hi.\n")
    assert done.stderr == (
        f"koroku-tui: {MINE}:1: [mcp_servers.docs] has both `command` and `url`: keep one; "
        "the server was left out.\n"
    )


def test_trust_counts_only_from_the_users_own_file(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.trust(f"{TIME}trust = true\n")
    desk.project('[mcp_servers.docs]\nurl = "https://example.org/mcp"\ntrust = true\n')
    assert warnings_of(desk) == [
        f"{PROJECT}:3: `trust` of [mcp_servers.docs] was ignored: only your own config file "
        "says which servers' calls run without asking."
    ]
    loaded = load_config(workspace=desk.workspace, read=read_text_file)
    found = Settings(**loaded.given).mcp_servers
    assert (found["time"].trust, found["docs"].trust) == (True, False)
    desk.project_file.unlink()
    named = tmp_path / "named.toml"  # --config / KOROKU_CONFIG name the user's own file
    named.write_text(f'trusted_folders = ["{desk.workspace}"]\n{TIME}trust = true\n')
    monkeypatch.setenv("KOROKU_CONFIG", str(named))
    assert servers(desk)["time"].trust is True


def test_the_users_entry_wins_whole_over_a_projects_of_the_same_name(desk: Desk) -> None:
    desk.trust(TIME)
    desk.project('[mcp_servers.time]\ncommand = "their-time"\nenv = { TZ = "UTC" }\n')
    assert warnings_of(desk) == [
        f"{PROJECT}:1: [mcp_servers.time] was ignored: your own config file names that server "
        f"too ({MINE}:2), and yours wins."
    ]
    loaded = load_config(workspace=desk.workspace, read=read_text_file)
    time = Settings(**loaded.given).mcp_servers["time"]
    assert (time.command, time.env) == ("uvx", {})  # nothing of the project's entry


def test_a_nearer_projects_entry_replaces_an_outer_ones_whole(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.trust()
    desk.project('[mcp_servers.git]\ncommand = "outer"\nargs = ["--outer"]\n')
    inner = desk.workspace / "pkg"
    (inner / ".koroku").mkdir(parents=True)
    (inner / ".koroku" / "config.toml").write_text('[mcp_servers.git]\ncommand = "inner"\n')
    monkeypatch.chdir(inner)
    loaded = load_config(workspace=inner, read=read_text_file)
    git = Settings(**loaded.given).mcp_servers["git"]
    assert (git.command, git.args) == ("inner", [])


def test_cwd_expands_home_and_a_relative_one_is_from_the_files_folder(desk: Desk) -> None:
    desk.trust(
        '[mcp_servers.a]\ncommand = "x"\ncwd = "~/tools"\n'
        '[mcp_servers.b]\ncommand = "x"\ncwd = "servers/b"\n'
    )
    desk.project('[mcp_servers.c]\ncommand = "x"\ncwd = ".."\n')
    found = servers(desk)
    assert found["a"].cwd == desk.me / "tools"
    assert found["b"].cwd == desk.user_file.parent / "servers" / "b"
    assert found["c"].cwd == desk.project_file.parent / ".."


def test_a_relative_cwd_is_absolute_when_the_file_was_named_relatively(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    (desk.workspace / "mine.toml").write_text('[mcp_servers.a]\ncommand = "x"\ncwd = "tools"\n')
    monkeypatch.setenv("KOROKU_CONFIG", "mine.toml")  # the core may start it from elsewhere
    assert servers(desk)["a"].cwd == desk.workspace / "tools"

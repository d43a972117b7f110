"""``config.toml``: where values come from, and ``--show-config`` saying it, with real files.

Precedence: defaults < the user's file < a trusted project's file < KOROKU_* < flags.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.config_kit import Desk, show_config

from koroku_tui.config.reading import WARNED_KEYS

MINE = "~/.config/koroku/config.toml"

USER = """\
model = "user-model"
stall_timeout = 30

[compaction]
at = 0.7
after_events = 400

[approval]
allow_commands = ["git status"]
deny_commands = ["rm"]
tools = { write_file = "allow", read_file = "allow" }
"""


def test_nothing_set_is_all_defaults(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    said = show_config(capsys)
    assert said.code == 0, said.err
    assert said.line("model = ") == 'model = "gemini-3-flash-preview"  # default'
    assert said.line("at = ") == "at = 0.8  # default"
    assert said.line("# after_events") == "# after_events is not set  # default"
    assert said.err == ""
    assert not desk.koroku_home.exists()  # --show-config opens nothing


def test_each_value_names_its_file_and_line(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    desk.user(USER)
    said = show_config(capsys)
    assert said.line("model = ") == 'model = "user-model"  # ~/.config/koroku/config.toml:1'
    assert said.line("stall_timeout = ") == "stall_timeout = 30.0  # ~/.config/koroku/config.toml:2"
    assert said.line("at = ") == "at = 0.7  # ~/.config/koroku/config.toml:5"
    assert said.line("after_events = ") == "after_events = 400  # ~/.config/koroku/config.toml:6"
    assert said.line("allow_commands = ").endswith("# ~/.config/koroku/config.toml:9")
    assert said.line("home = ") == f'home = "{desk.koroku_home}"  # KOROKU_HOME'


def test_a_trusted_project_over_the_user_under_variables_under_flags(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.trust(USER)
    desk.project('\n[compaction]\nat = 0.5\n\n[approval]\nallow_commands = ["uv run pytest"]\n')
    project = "~/src/proj/.koroku/config.toml"
    said = show_config(capsys)
    assert said.line("at = ") == f"at = 0.5  # {project}:3"
    assert said.line("allow_commands = ") == (
        'allow_commands = ["git status", "uv run pytest"]  '
        f"# ~/.config/koroku/config.toml:10, {project}:6"
    )
    monkeypatch.setenv("KOROKU_COMPACT_AT", "0.6")
    monkeypatch.setenv("KOROKU_MODEL", "variable-model")
    said = show_config(capsys)
    assert said.line("at = ") == "at = 0.6  # KOROKU_COMPACT_AT"
    assert said.line("model = ") == 'model = "variable-model"  # KOROKU_MODEL'
    said = show_config(capsys, "--model", "flag-model")
    assert said.line("model = ") == 'model = "flag-model"  # --model'
    assert said.line("stall_timeout = ").endswith("# ~/.config/koroku/config.toml:3")


def test_an_untrusted_project_may_only_restrict(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user(USER)
    desk.project(
        'model = "their-model"\ntrusted_folders = ["/"]\n\n[approval]\n'
        'allow_commands = ["curl"]\ndeny_commands = ["git push"]\n'
        'tools = { write_file = "ask", read_file = "allow", run_command = "deny" }\n'
    )
    said = show_config(capsys)
    assert said.code == 0
    assert said.line("model = ").startswith('model = "user-model"')
    assert said.line("trusted_folders = ").startswith("trusted_folders = []")
    assert said.line("allow_commands = ").startswith('allow_commands = ["git status"]  #')
    assert said.line("deny_commands = ").startswith('deny_commands = ["rm", "git push"]  #')
    assert said.line("tools = ").startswith(
        'tools = { write_file = "ask", read_file = "allow", run_command = "deny" }  #'
    )
    project = "~/src/proj/.koroku/config.toml"
    assert said.err.splitlines() == [
        f"koroku-tui: {project}: this folder is not trusted, so only its deny and ask rules "
        "apply; ignored: model, trusted_folders, approval.allow_commands, "
        "approval.tools.read_file."
    ]


def test_a_trusted_project_may_not_set_the_users_own_keys(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.trust('[tools]\nenv_allow = ["NPM_TOKEN"]')
    desk.project(
        'trusted_folders = ["/"]\nignored_folders = ["/elsewhere"]\nhome = "/tmp/theirs"\n'
        'model = "their-model"\n\n[tools]\nenv_allow = ["GITHUB_TOKEN"]\n'
    )
    said = show_config(capsys)
    assert said.code == 0, said.err
    assert said.line("model = ").startswith('model = "their-model"')  # trusted: the rest applies
    assert said.line("trusted_folders = ") == (
        f'trusted_folders = ["{desk.workspace}"]  # ~/.config/koroku/config.toml:1'
    )
    assert said.line("ignored_folders = ") == "ignored_folders = []  # default"
    assert said.line("home = ") == f'home = "{desk.koroku_home}"  # KOROKU_HOME'
    assert said.line("env_allow = ").startswith('env_allow = ["NPM_TOKEN"]  # ~/.config/')
    project = "~/src/proj/.koroku/config.toml"
    assert said.err.splitlines() == [
        f"koroku-tui: {project}:1: `trusted_folders` was ignored: only your own config file "
        "says which folders are trusted.",
        f"koroku-tui: {project}:2: `ignored_folders` was ignored: only your own config file "
        "says which folders Koroku never asks about.",
        f"koroku-tui: {project}:3: `home` was ignored: only your own config file says where "
        "Koroku keeps your data.",
        f"koroku-tui: {project}:7: `tools.env_allow` was ignored: only your own config file "
        "says which secret-looking variables commands may see.",
    ]


def test_a_project_home_is_ignored_even_without_a_variable(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOROKU_HOME")
    desk.trust()
    desk.project('home = "/tmp/theirs"\n')
    said = show_config(capsys)
    assert said.line("home = ").endswith("# default")
    assert "/tmp/theirs" not in said.out


def test_ignored_folders_is_the_users_with_its_line(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user('model = "m"\nignored_folders = ["~/src/clones"]\n')
    said = show_config(capsys)
    assert said.line("ignored_folders = ") == (
        f'ignored_folders = ["{desk.me / "src" / "clones"}"]  # ~/.config/koroku/config.toml:2'
    )


def test_rule_lists_add_up_and_the_strictest_tool_rule_wins(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.trust('[approval]\ndeny_commands = ["rm"]\ntools = { write_file = "deny" }')
    desk.project('[approval]\ndeny_commands = ["rm", "dd"]\ntools = { write_file = "allow" }\n')
    said = show_config(capsys)
    assert said.line("deny_commands = ").startswith('deny_commands = ["rm", "dd"]  #')
    assert said.line("tools = ").startswith('tools = { write_file = "deny" }  #')


def test_a_parent_project_file_up_to_the_repository_root_and_no_further(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.trust()
    desk.project("stall_timeout = 10\n")
    inner = desk.workspace / "pkg" / "deep"
    (inner / ".koroku").mkdir(parents=True)
    (inner / ".koroku" / "config.toml").write_text("stall_timeout = 20\n")
    (desk.me / "src" / ".koroku").mkdir()
    (desk.me / "src" / ".koroku" / "config.toml").write_text('model = "above-the-repo"\n')
    monkeypatch.chdir(inner)
    said = show_config(capsys)
    assert said.line("stall_timeout = ") == (
        "stall_timeout = 20.0  # ~/src/proj/pkg/deep/.koroku/config.toml:1"
    )
    assert said.line("model = ").endswith("# default")


def test_config_flag_and_variable_name_the_user_file(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    desk.user('model = "default-file"\n')
    named = tmp_path / "named.toml"
    named.write_text('model = "named-file"\n')
    monkeypatch.setenv("KOROKU_CONFIG", str(named))
    said = show_config(capsys)
    assert said.line("model = ") == f'model = "named-file"  # {named}:1'
    assert f"# your config file: {named} (KOROKU_CONFIG)" in said.out
    flagged = tmp_path / "flagged.toml"
    flagged.write_text('\nmodel = "flagged-file"\n')
    said = show_config(capsys, "--config", str(flagged))
    assert said.line("model = ") == f'model = "flagged-file"  # {flagged}:2'
    missing = show_config(capsys, "--config", str(tmp_path / "nope.toml"))
    assert (missing.code, missing.err) == (
        2,
        f"koroku-tui: --config names {tmp_path / 'nope.toml'}, and there is no such file.\n",
    )


def test_paths_in_the_file_start_from_its_folder(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOROKU_HOME")
    desk.user('home = "data"\ntrusted_folders = ["~/src"]\n')
    said = show_config(capsys)
    home = desk.user_file.parent / "data"
    assert said.line("home = ") == f'home = "{home}"  # ~/.config/koroku/config.toml:1'
    assert said.line("trusted_folders = ").startswith(f'trusted_folders = ["{desk.me / "src"}"]')


def test_an_unknown_key_is_one_warning_naming_the_closest_and_the_rest_applies(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user(
        "compact_at = 0.6\n[compaction]\ncompact_at = 0.5\nafter_events = 50\n\n[approvals]\n"
        "x = 1\n"
    )
    said = show_config(capsys)
    assert said.code == 0
    assert said.line("after_events = ").startswith("after_events = 50")
    assert said.line("at = ").endswith("# default")
    assert said.err.splitlines() == [
        "koroku-tui: ~/.config/koroku/config.toml:1: `compact_at` is not a known key "
        "(did you mean `compaction.at`?); it was ignored.",
        "koroku-tui: ~/.config/koroku/config.toml:3: `compact_at` is not a key of [compaction] "
        "(did you mean `at`?); it was ignored.",
        "koroku-tui: ~/.config/koroku/config.toml:6: `approvals` is not a known key "
        "(did you mean `approval`?); it was ignored.",
    ]


def test_a_file_of_many_unknown_keys_names_ten_and_counts_the_rest(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    # A project's file is read at every start, trusted or not: 100,000 unknown keys made
    # as many lines and seconds of suggestions; one key of 400,000 characters, seconds more.
    desk.user('"' + "x_" * 200_000 + '" = 1\n' + "".join(f"[t{n}]\n" for n in range(40_000)))
    said = show_config(capsys)
    assert said.code == 0
    lines = said.err.splitlines()
    assert len(lines) == WARNED_KEYS + 1
    assert lines[0] == (
        f"koroku-tui: {MINE}:1: `{'x_' * 29}x…` is not a known key; it was ignored."
    )
    assert lines[1] == f"koroku-tui: {MINE}:2: `t0` is not a known key; it was ignored."
    assert lines[-1] == (f"koroku-tui: {MINE}: 39,991 more keys Koroku does not know were ignored.")


def test_secret_looking_values_and_credentials_are_masked(
    desk: Desk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.user(
        'model = "live-key-value-123"\n[keys]\n"main.compact" = "ctrl+k"\n'
        '"api_key" = "AIzaSyEXAMPLE"\n'
    )
    monkeypatch.setenv("GEMINI_API_KEY", "live-key-value-123")
    said = show_config(capsys)
    assert said.line("keys = ").startswith(
        'keys = { "main.compact" = "ctrl+k", api_key = "********" }  #'
    )
    assert said.line("model = ").startswith('model = "[redacted]"  #')
    assert "AIzaSyEXAMPLE" not in said.out
    assert "live-key-value-123" not in said.out

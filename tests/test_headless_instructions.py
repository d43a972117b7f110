"""``--print`` and the instruction files: the same files as the app, said only when asked.

The installed command against the fake Gemini, in a nested git repository
(``helpers.project_kit``); its config folder is the test's (``XDG_CONFIG_HOME``).
"""

from __future__ import annotations

from pathlib import Path

from helpers.project_kit import nested_project, write
from test_headless import run

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.modes.headless import instruction_lines
from koroku_tui.modes.wiring import assemble


def told(fake: FakeGemini) -> str:
    text = fake.generate_requests[-1].body["systemInstruction"]["parts"][0]["text"]
    assert isinstance(text, str)
    return text


def stderr_lines(stderr: str) -> list[str]:
    """Koroku's lines, without the warning about a home folder the test made."""
    return [line for line in stderr.splitlines() if "open to other users" not in line]


def test_an_untrusted_project_is_ignored_in_one_line_even_without_verbose(
    fake: FakeGemini, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    write(project.root / ".koroku" / "config.toml", 'model = "x"\n')
    fake.add(text_reply("ok"))
    result = run(fake, tmp_path / "home", "--print", "hi", cwd=project.workspace)
    assert result.returncode == 0, result.stderr
    # One line in all: the config loader's word on .koroku/config.toml is part of it.
    assert stderr_lines(result.stderr) == [
        f"koroku-tui: {project.root} is not trusted, so its project files are not used: "
        "AGENTS.md, KOROKU.md, .koroku/config.toml (only its deny and ask rules apply; "
        "ignored: model), app/AGENTS.md. Start koroku-tui there to trust it, or add it to "
        f"trusted_folders in {project.personal / 'config.toml'}."
    ]
    assert "PERSONAL standing orders" in told(fake)
    assert "APP agents" not in told(fake)
    assert fake.generate_requests[-1].model != "x"


def test_an_untrusted_projects_broken_config_does_not_stop_print(
    fake: FakeGemini, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    (project.workspace / "AGENTS.md").unlink()
    write(project.workspace / ".koroku" / "config.toml", '[approval]\ndeny_commands = = ["ls"]\n')
    fake.add(text_reply("ok"))
    result = run(fake, tmp_path / "home", "--print", "hi", cwd=project.workspace)
    assert (result.returncode, result.stdout) == (0, "ok\n")
    shown = project.workspace / ".koroku" / "config.toml"
    assert stderr_lines(result.stderr) == [
        f"koroku-tui: {project.root} is not trusted, so its project files are not used: "
        "AGENTS.md, KOROKU.md, app/.koroku/config.toml (none of it applies, not even its deny "
        f"rules: {shown} is not valid TOML at line 2, column 17: invalid value). Start "
        "koroku-tui there to trust it, or add it to trusted_folders in "
        f"{project.personal / 'config.toml'}."
    ]


def test_verbose_names_the_files_in_one_line(fake: FakeGemini, tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    workspace = tmp_path / "elsewhere"
    workspace.mkdir()
    fake.add(text_reply("ok"), text_reply("ok"))
    result = run(fake, tmp_path / "home", "--print", "hi", "--verbose", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert stderr_lines(result.stderr) == [
        f"koroku-tui: Instructions: {project.personal / 'AGENTS.md'}, 25 bytes"
    ]
    quiet = run(fake, tmp_path / "home", "--print", "hi", cwd=workspace)
    assert stderr_lines(quiet.stderr) == []
    assert "PERSONAL standing orders" in told(fake)


def test_verbose_in_a_trusted_project_lists_every_file_in_order(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    settings = Settings(home=tmp_path / "home", trusted_folders=[project.outer])
    parts = assemble(settings, workspace=project.workspace)
    assert instruction_lines(parts.instruction_files, parts.config_file, verbose=True) == [
        f"Instructions: {project.personal / 'AGENTS.md'}, 25 bytes, "
        f"{project.root / 'AGENTS.md'}, 16 bytes, {project.root / 'KOROKU.md'}, 16 bytes, "
        f"{project.workspace / 'AGENTS.md'}, 11 bytes"
    ]
    assert instruction_lines(parts.instruction_files, parts.config_file, verbose=False) == []


def test_verbose_applies_only_with_print(tmp_path: Path, fake: FakeGemini) -> None:
    result = run(fake, tmp_path, "--verbose")
    assert result.returncode == 2
    assert "--verbose applies only with --print TEXT" in result.stderr

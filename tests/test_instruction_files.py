"""Instruction files (issue 24, section 2): which are read, in what order, capped, re-read.

Real files in nested git repositories under ``tmp_path`` (``helpers.project_kit``);
the system instruction is the one the agent sends (``agent.instructions``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from helpers.project_kit import files_for, nested_project, write

from koroku_tui.agent.context.instruction_files import LoadedInstructions
from koroku_tui.agent.context.project_files import project_files, read_project_text
from koroku_tui.agent.instructions import instruction_files_text, system_instruction
from koroku_tui.agent.tools import ToolRegistry


def texts(loaded: LoadedInstructions) -> list[str]:
    return [f.read.text.strip() for f in loaded.used]


def told(loaded: LoadedInstructions, tmp_path: Path) -> str:
    """The system instruction the agent would send with these files."""
    return system_instruction(tmp_path / "memory", ToolRegistry(), files=loaded)


def test_personal_first_then_outermost_to_nearest_stopping_at_the_nearest_repository_root(
    tmp_path: Path,
) -> None:
    project = nested_project(tmp_path)
    loaded = files_for(project.workspace, trusted=True).refresh()
    assert texts(loaded) == [
        "PERSONAL standing orders",
        "LIB-ROOT agents",  # the configured names in their order: AGENTS.md, then KOROKU.md
        "LIB-ROOT koroku",
        "APP agents",
    ]
    assert [f.scope for f in loaded.used] == ["personal", "project", "project", "project"]
    said = told(loaded, tmp_path)
    assert "OUTER-ROOT" not in said and "ABOVE-ALL" not in said  # beyond the nested root
    positions = [said.index(text) for text in texts(loaded)]
    assert positions == sorted(positions)
    # Each file is framed with its path.
    assert f"--- {project.workspace / 'AGENTS.md'} (project) ---\nAPP agents\n--- end of" in said


def test_the_outer_repository_is_read_up_to_its_own_root(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    docs = project.outer / "docs"
    write(docs / "KOROKU.md", "DOCS koroku\n")
    assert texts(files_for(docs, trusted=True).refresh()) == [
        "PERSONAL standing orders",
        "OUTER-ROOT rules",
        "DOCS koroku",
    ]


def test_outside_a_repository_only_the_workspace_is_read(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "PARENT\n")
    workspace = tmp_path / "plain"
    write(workspace / "KOROKU.md", "HERE\n")
    loaded = files_for(workspace, trusted=True).refresh()
    assert texts(loaded) == ["HERE"]
    assert project_files(workspace, ["AGENTS.md", "KOROKU.md"]) == [workspace / "KOROKU.md"]


def test_the_names_are_a_setting_in_the_personal_folder_too(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    write(project.personal / "GEMINI.md", "PERSONAL gemini\n")
    write(project.workspace / "GEMINI.md", "APP gemini\n")
    loaded = files_for(project.workspace, trusted=True, names=("GEMINI.md",)).refresh()
    assert texts(loaded) == ["PERSONAL gemini", "APP gemini"]


def test_an_untrusted_project_is_listed_as_ignored_and_never_told(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    loaded = files_for(project.workspace, trusted=False).refresh()
    assert texts(loaded) == ["PERSONAL standing orders"]
    assert loaded.ignored == (
        project.root / "AGENTS.md",
        project.root / "KOROKU.md",
        project.workspace / "AGENTS.md",
    )
    said = told(loaded, tmp_path)
    assert "PERSONAL standing orders" in said and "APP agents" not in said
    assert "LIB-ROOT" not in said


def test_no_files_leave_the_instruction_as_it_was(tmp_path: Path) -> None:
    loaded = files_for(tmp_path / "empty", trusted=True).refresh()
    assert loaded.summary() == ""
    assert told(loaded, tmp_path) == system_instruction(tmp_path / "memory", ToolRegistry())


def test_the_summary_line_names_each_file_and_its_size(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    write(project.workspace / "AGENTS.md", "x" * 2150)
    loaded = files_for(project.workspace, trusted=True, names=("AGENTS.md",)).refresh()
    assert loaded.summary() == (
        f"Instructions: {project.personal / 'AGENTS.md'}, 25 bytes, "
        f"{project.root / 'AGENTS.md'}, 16 bytes, {project.workspace / 'AGENTS.md'}, 2.1 KB"
    )
    home = files_for(project.workspace, trusted=True)
    home.home = tmp_path
    assert "~/src/lib/app/AGENTS.md" in home.refresh().summary()


def test_the_cap_cuts_the_file_that_crosses_it_and_leaves_out_the_rest_saying_so(
    tmp_path: Path,
) -> None:
    project = nested_project(tmp_path)
    write(project.root / "AGENTS.md", "A" * 700 + "\n")
    write(project.root / "KOROKU.md", "B" * 400 + "\n")
    write(project.workspace / "AGENTS.md", "LATE\n")
    loaded = files_for(project.workspace, trusted=True, cap=1000).refresh()
    # personal 25 bytes + 701: the next file has 274 bytes of room.
    cut = next(f for f in loaded.files if f.read.cut)
    assert cut.path == project.root / "KOROKU.md" and cut.read.text == "B" * 274
    assert sum(len(f.read.text.encode()) for f in loaded.files) <= 1000
    assert loaded.left_out == (project.workspace / "AGENTS.md",)
    said = instruction_files_text(loaded)
    assert "LATE" not in said
    assert "[Koroku: cut here: the instruction files together exceed 1,000 bytes" in said
    assert f"left out, past the 1,000 bytes limit: {project.workspace / 'AGENTS.md'}" in said
    assert "(cut at 1,000 bytes, the most Koroku sends)" in loaded.summary()


def test_the_default_cap_is_64_kb_and_a_huge_file_is_never_read_whole(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    huge = write(workspace / "AGENTS.md", "")
    with huge.open("r+b") as handle:
        handle.truncate(2**31)  # 2 GB, sparse: read whole it would exhaust memory
    loaded = files_for(workspace, trusted=True).refresh()
    [file] = loaded.files
    assert file.read.cut and len(file.read.text) == 64 * 1024
    assert file.read.size == 2**31
    assert "cut at 64 KB" in loaded.summary()


def test_a_link_out_of_the_project_is_refused_and_one_inside_is_followed(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    outside = write(tmp_path / "secret.txt", "SECRET-TOKEN\n")
    (project.workspace / "AGENTS.md").unlink()
    (project.workspace / "AGENTS.md").symlink_to(outside)
    (project.workspace / "KOROKU.md").symlink_to(project.root / "AGENTS.md")
    loaded = files_for(project.workspace, trusted=True).refresh()
    assert "SECRET-TOKEN" not in told(loaded, tmp_path)
    assert texts(loaded)[-1] == "LIB-ROOT agents"  # KOROKU.md, through its link
    assert f"not read: {project.workspace / 'AGENTS.md'} is a link to {outside}" in (
        loaded.summary()
    )
    etc = project.workspace / "GEMINI.md"
    etc.symlink_to("/etc/passwd")
    read = read_project_text(etc, limit=1000, root=project.root)
    assert read is not None and read.refused == "is a link to /etc/passwd, outside the project"
    assert read.text == ""


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    os.mkfifo(workspace / "AGENTS.md")
    found: list[LoadedInstructions] = []
    reader = threading.Thread(
        target=lambda: found.append(files_for(workspace, trusted=True).refresh())
    )
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the stuck open so the test process can end
        with open(workspace / "AGENTS.md", "w"):
            pass
        pytest.fail("reading a FIFO named AGENTS.md hung")
    [file] = found[0].files
    assert file.read.refused == "is a named pipe (FIFO), not a regular file"
    assert not file.used


def test_bytes_that_are_not_utf8_are_replaced_and_flagged(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    write(workspace / "AGENTS.md", b"caf\xe9 \xff rules\n")
    [file] = files_for(workspace, trusted=True).refresh().files
    assert file.read.text == "caf\ufffd \ufffd rules\n"
    assert file.read.undecodable


def test_hidden_characters_reach_the_model_as_visible_escapes(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    write(workspace / "AGENTS.md", "Be nice.\u202e\U000e0041\x1b[2J\n")
    said = told(files_for(workspace, trusted=True).refresh(), tmp_path)
    assert "Be nice.\\u202e\\U000e0041\\u001b[2J" in said
    assert "\u202e" not in said and "\x1b" not in said


def test_a_refresh_reads_again_only_after_a_change(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    files = files_for(project.workspace, trusted=True)
    heard: list[LoadedInstructions] = []
    files.listen(heard.append)
    first = files.refresh()
    assert files.refresh() is first and len(heard) == 1
    agents = project.workspace / "AGENTS.md"
    agents.write_text("APP agents, edited\n")
    os.utime(agents, ns=(1, 1))  # a new mtime even on a coarse clock
    edited = files.refresh()
    assert edited is not first and texts(edited)[-1] == "APP agents, edited"
    agents.unlink()
    assert "APP" not in " ".join(texts(files.refresh()))
    write(project.root / "sub" / "x.md", "not an instruction file")
    assert files.refresh() is heard[-1] and len(heard) == 3


def test_trusting_counts_from_the_next_refresh(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    files = files_for(project.workspace, trusted=False)
    assert texts(files.refresh()) == ["PERSONAL standing orders"]
    files.trust()
    assert texts(files.refresh())[-1] == "APP agents"


def test_the_project_files_to_trust_include_its_config(tmp_path: Path) -> None:
    project = nested_project(tmp_path)
    config = write(project.root / ".koroku" / "config.toml", 'model = "x"\n')
    files = files_for(project.workspace, trusted=False)
    assert files.project_root == project.root
    assert files.project_files() == [
        project.root / "AGENTS.md",
        project.root / "KOROKU.md",
        config,
        project.workspace / "AGENTS.md",
    ]


def test_a_repository_at_the_users_home_is_not_what_the_prompt_offers_to_trust(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()  # a dotfiles checkout in the home
    workspace = tmp_path / "notes"
    write(workspace / "AGENTS.md", "NOTES\n")
    files = files_for(workspace, trusted=False)
    files.home = tmp_path
    assert files.project_root == workspace  # not the home, which covers every clone below it
    files.home = None
    assert files.project_root == tmp_path


def test_in_a_home_that_is_a_repository_no_link_leads_out_of_the_trusted_folder(
    tmp_path: Path,
) -> None:
    # A dotfiles checkout at the home makes every folder below "inside the repository":
    # a downloaded project's AGENTS.md -> ~/.ssh/id_rsa was read and told to the model.
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".ssh" / "id_rsa", "PRIVATE KEY\n")
    workspace = tmp_path / "Downloads" / "hostile"
    workspace.mkdir(parents=True)
    (workspace / "AGENTS.md").symlink_to(Path("..") / ".." / ".ssh" / "id_rsa")
    write(workspace / "KOROKU.md", "HOSTILE koroku\n")
    (workspace / "CLAUDE.md").symlink_to("KOROKU.md")
    files = files_for(workspace, trusted=True, names=("AGENTS.md", "CLAUDE.md"))
    files.home = tmp_path
    loaded = files.refresh()
    assert texts(loaded)[-1:] == ["HOSTILE koroku"]  # a link inside it is still followed
    assert "PRIVATE KEY" not in told(loaded, tmp_path)
    key = tmp_path / ".ssh" / "id_rsa"
    assert f"not read: ~/Downloads/hostile/AGENTS.md is a link to {key}" in loaded.summary()

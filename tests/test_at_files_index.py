"""The ``@`` picker's index: ``.gitignore`` as git reads it, no links out, fuzzy ranking."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from koroku_tui.agent.tools.file_index import MAX_IGNORE_LINES, MAX_IGNORE_LINES_PER_FILE, FileIndex
from koroku_tui.agent.tools.fuzzy import runs


def listed(root: Path) -> set[str]:
    index = FileIndex(root)
    index.build()
    assert index.done.is_set()
    return set(index.paths)


def touch(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path)


def test_gitignore_nested_negation_and_ignored_folders(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "main.py",
        "debug.log",
        "keep.log",
        "build/out.js",
        "node_modules/pkg/index.js",
        "src/app.py",
        "src/cache.tmp",
        "src/generated/a.py",
        "src/generated/keep.py",
        "docs/build/page.html",
        ".git/config",
        ".env",
    )
    (tmp_path / ".gitignore").write_text("*.log\n!keep.log\n/build/\nnode_modules\n.env\n")
    # A nested file: applies below src/ only, and re-includes what the top one ignored.
    (tmp_path / "src" / ".gitignore").write_text("*.tmp\ngenerated/*\n!generated/keep.py\n")
    assert listed(tmp_path) == {
        ".gitignore",
        "main.py",
        "keep.log",
        "src/.gitignore",
        "src/app.py",
        "src/generated/keep.py",
        "docs/build/page.html",  # "/build/" is anchored at the top
    }


def test_a_deeper_gitignore_wins_over_a_shallower_one(tmp_path: Path) -> None:
    touch(tmp_path, "a/notes.md", "b/notes.md")
    (tmp_path / ".gitignore").write_text("*.md\n")
    (tmp_path / "a" / ".gitignore").write_text("!notes.md\n")
    assert listed(tmp_path) == {".gitignore", "a/.gitignore", "a/notes.md"}


def test_links_never_lead_out_of_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    touch(workspace, "real.txt", "sub/inner.txt")
    touch(outside, "secret.txt", "deep/more.txt")
    os.symlink(outside / "secret.txt", workspace / "secret-link.txt")
    os.symlink(outside, workspace / "outside-dir")
    os.symlink(workspace / "real.txt", workspace / "inner-link.txt")
    os.symlink(workspace, workspace / "sub" / "loop")  # a folder link: never walked (no loop)
    os.symlink(workspace / "missing", workspace / "dangling")
    os.mkfifo(workspace / "pipe")
    assert listed(workspace) == {"real.txt", "sub/inner.txt", "inner-link.txt"}


def test_names_that_could_not_be_written_after_at_are_left_out(tmp_path: Path) -> None:
    touch(tmp_path, "ok name.md", "esc\x1bname.md", 'quote".md', "new\nline.md")
    touch(tmp_path, "rtl\u202edm.exe", "nbsp\xa0name.md")
    (tmp_path / os.fsdecode(b"latin\xff.md")).write_bytes(b"not UTF-8")
    assert listed(tmp_path) == {"ok name.md"}


def ranked(paths: list[str], query: str) -> list[str]:
    index = FileIndex(Path("."), paths=list(paths))
    return index.search(query, limit=len(paths))


def test_ranking_file_names_first_then_runs_then_short_paths() -> None:
    paths = [
        "src/prompts/index.md",
        "koroku_tui/ui/main/prompt.py",
        "prompt.py",
        "docs/a_prompt_b.md",
        "p/r/o/m/p/t.txt",
        "unrelated.txt",
    ]
    assert ranked(paths, "prompt") == [
        "prompt.py",  # the name starts with it, shortest
        "koroku_tui/ui/main/prompt.py",
        "docs/a_prompt_b.md",  # in the name, not at its start
        "src/prompts/index.md",  # only in the path
        "p/r/o/m/p/t.txt",  # scattered
    ]
    assert ranked(paths, "PROMPT")[0] == "prompt.py"  # case is ignored
    assert ranked(paths, "zzz") == []
    # Contiguous runs beat scattered letters among paths of the same tier.
    assert ranked(["uxixmxaxixnx/f.py", "ui/main/f.py"], "uimain") == [
        "ui/main/f.py",
        "uxixmxaxixnx/f.py",
    ]
    assert runs("uimain", "ui/main") == 2 and runs("abc", "xaxbxc") == 3


def test_an_empty_query_lists_shallow_files_first() -> None:
    assert ranked(["a/b/c.py", "z.py", "a/b.py"], "") == ["z.py", "a/b.py", "a/b/c.py"]


def test_a_stopped_walk_ends_early(tmp_path: Path) -> None:
    touch(tmp_path, *(f"d{n}/f.txt" for n in range(20)))
    index = FileIndex(tmp_path)
    index.build(on_batch=index.stopped.set, batch=1)  # stopped after the first batch
    assert index.done.is_set() and len(index.paths) < 20


def test_typing_on_narrows_to_the_same_answer_as_a_fresh_search() -> None:
    paths = ["src/prompt.py", "pr.md", "a/p/r/o.txt", "other.txt", "proto/x.c"]
    index = FileIndex(Path("."), paths=paths[:3])
    assert index.search("p") == ["pr.md", "src/prompt.py", "a/p/r/o.txt"]
    index.paths.extend(paths[3:])  # listed meanwhile
    for query in ("pr", "pro", "pr", "x"):
        assert index.search(query) == ranked(paths, query), query


def test_a_gitignore_bomb_is_honoured_only_for_its_first_patterns(tmp_path: Path) -> None:
    """A 100,000-line ``.gitignore`` compiled for half a minute before the list showed a file."""
    filler = [f"never{n}.x" for n in range(MAX_IGNORE_LINES_PER_FILE - 1)]
    (tmp_path / ".gitignore").write_text(
        "\n".join(["# a comment is no pattern", "", "a.txt", *filler, "b.txt"])
    )
    # Ten more folders of as many patterns: the walk's budget ends before the last.
    for n in range(MAX_IGNORE_LINES // MAX_IGNORE_LINES_PER_FILE):
        (tmp_path / f"d{n}").mkdir()
        lines = ["c.txt", *filler] if n < 9 else ["c.txt"]
        (tmp_path / f"d{n}" / ".gitignore").write_text("\n".join(lines))
        touch(tmp_path, f"d{n}/c.txt")
    touch(tmp_path, "a.txt", "b.txt")
    found = listed(tmp_path)
    assert "a.txt" not in found and "b.txt" in found  # the 1,001st pattern is not read
    assert [p for p in sorted(found) if p.endswith("c.txt")] == ["d9/c.txt"]


def test_a_fifo_named_gitignore_does_not_hold_the_walk(tmp_path: Path) -> None:
    """Opened to read, it waited for a writer forever: the picker said "listing…" for good."""
    os.mkfifo(tmp_path / ".gitignore")
    touch(tmp_path, "a.txt")
    index = FileIndex(tmp_path)
    walk = threading.Thread(target=index.build, daemon=True)
    walk.start()
    assert index.done.wait(30), "the walk never ended"  # a deadline, not a timing
    assert index.paths == ["a.txt"]

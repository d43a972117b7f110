"""A folder's trust: a parent's trust covers its children, and nothing else is trusted."""

from __future__ import annotations

from pathlib import Path

from koroku_tui.config.trust import is_trusted


def test_a_parent_trust_covers_its_children_and_no_sibling(tmp_path: Path) -> None:
    trusted = tmp_path / "src"
    (trusted / "koroku" / "deep").mkdir(parents=True)
    (tmp_path / "src-other").mkdir()
    assert is_trusted(trusted, [trusted])
    assert is_trusted(trusted / "koroku" / "deep", [trusted])
    assert not is_trusted(tmp_path / "src-other", [trusted])  # a shared prefix is not a parent
    assert not is_trusted(tmp_path, [trusted])
    assert not is_trusted(trusted / ".." / "src-other", [trusted])


def test_a_link_is_judged_by_where_it_leads(tmp_path: Path) -> None:
    trusted, outside = tmp_path / "trusted", tmp_path / "outside"
    trusted.mkdir()
    outside.mkdir()
    (tmp_path / "into-trust").symlink_to(trusted)
    (trusted / "way-out").symlink_to(outside)
    assert is_trusted(tmp_path / "into-trust", [trusted])
    assert not is_trusted(trusted / "way-out", [trusted])

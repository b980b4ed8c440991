"""The kept listing (issue 16): after any change it is what a fresh walk gives, and it says so.

Folders are dated by hand (`os.utime`, a new second for each step) with RACY_NS = 0, so a
folder whose names changed always has a new signature and one left alone keeps its own:
the re-check then runs on its unchanged-folder path, deterministically (no clock ticks).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from ctxagent.fetch import listing as listing_module
from ctxagent.fetch.listing import Listing
from ctxagent.fetch.walk import MAX_FILE_BYTES, list_files

BASE_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09, long before any test runs


def date(folder: Path, step: int) -> None:
    """Give `folder` the modification time of `step` (never the same twice)."""
    os.utime(folder, ns=(BASE_NS + step * 10**9, BASE_NS + step * 10**9))


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(listing_module, "RACY_NS", 0)
    root = tmp_path / "ws"
    for rel in ("a.py", "src/b.py", "src/deep/c.py", "docs/d.md", "docs/e.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    for folder in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        date(folder, 0)
    return root


def steps(root: Path) -> list[tuple[str, Callable[[], None], list[Path]]]:
    """(what, the change, the folders whose names it changed)."""
    src, docs = root / "src", root / "docs"
    return [
        ("add a file", lambda: (src / "new.py").write_text("x\n"), [src]),
        ("edit a file in place", lambda: (src / "b.py").write_text("# longer now\n"), []),
        ("remove a file", lambda: (docs / "e.md").unlink(), [docs]),
        ("rename a file", lambda: (docs / "d.md").rename(docs / "renamed.md"), [docs]),
        ("add a folder tree", lambda: (src / "deep" / "more").mkdir() or (src / "deep" / "more" / "f.py").write_text(
            "y\n"), [src / "deep", src / "deep" / "more"]),
        ("remove a folder tree", lambda: shutil.rmtree(src / "deep"), [src]),
        ("a file becomes a link", lambda: (root / "a.py").unlink() or (root / "a.py").symlink_to(src / "b.py"),
         [root]),
        ("hidden and excluded names", lambda: (root / ".hidden").write_text("h") or (root / "node_modules").mkdir(),
         [root]),
        ("a file grows past the cap", lambda: (src / "new.py").write_bytes(b"x" * (MAX_FILE_BYTES + 1)), []),
        ("and shrinks back", lambda: (src / "new.py").write_text("z\n"), []),
        ("a folder becomes a file", lambda: shutil.rmtree(docs) or docs.write_text("now a file\n"), [root]),
    ]


@pytest.mark.parametrize("watch", [False, True], ids=["full checks", "watcher"])
def test_each_change_is_seen_and_the_listing_is_the_walk(tree: Path, watch: bool) -> None:
    listing = Listing(tree, watch=watch)
    assert listing.refresh() and listing.entries == list_files(tree)
    assert not listing.refresh()  # nothing changed
    for step, (what, change, touched) in enumerate(steps(tree), 1):
        change()
        for folder in touched:
            if folder.exists():
                date(folder, step)
        before, walked = listing.entries, list_files(tree)
        assert listing.refresh() is (walked != before), what  # hidden and excluded names change nothing
        assert listing.entries == walked, what
        assert not listing.refresh(), what


def test_a_folder_read_within_racy_ns_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a\n")
    listing = Listing(root)
    listing.refresh()
    assert all(folder.racy for folder in listing._folders.values())  # just written: this tick may change again
    (root / "src" / "b.py").write_text("b\n")  # possibly within the same timestamp tick as a.py
    assert listing.refresh() and [e.rel for e in listing.entries] == ["src/a.py", "src/b.py"]


def test_a_workspace_over_the_file_cap_is_walked_whole(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing_module, "MAX_FILES", 3)
    monkeypatch.setattr("ctxagent.fetch.walk.MAX_FILES", 3)
    listing = Listing(tree)
    assert listing.refresh() and listing.entries == list_files(tree) and len(listing.entries) == 3


def test_the_root_may_be_a_link(tree: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tree)
    listing = Listing(link)
    assert listing.refresh() and listing.entries == list_files(link)


def test_context_fetch_sees_an_in_place_edit_without_being_told(repo: Path) -> None:
    from ctxagent.tools.context_fetch import ContextFetchTool

    tool = ContextFetchTool(repo)
    assert not tool.run({"query": "zanzibar_quokka", "sources": ["files"]})["sources"]["files"]
    target = next(p for p in sorted(repo.rglob("*.py")))
    with target.open("a", encoding="utf-8") as f:  # in place: its folder does not change
        f.write("\ndef zanzibar_quokka():\n    return 1\n")
    found = tool.run({"query": "zanzibar_quokka", "sources": ["files"]})["sources"]["files"]
    assert [f["path"] for f in found][:1] == [target.relative_to(repo).as_posix()]

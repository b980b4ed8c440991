"""The listing with its inotify watcher (issue 16): a re-check looks only where events were,
and whatever the watcher cannot vouch for is checked in full, so the listing stays the walk.

Nothing is dated by hand here: the real clock and the default RACY_NS, as in use.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from ctxagent.fetch import inotify
from ctxagent.fetch.listing import Listing
from ctxagent.fetch.walk import list_files

pytestmark = pytest.mark.skipif(inotify.Watcher.open(".") is None, reason="no inotify watcher here")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in ("a.py", "src/b.py", "src/deep/c.py", "docs/d.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    return root


def watched(root: Path) -> Listing:
    listing = Listing(root)
    assert listing.refresh() and listing.watcher is not None and listing._watched
    return listing


def count_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths `os.stat` is called on from now on (a spy: the calls still happen)."""
    calls: list[str] = []
    real = os.stat

    def spy(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003 - os.stat's own signature
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", spy)
    return calls


def test_a_quiet_tree_is_rechecked_without_a_stat(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ctxagent.fetch.listing.RACY_NS", 0)  # no folder is read again for its age
    listing = watched(tree)
    calls = count_stats(monkeypatch)
    assert not listing.refresh() and calls == []
    (tree / "src" / "b.py").write_text("# edited in place, longer\n")  # its folder does not change
    assert listing.refresh()
    looked = sorted(calls)
    monkeypatch.undo()
    assert listing.entries == list_files(tree)
    assert looked == [str(tree / "src"), str(tree / "src" / "b.py")]  # that folder and its files only


def test_every_change_just_before_a_check_is_seen(tree: Path) -> None:
    listing = watched(tree)
    target = tree / "src" / "deep" / "c.py"
    for i in range(50):  # in place, in one folder, at the speed of the clock tick
        with target.open("a", encoding="utf-8") as f:
            f.write(f"x{i}\n")
        assert listing.refresh(), i
        assert listing.entries == list_files(tree), i


def test_folders_added_removed_and_replaced_are_followed(tree: Path) -> None:
    listing = watched(tree)
    changes = [
        lambda: (tree / "src" / "new").mkdir() or (tree / "src" / "new" / "f.py").write_text("f\n"),
        lambda: (tree / "src" / "new" / "g.py").write_text("g\n"),  # inside the folder just added
        lambda: [(tree / "src").rename(tree / "old"), (tree / "src").mkdir()],  # another folder at src
        lambda: (tree / "src" / "h.py").write_text("h\n"),  # seen in the new src, not the old
        lambda: (tree / "old" / "deep" / "c.py").write_text("# moved, then edited\n"),
        lambda: shutil.rmtree(tree / "old"),
        lambda: shutil.rmtree(tree / "docs") or (tree / "docs").write_text("a file now\n"),
    ]
    for i, change in enumerate(changes):
        change()
        assert listing.refresh(), i
        assert listing.entries == list_files(tree), i
        assert listing._watched and listing.watcher is not None, i
        assert listing.watcher.rels() == {"", *{p.relative_to(tree).as_posix() for p in tree.rglob("*")
                                                if p.is_dir()}}, i


def test_lost_events_mean_a_full_check_and_the_watcher_goes_on(tree: Path) -> None:
    listing = watched(tree)
    a, b = tree / "src" / "b.py", tree / "docs" / "d.md"
    with a.open("a") as fa, b.open("a") as fb:  # alternating events are not merged: the queue overflows
        for _ in range(9000):
            fa.write("1")
            fa.flush()
            fb.write("2")
            fb.flush()
    assert listing.watcher is not None and listing.watcher.changed() is None
    (tree / "src" / "late.py").write_text("after the overflow\n")
    assert listing.refresh() and listing.entries == list_files(tree)
    (tree / "docs" / "later.md").write_text("seen by the watcher again\n")
    assert listing.refresh() and listing.entries == list_files(tree) and listing._watched


def test_past_the_watch_limit_it_falls_back_to_full_checks(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inotify, "MAX_WATCHES", 2)
    listing = Listing(tree)
    assert listing.refresh() and listing.watcher is None  # 4 folders: not all could be watched
    (tree / "src" / "deep" / "c.py").write_text("# edited in place, longer\n")
    assert listing.refresh() and listing.entries == list_files(tree)


def _child_refresh(listing: Listing, root: Path, out: multiprocessing.Queue) -> None:
    (root / "src" / "from_child.py").write_text("c\n")
    out.put((listing.refresh(), listing.entries == list_files(root), listing.watcher is None))


def test_a_forked_process_does_not_read_the_parents_events(tree: Path) -> None:
    listing = watched(tree)
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_child_refresh, args=(listing, tree, out))
    child.start()
    child.join(30)
    assert out.get(timeout=5) == (True, True, True)  # the child checked in full, without the watcher
    assert listing.refresh() and listing.entries == list_files(tree)  # the parent still got its events
    assert listing._watched


def test_an_unwatchable_file_system_gets_no_watcher(monkeypatch: pytest.MonkeyPatch, tree: Path) -> None:
    monkeypatch.setattr(inotify, "fs_type", lambda path: "nfs")
    listing = Listing(tree)
    assert listing.refresh() and listing.watcher is None
    (tree / "a.py").write_text("# edited in place, longer\n")
    assert listing.refresh() and listing.entries == list_files(tree)


def test_a_workspace_leaving_the_registry_releases_its_watcher(tmp_path: Path) -> None:
    from ctxagent.fetch.cache import MAX_WORKSPACES, workspace_cache

    roots = [tmp_path / f"ws{i}" for i in range(MAX_WORKSPACES + 1)]
    for root in roots:
        root.mkdir()
    first = workspace_cache(roots[0])
    assert first.listing.watcher is not None
    for root in roots[1:]:
        workspace_cache(root)
    assert first.listing.watcher is None  # closed: one inotify instance less
    (roots[0] / "a.py").write_text("still seen\n")
    entries, _ = first.sync()
    assert [e.rel for e in entries] == ["a.py"]

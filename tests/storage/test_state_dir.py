"""`ensure_state_dir` / `state_dir` and the write primitives (breaker F5, F16).

F5: every creator of `.ctxagent/` leaves a `.gitignore` of `*` in it, even one that only
calls a write primitive (atomic write, JSONL append, file lock, SQLite).
F16: a cloned repository must not choose where ctxagent writes: a `.ctxagent` that is a
symbolic link, or holds one (at any depth on the way to a file we write), is refused
with a StorageError and nothing is written to the link's target.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxagent.errors import StorageError
from ctxagent.storage.files import (
    append_jsonl,
    atomic_write_bytes,
    atomic_write_text,
    ensure_state_dir,
    file_lock,
    refuse_links_below,
    state_dir,
    write_json_with_backup,
)
from ctxagent.storage.sqlite import connect_sqlite

#: Everything ctxagent keeps directly in `.ctxagent/` (docs/state.md and the CLI).
ENTRIES = ["notes", "sessions", "snapshots", "backups", "knowledge", "memory.db", "memory.db-wal",
           "memory.db-shm", "todos.json", "todos.json.bak", "todos.json.lock", "chat_history", "config.toml"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "victim"
    folder.mkdir()
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_F5_ensure_state_dir_creates_the_folder_with_a_gitignore(repo: Path) -> None:
    folder = ensure_state_dir(repo)
    assert folder == repo / ".ctxagent" and folder.is_dir()
    assert (folder / ".gitignore").read_text() == "*\n"
    assert ensure_state_dir(repo) == folder  # idempotent


def test_F5_a_gitignore_is_added_to_an_existing_state_dir_and_a_changed_one_is_kept(repo: Path) -> None:
    (repo / ".ctxagent").mkdir()
    ensure_state_dir(repo)
    assert (repo / ".ctxagent" / ".gitignore").read_text() == "*\n"
    (repo / ".ctxagent" / ".gitignore").write_text("*\n!notes/\n")
    ensure_state_dir(repo)
    assert (repo / ".ctxagent" / ".gitignore").read_text() == "*\n!notes/\n"


WRITERS = {
    "atomic_write": lambda state: atomic_write_text(state / "backups" / "1" / "a.txt", "x"),
    "json_with_backup": lambda state: write_json_with_backup(state / "todos.json", {"items": []}),
    "append_jsonl": lambda state: append_jsonl(state / "sessions" / "s.jsonl", {"a": 1}),
    "file_lock": lambda state: file_lock(state / "notes" / "notes_index.json").acquire().lock.release(),
    "sqlite": lambda state: connect_sqlite(state / "knowledge" / "kb.db").close(),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_F5_every_write_primitive_into_the_state_dir_creates_the_gitignore(repo: Path, writer: str) -> None:
    WRITERS[writer](repo / ".ctxagent")
    assert (repo / ".ctxagent" / ".gitignore").read_text() == "*\n"


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_F5_relative_paths_into_the_state_dir_also_get_the_gitignore(repo: Path, writer: str, monkeypatch) -> None:
    monkeypatch.chdir(repo)
    WRITERS[writer](Path(".ctxagent"))
    assert (repo / ".ctxagent" / ".gitignore").is_file()


def test_writes_outside_a_state_dir_are_left_alone(repo: Path) -> None:
    atomic_write_text(repo / "plain" / "a.txt", "x")
    append_jsonl(repo / "log.jsonl", {"a": 1})
    assert listing(repo) == ["log.jsonl", "plain", "plain/a.txt"]


def test_F16_a_symlinked_state_dir_is_refused_and_nothing_reaches_its_target(repo: Path, outside: Path) -> None:
    (repo / ".ctxagent").symlink_to(outside, target_is_directory=True)
    for call in (lambda: ensure_state_dir(repo), lambda: state_dir(repo), *(
            (lambda w=w: w(repo / ".ctxagent")) for w in WRITERS.values())):
        with pytest.raises(StorageError, match="symbolic link"):
            call()
    assert listing(outside) == []


def test_F16_the_refusal_says_what_to_do(repo: Path, outside: Path) -> None:
    (repo / ".ctxagent").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StorageError) as caught:
        ensure_state_dir(repo)
    assert str(outside) in str(caught.value) and "Remove the link" in str(caught.value)


@pytest.mark.parametrize("entry", ENTRIES)
def test_F16_a_symlink_inside_the_state_dir_is_refused(repo: Path, outside: Path, entry: str) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / entry).symlink_to(outside / entry)
    for call in (lambda: ensure_state_dir(repo), lambda: state_dir(repo)):
        with pytest.raises(StorageError, match=f"{entry} inside it is a symbolic link"):
            call()
    assert listing(outside) == []


def test_F16_a_dangling_symlink_inside_is_refused_too(repo: Path, tmp_path: Path) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "memory.db").symlink_to(tmp_path / "nowhere" / "memory.db")
    with pytest.raises(StorageError, match="memory.db inside it"):
        connect_sqlite(repo / ".ctxagent" / "memory.db")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("deep", ["snapshots/20260101-000000-abcd", "backups/20260101-000000", "notes/sub"])
def test_F16_a_symlink_deeper_in_the_state_dir_is_refused_by_every_writer(repo: Path, outside: Path, deep: str) -> None:
    link = repo / ".ctxagent" / deep
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    for write in (lambda: atomic_write_text(link / "1.json", "{}"), lambda: append_jsonl(link / "x.jsonl", {}),
                  lambda: file_lock(link / "x").acquire(), lambda: connect_sqlite(link / "x.db")):
        with pytest.raises(StorageError, match="symbolic link"):
            write()
    assert listing(outside) == []


@pytest.mark.parametrize("name", ["s.jsonl", "todos.json.lock", "x.db-wal"])
def test_F16_a_symlinked_file_is_never_appended_locked_or_used_as_a_sqlite_sidecar(
        repo: Path, outside: Path, name: str) -> None:
    target = outside / "precious.txt"
    target.write_text("keep me\n")
    folder = repo / ".ctxagent" / "sessions"
    folder.mkdir(parents=True)
    (folder / name).symlink_to(target)
    with pytest.raises(StorageError, match="symbolic link"):
        if name.endswith(".jsonl"):
            append_jsonl(folder / name, {"a": 1})
        elif name.endswith(".lock"):
            file_lock(folder / name[: -len(".lock")]).acquire()
        else:
            connect_sqlite(folder / "x.db")
    assert target.read_text() == "keep me\n"


def test_F16_atomic_write_replaces_a_symlinked_file_instead_of_writing_through_it(repo: Path, outside: Path) -> None:
    target = outside / "precious.txt"
    target.write_text("keep me\n")
    (repo / "a.txt").symlink_to(target)
    atomic_write_text(repo / "a.txt", "new\n")
    assert target.read_text() == "keep me\n" and not (repo / "a.txt").is_symlink()


def test_F16_a_state_dir_that_is_a_file_is_refused_clearly(repo: Path) -> None:
    (repo / ".ctxagent").write_text("not a folder")
    with pytest.raises(StorageError, match="is not a folder"):
        ensure_state_dir(repo)
    assert state_dir(repo) == repo / ".ctxagent"  # readers simply find nothing


def test_F16_a_state_dir_reached_through_a_symlinked_repo_path_is_fine(tmp_path: Path, repo: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo, target_is_directory=True)
    assert ensure_state_dir(alias) == alias / ".ctxagent"
    assert (repo / ".ctxagent" / ".gitignore").is_file()


def test_refuse_links_below_checks_each_existing_part(repo: Path, outside: Path) -> None:
    (repo / "a").mkdir()
    (repo / "a" / "b").symlink_to(outside, target_is_directory=True)
    assert refuse_links_below(repo, repo / "a" / "c" / "d") == repo / "a" / "c" / "d"
    with pytest.raises(StorageError, match="b: it is a symbolic link|b.*symbolic link"):
        refuse_links_below(repo, repo / "a" / "b" / "d")


def test_F6_atomic_write_handles_any_name_the_file_system_accepts(tmp_path: Path) -> None:
    for name in ("n" * 255, "é" * 127, "名" * 85):
        assert len(os.fsencode(name)) <= 255
        atomic_write_bytes(tmp_path / name, b"x")
        assert (tmp_path / name).read_bytes() == b"x"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_F6_atomic_write_of_an_impossible_name_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="could not write"):
        atomic_write_bytes(tmp_path / ("n" * 256), b"x")
    assert list(tmp_path.iterdir()) == []

"""Note storage cases: S01b (damaged index), S02 (titles YAML misreads), S03 (ids are
not paths), human edits of the Markdown files, and concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import warnings
from pathlib import Path

import pytest
import yaml

from ctxagent.errors import ToolInputError
from ctxagent.tools import NoteTool

S02_TITLES = [
    "Governance: Manifest-Diff Prompt",
    "L2 Core (Split: Core)",
    "- leading dash",
    "# hash",
    "yes",
    "null",
    "it's \"quoted\"",
    "key: [a, b]",
    "first line\nsecond line",
]
# Neighbours: other scalars YAML resolves to non-strings, flow/anchor/tag syntax,
# document markers, control characters and separators.
S02_NEIGHBOURS = [
    "no", "on", "off", "true", "False", "~", "NULL", "123", "0x1F", "1e3", "0o17", ".inf", "-.5",
    "2025-01-19", "2025-01-19T15:30:00", "12:30:45", "{a: 1}", "[x]", "*alias", "&anchor", "!tag",
    "!!python/object:os.system", "%YAML", "@at", "`tick", "|", ">", "?", ":", "a #not comment",
    "---", "...", "line\n---\nafter the marker", "tab\there", "crlf\r\nline", " padded ",
    "trailing colon:", "\u2028sep", "nel\x85char", "bom\ufeff", "中文标题：冒号", "emoji 🚀",
]


@pytest.fixture
def notes(tmp_path: Path) -> NoteTool:
    return NoteTool(workspace=tmp_path / "notes")


def _create(tool: NoteTool, title: str = "t", content: str = "body", **extra: object) -> str:
    return tool.run({"action": "create", "title": title, "content": content, **extra})


# ---------------------------------------------------------------- S02

@pytest.mark.parametrize("title", S02_TITLES + S02_NEIGHBOURS)
def test_S02_title_reads_back_exactly_as_a_string(notes: NoteTool, title: str) -> None:
    note_id = _create(notes, title, tags=[title.strip() or "t"])
    for reader in (notes, NoteTool(workspace=notes.workspace)):  # cached and fresh
        meta = reader.run({"action": "read", "note_id": note_id})["metadata"]
        assert meta["title"] == title and isinstance(meta["title"], str)
        assert meta["tags"] == [title.strip() or "t"]
        assert [r["title"] for r in reader.run({"action": "list"})] == [title]
    raw = (notes.workspace / f"{note_id}.md").read_text(encoding="utf-8")
    front = raw.split("\n---\n", 1)[0][4:]
    assert yaml.safe_load(front)["title"] == title  # any YAML reader agrees


@pytest.mark.parametrize("title", S02_TITLES)
def test_S02_titles_survive_update_and_index_rebuild(notes: NoteTool, title: str) -> None:
    note_id = _create(notes, "placeholder")
    notes.run({"action": "update", "note_id": note_id, "title": title})
    (notes.workspace / "notes_index.json").unlink()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        rows = NoteTool(workspace=notes.workspace).run({"action": "list"})
    assert rows[0]["title"] == title


def test_S02_body_with_front_matter_markers_round_trips(notes: NoteTool) -> None:
    body = "---\ntitle: fake\n---\n\nreal text\r\nwith CRLF\n..."
    note_id = _create(notes, "t", body)
    fresh = NoteTool(workspace=notes.workspace)
    note = fresh.run({"action": "read", "note_id": note_id})
    assert note["content"] == body and note["metadata"]["title"] == "t"


# ---------------------------------------------------------------- S03

S03_IDS = ["../../outside", "/etc/passwd", "note\x00id"]
S03_NEIGHBOURS = ["..", ".", "../outside", "sub/../outside", "./note", "note/x", "..\\outside",
                  "C:\\outside", "outside.md", "~root", "note id", "-rf", "ｎote", "note\n", "a" * 101,
                  "", "%2e%2e%2foutside", "\x00"]


@pytest.mark.parametrize("bad_id", S03_IDS + S03_NEIGHBOURS)
@pytest.mark.parametrize("action", ["read", "update", "delete"])
def test_S03_ids_that_are_paths_are_refused(tmp_path: Path, action: str, bad_id: str) -> None:
    notes = NoteTool(workspace=tmp_path / "a" / "b" / "notes")
    kept = _create(notes, "kept")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: secret\n---\nsecret\n", encoding="utf-8")
    (tmp_path / "a" / "outside.md").write_text("secret too", encoding="utf-8")
    result = notes.execute({"action": action, "note_id": bad_id, "title": "x"})
    assert not result.ok and "secret" not in result.content
    assert outside.read_text(encoding="utf-8").endswith("secret\n")
    assert (tmp_path / "a" / "outside.md").exists()
    assert [r["note_id"] for r in notes.run({"action": "list"})] == [kept]
    with pytest.raises(ToolInputError):
        notes.run({"action": action, "note_id": bad_id, "title": "x"})


@pytest.mark.parametrize("action", ["read", "update", "delete"])
def test_S03_well_formed_ids_of_other_files_are_not_found(notes: NoteTool, action: str) -> None:
    _create(notes, "kept")
    (notes.workspace / "outside.txt").write_text("x", encoding="utf-8")
    for other in ("notes_index", "outside"):
        result = notes.execute({"action": action, "note_id": other, "title": "x"})
        assert not result.ok and "does not exist" in result.content
    assert (notes.workspace / "notes_index.json").exists() and (notes.workspace / "outside.txt").exists()


def test_S03_symlinked_note_file_is_ignored(notes: NoteTool, tmp_path: Path) -> None:
    _create(notes, "real")
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: secret\n---\nsecret\n", encoding="utf-8")
    os.symlink(secret, notes.workspace / "note_link.md")
    assert [r["title"] for r in notes.run({"action": "list"})] == ["real"]
    assert not notes.execute({"action": "read", "note_id": "note_link"}).ok
    assert not notes.execute({"action": "delete", "note_id": "note_link"}).ok
    assert secret.exists()


# ---------------------------------------------------------------- S01b

def _listing_with_warnings(folder: Path) -> tuple[list[str], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = NoteTool(workspace=folder).run({"action": "list", "limit": 200})
    return sorted(r["title"] for r in rows), [str(w.message) for w in caught]


@pytest.mark.parametrize("damage", [
    b'{"version": 1, "notes": {"note_2025', b"", b"\x00\x00\x00", b"[]", b'{"notes": []}',
    b'{"version": 1, "notes": {"x": {"id": 1}}}', b"\xff\xfe garbage",
])
def test_S01b_damaged_index_is_set_aside_and_rebuilt_from_files(notes: NoteTool, damage: bytes) -> None:
    _create(notes, "one")
    _create(notes, "two")
    index = notes.workspace / "notes_index.json"
    for name in ("notes_index.json", "notes_index.json.bak"):
        (notes.workspace / name).write_bytes(damage)
    titles, messages = _listing_with_warnings(notes.workspace)
    assert titles == ["one", "two"]
    assert any("rebuilt" in m for m in messages)
    aside = sorted(notes.workspace.glob("notes_index.json.corrupt-*"))
    assert aside and all(p.read_bytes() == damage for p in aside)
    assert len(json.loads(index.read_text(encoding="utf-8"))["notes"]) == 2


def test_S01b_corrupt_index_falls_back_to_bak_then_catches_up(notes: NoteTool) -> None:
    _create(notes, "one")
    _create(notes, "two")  # .bak now holds the index with "one" only
    (notes.workspace / "notes_index.json").write_text('{"version": 1, "no', encoding="utf-8")
    titles, messages = _listing_with_warnings(notes.workspace)
    assert titles == ["one", "two"]
    assert any("unreadable" in m for m in messages)


def test_S01b_missing_index_is_rebuilt_with_a_warning(notes: NoteTool) -> None:
    _create(notes, "one")
    (notes.workspace / "notes_index.json").unlink()
    (notes.workspace / "notes_index.json.bak").unlink(missing_ok=True)
    titles, messages = _listing_with_warnings(notes.workspace)
    assert titles == ["one"] and any("rebuilt from 1 note files" in m for m in messages)


def test_S01b_stale_index_follows_the_files(notes: NoteTool) -> None:
    gone = _create(notes, "gone")
    _create(notes, "stays")
    index_bytes = (notes.workspace / "notes_index.json").read_bytes()
    (notes.workspace / f"{gone}.md").unlink()
    (notes.workspace / "notes_index.json").write_bytes(index_bytes)
    assert _listing_with_warnings(notes.workspace)[0] == ["stays"]


def test_S01b_malformed_note_file_is_skipped_with_warning_and_kept(notes: NoteTool) -> None:
    _create(notes, "good")
    bad = notes.workspace / "note_20250101_000000_bad.md"
    for text in ("no front matter at all", "---\ntitle: [unclosed\n---\nbody", "---\ntitle: x\n",
                 "---\n- a list\n---\n"):
        bad.write_text(text, encoding="utf-8")
        titles, messages = _listing_with_warnings(notes.workspace)
        assert titles == ["good"] and any("note_20250101_000000_bad" in m for m in messages)
        assert bad.read_text(encoding="utf-8") == text


def test_leftover_temporary_files_are_ignored(notes: NoteTool) -> None:
    note_id = _create(notes, "real")
    (notes.workspace / f".{note_id}.md.abc123.tmp").write_text("---\ntitle: half", encoding="utf-8")
    (notes.workspace / ".notes_index.json.x.tmp").write_text("{", encoding="utf-8")
    assert _listing_with_warnings(notes.workspace) == (["real"], [])


# ---------------------------------------------------------------- human edits

def test_human_edit_of_body_and_title_is_picked_up(notes: NoteTool) -> None:
    note_id = _create(notes, "Original", "old body", note_type="action", tags=["a"])
    assert notes.run({"action": "list"})[0]["content"] == "old body"
    path = notes.workspace / f"{note_id}.md"
    text = path.read_text(encoding="utf-8").replace("title: Original", "title: yes").replace(
        "old body", "hand-written body that is longer")
    path.write_text(text, encoding="utf-8")
    note = notes.run({"action": "read", "note_id": note_id})
    assert note["metadata"]["title"] == "yes" and note["content"] == "hand-written body that is longer"
    assert notes.run({"action": "search", "query": "hand written"})[0]["note_id"] == note_id


def test_human_written_note_file_is_picked_up(notes: NoteTool) -> None:
    _create(notes, "machine")
    (notes.workspace / "note_20250119_153000_0.md").write_text(
        "---\nid: note_20250119_153000_0\ntitle: Project Progress - Phase 1\ntype: task_state\n"
        "tags: [refactoring, phase1]\ncreated_at: 2025-01-19T15:30:00\nupdated_at: 2025-01-19T15:30:00\n"
        "---\n\n# Project Progress\n\nDone.\n", encoding="utf-8")
    rows = notes.run({"action": "list"})
    assert [r["title"] for r in rows] == ["machine", "Project Progress - Phase 1"]
    human = rows[1]
    assert human["tags"] == ["refactoring", "phase1"] and human["updated_at"] == "2025-01-19T15:30:00"
    assert human["content"] == "# Project Progress\n\nDone."
    notes.run({"action": "update", "note_id": human["note_id"], "content": "edited by the agent"})
    assert notes.run({"action": "read", "note_id": human["note_id"]})["content"] == "edited by the agent"


def test_human_removal_of_a_file_is_picked_up(notes: NoteTool) -> None:
    note_id = _create(notes, "doomed")
    notes.run({"action": "list"})
    (notes.workspace / f"{note_id}.md").unlink()
    assert notes.run({"action": "list"}) == []
    assert notes.run({"action": "summary"})["total_notes"] == 0


# ---------------------------------------------------------------- concurrency

def test_concurrent_threads_lose_no_note(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        tool = NoteTool(workspace=folder)
        try:
            for i in range(5):
                note_id = _create(tool, f"t{n}-{i}")
                tool.run({"action": "update", "note_id": note_id, "tags": [f"w{n}"]})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _listing_with_warnings(folder) == (sorted(f"t{n}-{i}" for n in range(4) for i in range(5)), [])
    index = json.loads((folder / "notes_index.json").read_text(encoding="utf-8"))
    assert len(index["notes"]) == 20


def _process_writer(folder: str, n: int) -> None:
    tool = NoteTool(workspace=folder)
    for i in range(6):
        _create(tool, f"p{n}-{i}")


def test_concurrent_processes_lose_no_note(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_process_writer, args=(str(folder), n)) for n in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    titles, messages = _listing_with_warnings(folder)
    assert titles == sorted(f"p{n}-{i}" for n in range(3) for i in range(6)) and messages == []
    index = json.loads((folder / "notes_index.json").read_text(encoding="utf-8"))
    assert len(index["notes"]) == 18


def test_stale_temporary_files_of_dead_writers_are_swept(notes: NoteTool) -> None:
    _create(notes, "first")
    old = notes.workspace / ".note_x.md.abc.tmp"
    fresh = notes.workspace / ".notes_index.json.def.tmp"
    for path in (old, fresh):
        path.write_text("partial", encoding="utf-8")
    os.utime(old, (1, 1))
    _create(notes, "second")
    assert not old.exists() and fresh.exists()

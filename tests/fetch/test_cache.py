"""The per-workspace index and result cache: a change to any file is seen at once."""

from __future__ import annotations

import os
from pathlib import Path

from ctxagent.fetch.cache import LRU, invalidate, workspace_cache
from ctxagent.fetch.search import FileQuery, fetch_files


def _fetch(root: Path, query: str) -> dict:
    return fetch_files(root, FileQuery(query, None, 5, 800, None))


def _paths(result: dict) -> list[str]:
    return [g["path"] for g in result["files"]]


def test_same_query_is_served_from_cache(repo: Path) -> None:
    first = _fetch(repo, "progress bar refresh")
    second = _fetch(repo, "progress bar refresh")
    assert (first["cached"], second["cached"]) == (False, True)
    assert second["files"] == first["files"]
    second["files"].clear()  # callers get copies
    assert _fetch(repo, "progress bar refresh")["files"] == first["files"]


def test_edited_file_invalidates_results(repo: Path) -> None:
    assert "ui/table.py" not in _paths(_fetch(repo, "zebra stripes"))
    with open(repo / "ui" / "table.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef zebra_stripes(table):\n    return table\n")
    result = _fetch(repo, "zebra stripes")
    assert result["cached"] is False
    assert _paths(result)[0] == "ui/table.py"
    assert any("zebra_stripes" in h["text"] for h in result["files"][0]["hits"])


def test_new_and_deleted_files_are_seen(repo: Path) -> None:
    _fetch(repo, "backoff")
    (repo / "net" / "retry.py").unlink()
    (repo / "net" / "pause.py").write_text("def backoff_pause():\n    pass\n", encoding="utf-8")
    assert _paths(_fetch(repo, "backoff")) == ["net/pause.py"]


def test_invalidate_rereads_a_change_the_signature_cannot_see(repo: Path) -> None:
    path = repo / "config" / "loader.py"
    _fetch(repo, "quux settings")
    st = path.stat()
    text = path.read_text(encoding="utf-8").replace("settings", "quuxings", 1)
    with open(path, "r+", encoding="utf-8") as fh:  # same inode, same size, same mtime
        fh.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    question = "quuxes"  # stems like "quuxings" but is not in the file: only the index finds it
    assert _paths(_fetch(repo, question)) == []  # stale index: nothing could tell
    invalidate(repo, ["config/loader.py"])
    assert _paths(_fetch(repo, question)) == ["config/loader.py"]


def test_invalidate_all_workspaces_clears_results(repo: Path) -> None:
    _fetch(repo, "table row")
    invalidate()
    assert _fetch(repo, "table row")["cached"] is False
    assert len(workspace_cache(repo).results) == 1


def test_lru_evicts_least_recently_used() -> None:
    lru = LRU(maxsize=2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c")) == (1, None, 3)

"""The on-disk context_fetch index (issue 16): kept in `.ctxagent/index/fetch.db` when the
workspace has a state folder, in memory otherwise; shared by processes, updated from file
signatures, rebuilt when damaged. Processes are real interpreters (`python -c`)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ctxagent.fetch.cache import INDEX_PATH, open_store
from ctxagent.fetch.rank import WorkspaceIndex
from ctxagent.fetch.search import FileQuery, fetch_files
from ctxagent.fetch.store import IndexStore
from ctxagent.fetch.walk import list_files

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import json, sys\nfrom pathlib import Path\nfrom ctxagent.fetch.search import FileQuery, fetch_files\n"
         "r = fetch_files(Path(sys.argv[1]), FileQuery(sys.argv[2], None, 5, 800, None))\n"
         "print(json.dumps({'paths': [g['path'] for g in r['files']], 'updated': r['updated'], "
         "'indexed': r['indexed']}))\n")


def fetch_in_new_process(repo: Path, query: str) -> dict:
    """One context_fetch files call in a fresh interpreter: its paths, files updated, files indexed."""
    proc = subprocess.run([sys.executable, "-c", PROBE, str(repo), query], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def stateful(repo: Path) -> Path:
    """The fixture repository with a `.ctxagent/` folder, as an agent session leaves it."""
    (repo / ".ctxagent").mkdir()
    return repo


def test_a_fresh_process_reuses_the_index_on_disk(stateful: Path) -> None:
    n_files = len(list_files(stateful))
    first = fetch_in_new_process(stateful, "where are progress bars refreshed?")
    assert (stateful / ".ctxagent" / INDEX_PATH).is_file()
    assert first["updated"] == first["indexed"] == n_files
    second = fetch_in_new_process(stateful, "where are progress bars refreshed?")
    assert second == {**first, "updated": 0}  # nothing re-read, same answer


def test_only_changed_files_are_read_again(stateful: Path) -> None:
    fetch_in_new_process(stateful, "backoff")
    (stateful / "ui" / "table.py").write_text("def zebra_stripes(table):\n    return table\n", encoding="utf-8")
    (stateful / "net" / "retry.py").unlink()
    seen = fetch_in_new_process(stateful, "zebra stripes")
    assert seen["updated"] == 2 and seen["paths"][0] == "ui/table.py"
    assert "net/retry.py" not in fetch_in_new_process(stateful, "backoff jitter")["paths"]


def test_concurrent_processes_share_one_index(stateful: Path) -> None:
    query = "how long do we wait between retries? exponential backoff"
    procs = [subprocess.Popen([sys.executable, "-c", PROBE, str(stateful), query], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    answers = [json.loads(out) for out, _ in outs]
    n_files = len(list_files(stateful))
    assert sum(a["updated"] for a in answers) == n_files  # each file indexed by exactly one of them
    assert {tuple(a["paths"]) for a in answers} == {tuple(answers[0]["paths"])}
    assert answers[0]["paths"][0] == "net/retry.py"
    conn = sqlite3.connect(stateful / ".ctxagent" / INDEX_PATH)
    chunks, rows = conn.execute("SELECT sum(n_chunks), (SELECT count(*) FROM chunk_fts) FROM files").fetchone()
    assert chunks == rows and conn.execute("SELECT count(*) FROM files").fetchone()[0] == n_files


def test_without_a_state_folder_the_index_is_in_memory(repo: Path) -> None:
    result = fetch_files(repo, FileQuery("add a row to a table", None, 5, 800, None))
    assert result["files"][0]["path"] == "ui/table.py"
    assert not (repo / ".ctxagent").exists()


def test_a_linked_state_folder_is_never_written(repo: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (repo / ".ctxagent").symlink_to(victim, target_is_directory=True)
    assert open_store(repo).path is None
    assert fetch_files(repo, FileQuery("add a row", None, 5, 800, None))["files"]
    assert list(victim.iterdir()) == []


@pytest.mark.parametrize("question,target", [("如何优化Pandas的内存占用?", "zh/内存优化.md"),
                                             ("网络请求失败怎么重试", "zh/网络重试.md")])
def test_chinese_questions_rank_from_the_disk_index(stateful: Path, question: str, target: str) -> None:
    index = WorkspaceIndex(open_store(stateful))
    index.refresh(list_files(stateful))
    assert index.store.path is not None
    assert index.rank(question, limit=3)[0].rel == target


def test_a_damaged_index_is_set_aside_and_rebuilt(stateful: Path) -> None:
    path = stateful / ".ctxagent" / INDEX_PATH
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fetch_files(stateful, FileQuery("add a row to a table", None, 5, 800, None))
    assert result["files"][0]["path"] == "ui/table.py"
    assert any("damaged" in str(w.message) for w in caught)
    assert list(path.parent.glob("fetch.db.corrupt-*"))


def test_an_index_built_by_another_tokenizer_is_rebuilt(stateful: Path) -> None:
    path = stateful / ".ctxagent" / INDEX_PATH
    store = IndexStore(path)
    WorkspaceIndex(store).refresh(list_files(stateful))
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'older terms' WHERE key = 'terms'")
    conn.commit()
    conn.close()
    index = WorkspaceIndex(IndexStore(path))
    assert len(index) == 0  # its terms would no longer match queries
    assert index.refresh(list_files(stateful)) == len(list_files(stateful))

"""Ranking: natural-language questions bring the right file first (fixture repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.fetch.chunks import split_chunks
from ctxagent.fetch.rank import WorkspaceIndex, path_terms
from ctxagent.fetch.walk import list_files

QUESTIONS = [
    ("where are progress bars refreshed?", "ui/progress_bar.py"),
    ("how long do we wait between retries? exponential backoff", "net/retry.py"),
    ("where are settings loaded from environment variables?", "config/loader.py"),
    ("add a row to a table", "ui/table.py"),
    ("如何优化Pandas的内存占用?", "zh/内存优化.md"),
    ("网络请求失败怎么重试", "zh/网络重试.md"),
]


def _index(root: Path) -> WorkspaceIndex:
    index = WorkspaceIndex()
    index.refresh(list_files(root))
    return index


@pytest.mark.parametrize("question,target", QUESTIONS)
def test_question_ranks_right_file_first(repo: Path, question: str, target: str) -> None:
    ranked = _index(repo).rank(question, limit=5)
    assert ranked[0].rel == target
    assert ranked[0].score == 1.0
    assert all(0 < r.score <= 1.0 for r in ranked)
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_best_chunk_is_the_matching_definition(repo: Path) -> None:
    top = _index(repo).rank("where are progress bars refreshed?", limit=1)[0]
    chunk, _ = top.chunks[0]
    assert (chunk.name, chunk.parent) == ("refresh", "ProgressBar")


def test_allowed_restricts_and_literal_boosts(repo: Path) -> None:
    index = _index(repo)
    only_md = {e.rel for e in list_files(repo, "*.md")}
    assert {r.rel for r in index.rank("retry", allowed=only_md)} <= only_md
    boosted = index.rank("table", literal={"README.md"}, limit=1)
    assert boosted[0].rel == "README.md"


def test_unrelated_query_returns_nothing(repo: Path) -> None:
    assert _index(repo).rank("zyzzyva quokka") == []


def test_refresh_rereads_only_changed_files(repo: Path) -> None:
    index = WorkspaceIndex()
    assert index.refresh(list_files(repo)) == len(list_files(repo))
    assert index.refresh(list_files(repo)) == 0
    (repo / "ui" / "table.py").write_text("def zebra_stripes():\n    pass\n", encoding="utf-8")
    (repo / "net" / "retry.py").unlink()
    assert index.refresh(list_files(repo)) == 2
    assert index.rank("zebra stripes")[0].rel == "ui/table.py"
    assert all(r.rel != "net/retry.py" for r in index.rank("backoff jitter"))


def test_forget_forces_reread_of_same_signature(repo: Path) -> None:
    index = WorkspaceIndex()
    index.refresh(list_files(repo))
    index.forget(["ui/table.py"])
    assert index.refresh(list_files(repo)) == 1


def test_chunks_cover_methods_with_their_class() -> None:
    text = "import x\n\nclass A:\n    y = 1\n    def f(self):\n        pass\nasync def g():\n    pass\n"
    chunks = split_chunks(text)
    assert [(c.name, c.parent, c.start) for c in chunks] == [("", "", 0), ("A", "", 2), ("f", "A", 4), ("g", "", 6)]
    assert chunks[-1].end == len(text.split("\n"))


@pytest.mark.parametrize("line,name", [
    ("export async function loadUser(id) {", "loadUser"),
    ("func (r *Reader) Read(p []byte) (int, error) {", "Read"),
    ("pub(crate) fn parse_patch(text: &str) -> Result<Patch> {", "parse_patch"),
    ("public static class Builder {", "Builder"),
])
def test_chunks_find_definitions_in_other_languages(line: str, name: str) -> None:
    assert split_chunks(f"x\n{line}\n  body\n")[1].name == name


def test_markdown_chunks_nest_under_headings() -> None:
    chunks = split_chunks("# Guide\ntext\n## Install\npip\n# Other\n", markdown=True)
    assert [(c.name, c.parent) for c in chunks] == [("Guide", ""), ("Install", "Guide"), ("Other", "")]


def test_long_chunks_are_windowed() -> None:
    chunks = split_chunks("def f():\n" + "    x = 1\n" * 400)
    assert len(chunks) > 1 and all(c.end - c.start <= 150 for c in chunks)
    assert {c.name for c in chunks} == {"f"}


def test_path_terms_split_folders_and_identifiers() -> None:
    assert path_terms("ui/progress_bar.py") == ["ui", "progress_bar", "progress", "bar"]


@pytest.mark.parametrize("name", ["ui/table.py", "README.md", "zh/内存优化.md"])
def test_a_files_terms_are_its_text_terms_then_names_and_path(repo: Path, name: str) -> None:
    from ctxagent.fetch.rank import index_file
    from ctxagent.text.terms import terms

    text = (repo / name).read_text(encoding="utf-8")
    doc = index_file(name, text, (0, 0, 0))
    assert doc.file_terms[: len(terms(text))] == terms(text)

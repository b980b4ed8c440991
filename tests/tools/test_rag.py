"""The `rag` tool: add documents and text, cited search, stats, clear; textbook calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import NotFoundError, ToolInputError, ToolRefusedError
from ctxagent.tools import RAGTool
from tests.rag.tiny_pdf import write_pdf

GUIDE = """# Deployment guide

Read this before shipping.

## Rollback

To roll back a release, run `deploy rollback --to PREVIOUS` and watch the health checks.

## 内存优化

Pandas内存优化: convert string columns to category dtype.
"""


@pytest.fixture
def rag(tmp_path: Path) -> RAGTool:
    return RAGTool(knowledge_base_path=tmp_path / "kb")


def test_markdown_document_is_cited_by_source_lines_and_heading(rag: RAGTool, tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(GUIDE, encoding="utf-8")
    added = rag.run({"action": "add_document", "file_path": str(doc), "chunk_size": 40, "chunk_overlap": 5})
    assert added["success"] and added["kind"] == "markdown" and added["chunks"] >= 2
    hit = rag.run({"action": "search", "query": "how do I roll back a release?"})[0]
    assert hit["source"] == str(doc.resolve()) and hit["heading"].endswith("Rollback")
    lines = GUIDE.split("\n")
    assert "\n".join(lines[hit["start_line"] - 1:hit["end_line"]]) == hit["content"]
    assert "deploy rollback" in hit["content"] and hit["page"] is None
    assert {"source", "chunk_index", "start_line", "end_line", "page", "score", "content", "citation"} <= set(hit)
    assert rag.run({"action": "search", "query": "如何优化Pandas的内存占用?"})[0]["heading"].endswith("内存优化")


def test_pdf_made_here_is_indexed_and_cited_by_page(rag: RAGTool, tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "policy.pdf", [["Welcome to the store handbook."],
                                              ["Refund policy: customers may return items within 30 days.",
                                               "Keep the receipt."]])
    assert rag.run({"action": "add_document", "path": str(pdf)})["kind"] == "pdf"
    hit = rag.run({"action": "search", "query": "refund within how many days"})[0]
    assert hit["page"] == 2 and "30 days" in hit["content"] and "p.2" in hit["citation"]
    text = rag.execute({"action": "search", "query": "refund"}).content
    assert "[1]" in text and "p.2" in text


def test_code_document_is_chunked_by_lines(rag: RAGTool, tmp_path: Path) -> None:
    src = tmp_path / "calc.py"
    src.write_text("".join(f"def helper_{i}(x):\n    return x * {i}\n\n" for i in range(60)))
    rag.run({"action": "add_document", "file_path": str(src), "chunk_size": 50, "chunk_overlap": 10})
    hit = rag.run({"action": "search", "query": "helper_42"})[0]
    assert hit["kind"] == "code" and hit["start_line"] <= 127 <= hit["end_line"]


def test_readding_a_document_replaces_its_chunks_by_content_hash(rag: RAGTool, tmp_path: Path) -> None:
    doc = tmp_path / "notes.txt"
    doc.write_text("The old answer is blue.")
    first = rag.run({"action": "add_document", "file_path": str(doc)})
    again = rag.run({"action": "add_document", "file_path": str(doc)})
    assert again["unchanged"] and not first["unchanged"]
    doc.write_text("The new answer is green.")
    changed = rag.run({"action": "add_document", "file_path": str(doc)})
    assert changed["replaced"] and rag.run({"action": "stats"})["documents"] == 1
    assert rag.run({"action": "search", "query": "blue"}) == []
    assert rag.run({"action": "search", "query": "green"})[0]["content"] == "The new answer is green."
    rechunked = rag.run({"action": "add_document", "file_path": str(doc), "chunk_size": 32})
    assert rechunked["replaced"]  # same text, other chunking: rebuilt


def test_add_text_search_min_score_and_limit(rag: RAGTool) -> None:
    rag.run({"action": "add_text", "text": "Python was released by Guido van Rossum in 1991.",
             "document_id": "python_intro"})
    rag.run({"action": "add_text", "text": "Machine learning learns patterns from data; Python is popular.",
             "source": "ml.txt"})
    hits = rag.run({"action": "search", "query": "Guido Python 1991", "limit": 5})
    assert hits[0]["document_id"] == "python_intro" and hits[0]["score"] == 1.0
    assert len(hits) == 2 and hits[1]["score"] < 1.0
    assert len(rag.run({"action": "search", "query": "Guido Python 1991", "min_score": 0.9})) == 1
    assert len(rag.run({"action": "search", "query": "Python", "limit": 1})) == 1
    assert rag.run({"action": "search", "query": "quantum chromodynamics"}) == []


@pytest.mark.parametrize("query", ['"', "*", "NEAR(a b)", "-x", "a:b", 'title:"x" OR *'])
def test_fts_syntax_in_queries_is_data(rag: RAGTool, query: str) -> None:
    rag.run({"action": "add_text", "text": 'a:b title:"x" NEAR(a b) -x', "document_id": "odd"})
    result = rag.execute({"action": "search", "query": query})
    assert result.ok


def test_stats_and_clear_needs_confirmation(rag: RAGTool) -> None:
    rag.run({"action": "add_text", "text": "# Title\n\nbody", "document_id": "a"})
    rag.run({"action": "add_text", "text": "plain", "document_id": "b"})
    stats = rag.run({"action": "stats"})
    assert (stats["documents"], stats["chunks"], stats["kinds"]) == (2, 2, {"markdown": 1, "text": 1})
    refused = rag.execute({"action": "clear"})
    assert not refused.ok and "confirm: true" in refused.content
    assert rag.run({"action": "clear", "confirm": True}) == {"cleared": 2}
    assert rag.run({"action": "stats"})["documents"] == 0


def test_namespaces_and_collections_are_separate(tmp_path: Path) -> None:
    a = RAGTool(tmp_path / "kb", rag_namespace="a")
    b = RAGTool(tmp_path / "kb", rag_namespace="b")
    a.run({"action": "add_text", "text": "secret of a", "document_id": "x"})
    assert b.run({"action": "search", "query": "secret"}) == []
    assert RAGTool(tmp_path / "kb", collection_name="other", rag_namespace="a").run(
        {"action": "stats"})["documents"] == 0
    with pytest.raises(ToolInputError, match="collection_name"):
        RAGTool(tmp_path / "kb", collection_name="../escape")


@pytest.mark.parametrize("args, error, fragment", [
    ({"action": "add_document"}, ToolInputError, "file_path"),
    ({"action": "add_document", "file_path": "missing.md"}, NotFoundError, "no such file"),
    ({"action": "add_text", "text": "  "}, ToolInputError, "text"),
    ({"action": "search"}, ToolInputError, "query"),
    ({"action": "search", "query": "x", "limit": 0}, ToolInputError, "limit"),
    ({"action": "add_text", "text": "x", "chunk_size": 4}, ToolInputError, "chunk_size"),
    ({"action": "add_text", "text": "x", "chunk_size": 20, "chunk_overlap": 20}, ToolInputError, "chunk_overlap"),
    ({"action": "ask", "question": "why?"}, ToolInputError, "search"),
    ({"action": "delete_everything"}, ToolInputError, "action"),
])
def test_error_paths(rag: RAGTool, args: dict, error: type, fragment: str) -> None:
    result = rag.execute(args)
    assert not result.ok and fragment in result.content
    with pytest.raises(error):
        rag.run(args)


def test_agent_instance_reads_only_files_inside_the_repo(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "secret.txt"
    repo.mkdir()
    outside.write_text("password")
    (repo / "README.md").write_text("# Hello\n\nproject readme")
    rag = RAGTool.for_repo(repo)
    assert rag.kb.path == repo / ".ctxagent" / "knowledge" / "rag_knowledge_base.db"
    assert rag.run({"action": "add_document", "file_path": "README.md"})["chunks"] == 1
    assert rag.run({"action": "search", "query": "project readme"})[0]["citation"] == "README.md lines 1-3"
    assert rag.run({"action": "add_document", "file_path": str(repo / "README.md")})["unchanged"]
    for path in (str(outside), "../secret.txt"):
        with pytest.raises(ToolRefusedError, match="outside the workspace"):
            rag.run({"action": "add_document", "file_path": path})


def test_textbook_calls_run_apart_from_the_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rag_tool = RAGTool(knowledge_base_path="./knowledge_base", collection_name="test_collection",
                       rag_namespace="test")
    result1 = rag_tool.execute("add_text", text="Python is a high-level programming language first released by "
                               "Guido van Rossum in 1991.", document_id="python_intro")
    rag_tool.execute("add_text", text="RAG combines information retrieval and text generation.",
                     document_id="rag_concept")
    result = rag_tool.execute("search", query="History of Python programming language", limit=3, min_score=0.1)
    assert result1["success"] and result[0]["document_id"] == "python_intro"
    assert rag_tool.execute("stats")["documents"] == 2
    pdf = write_pdf(tmp_path / "book.pdf", [["Chapter one: transformers."]])
    loaded = rag_tool.execute("add_document", file_path=str(pdf), chunk_size=1000, chunk_overlap=200)
    assert loaded.get("success", False)
    failed = rag_tool.execute("add_document", file_path="nope.pdf")
    assert failed.get("success") is False and "no such file" in failed["error"]
    assert (tmp_path / "knowledge_base" / "test_collection.db").exists()


def test_context_engine_can_gather_rag_results(rag: RAGTool) -> None:
    from ctxagent.context.gather import gather

    rag.run({"action": "add_text", "text": "The API rate limit is 60 requests per minute.", "source": "api.md"})
    found = gather("what is the api rate limit", rag_tool=rag)
    assert found.sources["rag_tool"]["ok"] and "60 requests" in found.packets[0].content

"""Chunking: sizes in tokens, overlap, Markdown structure, code lines, exact line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.errors import ToolInputError
from ctxagent.rag.chunking import chunk_document, markdown_blocks
from ctxagent.rag.extract import Extracted, Segment
from ctxagent.text.tokens import estimate_tokens


def _doc(kind: str, text: str) -> Extracted:
    return Extracted(kind, "t", [Segment(text)])


MARKDOWN = """# Guide

Intro paragraph.

## Install

```bash
# a comment, not a heading

pip install ctxagent
```

## Use

Run it.
"""


def test_markdown_blocks_follow_headings_and_keep_fences_whole() -> None:
    blocks = markdown_blocks(MARKDOWN.split("\n"))
    assert [(b.start, b.end, b.heading) for b in blocks] == [
        (1, 1, "Guide"), (3, 3, "Guide"), (5, 5, "Guide > Install"), (7, 11, "Guide > Install"),
        (13, 13, "Guide > Use"), (15, 15, "Guide > Use")]


def test_chunk_content_is_exactly_the_cited_lines() -> None:
    lines = MARKDOWN.split("\n")
    for chunk in chunk_document(_doc("markdown", MARKDOWN), size=20, overlap=5):
        assert chunk.content == "\n".join(lines[chunk.start_line - 1:chunk.end_line])


def test_chunks_respect_the_token_size_and_overlap() -> None:
    text = "\n\n".join(f"Paragraph {i} talks about topic {i} in a few words." for i in range(40))
    chunks = chunk_document(_doc("text", text), size=60, overlap=20)
    assert len(chunks) > 5
    assert all(c.tokens <= 60 and estimate_tokens(c.content) <= 60 + 2 for c in chunks)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start_line <= a.end_line + 2  # neighbours share or touch
        assert b.start_line > a.start_line  # always progress
    assert any(b.start_line <= a.end_line for a, b in zip(chunks, chunks[1:]))  # overlap happened


def test_code_is_cut_on_line_boundaries() -> None:
    code = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(50))
    chunks = chunk_document(_doc("code", code), size=40, overlap=8)
    lines = code.split("\n")
    for chunk in chunks:
        assert chunk.content == "\n".join(lines[chunk.start_line - 1:chunk.end_line])
    assert chunks[0].start_line == 1 and chunks[-1].end_line >= len(lines) - 2


def test_one_huge_line_is_split_into_pieces_that_fit() -> None:
    chunks = chunk_document(_doc("text", "中" * 3000), size=100, overlap=0)
    assert len(chunks) > 20 and all(c.start_line == 1 for c in chunks)
    assert "".join(c.content for c in chunks) == "中" * 3000


def test_pdf_chunks_never_span_pages() -> None:
    doc = Extracted("pdf", "p", [Segment("alpha " * 50, 1), Segment("beta " * 50, 2)])
    chunks = chunk_document(doc, size=30, overlap=5)
    assert {c.page for c in chunks} == {1, 2}
    assert all(("alpha" in c.content) != ("beta" in c.content) for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))


@pytest.mark.parametrize("size, overlap", [(0, 0), (8, 0), (100, 100), (100, -1), (100.5, 10), (True, 0)])
def test_bad_sizes_are_refused(size: object, overlap: object) -> None:
    with pytest.raises(ToolInputError, match="chunk_"):
        chunk_document(_doc("text", "x"), size, overlap)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab 中\n#`", max_size=60), max_size=30), st.integers(16, 80),
       st.sampled_from(["markdown", "text", "code"]))
def test_every_non_blank_line_lands_in_some_chunk(parts: list[str], size: int, kind: str) -> None:
    text = "\n".join(parts)
    chunks = chunk_document(_doc(kind, text), size=size, overlap=size // 4)
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    lines = text.split("\n")
    assert all(n in covered for n, line in enumerate(lines, 1) if line.strip())

"""Text out of documents: kinds, encodings, binaries, PDF pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.rag.extract import decode, detect_kind, extract
from tests.rag.tiny_pdf import write_pdf


@pytest.mark.parametrize("name, kind", [("a.md", "markdown"), ("A.MARKDOWN", "markdown"), ("x.py", "code"),
                                        ("x.ts", "code"), ("Makefile", "code"), ("notes.txt", "text"),
                                        ("README", "text"), ("doc.PDF", "pdf")])
def test_kind_comes_from_the_suffix(name: str, kind: str) -> None:
    assert detect_kind(Path(name)) == kind


def test_text_encodings_and_line_endings() -> None:
    assert decode("\ufeffhé\r\nnext\rlast".encode("utf-8")) == "hé\nnext\nlast"
    assert decode("中文内容".encode("gb18030")) == "中文内容"
    assert decode(b"caf\xff") == "caf\xff"  # neither UTF-8 nor GB 18030: Latin-1, never an error


def test_binary_missing_and_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x01")
    with pytest.raises(ToolInputError, match="binary"):
        extract(tmp_path / "blob.bin")
    with pytest.raises(NotFoundError):
        extract(tmp_path / "missing.md")
    with pytest.raises(ToolInputError, match="not a file"):
        extract(tmp_path)


def test_pdf_gives_one_segment_per_page_numbered_from_one(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "guide.pdf", [["Intro page"], [], ["Refund policy: 30 days"]])
    doc = extract(pdf)
    assert doc.kind == "pdf" and doc.title == "guide"
    assert [(s.page, s.text.strip()) for s in doc.segments] == [(1, "Intro page"), (3, "Refund policy: 30 days")]


def test_broken_or_empty_pdf_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    with pytest.raises(ToolInputError, match="PDF"):
        extract(tmp_path / "broken.pdf")
    with pytest.raises(ToolInputError, match="no extractable text"):
        extract(write_pdf(tmp_path / "blank.pdf", [[]]))

"""Text out of a document: plain text, Markdown, source code and PDF (via pypdf).

`extract(path)` returns an `Extracted`: its kind (markdown, code, text or pdf) and its
segments, one per PDF page (numbered from 1) or a single segment for other files. Text
files are read as UTF-8 (a BOM is dropped), else GB 18030 (Chinese), else Latin-1, so
reading never fails on encoding; a file with NUL bytes in its first 8 KiB is binary and
refused. Line numbers later refer to lines of these segments, which for text files are
the file's own lines.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ctxagent.errors import NotFoundError, ToolInputError

MAX_FILE_BYTES = 50 * 1024 * 1024
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rst")
CODE_SUFFIXES = (
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".kt", ".scala", ".go", ".rs",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".m", ".lua", ".r", ".pl", ".sh",
    ".bash", ".zsh", ".sql", ".css", ".scss", ".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".xml",
    ".vue", ".svelte", ".dart", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".gradle", ".tf",
)
_ENCODINGS = ("utf-8-sig", "gb18030", "latin-1")


@dataclass
class Segment:
    """Text of a whole file, or of one PDF page (`page`, 1-based)."""

    text: str
    page: int | None = None


@dataclass
class Extracted:
    """A document's kind ("markdown" | "code" | "text" | "pdf"), title and segments."""

    kind: str
    title: str
    segments: list[Segment]

    def digest(self) -> str:
        """SHA-256 of the extracted text (pages separated by form feeds)."""
        return hashlib.sha256("\f".join(s.text for s in self.segments).encode("utf-8")).hexdigest()


def detect_kind(path: Path) -> str:
    """"pdf", "markdown", "code" or "text", from the file name's suffix."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return "pdf"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in CODE_SUFFIXES or path.name in ("Makefile", "Dockerfile"):
        return "code"
    return "text"


def extract(path: Path) -> Extracted:
    """Read `path`. Raises NotFoundError (missing), ToolInputError (folder, too large,
    binary, unreadable PDF)."""
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"no such file: {path}")
    if not path.is_file():
        raise ToolInputError(f"{path} is not a file; add the files in it one by one")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ToolInputError(f"{path} is {size} bytes; the knowledge base takes files up to {MAX_FILE_BYTES}")
    kind = detect_kind(path)
    if kind == "pdf":
        return Extracted(kind, path.stem, extract_pdf(path))
    return Extracted(kind, path.stem, [Segment(decode(path.read_bytes(), str(path)))])


def decode(data: bytes, name: str = "text") -> str:
    """Bytes -> str (module doc); line endings normalised to \\n. Raises ToolInputError if binary."""
    if b"\x00" in data[:8192]:
        raise ToolInputError(f"{name} looks binary (it has NUL bytes); add text, Markdown, code or PDF files")
    for encoding in _ENCODINGS:
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    return text.replace("\r\n", "\n").replace("\r", "\n")


def extract_pdf(path: Path) -> list[Segment]:
    """One segment per page with pypdf's text extraction (pages without text are skipped)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise ToolInputError(f"cannot read PDF {path}: {exc}") from None
    segments = [Segment(text.replace("\r\n", "\n").replace("\r", "\n"), n) for n, text in enumerate(pages, 1)
                if text.strip()]
    if not segments:
        raise ToolInputError(f"{path} has no extractable text (a scanned PDF needs OCR first)")
    return segments

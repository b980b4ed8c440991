"""Split extracted text into overlapping chunks that can be cited by line (and page).

Sizes in tokens (`ctxagent.text.tokens.estimate_tokens`); blocks are Markdown paragraphs
and headings, text paragraphs or code lines, packed greedily with `overlap`; PDF chunks
never span pages (docs/memory-rag.md, "Knowledge base").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxagent.errors import ToolInputError
from ctxagent.rag.extract import Extracted
from ctxagent.text.tokens import estimate_tokens

DEFAULT_SIZE = 400
DEFAULT_OVERLAP = 60
MIN_SIZE = 16
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass
class Block:
    """Consecutive lines `start`..`end` (1-based, inclusive) of one segment."""

    start: int
    end: int
    text: str
    heading: str | None = None
    tokens: int = 0
    piece: bool = False  # a character slice of one over-long line


@dataclass
class Chunk:
    """A piece of a document: `index` (0-based, in document order), lines, page, heading."""

    index: int
    content: str
    start_line: int
    end_line: int
    page: int | None = None
    heading: str | None = None
    tokens: int = 0


def check_sizes(size: int, overlap: int) -> None:
    """Raise ToolInputError unless MIN_SIZE <= size and 0 <= overlap < size (tokens)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < MIN_SIZE:
        raise ToolInputError(f"chunk_size is in tokens and must be a whole number >= {MIN_SIZE}, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise ToolInputError(f"chunk_overlap must be a whole number of tokens from 0 to chunk_size - 1, "
                             f"got {overlap!r}")


def chunk_document(doc: Extracted, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """All chunks of `doc`, indexed 0.. in order. Sizes in tokens (module doc)."""
    check_sizes(size, overlap)
    chunks: list[Chunk] = []
    for segment in doc.segments:
        lines = segment.text.split("\n")
        blocks = {"markdown": markdown_blocks, "code": line_blocks}.get(doc.kind, paragraph_blocks)(lines)
        for part in pack(blocks, size, overlap):
            chunks.append(Chunk(len(chunks), _content(part, lines), part[0].start, part[-1].end,
                                segment.page, max(part, key=lambda b: b.tokens).heading,
                                sum(b.tokens for b in part)))
    return chunks


def _content(part: list[Block], lines: list[str]) -> str:
    """The cited lines exactly as in the source (blank lines included), unless the chunk
    holds pieces of an over-long line."""
    if any(b.piece for b in part):
        return "\n".join(b.text for b in part)
    return "\n".join(lines[part[0].start - 1:part[-1].end])


def line_blocks(lines: list[str]) -> list[Block]:
    """Every non-blank line as its own block."""
    return [Block(n, n, line) for n, line in enumerate(lines, 1) if line.strip()]


def paragraph_blocks(lines: list[str]) -> list[Block]:
    """Runs of non-blank lines."""
    return _runs(lines, lambda n, line: False, lambda line: None)


def markdown_blocks(lines: list[str]) -> list[Block]:
    """Paragraphs and headings, fence-aware, each tagged with its heading path."""
    stack: list[str] = []
    fenced = [False]

    def starts_block(n: int, line: str) -> bool:
        if _FENCE_RE.match(line):
            fenced[0] = not fenced[0]
            return fenced[0]  # an opening fence starts a block; its closing line stays in it
        return not fenced[0] and _HEADING_RE.match(line) is not None

    def heading_of(line: str) -> str | None:
        match = _HEADING_RE.match(line)
        if match and not fenced[0]:
            del stack[len(match.group(1)) - 1:]
            stack.append(match.group(2))
        return " > ".join(stack) or None

    return _runs(lines, starts_block, heading_of, keep_blank=lambda: fenced[0])


def _runs(lines, starts_block, heading_of, keep_blank=lambda: False) -> list[Block]:
    blocks: list[Block] = []
    current: list[tuple[int, str]] = []
    heading = None

    def flush() -> None:
        while current and not current[-1][1].strip():
            current.pop()
        if current:
            blocks.append(Block(current[0][0], current[-1][0], "\n".join(t for _, t in current), heading))
        current.clear()

    for n, line in enumerate(lines, 1):
        if not line.strip() and not keep_blank():
            flush()
            continue
        if starts_block(n, line):
            flush()
        if not current:
            heading = heading_of(line)
        current.append((n, line))
    flush()
    return blocks


def pack(blocks: list[Block], size: int, overlap: int) -> list[list[Block]]:
    """Group blocks into chunks of at most `size` tokens with `overlap` (module doc)."""
    pieces = [p for b in blocks for p in _fit(b, size)]
    chunks: list[list[Block]] = []
    current: list[Block] = []
    total = 0
    for block in pieces:
        if current and total + block.tokens > size:
            chunks.append(current)
            current = _tail(current, overlap, size - block.tokens)
            total = sum(b.tokens for b in current)
        current.append(block)
        total += block.tokens
    if current:
        chunks.append(current)
    return chunks


def _tail(blocks: list[Block], overlap: int, room: int) -> list[Block]:
    """The last blocks of a finished chunk worth at most min(overlap, room) tokens,
    never the whole chunk (so every chunk adds something new)."""
    kept: list[Block] = []
    budget = min(overlap, room)
    for block in reversed(blocks[1:]):
        if block.tokens > budget:
            break
        kept.insert(0, block)
        budget -= block.tokens
    return kept


def _fit(block: Block, size: int) -> list[Block]:
    """`block` with its token count, split into lines or character pieces if too big."""
    block.tokens = estimate_tokens(block.text)
    if block.tokens <= size:
        return [block]
    lines = block.text.split("\n")
    if len(lines) > 1:
        parts = [Block(block.start + i, block.start + i, line, block.heading) for i, line in enumerate(lines)]
        return [p for part in parts if part.text.strip() for p in _fit(part, size)]
    step = max(1, len(block.text) * size // block.tokens)
    return [Block(block.start, block.end, block.text[i:i + step], block.heading,
                  estimate_tokens(block.text[i:i + step]), piece=True)
            for i in range(0, len(block.text), step)]

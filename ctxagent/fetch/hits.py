"""The lines shown for a ranked file: literal matches first, then the best line of each
of its best chunks, each with a few lines of context.

A hit is a dict `{"line": int (1-based), "text": str, "context_before": [str],
"context_after": [str]}`. Its rendering for the model (grep style: `12: match`,
`11- context`) is what its tokens are counted on, so `render_hit` lives here too.
"""

from __future__ import annotations

import itertools
from typing import Any

from ctxagent.fetch.budget import count_tokens, truncate_to
from ctxagent.fetch.chunks import Chunk
from ctxagent.text.terms import terms

HITS_PER_FILE = 3
CONTEXT_LINES = 2
MAX_LINE_CHARS = 300

Hit = dict[str, Any]


def select_lines(lines: list[str], query: str, chunks: list[tuple[Chunk, float]],
                 literal: list[int], *, limit: int = HITS_PER_FILE) -> list[int]:
    """0-based line indexes to show, best first, at most `limit`, none within 2 * CONTEXT_LINES
    of another (their context would overlap). `literal`: 1-based numbers of lines holding the
    query verbatim; `chunks`: the file's best chunks, whose best-matching line is taken."""
    chosen: list[int] = []
    wanted = set(terms(query))
    best_lines = (_best_line(lines, chunk, wanted) for chunk, _ in chunks)  # only if the literal lines leave room
    for index in itertools.chain((n - 1 for n in literal), best_lines):
        if 0 <= index < len(lines) and all(abs(index - c) > 2 * CONTEXT_LINES for c in chosen):
            chosen.append(index)
        if len(chosen) >= limit:
            break
    return chosen


def _best_line(lines: list[str], chunk: Chunk, wanted: set[str]) -> int:
    """The chunk line sharing the most distinct query terms (its first line on ties).

    Only lines containing some query term's stem, less its last letter (`retry` ->
    `retr` finds "retries"), as a substring are tokenized: a cheap filter, same result.
    """
    keys = {term[:-1] if len(term) > 3 else term for term in wanted}
    best, best_score = chunk.start, 0.0
    for index in range(chunk.start, min(chunk.end, len(lines))):
        lower = lines[index].lower()
        if not any(key in lower for key in keys):
            continue
        score = len(wanted.intersection(terms(lines[index])))
        if score > best_score:
            best, best_score = index, score
    return best


def make_hit(lines: list[str], index: int, context: int = CONTEXT_LINES) -> Hit:
    """The hit for 0-based line `index` with up to `context` lines either side."""
    return {
        "line": index + 1,
        "text": _clip(lines[index]),
        "context_before": [_clip(line) for line in lines[max(0, index - context) : index]],
        "context_after": [_clip(line) for line in lines[index + 1 : index + 1 + context]],
    }


def _clip(line: str) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


def render_hit(hit: Hit) -> str:
    """Grep-style block: context lines `N- text`, the hit line `N: text`; ends in a newline."""
    first = hit["line"] - len(hit["context_before"])
    out = [f"  {first + i}- {text}\n" for i, text in enumerate(hit["context_before"])]
    out.append(f"  {hit['line']}: {hit['text']}\n")
    out.extend(f"  {hit['line'] + 1 + i}- {text}\n" for i, text in enumerate(hit["context_after"]))
    return "".join(out)


def hit_tokens(hit: Hit) -> int:
    """Tokens of the hit's rendering."""
    return count_tokens(render_hit(hit))


def trim_hit(hit: Hit, allowance: int) -> Hit | None:
    """`hit` cut to at most `allowance` tokens: drop the farthest context lines, then
    the end of the line's text; None if nothing useful fits."""
    hit = {**hit, "context_before": list(hit["context_before"]), "context_after": list(hit["context_after"])}
    while hit_tokens(hit) > allowance and (hit["context_before"] or hit["context_after"]):
        if len(hit["context_after"]) >= len(hit["context_before"]):
            hit["context_after"].pop()
        else:
            hit["context_before"].pop(0)
    text = truncate_to(hit["text"], allowance, lambda t: render_hit({**hit, "text": t}))
    return None if text is None else {**hit, "text": text}

"""Find where a block of lines occurs in a file. Pure.

`seek_sequence` tries passes of increasing leniency (exact, trailing whitespace, both
ends, typographic punctuation) after codex `seek_sequence.rs`, and returns the first
pass's candidates, so a lenient match never outvotes an exact one (docs/patch.md).
"""

from __future__ import annotations

from typing import Callable, Sequence

_PUNCT = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
        **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
        **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
        **{c: " " for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"},
    }
)


def _exact(s: str) -> str:
    return s


def _rstrip(s: str) -> str:
    return s.rstrip()


def _strip(s: str) -> str:
    return s.strip()


def _punct(s: str) -> str:
    return s.translate(_PUNCT).strip()


#: The passes, strictest first, with the name used in messages.
PASSES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("exact", _exact),
    ("ignoring trailing whitespace", _rstrip),
    ("ignoring surrounding whitespace", _strip),
    ("with typographic punctuation normalised", _punct),
)


def seek_sequence(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> list[int]:
    """0-based indexes `i >= start` where `lines[i:i+len(pattern)]` matches `pattern`, from the
    first pass (module doc) that matches anywhere; `eof=True` tries the file's end first in every
    pass. An empty pattern matches at `start` (or the end). Returns [] when nothing matches."""
    if not pattern:
        return [len(lines) if eof else start]
    if len(pattern) > len(lines) - start:
        return []
    if eof:
        end = len(lines) - len(pattern)
        for _name, norm in PASSES:
            if _matches_at(lines, pattern, end, norm):
                return [end]
    for _name, norm in PASSES:
        found = _all_matches(lines, pattern, start, norm)
        if found:
            return found
    return []


def match_pass(lines: Sequence[str], pattern: Sequence[str], index: int) -> str | None:
    """Name of the strictest pass under which `pattern` matches at `index`, or None."""
    for name, norm in PASSES:
        if _matches_at(lines, pattern, index, norm):
            return name
    return None


def _matches_at(lines: Sequence[str], pattern: Sequence[str], i: int, norm: Callable[[str], str]) -> bool:
    if i < 0 or i + len(pattern) > len(lines):
        return False
    return all(norm(lines[i + k]) == norm(p) for k, p in enumerate(pattern))


def _all_matches(lines: Sequence[str], pattern: Sequence[str], start: int, norm: Callable[[str], str]) -> list[int]:
    want = [norm(p) for p in pattern]
    have = [norm(s) for s in lines[start:]]
    size = len(want)
    return [
        start + i
        for i in range(len(have) - size + 1)
        if have[i] == want[0] and have[i:i + size] == want
    ]

"""Text -> index terms, for ranking English, code identifiers and CJK text alike.

The one tokenizer of every ranking (context selection, notes, context_fetch, memory,
rag): lowercased words, identifiers whole and split, a light stemmer, CJK unigrams and
bigrams (case C04), stop words; chunk results cached process-wide (`tests/text/test_terms.py`).
The rules and their reasons: docs/text.md ("Terms").
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)*")
_CJK_RE = re.compile(rf"[{_CJK}]")
_SPLIT_RE = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])")

STOP_WORDS = frozenset(
    """a an and are as at be by for from has have how i if in into is it its of on or
    that the their then there these this to was were what when where which while who why
    will with you your do does can not no yes self none true false return def class
    import""".split()
)

_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ied", "ed", "ies", "es", "s", "ly")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light suffix stripping for lowercase ASCII words (not a full Porter stemmer).

    Keeps at least 3 characters of stem; `ies`/`ied` -> `y`; doubled final consonants from
    `-ed`/`-ing` are undoubled (`stopped` -> `stop`).
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):  # retries, retried -> retry
                return base + "y"
            if suffix == "s" and base.endswith("s"):
                return word  # "class", "process": not a plural
            if suffix in ("ed", "ing", "edly") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                return base[:-1]
            return base
    return word


def _cjk_terms(run: str) -> list[str]:
    terms = list(run)
    terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def _word_terms(word: str) -> list[str]:
    lower = word.lower()
    if word.isalpha() and (len(word) < 2 or word[1:].islower()):  # no split point: one part (fast path)
        return [] if lower in STOP_WORDS else [stem(lower)]
    if word.isalnum():  # a word then a number ("utf8", "parser123"): one split point (fast path)
        base = word.rstrip("0123456789")
        if base.isalpha() and (len(base) < 2 or base[1:].islower()):
            head, number = base.lower(), word[len(base):]  # a number is never stemmed nor a stop word
            return [lower, number] if head in STOP_WORDS else [lower, stem(head), number]
    parts = [p.lower() for p in _SPLIT_RE.split(word) if p]
    out = []
    if len(parts) > 1:
        out.append(lower)
        out.extend(stem(p) for p in parts if p not in STOP_WORDS)
    elif lower not in STOP_WORDS:
        out.append(stem(lower))
    return out


def terms(text: str) -> list[str]:
    """Index terms of `text`, in order, with repeats (term frequency matters).

    >>> terms("parse_cfg reads ContextBuilder")
    ['parse_cfg', 'parse', 'cfg', 'read', 'contextbuilder', 'context', 'builder']
    """
    return list(chain.from_iterable(map(_CHUNK_TERMS.__getitem__, chunks(text))))


# Bytes kept in chunks: those of tokens ([A-Za-z0-9_.] and every non-ASCII byte, since CJK
# characters are tokens) and the apostrophe, which BPE pre-tokenizers attach to letters
# (`ctxagent.text.tokens.piece_floor` needs whole letter runs). Every other ASCII byte
# (spaces, punctuation) separates chunks and is never part of a token.
_KEEP = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.'"
_CHUNK_TABLE = bytes(b if b in _KEEP or b >= 0x80 else 0x20 for b in range(256))
CHUNK_CACHE_MAX = 262_144  # distinct chunks kept; the older half goes when it is full


def chunks(text: str) -> list[bytes]:
    """The chunks of `text`: maximal runs of UTF-8 bytes other than ASCII whitespace and
    punctuation (`_`, `.` and `'` excepted), in order. Tokens never cross a chunk
    boundary, so `terms(text)` is the concatenation of the chunks' terms."""
    return text.encode("utf-8", "surrogatepass").translate(_CHUNK_TABLE).split()


def evict_oldest(cache: dict, keep: int) -> None:
    """Drop all but the `keep` newest entries of a dict used as a bounded FIFO cache.

    With keep = half the bound once full: O(1) per insertion on average. Thread-safe
    (keys listed by one `list(cache)` call; entries already dropped are skipped): see
    docs/text.md ("Caches")."""
    for key in list(cache)[: max(0, len(cache) - keep)]:
        cache.pop(key, None)


class _ChunkTerms(dict):
    """chunk -> its terms (a tuple), filled on first use; the older half goes when
    CHUNK_CACHE_MAX is reached (a concurrent reader then merely recomputes a chunk)."""

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        text = chunk.decode("utf-8", "surrogatepass")
        if chunk.isascii() and text.isidentifier():  # one identifier, the usual chunk: no regex, no second cache
            value = tuple(_word_terms(text))
        else:
            value = tuple(chain.from_iterable(map(_token_terms, _TOKEN_RE.findall(text))))
        if len(self) >= CHUNK_CACHE_MAX:
            evict_oldest(self, CHUNK_CACHE_MAX // 2)
        self[chunk] = value
        return value


_CHUNK_TERMS = _ChunkTerms()

#: chunk_terms(chunk: bytes) -> tuple[str, ...]: the terms of one chunk, cached (the dict's
#: own lookup, so a cache hit costs no Python call).
chunk_terms = _CHUNK_TERMS.__getitem__


@lru_cache(maxsize=131072)
def _token_terms(token: str) -> tuple[str, ...]:
    """Terms of one regex token, cached: words repeat, so most lookups hit (3-4x faster)."""
    return tuple(_cjk_terms(token) if _CJK_RE.match(token) else _word_terms(token))


def has_cjk(text: str) -> bool:
    """True if `text` contains at least one CJK (Chinese, Japanese, Korean) character."""
    return _CJK_RE.search(text) is not None
